// RUN: ggc-opt %s -gg-lower-quantize-rows -verify-diagnostics

// sm_80 has no conversion to e4m3: an error naming the target, not a
// kernel the backend cannot select.
module attributes {gg.target = "sm_80"} {
func.func @no_fp8(%x: memref<?x256xbf16>, %q: memref<?x256xf8E4M3FN>, %s: memref<2x?xf32>) {
  // expected-error @+1 {{cannot be lowered for sm_80: converting to e4m3 takes sm_89 or sm_90a}}
  gg.quantize_rows input(%x : memref<?x256xbf16>) out(%q : memref<?x256xf8E4M3FN>)
      scales(%s : memref<2x?xf32>) {threads = 256 : i64}
  return
}
}
