// RUN: ggc-opt %s -split-input-file -ggk-lower-store-pool -canonicalize | FileCheck %s

// Before: a masked kernel's staged tile of 4 x 128 bf16, 128B-swizzled (two
// column chunks of 64), stored through a pool of boxes of 4, 2 and 1 rows.
// After: the issuer (thread 128) waits until the previous tile's stores
// have read the tile and the 256 consumer threads meet; the pair goes to
// chunk (column * 2) / 128, row, 16-byte unit (column * 2) % 128 / 16 XOR
// row % 8; then a fence for the async proxy, the barrier, and on the issuer,
// for each height h with a bit in max(rows, 0), a TMA store per chunk that
// starts before N (the second chunk 4 rows x 128 bytes on), the boxes
// stacked from the tile's first row; a commit; at the end, the drain.
// CHECK-LABEL: llvm.func @swizzled
// CHECK-SAME: (%[[TILE:arg0]]: !llvm.ptr<3>, %[[PAIR:arg1]]: vector<2xbf16>, %[[ROW:arg2]]: i32, %[[COL:arg3]]: i32, %[[VALID:arg4]]: i32, %[[START:arg5]]: i32, %[[NB:arg6]]: i32, %[[G:arg7]]: i32, %[[M4:arg8]]: !llvm.ptr, %[[M2:arg9]]: !llvm.ptr, %[[M1:arg10]]: !llvm.ptr)
// CHECK: %[[TID:.*]] = ggk.thread_index
// CHECK: %[[ISSUER:.*]] = arith.cmpi eq, %[[TID]], %c128_i32
// CHECK: scf.if %[[ISSUER]] {
// CHECK-NEXT: ggk.bulk_wait_group read attributes {pending = 0 : i64}
// CHECK: ggk.warp_sync
// CHECK-NEXT: ggk.sync_threads %c1_i32, %c256_i32
// CHECK: %[[BYTE:.*]] = arith.muli %[[COL]], %c2_i32
// CHECK: %[[CHUNK:.*]] = arith.divui %[[BYTE]], %c128_i32
// CHECK: %[[IN_CHUNK:.*]] = arith.remui %[[BYTE]], %c128_i32
// CHECK: %[[UNIT:.*]] = arith.divui %[[IN_CHUNK]], %c16_i32
// CHECK: %[[ROW8:.*]] = arith.remui %[[ROW]], %c8_i32
// CHECK: %[[SWIZZLED:.*]] = arith.xori %[[UNIT]], %[[ROW8]]
// CHECK: arith.muli %[[SWIZZLED]], %c16_i32
// CHECK: arith.muli %[[ROW]], %c128_i32
// CHECK: arith.muli %[[CHUNK]], %c512_i32
// CHECK: %[[AT:.*]] = llvm.getelementptr %[[TILE]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// CHECK: llvm.store %[[PAIR]], %[[AT]] : vector<2xbf16>, !llvm.ptr<3>
// CHECK: ggk.fence_async_shared
// CHECK: ggk.warp_sync
// CHECK-NEXT: ggk.sync_threads %c1_i32, %c256_i32
// CHECK: scf.if
// CHECK: %[[ROWS:.*]] = arith.maxsi %[[VALID]], %c0_i32
// CHECK: %[[COL0:.*]] = arith.muli %[[NB]], %c128_i32
// CHECK: %[[BIT4:.*]] = arith.andi %[[ROWS]], %c4_i32
// CHECK: %[[TAKE4:.*]] = arith.cmpi ne, %[[BIT4]], %c0_i32
// CHECK: scf.if %[[TAKE4]] {
// CHECK: arith.cmpi slt, %[[COL0]], %c4096_i32
// CHECK: ggk.tma_store %[[TILE]], %[[M4]][%[[COL0]], %[[START]], %[[G]]]
// CHECK: %[[COL1:.*]] = arith.addi %[[COL0]], %c64_i32
// CHECK: arith.cmpi slt, %[[COL1]], %c4096_i32
// CHECK: %[[CHUNK1:.*]] = llvm.getelementptr %[[TILE]][512]
// CHECK: ggk.tma_store %[[CHUNK1]], %[[M4]][%[[COL1]], %[[START]], %[[G]]]
// CHECK: %[[DONE4:.*]] = arith.select %[[TAKE4]], %c4_i32, %c0_i32
// CHECK: %[[BIT2:.*]] = arith.andi %[[ROWS]], %c2_i32
// CHECK: %[[TAKE2:.*]] = arith.cmpi ne, %[[BIT2]], %c0_i32
// CHECK: scf.if %[[TAKE2]] {
// CHECK: %[[FIRST2:.*]] = arith.addi %[[START]], %[[DONE4]]
// CHECK: ggk.tma_store %{{.*}}, %[[M2]][%[[COL0]], %[[FIRST2]], %[[G]]]
// CHECK: ggk.tma_store %{{.*}}, %[[M2]][%[[COL1]], %{{.*}}, %[[G]]]
// CHECK: arith.andi %[[ROWS]], %c1_i32
// CHECK: ggk.tma_store %{{.*}}, %[[M1]]
// CHECK: ggk.tma_store %{{.*}}, %[[M1]]
// CHECK: ggk.bulk_commit_group
// CHECK: %[[TID_END:.*]] = ggk.thread_index
// CHECK: %[[ISSUER_END:.*]] = arith.cmpi eq, %[[TID_END]], %c128_i32
// CHECK: scf.if %[[ISSUER_END]] {
// CHECK-NEXT: ggk.bulk_wait_group attributes {pending = 0 : i64}
// CHECK-NOT: ggk.{{await_staged_tile|stage_output|store_staged_tile|drain_tile_stores}}
llvm.func @swizzled(%tile: !llvm.ptr<3>, %pair: vector<2xbf16>, %row: i32,
                    %col: i32, %rows: i32, %start: i32, %n_block: i32,
                    %group: i32, %m4: !llvm.ptr, %m2: !llvm.ptr,
                    %m1: !llvm.ptr) {
  ggk.await_staged_tile %tile attributes {issuer = 128, consumer_threads = 256}
  ggk.stage_output %pair, %tile[%row, %col] attributes {swizzle = 128,
      tile_shape = array<i64: 4, 128>} : vector<2xbf16>
  ggk.store_staged_tile %tile rows(%rows) at(%start) n_block(%n_block)
      group(%group) maps(%m4, %m2, %m1) attributes {
      heights = array<i64: 4, 2, 1>, tile_shape = array<i64: 4, 128>,
      chunk_columns = 64, n = 4096, element_type = bf16, issuer = 128,
      consumer_threads = 256}
  ggk.drain_tile_stores attributes {issuer = 128}
  llvm.return
}

// -----

// 64B-swizzled staging (f32 rows of 48 columns, 192 bytes: three 64-byte
// chunks of 16 columns), as TMA's SWIZZLE_64B maps read it: the pair goes
// to chunk (column * 4) / 64, row, 16-byte unit (column * 4) % 64 / 16 XOR
// row / 2 % 4; each height stores three chunks, the second 4 rows x 64
// bytes on.
// CHECK-LABEL: llvm.func @swizzled_64
// CHECK-SAME: (%[[TILE:arg0]]: !llvm.ptr<3>, %[[PAIR:arg1]]: vector<2xf32>, %[[ROW:arg2]]: i32, %[[COL:arg3]]: i32, %[[VALID:arg4]]: i32, %[[START:arg5]]: i32, %[[NB:arg6]]: i32, %[[M4:arg7]]: !llvm.ptr, %[[M2:arg8]]: !llvm.ptr, %[[M1:arg9]]: !llvm.ptr)
// CHECK: %[[BYTE:.*]] = arith.muli %[[COL]], %c4_i32
// CHECK: %[[CHUNK:.*]] = arith.divui %[[BYTE]], %c64_i32
// CHECK: %[[IN_CHUNK:.*]] = arith.remui %[[BYTE]], %c64_i32
// CHECK: %[[UNIT:.*]] = arith.divui %[[IN_CHUNK]], %c16_i32
// CHECK: %[[LINE:.*]] = arith.divui %[[ROW]], %c2_i32
// CHECK: %[[LINE4:.*]] = arith.remui %[[LINE]], %c4_i32
// CHECK: %[[SWIZZLED:.*]] = arith.xori %[[UNIT]], %[[LINE4]]
// CHECK: arith.muli %[[SWIZZLED]], %c16_i32
// CHECK: arith.muli %[[ROW]], %c64_i32
// CHECK: arith.muli %[[CHUNK]], %c256_i32
// CHECK: %[[AT:.*]] = llvm.getelementptr %[[TILE]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// CHECK: llvm.store %[[PAIR]], %[[AT]] : vector<2xf32>, !llvm.ptr<3>
// CHECK: %[[COL0:.*]] = arith.muli %[[NB]], %c48_i32
// CHECK: ggk.tma_store %[[TILE]], %[[M4]][%[[COL0]], %[[START]]] {add}
// CHECK: %[[COL1:.*]] = arith.addi %[[COL0]], %c16_i32
// CHECK: %[[CHUNK1:.*]] = llvm.getelementptr %[[TILE]][256]
// CHECK: ggk.tma_store %[[CHUNK1]], %[[M4]][%[[COL1]], %[[START]]] {add}
// CHECK: %[[COL2:.*]] = arith.addi %[[COL0]], %c32_i32
// CHECK: %[[CHUNK2:.*]] = llvm.getelementptr %[[TILE]][512]
// CHECK: ggk.tma_store %[[CHUNK2]], %[[M4]][%[[COL2]], %[[START]]] {add}
llvm.func @swizzled_64(%tile: !llvm.ptr<3>, %pair: vector<2xf32>, %row: i32,
                       %col: i32, %rows: i32, %start: i32, %n_block: i32,
                       %m4: !llvm.ptr, %m2: !llvm.ptr, %m1: !llvm.ptr) {
  ggk.stage_output %pair, %tile[%row, %col] attributes {swizzle = 64,
      tile_shape = array<i64: 4, 48>} : vector<2xf32>
  ggk.store_staged_tile %tile rows(%rows) at(%start) n_block(%n_block)
      maps(%m4, %m2, %m1) attributes {heights = array<i64: 4, 2, 1>,
      tile_shape = array<i64: 4, 48>, chunk_columns = 16, n = 4096,
      element_type = f32, issuer = 128, consumer_threads = 128, add}
  llvm.return
}

// -----

// Dense staging (f32 rows of 24 columns, 96 bytes: no whole 128-byte
// chunks): the pair goes to (row * 24 + column) * 4, and the tile is one
// chunk; a contiguous kernel's maps are 2-D (no group).
// CHECK-LABEL: llvm.func @dense
// CHECK-SAME: (%[[TILE:arg0]]: !llvm.ptr<3>, %[[PAIR:arg1]]: vector<2xf32>, %[[ROW:arg2]]: i32, %[[COL:arg3]]: i32, %[[VALID:arg4]]: i32, %[[START:arg5]]: i32, %[[NB:arg6]]: i32, %[[M2:arg7]]: !llvm.ptr, %[[M1:arg8]]: !llvm.ptr)
// CHECK: %[[BASE:.*]] = arith.muli %[[ROW]], %c24_i32
// CHECK: %[[ELEMENT:.*]] = arith.addi %[[BASE]], %[[COL]]
// CHECK: %[[WIDE:.*]] = arith.extsi %[[ELEMENT]] : i32 to i64
// CHECK: %[[BYTES:.*]] = arith.muli %[[WIDE]], %c4_i64
// CHECK: %[[AT:.*]] = llvm.getelementptr %[[TILE]][%[[BYTES]]]
// CHECK: llvm.store %[[PAIR]], %[[AT]] : vector<2xf32>, !llvm.ptr<3>
// CHECK: %[[COL0:.*]] = arith.muli %[[NB]], %c24_i32
// CHECK: arith.andi %{{.*}}, %c2_i32
// CHECK: ggk.tma_store %[[TILE]], %[[M2]][%[[COL0]], %[[START]]]
// CHECK: arith.andi %{{.*}}, %c1_i32
// CHECK: ggk.tma_store %{{.*}}, %[[M1]][%[[COL0]], %{{.*}}]
// CHECK-NOT: ggk.tma_
// CHECK: ggk.bulk_commit_group
llvm.func @dense(%tile: !llvm.ptr<3>, %pair: vector<2xf32>, %row: i32,
                 %col: i32, %rows: i32, %start: i32, %n_block: i32,
                 %m2: !llvm.ptr, %m1: !llvm.ptr) {
  ggk.stage_output %pair, %tile[%row, %col] attributes {
      tile_shape = array<i64: 2, 24>} : vector<2xf32>
  ggk.store_staged_tile %tile rows(%rows) at(%start) n_block(%n_block)
      maps(%m2, %m1) attributes {heights = array<i64: 2, 1>,
      tile_shape = array<i64: 2, 24>, chunk_columns = 24, n = 4096,
      element_type = f32, issuer = 128, consumer_threads = 128}
  llvm.return
}

// -----

// Before: column_pairs' staged tile of 4 x 64 bf16 (a tile's BN/2 combined
// outputs, one 128-byte swizzled chunk), each thread staging one value at
// any column. After: a 2-byte store at its swizzled offset (column * 2
// bytes, 16-byte unit XOR row % 8), and one TMA store per height at column
// n_block * 64 of the 2048 outputs.
// CHECK-LABEL: llvm.func @one_value_a_pair
// CHECK-SAME: (%[[TILE:arg0]]: !llvm.ptr<3>, %[[ONE:arg1]]: vector<1xbf16>, %[[ROW:arg2]]: i32, %[[COL:arg3]]: i32, %{{arg4}}: i32, %{{arg5}}: i32, %[[NB:arg6]]: i32
// CHECK: %[[BYTE:.*]] = arith.muli %[[COL]], %c2_i32
// CHECK: %[[UNIT:.*]] = arith.divui %{{.*}}, %c16_i32
// CHECK: arith.xori %[[UNIT]], %{{.*}}
// CHECK: %[[AT:.*]] = llvm.getelementptr %[[TILE]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// CHECK: llvm.store %[[ONE]], %[[AT]] : vector<1xbf16>, !llvm.ptr<3>
// CHECK: %[[COL0:.*]] = arith.muli %[[NB]], %c64_i32
// CHECK: arith.cmpi slt, %[[COL0]], %c2048_i32
// CHECK: ggk.tma_store %[[TILE]], %{{.*}}[%[[COL0]], %{{.*}}]
// CHECK-NOT: llvm.getelementptr %[[TILE]][512]
llvm.func @one_value_a_pair(%tile: !llvm.ptr<3>, %one: vector<1xbf16>, %row: i32,
                            %col: i32, %rows: i32, %start: i32, %n_block: i32,
                            %m4: !llvm.ptr, %m2: !llvm.ptr, %m1: !llvm.ptr) {
  ggk.await_staged_tile %tile attributes {issuer = 128, consumer_threads = 256}
  ggk.stage_output %one, %tile[%row, %col] attributes {swizzle = 128,
      tile_shape = array<i64: 4, 64>} : vector<1xbf16>
  ggk.store_staged_tile %tile rows(%rows) at(%start) n_block(%n_block)
      maps(%m4, %m2, %m1) attributes {
      heights = array<i64: 4, 2, 1>, tile_shape = array<i64: 4, 64>,
      chunk_columns = 64, n = 2048, element_type = bf16, issuer = 128,
      consumer_threads = 256}
  ggk.drain_tile_stores attributes {issuer = 128}
  llvm.return
}

// -----

// Before: an f32 tile of an accumulating op (`add`). After: its boxes are
// TMA reduce-adds (`ggk.tma_store {add}`), each of them.
// CHECK-LABEL: llvm.func @adds
// CHECK-COUNT-2: ggk.tma_store %{{.*}} {add}
// CHECK-NOT: ggk.tma_store %{{[^{]*}}$
llvm.func @adds(%tile: !llvm.ptr<3>, %rows: i32, %start: i32, %n_block: i32,
                %group: i32, %m2: !llvm.ptr, %m1: !llvm.ptr) {
  ggk.store_staged_tile %tile rows(%rows) at(%start) n_block(%n_block)
      group(%group) maps(%m2, %m1) attributes {
      heights = array<i64: 2, 1>, tile_shape = array<i64: 2, 32>,
      chunk_columns = 32, n = 4096, element_type = f32, issuer = 128,
      consumer_threads = 128, add}
  llvm.return
}

// -----

// Before: the same pool with warpgroup_rows = 64 (store_issuers =
// warpgroup). After: the first thread of each consumer warpgroup ((tid -
// 128) % 128 == 0) waits for its own stores; each warpgroup meets at named
// barrier 8 + w of 128 threads; its issuer stores min(max(rows - 64 w, 0),
// 64) rows from tile row 64 w with the boxes of 64 rows and down (no box of
// 128).
// CHECK-LABEL: llvm.func @per_warpgroup
// CHECK-SAME: (%[[TILE:arg0]]: !llvm.ptr<3>, %[[PAIR:arg1]]: vector<2xbf16>, %[[ROW:arg2]]: i32, %[[COL:arg3]]: i32, %[[VALID:arg4]]: i32, %[[START:arg5]]: i32, %[[NB:arg6]]: i32, %[[M128:arg7]]: !llvm.ptr, %[[M64:arg8]]: !llvm.ptr, {{.*}}, %[[M1:arg14]]: !llvm.ptr)
// CHECK: %[[TID:.*]] = ggk.thread_index
// CHECK: %[[FROM:.*]] = arith.subi %[[TID]], %c128_i32
// CHECK: %[[LANE:.*]] = arith.remui %[[FROM]], %c128_i32
// CHECK: %[[FIRST:.*]] = arith.cmpi eq, %[[LANE]], %c0_i32
// CHECK: scf.if %[[FIRST]] {
// CHECK-NEXT: ggk.bulk_wait_group read
// CHECK: %[[W:.*]] = arith.divui %{{.*}}, %c128_i32
// CHECK: %[[BAR:.*]] = arith.addi %[[W]], %c8_i32
// CHECK: ggk.sync_threads %[[BAR]], %c128_i32
// CHECK: llvm.store %[[PAIR]]
// CHECK: ggk.fence_async_shared
// CHECK: ggk.sync_threads %{{.*}}, %c128_i32
// CHECK: scf.if
// CHECK: %[[W2:.*]] = arith.divui %{{.*}}, %c128_i32
// CHECK: %[[DONE:.*]] = arith.muli %[[W2]], %c64_i32
// CHECK: %[[LEFT:.*]] = arith.subi %[[VALID]], %[[DONE]]
// CHECK: %[[POS:.*]] = arith.maxsi %[[LEFT]], %c0_i32
// CHECK: %[[ROWS:.*]] = arith.minsi %[[POS]], %c64_i32
// CHECK-NOT: %[[M128]]
// CHECK: arith.andi %[[ROWS]], %c64_i32
// CHECK: %[[AT:.*]] = arith.addi %[[START]], %[[DONE]]
// CHECK: ggk.tma_store %{{.*}}, %[[M64]][%{{.*}}, %[[AT]]]
// CHECK: arith.andi %[[ROWS]], %c1_i32
// CHECK: ggk.tma_store %{{.*}}, %[[M1]]
// CHECK: ggk.bulk_commit_group
// CHECK: ggk.bulk_wait_group attributes {pending = 0 : i64}
llvm.func @per_warpgroup(%tile: !llvm.ptr<3>, %pair: vector<2xbf16>, %row: i32,
                         %col: i32, %rows: i32, %start: i32, %n_block: i32,
                         %m128: !llvm.ptr, %m64: !llvm.ptr, %m32: !llvm.ptr,
                         %m16: !llvm.ptr, %m8: !llvm.ptr, %m4: !llvm.ptr,
                         %m2: !llvm.ptr, %m1: !llvm.ptr) {
  ggk.await_staged_tile %tile attributes {issuer = 128, consumer_threads = 256,
                                          warpgroup_rows = 64}
  ggk.stage_output %pair, %tile[%row, %col] attributes {
      tile_shape = array<i64: 128, 64>} : vector<2xbf16>
  ggk.store_staged_tile %tile rows(%rows) at(%start) n_block(%n_block)
      maps(%m128, %m64, %m32, %m16, %m8, %m4, %m2, %m1) attributes {
      heights = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>,
      tile_shape = array<i64: 128, 64>, chunk_columns = 64, n = 4096,
      element_type = bf16, issuer = 128, consumer_threads = 256,
      warpgroup_rows = 64}
  ggk.drain_tile_stores attributes {issuer = 128, warpgroup_rows = 64}
  llvm.return
}

// -----

// Before: the second slice of a tile staged 64 columns at a time (pending =
// 1: the first slice's store may still be reading the other buffer;
// first_column 64 of a block of 128). After: the issuer waits until at most
// one group is reading, and the boxes go to column n_block * 128 + 64.
// CHECK-LABEL: llvm.func @second_slice
// CHECK-SAME: (%[[TILE:arg0]]: !llvm.ptr<3>, %{{[^:]*}}: vector<2xbf16>, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %[[VALID:arg4]]: i32, %[[START:arg5]]: i32, %[[NB:arg6]]: i32, %[[M2:arg7]]: !llvm.ptr, %[[M1:arg8]]: !llvm.ptr)
// CHECK: ggk.bulk_wait_group read attributes {pending = 1 : i64}
// CHECK: %[[BLOCK:.*]] = arith.muli %[[NB]], %c128_i32
// CHECK: %[[COL:.*]] = arith.addi %[[BLOCK]], %c64_i32
// CHECK: ggk.tma_store %[[TILE]], %[[M2]][%[[COL]], %[[START]]]
llvm.func @second_slice(%tile: !llvm.ptr<3>, %pair: vector<2xbf16>, %row: i32,
                        %col: i32, %rows: i32, %start: i32, %n_block: i32,
                        %m2: !llvm.ptr, %m1: !llvm.ptr) {
  ggk.await_staged_tile %tile attributes {issuer = 128, consumer_threads = 128,
                                          pending = 1}
  ggk.stage_output %pair, %tile[%row, %col] attributes {swizzle = 128,
      tile_shape = array<i64: 2, 64>} : vector<2xbf16>
  ggk.store_staged_tile %tile rows(%rows) at(%start) n_block(%n_block)
      maps(%m2, %m1) attributes {heights = array<i64: 2, 1>,
      tile_shape = array<i64: 2, 64>, chunk_columns = 64, n = 4096,
      element_type = bf16, issuer = 128, consumer_threads = 128,
      first_column = 64, block_columns = 128}
  llvm.return
}
