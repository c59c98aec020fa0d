// DeepGEMM's contiguous layout: every group's rows are padded to the M tile
// and each row carries its group index (-1 for padding rows, never written).
func.func @padded_fp8(%x: memref<?x7168xf8E4M3FN>,
                      %x_scale: memref<56x?xf32>,
                      %w: memref<8x4096x7168xf8E4M3FN>,
                      %w_scale: memref<8x32x56xf32>,
                      %m_indices: memref<?xi32>,
                      %y: memref<?x4096xbf16>) {
  gg.grouped_matmul padded_contiguous
      a(%x : memref<?x7168xf8E4M3FN>) b(%w : memref<8x4096x7168xf8E4M3FN>)
      groups(%m_indices : memref<?xi32>)
      a_scale(%x_scale : memref<56x?xf32>, <block 1x128, mn_major>)
      b_scale(%w_scale : memref<8x32x56xf32>, <block 128x128>)
      out(%y : memref<?x4096xbf16>)
  return
}
