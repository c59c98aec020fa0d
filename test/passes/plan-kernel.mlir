// RUN: ggc-opt %s -split-input-file -gg-plan-kernel | FileCheck %s

// Before: a configured bf16 op, no scales, no store pool. After: one-level
// accumulation (promotion is moot: serial), no scales to place, 40
// registers for the producer and 232 for each of the two consumers (a CTA
// of 384 threads starts with 168 each), no staged tile: the threads
// store, each quad 16 bytes a thread (store_columns = 8).
// CHECK-LABEL: func.func @bf16
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none, store_columns = 8>
func.func @bf16(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// The same op accumulating into `out` (`accumulate`): each pair is read and
// written by its own thread, so the quads keep their pairs
// (store_columns = 2, the attribute's default, not printed).
// CHECK-LABEL: func.func @bf16_accumulate
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none>, store_pool
func.func @bf16_accumulate(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                           %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {accumulate, config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>, store_pool = array<i64>}
  return
}

// -----

// A store pool's rows that are no whole 128-byte chunks but whole 64-byte
// ones (96 bf16 outputs, 192 bytes) are staged 64B-swizzled: dense rows of
// 192 bytes would put a warp's 8 rows on half the banks.
// CHECK-LABEL: func.func @bf16_96
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = swizzled_64>
func.func @bf16_96(%a: memref<?x512xbf16>, %b: memref<8x960x512xbf16>,
                   %off: memref<9xi32>, %o: memref<?x960xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x960x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x960xbf16>)
      {config = #gg.config<block = [128, 96, 64], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>}
  return
}

// -----

// The same rows added to an f32 `out` (176 columns, 704 bytes: eleven
// 64-byte chunks) stay dense: TMA's reduce-add of 64-byte boxes measured
// slower than of whole rows.
// CHECK-LABEL: func.func @f32_176_accumulate
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = dense>
func.func @f32_176_accumulate(%a: memref<?x512xbf16>, %b: memref<8x1056x512xbf16>,
                              %off: memref<9xi32>, %o: memref<?x1056xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1056x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1056xf32>)
      {accumulate, config = #gg.config<block = [128, 176, 64], stages = 3, cluster = [1, 1], sms = 132>,
       store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>}
  return
}

// -----

// f8 with 1x128 M-major scales of A and 128x128 of B on 128x128 tiles: the
// promotion pipelines (three 64-register accumulators fit the 240 a
// 24-register producer leaves), the scales ride with the stages, and the
// store pool's 256-byte rows are staged swizzled.
// CHECK-LABEL: func.func @fp8_blocks
// CHECK: kernel_plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = swizzled>
func.func @fp8_blocks(%a: memref<4x256x2048xf8E4M3FN>, %b: memref<4x7168x2048xf8E4M3FN>,
                      %m: memref<4xi32>, %sa: memref<4x16x256xf32>,
                      %sb: memref<4x56x16xf32>, %o: memref<4x256x7168xbf16>) {
  gg.grouped_matmul masked a(%a : memref<4x256x2048xf8E4M3FN>)
      b(%b : memref<4x7168x2048xf8E4M3FN>) groups(%m : memref<4xi32>)
      a_scale(%sa : memref<4x16x256xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<4x56x16xf32>, <block 128x128, k_major>)
      out(%o : memref<4x256x7168xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>,
       store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>}
  return
}

// -----

// A 64x256 tile split between two warpgroups (split_n = 2): the scales go
// through each warp's slots (each warpgroup's B block is its own);
// each warpgroup's 128 columns keep three 64-register accumulators, which
// fit: pipelined promotion.
// CHECK-LABEL: func.func @fp8_split
// CHECK: kernel_plan = #gg.kernel_plan<promotion = pipelined, scales = slots, registers = [24, 240], staging = swizzled>
func.func @fp8_split(%a: memref<4x64x2048xf8E4M3FN>, %b: memref<4x4096x2048xf8E4M3FN>,
                     %m: memref<4xi32>, %sa: memref<4x16x64xf32>,
                     %sb: memref<4x32x16xf32>, %o: memref<4x64x4096xbf16>) {
  gg.grouped_matmul masked a(%a : memref<4x64x2048xf8E4M3FN>)
      b(%b : memref<4x4096x2048xf8E4M3FN>) groups(%m : memref<4xi32>)
      a_scale(%sa : memref<4x16x64xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<4x32x16xf32>, <block 128x128, k_major>)
      out(%o : memref<4x64x4096xbf16>)
      {config = #gg.config<block = [64, 256, 128], stages = 5, cluster = [1, 1], sms = 132, split_n = 2>,
       store_pool = array<i64: 64, 32, 16, 8, 4, 2, 1>}
  return
}

// -----

// The same split with column_halves (the FP8 SwiGLU tile whose out is
// quantised): both warpgroups read the tile's rows and its two B blocks
// (the gate's and the up's), so the stages carry the scales.
// CHECK-LABEL: func.func @fp8_split_halves
// CHECK: kernel_plan = #gg.kernel_plan<promotion = pipelined, scales = stages,
func.func @fp8_split_halves(%a: memref<?x2048xf8E4M3FN>, %b: memref<4x1024x2048xf8E4M3FN>,
                            %off: memref<5xi32>, %sa: memref<16x?xf32>,
                            %sb: memref<4x8x16xf32>, %o: memref<?x512xf8E4M3FN>,
                            %so: memref<4x?xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b : memref<4x1024x2048xf8E4M3FN>) groups(%off : memref<5xi32>)
      a_scale(%sa : memref<16x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<4x8x16xf32>, <block 128x128>)
      out(%o : memref<?x512xf8E4M3FN>) out_scale(%so : memref<4x?xf32>)
      {column_halves,
       config = #gg.config<block = [64, 256, 128], stages = 5, cluster = [1, 1], sms = 132, split_n = 2>,
       store_pool = array<i64>} epilogue {
  ^bb0(%gate: f32, %up: f32, %g: index):
    %y = arith.mulf %gate, %up : f32
    gg.yield %y : f32
  }
  return
}

// -----

// A plan the user wrote is kept: serial promotion where pipelined would fit.
// CHECK-LABEL: func.func @user_plan
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = slots, registers = [24, 240], staging = none>
func.func @user_plan(%a: memref<4x256x2048xf8E4M3FN>, %b: memref<4x7168x2048xf8E4M3FN>,
                     %m: memref<4xi32>, %sa: memref<4x16x256xf32>,
                     %sb: memref<4x56x16xf32>, %o: memref<4x256x7168xbf16>) {
  gg.grouped_matmul masked a(%a : memref<4x256x2048xf8E4M3FN>)
      b(%b : memref<4x7168x2048xf8E4M3FN>) groups(%m : memref<4xi32>)
      a_scale(%sa : memref<4x16x256xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<4x56x16xf32>, <block 128x128, k_major>)
      out(%o : memref<4x256x7168xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = slots, registers = [24, 240], staging = none>}
  return
}

// -----

// Per-column (1x128) scales of B are published per K block by each
// warpgroup; their promotion pipelines as well (block k + 1's column
// words are published while block k + 2's copies fly).
// CHECK-LABEL: func.func @fp8_column_scales
// CHECK: kernel_plan = #gg.kernel_plan<promotion = pipelined, scales = slots, registers = [24, 240], staging = none, store_columns = 8>
func.func @fp8_column_scales(%a: memref<?x2048xf8E4M3FN>, %b: memref<4x1024x2048xf8E4M3FN>,
                             %off: memref<5xi32>, %sa: memref<?x16xf32>,
                             %sb: memref<4x1024x16xf32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b : memref<4x1024x2048xf8E4M3FN>) groups(%off : memref<5xi32>)
      a_scale(%sa : memref<?x16xf32>, <block 1x128, k_major>)
      b_scale(%sb : memref<4x1024x16xf32>, <block 1x128, k_major>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// Gathered rows of A (a_rows) on sm_90a: TMA loads consecutive rows only,
// so warpgroup 0's every thread copies A's rows by cp.async (producer =
// all_threads); the registers split as for any one-level kernel.
// CHECK-LABEL: func.func @gathered_rows
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none, producer = all_threads, store_columns = 8>
func.func @gathered_rows(%a: memref<?x512xbf16>, %r: memref<?xi32>,
                         %b: memref<8x1024x512xbf16>, %off: memref<9xi32>,
                         %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      a_rows(%r : memref<?xi32>) b(%b : memref<8x1024x512xbf16>)
      groups(%off : memref<9xi32>) out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// f8 gathered rows with 1x128 M-major scales of A (the product's rows')
// and 128x128 of B: every producer thread arrives on each stage, so there
// is no one load A's scale box could ride and the consumers copy the
// scales into their slots (scales = slots).
// CHECK-LABEL: func.func @fp8_gathered_rows
// CHECK: kernel_plan = #gg.kernel_plan<promotion = pipelined, scales = slots, registers = [24, 240], staging = none, producer = all_threads, store_columns = 8>
func.func @fp8_gathered_rows(%a: memref<?x2048xf8E4M3FN>, %r: memref<?xi32>,
                             %b: memref<8x1536x2048xf8E4M3FN>, %off: memref<9xi32>,
                             %sa: memref<16x?xf32>, %sb: memref<8x12x16xf32>,
                             %o: memref<?x1536xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      a_rows(%r : memref<?xi32>) b(%b : memref<8x1536x2048xf8E4M3FN>)
      groups(%off : memref<9xi32>)
      a_scale(%sa : memref<16x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<8x12x16xf32>, <block 128x128, k_major>)
      out(%o : memref<?x1536xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  return
}

// -----

// The FP8 weight gradient added to an f32 `out` (k_grouped, 1x128 scales
// of both operands in the stages, serial promotion): each thread reads
// B's column scales as the wgmma is issued, the stage given back before
// the promotion (column_scale_reads = at_issue), and with those scales
// held the producer keeps 24 registers so the consumers get 240.
// CHECK-LABEL: func.func @wgrad_f32_reads_at_issue
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [24, 240], staging = dense, column_scale_reads = at_issue>
func.func @wgrad_f32_reads_at_issue(%a: memref<256x?xf8E4M3FN>, %b: memref<288x?xf8E4M3FN>,
                                    %groups: memref<3xi32>, %a_scale: memref<?x256xf32>,
                                    %b_scale: memref<?x288xf32>, %out: memref<2x256x288xf32>) {
  gg.grouped_matmul k_grouped a(%a : memref<256x?xf8E4M3FN>) b(%b : memref<288x?xf8E4M3FN>)
      groups(%groups : memref<3xi32>)
      a_scale(%a_scale : memref<?x256xf32>, <block 1x128, mn_major>)
      b_scale(%b_scale : memref<?x288xf32>, <block 1x128, mn_major>)
      out(%out : memref<2x256x288xf32>)
      {accumulate, config = #gg.config<block = [128, 144, 128], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>}
  return
}

// -----

// The same on 128x176 tiles: two accumulators of 88 registers and 44
// held column scales do not fit 240, so the scales are read at the
// promotion and the producer keeps 40.
// CHECK-LABEL: func.func @wgrad_f32_176_reads_at_promotion
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = dense>
func.func @wgrad_f32_176_reads_at_promotion(%a: memref<256x?xf8E4M3FN>, %b: memref<352x?xf8E4M3FN>,
                                            %groups: memref<3xi32>, %a_scale: memref<?x256xf32>,
                                            %b_scale: memref<?x352xf32>, %out: memref<2x256x352xf32>) {
  gg.grouped_matmul k_grouped a(%a : memref<256x?xf8E4M3FN>) b(%b : memref<352x?xf8E4M3FN>)
      groups(%groups : memref<3xi32>)
      a_scale(%a_scale : memref<?x256xf32>, <block 1x128, mn_major>)
      b_scale(%b_scale : memref<?x352xf32>, <block 1x128, mn_major>)
      out(%out : memref<2x256x352xf32>)
      {accumulate, config = #gg.config<block = [128, 176, 128], stages = 3, cluster = [1, 1], sms = 132>,
       store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>}
  return
}

// -----

// The same written as bf16 (4 stages of 128x160 beside a smaller staged
// tile): the scales are read at the promotion, the producer keeps 40.
// CHECK-LABEL: func.func @wgrad_bf16_reads_at_promotion
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = swizzled_64>
func.func @wgrad_bf16_reads_at_promotion(%a: memref<256x?xf8E4M3FN>, %b: memref<320x?xf8E4M3FN>,
                                         %groups: memref<3xi32>, %a_scale: memref<?x256xf32>,
                                         %b_scale: memref<?x320xf32>, %out: memref<2x256x320xbf16>) {
  gg.grouped_matmul k_grouped a(%a : memref<256x?xf8E4M3FN>) b(%b : memref<320x?xf8E4M3FN>)
      groups(%groups : memref<3xi32>)
      a_scale(%a_scale : memref<?x256xf32>, <block 1x128, mn_major>)
      b_scale(%b_scale : memref<?x320xf32>, <block 1x128, mn_major>)
      out(%out : memref<2x256x320xbf16>)
      {config = #gg.config<block = [128, 160, 128], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>}
  return
}

// -----

// The FP8 weight gradient written as bf16 on 128x128 tiles: three
// accumulators of 64 registers would fit 240, but not beside B's column
// scales (ptxas spilled there), so the promotion is serial.
// CHECK-LABEL: func.func @wgrad_bf16_128_serial
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = swizzled>
func.func @wgrad_bf16_128_serial(%a: memref<256x?xf8E4M3FN>, %b: memref<256x?xf8E4M3FN>,
                                 %groups: memref<3xi32>, %a_scale: memref<?x256xf32>,
                                 %b_scale: memref<?x256xf32>, %out: memref<2x256x256xbf16>) {
  gg.grouped_matmul k_grouped a(%a : memref<256x?xf8E4M3FN>) b(%b : memref<256x?xf8E4M3FN>)
      groups(%groups : memref<3xi32>)
      a_scale(%a_scale : memref<?x256xf32>, <block 1x128, mn_major>)
      b_scale(%b_scale : memref<?x256xf32>, <block 1x128, mn_major>)
      out(%out : memref<2x256x256xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>,
       store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>}
  return
}

// -----

// The same added to an f32 `out` on 128x128 tiles (short groups): serial,
// as above, and on 128 columns B's column scales are read at the
// promotion, so the producer keeps 40.
// CHECK-LABEL: func.func @wgrad_f32_128_serial_at_promotion
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = swizzled>
func.func @wgrad_f32_128_serial_at_promotion(%a: memref<256x?xf8E4M3FN>, %b: memref<256x?xf8E4M3FN>,
                                             %groups: memref<3xi32>, %a_scale: memref<?x256xf32>,
                                             %b_scale: memref<?x256xf32>, %out: memref<2x256x256xf32>) {
  gg.grouped_matmul k_grouped a(%a : memref<256x?xf8E4M3FN>) b(%b : memref<256x?xf8E4M3FN>)
      groups(%groups : memref<3xi32>)
      a_scale(%a_scale : memref<?x256xf32>, <block 1x128, mn_major>)
      b_scale(%b_scale : memref<?x256xf32>, <block 1x128, mn_major>)
      out(%out : memref<2x256x256xf32>)
      {accumulate, config = #gg.config<block = [128, 128, 128], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>}
  return
}

// -----

// Rule 12: the serial FP8 kernel of contiguous groups takes a turn of the
// ring at a time (ring_stages = constant): 16 K blocks over 4 stages, and
// 18 over 4, whose last turn ends on two stages passed on empty. Masked
// groups (pairs not measured) keep counted stages.
// CHECK-LABEL: func.func @contiguous_fp8_192
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = swizzled, ring_stages = constant>
// CHECK-LABEL: func.func @contiguous_fp8_192_partial_turn
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = swizzled, ring_stages = constant>
// CHECK-LABEL: func.func @masked_fp8_192
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = swizzled>
func.func @contiguous_fp8_192(%a: memref<?x2048xf8E4M3FN>, %b: memref<8x7168x2048xf8E4M3FN>,
                              %g: memref<9xi32>, %sa: memref<16x?xf32>, %sb: memref<8x56x16xf32>,
                              %o: memref<?x7168xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b : memref<8x7168x2048xf8E4M3FN>) groups(%g : memref<9xi32>)
      a_scale(%sa : memref<16x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<8x56x16xf32>, <block 128x128>)
      out(%o : memref<?x7168xbf16>)
      {config = #gg.config<block = [128, 192, 128], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>}
  return
}
func.func @contiguous_fp8_192_partial_turn(%a: memref<?x2304xf8E4M3FN>, %b: memref<8x7168x2304xf8E4M3FN>,
                                           %g: memref<9xi32>, %sa: memref<18x?xf32>, %sb: memref<8x56x18xf32>,
                                           %o: memref<?x7168xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2304xf8E4M3FN>)
      b(%b : memref<8x7168x2304xf8E4M3FN>) groups(%g : memref<9xi32>)
      a_scale(%sa : memref<18x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<8x56x18xf32>, <block 128x128>)
      out(%o : memref<?x7168xbf16>)
      {config = #gg.config<block = [128, 192, 128], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>}
  return
}
func.func @masked_fp8_192(%a: memref<8x512x2048xf8E4M3FN>, %b: memref<8x7168x2048xf8E4M3FN>,
                          %g: memref<8xi32>, %sa: memref<8x16x512xf32>, %sb: memref<8x56x16xf32>,
                          %o: memref<8x512x7168xbf16>) {
  gg.grouped_matmul masked a(%a : memref<8x512x2048xf8E4M3FN>)
      b(%b : memref<8x7168x2048xf8E4M3FN>) groups(%g : memref<8xi32>)
      a_scale(%sa : memref<8x16x512xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<8x56x16xf32>, <block 128x128>)
      out(%o : memref<8x512x7168xbf16>)
      {config = #gg.config<block = [128, 192, 128], stages = 4, cluster = [2, 1], sms = 132>,
       store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>}
  return
}

// -----

// A plan that states ring_stages = constant over K blocks of no whole
// turns (16 over 5 stages) is kept: each tile's last turn ends on four
// stages passed on empty (gg-check-kernel-plan).
// CHECK-LABEL: func.func @constant_stages_partial_turn_stated
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = slots, registers = [40, 232], staging = none, ring_stages = constant>
func.func @constant_stages_partial_turn_stated(%a: memref<?x2048xf8E4M3FN>, %b: memref<8x7168x2048xf8E4M3FN>,
                                              %off: memref<9xi32>, %sa: memref<16x?xf32>,
                                              %sb: memref<8x56x16xf32>, %o: memref<?x7168xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b : memref<8x7168x2048xf8E4M3FN>) groups(%off : memref<9xi32>)
      a_scale(%sa : memref<16x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<8x56x16xf32>, <block 128x128>)
      out(%o : memref<?x7168xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = slots, registers = [40, 232], staging = none, ring_stages = constant>}
  return
}
