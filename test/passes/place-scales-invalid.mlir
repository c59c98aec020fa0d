// RUN: ggc-opt %s -split-input-file -ggk-place-scales -verify-diagnostics

// A's window is counted in the bytes the stage's barrier is armed with, so
// the stages' placement needs the ggk.load_tile_rows that arms it, after
// the op in its block.
llvm.func @no_arming_load(%smem: !llvm.ptr<3>, %full: !llvm.ptr<3>,
    %other: !llvm.ptr<3>, %s: i32, %k: i32, %row: i32, %n: i32, %g: i32,
    %b: !llvm.ptr<1>, %amap: !llvm.ptr, %a: !llvm.ptr, %dst: !llvm.ptr<3>,
    %valid: i32) {
  // expected-error @+1 {{has no ggk.load_tile_rows after it in its block arming the same barrier: A's scale window is counted in that expect_tx}}
  ggk.stage_block_scales %smem, %full stage(%s) at[%k, %row, %n, %g]
      from(%b) map(%amap) attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = stages,
                             registers = [40, 232], staging = none>,
      b_blocks = 1, block_n = 128, n = 4096, k = 7168, b_k_major,
      window_bytes = 528, window_stride = 640}
  ggk.load_tile_rows %dst, %other from(%a) at[%k, %row] valid(%valid)
      attributes {tile_rows = 128, row_bytes = 128, other_bytes = 16384,
      granule = 128, box_rows = array<i64: 128>}
  llvm.return
}

// -----

// A stage passed on empty takes the producer's one thread under TMA: with
// gathered rows every producer thread arrives on a loaded stage, and
// before sm_90a each thread does, twice (cp.async).
llvm.func @passed_stage_gathered(%full: !llvm.ptr<3>) {
  // expected-error @+1 {{'ggk.pass_stage' op takes a TMA producer of one thread (not gathered rows, not cp.async)}}
  ggk.pass_stage %full attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = none,
                             registers = [40, 232], staging = swizzled,
                             producer = all_threads, ring_stages = constant>}
  llvm.return
}

// -----

module attributes {gg.target = "sm_80"} {
  llvm.func @passed_stage_cp_async(%full: !llvm.ptr<3>) {
    // expected-error @+1 {{'ggk.pass_stage' op takes a TMA producer of one thread (not gathered rows, not cp.async)}}
    ggk.pass_stage %full attributes {
        plan = #gg.kernel_plan<promotion = serial, scales = none,
                               registers = [40, 240], staging = none,
                               ring_stages = constant>}
    llvm.return
  }
}
