// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// ggk.stage_block_scales, ggk.read_block_scales and ggk.init_full_barrier
// print as they parse; the producer's op takes A's scales' tensor map only
// where the plan puts the scales in the stages.
// CHECK-LABEL: llvm.func @scales
// CHECK: ggk.stage_block_scales %{{.*}}, %{{.*}} stage(%{{.*}}) at[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] from(%{{.*}}) map(%{{.*}}) attributes {a_group, b_blocks = 1 : i64, b_k_major, block_n = 128 : i64, k = 7168 : i64, n = 4096 : i64, plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = swizzled>, window_bytes = 528 : i64, window_stride = 640 : i64}
// CHECK: ggk.stage_block_scales %{{.*}}, %{{.*}} stage(%{{.*}}) at[%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}] from(%{{.*}}) attributes {b_blocks = 2
// CHECK: ggk.read_block_scales %{{.*}} block(%{{.*}}) stage(%{{.*}}) rows(%{{.*}}, %{{.*}}) lane(%{{.*}}) attributes {a_rows = 0 : i64, b_blocks = 1 : i64, {{.*}}} : f32, f32, f32
// CHECK: ggk.init_full_barrier %{{.*}} attributes {plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = swizzled>}
llvm.func @scales(%smem: !llvm.ptr<3>, %full: !llvm.ptr<3>, %s: i32, %k: i32,
    %row: i32, %n: i32, %g: i32, %b: !llvm.ptr<1>, %map: !llvm.ptr,
    %lane: i32) {
  ggk.stage_block_scales %smem, %full stage(%s) at[%k, %row, %n, %g]
      from(%b) map(%map) attributes {
      plan = #gg.kernel_plan<promotion = pipelined, scales = stages,
                             registers = [24, 240], staging = swizzled>,
      b_blocks = 1, block_n = 128, n = 4096, k = 7168, b_k_major, a_group,
      window_bytes = 528, window_stride = 640}
  ggk.stage_block_scales %smem, %full stage(%s) at[%k, %row, %n, %g]
      from(%b) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = slots,
                             registers = [40, 232], staging = none>,
      b_blocks = 2, block_n = 256, n = 4096, k = 7168,
      window_bytes = 528, window_stride = 0}
  %a0, %a1, %b0 = ggk.read_block_scales %smem block(%k) stage(%s)
      rows(%row, %row) lane(%lane) attributes {
      plan = #gg.kernel_plan<promotion = pipelined, scales = stages,
                             registers = [24, 240], staging = swizzled>,
      b_blocks = 1, a_rows = 0, slot_words = 0, slot_warps = 8,
      window_stride = 640} : f32, f32, f32
  ggk.init_full_barrier %full attributes {
      plan = #gg.kernel_plan<promotion = pipelined, scales = stages,
                             registers = [24, 240], staging = swizzled>}
  llvm.return
}

// -----

llvm.func @stages_without_map(%smem: !llvm.ptr<3>, %full: !llvm.ptr<3>,
    %s: i32, %k: i32, %row: i32, %n: i32, %g: i32, %b: !llvm.ptr<1>) {
  // expected-error @+1 {{takes 'map' (A's scales' tensor map) exactly when its plan places the scales in the stages}}
  ggk.stage_block_scales %smem, %full stage(%s) at[%k, %row, %n, %g]
      from(%b) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = stages,
                             registers = [40, 232], staging = none>,
      b_blocks = 1, block_n = 128, n = 4096, k = 7168,
      window_bytes = 528, window_stride = 640}
  llvm.return
}

// -----

llvm.func @slots_with_map(%smem: !llvm.ptr<3>, %full: !llvm.ptr<3>,
    %s: i32, %k: i32, %row: i32, %n: i32, %g: i32, %b: !llvm.ptr<1>,
    %map: !llvm.ptr) {
  // expected-error @+1 {{takes 'map' (A's scales' tensor map) exactly when its plan places the scales in the stages}}
  ggk.stage_block_scales %smem, %full stage(%s) at[%k, %row, %n, %g]
      from(%b) map(%map) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = slots,
                             registers = [40, 232], staging = none>,
      b_blocks = 1, block_n = 128, n = 4096, k = 7168,
      window_bytes = 528, window_stride = 640}
  llvm.return
}

// -----

llvm.func @too_many_b_blocks(%smem: !llvm.ptr<3>, %full: !llvm.ptr<3>,
    %s: i32, %k: i32, %row: i32, %n: i32, %g: i32, %b: !llvm.ptr<1>) {
  // expected-error @+1 {{b_blocks must be 1 to 4 (a stage keeps 16 bytes of B's scales), got 5}}
  ggk.stage_block_scales %smem, %full stage(%s) at[%k, %row, %n, %g]
      from(%b) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = slots,
                             registers = [40, 232], staging = none>,
      b_blocks = 5, block_n = 128, n = 4096, k = 7168,
      window_bytes = 528, window_stride = 0}
  llvm.return
}

// -----

llvm.func @halves_one_b_block(%smem: !llvm.ptr<3>, %full: !llvm.ptr<3>,
    %s: i32, %k: i32, %row: i32, %n: i32, %g: i32, %b: !llvm.ptr<1>) {
  // expected-error @+1 {{with column_halves copies B's two block scales (one per half), but b_blocks is 1}}
  ggk.stage_block_scales %smem, %full stage(%s) at[%k, %row, %n, %g]
      from(%b) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = slots,
                             registers = [40, 232], staging = none>,
      b_blocks = 1, block_n = 128, n = 4096, k = 7168, column_halves,
      window_bytes = 528, window_stride = 0}
  llvm.return
}

// -----

llvm.func @no_k(%smem: !llvm.ptr<3>, %full: !llvm.ptr<3>,
    %s: i32, %k: i32, %row: i32, %n: i32, %g: i32, %b: !llvm.ptr<1>) {
  // expected-error @+1 {{block_n, n and k must be positive, got 128, 4096 and 0}}
  ggk.stage_block_scales %smem, %full stage(%s) at[%k, %row, %n, %g]
      from(%b) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = slots,
                             registers = [40, 232], staging = none>,
      b_blocks = 1, block_n = 128, n = 4096, k = 0,
      window_bytes = 528, window_stride = 0}
  llvm.return
}

// -----

llvm.func @unaligned_window(%smem: !llvm.ptr<3>, %full: !llvm.ptr<3>,
    %s: i32, %k: i32, %row: i32, %n: i32, %g: i32, %b: !llvm.ptr<1>,
    %map: !llvm.ptr) {
  // expected-error @+1 {{window_bytes must be a positive multiple of 16 (one TMA box of f32), got 530}}
  ggk.stage_block_scales %smem, %full stage(%s) at[%k, %row, %n, %g]
      from(%b) map(%map) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = stages,
                             registers = [40, 232], staging = none>,
      b_blocks = 1, block_n = 128, n = 4096, k = 7168,
      window_bytes = 530, window_stride = 640}
  llvm.return
}

// -----

llvm.func @short_stride(%smem: !llvm.ptr<3>, %full: !llvm.ptr<3>,
    %s: i32, %k: i32, %row: i32, %n: i32, %g: i32, %b: !llvm.ptr<1>,
    %map: !llvm.ptr) {
  // expected-error @+1 {{window_stride must be a multiple of 128 of at least window_bytes (528), got 512}}
  ggk.stage_block_scales %smem, %full stage(%s) at[%k, %row, %n, %g]
      from(%b) map(%map) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = stages,
                             registers = [40, 232], staging = none>,
      b_blocks = 1, block_n = 128, n = 4096, k = 7168,
      window_bytes = 528, window_stride = 512}
  llvm.return
}

// -----

llvm.func @result_count(%smem: !llvm.ptr<3>, %k: i32, %s: i32, %row: i32,
    %lane: i32) {
  // expected-error @+1 {{yields A's two scales and then B's 2: 4 results, got 3}}
  %a0, %a1, %b0 = ggk.read_block_scales %smem block(%k) stage(%s)
      rows(%row, %row) lane(%lane) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = slots,
                             registers = [40, 232], staging = none>,
      b_blocks = 2, a_rows = 16, slot_words = 18, slot_warps = 8,
      window_stride = 0} : f32, f32, f32
  llvm.return
}

// -----

llvm.func @columns_and_blocks(%smem: !llvm.ptr<3>, %full: !llvm.ptr<3>,
    %s: i32, %k: i32, %row: i32, %n: i32, %g: i32, %b: !llvm.ptr<1>,
    %map: !llvm.ptr, %bmap: !llvm.ptr) {
  // expected-error @+1 {{takes B's scales per column (b_columns) or per 128x128 block (b_blocks), not both}}
  ggk.stage_block_scales %smem, %full stage(%s) at[%k, %row, %n, %g]
      from(%b) map(%map) columns_map(%bmap) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = stages,
                             registers = [40, 232], staging = none>,
      b_blocks = 1, b_columns = 128, block_n = 128, n = 4096, k = 7168,
      window_bytes = 528, window_stride = 640}
  llvm.return
}

// -----

llvm.func @columns_not_a_box(%smem: !llvm.ptr<3>, %full: !llvm.ptr<3>,
    %s: i32, %k: i32, %row: i32, %n: i32, %g: i32, %b: !llvm.ptr<1>,
    %map: !llvm.ptr, %bmap: !llvm.ptr) {
  // expected-error @+1 {{b_columns must be a multiple of 4 up to 256 (one TMA box of f32 a stage), got 130}}
  ggk.stage_block_scales %smem, %full stage(%s) at[%k, %row, %n, %g]
      from(%b) map(%map) columns_map(%bmap) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = stages,
                             registers = [40, 232], staging = none>,
      b_blocks = 0, b_columns = 130, block_n = 130, n = 4096, k = 7168,
      window_bytes = 528, window_stride = 640}
  llvm.return
}

// -----

llvm.func @columns_not_the_tile(%smem: !llvm.ptr<3>, %full: !llvm.ptr<3>,
    %s: i32, %k: i32, %row: i32, %n: i32, %g: i32, %b: !llvm.ptr<1>,
    %map: !llvm.ptr, %bmap: !llvm.ptr) {
  // expected-error @+1 {{b_columns must be the tile's block_n (128: the consumers read the stage's columns by the tile's), got 64}}
  ggk.stage_block_scales %smem, %full stage(%s) at[%k, %row, %n, %g]
      from(%b) map(%map) columns_map(%bmap) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = stages,
                             registers = [40, 232], staging = none>,
      b_blocks = 0, b_columns = 64, block_n = 128, n = 4096, k = 7168,
      window_bytes = 528, window_stride = 640}
  llvm.return
}

// -----

llvm.func @columns_with_halves(%smem: !llvm.ptr<3>, %full: !llvm.ptr<3>,
    %s: i32, %k: i32, %row: i32, %n: i32, %g: i32, %b: !llvm.ptr<1>,
    %map: !llvm.ptr, %bmap: !llvm.ptr) {
  // expected-error @+1 {{with column_halves takes B's 128x128 block scales, not b_columns}}
  ggk.stage_block_scales %smem, %full stage(%s) at[%k, %row, %n, %g]
      from(%b) map(%map) columns_map(%bmap) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = stages,
                             registers = [40, 232], staging = none>,
      b_blocks = 0, b_columns = 128, block_n = 128, n = 4096, k = 7168,
      column_halves, window_bytes = 528, window_stride = 640}
  llvm.return
}

// -----

llvm.func @columns_without_map(%smem: !llvm.ptr<3>, %full: !llvm.ptr<3>,
    %s: i32, %k: i32, %row: i32, %n: i32, %g: i32, %b: !llvm.ptr<1>,
    %map: !llvm.ptr) {
  // expected-error @+1 {{takes 'columns_map' (B's scales' tensor map) exactly when b_columns is set and its plan places the scales in the stages}}
  ggk.stage_block_scales %smem, %full stage(%s) at[%k, %row, %n, %g]
      from(%b) map(%map) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = stages,
                             registers = [40, 232], staging = none>,
      b_blocks = 0, b_columns = 128, block_n = 128, n = 4096, k = 7168,
      window_bytes = 528, window_stride = 640}
  llvm.return
}

// -----

llvm.func @read_stages_without_window(%smem: !llvm.ptr<3>, %k: i32, %s: i32,
    %row: i32, %lane: i32) {
  // expected-error @+1 {{window_stride must be a positive multiple of 128 where the stages carry the scales, got 0}}
  %a0, %a1, %b0 = ggk.read_block_scales %smem block(%k) stage(%s)
      rows(%row, %row) lane(%lane) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = stages,
                             registers = [40, 232], staging = none>,
      b_blocks = 1, a_rows = 0, slot_words = 0, slot_warps = 8,
      window_stride = 0} : f32, f32, f32
  llvm.return
}

// -----

llvm.func @odd_a_rows(%smem: !llvm.ptr<3>, %k: i32, %s: i32, %row: i32,
    %lane: i32) {
  // expected-error @+1 {{a_rows must be 0 or 16 (a warp's rows), got 8}}
  %a0, %a1, %b0 = ggk.read_block_scales %smem block(%k) stage(%s)
      rows(%row, %row) lane(%lane) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = slots,
                             registers = [40, 232], staging = none>,
      b_blocks = 1, a_rows = 8, slot_words = 9, slot_warps = 8,
      window_stride = 0} : f32, f32, f32
  llvm.return
}

// -----

llvm.func @small_slots(%smem: !llvm.ptr<3>, %k: i32, %s: i32, %row: i32,
    %lane: i32) {
  // expected-error @+1 {{slot_words (16) must hold a_rows + b_blocks = 17 words}}
  %a0, %a1, %b0 = ggk.read_block_scales %smem block(%k) stage(%s)
      rows(%row, %row) lane(%lane) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = slots,
                             registers = [40, 232], staging = none>,
      b_blocks = 1, a_rows = 16, slot_words = 16, slot_warps = 8,
      window_stride = 0} : f32, f32, f32
  llvm.return
}

// -----

llvm.func @no_warps(%smem: !llvm.ptr<3>, %k: i32, %s: i32, %row: i32,
    %lane: i32) {
  // expected-error @+1 {{slot_warps must be at least 1, got 0}}
  %a0, %a1, %b0 = ggk.read_block_scales %smem block(%k) stage(%s)
      rows(%row, %row) lane(%lane) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = slots,
                             registers = [40, 232], staging = none>,
      b_blocks = 1, a_rows = 16, slot_words = 17, slot_warps = 0,
      window_stride = 0} : f32, f32, f32
  llvm.return
}

// -----

llvm.func @too_many_read_b_blocks(%smem: !llvm.ptr<3>, %k: i32, %s: i32,
    %row: i32, %lane: i32) {
  // expected-error @+1 {{b_blocks must be 0 to 4, got 5}}
  %a0, %a1, %b0 = ggk.read_block_scales %smem block(%k) stage(%s)
      rows(%row, %row) lane(%lane) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = none,
                             registers = [40, 232], staging = none>,
      b_blocks = 5, a_rows = 0, slot_words = 0, slot_warps = 8,
      window_stride = 0} : f32, f32, f32
  llvm.return
}
