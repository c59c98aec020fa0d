// RUN: ggc-opt %s -gg-lower-combine-routes -verify-diagnostics

// One kernel per function: a second gg.combine_routes in it is an error
// naming the op.
// expected-error @+1 {{holds 2 gg.combine_routes ops; its lowering makes one kernel per function}}
func.func @two(%y: memref<?x64xbf16>, %p: memref<?xi64>, %o: memref<?x64xbf16>) {
  gg.combine_routes input(%y : memref<?x64xbf16>) position(%p : memref<?xi64>)
      out(%o : memref<?x64xbf16>) {top_k = 2 : i64, threads = 256 : i64}
  gg.combine_routes input(%y : memref<?x64xbf16>) position(%p : memref<?xi64>)
      out(%o : memref<?x64xbf16>) {top_k = 2 : i64, threads = 256 : i64}
  return
}
