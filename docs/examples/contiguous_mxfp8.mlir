// FlashInfer's moe_gemm_mxfp8_nt_groupwise: token-packed MXFP8 with UE8M0
// scales per row and per 32-wide K block, four per i32, and 4-row per-group
// padding of A's scale rows: (1000 + 3*8)/4*4 = 1024 rows, ceil(2048/128) = 16.
func.func @mxfp8(%a: memref<1000x2048xf8E4M3FN>, %a_scale: memref<1024x16xi32>,
                 %b: memref<8x4096x2048xf8E4M3FN>,
                 %b_scale: memref<8x4096x16xi32>, %m_indptr: memref<9xi32>,
                 %out: memref<1000x4096xbf16>) {
  gg.grouped_matmul contiguous
      a(%a : memref<1000x2048xf8E4M3FN>) b(%b : memref<8x4096x2048xf8E4M3FN>)
      groups(%m_indptr : memref<9xi32>)
      a_scale(%a_scale : memref<1024x16xi32>, <mx 1x32>)
      b_scale(%b_scale : memref<8x4096x16xi32>, <mx 1x32>)
      out(%out : memref<1000x4096xbf16>)
  return
}
