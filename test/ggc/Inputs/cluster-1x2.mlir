// Clusters along N: verified, not lowered yet (pairs share B along M only).
func.func @pairs_along_n(%a: memref<?x256xbf16>, %b: memref<4x512x256xbf16>,
                         %off: memref<5xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x512x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x512xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 2], sms = 132>}
  return
}
