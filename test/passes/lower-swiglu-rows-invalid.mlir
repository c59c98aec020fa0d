// RUN: ggc-opt %s -gg-lower-swiglu-rows -verify-diagnostics

// One kernel per function: a second gg.swiglu_rows in it is an error
// naming the op.
// expected-error @+1 {{holds 2 gg.swiglu_rows ops; its lowering makes one kernel per function}}
func.func @two(%h: memref<?x128xbf16>, %a: memref<?x64xbf16>) {
  gg.swiglu_rows input(%h : memref<?x128xbf16>) out(%a : memref<?x64xbf16>) {threads = 256 : i64}
  gg.swiglu_rows input(%h : memref<?x128xbf16>) out(%a : memref<?x64xbf16>) {threads = 256 : i64}
  return
}
