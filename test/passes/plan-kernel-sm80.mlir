// RUN: ggc-opt %s -split-input-file -gg-plan-kernel | FileCheck %s

// Before sm_90a the plan lays a warpgroup's four warps out 2 x 2
// (warp_columns = 2): mma.sync's warps then load B's fragments for half
// the columns each. The registers are setmaxnreg's, which these targets
// do not have: they are computed as for sm_90a and not used.
// CHECK-LABEL: func.func @bf16
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none, warp_columns = 2>
module attributes {gg.target = "sm_80"} {
func.func @bf16(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>, store_pool = array<i64>}
  return
}
}

// -----

// 48 columns a warpgroup are not two warps of whole 16-column B loads:
// one warp column.
// CHECK-LABEL: func.func @narrow
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [{{.*}}], staging = none>
module attributes {gg.target = "sm_86"} {
func.func @narrow(%a: memref<?x512xbf16>, %b: memref<8x48x512xbf16>,
                  %off: memref<9xi32>, %o: memref<?x48xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x48x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x48xbf16>)
      {config = #gg.config<block = [64, 48, 64], stages = 4, cluster = [1, 1], sms = 132>, store_pool = array<i64>}
  return
}
}
