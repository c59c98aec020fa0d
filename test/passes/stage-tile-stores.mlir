// RUN: ggc-opt %s -split-input-file -ggk-stage-tile-stores | FileCheck %s --implicit-check-not=ggk.store_tile --implicit-check-not=ggk.store_pair

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
// CHECK-NEXT: ggk.stage_output %[[PAIR]], %[[STAGED]][%[[ROW]], %[[COL]]] attributes {swizzle = 128 : i64, tile_shape = array<i64: 2, 128>} : vector<2xbf16>
// CHECK-NEXT: ggk.store_staged_tile %[[STAGED]] rows(%[[ROWS]]) at(%[[START]]) n_block(%[[NB]]) group(%[[G]]) maps(%[[M2]], %[[M1]]) attributes {chunk_columns = 64 : i64, consumer_threads = 128 : i64, element_type = bf16, heights = array<i64: 2, 1>, issuer = 128 : i64, n = 4096 : i64, tile_shape = array<i64: 2, 128>}
// CHECK-NEXT: llvm.return
llvm.func @pooled(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %rows: i32,
                  %row_start: i32, %n_block: i32, %group: i32,
                  %m2: !llvm.ptr, %m1: !llvm.ptr, %pair: vector<2xbf16>,
                  %row: i32, %col: i32, %out_row: i64, %out_col: i32,
                  %row_ok: i1, %col_ok: i1, %f: f32) {
  ggk.store_tile %smem, %out rows(%rows, %row_start) block(%n_block)
      group(%group) maps(%m2, %m1) attributes {pool = array<i64: 2, 1>,
      tile_shape = array<i64: 2, 128>, chunk_columns = 64, swizzle = 128,
      n = 4096, m = 0, out_type = bf16, group_maps, issuer = 128, threads = 128} {
    %x = llvm.fadd %f, %f : f32
    ggk.store_pair %pair at(%row, %col) to(%out_row, %out_col)
        valid(%row_ok, %col_ok) : vector<2xbf16>
    ggk.yield
  }
  llvm.return
}

// -----

// Before: DeepGEMM's padded layout, a 64-row tile whose rows' group tags
// two words a lane carry (`tagged`). After: each word's ballot of the rows
// tagged with the group; the count of the leading ones (the mask's
// trailing ones, none after a word with a gap) against the count of all;
// where they agree the pool stores that many rows, else each valid pair
// goes by its thread.
// CHECK-LABEL: llvm.func @tagged
// CHECK-SAME: %[[ROW_START:arg3]]: i32, %{{[^:]*}}: i32, %[[G:arg5]]: i32, {{.*}}, %[[TAG0:[^:]*]]: i32, %[[TAG1:[^:]*]]: i32)
// CHECK: %[[IS0:.*]] = arith.cmpi eq, %[[TAG0]], %[[G]] : i32
// CHECK-NEXT: %[[MASK0:.*]] = ggk.warp_ballot %[[IS0]]
// CHECK: llvm.intr.ctpop(%[[MASK0]])
// CHECK: %[[IS1:.*]] = arith.cmpi eq, %[[TAG1]], %[[G]] : i32
// CHECK-NEXT: %[[MASK1:.*]] = ggk.warp_ballot %[[IS1]]
// CHECK: %[[ALL:.*]] = arith.addi %{{.*}}, %{{.*}} : i32
// CHECK: "llvm.intr.cttz"
// CHECK: %[[LEADING:.*]] = arith.addi
// CHECK: %[[PREFIX:.*]] = arith.cmpi eq, %[[LEADING]], %[[ALL]] : i32
// CHECK-NEXT: scf.if %[[PREFIX]] {
// CHECK: ggk.await_staged_tile
// CHECK: ggk.stage_output
// CHECK: ggk.store_staged_tile %{{.*}} rows(%[[LEADING]]) at(%[[ROW_START]])
// CHECK-NEXT: } else {
// CHECK-NOT: ggk.
// CHECK: llvm.store
// CHECK: llvm.return
llvm.func @tagged(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %rows: i32,
                  %row_start: i32, %n_block: i32, %group: i32,
                  %m: !llvm.ptr, %pair: vector<2xbf16>,
                  %row: i32, %col: i32, %out_row: i64, %out_col: i32,
                  %row_ok: i1, %col_ok: i1, %tag0: i32, %tag1: i32) {
  ggk.store_tile %smem, %out rows(%rows, %row_start) block(%n_block)
      group(%group) maps(%m, %m, %m, %m, %m, %m, %m) tagged(%tag0, %tag1)
      attributes {pool = array<i64: 64, 32, 16, 8, 4, 2, 1>,
      tile_shape = array<i64: 64, 128>, chunk_columns = 64, swizzle = 128,
      n = 4096, m = 0, out_type = bf16, issuer = 128, threads = 128} {
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

// Before: no pool, the rows scattered by an index list (a permute-free
// MoE's outputs back in token order). After: a valid pair reads its row's
// index (-1 for the others, which may lie past the list) and is stored at
// (index * 4096 + out_col) * 2 bytes where the index is not negative and
// below the output's row count.
// CHECK-LABEL: llvm.func @scattered
// CHECK-SAME: (%{{[^:]*}}: !llvm.ptr<3>, %[[OUT:[^:]*]]: !llvm.ptr<1>, {{.*}}, %[[PAIR:[^:]*]]: vector<2xbf16>, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %[[OUT_ROW:[^:]*]]: i64, %[[OUT_COL:[^:]*]]: i32, %[[ROW_OK:[^:]*]]: i1, %[[COL_OK:[^:]*]]: i1, %[[IDS:[^:]*]]: !llvm.ptr<1>, %[[BOUND:[^:]*]]: i64)
// CHECK-NEXT: %[[VALID:.*]] = arith.andi %[[ROW_OK]], %[[COL_OK]] : i1
// CHECK-NEXT: %[[DEST:.*]] = scf.if %[[VALID]] -> (i64) {
// CHECK-NEXT: %[[SLOT:.*]] = llvm.getelementptr %[[IDS]][%[[OUT_ROW]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// CHECK-NEXT: %[[INDEX:.*]] = llvm.load %[[SLOT]] : !llvm.ptr<1> -> i32
// CHECK-NEXT: %[[INDEX64:.*]] = arith.extsi %[[INDEX]] : i32 to i64
// CHECK-NEXT: scf.yield %[[INDEX64]] : i64
// CHECK-NEXT: } else {
// CHECK-NEXT: %[[NONE:.*]] = arith.constant -1 : i64
// CHECK-NEXT: scf.yield %[[NONE]] : i64
// CHECK-DAG: %[[BEFORE_END:.*]] = arith.cmpi slt, %[[DEST]], %[[BOUND]] : i64
// CHECK-DAG: %[[AFTER_FIRST:.*]] = arith.cmpi sge, %[[DEST]], %{{.*}} : i64
// CHECK: %[[STORED:.*]] = arith.andi %[[AFTER_FIRST]], %[[BEFORE_END]] : i1
// CHECK-NEXT: scf.if %[[STORED]] {
// CHECK-DAG: %[[COL64:.*]] = arith.extsi %[[OUT_COL]] : i32 to i64
// CHECK-DAG: %[[AT:.*]] = arith.muli %[[DEST]], %c4096_i64
// CHECK: %[[ELEM:.*]] = arith.addi %[[AT]], %[[COL64]]
// CHECK: %[[BYTES:.*]] = arith.muli %[[ELEM]], %c2_i64
// CHECK: %[[ADDR:.*]] = llvm.getelementptr %[[OUT]][%[[BYTES]]]
// CHECK: llvm.store %[[PAIR]], %[[ADDR]] : vector<2xbf16>, !llvm.ptr<1>
// CHECK-NOT: ggk.
llvm.func @scattered(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %rows: i32,
                     %row_start: i32, %n_block: i32, %group: i32,
                     %pair: vector<2xbf16>, %row: i32, %col: i32,
                     %out_row: i64, %out_col: i32, %row_ok: i1, %col_ok: i1,
                     %ids: !llvm.ptr<1>, %bound: i64) {
  ggk.store_tile %smem, %out rows(%rows, %row_start) block(%n_block)
      group(%group) scatter(%ids bound %bound) attributes {pool = array<i64>,
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
// CHECK-SAME: %[[GROUP:[^:]*]]: i32, %[[PAIR:[^:]*]]: vector<2xbf16>, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %[[OUT_ROW:[^:]*]]: i64, %[[OUT_COL:[^:]*]]: i32,
// CHECK: scf.if
// CHECK: %[[G64:.*]] = arith.extsi %[[GROUP]] : i32 to i64
// CHECK: %[[BASE:.*]] = arith.muli %[[G64]], %c512_i64
// CHECK: %[[ROW:.*]] = arith.subi %[[OUT_ROW]], %[[BASE]] : i64
// CHECK: %[[COL0:.*]] = arith.extsi %{{.*}} : i32 to i64
// CHECK: %[[GN:.*]] = arith.muli %{{.*}}, %c4096_i64
// CHECK: %[[TROW:.*]] = arith.addi %[[GN]], %[[COL0]] : i64
// CHECK: %[[AT:.*]] = arith.muli %[[TROW]], %c512_i64
// CHECK: %[[ELEM:.*]] = arith.addi %[[AT]], %[[ROW]] : i64
// CHECK: %[[BYTES:.*]] = arith.muli %[[ELEM]], %c2_i64
// CHECK: %[[X0:.*]] = llvm.extractelement %[[PAIR]]
// CHECK: %[[A0:.*]] = llvm.getelementptr %{{.*}}[%[[BYTES]]]
// CHECK: llvm.store %[[X0]], %[[A0]] : bf16
// CHECK: llvm.extractelement %[[PAIR]]
// CHECK: llvm.store %{{.*}} : bf16
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

// -----

// Before: two tiles' pooled stores inside the consumers' role of a
// ggk.warp_specialize. After: the role ends with one drain of the TMA
// stores in flight, however many tiles store through the pool.
// CHECK-LABEL: llvm.func @drain
// CHECK: ggk.warp_specialize
// CHECK: consumers {
// CHECK-COUNT-2: ggk.store_staged_tile
// CHECK: ggk.drain_tile_stores attributes {issuer = 128 : i64}
// CHECK-NEXT: ggk.yield
// CHECK-NOT: ggk.drain_tile_stores
llvm.func @drain(%tid: i32, %leader: i1, %smem: !llvm.ptr<3>,
                 %out: !llvm.ptr<1>, %i: i32, %m2: !llvm.ptr, %m1: !llvm.ptr,
                 %pair: vector<2xbf16>, %r: i64, %ok: i1) {
  ggk.warp_specialize %tid, %leader attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = none,
                             registers = [40, 232], staging = swizzled>,
        consumer_warpgroups = 2}
  producer {
    ggk.yield
  } consumers {
  ^bb0(%consumer: i32):
    ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i) maps(%m2, %m1)
        attributes {pool = array<i64: 2, 1>, tile_shape = array<i64: 2, 128>,
        chunk_columns = 64, swizzle = 128, n = 4096, m = 0, out_type = bf16,
        group_maps, issuer = 128, threads = 128} {
      ggk.store_pair %pair at(%i, %i) to(%r, %i) valid(%ok, %ok) : vector<2xbf16>
      ggk.yield
    }
    ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i) maps(%m2, %m1)
        attributes {pool = array<i64: 2, 1>, tile_shape = array<i64: 2, 128>,
        chunk_columns = 64, swizzle = 128, n = 4096, m = 0, out_type = bf16,
        group_maps, issuer = 128, threads = 128} {
      ggk.store_pair %pair at(%i, %i) to(%r, %i) valid(%ok, %ok) : vector<2xbf16>
      ggk.yield
    }
    ggk.yield
  }
  llvm.return
}

// -----

// Before: column_pairs, each store_pair one output (a combined column pair)
// of an output of 2048 columns. After: that one bf16 stored by its thread
// at (out_row * 2048 + out_col) * 2 bytes of `out`.
// CHECK-LABEL: llvm.func @column_pairs
// CHECK-SAME: (%[[SMEM:[^:]*]]: !llvm.ptr<3>, %[[OUT:[^:]*]]: !llvm.ptr<1>, {{.*}}, %[[ONE:[^:]*]]: vector<1xbf16>, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %[[OUT_ROW:[^:]*]]: i64, %[[OUT_COL:[^:]*]]: i32, %[[ROW_OK:[^:]*]]: i1, %[[COL_OK:[^:]*]]: i1)
// CHECK-NEXT: %[[VALID:.*]] = arith.andi %[[ROW_OK]], %[[COL_OK]] : i1
// CHECK-NEXT: scf.if %[[VALID]] {
// CHECK-DAG: %[[COL64:.*]] = arith.extsi %[[OUT_COL]] : i32 to i64
// CHECK-DAG: %[[AT:.*]] = arith.muli %[[OUT_ROW]], %c2048_i64
// CHECK: %[[ELEM:.*]] = arith.addi %[[AT]], %[[COL64]]
// CHECK: %[[BYTES:.*]] = arith.muli %[[ELEM]], %c2_i64
// CHECK: %[[VALUE:.*]] = llvm.extractelement %[[ONE]][%{{.*}} : i32] : vector<1xbf16>
// CHECK: %[[ADDR:.*]] = llvm.getelementptr %[[OUT]][%[[BYTES]]]
// CHECK: llvm.store %[[VALUE]], %[[ADDR]] : bf16, !llvm.ptr<1>
// CHECK-NOT: ggk.
llvm.func @column_pairs(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %rows: i32,
                        %row_start: i32, %n_block: i32, %group: i32,
                        %one: vector<1xbf16>, %row: i32, %col: i32,
                        %out_row: i64, %out_col: i32, %row_ok: i1,
                        %col_ok: i1) {
  ggk.store_tile %smem, %out rows(%rows, %row_start) block(%n_block)
      group(%group) attributes {pool = array<i64>,
      tile_shape = array<i64: 128, 128>, chunk_columns = 128, n = 2048,
      m = 0, out_type = bf16, column_pairs, issuer = 128, threads = 256} {
    ggk.store_pair %one at(%row, %col) to(%out_row, %out_col)
        valid(%row_ok, %col_ok) : vector<1xbf16>
    ggk.yield
  }
  llvm.return
}

// -----

// Before: column_pairs with the pool (sm_90a): each store_pair one output
// at column `col` of a staged tile of BN/2 = 64 columns (2 rows here).
// After: that one value staged there, and the pool's store of the group's
// rows of the 2048 outputs.
// CHECK-LABEL: llvm.func @column_pairs_pooled
// CHECK-SAME: (%[[SMEM:[^:]*]]: !llvm.ptr<3>, {{.*}}, %[[ONE:[^:]*]]: vector<1xbf16>, %[[ROW:[^:]*]]: i32, %[[COL:[^:]*]]: i32,
// CHECK: %[[STAGED:.*]] = ggk.shared_address %[[SMEM]] "staged_output"
// CHECK: ggk.await_staged_tile %[[STAGED]]
// CHECK: ggk.stage_output %[[ONE]], %[[STAGED]][%[[ROW]], %[[COL]]] attributes {swizzle = 128 : i64, tile_shape = array<i64: 2, 64>} : vector<1xbf16>
// CHECK: ggk.store_staged_tile %[[STAGED]] {{.*}} attributes {chunk_columns = 64 : i64, {{.*}}n = 2048 : i64, tile_shape = array<i64: 2, 64>}
llvm.func @column_pairs_pooled(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %rows: i32,
                               %row_start: i32, %n_block: i32, %group: i32,
                               %m2: !llvm.ptr, %m1: !llvm.ptr, %one: vector<1xbf16>,
                               %row: i32, %col: i32, %out_row: i64, %out_col: i32,
                               %row_ok: i1, %col_ok: i1) {
  ggk.store_tile %smem, %out rows(%rows, %row_start) block(%n_block)
      group(%group) maps(%m2, %m1) attributes {pool = array<i64: 2, 1>,
      tile_shape = array<i64: 2, 64>, chunk_columns = 64, swizzle = 128,
      n = 2048, m = 0, out_type = bf16, column_pairs, issuer = 128,
      threads = 128} {
    ggk.store_pair %one at(%row, %col) to(%out_row, %out_col)
        valid(%row_ok, %col_ok) : vector<1xbf16>
    ggk.yield
  }
  llvm.return
}

// -----

// Before: store_columns = 8, the pairs of one row (row group 0) and column
// blocks 0..3, each 4 bytes (columns 2t, 2t + 1 of its block in lane t of
// a quad). After: two butterfly rounds of warp shuffles (lanes t ^ 1, then
// t ^ 2) give lane t the 8 columns of block t, stored as one 16-byte
// vector at column out_col + 6t where the row and block t are valid.
// CHECK-LABEL: llvm.func @quads
// CHECK-SAME: %[[OUT:[^:]*]]: !llvm.ptr<1>, {{.*}}, %[[P0:[^:]*]]: vector<2xbf16>, %[[P1:[^:]*]]: vector<2xbf16>, %[[P2:[^:]*]]: vector<2xbf16>, %[[P3:[^:]*]]: vector<2xbf16>, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %[[OUT_ROW:[^:]*]]: i64, %[[COL0:[^:]*]]: i32, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %[[ROW_OK:[^:]*]]: i1, %[[OK0:[^:]*]]: i1, %[[OK1:[^:]*]]: i1, %[[OK2:[^:]*]]: i1, %[[OK3:[^:]*]]: i1)
// CHECK: %[[TID:.*]] = ggk.thread_index
// CHECK: %[[LANE:.*]] = arith.andi %[[TID]], %c3_i32
// CHECK: %[[BIT0:.*]] = arith.andi %[[LANE]], %c1_i32
// CHECK: %[[ODD:.*]] = arith.cmpi ne, %[[BIT0]]
// CHECK: %[[BIT1:.*]] = arith.andi %[[LANE]], %c2_i32
// CHECK: %[[HIGH:.*]] = arith.cmpi ne, %[[BIT1]]
// Round 1, blocks 0 and 1: an odd lane keeps block 1 and sends block 0.
// CHECK: %[[W0:.*]] = llvm.bitcast %[[P0]] : vector<2xbf16> to i32
// CHECK: %[[W1:.*]] = llvm.bitcast %[[P1]] : vector<2xbf16> to i32
// CHECK: %[[KEEP01:.*]] = arith.select %[[ODD]], %[[W1]], %[[W0]]
// CHECK: %[[SEND01:.*]] = arith.select %[[ODD]], %[[W0]], %[[W1]]
// CHECK: %[[GOT01:.*]] = ggk.warp_shuffle_xor %[[SEND01]], 1
// CHECK: %[[A0:.*]] = arith.select %[[ODD]], %[[GOT01]], %[[KEEP01]]
// CHECK: %[[A1:.*]] = arith.select %[[ODD]], %[[KEEP01]], %[[GOT01]]
// Round 1, blocks 2 and 3.
// CHECK: %[[W2:.*]] = llvm.bitcast %[[P2]] : vector<2xbf16> to i32
// CHECK: %[[W3:.*]] = llvm.bitcast %[[P3]] : vector<2xbf16> to i32
// CHECK: %[[KEEP23:.*]] = arith.select %[[ODD]], %[[W3]], %[[W2]]
// CHECK: %[[SEND23:.*]] = arith.select %[[ODD]], %[[W2]], %[[W3]]
// CHECK: %[[GOT23:.*]] = ggk.warp_shuffle_xor %[[SEND23]], 1
// CHECK: %[[B0:.*]] = arith.select %[[ODD]], %[[GOT23]], %[[KEEP23]]
// CHECK: %[[B1:.*]] = arith.select %[[ODD]], %[[KEEP23]], %[[GOT23]]
// Round 2, each half: a high lane keeps blocks 2 and 3's and sends 0 and 1's.
// CHECK: %[[KEEPL:.*]] = arith.select %[[HIGH]], %[[B0]], %[[A0]]
// CHECK: %[[SENDL:.*]] = arith.select %[[HIGH]], %[[A0]], %[[B0]]
// CHECK: %[[GOTL:.*]] = ggk.warp_shuffle_xor %[[SENDL]], 2
// CHECK: %[[X0:.*]] = arith.select %[[HIGH]], %[[GOTL]], %[[KEEPL]]
// CHECK: %[[X2:.*]] = arith.select %[[HIGH]], %[[KEEPL]], %[[GOTL]]
// CHECK: %[[KEEPH:.*]] = arith.select %[[HIGH]], %[[B1]], %[[A1]]
// CHECK: %[[SENDH:.*]] = arith.select %[[HIGH]], %[[A1]], %[[B1]]
// CHECK: %[[GOTH:.*]] = ggk.warp_shuffle_xor %[[SENDH]], 2
// CHECK: %[[X1:.*]] = arith.select %[[HIGH]], %[[GOTH]], %[[KEEPH]]
// CHECK: %[[X3:.*]] = arith.select %[[HIGH]], %[[KEEPH]], %[[GOTH]]
// Lane t's block t, columns 0..7 in order.
// CHECK: %[[V0:.*]] = llvm.insertelement %[[X0]], %{{.*}}[%c0_i32{{.*}} : i32] : vector<4xi32>
// CHECK: %[[V1:.*]] = llvm.insertelement %[[X1]], %[[V0]][%c1_i32{{.*}} : i32] : vector<4xi32>
// CHECK: %[[V2:.*]] = llvm.insertelement %[[X2]], %[[V1]][%c2_i32{{.*}} : i32] : vector<4xi32>
// CHECK: %[[V3:.*]] = llvm.insertelement %[[X3]], %[[V2]][%c3_i32{{.*}} : i32] : vector<4xi32>
// CHECK: %[[SIX:.*]] = arith.muli %[[LANE]], %c6_i32
// CHECK: %[[COL:.*]] = arith.addi %[[COL0]], %[[SIX]]
// CHECK: %[[LO:.*]] = arith.select %[[ODD]], %[[OK1]], %[[OK0]]
// CHECK: %[[HI:.*]] = arith.select %[[ODD]], %[[OK3]], %[[OK2]]
// CHECK: %[[BLOCK_OK:.*]] = arith.select %[[HIGH]], %[[HI]], %[[LO]]
// CHECK: %[[VALID:.*]] = arith.andi %[[ROW_OK]], %[[BLOCK_OK]]
// CHECK: scf.if %[[VALID]] {
// CHECK: %[[COL64:.*]] = arith.extsi %[[COL]] : i32 to i64
// CHECK: %[[AT:.*]] = arith.muli %[[OUT_ROW]], %c4096_i64
// CHECK: %[[ELEM:.*]] = arith.addi %[[AT]], %[[COL64]]
// CHECK: %[[BYTES:.*]] = arith.muli %[[ELEM]], %c2_i64
// CHECK: %[[ADDR:.*]] = llvm.getelementptr %[[OUT]][%[[BYTES]]]
// CHECK: llvm.store %[[V3]], %[[ADDR]] {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
// CHECK-NOT: llvm.store
// CHECK: llvm.return
llvm.func @quads(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %rows: i32,
                 %row_start: i32, %n_block: i32, %group: i32,
                 %p0: vector<2xbf16>, %p1: vector<2xbf16>,
                 %p2: vector<2xbf16>, %p3: vector<2xbf16>,
                 %row: i32, %col: i32, %out_row: i64, %c0: i32, %c1: i32,
                 %c2: i32, %c3: i32, %row_ok: i1, %ok0: i1, %ok1: i1,
                 %ok2: i1, %ok3: i1) {
  ggk.store_tile %smem, %out rows(%rows, %row_start) block(%n_block)
      group(%group) attributes {pool = array<i64>,
      tile_shape = array<i64: 128, 128>, chunk_columns = 128,
      n = 4096, m = 0, out_type = bf16, issuer = 128, threads = 256,
      store_columns = 8} {
    ggk.store_pair %p0 at(%row, %col) to(%out_row, %c0)
        valid(%row_ok, %ok0) attributes {fragment = array<i64: 0, 0>} : vector<2xbf16>
    ggk.store_pair %p1 at(%row, %col) to(%out_row, %c1)
        valid(%row_ok, %ok1) attributes {fragment = array<i64: 0, 1>} : vector<2xbf16>
    ggk.store_pair %p2 at(%row, %col) to(%out_row, %c2)
        valid(%row_ok, %ok2) attributes {fragment = array<i64: 0, 2>} : vector<2xbf16>
    ggk.store_pair %p3 at(%row, %col) to(%out_row, %c3)
        valid(%row_ok, %ok3) attributes {fragment = array<i64: 0, 3>} : vector<2xbf16>
    ggk.yield
  }
  llvm.return
}

// -----

// Before: an accumulating tile (gg's `accumulate`) of bf16 outputs, its
// pair f32. After: the thread reads the two stored bf16 values where it
// stores, adds the pair in f32 and stores the sum rounded once.
// CHECK-LABEL: llvm.func @accumulate
// CHECK-SAME: %[[PAIR:[^:]*]]: vector<2xf32>
// CHECK: scf.if
// CHECK: %[[ADDR:.*]] = llvm.getelementptr
// CHECK-NEXT: %[[OLD:.*]] = llvm.load %[[ADDR]] : !llvm.ptr<1> -> vector<2xbf16>
// CHECK-NEXT: %[[WIDE:.*]] = arith.extf %[[OLD]] : vector<2xbf16> to vector<2xf32>
// CHECK-NEXT: %[[SUM:.*]] = arith.addf %[[WIDE]], %[[PAIR]] : vector<2xf32>
// CHECK-NEXT: %[[NEW:.*]] = arith.truncf %[[SUM]] : vector<2xf32> to vector<2xbf16>
// CHECK-NEXT: llvm.store %[[NEW]], %[[ADDR]] : vector<2xbf16>, !llvm.ptr<1>
llvm.func @accumulate(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32,
                      %pair: vector<2xf32>, %out_row: i64, %ok: i1) {
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 4096, m = 0, out_type = bf16, accumulate,
      issuer = 128, threads = 256} {
    ggk.store_pair %pair at(%i, %i) to(%out_row, %i) valid(%ok, %ok)
        : vector<2xf32>
    ggk.yield
  }
  llvm.return
}

// -----

// Before: an accumulating tile of the transposed f32 output (`out_nm`).
// After: each of the pair's two values is added to its own row's element.
// CHECK-LABEL: llvm.func @accumulate_transposed
// CHECK-COUNT-2: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK-NOT: arith.extf
// CHECK-NOT: llvm.load
llvm.func @accumulate_transposed(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>,
                                 %i: i32, %pair: vector<2xf32>, %r: i64,
                                 %ok: i1) {
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 4096, m = 512, out_type = f32, out_nm,
      accumulate, issuer = 128, threads = 256} {
    ggk.store_pair %pair at(%i, %i) to(%r, %i) valid(%ok, %ok) : vector<2xf32>
    ggk.yield
  }
  llvm.return
}

// -----

// Before: a 2 x 128 tile staged 64 columns at a time (slice_columns = 64),
// a pair in each slice (column blocks 0 and 8). After: per slice, the wait
// (slice 0: for every earlier store; slice 1: all but the newest group),
// its pair staged in its buffer of the ring (the second 2 x 64 x 2 bytes
// on) at its column less the slice's first, and the slice's boxes stored
// at first_column 0 and 64 of the block's 128.
// CHECK-LABEL: llvm.func @sliced
// CHECK-SAME: (%[[SMEM:[^:]*]]: !llvm.ptr<3>, %{{[^:]*}}: !llvm.ptr<1>, %[[ROWS:[^:]*]]: i32, %[[START:[^:]*]]: i32, %[[NB:[^:]*]]: i32, %[[G:[^:]*]]: i32, %[[M2:[^:]*]]: !llvm.ptr, %[[M1:[^:]*]]: !llvm.ptr, %[[PAIR:[^:]*]]: vector<2xbf16>, %[[ROW:[^:]*]]: i32, %[[COL:[^:]*]]: i32,
// CHECK: %[[B0:.*]] = ggk.shared_address %[[SMEM]] "staged_output"
// CHECK: %[[B1:.*]] = llvm.getelementptr %[[B0]][%c256_i64]
// CHECK-NEXT: ggk.await_staged_tile %[[B0]] attributes {consumer_threads = 128 : i64, issuer = 128 : i64}
// CHECK: %[[C0:.*]] = arith.subi %[[COL]], %c0_i32
// CHECK-NEXT: ggk.stage_output %[[PAIR]], %[[B0]][%[[ROW]], %[[C0]]] attributes {fragment = array<i64: 0, 0>, swizzle = 128 : i64, tile_shape = array<i64: 2, 64>}
// CHECK-NEXT: ggk.store_staged_tile %[[B0]] rows(%[[ROWS]]) at(%[[START]]) n_block(%[[NB]]) group(%[[G]]) maps(%[[M2]], %[[M1]]) attributes {block_columns = 128 : i64, chunk_columns = 64 : i64, {{.*}}tile_shape = array<i64: 2, 64>}
// CHECK-NEXT: ggk.await_staged_tile %[[B1]] attributes {consumer_threads = 128 : i64, issuer = 128 : i64, pending = 1 : i64}
// CHECK: %[[C1:.*]] = arith.subi %[[COL]], %c64_i32
// CHECK-NEXT: ggk.stage_output %[[PAIR]], %[[B1]][%[[ROW]], %[[C1]]] attributes {fragment = array<i64: 0, 8>,
// CHECK-NEXT: ggk.store_staged_tile %[[B1]] {{.*}} attributes {block_columns = 128 : i64, chunk_columns = 64 : i64, {{.*}}first_column = 64 : i64, {{.*}}tile_shape = array<i64: 2, 64>}
// CHECK: llvm.return
llvm.func @sliced(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %rows: i32,
                  %row_start: i32, %n_block: i32, %group: i32,
                  %m2: !llvm.ptr, %m1: !llvm.ptr, %pair: vector<2xbf16>,
                  %row: i32, %col: i32, %out_row: i64, %out_col: i32,
                  %row_ok: i1, %col_ok: i1) {
  ggk.store_tile %smem, %out rows(%rows, %row_start) block(%n_block)
      group(%group) maps(%m2, %m1) attributes {pool = array<i64: 2, 1>,
      tile_shape = array<i64: 2, 128>, chunk_columns = 64, swizzle = 128,
      slice_columns = 64, n = 4096, m = 0, out_type = bf16, group_maps,
      issuer = 128, threads = 128} {
    ggk.store_pair %pair at(%row, %col) to(%out_row, %out_col)
        valid(%row_ok, %col_ok) attributes {fragment = array<i64: 0, 0>} : vector<2xbf16>
    ggk.store_pair %pair at(%row, %col) to(%out_row, %out_col)
        valid(%row_ok, %col_ok) attributes {fragment = array<i64: 0, 8>} : vector<2xbf16>
    ggk.yield
  }
  llvm.return
}
