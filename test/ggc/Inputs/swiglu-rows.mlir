func.func @act(%h: memref<?x1536xbf16>, %a: memref<?x768xbf16>) {
  gg.swiglu_rows input(%h : memref<?x1536xbf16>) out(%a : memref<?x768xbf16>)
      {threads = 256 : i64}
  return
}
