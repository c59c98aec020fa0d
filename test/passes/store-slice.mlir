// RUN: ggc-opt %s -split-input-file -gg-select-config -gg-tma-store-pool | FileCheck %s

// Before: a 128x256 bf16 tile with four stages. After: the whole staged
// tile (64 KB) leaves room for three; staged 64 columns at a time
// (store_slice, a ring of two 16 KB buffers) it keeps all four.
// CHECK-LABEL: func.func @whole
// CHECK: config = #gg.config<block = [128, 256, 64], stages = 3
// CHECK-LABEL: func.func @sliced
// CHECK: config = #gg.config<block = [128, 256, 64], stages = 4
// CHECK-SAME: store_slice = 64
func.func @whole(%a: memref<?x4096xbf16>, %b: memref<8x4096x4096xbf16>,
                 %off: memref<9xi32>, %o: memref<?x4096xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x4096xbf16>)
      b(%b : memref<8x4096x4096xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x4096xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}
func.func @sliced(%a: memref<?x4096xbf16>, %b: memref<8x4096x4096xbf16>,
                  %off: memref<9xi32>, %o: memref<?x4096xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x4096xbf16>)
      b(%b : memref<8x4096x4096xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x4096xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>,
       store_slice = 64 : i64}
  return
}
