// RUN: ggc-opt %s -split-input-file -gg-lower-swiglu-rows -verify-diagnostics

// One kernel per function: a second gg.swiglu_rows in it is an error
// naming the op.
// expected-error @+1 {{holds 2 gg.swiglu_rows ops; its lowering makes one kernel per function}}
func.func @two(%h: memref<?x128xbf16>, %a: memref<?x64xbf16>) {
  gg.swiglu_rows input(%h : memref<?x128xbf16>) out(%a : memref<?x64xbf16>) {threads = 256 : i64}
  gg.swiglu_rows input(%h : memref<?x128xbf16>) out(%a : memref<?x64xbf16>) {threads = 256 : i64}
  return
}

// -----

// sm_80 has no conversion to e4m3: the quantised gradient is refused with
// the target named, not lowered to a kernel the backend cannot select.
module attributes {gg.target = "sm_80"} {
func.func @no_fp8(%h: memref<?x256xbf16>, %d: memref<?x128xbf16>, %r: memref<?xf32>,
                  %dh: memref<?x256xbf16>, %dr: memref<?xf32>,
                  %q: memref<?x256xf8E4M3FN>, %s: memref<2x?xf32>) {
  // expected-error @+1 {{cannot be lowered for sm_80: converting to e4m3 takes sm_89 or sm_90a}}
  gg.swiglu_rows_backward input(%h : memref<?x256xbf16>) grad(%d : memref<?x128xbf16>)
      route(%r : memref<?xf32>) out(%dh : memref<?x256xbf16>) route_grad(%dr : memref<?xf32>)
      quantized(%q : memref<?x256xf8E4M3FN>) quantized_scales(%s : memref<2x?xf32>)
      {threads = 256 : i64}
  return
}
}
