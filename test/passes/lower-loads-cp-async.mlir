// RUN: ggc-opt %s -split-input-file -ggk-lower-loads-cp-async -canonicalize | FileCheck %s

// Before: the producer's load of a masked A tile of 64 rows of 128 bytes
// (bf16, element_bytes = 2) from group %group of a [groups, rows, K]
// operand given by its address and extents. After, for sm_80: each of the
// producer warpgroup's 128 threads copies 64 * 8 / 128 = 4 of the tile's
// 16-byte pieces, piece q = 128 i + thread % 128 being piece q % 8 (8 K
// elements) of tile row q / 8. A piece reads its 16 bytes only when its
// row is below the group's valid rows left (min(valid, rows - row)) and
// its K inside the operand; otherwise it reads 0 bytes (a zero fill) from
// the operand's start. It lands at row * 128 + (piece ^ row % 8) * 16
// (128B swizzle). Then one arrival on the full barrier for them all.
// CHECK-LABEL: llvm.func @a_masked
// CHECK-SAME: (%[[DST:[^:]*]]: !llvm.ptr<3>, %[[FULL:[^:]*]]: !llvm.ptr<3>, %[[A:[^:]*]]: !llvm.ptr, %[[K:[^:]*]]: i32, %[[ROW:[^:]*]]: i32, %[[GROUP:[^:]*]]: i32, %[[VALID:[^:]*]]: i32, %[[KS:[^:]*]]: i32, %[[ROWS:[^:]*]]: i32, %{{[^:]*}}: i32)
// CHECK: %[[BELOW:.*]] = arith.subi %[[ROWS]], %[[ROW]] : i32
// CHECK: %[[LEFT:.*]] = arith.minsi %[[VALID]], %[[BELOW]] : i32
// CHECK: %[[ROWS64:.*]] = arith.extsi %[[ROWS]]
// CHECK: %[[GROUP64:.*]] = arith.extsi %[[GROUP]]
// CHECK: %[[GROUP_ROW:.*]] = arith.muli %[[GROUP64]], %[[ROWS64]] : i64
// CHECK: %[[SRC:.*]] = llvm.addrspacecast %[[A]] : !llvm.ptr to !llvm.ptr<1>
// CHECK: %[[TID:.*]] = ggk.thread_index
// CHECK: %[[T:.*]] = arith.remui %[[TID]], %c128_i32 : i32
// CHECK: %[[R:.*]] = arith.divui %[[T]], %c8_i32 : i32
// CHECK: %[[P:.*]] = arith.remui %[[T]], %c8_i32 : i32
// CHECK: %[[PK:.*]] = arith.muli %[[P]], %c8_i32 : i32
// CHECK: %[[KE:.*]] = arith.addi %[[K]], %[[PK]] : i32
// CHECK: %[[IN_K:.*]] = arith.cmpi slt, %[[KE]], %[[KS]] : i32
// CHECK: %[[IN_ROWS:.*]] = arith.cmpi slt, %[[R]], %[[LEFT]] : i32
// CHECK: %[[READS:.*]] = arith.andi %[[IN_ROWS]], %[[IN_K]] : i1
// CHECK: %[[TROW:.*]] = arith.addi %[[ROW]], %[[R]] : i32
// CHECK: %[[TROW64:.*]] = arith.extsi %[[TROW]]
// CHECK: %[[GROW:.*]] = arith.addi %[[GROUP_ROW]], %[[TROW64]] : i64
// CHECK: %[[KE64:.*]] = arith.extsi %[[KE]]
// CHECK: %[[KS64:.*]] = arith.extsi %[[KS]]
// CHECK: %[[ROW_START:.*]] = arith.muli %[[GROW]], %[[KS64]] : i64
// CHECK: %[[ELEMENT:.*]] = arith.addi %[[ROW_START]], %[[KE64]] : i64
// CHECK: %[[R8:.*]] = arith.andi %[[R]], %c7_i32 : i32
// CHECK: %[[SWIZZLED:.*]] = arith.xori %[[P]], %[[R8]] : i32
// CHECK: %[[PIECE_AT:.*]] = arith.muli %[[SWIZZLED]], %c16_i32 : i32
// CHECK: %[[ROW_AT:.*]] = arith.muli %[[R]], %c128_i32 : i32
// CHECK: %[[AT:.*]] = arith.addi %[[ROW_AT]], %[[PIECE_AT]] : i32
// CHECK: %[[AT64:.*]] = arith.extsi %[[AT]]
// CHECK: %[[TO:.*]] = llvm.getelementptr %[[DST]][%[[AT64]]]
// CHECK: %[[BYTES:.*]] = arith.muli %[[ELEMENT]], %c2_i64 : i64
// CHECK: %[[FROM_AT:.*]] = arith.select %[[READS]], %[[BYTES]], %c0_i64 : i64
// CHECK: %[[FROM:.*]] = llvm.getelementptr %[[SRC]][%[[FROM_AT]]]
// CHECK: %[[READ:.*]] = arith.select %[[READS]], %c16_i32, %c0_i32 : i32
// CHECK: ggk.copy_async %[[TO]], %[[FROM]] read(%[[READ]]) attributes {bytes = 16 : i64}
// CHECK: %[[Q1:.*]] = arith.addi %[[T]], %c128_i32 : i32
// CHECK: arith.divui %[[Q1]], %c8_i32
// CHECK: ggk.copy_async %{{.*}}, %{{.*}} read(%{{.*}}) attributes {bytes = 16 : i64}
// CHECK: arith.addi %[[T]], %c256_i32
// CHECK: ggk.copy_async %{{.*}}, %{{.*}} read(%{{.*}}) attributes {bytes = 16 : i64}
// CHECK: arith.addi %[[T]], %c384_i32
// CHECK: ggk.copy_async %{{.*}}, %{{.*}} read(%{{.*}}) attributes {bytes = 16 : i64}
// CHECK-NOT: ggk.copy_async %
// CHECK: ggk.copy_async_arrive %[[FULL]]
// CHECK-NEXT: llvm.return
llvm.func @a_masked(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %a: !llvm.ptr,
    %k: i32, %row: i32, %group: i32, %valid: i32, %ks: i32, %rows: i32,
    %groups: i32) {
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row, %group] valid(%valid)
      extents(%ks, %rows, %groups) attributes {tile_rows = 64,
      row_bytes = 128, other_bytes = 16384, granule = 64,
      box_rows = array<i64: 64>, element_bytes = 2}
  llvm.return
}

// -----

// Before: a K-major B tile of 128 rows of N (64 bf16 of K each) from group
// %group of a [groups, N, K] operand. After: 128 * 8 / 128 = 8 copies per
// thread, piece q being 8 K elements of N row n_block * 128 + q / 8, read
// when that row lies below N and its K below K, from element
// (group * N + n) * K + k; swizzled as A's; then the arrival.
// CHECK-LABEL: llvm.func @b_k_major
// CHECK-SAME: (%[[DST:[^:]*]]: !llvm.ptr<3>, %[[FULL:[^:]*]]: !llvm.ptr<3>, %[[B:[^:]*]]: !llvm.ptr, %[[K:[^:]*]]: i32, %[[NB:[^:]*]]: i32, %[[GROUP:[^:]*]]: i32, %[[KS:[^:]*]]: i32, %[[NS:[^:]*]]: i32, %{{[^:]*}}: i32)
// CHECK: %[[FIRST_N:.*]] = arith.muli %[[NB]], %c128_i32 : i32
// CHECK: %[[T:.*]] = arith.remui %{{.*}}, %c128_i32 : i32
// CHECK: %[[R:.*]] = arith.divui %[[T]], %c8_i32 : i32
// CHECK: %[[P:.*]] = arith.remui %[[T]], %c8_i32 : i32
// CHECK: %[[N:.*]] = arith.addi %[[FIRST_N]], %[[R]] : i32
// CHECK: %[[KE:.*]] = arith.addi %[[K]], %{{.*}} : i32
// CHECK: %[[IN_K:.*]] = arith.cmpi slt, %[[KE]], %[[KS]] : i32
// CHECK: %[[IN_N:.*]] = arith.cmpi slt, %[[N]], %[[NS]] : i32
// CHECK: %[[READS:.*]] = arith.andi %[[IN_N]], %[[IN_K]] : i1
// CHECK: %[[R8:.*]] = arith.andi %[[R]], %c7_i32 : i32
// CHECK: arith.xori %[[P]], %[[R8]] : i32
// CHECK: %[[READ:.*]] = arith.select %[[READS]], %c16_i32, %c0_i32 : i32
// CHECK: ggk.copy_async %{{.*}}, %{{.*}} read(%[[READ]]) attributes {bytes = 16 : i64}
// CHECK-COUNT-7: ggk.copy_async %{{.*}}, %{{.*}} read(%{{.*}}) attributes {bytes = 16 : i64}
// CHECK-NOT: ggk.copy_async %
// CHECK: ggk.copy_async_arrive %[[FULL]]
// CHECK-NEXT: llvm.return
llvm.func @b_k_major(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %b: !llvm.ptr,
    %k: i32, %n_block: i32, %group: i32, %ks: i32, %ns: i32, %groups: i32) {
  ggk.load_b_tile %dst, %full from(%b) at[%k, %n_block, %group]
      extents(%ks, %ns, %groups) attributes {block_n = 128, block_k = 64,
      chunk_columns = 64, cluster = 1, cache_policy = 0}
  llvm.return
}

// -----

// Before: an N-major B tile (a 2-D [K, N] operand, no group) of 128
// columns, two chunks of 64. After: each chunk is block_k = 64 rows of K
// of 128 bytes (64 N), the chunks 64 * 128 = 8192 bytes apart, so
// 2 * 64 * 8 / 128 = 8 copies per thread: piece q is in chunk q / 512, K
// row (q % 512) / 8, columns n_block * 128 + 64 chunk + 8 (q % 8); read
// when those columns lie below N and the row below K, from element
// k * N + n; swizzled within its chunk.
// CHECK-LABEL: llvm.func @b_n_major
// CHECK-SAME: (%[[DST:[^:]*]]: !llvm.ptr<3>, %[[FULL:[^:]*]]: !llvm.ptr<3>, %[[B:[^:]*]]: !llvm.ptr, %[[K:[^:]*]]: i32, %[[NB:[^:]*]]: i32, %[[NS:[^:]*]]: i32, %[[KS:[^:]*]]: i32)
// CHECK: %[[FIRST_N:.*]] = arith.muli %[[NB]], %c128_i32 : i32
// CHECK: %[[T:.*]] = arith.remui %{{.*}}, %c128_i32 : i32
// CHECK: %[[CHUNK:.*]] = arith.divui %[[T]], %c512_i32 : i32
// CHECK: %[[IN_CHUNK:.*]] = arith.remui %[[T]], %c512_i32 : i32
// CHECK: %[[R:.*]] = arith.divui %[[IN_CHUNK]], %c8_i32 : i32
// CHECK: %[[P:.*]] = arith.remui %[[IN_CHUNK]], %c8_i32 : i32
// CHECK: %[[PN:.*]] = arith.muli %[[P]], %c8_i32 : i32
// CHECK: %[[CHUNK_N:.*]] = arith.muli %[[CHUNK]], %c64_i32 : i32
// CHECK: %[[N0:.*]] = arith.addi %[[FIRST_N]], %[[CHUNK_N]] : i32
// CHECK: %[[N:.*]] = arith.addi %[[N0]], %[[PN]] : i32
// CHECK: %[[KE:.*]] = arith.addi %[[K]], %[[R]] : i32
// CHECK: %[[IN_K:.*]] = arith.cmpi slt, %[[KE]], %[[KS]] : i32
// CHECK: %[[IN_N:.*]] = arith.cmpi slt, %[[N]], %[[NS]] : i32
// CHECK: %[[READS:.*]] = arith.andi %[[IN_N]], %[[IN_K]] : i1
// CHECK: %[[N64:.*]] = arith.extsi %[[N]]
// CHECK: %[[NS64:.*]] = arith.extsi %[[NS]]
// CHECK: %[[KE64:.*]] = arith.extsi %[[KE]]
// CHECK: %[[K_START:.*]] = arith.muli %[[KE64]], %[[NS64]] : i64
// CHECK: arith.addi %[[K_START]], %[[N64]] : i64
// CHECK: %[[CHUNK_AT:.*]] = arith.muli %[[CHUNK]], %c8192_i32 : i32
// CHECK: %[[CHUNK_AT64:.*]] = arith.extsi %[[CHUNK_AT]]
// CHECK: %[[TILE:.*]] = llvm.getelementptr %[[DST]][%[[CHUNK_AT64]]]
// CHECK: %[[R8:.*]] = arith.andi %[[R]], %c7_i32 : i32
// CHECK: arith.xori %[[P]], %[[R8]] : i32
// CHECK: %[[TO:.*]] = llvm.getelementptr %[[TILE]][%{{.*}}]
// CHECK: %[[READ:.*]] = arith.select %[[READS]], %c16_i32, %c0_i32 : i32
// CHECK: ggk.copy_async %[[TO]], %{{.*}} read(%[[READ]]) attributes {bytes = 16 : i64}
// CHECK-COUNT-7: ggk.copy_async %{{.*}}, %{{.*}} read(%{{.*}}) attributes {bytes = 16 : i64}
// CHECK-NOT: ggk.copy_async %
// CHECK: ggk.copy_async_arrive %[[FULL]]
// CHECK-NEXT: llvm.return
llvm.func @b_n_major(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %b: !llvm.ptr,
    %k: i32, %n_block: i32, %ns: i32, %ks: i32) {
  ggk.load_b_tile %dst, %full from(%b) at[%k, %n_block]
      extents(%ns, %ks) attributes {n_major, block_n = 128, block_k = 64,
      chunk_columns = 64, cluster = 1, cache_policy = 0}
  llvm.return
}
