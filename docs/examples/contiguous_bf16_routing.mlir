// MoE up-projection in prefill: token-packed rows of A, group boundaries in a
// CSR offsets array (m_indptr), no padding. Each output row is scaled by the
// token's routing weight in the epilogue.
func.func @moe_up_routing(%x: memref<?x7168xbf16>,
                          %w: memref<8x4096x7168xbf16>,
                          %m_indptr: memref<9xi32>,
                          %routing: memref<?xf32>,
                          %y: memref<?x4096xbf16>) {
  gg.grouped_matmul contiguous
      a(%x : memref<?x7168xbf16>) b(%w : memref<8x4096x7168xbf16>)
      groups(%m_indptr : memref<9xi32>) out(%y : memref<?x4096xbf16>)
      rows(%routing : memref<?xf32>)
      epilogue {
      ^bb0(%acc: f32, %weight: f32, %group: index):
        %scaled = arith.mulf %acc, %weight : f32
        gg.yield %scaled : f32
      }
  return
}
