// RUN: ggc-opt %s | FileCheck %s
// RUN: ggc-opt %s | ggc-opt | FileCheck %s
// RUN: ggc-opt %s --mlir-print-op-generic | ggc-opt | FileCheck %s

// Round trip of gg.quantize_rows: plain, gathered through a row list,
// gated (SwiGLU over the column halves), and scattered through a position
// list (copies rows each).

// CHECK-LABEL: func.func @plain
// CHECK: gg.quantize_rows input(%{{.*}} : memref<?x2048xbf16>) out(%{{.*}} : memref<?x2048xf8E4M3FN>) scales(%{{.*}} : memref<16x?xf32>) {threads = 256 : i64}
func.func @plain(%x: memref<?x2048xbf16>, %q: memref<?x2048xf8E4M3FN>, %s: memref<16x?xf32>) {
  gg.quantize_rows input(%x : memref<?x2048xbf16>) out(%q : memref<?x2048xf8E4M3FN>)
      scales(%s : memref<16x?xf32>) {threads = 256 : i64}
  return
}

// CHECK-LABEL: func.func @gathered
// CHECK: gg.quantize_rows input(%{{.*}} : memref<?x2048xbf16>) rows(%{{.*}} : memref<?xi32>) out(%{{.*}} : memref<?x2048xf8E4M3FN>)
func.func @gathered(%x: memref<?x2048xbf16>, %r: memref<?xi32>, %q: memref<?x2048xf8E4M3FN>,
                    %s: memref<16x?xf32>) {
  gg.quantize_rows input(%x : memref<?x2048xbf16>) rows(%r : memref<?xi32>)
      out(%q : memref<?x2048xf8E4M3FN>) scales(%s : memref<16x?xf32>) {threads = 256 : i64}
  return
}

// CHECK-LABEL: func.func @gated
// CHECK: gg.quantize_rows input(%{{.*}} : memref<?x1536xbf16>) out(%{{.*}} : memref<?x768xf8E4M3FN>) scales(%{{.*}} : memref<6x?xf32>) {gated, threads = 128 : i64}
func.func @gated(%h: memref<?x1536xbf16>, %q: memref<?x768xf8E4M3FN>, %s: memref<6x?xf32>) {
  gg.quantize_rows input(%h : memref<?x1536xbf16>) out(%q : memref<?x768xf8E4M3FN>)
      scales(%s : memref<6x?xf32>) {gated, threads = 128 : i64}
  return
}

// CHECK-LABEL: func.func @scattered
// CHECK: gg.quantize_rows input(%{{.*}} : memref<?x2048xbf16>) scatter(%{{.*}} : memref<?xi64>) out(%{{.*}} : memref<?x2048xf8E4M3FN>) scales(%{{.*}} : memref<16x?xf32>) {copies = 8 : i64, threads = 256 : i64}
func.func @scattered(%x: memref<?x2048xbf16>, %p: memref<?xi64>, %q: memref<?x2048xf8E4M3FN>,
                     %s: memref<16x?xf32>) {
  gg.quantize_rows input(%x : memref<?x2048xbf16>) scatter(%p : memref<?xi64>)
      out(%q : memref<?x2048xf8E4M3FN>) scales(%s : memref<16x?xf32>)
      {copies = 8 : i64, threads = 256 : i64}
  return
}

// CHECK-LABEL: func.func @input_scales
// CHECK: {copies = 8 : i64, input_scales, threads = 256 : i64}
func.func @input_scales(%x: memref<?x2048xbf16>, %p: memref<?xi32>,
                        %q: memref<?x2048xf8E4M3FN>, %s: memref<16x?xf32>) {
  gg.quantize_rows input(%x : memref<?x2048xbf16>) scatter(%p : memref<?xi32>)
      out(%q : memref<?x2048xf8E4M3FN>) scales(%s : memref<16x?xf32>)
      {copies = 8 : i64, input_scales, threads = 256 : i64}
  return
}

// CHECK-LABEL: func.func @routed_activation
// CHECK: gg.quantize_rows input(%{{.*}} : memref<?x1536xbf16>) route(%{{.*}} : memref<?xf32>) out(%{{.*}} : memref<?x768xf8E4M3FN>) scales(%{{.*}} : memref<6x?xf32>) activation(%{{.*}} : memref<?x768xbf16>) {gated, threads = 256 : i64}
func.func @routed_activation(%h: memref<?x1536xbf16>, %r: memref<?xf32>,
                             %q: memref<?x768xf8E4M3FN>, %s: memref<6x?xf32>,
                             %a: memref<?x768xbf16>) {
  gg.quantize_rows input(%h : memref<?x1536xbf16>) route(%r : memref<?xf32>)
      out(%q : memref<?x768xf8E4M3FN>) scales(%s : memref<6x?xf32>)
      activation(%a : memref<?x768xbf16>) {gated, threads = 256 : i64}
  return
}
