func.func @routes(%ids: memref<?xi32>, %w: memref<?xf32>, %counts: memref<?xi32>,
                  %off: memref<129xi32>, %order: memref<?xi64>, %src: memref<?xi32>,
                  %pos: memref<?xi64>, %route: memref<?xf32>) {
  gg.sort_routes ids(%ids : memref<?xi32>) weights(%w : memref<?xf32>)
      chunk_counts(%counts : memref<?xi32>) offsets(%off : memref<129xi32>)
      order(%order : memref<?xi64>) source(%src : memref<?xi32>)
      position(%pos : memref<?xi64>) route(%route : memref<?xf32>)
      {experts = 128 : i64, top_k = 8 : i64, chunk_routes = 1024 : i64, threads = 512 : i64}
  return
}
