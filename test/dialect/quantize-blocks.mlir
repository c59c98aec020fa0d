// RUN: ggc-opt %s | FileCheck %s
// RUN: ggc-opt %s | ggc-opt | FileCheck %s
// RUN: ggc-opt %s --mlir-print-op-generic | ggc-opt | FileCheck %s

// Round trip of gg.quantize_blocks: with the transposed copy and without.

// CHECK-LABEL: func.func @transposed
// CHECK: gg.quantize_blocks input(%{{.*}} : memref<?x1536x2048xbf16>) out(%{{.*}} : memref<?x1536x2048xf8E4M3FN>) transposed(%{{.*}} : memref<?x2048x1536xf8E4M3FN>) scales(%{{.*}} : memref<?x12x16xf32>)
func.func @transposed(%w: memref<?x1536x2048xbf16>, %q: memref<?x1536x2048xf8E4M3FN>,
                      %qt: memref<?x2048x1536xf8E4M3FN>, %s: memref<?x12x16xf32>) {
  gg.quantize_blocks input(%w : memref<?x1536x2048xbf16>) out(%q : memref<?x1536x2048xf8E4M3FN>)
      transposed(%qt : memref<?x2048x1536xf8E4M3FN>) scales(%s : memref<?x12x16xf32>)
  return
}

// CHECK-LABEL: func.func @plain
// CHECK: gg.quantize_blocks input(%{{.*}} : memref<8x128x256xbf16>) out(%{{.*}} : memref<8x128x256xf8E4M3FN>) scales(%{{.*}} : memref<8x1x2xf32>)
// CHECK-NOT: transposed
func.func @plain(%w: memref<8x128x256xbf16>, %q: memref<8x128x256xf8E4M3FN>,
                 %s: memref<8x1x2xf32>) {
  gg.quantize_blocks input(%w : memref<8x128x256xbf16>) out(%q : memref<8x128x256xf8E4M3FN>)
      scales(%s : memref<8x1x2xf32>)
  return
}
