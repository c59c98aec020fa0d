// RUN: ggc-opt %s -split-input-file -ggk-lower-loads-cp-async -canonicalize | FileCheck %s

// Before: the producer's load of a masked A tile of 64 rows of 128 bytes
// (bf16, element_bytes = 2) from group %group of a [groups, rows, K]
// operand given by its address and extents. After, for sm_80: the tile is
// copied in rounds of 16 rows by the producer warpgroup's 128 threads,
// thread t taking 16-byte piece t % 8 (8 K elements) of row 16 i + t / 8
// in round i: 64 / 16 = 4 copies each. What is per thread is computed
// once: its place in the swizzled tile, (t / 8) * 128 + (t % 8 ^ (t / 8)
// % 8) * 16, to which round i adds 2048 i; the rows it may still read
// (min(valid, rows - row) - t / 8); its element (group * rows + row +
// t / 8) * K + k + 8 (t % 8), to which round i adds 16 i K. A piece reads
// its 16 bytes only when its row and K are in range; else 0 (a zero fill)
// from the operand's start. Then one arrival on the full barrier.
// CHECK-LABEL: llvm.func @a_masked
// CHECK-SAME: (%[[DST:[^:]*]]: !llvm.ptr<3>, %[[FULL:[^:]*]]: !llvm.ptr<3>, %[[A:[^:]*]]: !llvm.ptr, %[[K:[^:]*]]: i32, %[[ROW:[^:]*]]: i32, %[[GROUP:[^:]*]]: i32, %[[VALID:[^:]*]]: i32, %[[KS:[^:]*]]: i32, %[[ROWS:[^:]*]]: i32, %{{[^:]*}}: i32)
// CHECK: %[[TID:.*]] = ggk.thread_index
// CHECK: %[[T:.*]] = arith.remui %[[TID]], %c128_i32 : i32
// CHECK: %[[R:.*]] = arith.divui %[[T]], %c8_i32 : i32
// CHECK: %[[P:.*]] = arith.remui %[[T]], %c8_i32 : i32
// CHECK: %[[R8:.*]] = arith.andi %[[R]], %c7_i32 : i32
// CHECK: %[[SWIZZLED:.*]] = arith.xori %[[P]], %[[R8]] : i32
// CHECK: %[[PIECE_AT:.*]] = arith.muli %[[SWIZZLED]], %c16_i32 : i32
// CHECK: %[[ROW_AT:.*]] = arith.muli %[[R]], %c128_i32 : i32
// CHECK: %[[AT:.*]] = arith.addi %[[ROW_AT]], %[[PIECE_AT]] : i32
// CHECK: %[[BELOW:.*]] = arith.subi %[[ROWS]], %[[ROW]] : i32
// CHECK: %[[LEFT:.*]] = arith.minsi %[[VALID]], %[[BELOW]] : i32
// CHECK: %[[GROUP_ROW:.*]] = arith.muli %{{.*}}, %{{.*}} : i64
// CHECK: %[[SRC:.*]] = llvm.addrspacecast %[[A]] : !llvm.ptr to !llvm.ptr<1>
// CHECK: %[[MINE:.*]] = arith.subi %[[LEFT]], %[[R]] : i32
// CHECK: %[[PK:.*]] = arith.muli %[[P]], %c8_i32 : i32
// CHECK: %[[KE:.*]] = arith.addi %[[K]], %[[PK]] : i32
// CHECK: %[[IN_K:.*]] = arith.cmpi slt, %[[KE]], %[[KS]] : i32
// CHECK: %[[TROW:.*]] = arith.addi %[[ROW]], %[[R]] : i32
// CHECK: %[[TROW64:.*]] = arith.extsi %[[TROW]]
// CHECK: %[[GROW:.*]] = arith.addi %[[GROUP_ROW]], %[[TROW64]] : i64
// CHECK: %[[KE64:.*]] = arith.extsi %[[KE]]
// CHECK: %[[KS64:.*]] = arith.extsi %[[KS]]
// CHECK: %[[ROW_START:.*]] = arith.muli %[[GROW]], %[[KS64]] : i64
// CHECK: %[[ELEMENT:.*]] = arith.addi %[[ROW_START]], %[[KE64]] : i64
// CHECK: %[[IN_ROWS:.*]] = arith.cmpi sgt, %[[MINE]], %c0_i32 : i32
// CHECK: %[[READS:.*]] = arith.andi %[[IN_ROWS]], %[[IN_K]] : i1
// CHECK: %[[AT64:.*]] = arith.extsi %[[AT]]
// CHECK: %[[TO:.*]] = llvm.getelementptr %[[DST]][%[[AT64]]]
// CHECK: %[[BYTES:.*]] = arith.muli %[[ELEMENT]], %c2_i64 : i64
// CHECK: %[[FROM_AT:.*]] = arith.select %[[READS]], %[[BYTES]], %c0_i64 : i64
// CHECK: %[[FROM:.*]] = llvm.getelementptr %[[SRC]][%[[FROM_AT]]]
// CHECK: %[[READ:.*]] = arith.select %[[READS]], %c16_i32, %c0_i32 : i32
// CHECK: ggk.copy_async %[[TO]], %[[FROM]] read(%[[READ]]) attributes {bytes = 16 : i64}
// Round 1: 16 rows of K further, 16 more rows read, 2048 bytes on.
// CHECK: %[[STEP:.*]] = arith.muli %{{.*}}, %c16_i64 : i64
// CHECK: %[[ELEMENT1:.*]] = arith.addi %[[ELEMENT]], %[[STEP]] : i64
// CHECK: arith.cmpi sgt, %[[MINE]], %c16_i32 : i32
// CHECK: arith.addi %[[AT]], %c2048_i32 : i32
// CHECK: arith.muli %[[ELEMENT1]], %c2_i64 : i64
// CHECK: ggk.copy_async %{{.*}}, %{{.*}} read(%{{.*}}) attributes {bytes = 16 : i64}
// CHECK: arith.addi %[[AT]], %c4096_i32 : i32
// CHECK: ggk.copy_async %{{.*}}, %{{.*}} read(%{{.*}}) attributes {bytes = 16 : i64}
// CHECK: arith.addi %[[AT]], %c6144_i32 : i32
// CHECK: ggk.copy_async %{{.*}}, %{{.*}} read(%{{.*}}) attributes {bytes = 16 : i64}
// CHECK-NOT: ggk.copy_async %
// CHECK: ggk.copy_async_arrive %[[FULL]]
// CHECK-NEXT: llvm.return
module attributes {gg.target = "sm_80"} {
llvm.func @a_masked(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %a: !llvm.ptr,
    %k: i32, %row: i32, %group: i32, %valid: i32, %ks: i32, %rows: i32,
    %groups: i32) {
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row, %group] valid(%valid)
      extents(%ks, %rows, %groups) attributes {tile_rows = 64,
      row_bytes = 128, other_bytes = 16384, granule = 64,
      box_rows = array<i64: 64>, element_bytes = 2}
  llvm.return
}
}

// -----

// Before: a tile of 64 rows copied by the consumers of a kernel without a
// producer (copy_threads = 256, two consumer warpgroups). After: rounds of
// 32 rows, 2 of them; thread t's row is t / 8 (0..31), round 1 is 32
// rows and 4096 bytes on.
// CHECK-LABEL: llvm.func @consumers_copy
// CHECK: %[[TID:.*]] = ggk.thread_index
// CHECK: %[[T:.*]] = arith.remui %[[TID]], %c256_i32 : i32
// CHECK: %[[R:.*]] = arith.divui %[[T]], %c8_i32 : i32
// CHECK: %[[AT:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// CHECK: %[[AT0:.*]] = arith.extsi %[[AT]]
// CHECK: llvm.getelementptr %{{.*}}[%[[AT0]]]
// CHECK: ggk.copy_async
// CHECK: arith.cmpi sgt, %{{.*}}, %c32_i32 : i32
// CHECK: arith.addi %[[AT]], %c4096_i32 : i32
// CHECK: ggk.copy_async
// CHECK-NOT: ggk.copy_async %
// CHECK: ggk.copy_async_arrive
module attributes {gg.target = "sm_80"} {
llvm.func @consumers_copy(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %a: !llvm.ptr,
    %k: i32, %row: i32, %valid: i32, %ks: i32, %rows: i32) {
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row] valid(%valid)
      extents(%ks, %rows) attributes {tile_rows = 64,
      row_bytes = 128, other_bytes = 0, granule = 64,
      box_rows = array<i64: 64>, element_bytes = 2, copy_threads = 256}
  llvm.return
}
}

// -----

// Before: A's rows by a row-index list (gather, a permute-free MoE's
// tokens): tile row r is operand row ids[entry + r]. After: first each
// round's row index, read only when the row is one of the group's
// (scf.if, -1 otherwise, so no entry past them is read); then each round
// copies when its index lies in the operand (0 <= index < rows) and K is
// in range, else a zero fill from the operand's start.
// CHECK-LABEL: llvm.func @a_gathered
// CHECK-SAME: (%[[DST:[^:]*]]: !llvm.ptr<3>, %[[FULL:[^:]*]]: !llvm.ptr<3>, %{{[^:]*}}: !llvm.ptr, %[[K:[^:]*]]: i32, %[[ENTRY:[^:]*]]: i32, %[[VALID:[^:]*]]: i32, %[[KS:[^:]*]]: i32, %[[ROWS:[^:]*]]: i32, %[[IDS:[^:]*]]: !llvm.ptr<1>)
// CHECK: %[[R:.*]] = arith.divui %{{.*}}, %c8_i32 : i32
// CHECK: %[[MINE:.*]] = arith.subi %[[VALID]], %[[R]] : i32
// CHECK: %[[LISTED:.*]] = arith.cmpi sgt, %[[MINE]], %c0_i32 : i32
// CHECK: %[[AT:.*]] = arith.addi %[[ENTRY]], %[[R]] : i32
// CHECK: %[[INDEX:.*]] = scf.if %[[LISTED]] -> (i32) {
// CHECK: %[[AT64:.*]] = arith.extsi %[[AT]] : i32 to i64
// CHECK: %[[SLOT:.*]] = llvm.getelementptr %[[IDS]][%[[AT64]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// CHECK: %[[LOADED:.*]] = llvm.load %[[SLOT]] : !llvm.ptr<1> -> i32
// CHECK: scf.yield %[[LOADED]] : i32
// CHECK: } else {
// CHECK: scf.yield %c-1_i32 : i32
// Round 1's index: entries 16 further.
// CHECK: arith.cmpi sgt, %[[MINE]], %c16_i32 : i32
// CHECK: scf.if
// CHECK: %[[IN_K:.*]] = arith.cmpi slt, %{{.*}}, %[[KS]] : i32
// CHECK: %[[INDEX64:.*]] = arith.extsi %[[INDEX]] : i32 to i64
// CHECK: %[[ROW_START:.*]] = arith.muli %[[INDEX64]], %{{.*}} : i64
// CHECK: %[[BELOW:.*]] = arith.cmpi slt, %[[INDEX]], %[[ROWS]] : i32
// CHECK: %[[NONNEG:.*]] = arith.cmpi sge, %[[INDEX]], %c0_i32 : i32
// CHECK: %[[IN_A:.*]] = arith.andi %[[NONNEG]], %[[BELOW]] : i1
// CHECK: %[[READS:.*]] = arith.andi %[[IN_A]], %[[IN_K]] : i1
// CHECK: %[[FROM_AT:.*]] = arith.select %[[READS]], %{{.*}}, %c0_i64 : i64
// CHECK: %[[READ:.*]] = arith.select %[[READS]], %c16_i32, %c0_i32 : i32
// CHECK: ggk.copy_async %{{.*}}, %{{.*}} read(%[[READ]]) attributes {bytes = 16 : i64}
// CHECK: ggk.copy_async
// CHECK-NOT: ggk.copy_async %
// CHECK: ggk.copy_async_arrive %[[FULL]]
// CHECK-NEXT: llvm.return
module attributes {gg.target = "sm_80"} {
llvm.func @a_gathered(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %a: !llvm.ptr,
    %k: i32, %entry: i32, %valid: i32, %ks: i32, %rows: i32,
    %ids: !llvm.ptr<1>) {
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %entry] valid(%valid)
      extents(%ks, %rows) gather(%ids) attributes {tile_rows = 32,
      row_bytes = 128, other_bytes = 0, granule = 32,
      box_rows = array<i64: 32>, element_bytes = 2}
  llvm.return
}
}

// -----

// Before: a K-major B tile of 128 rows of N (64 bf16 of K each) from group
// %group of a [groups, N, K] operand. After: 128 / 16 = 8 rounds; thread
// t's row of N is n_block * 128 + t / 8 (+ 16 i), read while below N and
// its K below K (the copy of A's rows, with N - n_block * 128 rows left),
// from element (group * N + n) * K + k + 8 (t % 8) (+ 16 i K); placed as
// A's (+ 2048 i); then the arrival.
// CHECK-LABEL: llvm.func @b_k_major
// CHECK-SAME: (%[[DST:[^:]*]]: !llvm.ptr<3>, %[[FULL:[^:]*]]: !llvm.ptr<3>, %[[B:[^:]*]]: !llvm.ptr, %[[K:[^:]*]]: i32, %[[NB:[^:]*]]: i32, %[[GROUP:[^:]*]]: i32, %[[KS:[^:]*]]: i32, %[[NS:[^:]*]]: i32, %{{[^:]*}}: i32)
// CHECK: %[[T:.*]] = arith.remui %{{.*}}, %c128_i32 : i32
// CHECK: %[[R:.*]] = arith.divui %[[T]], %c8_i32 : i32
// CHECK: %[[P:.*]] = arith.remui %[[T]], %c8_i32 : i32
// CHECK: %[[AT:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// CHECK: %[[FIRST_N:.*]] = arith.muli %[[NB]], %c128_i32 : i32
// CHECK: %[[LEFT:.*]] = arith.subi %[[NS]], %[[FIRST_N]] : i32
// CHECK: %[[MINE:.*]] = arith.subi %[[LEFT]], %[[R]] : i32
// CHECK: %[[PK:.*]] = arith.muli %[[P]], %c8_i32 : i32
// CHECK: %[[KE:.*]] = arith.addi %[[K]], %[[PK]] : i32
// CHECK: %[[IN_K:.*]] = arith.cmpi slt, %[[KE]], %[[KS]] : i32
// CHECK: %[[N:.*]] = arith.addi %[[FIRST_N]], %[[R]] : i32
// CHECK: %[[IN_N:.*]] = arith.cmpi sgt, %[[MINE]], %c0_i32 : i32
// CHECK: %[[READS:.*]] = arith.andi %[[IN_N]], %[[IN_K]] : i1
// CHECK: ggk.copy_async
// CHECK: arith.cmpi sgt, %[[MINE]], %c16_i32 : i32
// CHECK: arith.addi %[[AT]], %c2048_i32 : i32
// CHECK: ggk.copy_async
// CHECK-COUNT-6: ggk.copy_async %
// CHECK-NOT: ggk.copy_async %
// CHECK: ggk.copy_async_arrive %[[FULL]]
// CHECK-NEXT: llvm.return
module attributes {gg.target = "sm_80"} {
llvm.func @b_k_major(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %b: !llvm.ptr,
    %k: i32, %n_block: i32, %group: i32, %ks: i32, %ns: i32, %groups: i32) {
  ggk.load_b_tile %dst, %full from(%b) at[%k, %n_block, %group]
      extents(%ks, %ns, %groups) attributes {block_n = 128, block_k = 64,
      chunk_columns = 64, cluster = 1, cache_policy = 0}
  llvm.return
}
}

// -----

// Before: an N-major B tile (B given [K, N]: extents N then K) of 128
// columns in two 64-column chunks of 64 rows of K (8192 bytes each). After:
// the chunks are 128 consecutive rows of the tile, 8 rounds: round i
// reads row 16 i % 64 + t / 8 of K (k + ...) in chunk 16 i / 64, columns
// n_block * 128 + 64 (16 i / 64) + 8 (t % 8); element k_row * N + n;
// placed at + 2048 i. Round 4 starts the second chunk: row + 0 of K, 64
// columns on.
// CHECK-LABEL: llvm.func @b_n_major
// CHECK-SAME: (%[[DST:[^:]*]]: !llvm.ptr<3>, %[[FULL:[^:]*]]: !llvm.ptr<3>, %[[B:[^:]*]]: !llvm.ptr, %[[K:[^:]*]]: i32, %[[NB:[^:]*]]: i32, %[[NS:[^:]*]]: i32, %[[KS:[^:]*]]: i32)
// CHECK: %[[T:.*]] = arith.remui %{{.*}}, %c128_i32 : i32
// CHECK: %[[R:.*]] = arith.divui %[[T]], %c8_i32 : i32
// CHECK: %[[P:.*]] = arith.remui %[[T]], %c8_i32 : i32
// CHECK: %[[AT:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// CHECK: %[[FIRST_N:.*]] = arith.muli %[[NB]], %c128_i32 : i32
// CHECK: %[[KROW:.*]] = arith.addi %[[K]], %[[R]] : i32
// CHECK: %[[PN:.*]] = arith.muli %[[P]], %c8_i32 : i32
// CHECK: %[[N:.*]] = arith.addi %[[FIRST_N]], %[[PN]] : i32
// CHECK: %[[N64:.*]] = arith.extsi %[[N]]
// CHECK: %[[NS64:.*]] = arith.extsi %[[NS]]
// CHECK: %[[KROW64:.*]] = arith.extsi %[[KROW]]
// CHECK: %[[ROW_START:.*]] = arith.muli %[[KROW64]], %[[NS64]] : i64
// CHECK: %[[ELEMENT:.*]] = arith.addi %[[ROW_START]], %[[N64]] : i64
// CHECK: arith.cmpi slt, %[[N]], %[[NS]] : i32
// CHECK: arith.cmpi slt, %[[KROW]], %[[KS]] : i32
// CHECK: ggk.copy_async
// CHECK: arith.addi %[[KROW]], %c16_i32 : i32
// CHECK: arith.addi %[[AT]], %c2048_i32 : i32
// CHECK: ggk.copy_async
// CHECK-COUNT-2: ggk.copy_async %
// CHECK: arith.addi %[[ELEMENT]], %c64_i64 : i64
// CHECK: %[[N2:.*]] = arith.addi %[[N]], %c64_i32 : i32
// CHECK: arith.cmpi slt, %[[N2]], %[[NS]] : i32
// CHECK: arith.addi %[[AT]], %c8192_i32 : i32
// CHECK: ggk.copy_async
// CHECK-COUNT-3: ggk.copy_async %
// CHECK-NOT: ggk.copy_async %
// CHECK: ggk.copy_async_arrive %[[FULL]]
// CHECK-NEXT: llvm.return
module attributes {gg.target = "sm_80"} {
llvm.func @b_n_major(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %b: !llvm.ptr,
    %k: i32, %n_block: i32, %ns: i32, %ks: i32) {
  ggk.load_b_tile %dst, %full from(%b) at[%k, %n_block]
      extents(%ns, %ks) attributes {n_major, block_n = 128, block_k = 64,
      chunk_columns = 64, cluster = 1, cache_policy = 0}
  llvm.return
}
}

// -----

// Before: k_grouped's M-major A tile (A given [K, M]: extents M then K) of
// 128 rows of M as two 64-row chunks of 64 rows of K (8192 bytes each).
// After: copied as an N-major B's chunks (8 rounds, the second chunk from
// round 4: 64 M further), no group, then the arrival.
// CHECK-LABEL: llvm.func @a_m_major
// CHECK-SAME: (%[[DST:[^:]*]]: !llvm.ptr<3>, %[[FULL:[^:]*]]: !llvm.ptr<3>, %[[A:[^:]*]]: !llvm.ptr, %[[K:[^:]*]]: i32, %[[ROW:[^:]*]]: i32, %[[MS:[^:]*]]: i32, %[[KS:[^:]*]]: i32)
// CHECK: %[[T:.*]] = arith.remui %{{.*}}, %c128_i32 : i32
// CHECK: %[[R:.*]] = arith.divui %[[T]], %c8_i32 : i32
// CHECK: %[[KROW:.*]] = arith.addi %[[K]], %[[R]] : i32
// CHECK: %[[M:.*]] = arith.addi %[[ROW]], %{{.*}} : i32
// CHECK: arith.cmpi slt, %[[M]], %[[MS]] : i32
// CHECK: arith.cmpi slt, %[[KROW]], %[[KS]] : i32
// CHECK: ggk.copy_async
// CHECK-COUNT-3: ggk.copy_async %
// CHECK: %[[M2:.*]] = arith.addi %[[M]], %c64_i32 : i32
// CHECK: arith.cmpi slt, %[[M2]], %[[MS]] : i32
// CHECK: ggk.copy_async
// CHECK-COUNT-3: ggk.copy_async %
// CHECK-NOT: ggk.copy_async %
// CHECK: ggk.copy_async_arrive %[[FULL]]
// CHECK-NEXT: llvm.return
module attributes {gg.target = "sm_80"} {
llvm.func @a_m_major(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %a: !llvm.ptr,
    %k: i32, %row: i32, %ms: i32, %ks: i32) {
  ggk.load_mn_major_tile %dst, %full from(%a) at[%k, %row] extents(%ms, %ks)
      attributes {chunks = 2, chunk_rows = 64, chunk_bytes = 8192}
  llvm.return
}
}

// -----

// On sm_90a (the default target) TMA loads consecutive rows and B's tile
// (ggk-split-partial-loads, ggk-multicast): the pass lowers only A's rows
// gathered by index (gg's a_rows), copied by the producer warpgroup's 128
// threads, and leaves the rest.
// CHECK-LABEL: llvm.func @sm90a_only_gathered
// CHECK: ggk.load_tile_rows %{{.*}} from(%{{.*}}) at[%{{.*}}] valid(%{{.*}}) attributes
// CHECK: ggk.copy_async
// CHECK: ggk.copy_async_arrive
// CHECK: ggk.load_b_tile
// CHECK-NOT: ggk.copy_async
// CHECK: llvm.return
llvm.func @sm90a_only_gathered(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>,
    %a: !llvm.ptr, %map: !llvm.ptr, %k: i32, %entry: i32, %valid: i32,
    %ks: i32, %rows: i32, %ids: !llvm.ptr<1>, %nb: i32, %g: i32) {
  ggk.load_tile_rows %dst, %full from(%map) at[%k, %entry] valid(%valid)
      attributes {tile_rows = 128, row_bytes = 128, other_bytes = 0,
      granule = 128, box_rows = array<i64: 128>}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %entry] valid(%valid)
      extents(%ks, %rows) gather(%ids) attributes {tile_rows = 128,
      row_bytes = 128, other_bytes = 16384, granule = 128,
      box_rows = array<i64: 128>, element_bytes = 2}
  ggk.load_b_tile %dst, %full from(%map) at[%k, %nb, %g]
      attributes {block_n = 128, block_k = 64, chunk_columns = 64,
      cache_policy = 0, cluster = 1}
  llvm.return
}

// -----

// A gathered tile's list entries are the same for every K block: inside
// the producer's K loop, with the tile's fields from outside it, they are
// read once before the loop, and each K block only copies.
// CHECK-LABEL: llvm.func @gathered_in_k_loop
// CHECK: scf.if
// CHECK: llvm.load
// CHECK: scf.for
// CHECK-NOT: llvm.load
// CHECK: ggk.copy_async
// CHECK: ggk.copy_async_arrive
module attributes {gg.target = "sm_80"} {
llvm.func @gathered_in_k_loop(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>,
    %a: !llvm.ptr, %entry: i32, %valid: i32, %ks: i32, %rows: i32,
    %ids: !llvm.ptr<1>, %blocks: i32) {
  %c0 = arith.constant 0 : i32
  %c1 = arith.constant 1 : i32
  %c64 = arith.constant 64 : i32
  scf.for %kb = %c0 to %blocks step %c1 : i32 {
    %k = arith.muli %kb, %c64 : i32
    ggk.load_tile_rows %dst, %full from(%a) at[%k, %entry] valid(%valid)
        extents(%ks, %rows) gather(%ids) attributes {tile_rows = 32,
        row_bytes = 128, other_bytes = 0, granule = 32,
        box_rows = array<i64: 32>, element_bytes = 2}
  }
  llvm.return
}
}
