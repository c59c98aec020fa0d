// RUN: ggc-opt %s -split-input-file -ggk-lower-tile-schedule -canonicalize | FileCheck %s

// Before: the body counts the K blocks of every tile the CTA owns. After:
// the persistent loop, CTA c taking tiles c, c + grid, ...; a cursor
// (group, its first tile, and the group's tiles, first row and rows)
// advances past groups that end at or before the tile. Each group's span is
// loaded once, when the cursor reaches it (group 0's before the loop): its
// offsets clamped to [0, M], ceil(rows / 128) M blocks x 32 N blocks. A
// tile of the group the cursor holds loads nothing; the tile's fields
// replace the body's arguments (7168 / 64 = 112 K blocks).
// CHECK-LABEL: llvm.func @contiguous
// CHECK: %[[GRID:.*]] = ggk.grid_size
// CHECK: %[[FIRST:.*]] = ggk.block_index
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// CHECK: %[[TILES0:.*]] = arith.muli %{{.*}}, %c32_i32
// CHECK: scf.while (%[[TILE:.*]] = %[[FIRST]], %{{.*}} = %c0_i32, %{{.*}} = %c0_i32, %{{.*}} = %[[TILES0]], %{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}, %[[COUNT:.*]] = %c0_i32) : (i32, i32, i32, i32, i32, i32, i32)
// CHECK: scf.while
// CHECK-NOT: llvm.load
// CHECK: scf.condition
// CHECK: } do {
// CHECK: scf.if
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// CHECK: arith.maxsi
// CHECK: arith.minsi
// CHECK: arith.muli %{{.*}}, %c32_i32
// CHECK: scf.condition
// CHECK: } do {
// CHECK-NOT: llvm.load
// CHECK: arith.addi %{{.*}}, %c112_i32
// CHECK: arith.addi %{{.*}}, %[[GRID]]
// CHECK-NOT: ggk.foreach_tile
llvm.func @contiguous(%groups: !llvm.ptr<1>, %m: i64) -> i32 {
  %c0 = arith.constant 0 : i32
  %n = ggk.foreach_tile contiguous groups(%groups : !llvm.ptr<1>, i32) size(%m)
      iter_args(%c0 : i32) attributes {tile = array<i64: 128, 128, 64>,
      num_groups = 8, m = 0, n = 4096, k = 7168, cluster = 1, k_alignment = 1} {
  ^bb0(%group: i32, %m_block: i32, %n_block: i32, %row_start: i32,
       %group_start: i32, %rows_valid: i32, %k_start: i32, %k_first: i32,
       %k_end: i32, %num_k_blocks: i32, %shares_b: i32, %count: i32):
    %next = arith.addi %count, %num_k_blocks : i32
    ggk.yield %next : i32
  } -> i32
  llvm.return %n : i32
}

// -----

// zero_ungrouped: the cursor starts at group -1, rows [0, offsets[0]) (its
// span: 0 to the first offset, the one load before the loop), and walks to
// group 8, rows [offsets[8], M), so it stops at 9. Each span loads the one
// offset that is there (the begin of group -1 is 0, the end of group 8 is
// M). A tile of group -1 or 8 has no K blocks and the nearest real group's
// index (clamped to [0, 7]).
// CHECK-LABEL: llvm.func @zero_ungrouped
// CHECK: %[[M:.*]] = arith.trunci %{{.*}} : i64 to i32
// CHECK: %[[FIRST_END:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// CHECK: scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %c-1_i32, %{{.*}} = %c0_i32,
// CHECK: arith.cmpi slt, %{{.*}}, %c9_i32
// CHECK: } do {
// CHECK: %[[NEXT:.*]] = arith.addi %{{.*}}, %c1_i32
// CHECK: scf.if
// CHECK: %[[BEGIN:.*]] = llvm.load
// CHECK: %[[BEFORE:.*]] = arith.cmpi slt, %[[NEXT]], %c0_i32
// CHECK: arith.select %[[BEFORE]], %c0_i32, %[[BEGIN]]
// CHECK: %[[END:.*]] = llvm.load
// CHECK: %[[AFTER:.*]] = arith.cmpi sge, %[[NEXT]], %c8_i32
// CHECK: arith.select %[[AFTER]], %{{.*}}, %[[END]]
// CHECK: } do {
// CHECK: ^bb0(%{{[^:]*}}: i32, %[[GROUP:[^:]*]]: i32,
// CHECK-DAG: %[[BELOW:.*]] = arith.cmpi slt, %[[GROUP]], %c8_i32
// CHECK-DAG: %[[ABOVE:.*]] = arith.cmpi sge, %[[GROUP]], %c0_i32
// CHECK: %[[REAL:.*]] = arith.andi %[[ABOVE]], %[[BELOW]]
// CHECK: arith.select %[[REAL]], %c112_i32, %c0_i32
// CHECK: %[[LO:.*]] = arith.maxsi %[[GROUP]], %c0_i32
// CHECK: arith.minsi %[[LO]], %c7_i32
llvm.func @zero_ungrouped(%groups: !llvm.ptr<1>, %m: i64) -> i32 {
  %c0 = arith.constant 0 : i32
  %n = ggk.foreach_tile contiguous groups(%groups : !llvm.ptr<1>, i32) size(%m)
      iter_args(%c0 : i32) attributes {tile = array<i64: 128, 128, 64>,
      num_groups = 8, m = 0, n = 4096, k = 7168, cluster = 1, k_alignment = 1,
      zero_ungrouped} {
  ^bb0(%group: i32, %m_block: i32, %n_block: i32, %row_start: i32,
       %group_start: i32, %rows_valid: i32, %k_start: i32, %k_first: i32,
       %k_end: i32, %num_k_blocks: i32, %shares_b: i32, %count: i32):
    %blocks = arith.addi %count, %num_k_blocks : i32
    %next = arith.addi %blocks, %group : i32
    ggk.yield %next : i32
  } -> i32
  llvm.return %n : i32
}

// -----

// zero_ungrouped with i64 offsets: group -1 begins at 0 and group 8 ends
// at M (the i64 size), both chosen before the offsets are clamped to
// [0, M] and narrowed.
// CHECK-LABEL: llvm.func @zero_ungrouped_i64
// CHECK: } do {
// CHECK: scf.if
// CHECK: %[[BEGIN:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> i64
// CHECK: %[[FIRST:.*]] = arith.select %{{.*}}, %c0_i64, %[[BEGIN]] : i64
// CHECK: %[[END:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> i64
// CHECK: %[[LAST:.*]] = arith.select %{{.*}}, %[[M:.*]], %[[END]] : i64
// CHECK: arith.maxsi %[[FIRST]], %c0_i64 : i64
// CHECK: arith.maxsi %[[LAST]], %{{.*}} : i64
// CHECK: arith.trunci %{{.*}} : i64 to i32
llvm.func @zero_ungrouped_i64(%groups: !llvm.ptr<1>, %m: i64) -> i32 {
  %c0 = arith.constant 0 : i32
  %n = ggk.foreach_tile contiguous groups(%groups : !llvm.ptr<1>, i64) size(%m)
      iter_args(%c0 : i32) attributes {tile = array<i64: 128, 128, 64>,
      num_groups = 8, m = 0, n = 4096, k = 7168, cluster = 1, k_alignment = 1,
      zero_ungrouped} {
  ^bb0(%group: i32, %m_block: i32, %n_block: i32, %row_start: i32,
       %group_start: i32, %rows_valid: i32, %k_start: i32, %k_first: i32,
       %k_end: i32, %num_k_blocks: i32, %shares_b: i32, %count: i32):
    %blocks = arith.addi %count, %num_k_blocks : i32
    %next = arith.addi %blocks, %row_start : i32
    ggk.yield %next : i32
  } -> i32
  llvm.return %n : i32
}

// -----

// padded_contiguous: tiles cover A's rows; a tile whose first row is tagged
// -1 (padding) or with a group past G is skipped, its state passed on.
// CHECK-LABEL: llvm.func @padded
// CHECK: scf.while
// CHECK: %[[TAG:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// CHECK-DAG: %[[NOT_NEG:.*]] = arith.cmpi sge, %[[TAG]], %c0_i32
// CHECK-DAG: %[[BELOW_G:.*]] = arith.cmpi slt, %[[TAG]], %c8_i32
// CHECK: %[[OWNED:.*]] = arith.andi %[[NOT_NEG]], %[[BELOW_G]]
// CHECK: scf.if %[[OWNED]]
// CHECK: arith.addi %{{.*}}, %[[TAG]]
llvm.func @padded(%tags: !llvm.ptr<1>, %m: i64) -> i32 {
  %c0 = arith.constant 0 : i32
  %n = ggk.foreach_tile padded_contiguous groups(%tags : !llvm.ptr<1>, i32)
      size(%m) iter_args(%c0 : i32) attributes {tile = array<i64: 128, 128, 64>,
      num_groups = 8, m = 0, n = 4096, k = 7168, cluster = 1, k_alignment = 1} {
  ^bb0(%group: i32, %m_block: i32, %n_block: i32, %row_start: i32,
       %group_start: i32, %rows_valid: i32, %k_start: i32, %k_first: i32,
       %k_end: i32, %num_k_blocks: i32, %shares_b: i32, %sum: i32):
    %next = arith.addi %sum, %group : i32
    ggk.yield %next : i32
  } -> i32
  llvm.return %n : i32
}

// -----

// k_grouped: every group has all M rows (4096 / 128 x 7168 / 128 = 1792
// tiles, 0 past the last group: the cursor carries no span and loads
// nothing); its K range comes from the offsets (i64 here, clamped to [0, K]
// before narrowing), its first K block starting at the group's first K
// rounded down to k_alignment (8). (The body reads only k_start, so the
// group's end is folded away.)
// CHECK-LABEL: llvm.func @k_grouped
// CHECK: scf.while ({{.*}}) : (i32, i32, i32, i32) ->
// CHECK: scf.while ({{.*}}) : (i32, i32) ->
// CHECK-NOT: llvm.load
// CHECK: arith.select %{{.*}}, %c1792_i32, %c0_i32
// CHECK-NOT: llvm.load
// CHECK: } do {
// CHECK-NOT: llvm.load
// CHECK: } do {
// CHECK: %[[BEGIN:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> i64
// CHECK: %[[LO:.*]] = arith.maxsi %[[BEGIN]], %c0_i64
// CHECK: %[[FIRST:.*]] = arith.minsi %[[LO]], %{{.*}} : i64
// CHECK: %[[FIRST32:.*]] = arith.trunci %[[FIRST]] : i64 to i32
// CHECK: arith.andi %[[FIRST32]], %c-8_i32
llvm.func @k_grouped(%offsets: !llvm.ptr<1>, %k: i64) -> i32 {
  %c0 = arith.constant 0 : i32
  %n = ggk.foreach_tile k_grouped groups(%offsets : !llvm.ptr<1>, i64)
      size(%k) iter_args(%c0 : i32) attributes {tile = array<i64: 128, 128, 64>,
      num_groups = 8, m = 4096, n = 7168, k = 0, cluster = 1, k_alignment = 8} {
  ^bb0(%group: i32, %m_block: i32, %n_block: i32, %row_start: i32,
       %group_start: i32, %rows_valid: i32, %k_start: i32, %k_first: i32,
       %k_end: i32, %num_k_blocks: i32, %shares_b: i32, %sum: i32):
    %next = arith.addi %sum, %k_start : i32
    ggk.yield %next : i32
  } -> i32
  llvm.return %n : i32
}

// -----

// m_band = 12: a group's M blocks are walked in bands of 12 (fewer when
// the group has fewer, or for its last band): tile i of the group lies in
// band i / (band x 32 N blocks), and within it M blocks go first.
// CHECK-LABEL: llvm.func @banded
// CHECK: } do {
// CHECK: } do {
// CHECK-NOT: llvm.load
// CHECK: %[[LOCAL:.*]] = arith.subi
// CHECK-NOT: llvm.load
// CHECK: %[[UNITS:.*]] = arith.divui %{{.*}}, %c128_i32
// CHECK: %[[BAND:.*]] = arith.minsi %[[UNITS]], %c12_i32
// CHECK: %[[BAND_TILES:.*]] = arith.muli %[[BAND]], %c32_i32
// CHECK: %[[INDEX:.*]] = arith.divui %[[LOCAL]], %[[BAND_TILES]]
// CHECK: %[[FIRST:.*]] = arith.muli %[[INDEX]], %[[BAND]]
// CHECK: %[[LEFT:.*]] = arith.subi %[[UNITS]], %[[FIRST]]
// CHECK: %[[HEIGHT:.*]] = arith.minsi %[[BAND]], %[[LEFT]]
// CHECK: %[[SKIPPED:.*]] = arith.muli %[[INDEX]], %[[BAND_TILES]]
// CHECK: %[[IN_BAND:.*]] = arith.subi %[[LOCAL]], %[[SKIPPED]]
// CHECK: %[[M_OFF:.*]] = arith.remui %[[IN_BAND]], %[[HEIGHT]]
// CHECK: %[[M_BLOCK:.*]] = arith.addi %[[FIRST]], %[[M_OFF]]
// CHECK: %[[N_BLOCK:.*]] = arith.divui %[[IN_BAND]], %[[HEIGHT]]
// CHECK: arith.addi %[[M_BLOCK]], %[[N_BLOCK]]
llvm.func @banded(%groups: !llvm.ptr<1>, %m: i64) -> i32 {
  %c0 = arith.constant 0 : i32
  %n = ggk.foreach_tile contiguous groups(%groups : !llvm.ptr<1>, i32) size(%m)
      iter_args(%c0 : i32) attributes {tile = array<i64: 128, 128, 64>, m_band = 12,
      num_groups = 8, m = 0, n = 4096, k = 7168, cluster = 1, k_alignment = 1} {
  ^bb0(%group: i32, %m_block: i32, %n_block: i32, %row_start: i32,
       %group_start: i32, %rows_valid: i32, %k_start: i32, %k_first: i32,
       %k_end: i32, %num_k_blocks: i32, %shares_b: i32, %sum: i32):
    %mn = arith.addi %m_block, %n_block : i32
    %next = arith.addi %sum, %mn : i32
    ggk.yield %next : i32
  } -> i32
  llvm.return %n : i32
}

// -----

// The tile's fields come from the cursor's carried span (the body reads the
// rows through row_start, rows_valid and group_start): the group's first
// row and rows, no offsets loaded again.
// CHECK-LABEL: llvm.func @spans
// CHECK: scf.while
// CHECK: scf.while
// CHECK: } do {
// CHECK: } do {
// CHECK-NEXT: ^bb0(%[[TILE:arg[0-9]+]]: i32, %{{arg[0-9]+}}: i32, %[[FIRST:arg[0-9]+]]: i32, %{{arg[0-9]+}}: i32, %[[ROW0:arg[0-9]+]]: i32, %[[ROWS:arg[0-9]+]]: i32, %{{arg[0-9]+}}: i32):
// CHECK-NOT: llvm.load
// CHECK: arith.subi %[[TILE]], %[[FIRST]]
// CHECK: arith.addi %[[ROWS]], %c127_i32
// CHECK: %[[ROW:.*]] = arith.muli %{{.*}}, %c128_i32
// CHECK: arith.addi %[[ROW0]], %[[ROW]]
// CHECK: arith.subi %[[ROWS]], %[[ROW]]
// CHECK-NOT: llvm.load
// CHECK: scf.yield
llvm.func @spans(%groups: !llvm.ptr<1>, %m: i64) -> i32 {
  %c0 = arith.constant 0 : i32
  %n = ggk.foreach_tile contiguous groups(%groups : !llvm.ptr<1>, i32) size(%m)
      iter_args(%c0 : i32) attributes {tile = array<i64: 128, 128, 64>,
      num_groups = 8, m = 0, n = 4096, k = 7168, cluster = 1, k_alignment = 1} {
  ^bb0(%group: i32, %m_block: i32, %n_block: i32, %row_start: i32,
       %group_start: i32, %rows_valid: i32, %k_start: i32, %k_first: i32,
       %k_end: i32, %num_k_blocks: i32, %shares_b: i32, %sum: i32):
    %a = arith.addi %row_start, %rows_valid : i32
    %b = arith.addi %a, %group_start : i32
    %next = arith.addi %sum, %b : i32
    ggk.yield %next : i32
  } -> i32
  llvm.return %n : i32
}

// -----

// masked: each group's count is loaded once, when the cursor reaches the
// group (group 0's before the loop), clamped to [0, M]; the body reads the
// carried rows.
// CHECK-LABEL: llvm.func @masked
// CHECK: %[[COUNT0:.*]] = llvm.load %arg0 : !llvm.ptr<1> -> i32
// CHECK: scf.while
// CHECK: scf.while
// CHECK-NOT: llvm.load
// CHECK: scf.condition
// CHECK: } do {
// CHECK: scf.if
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// CHECK: arith.maxsi %{{.*}}, %c0_i32
// CHECK-NOT: llvm.load
// CHECK: scf.condition
// CHECK: } do {
// CHECK-NOT: llvm.load
// CHECK: scf.yield
llvm.func @masked(%counts: !llvm.ptr<1>, %m: i64) -> i32 {
  %c0 = arith.constant 0 : i32
  %n = ggk.foreach_tile masked groups(%counts : !llvm.ptr<1>, i32) size(%m)
      iter_args(%c0 : i32) attributes {tile = array<i64: 128, 128, 64>,
      num_groups = 4, m = 256, n = 4096, k = 7168, cluster = 1, k_alignment = 1} {
  ^bb0(%group: i32, %m_block: i32, %n_block: i32, %row_start: i32,
       %group_start: i32, %rows_valid: i32, %k_start: i32, %k_first: i32,
       %k_end: i32, %num_k_blocks: i32, %shares_b: i32, %sum: i32):
    %next = arith.addi %sum, %rows_valid : i32
    ggk.yield %next : i32
  } -> i32
  llvm.return %n : i32
}

// -----

// A pair (cluster 2) walks units of two tiles: a group of B M blocks has
// B / 2 pairs x 3 N blocks of units where M blocks 2p + rank share an N
// block (shares_b 1), then, where B is odd, (3 + 1) / 2 units of its last
// M block, N blocks 2v + rank, each CTA loading its own B (shares_b 0);
// the last of those has no N block 3 for rank 1, which takes M block B
// (past the group's end) of rank 0's N block, shared.
// CHECK-LABEL: llvm.func @paired
// CHECK-SAME: %[[RANK:[^:]*]]: i32)
// CHECK: %[[MB0:.*]] = arith.divui %{{.*}}, %c128_i32
// CHECK-NEXT: %[[PAIRS0:.*]] = arith.divui %[[MB0]], %c2_i32
// CHECK-NEXT: %[[ODD0:.*]] = arith.remui %[[MB0]], %c2_i32
// CHECK-NEXT: %[[LONE0:.*]] = arith.muli %[[ODD0]], %c2_i32
// CHECK-NEXT: %[[PAIRED0:.*]] = arith.muli %[[PAIRS0]], %c3_i32
// CHECK-NEXT: %[[UNITS0:.*]] = arith.addi %[[PAIRED0]], %[[LONE0]]
// CHECK: } do {
// CHECK: } do {
// CHECK: %[[UNIT:.*]] = arith.subi
// CHECK: %[[MB:.*]] = arith.divui %{{.*}}, %c128_i32
// CHECK-NEXT: %[[PAIRS:.*]] = arith.divui %[[MB]], %c2_i32
// CHECK-NEXT: %[[PAIRED:.*]] = arith.muli %[[PAIRS]], %c3_i32
// CHECK-NEXT: %[[SAFE:.*]] = arith.maxsi %[[PAIRS]], %c1_i32
// CHECK-NEXT: %[[PAIR:.*]] = arith.remui %[[UNIT]], %[[SAFE]]
// CHECK-NEXT: %[[PAIRN:.*]] = arith.divui %[[UNIT]], %[[SAFE]]
// CHECK-NEXT: %[[TWICE:.*]] = arith.muli %[[PAIR]], %c2_i32
// CHECK-NEXT: %[[PAIRM:.*]] = arith.addi %[[TWICE]], %[[RANK]]
// CHECK-NEXT: %[[V:.*]] = arith.subi %[[UNIT]], %[[PAIRED]]
// CHECK-NEXT: %[[FIRSTN:.*]] = arith.muli %[[V]], %c2_i32
// CHECK-NEXT: %[[LONEN:.*]] = arith.addi %[[FIRSTN]], %[[RANK]]
// CHECK-NEXT: %[[PASTN:.*]] = arith.cmpi sge, %[[LONEN]], %c3_i32
// CHECK-NEXT: %[[SECONDN:.*]] = arith.addi %[[FIRSTN]], %c1_i32
// CHECK-NEXT: %[[ONEN:.*]] = arith.cmpi sge, %[[SECONDN]], %c3_i32
// CHECK-NEXT: %[[LASTM:.*]] = arith.subi %[[MB]], %c1_i32
// CHECK-NEXT: %[[LONEM:.*]] = arith.select %[[PASTN]], %[[MB]], %[[LASTM]]
// CHECK-NEXT: %[[LONEN2:.*]] = arith.select %[[PASTN]], %[[FIRSTN]], %[[LONEN]]
// CHECK-NEXT: %[[ISPAIRED:.*]] = arith.cmpi slt, %[[UNIT]], %[[PAIRED]]
// CHECK-NEXT: %[[M:.*]] = arith.select %[[ISPAIRED]], %[[PAIRM]], %[[LONEM]]
// CHECK-NEXT: %[[N:.*]] = arith.select %[[ISPAIRED]], %[[PAIRN]], %[[LONEN2]]
// CHECK-NEXT: %[[LONESHARES:.*]] = arith.extui %[[ONEN]] : i1 to i32
// CHECK-NEXT: %[[SHARES:.*]] = arith.select %[[ISPAIRED]], %c1_i32, %[[LONESHARES]]
// CHECK-NEXT: call @use(%[[M]], %[[N]], %[[SHARES]])
func.func private @use(i32, i32, i32)
llvm.func @paired(%groups: !llvm.ptr<1>, %m: i64, %rank: i32) {
  ggk.foreach_tile masked groups(%groups : !llvm.ptr<1>, i32) size(%m)
      rank(%rank) attributes {tile = array<i64: 128, 128, 128>,
      num_groups = 4, m = 384, n = 384, k = 512, cluster = 2, k_alignment = 1} {
  ^bb0(%group: i32, %m_block: i32, %n_block: i32, %row_start: i32,
       %group_start: i32, %rows_valid: i32, %k_start: i32, %k_first: i32,
       %k_end: i32, %num_k_blocks: i32, %shares_b: i32):
    func.call @use(%m_block, %n_block, %shares_b) : (i32, i32, i32) -> ()
    ggk.yield
  }
  llvm.return
}

// -----

// A table of the group counts in shared memory (gg's group_reads = shared):
// thread t copies counts t, t + 384, ... into it, and the walk reads group
// 0's count and each next group's there; no count is loaded from global
// memory inside the walk.
// CHECK-LABEL: llvm.func @group_table
// CHECK-SAME: (%[[GROUPS:.*]]: !llvm.ptr<1>, %{{.*}}: i64, %[[TABLE:.*]]: !llvm.ptr<3>, %[[TID:.*]]: i32)
// CHECK: scf.for %[[I:.*]] = %[[TID]] to %c16_i32 step %c384_i32 : i32 {
// CHECK: %[[FROM:.*]] = llvm.getelementptr %[[GROUPS]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// CHECK: %[[COUNT:.*]] = llvm.load %[[FROM]] : !llvm.ptr<1> -> i32
// CHECK: %[[TO:.*]] = llvm.getelementptr %[[TABLE]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i32
// CHECK: llvm.store %[[COUNT]], %[[TO]] : i32, !llvm.ptr<3>
// CHECK: }
// CHECK: llvm.load %[[TABLE]] : !llvm.ptr<3> -> i32
// CHECK-NOT: !llvm.ptr<1> -> i32
// CHECK: scf.while
// CHECK: scf.if
// CHECK: llvm.getelementptr %[[TABLE]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i32
// CHECK-NOT: !llvm.ptr<1> -> i32
// CHECK: llvm.return
llvm.func @group_table(%groups: !llvm.ptr<1>, %m: i64, %table: !llvm.ptr<3>, %tid: i32) -> i32 {
  %c0 = arith.constant 0 : i32
  ggk.fill_group_table %table from(%groups : !llvm.ptr<1>) thread(%tid)
      attributes {entries = 16, threads = 384, groups_type = i32}
  %n = ggk.foreach_tile masked groups(%groups : !llvm.ptr<1>, i32) size(%m)
      table(%table) iter_args(%c0 : i32) attributes {tile = array<i64: 128, 128, 128>,
      num_groups = 16, m = 384, n = 4096, k = 7168, cluster = 1, k_alignment = 1} {
  ^bb0(%group: i32, %m_block: i32, %n_block: i32, %row_start: i32,
       %group_start: i32, %rows_valid: i32, %k_start: i32, %k_first: i32,
       %k_end: i32, %num_k_blocks: i32, %shares_b: i32, %count: i32):
    %next = arith.addi %count, %num_k_blocks : i32
    ggk.yield %next : i32
  } -> i32
  llvm.return %n : i32
}
