// RUN: ggc-opt %s -split-input-file -ggk-place-scales -canonicalize | FileCheck %s --implicit-check-not=ggk.stage_block_scales --implicit-check-not=ggk.read_block_scales --implicit-check-not=ggk.init_full_barrier

// Before: a masked f8 kernel's producer states K block %k's block scales
// (1x128 of A, M-major; 128x128 of B, K-major) beside the stage's A tile,
// and a consumer reads them; the plan puts them in the stages. After: B's
// one block scale of N block %n (index (g * 32 + n) * 56 + k over
// [G, 32, 56]) goes into the stage by cp.async, whose arrival the full
// barrier counts (.noinc); the A tile's expect_tx grows by the window's
// 528 bytes (16384 + 528), and after it one TMA box of A's scales loads
// at (row & ~3, k, g). The consumer reads its rows (row % 4 + its row,
// and 8 below) from the window and B's from the stage.
// CHECK-LABEL: llvm.func @stages
// CHECK-SAME: (%[[SMEM:[^:]*]]: !llvm.ptr<3>, %[[FULL:[^:]*]]: !llvm.ptr<3>, %[[S:[^:]*]]: i32, %[[K:[^:]*]]: i32, %[[ROW:[^:]*]]: i32, %[[N:[^:]*]]: i32, %[[G:[^:]*]]: i32, %[[B:[^:]*]]: !llvm.ptr<1>, %[[AMAP:[^:]*]]: !llvm.ptr
// CHECK: %[[BSTAGE:.*]] = ggk.shared_address %[[SMEM]] "stage_b_scales"[%[[S]] : i32] attributes {offset = 0 : i64, stride = 16 : i64}
// CHECK: %[[NB:.*]] = arith.minsi %{{.*}}, %c31_i32
// CHECK: %[[G64:.*]] = arith.extsi %[[G]]
// CHECK: %[[NB64:.*]] = arith.extsi %[[NB]]
// CHECK: %[[GN:.*]] = arith.muli %[[G64]], %c32_i64
// CHECK: %[[ROWOF:.*]] = arith.addi %[[GN]], %[[NB64]]
// CHECK: %[[BASE:.*]] = arith.muli %[[ROWOF]], %c56_i64
// CHECK: %[[INDEX:.*]] = arith.addi %[[BASE]], %{{.*}}
// CHECK: %[[SRC:.*]] = llvm.getelementptr %[[B]][%[[INDEX]]] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, f32
// CHECK: ggk.copy_async %[[BSTAGE]], %[[SRC]] attributes {bytes = 4 : i64}
// CHECK-NEXT: ggk.copy_async_arrive %[[FULL]]
// CHECK-NEXT: ggk.load_tile_rows {{.*}} other_bytes = 16912 : i64
// CHECK-NEXT: %[[FIRST:.*]] = arith.andi %[[ROW]], %c-4_i32
// CHECK-NEXT: %[[WINDOW:.*]] = ggk.shared_address %[[SMEM]] "stage_a_scales"[%[[S]] : i32] attributes {offset = 0 : i64, stride = 640 : i64}
// CHECK-NEXT: ggk.tma_load %[[WINDOW]], %[[AMAP]][%[[FIRST]], %[[K]], %[[G]]], %[[FULL]]
// CHECK: arith.andi %[[ROW]], %c3_i32
// CHECK: ggk.shared_address %[[SMEM]] "stage_a_scales"[%[[S]] : i32]
// CHECK-COUNT-2: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: ggk.shared_address %[[SMEM]] "stage_b_scales"[%[[S]] : i32]
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
llvm.func @stages(%smem: !llvm.ptr<3>, %full: !llvm.ptr<3>, %s: i32,
    %k: i32, %row: i32, %n: i32, %g: i32, %b: !llvm.ptr<1>,
    %amap: !llvm.ptr, %a: !llvm.ptr, %dst: !llvm.ptr<3>, %valid: i32,
    %lane: i32, %thread_row: i32) -> f32 {
  ggk.stage_block_scales %smem, %full stage(%s) at[%k, %row, %n, %g]
      from(%b) map(%amap) attributes {
      plan = #gg.kernel_plan<promotion = pipelined, scales = stages,
                             registers = [24, 240], staging = swizzled>,
      b_blocks = 1, block_n = 128, n = 4096, k = 7168, b_k_major, a_group,
      window_bytes = 528, window_stride = 640}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row, %g] valid(%valid)
      attributes {tile_rows = 128, row_bytes = 128, other_bytes = 16384,
      granule = 128, box_rows = array<i64: 128>}
  %a0, %a1, %b0 = ggk.read_block_scales %smem block(%k) stage(%s)
      rows(%row, %thread_row) lane(%lane) attributes {
      plan = #gg.kernel_plan<promotion = pipelined, scales = stages,
                             registers = [24, 240], staging = swizzled>,
      b_blocks = 1, a_rows = 0, slot_words = 0, slot_warps = 8,
      window_stride = 640} : f32, f32, f32
  %ab = arith.mulf %a0, %a1 : f32
  %f = arith.mulf %ab, %b0 : f32
  llvm.return %f : f32
}

// -----

// Before: the same masked kernel with A's scales K-major ([G, M, 56]):
// a_k_major. After: the window is a box four K blocks wide by its rows,
// 16 bytes a row (132 rows: 2112 bytes, 2176 a stage), loaded at
// (k & ~3, row & ~3, g); the consumer reads word k % 4 of its rows
// ((row % 4 + its row) * 4 + k % 4, and 8 rows below).
// CHECK-LABEL: llvm.func @stages_k_major
// CHECK-SAME: (%[[SMEM:[^:]*]]: !llvm.ptr<3>, %[[FULL:[^:]*]]: !llvm.ptr<3>, %[[S:[^:]*]]: i32, %[[K:[^:]*]]: i32, %[[ROW:[^:]*]]: i32, %[[N:[^:]*]]: i32, %[[G:[^:]*]]: i32, %[[B:[^:]*]]: !llvm.ptr<1>, %[[AMAP:[^:]*]]: !llvm.ptr
// CHECK: ggk.copy_async_arrive %[[FULL]]
// CHECK-NEXT: ggk.load_tile_rows {{.*}} other_bytes = 18496 : i64
// CHECK-NEXT: %[[FIRST:.*]] = arith.andi %[[ROW]], %c-4_i32
// CHECK-NEXT: %[[KBOX:.*]] = arith.andi %[[K]], %c-4_i32
// CHECK-NEXT: %[[WINDOW:.*]] = ggk.shared_address %[[SMEM]] "stage_a_scales"[%[[S]] : i32] attributes {offset = 0 : i64, stride = 2176 : i64}
// CHECK-NEXT: ggk.tma_load %[[WINDOW]], %[[AMAP]][%[[KBOX]], %[[FIRST]], %[[G]]], %[[FULL]]
// CHECK: %[[OFF:.*]] = arith.andi %[[ROW]], %c3_i32
// CHECK: %[[MINE:.*]] = arith.addi %[[OFF]], %{{.*}}
// CHECK: %[[WORD:.*]] = arith.andi %[[K]], %c3_i32
// CHECK: %[[R4:.*]] = arith.muli %[[MINE]], %c4_i32
// CHECK: arith.addi %[[R4]], %[[WORD]]
// CHECK-COUNT-2: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
llvm.func @stages_k_major(%smem: !llvm.ptr<3>, %full: !llvm.ptr<3>, %s: i32,
    %k: i32, %row: i32, %n: i32, %g: i32, %b: !llvm.ptr<1>,
    %amap: !llvm.ptr, %a: !llvm.ptr, %dst: !llvm.ptr<3>, %valid: i32,
    %lane: i32, %thread_row: i32) -> f32 {
  ggk.stage_block_scales %smem, %full stage(%s) at[%k, %row, %n, %g]
      from(%b) map(%amap) attributes {
      plan = #gg.kernel_plan<promotion = pipelined, scales = stages,
                             registers = [24, 240], staging = swizzled>,
      b_blocks = 1, block_n = 128, n = 4096, k = 7168, b_k_major, a_group,
      window_bytes = 2112, window_stride = 2176, a_k_major}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row, %g] valid(%valid)
      attributes {tile_rows = 128, row_bytes = 128, other_bytes = 16384,
      granule = 128, box_rows = array<i64: 128>}
  %a0, %a1, %b0 = ggk.read_block_scales %smem block(%k) stage(%s)
      rows(%row, %thread_row) lane(%lane) attributes {
      plan = #gg.kernel_plan<promotion = pipelined, scales = stages,
                             registers = [24, 240], staging = swizzled>,
      b_blocks = 1, a_rows = 0, slot_words = 0, slot_warps = 8,
      window_stride = 2176, a_k_major} : f32, f32, f32
  %ab = arith.mulf %a0, %a1 : f32
  %f = arith.mulf %ab, %b0 : f32
  llvm.return %f : f32
}

// -----

// Before: the same statement, but the plan puts the scales in the slots
// (as for K-major scales of A whose rows are not whole 16-byte units). After: the
// producer does nothing (the A tile's bytes stay 16384); the consumer waits
// for all but its newest copy group, meets its warp, and reads its rows
// (lane / 4, + 8) and B's word (after the 16 of A) from slot buffer k % 2
// of its warp (17 words a warp, 8 warps).
// CHECK-LABEL: llvm.func @slots
// CHECK-NOT: ggk.copy_async
// CHECK: ggk.load_tile_rows {{.*}} other_bytes = 16384 : i64
// CHECK-NOT: ggk.tma_
// CHECK: ggk.copy_async_wait attributes {pending = 1 : i64}
// CHECK-NEXT: ggk.warp_sync
// CHECK: %[[BUFFER:.*]] = arith.remui %{{.*}}, %c2_i32
// CHECK: arith.muli %{{.*}}, %c136_i64
// CHECK: ggk.shared_address %{{.*}} "scale_slots"[%{{.*}} : i64] attributes {offset = 0 : i64, stride = 4 : i64}
// CHECK: ggk.shared_address %{{.*}} "scale_slots"[%{{.*}} : i64] attributes {offset = 32 : i64, stride = 4 : i64}
// CHECK: ggk.shared_address %{{.*}} "scale_slots"[%{{.*}} : i64] attributes {offset = 64 : i64, stride = 4 : i64}
llvm.func @slots(%smem: !llvm.ptr<3>, %full: !llvm.ptr<3>, %s: i32,
    %k: i32, %row: i32, %n: i32, %g: i32, %b: !llvm.ptr<1>,
    %a: !llvm.ptr, %dst: !llvm.ptr<3>, %valid: i32,
    %lane: i32, %thread_row: i32) -> f32 {
  ggk.stage_block_scales %smem, %full stage(%s) at[%k, %row, %n, %g]
      from(%b) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = slots,
                             registers = [40, 232], staging = swizzled>,
      b_blocks = 1, block_n = 128, n = 4096, k = 7168, b_k_major, a_group,
      window_bytes = 528, window_stride = 0}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row, %g] valid(%valid)
      attributes {tile_rows = 128, row_bytes = 128, other_bytes = 16384,
      granule = 128, box_rows = array<i64: 128>}
  %a0, %a1, %b0 = ggk.read_block_scales %smem block(%k) stage(%s)
      rows(%row, %thread_row) lane(%lane) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = slots,
                             registers = [40, 232], staging = swizzled>,
      b_blocks = 1, a_rows = 16, slot_words = 17, slot_warps = 8,
      window_stride = 0} : f32, f32, f32
  %ab = arith.mulf %a0, %a1 : f32
  %f = arith.mulf %ab, %b0 : f32
  llvm.return %f : f32
}

// -----

// Before: a consumer's read where the op's scales do not change along K
// (an f8 kernel with per-tensor scales: two-level accumulation, no block
// scales). After: every scale is 1.0, and the product folds away.
// CHECK-LABEL: llvm.func @none
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: llvm.return %[[ONE]] : f32
llvm.func @none(%smem: !llvm.ptr<3>, %k: i32, %s: i32, %row: i32,
    %lane: i32) -> f32 {
  %a0, %a1, %b0 = ggk.read_block_scales %smem block(%k) stage(%s)
      rows(%row, %row) lane(%lane) attributes {
      plan = #gg.kernel_plan<promotion = pipelined, scales = none,
                             registers = [24, 240], staging = swizzled>,
      b_blocks = 0, a_rows = 0, slot_words = 0, slot_warps = 8,
      window_stride = 0} : f32, f32, f32
  %ab = arith.mulf %a0, %a1 : f32
  %f = arith.mulf %ab, %b0 : f32
  llvm.return %f : f32
}

// -----

// Before: a stage whose 256-column tile takes two of B's 128x128 block
// scales, stored N-major ([G, ceil(K/128), ceil(N/128)]: no b_k_major),
// and a contiguous A whose scale map has no group coordinate (no a_group);
// the stage's full barrier is initialised beside them. After: two cp.async
// at index (g * 56 + k) * 32 + n block (+ 1, clamped to 31), one arrival;
// a 2-D box for A's window; the barrier counts two arrivals (the
// producer's and the cp.async's).
// CHECK-LABEL: llvm.func @two_blocks
// CHECK-SAME: (%{{[^:]*}}: !llvm.ptr<3>, %{{[^:]*}}: !llvm.ptr<3>, %{{[^:]*}}: i32, %[[K:[^:]*]]: i32, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %[[G:[^:]*]]: i32,
// CHECK: ggk.mbarrier_init %{{.*}} attributes {count = 2 : i64}
// CHECK: %[[K64:.*]] = arith.extsi %[[K]] : i32 to i64
// CHECK: %[[G64:.*]] = arith.extsi %[[G]] : i32 to i64
// CHECK: %[[GK:.*]] = arith.muli %[[G64]], %c56_i64
// CHECK: %[[GKB:.*]] = arith.addi %[[GK]], %[[K64]]
// CHECK: arith.muli %[[GKB]], %c32_i64
// CHECK: ggk.copy_async {{.*}}bytes = 4
// CHECK: arith.addi %{{.*}}, %c1_i32
// CHECK: ggk.copy_async {{.*}}bytes = 4
// CHECK-NEXT: ggk.copy_async_arrive
// CHECK-NEXT: ggk.load_tile_rows {{.*}} other_bytes = 33296 : i64
// CHECK: ggk.tma_load %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}], %{{.*}}
llvm.func @two_blocks(%smem: !llvm.ptr<3>, %full: !llvm.ptr<3>, %s: i32,
    %k: i32, %row: i32, %n: i32, %g: i32, %b: !llvm.ptr<1>,
    %amap: !llvm.ptr, %a: !llvm.ptr, %dst: !llvm.ptr<3>, %valid: i32) {
  ggk.init_full_barrier %full attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = stages,
                             registers = [40, 232], staging = swizzled>}
  ggk.stage_block_scales %smem, %full stage(%s) at[%k, %row, %n, %g]
      from(%b) map(%amap) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = stages,
                             registers = [40, 232], staging = swizzled>,
      b_blocks = 2, block_n = 256, n = 4096, k = 7168,
      window_bytes = 528, window_stride = 640}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row] valid(%valid)
      attributes {tile_rows = 128, row_bytes = 128, other_bytes = 32768,
      granule = 128, box_rows = array<i64: 128>}
  llvm.return
}

// -----

// Before: a k_grouped weight gradient's stage: B's 1x128 scales are per
// column (b_columns = 128, b_blocks = 0), N-major [ceil(K/128), N], sent
// through their own tensor map (columns_map); the consumer's read gets
// A's two rows and no B block. After: no cp.async but the arrival (the
// barrier's count stays two); the A tile's expect_tx grows by A's window
// (528) and B's 128 columns (512): 16384 + 1040; B's box loads at
// (n * 128, k) into the stage's 512 bytes of stage_b_scales, A's window
// after it; the read's B scale is 1.0 (the promotion reads the columns).
// CHECK-LABEL: llvm.func @columns
// CHECK-SAME: (%[[SMEM:[^:]*]]: !llvm.ptr<3>, %[[FULL:[^:]*]]: !llvm.ptr<3>, %[[S:[^:]*]]: i32, %[[K:[^:]*]]: i32, %{{[^:]*}}: i32, %[[N:[^:]*]]: i32, %{{[^:]*}}: i32, %{{[^:]*}}: !llvm.ptr<1>, %[[AMAP:[^:]*]]: !llvm.ptr, %[[BMAP:[^:]*]]: !llvm.ptr
// CHECK: ggk.mbarrier_init %{{.*}} attributes {count = 2 : i64}
// CHECK: %[[BSTAGE:.*]] = ggk.shared_address %[[SMEM]] "stage_b_scales"[%[[S]] : i32] attributes {offset = 0 : i64, stride = 512 : i64}
// CHECK-NOT: ggk.copy_async {{.*}}bytes
// CHECK: ggk.copy_async_arrive %[[FULL]]
// CHECK-NEXT: ggk.load_tile_rows {{.*}} other_bytes = 17424 : i64
// CHECK-NEXT: %[[COL:.*]] = arith.muli %[[N]], %c128_i32
// CHECK-NEXT: ggk.tma_load %[[BSTAGE]], %[[BMAP]][%[[COL]], %[[K]]], %[[FULL]]
// CHECK: ggk.tma_load %{{.*}}, %[[AMAP]][%{{.*}}, %[[K]]], %[[FULL]]
// CHECK-COUNT-2: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK-NOT: llvm.load
// CHECK: llvm.return
llvm.func @columns(%smem: !llvm.ptr<3>, %full: !llvm.ptr<3>, %s: i32,
    %k: i32, %row: i32, %n: i32, %g: i32, %b: !llvm.ptr<1>,
    %amap: !llvm.ptr, %bmap: !llvm.ptr, %a: !llvm.ptr, %dst: !llvm.ptr<3>,
    %valid: i32, %lane: i32, %thread_row: i32) -> f32 {
  ggk.init_full_barrier %full attributes {
      plan = #gg.kernel_plan<promotion = pipelined, scales = stages,
                             registers = [24, 240], staging = swizzled>}
  ggk.stage_block_scales %smem, %full stage(%s) at[%k, %row, %n, %g]
      from(%b) map(%amap) columns_map(%bmap) attributes {
      plan = #gg.kernel_plan<promotion = pipelined, scales = stages,
                             registers = [24, 240], staging = swizzled>,
      b_blocks = 0, b_columns = 128, block_n = 128, n = 2048, k = 4096,
      window_bytes = 528, window_stride = 640}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row] valid(%valid)
      attributes {tile_rows = 128, row_bytes = 128, other_bytes = 16384,
      granule = 128, box_rows = array<i64: 128>}
  %a0, %a1, %b0 = ggk.read_block_scales %smem block(%k) stage(%s)
      rows(%row, %thread_row) lane(%lane) attributes {
      plan = #gg.kernel_plan<promotion = pipelined, scales = stages,
                             registers = [24, 240], staging = swizzled>,
      b_blocks = 0, a_rows = 0, slot_words = 0, slot_warps = 8,
      window_stride = 640} : f32, f32, f32
  %ab = arith.mulf %a0, %a1 : f32
  %f = arith.mulf %ab, %b0 : f32
  llvm.return %f : f32
}

// -----

// Before: column_halves' block scales of B (K-major, b_k_major), a tile of
// 128 columns: the gate's 64 rows of N block n and the up's, n / 2 = 768
// rows further. After: two cp.async, at scale rows (n * 64) / 128 and
// (n * 64 + 768) / 128, each clamped to the last of 12, then one arrival.
// CHECK-LABEL: llvm.func @halves
// CHECK-SAME: (%{{[^:]*}}: !llvm.ptr<3>, %{{[^:]*}}: !llvm.ptr<3>, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %[[N:[^:]*]]: i32,
// CHECK: %[[ROW0:.*]] = arith.muli %[[N]], %c64_i32
// CHECK: %[[BLOCK0:.*]] = arith.divui %[[ROW0]], %c128_i32
// CHECK: arith.minsi %[[BLOCK0]], %c11_i32
// CHECK: ggk.copy_async {{.*}}bytes = 4
// CHECK: %[[ROW1:.*]] = arith.addi %{{.*}}, %c768_i32
// CHECK: %[[BLOCK1:.*]] = arith.divui %[[ROW1]], %c128_i32
// CHECK: arith.minsi %[[BLOCK1]], %c11_i32
// CHECK: ggk.copy_async {{.*}}bytes = 4
// CHECK-NEXT: ggk.copy_async_arrive
llvm.func @halves(%smem: !llvm.ptr<3>, %full: !llvm.ptr<3>, %s: i32,
    %k: i32, %row: i32, %n: i32, %g: i32, %b: !llvm.ptr<1>,
    %amap: !llvm.ptr, %a: !llvm.ptr, %dst: !llvm.ptr<3>, %valid: i32) {
  ggk.init_full_barrier %full attributes {
      plan = #gg.kernel_plan<promotion = pipelined, scales = stages,
                             registers = [24, 240], staging = swizzled>}
  ggk.stage_block_scales %smem, %full stage(%s) at[%k, %row, %n, %g]
      from(%b) map(%amap) attributes {
      plan = #gg.kernel_plan<promotion = pipelined, scales = stages,
                             registers = [24, 240], staging = swizzled>,
      b_blocks = 2, block_n = 128, n = 1536, k = 2048, b_k_major,
      column_halves, window_bytes = 528, window_stride = 640}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row] valid(%valid)
      attributes {tile_rows = 128, row_bytes = 128, other_bytes = 32768,
      granule = 128, box_rows = array<i64: 128>}
  llvm.return
}

// -----

// Before: a full barrier where the plan puts the scales in the slots.
// After: one arrival, the producer's.
// CHECK-LABEL: llvm.func @slot_barrier
// CHECK: ggk.mbarrier_init %{{.*}} attributes {count = 1 : i64}
llvm.func @slot_barrier(%full: !llvm.ptr<3>) {
  ggk.init_full_barrier %full attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = slots,
                             registers = [40, 232], staging = swizzled>}
  llvm.return
}

// -----

// Without TMA (gg.target sm_80) the stage's loads arrive per thread: each of
// the producer warpgroup's 128 threads arrives once after its copies of A's
// tile and once after B's, so the barrier expects 2 x 128 arrivals.
// CHECK-LABEL: llvm.func @per_thread_barrier
// CHECK: ggk.mbarrier_init %{{.*}} attributes {count = 256 : i64}
module attributes {gg.target = "sm_80"} {
  llvm.func @per_thread_barrier(%full: !llvm.ptr<3>) {
    ggk.init_full_barrier %full attributes {
        plan = #gg.kernel_plan<promotion = serial, scales = none,
                               registers = [40, 240], staging = none>}
    llvm.return
  }
}

// -----

// Gathered rows of A on sm_90a (the plan's producer = all_threads): the
// leader's arming for B's bytes and each of the producer warpgroup's 128
// threads' arrival once its cp.async copies of A land: 129.
// CHECK-LABEL: llvm.func @gathered_rows_barrier
// CHECK: ggk.mbarrier_init %{{.*}} attributes {count = 129 : i64}
llvm.func @gathered_rows_barrier(%full: !llvm.ptr<3>) {
  ggk.init_full_barrier %full attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = none,
                             registers = [40, 232], staging = swizzled,
                             producer = all_threads>}
  llvm.return
}

// -----

// A stage passed on empty (ring_stages = constant, a tile's last turn past
// its K blocks): the producer makes the arrivals a loaded stage's full
// barrier counts, with no bytes: its arming and, where the stages carry
// the scales, the cp.async's (2); with the scales in the slots, its
// arming alone (1).
// CHECK-LABEL: llvm.func @passed_stages
// CHECK-SAME: (%[[F:[^:]*]]: !llvm.ptr<3>)
// CHECK-NEXT: ggk.mbarrier_arrive %[[F]]
// CHECK-NEXT: ggk.mbarrier_arrive %[[F]]
// CHECK-NEXT: ggk.mbarrier_arrive %[[F]]
// CHECK-NEXT: llvm.return
llvm.func @passed_stages(%full: !llvm.ptr<3>) {
  ggk.pass_stage %full attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = stages,
                             registers = [40, 232], staging = swizzled,
                             ring_stages = constant>}
  ggk.pass_stage %full attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = slots,
                             registers = [40, 232], staging = swizzled,
                             ring_stages = constant>}
  llvm.return
}
