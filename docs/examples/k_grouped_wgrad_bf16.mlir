// Weight gradient of an MoE layer: dW[g] = dY_g^T X_g, where the groups split
// the token dimension, which is the reduction (K) here. dY is [tokens, 4096]
// and X is [tokens, 7168], both token-major, so A is km and B is kn.
func.func @wgrad(%dy: memref<?x4096xbf16>, %x: memref<?x7168xbf16>,
                 %k_offsets: memref<9xi64>, %dw: memref<8x4096x7168xf32>) {
  gg.grouped_matmul k_grouped
      a(%dy : memref<?x4096xbf16>, km) b(%x : memref<?x7168xbf16>, kn)
      groups(%k_offsets : memref<9xi64>) out(%dw : memref<8x4096x7168xf32>)
  return
}
