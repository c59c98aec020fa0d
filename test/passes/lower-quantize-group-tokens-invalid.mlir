// RUN: ggc-opt %s -gg-lower-quantize-group-tokens -verify-diagnostics

// A target without e4m3 conversion cannot lower it.
module attributes {gg.target = "sm_80"} {
  func.func @old(%x: memref<?x64xbf16>, %o: memref<?xi32>, %q: memref<64x?xf8E4M3FN>,
                 %s: memref<?x64xf32>, %p: memref<?xi32>) {
    // expected-error @+1 {{cannot be lowered for sm_80: converting to e4m3 takes sm_89 or sm_90a}}
    gg.quantize_group_tokens input(%x : memref<?x64xbf16>) groups(%o : memref<?xi32>)
        out(%q : memref<64x?xf8E4M3FN>) scales(%s : memref<?x64xf32>)
        padded_groups(%p : memref<?xi32>)
    return
  }
}
