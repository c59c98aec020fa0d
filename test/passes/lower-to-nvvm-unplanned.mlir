// RUN: ggc-opt %s -split-input-file -gg-lower-to-nvvm -verify-diagnostics

// The lowering follows the plan of gg-schedule-groups, gg-eliminate-padding
// and gg-plan-overfetch, and refuses to guess one.
func.func @unplanned(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                     %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{needs 'schedule', 'padding' and 'overfetch'; run gg-schedule-groups, gg-eliminate-padding and gg-plan-overfetch before gg-lower-to-nvvm}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// A hand-written overfetch is checked against what the loads can do.
func.func @wrong_overfetch(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                           %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{has 'overfetch' #gg.overfetch<rows = 0, k = 0>, but rows must be block M - 1 = 127 (whole tiles) or one less than a power of two from 8 to 128 (the granule of a partial tile's loads)}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>,
       schedule = #gg.schedule<order = m_fastest>,
       padding = #gg.padding<idle_warpgroups = compute>,
       overfetch = #gg.overfetch<rows = 0, k = 0>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none>}
  return
}

// -----

// tf32 with B N-major: the consumers transpose B's tile together, so none
// may skip a tile.
func.func @skip_with_transpose(%a: memref<?x256xf32>, %b: memref<4x256x512xf32>,
                               %off: memref<5xi32>, %o: memref<?x512xf32>) {
  // expected-error @+1 {{'padding' with idle_warpgroups = skip cannot lower tf32 with 'b' in layout kn: every consumer warpgroup takes part in transposing B's tile}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xf32>)
      b(%b : memref<4x256x512xf32>, kn) groups(%off : memref<5xi32>)
      out(%o : memref<?x512xf32>)
      {tf32, config = #gg.config<block = [128, 128, 32], stages = 3, cluster = [1, 1], sms = 132>,
       schedule = #gg.schedule<order = m_fastest>,
       padding = #gg.padding<idle_warpgroups = skip>,
       overfetch = #gg.overfetch<rows = 127, k = 0>}
  return
}

// -----

// How the warpgroups share the work is gg-plan-kernel's to decide.
func.func @no_kernel_plan(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                          %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{needs 'kernel_plan'; run gg-plan-kernel before gg-lower-to-nvvm}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>,
       schedule = #gg.schedule<order = m_fastest>,
       padding = #gg.padding<idle_warpgroups = compute>,
       overfetch = #gg.overfetch<rows = 7, k = 0>}
  return
}
