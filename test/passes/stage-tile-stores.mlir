// RUN: ggc-opt %s -split-input-file -ggk-stage-tile-stores | FileCheck %s

// Before: a tile's outputs with gg-tma-store-pool's pool (boxes of 2 and 1
// rows of a 2x128 tile, swizzled chunks of 64 columns). After: the staged
// tile's address and the wait for the previous tile's stores where the
// tile starts, each pair written into the staged tile, and the pool's
// store of the group's rows where it ends.
// CHECK-LABEL: llvm.func @pooled
// CHECK-SAME: (%[[SMEM:[^:]*]]: !llvm.ptr<3>, %{{[^:]*}}: !llvm.ptr<1>, %[[ROWS:[^:]*]]: i32, %[[START:[^:]*]]: i32, %[[NB:[^:]*]]: i32, %[[G:[^:]*]]: i32, %[[M2:[^:]*]]: !llvm.ptr, %[[M1:[^:]*]]: !llvm.ptr, %[[PAIR:[^:]*]]: vector<2xbf16>, %[[ROW:[^:]*]]: i32, %[[COL:[^:]*]]: i32,
// CHECK-NEXT: %[[STAGED:.*]] = ggk.shared_address %[[SMEM]] "staged_output" attributes {offset = 0 : i64, stride = 0 : i64}
// CHECK-NEXT: ggk.await_staged_tile %[[STAGED]] attributes {consumer_threads = 128 : i64, issuer = 128 : i64}
// CHECK-NEXT: %[[X:.*]] = llvm.fadd
// CHECK-NEXT: ggk.stage_output %[[PAIR]], %[[STAGED]][%[[ROW]], %[[COL]]] attributes {swizzled, tile_shape = array<i64: 2, 128>} : vector<2xbf16>
// CHECK-NEXT: ggk.store_staged_tile %[[STAGED]] rows(%[[ROWS]]) at(%[[START]]) n_block(%[[NB]]) group(%[[G]]) maps(%[[M2]], %[[M1]]) attributes {chunk_columns = 64 : i64, consumer_threads = 128 : i64, element_type = bf16, heights = array<i64: 2, 1>, issuer = 128 : i64, n = 4096 : i64, tile_shape = array<i64: 2, 128>}
// CHECK-NEXT: llvm.return
llvm.func @pooled(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %rows: i32,
                  %row_start: i32, %n_block: i32, %group: i32,
                  %m2: !llvm.ptr, %m1: !llvm.ptr, %pair: vector<2xbf16>,
                  %row: i32, %col: i32, %out_row: i64, %out_col: i32,
                  %row_ok: i1, %col_ok: i1, %f: f32) {
  ggk.store_tile %smem, %out rows(%rows, %row_start) block(%n_block)
      group(%group) maps(%m2, %m1) attributes {pool = array<i64: 2, 1>,
      tile_shape = array<i64: 2, 128>, chunk_columns = 64, swizzled,
      n = 4096, m = 0, out_type = bf16, group_maps, issuer = 128, threads = 128} {
    %x = llvm.fadd %f, %f : f32
    ggk.store_pair %pair at(%row, %col) to(%out_row, %out_col)
        valid(%row_ok, %col_ok) : vector<2xbf16>
    ggk.yield
  }
  llvm.return
}

// -----

// Before: no pool (`pool = array<i64>`). After: each pair valid in its row
// and columns stored by its thread at (out_row * 4096 + out_col) * 2 bytes
// of `out`.
// CHECK-LABEL: llvm.func @per_thread
// CHECK-SAME: (%[[SMEM:[^:]*]]: !llvm.ptr<3>, %[[OUT:[^:]*]]: !llvm.ptr<1>, {{.*}}, %[[PAIR:[^:]*]]: vector<2xbf16>, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %[[OUT_ROW:[^:]*]]: i64, %[[OUT_COL:[^:]*]]: i32, %[[ROW_OK:[^:]*]]: i1, %[[COL_OK:[^:]*]]: i1)
// CHECK-NEXT: %[[VALID:.*]] = arith.andi %[[ROW_OK]], %[[COL_OK]] : i1
// CHECK-NEXT: scf.if %[[VALID]] {
// CHECK-DAG: %[[COL64:.*]] = arith.extsi %[[OUT_COL]] : i32 to i64
// CHECK-DAG: %[[AT:.*]] = arith.muli %[[OUT_ROW]], %c4096_i64
// CHECK: %[[ELEM:.*]] = arith.addi %[[AT]], %[[COL64]]
// CHECK: %[[BYTES:.*]] = arith.muli %[[ELEM]], %c2_i64
// CHECK: %[[ADDR:.*]] = llvm.getelementptr %[[OUT]][%[[BYTES]]]
// CHECK: llvm.store %[[PAIR]], %[[ADDR]] : vector<2xbf16>, !llvm.ptr<1>
// CHECK-NOT: ggk.
llvm.func @per_thread(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %rows: i32,
                      %row_start: i32, %n_block: i32, %group: i32,
                      %pair: vector<2xbf16>, %row: i32, %col: i32,
                      %out_row: i64, %out_col: i32, %row_ok: i1, %col_ok: i1) {
  ggk.store_tile %smem, %out rows(%rows, %row_start) block(%n_block)
      group(%group) attributes {pool = array<i64>,
      tile_shape = array<i64: 128, 128>, chunk_columns = 128,
      n = 4096, m = 0, out_type = bf16, issuer = 128, threads = 256} {
    ggk.store_pair %pair at(%row, %col) to(%out_row, %out_col)
        valid(%row_ok, %col_ok) : vector<2xbf16>
    ggk.yield
  }
  llvm.return
}

// -----

// Before: the transposed output of k_grouped's weight gradient ([G, N, M],
// `out_nm`, M = 512). After: the pair's two columns are two scalars, each
// in row (group * N + column) of the transposed output, M apart.
// CHECK-LABEL: llvm.func @transposed
// CHECK: scf.if
// CHECK-COUNT-2: llvm.extractelement
// CHECK-NOT: llvm.store %{{.*}} : vector<2xbf16>
llvm.func @transposed(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %rows: i32,
                      %row_start: i32, %n_block: i32, %group: i32,
                      %pair: vector<2xbf16>, %row: i32, %col: i32,
                      %out_row: i64, %out_col: i32, %row_ok: i1, %col_ok: i1) {
  ggk.store_tile %smem, %out rows(%rows, %row_start) block(%n_block)
      group(%group) attributes {pool = array<i64>,
      tile_shape = array<i64: 128, 128>, chunk_columns = 128,
      n = 4096, m = 512, out_type = bf16, out_nm, issuer = 128, threads = 256} {
    ggk.store_pair %pair at(%row, %col) to(%out_row, %out_col)
        valid(%row_ok, %col_ok) : vector<2xbf16>
    ggk.yield
  }
  llvm.return
}
