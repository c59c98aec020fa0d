// Decode with a masked batch per expert in bf16: 16 experts, up to 128 tokens
// each, valid counts in masked_m; the output of rows past masked_m[g] is
// left as it was.
func.func @masked_decode(%x: memref<16x128x7168xbf16>,
                         %w: memref<16x4096x7168xbf16>,
                         %masked_m: memref<16xi32>,
                         %y: memref<16x128x4096xbf16>) {
  gg.grouped_matmul masked
      a(%x : memref<16x128x7168xbf16>) b(%w : memref<16x4096x7168xbf16>)
      groups(%masked_m : memref<16xi32>) out(%y : memref<16x128x4096xbf16>)
      {expected_m = 24 : i64}
  return
}
