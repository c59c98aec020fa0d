// RUN: ggc-opt %s -split-input-file -gg-select-config | FileCheck %s
// RUN: ggc-opt %s -split-input-file -gg-select-config=shared-memory-bytes=140000 | FileCheck %s --check-prefix=BUDGET
// RUN: ggc-opt %s -split-input-file -gg-select-config=shared-memory-bytes=232448 | FileCheck %s --check-prefix=HOPPER

// The same bf16 contiguous op (N = 28672, a multiple of 256; groups of
// 1,024 rows or more) on each target. sm_90a (no gg.target): 128x256
// tiles, four 48 KiB stages in 227 KiB.
// CHECK-LABEL: func.func @hopper
// CHECK: config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>
func.func @hopper(%a: memref<?x4096xbf16>, %b: memref<8x28672x4096xbf16>,
                  %off: memref<9xi32>, %o: memref<?x28672xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x4096xbf16>)
      b(%b : memref<8x28672x4096xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x28672xbf16>) {expected_m = 1024 : i64}
  return
}

// -----

// sm_80: without setmaxnreg a consumer warpgroup's accumulator is held to
// 128 columns, so block N is 128; five 32 KiB stages fit in the A100's
// 163 KiB (the target's, where no device's is given). A device of 140000
// bytes holds four. A Hopper card's 227 KiB hold four 48 KiB stages of
// 128x256, which 16-bit operands then take (gg-plan-kernel gives them no
// producer and 64x64 warps).
// CHECK-LABEL: func.func @sm80
// CHECK: config = #gg.config<block = [128, 128, 64], stages = 5, cluster = [1, 1], sms = 132>
// BUDGET-LABEL: func.func @sm80
// BUDGET: config = #gg.config<block = [128, 128, 64], stages = 4,
// HOPPER-LABEL: func.func @sm80
// HOPPER: config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>
module attributes {gg.target = "sm_80"} {
  func.func @sm80(%a: memref<?x4096xbf16>, %b: memref<8x28672x4096xbf16>,
                  %off: memref<9xi32>, %o: memref<?x28672xbf16>) {
    gg.grouped_matmul contiguous a(%a : memref<?x4096xbf16>)
        b(%b : memref<8x28672x4096xbf16>) groups(%off : memref<9xi32>)
        out(%o : memref<?x28672xbf16>) {expected_m = 1024 : i64}
    return
  }
}

// -----

// sm_86 (as sm_89): 99 KiB of shared memory, three stages; a device's
// budget replaces the target's (four stages in 140000 bytes).
// CHECK-LABEL: func.func @sm86
// CHECK: config = #gg.config<block = [128, 128, 64], stages = 3, cluster = [1, 1], sms = 132>
// BUDGET-LABEL: func.func @sm86
// BUDGET: config = #gg.config<block = [128, 128, 64], stages = 4,
module attributes {gg.target = "sm_86"} {
  func.func @sm86(%a: memref<?x4096xbf16>, %b: memref<8x28672x4096xbf16>,
                  %off: memref<9xi32>, %o: memref<?x28672xbf16>) {
    gg.grouped_matmul contiguous a(%a : memref<?x4096xbf16>)
        b(%b : memref<8x28672x4096xbf16>) groups(%off : memref<9xi32>)
        out(%o : memref<?x28672xbf16>) {expected_m = 1024 : i64}
    return
  }
}

// -----

// f32 operands keep their producer warpgroup (168 registers a thread), which
// a 64x256 accumulator does not fit: 128 columns on any budget.
// HOPPER-LABEL: func.func @sm80_f32
// HOPPER: config = #gg.config<block = [128, 128, 32],
module attributes {gg.target = "sm_80"} {
  func.func @sm80_f32(%a: memref<?x4096xf32>, %b: memref<8x28672x4096xf32>,
                      %off: memref<9xi32>, %o: memref<?x28672xf32>) {
    gg.grouped_matmul contiguous a(%a : memref<?x4096xf32>)
        b(%b : memref<8x28672x4096xf32>) groups(%off : memref<9xi32>)
        out(%o : memref<?x28672xf32>) {expected_m = 1024 : i64}
    return
  }
}

// -----

// Contiguous groups expected to hold fewer than 256 rows keep 128x128 on
// mma.sync tiles whatever the budget: their 128x256 tiles fill half the waves.
// HOPPER-LABEL: func.func @sm80_small_groups
// HOPPER: config = #gg.config<block = [128, 128, 64], stages = 7,
module attributes {gg.target = "sm_80"} {
  func.func @sm80_small_groups(%a: memref<?x4096xbf16>, %b: memref<8x28672x4096xbf16>,
                               %off: memref<9xi32>, %o: memref<?x28672xbf16>) {
    gg.grouped_matmul contiguous a(%a : memref<?x4096xbf16>)
        b(%b : memref<8x28672x4096xbf16>) groups(%off : memref<9xi32>)
        out(%o : memref<?x28672xbf16>) {expected_m = 128 : i64}
    return
  }
}

// -----

// Groups expected to hold 32 rows: sm_90a takes 128x128 tiles
// (select-config.mlir), mma.sync targets keep the 64x64 decode tiles up
// to 64 rows.
// CHECK-LABEL: func.func @sm80_32_rows
// CHECK: config = #gg.config<block = [64, 64, 64],
module attributes {gg.target = "sm_80"} {
  func.func @sm80_32_rows(%a: memref<?x4096xbf16>, %b: memref<8x28672x4096xbf16>,
                          %off: memref<9xi32>, %o: memref<?x28672xbf16>) {
    gg.grouped_matmul contiguous a(%a : memref<?x4096xbf16>)
        b(%b : memref<8x28672x4096xbf16>) groups(%off : memref<9xi32>)
        out(%o : memref<?x28672xbf16>) {expected_m = 32 : i64}
    return
  }
}
