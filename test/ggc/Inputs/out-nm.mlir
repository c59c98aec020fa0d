// A transposed per-group output: verified, not lowered yet.
func.func @wgrad_nm(%dy: memref<?x64xbf16>, %x: memref<?x64xbf16>,
                    %off: memref<3xi32>, %dw: memref<2x64x64xf32>) {
  gg.grouped_matmul k_grouped a(%dy : memref<?x64xbf16>, km)
      b(%x : memref<?x64xbf16>, kn) groups(%off : memref<3xi32>)
      out(%dw : memref<2x64x64xf32>, nm)
  return
}
