func.func @router(%l: memref<?x128xbf16>, %w: memref<?x8xf32>, %i: memref<?x8xi32>) {
  gg.select_experts logits(%l : memref<?x128xbf16>) weights(%w : memref<?x8xf32>)
      ids(%i : memref<?x8xi32>) {renormalize, threads = 256 : i64}
  return
}
