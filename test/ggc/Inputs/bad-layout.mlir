func.func @f(%a: memref<4x8xbf16>) {
  gg.grouped_matmul nonsense a(%a : memref<4x8xbf16>)
  return
}
