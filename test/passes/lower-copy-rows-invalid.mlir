// RUN: ggc-opt %s -gg-lower-copy-rows -verify-diagnostics

// One kernel per function: a second gg.copy_rows in it is an error naming
// the op.
// expected-error @+1 {{holds 2 gg.copy_rows ops; its lowering makes one kernel per function}}
func.func @two(%x: memref<?x64xbf16>, %y: memref<?x64xbf16>) {
  gg.copy_rows input(%x : memref<?x64xbf16>) out(%y : memref<?x64xbf16>)
      {unit_bytes = 16 : i64, threads = 256 : i64}
  gg.copy_rows input(%x : memref<?x64xbf16>) out(%y : memref<?x64xbf16>)
      {unit_bytes = 16 : i64, threads = 256 : i64}
  return
}
