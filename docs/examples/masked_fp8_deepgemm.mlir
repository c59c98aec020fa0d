// DeepGEMM's m_grouped_gemm_fp8_fp8_bf16_nt_masked: decode batches of up to
// 256 tokens per expert, valid counts in masked_m, FP8 with 1x128 scales on
// A (M-major, TMA-aligned) and 128x128 scales on B.
func.func @masked_fp8(%x: memref<4x256x7168xf8E4M3FN>,
                      %x_scale: memref<4x56x256xf32>,
                      %w: memref<4x4096x7168xf8E4M3FN>,
                      %w_scale: memref<4x32x56xf32>,
                      %masked_m: memref<4xi32>,
                      %y: memref<4x256x4096xbf16>) {
  gg.grouped_matmul masked
      a(%x : memref<4x256x7168xf8E4M3FN>) b(%w : memref<4x4096x7168xf8E4M3FN>)
      groups(%masked_m : memref<4xi32>)
      a_scale(%x_scale : memref<4x56x256xf32>, <block 1x128, mn_major>)
      b_scale(%w_scale : memref<4x32x56xf32>, <block 128x128>)
      out(%y : memref<4x256x4096xbf16>) {expected_m = 193 : i64}
  return
}
