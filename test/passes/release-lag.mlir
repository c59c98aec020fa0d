// RUN: ggc-opt %s -split-input-file -gg-schedule-groups -gg-eliminate-padding -gg-plan-overfetch -gg-plan-kernel -gg-lower-to-nvvm -ggk-lower-k-loop | FileCheck %s

// The plan's release_lag as the consumer's K loop states it. Before: a
// planned grouped matmul. After (0, gg-plan-kernel's choice before
// sm_90a): each K block's stage goes back to the producer right after
// its mma.sync, whose operands are then in registers.
// CHECK-LABEL: llvm.func @lag_zero_kernel
// CHECK: ggk.wait_stage
// CHECK-NEXT: ggk.shared_address %{{.*}} "a_tiles"[%[[STAGE:[^ ]*]] : i32]
// CHECK: ggk.mma %
// CHECK-NEXT: ggk.mma_commit
// CHECK-NEXT: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK-NEXT: %[[EMPTY:.*]] = ggk.shared_address %{{.*}} "empty_barriers"[%[[STAGE]] : i32]
// CHECK-NEXT: ggk.release_stage %[[EMPTY]]
// Then, without a producer (gg-plan-kernel's choice for two consumer
// warpgroups before sm_90a), every consumer thread's share of the copies
// of block k + 3 (stages - 1), into the stage block k - 1 used, where the
// tile has that block:
// CHECK-NEXT: arith.constant 3
// CHECK-NEXT: %[[AHEAD:.*]] = arith.addi
// CHECK-NEXT: %[[IN_TILE:.*]] = arith.cmpi slt, %[[AHEAD]]
// CHECK-NEXT: scf.if %[[IN_TILE]] {
// CHECK: ggk.acquire_stage
// CHECK: ggk.load_tile_rows {{.*}}copy_threads = 256 :
// CHECK: ggk.load_b_tile {{.*}}copy_threads = 256 : i64}
// CHECK-NEXT: }
// CHECK-NEXT: arith.constant 1
// CHECK-NEXT: arith.addi
// CHECK-NEXT: scf.yield
module attributes {gg.target = "sm_80"} {
func.func @lag_zero(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                    %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>, store_pool = array<i64>}
  return
}
}

// -----

// With 1 (wgmma's, and a user's choice before sm_90a), one batch stays in
// flight: block k's stage goes back after block k+1 is issued, and the
// tile's last after the loop.
// CHECK-LABEL: llvm.func @lag_one_kernel
// CHECK: scf.for
// CHECK: ggk.mma %
// CHECK-NEXT: ggk.mma_commit
// CHECK-NEXT: ggk.mma_wait attributes {pending = 1 : i64}
// CHECK: scf.if
// CHECK: ggk.release_stage
// CHECK: ggk.mma_wait attributes {pending = 0 : i64}
// CHECK: scf.if
// CHECK: ggk.release_stage
module attributes {gg.target = "sm_80"} {
func.func @lag_one(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                   %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>, store_pool = array<i64>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [168, 168], staging = none, warp_columns = 2>}
  return
}
}
