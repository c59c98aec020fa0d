// RUN: ggc-opt %s -split-input-file -gg-tma-store-pool | FileCheck %s
// RUN: ggc-opt %s -split-input-file -gg-tma-store-pool=shared-memory-bytes=200000 | FileCheck %s --check-prefix=BUDGET

// Before: a configured contiguous op. After: a pool of store boxes of
// 128, 64, ..., 1 rows, and one stage fewer, to make room for the 128x256
// bf16 tile (64 KiB) staged in shared memory.
// CHECK-LABEL: func.func @contiguous
// CHECK: config = #gg.config<block = [128, 256, 64], stages = 3, cluster = [1, 1], sms = 132>
// CHECK-SAME: store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>
// A device of 200000 bytes (the option replaces the target's 227 KiB) has
// no room for the staged tile beside three stages (the fewest kept): the
// op keeps its four stages and per-thread stores.
// BUDGET-LABEL: func.func @contiguous
// BUDGET: config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>
// BUDGET-SAME: store_pool = array<i64>
func.func @contiguous(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                      %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// A masked decode tile of 64 rows: the pool starts at 64; the 8 stages of
// 64x128 tiles leave room, so the config is kept.
// CHECK-LABEL: func.func @masked
// CHECK: config = #gg.config<block = [64, 128, 64], stages = 8, cluster = [1, 1], sms = 132>
// CHECK-SAME: store_pool = array<i64: 64, 32, 16, 8, 4, 2, 1>
func.func @masked(%a: memref<4x128x256xbf16>, %b: memref<4x512x256xbf16>,
                  %m: memref<4xi32>, %o: memref<4x128x512xbf16>) {
  gg.grouped_matmul masked a(%a : memref<4x128x256xbf16>)
      b(%b : memref<4x512x256xbf16>) groups(%m : memref<4xi32>)
      out(%o : memref<4x128x512xbf16>)
      {config = #gg.config<block = [64, 128, 64], stages = 8, cluster = [1, 1], sms = 132>}
  return
}

// -----

// Block M 192 (three consumer warpgroups): the boxes halve from 128, the
// largest power of two not above it, so any residual count of rows is a sum
// of distinct boxes (191 = 128 + 32 + 16 + 8 + 4 + 2 + 1).
// CHECK-LABEL: func.func @block_m_192
// CHECK: store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>
func.func @block_m_192(%a: memref<?x256xbf16>, %b: memref<4x128x256xbf16>,
                       %off: memref<5xi32>, %o: memref<?x128xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x128x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x128xbf16>)
      {config = #gg.config<block = [192, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// padded_contiguous rows are valid by their group tag, and a tile's are
// usually its leading rows: the pool, which each tile takes only where
// they are (ggk.store_tile's `tagged`), where it leaves four stages or
// more (128x128 bf16: its four); 128x256 tiles would keep three, and keep
// per-thread stores and their four stages.
// CHECK-LABEL: func.func @padded
// CHECK: stages = 4,
// CHECK-SAME: store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>}
// CHECK-LABEL: func.func @padded_wide
// CHECK: block = [128, 256, 64], stages = 4,
// CHECK-SAME: store_pool = array<i64>}
func.func @padded(%a: memref<?x256xbf16>, %b: memref<4x512x256xbf16>,
                  %tags: memref<?xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul padded_contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x512x256xbf16>) groups(%tags : memref<?xi32>)
      out(%o : memref<?x512xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}
func.func @padded_wide(%a: memref<?x256xbf16>, %b: memref<4x512x256xbf16>,
                       %tags: memref<?xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul padded_contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x512x256xbf16>) groups(%tags : memref<?xi32>)
      out(%o : memref<?x512xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// An op that adds to an f32 `out` (`accumulate`) takes the pool, whose
// boxes reduce-add; into a bf16 `out` the sum would be rounded twice, so
// its threads read, add and store (an empty pool).
// CHECK-LABEL: func.func @accumulate
// CHECK: accumulate, config = {{.*}}store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>}
// CHECK: accumulate, config = {{.*}}store_pool = array<i64>}
func.func @accumulate(%a: memref<?x256xbf16>, %b: memref<4x512x256xbf16>,
                      %off: memref<5xi32>, %o: memref<?x512xf32>,
                      %o16: memref<?x512xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x512x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x512xf32>)
      {accumulate, config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x512x256xbf16>) groups(%off : memref<5xi32>)
      out(%o16 : memref<?x512xbf16>)
      {accumulate, config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// Rows of 112 bf16 (224 bytes): a 1-row box would start off TMA's 128-byte
// alignment in the staged tile, so per-thread stores; 96 (192 bytes) puts
// every box on it.
// CHECK-LABEL: func.func @rows_of_224_bytes
// CHECK: store_pool = array<i64>}
// CHECK-LABEL: func.func @rows_of_192_bytes
// CHECK: store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>}
func.func @rows_of_224_bytes(%a: memref<?x256xbf16>, %b: memref<4x448x256xbf16>,
                             %off: memref<5xi32>, %o: memref<?x448xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x448x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x448xbf16>)
      {config = #gg.config<block = [128, 112, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}
func.func @rows_of_192_bytes(%a: memref<?x256xbf16>, %b: memref<4x384x256xbf16>,
                             %off: memref<5xi32>, %o: memref<?x384xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x384x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x384xbf16>)
      {config = #gg.config<block = [128, 96, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// An f32 128x256 tile (128 KiB) would leave fewer than 3 stages: per-thread
// stores, config unchanged.
// CHECK-LABEL: func.func @no_room
// CHECK: stages = 4, cluster = [1, 1], sms = 132>, store_pool = array<i64>}
func.func @no_room(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                   %off: memref<9xi32>, %o: memref<?x1024xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xf32>)
      {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// A pool the user wrote is kept (here: none).
// CHECK-LABEL: func.func @user_choice
// CHECK: stages = 4, cluster = [1, 1], sms = 132>, store_pool = array<i64>}
func.func @user_choice(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                       %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>}
  return
}

// -----

// A transposed (nm) output has no row-major tile to stage: per-thread
// stores (an empty pool).
// CHECK-LABEL: func.func @out_nm
// CHECK: store_pool = array<i64>}
func.func @out_nm(%a: memref<?x64xbf16>, %b: memref<?x64xbf16>,
                  %off: memref<3xi32>, %o: memref<2x64x64xf32>) {
  gg.grouped_matmul k_grouped a(%a : memref<?x64xbf16>, km)
      b(%b : memref<?x64xbf16>, kn) groups(%off : memref<3xi32>)
      out(%o : memref<2x64x64xf32>, nm)
      {config = #gg.config<block = [64, 64, 64], stages = 2, cluster = [1, 1], sms = 132>}
  return
}

// -----

// Without TMA (gg.target sm_80) the epilogue stores from registers: the
// op @contiguous above gets an empty pool and keeps its four stages.
// CHECK-LABEL: func.func @no_tma
// CHECK: config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>
// CHECK-SAME: store_pool = array<i64>}
module attributes {gg.target = "sm_80"} {
  func.func @no_tma(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                    %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
    gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
        b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
        out(%o : memref<?x1024xbf16>)
        {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>}
    return
  }
}

// -----

// Masked f8 on 128x192 tiles in pairs: the staged tile would cost the fifth
// stage, so the op keeps per-thread stores and its five stages; the same
// tiles alone take the pool and four stages.
// CHECK-LABEL: func.func @masked_fp8_pairs
// CHECK: config = #gg.config<block = [128, 192, 128], stages = 5, cluster = [2, 1], sms = 132>
// CHECK-SAME: store_pool = array<i64>}
// CHECK-LABEL: func.func @masked_fp8_alone
// CHECK: config = #gg.config<block = [128, 192, 128], stages = 4, cluster = [1, 1], sms = 132>
// CHECK-SAME: store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>
func.func @masked_fp8_pairs(%a: memref<16x384x7168xf8E4M3FN>, %b: memref<16x4096x7168xf8E4M3FN>,
                            %m: memref<16xi32>, %o: memref<16x384x4096xbf16>) {
  gg.grouped_matmul masked a(%a : memref<16x384x7168xf8E4M3FN>)
      b(%b : memref<16x4096x7168xf8E4M3FN>) groups(%m : memref<16xi32>)
      out(%o : memref<16x384x4096xbf16>)
      {config = #gg.config<block = [128, 192, 128], stages = 5, cluster = [2, 1], sms = 132>}
  return
}
func.func @masked_fp8_alone(%a: memref<16x384x7168xf8E4M3FN>, %b: memref<16x4096x7168xf8E4M3FN>,
                            %m: memref<16xi32>, %o: memref<16x384x4096xbf16>) {
  gg.grouped_matmul masked a(%a : memref<16x384x7168xf8E4M3FN>)
      b(%b : memref<16x4096x7168xf8E4M3FN>) groups(%m : memref<16xi32>)
      out(%o : memref<16x384x4096xbf16>)
      {config = #gg.config<block = [128, 192, 128], stages = 5, cluster = [1, 1], sms = 132>}
  return
}

// -----

// Masked f8 on 64x256 split tiles (a decode batch's): the staged tile would
// cost the fifth stage, so the op keeps per-thread stores and its five
// stages, also with a stated kernel_plan that stages nothing; the same op
// with a stated kernel_plan staging the tile keeps the pool, which that
// plan needs.
// CHECK-LABEL: func.func @masked_fp8_split
// CHECK: config = #gg.config<block = [64, 256, 128], stages = 5, cluster = [1, 1], sms = 132, split_n = 2>
// CHECK-SAME: store_pool = array<i64>}
// CHECK-LABEL: func.func @masked_fp8_split_unstaged_plan
// CHECK: config = #gg.config<block = [64, 256, 128], stages = 5, cluster = [1, 1], sms = 132, split_n = 2>
// CHECK-SAME: store_pool = array<i64>}
// CHECK-LABEL: func.func @masked_fp8_split_staged_plan
// CHECK: config = #gg.config<block = [64, 256, 128], stages = 4, cluster = [1, 1], sms = 132, split_n = 2>
// CHECK-SAME: store_pool = array<i64: 64, 32, 16, 8, 4, 2, 1>
func.func @masked_fp8_split(%a: memref<16x128x7168xf8E4M3FN>, %b: memref<16x4096x7168xf8E4M3FN>,
                            %m: memref<16xi32>, %o: memref<16x128x4096xbf16>) {
  gg.grouped_matmul masked a(%a : memref<16x128x7168xf8E4M3FN>)
      b(%b : memref<16x4096x7168xf8E4M3FN>) groups(%m : memref<16xi32>)
      out(%o : memref<16x128x4096xbf16>)
      {config = #gg.config<block = [64, 256, 128], stages = 5, cluster = [1, 1], sms = 132, split_n = 2>}
  return
}
func.func @masked_fp8_split_unstaged_plan(%a: memref<16x128x7168xf8E4M3FN>, %b: memref<16x4096x7168xf8E4M3FN>,
                            %m: memref<16xi32>, %o: memref<16x128x4096xbf16>) {
  gg.grouped_matmul masked a(%a : memref<16x128x7168xf8E4M3FN>)
      b(%b : memref<16x4096x7168xf8E4M3FN>) groups(%m : memref<16xi32>)
      out(%o : memref<16x128x4096xbf16>)
      {config = #gg.config<block = [64, 256, 128], stages = 5, cluster = [1, 1], sms = 132, split_n = 2>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = slots, registers = [24, 240], staging = none>}
  return
}
func.func @masked_fp8_split_staged_plan(%a: memref<16x128x7168xf8E4M3FN>, %b: memref<16x4096x7168xf8E4M3FN>,
                            %m: memref<16xi32>, %o: memref<16x128x4096xbf16>) {
  gg.grouped_matmul masked a(%a : memref<16x128x7168xf8E4M3FN>)
      b(%b : memref<16x4096x7168xf8E4M3FN>) groups(%m : memref<16xi32>)
      out(%o : memref<16x128x4096xbf16>)
      {config = #gg.config<block = [64, 256, 128], stages = 5, cluster = [1, 1], sms = 132, split_n = 2>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = slots, registers = [24, 240], staging = swizzled>}
  return
}
