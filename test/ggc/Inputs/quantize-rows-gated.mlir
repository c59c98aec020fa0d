func.func @act(%h: memref<?x1536xbf16>, %q: memref<?x768xf8E4M3FN>, %s: memref<6x?xf32>) {
  gg.quantize_rows input(%h : memref<?x1536xbf16>) out(%q : memref<?x768xf8E4M3FN>)
      scales(%s : memref<6x?xf32>) {gated, threads = 256 : i64}
  return
}
