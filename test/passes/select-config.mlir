// RUN: ggc-opt %s -split-input-file -gg-select-config | FileCheck %s
// RUN: ggc-opt %s -split-input-file -gg-select-config=num-sms=78 | FileCheck %s --check-prefix=SMS

// Before: no config. After: 128-row tiles, block N 128 (256 divides 4096,
// but ragged contiguous groups balance better over 128-wide tiles), block K
// 64 (one 128-byte row of bf16), as many stages as fit in 227 KiB (seven
// 32 KiB stages), one CTA per SM.
// CHECK-LABEL: func.func @contiguous_bf16
// CHECK: gg.grouped_matmul contiguous
// CHECK-SAME: config = #gg.config<block = [128, 128, 64], stages = 7, cluster = [1, 1], sms = 132>
// SMS-LABEL: func.func @contiguous_bf16
// SMS: sms = 78>
func.func @contiguous_bf16(%a: memref<?x7168xbf16>, %b: memref<8x4096x7168xbf16>,
                           %off: memref<9xi32>, %o: memref<?x4096xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x7168xbf16>)
      b(%b : memref<8x4096x7168xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x4096xbf16>)
  return
}

// -----

// N a multiple of 64 but not of 128 (gpt-oss's 2,880): 16-bit contiguous
// groups on sm_90a take 128-wide tiles, the last one ragged, from N =
// 1,024; a narrower N keeps the 64-wide tiles that divide it.
// CHECK-LABEL: func.func @ragged_column_tile
// CHECK: config = #gg.config<block = [128, 128, 64]
// CHECK-LABEL: func.func @narrow_n_960
// CHECK: config = #gg.config<block = [128, 64, 64]
func.func @ragged_column_tile(%a: memref<?x2880xbf16>, %b: memref<128x2880x2880xbf16>,
                              %off: memref<129xi32>, %o: memref<?x2880xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2880xbf16>)
      b(%b : memref<128x2880x2880xbf16>) groups(%off : memref<129xi32>)
      out(%o : memref<?x2880xbf16>)
  return
}
func.func @narrow_n_960(%a: memref<?x2880xbf16>, %b: memref<128x960x2880xbf16>,
                        %off: memref<129xi32>, %o: memref<?x960xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2880xbf16>)
      b(%b : memref<128x960x2880xbf16>) groups(%off : memref<129xi32>)
      out(%o : memref<?x960xbf16>)
  return
}

// -----

// expected_m on contiguous groups: 256 rows or more a group keep the
// 256-wide tiles N allows where N is at least 16,384 (their A and B tiles
// are then read by enough CTAs), 2,048 rows or more whatever N
// (tall_narrow); fewer rows, or N 4,096 at 2,047 rows (mid_narrow), keep
// 128. At most 16 rows a group on sm_90a (a MoE layer's
// decode step, bound by reading the weights) take 64x64 tiles, for more
// CTAs; 32 rows with K = 4,096 and A's rows not gathered keep 128x128.
// CHECK-LABEL: func.func @contiguous_tall_groups
// CHECK: config = #gg.config<block = [128, 256, 64], stages = 4,
// CHECK-LABEL: func.func @contiguous_mid_groups
// CHECK: config = #gg.config<block = [128, 128, 64], stages = 7,
// CHECK-LABEL: func.func @contiguous_tall_narrow
// CHECK: config = #gg.config<block = [128, 256, 64], stages = 4,
// CHECK-LABEL: func.func @contiguous_mid_narrow
// CHECK: config = #gg.config<block = [128, 128, 64], stages = 7,
// CHECK-LABEL: func.func @contiguous_decode_hint
// CHECK: config = #gg.config<block = [64, 64, 64], stages = 8,
// CHECK-LABEL: func.func @contiguous_32_rows
// CHECK: config = #gg.config<block = [128, 128, 64], stages = 7,
func.func @contiguous_tall_groups(%a: memref<?x4096xbf16>, %b: memref<8x28672x4096xbf16>,
                                  %off: memref<9xi32>, %o: memref<?x28672xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x4096xbf16>)
      b(%b : memref<8x28672x4096xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x28672xbf16>) {expected_m = 256 : i64}
  return
}
func.func @contiguous_mid_groups(%a: memref<?x4096xbf16>, %b: memref<8x28672x4096xbf16>,
                                 %off: memref<9xi32>, %o: memref<?x28672xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x4096xbf16>)
      b(%b : memref<8x28672x4096xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x28672xbf16>) {expected_m = 255 : i64}
  return
}
func.func @contiguous_tall_narrow(%a: memref<?x7168xbf16>, %b: memref<8x4096x7168xbf16>,
                                  %off: memref<9xi32>, %o: memref<?x4096xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x7168xbf16>)
      b(%b : memref<8x4096x7168xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x4096xbf16>) {expected_m = 2048 : i64}
  return
}
func.func @contiguous_mid_narrow(%a: memref<?x7168xbf16>, %b: memref<8x4096x7168xbf16>,
                                 %off: memref<9xi32>, %o: memref<?x4096xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x7168xbf16>)
      b(%b : memref<8x4096x7168xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x4096xbf16>) {expected_m = 2047 : i64}
  return
}
func.func @contiguous_decode_hint(%a: memref<?x4096xbf16>, %b: memref<8x28672x4096xbf16>,
                                  %off: memref<9xi32>, %o: memref<?x28672xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x4096xbf16>)
      b(%b : memref<8x28672x4096xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x28672xbf16>) {expected_m = 1 : i64}
  return
}
func.func @contiguous_32_rows(%a: memref<?x4096xbf16>, %b: memref<8x28672x4096xbf16>,
                              %off: memref<9xi32>, %o: memref<?x28672xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x4096xbf16>)
      b(%b : memref<8x28672x4096xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x28672xbf16>) {expected_m = 32 : i64}
  return
}

// -----

// A gated up projection (column_halves: half of each tile's columns come
// out) keeps 256-wide tiles from 128 rows a group; 127 keep 128. A short
// K (at most 1,024: few K blocks a tile) keeps them from 256 rows a
// group; 255 rows, or K = 2,048, keep 128.
// CHECK-LABEL: func.func @gated_128_rows
// CHECK: config = #gg.config<block = [128, 256, 64]
// CHECK-LABEL: func.func @gated_127_rows
// CHECK: config = #gg.config<block = [128, 128, 64]
// CHECK-LABEL: func.func @short_k_256_rows
// CHECK: config = #gg.config<block = [128, 256, 64]
// CHECK-LABEL: func.func @short_k_255_rows
// CHECK: config = #gg.config<block = [128, 128, 64]
// CHECK-LABEL: func.func @k_2048_256_rows
// CHECK: config = #gg.config<block = [128, 128, 64]
func.func @gated_128_rows(%a: memref<?x2048xbf16>, %b: memref<128x1536x2048xbf16>,
                  %off: memref<129xi32>, %o: memref<?x768xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2048xbf16>)
      b(%b : memref<128x1536x2048xbf16>) groups(%off : memref<129xi32>)
      out(%o : memref<?x768xbf16>) {column_halves, expected_m = 128 : i64}
      epilogue {
      ^bb0(%x: f32, %y: f32, %gi: index):
        gg.yield %x : f32
      }
  return
}
func.func @gated_127_rows(%a: memref<?x2048xbf16>, %b: memref<128x1536x2048xbf16>,
                  %off: memref<129xi32>, %o: memref<?x768xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2048xbf16>)
      b(%b : memref<128x1536x2048xbf16>) groups(%off : memref<129xi32>)
      out(%o : memref<?x768xbf16>) {column_halves, expected_m = 127 : i64}
      epilogue {
      ^bb0(%x: f32, %y: f32, %gi: index):
        gg.yield %x : f32
      }
  return
}
func.func @short_k_256_rows(%a: memref<?x768xbf16>, %b: memref<128x2048x768xbf16>,
                  %off: memref<129xi32>, %o: memref<?x2048xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x768xbf16>)
      b(%b : memref<128x2048x768xbf16>) groups(%off : memref<129xi32>)
      out(%o : memref<?x2048xbf16>) {expected_m = 256 : i64}
  return
}
func.func @short_k_255_rows(%a: memref<?x768xbf16>, %b: memref<128x2048x768xbf16>,
                  %off: memref<129xi32>, %o: memref<?x2048xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x768xbf16>)
      b(%b : memref<128x2048x768xbf16>) groups(%off : memref<129xi32>)
      out(%o : memref<?x2048xbf16>) {expected_m = 255 : i64}
  return
}
func.func @k_2048_256_rows(%a: memref<?x2048xbf16>, %b: memref<128x2048x2048xbf16>,
                  %off: memref<129xi32>, %o: memref<?x2048xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2048xbf16>)
      b(%b : memref<128x2048x2048xbf16>) groups(%off : memref<129xi32>)
      out(%o : memref<?x2048xbf16>) {expected_m = 256 : i64}
  return
}

// -----

// Where N takes 256-wide tiles, an f8 decode batch gets 64-row tiles with
// the two consumer warpgroups splitting the columns (split_n = 2): half the
// tensor work per weight byte of 128-row tiles, both warpgroups busy.
// CHECK-LABEL: func.func @masked_decode_fp8_split
// CHECK: config = #gg.config<block = [64, 256, 128], stages = 5, cluster = [1, 1], sms = 132, split_n = 2>
func.func @masked_decode_fp8_split(%a: memref<16x128x7168xf8E4M3FN>,
                                   %b: memref<16x4096x7168xf8E4M3FN>,
                                   %m: memref<16xi32>, %o: memref<16x128x4096xbf16>) {
  gg.grouped_matmul masked a(%a : memref<16x128x7168xf8E4M3FN>)
      b(%b : memref<16x4096x7168xf8E4M3FN>) groups(%m : memref<16xi32>)
      out(%o : memref<16x128x4096xbf16>) {expected_m = 58 : i64}
  return
}

// -----

// A masked f8 batch known by its mean (expected_m 150 of M 256) takes
// 64x256 split tiles where their waves are fewer: counts spread around the
// mean fill about 410 128x128 tiles (4 waves of 132) against 359 64x256
// ones (3 waves).
// CHECK-LABEL: func.func @masked_fp8_fewer_waves
// CHECK: config = #gg.config<block = [64, 256, 128], stages = 5, cluster = [1, 1], sms = 132, split_n = 2>
func.func @masked_fp8_fewer_waves(%a: memref<8x256x7168xf8E4M3FN>,
                                  %b: memref<8x4096x7168xf8E4M3FN>,
                                  %m: memref<8xi32>, %o: memref<8x256x4096xbf16>) {
  gg.grouped_matmul masked a(%a : memref<8x256x7168xf8E4M3FN>)
      b(%b : memref<8x4096x7168xf8E4M3FN>) groups(%m : memref<8xi32>)
      out(%o : memref<8x256x4096xbf16>) {expected_m = 150 : i64}
  return
}

// -----

// Beyond 4 waves of 128x128 tiles (G16 M384, counts around 192: 1,024
// tiles, 7.76 waves): 64x256 split tiles, whatever their waves.
// CHECK-LABEL: func.func @masked_fp8_beyond_four_waves
// CHECK: config = #gg.config<block = [64, 256, 128], stages = {{[0-9]+}}, cluster = [1, 1], sms = 132, split_n = 2>
func.func @masked_fp8_beyond_four_waves(%a: memref<16x384x7168xf8E4M3FN>,
                                        %b: memref<16x4096x7168xf8E4M3FN>,
                                        %m: memref<16xi32>, %o: memref<16x384x4096xbf16>) {
  gg.grouped_matmul masked a(%a : memref<16x384x7168xf8E4M3FN>)
      b(%b : memref<16x4096x7168xf8E4M3FN>) groups(%m : memref<16xi32>)
      out(%o : memref<16x384x4096xbf16>) {expected_m = 192 : i64}
  return
}

// -----

// The same batch at N = 4,032, no multiple of 256 (no split tiles), with
// K 7,168: 128x192 tiles in pairs sharing B.
// CHECK-LABEL: func.func @masked_fp8_paired_wide
// CHECK: config = #gg.config<block = [128, 192, 128], stages = {{[0-9]+}}, cluster = [2, 1], sms = 132>
func.func @masked_fp8_paired_wide(%a: memref<16x384x7168xf8E4M3FN>,
                                  %b: memref<16x4032x7168xf8E4M3FN>,
                                  %m: memref<16xi32>, %o: memref<16x384x4032xbf16>) {
  gg.grouped_matmul masked a(%a : memref<16x384x7168xf8E4M3FN>)
      b(%b : memref<16x4032x7168xf8E4M3FN>) groups(%m : memref<16xi32>)
      out(%o : memref<16x384x4032xbf16>) {expected_m = 192 : i64}
  return
}

// -----

// Many waves with K 2,048 (G32 M256 N7168, about 21): 64x256 split tiles.
// CHECK-LABEL: func.func @masked_fp8_short_k_many_waves
// CHECK: config = #gg.config<block = [64, 256, 128], stages = {{[0-9]+}}, cluster = [1, 1], sms = 132, split_n = 2>
func.func @masked_fp8_short_k_many_waves(%a: memref<32x256x2048xf8E4M3FN>,
                                         %b: memref<32x7168x2048xf8E4M3FN>,
                                         %m: memref<32xi32>, %o: memref<32x256x7168xbf16>) {
  gg.grouped_matmul masked a(%a : memref<32x256x2048xf8E4M3FN>)
      b(%b : memref<32x7168x2048xf8E4M3FN>) groups(%m : memref<32xi32>)
      out(%o : memref<32x256x7168xbf16>) {expected_m = 128 : i64}
  return
}

// -----

// The same batch at N = 2048 fills two waves either way: it keeps 128x128.
// CHECK-LABEL: func.func @masked_fp8_same_waves
// CHECK: config = #gg.config<block = [128, 128, 128],
func.func @masked_fp8_same_waves(%a: memref<8x256x7168xf8E4M3FN>,
                                 %b: memref<8x2048x7168xf8E4M3FN>,
                                 %m: memref<8xi32>, %o: memref<8x256x2048xbf16>) {
  gg.grouped_matmul masked a(%a : memref<8x256x7168xf8E4M3FN>)
      b(%b : memref<8x2048x7168xf8E4M3FN>) groups(%m : memref<8xi32>)
      out(%o : memref<8x256x2048xbf16>) {expected_m = 154 : i64}
  return
}

// -----

// Full groups (expected_m = M) fill as many waves on either tile: 128x128.
// Below 256 rows a group (M 192) the rule does not apply at all.
// CHECK-LABEL: func.func @masked_fp8_full_groups
// CHECK: config = #gg.config<block = [128, 128, 128],
func.func @masked_fp8_full_groups(%a: memref<4x256x7168xf8E4M3FN>,
                                  %b: memref<4x4096x7168xf8E4M3FN>,
                                  %m: memref<4xi32>, %o: memref<4x256x4096xbf16>) {
  gg.grouped_matmul masked a(%a : memref<4x256x7168xf8E4M3FN>)
      b(%b : memref<4x4096x7168xf8E4M3FN>) groups(%m : memref<4xi32>)
      out(%o : memref<4x256x4096xbf16>) {expected_m = 256 : i64}
  return
}
// CHECK-LABEL: func.func @masked_fp8_below_256_rows
// CHECK: config = #gg.config<block = [128, 128, 128],
func.func @masked_fp8_below_256_rows(%a: memref<16x192x7168xf8E4M3FN>,
                                     %b: memref<16x4096x7168xf8E4M3FN>,
                                     %m: memref<16xi32>, %o: memref<16x192x4096xbf16>) {
  gg.grouped_matmul masked a(%a : memref<16x192x7168xf8E4M3FN>)
      b(%b : memref<16x4096x7168xf8E4M3FN>) groups(%m : memref<16xi32>)
      out(%o : memref<16x192x4096xbf16>) {expected_m = 81 : i64}
  return
}

// -----

// A small f8 decode batch whose N = 2112 does not take 256-wide tiles
// keeps 128-row tiles (two consumer warpgroups take turns scaling their K
// blocks); 2112 is divisible by 64 only; f8 rows of 128 bytes are 128
// elements.
// CHECK-LABEL: func.func @masked_decode_fp8
// CHECK: config = #gg.config<block = [128, 64, 128], stages = 8, cluster = [1, 1], sms = 132>
func.func @masked_decode_fp8(%a: memref<16x128x7168xf8E4M3FN>,
                             %b: memref<16x2112x7168xf8E4M3FN>,
                             %m: memref<16xi32>, %o: memref<16x128x2112xbf16>) {
  gg.grouped_matmul masked a(%a : memref<16x128x7168xf8E4M3FN>)
      b(%b : memref<16x2112x7168xf8E4M3FN>) groups(%m : memref<16xi32>)
      out(%o : memref<16x128x2112xbf16>) {expected_m = 12 : i64}
  return
}

// -----

// TF32: 32 f32 elements per 128-byte row; N = 1000 divides by none of
// 256/128/64, so 128 with a ragged last column tile.
// CHECK-LABEL: func.func @tf32_ragged_n
// CHECK: config = #gg.config<block = [128, 128, 32], stages = 7, cluster = [1, 1], sms = 132>
func.func @tf32_ragged_n(%a: memref<?x512xf32>, %b: memref<4x1000x512xf32>,
                         %off: memref<5xi64>, %o: memref<?x1000xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xf32>)
      b(%b : memref<4x1000x512xf32>) groups(%off : memref<5xi64>)
      out(%o : memref<?x1000xf32>) {tf32}
  return
}

// -----

// A config the user wrote is kept as it is.
// CHECK-LABEL: func.func @user_config_kept
// CHECK: config = #gg.config<block = [64, 128, 64], stages = 2, cluster = [2, 1], sms = 66>
func.func @user_config_kept(%a: memref<?x256xbf16>, %b: memref<2x256x256xbf16>,
                            %off: memref<3xi32>, %o: memref<?x256xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<2x256x256xbf16>) groups(%off : memref<3xi32>)
      out(%o : memref<?x256xbf16>)
      {config = #gg.config<block = [64, 128, 64], stages = 2, cluster = [2, 1], sms = 66>}
  return
}

// -----

// f8 keeps a second accumulator per K block (two-level accumulation), so
// block N stays at 128; 128x128 scales of B need whole 128-column blocks,
// even where N = 2112 is divisible by 64 only. Each stage also carries A's
// scales for its 128 rows and B's (528 bytes), which leaves room for 6.
// CHECK-LABEL: func.func @fp8_block_scaled
// CHECK: config = #gg.config<block = [128, 128, 128], stages = 6, cluster = [1, 1], sms = 132>
func.func @fp8_block_scaled(%a: memref<?x512xf8E4M3FN>, %sa: memref<4x?xf32>,
                            %b: memref<8x2112x512xf8E4M3FN>, %sb: memref<8x17x4xf32>,
                            %off: memref<9xi32>, %o: memref<?x2112xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>)
      b(%b : memref<8x2112x512xf8E4M3FN>) groups(%off : memref<9xi32>)
      a_scale(%sa : memref<4x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<8x17x4xf32>, <block 128x128>)
      out(%o : memref<?x2112xbf16>)
  return
}

// -----

// A small bf16 decode batch (expected_m <= 64) takes 64-row tiles.
// CHECK-LABEL: func.func @masked_decode_bf16
// CHECK: config = #gg.config<block = [64, 128, 64], stages = 8, cluster = [1, 1], sms = 132>
func.func @masked_decode_bf16(%a: memref<16x128x7168xbf16>,
                              %b: memref<16x4096x7168xbf16>,
                              %m: memref<16xi32>, %o: memref<16x128x4096xbf16>) {
  gg.grouped_matmul masked a(%a : memref<16x128x7168xbf16>)
      b(%b : memref<16x4096x7168xbf16>) groups(%m : memref<16xi32>)
      out(%o : memref<16x128x4096xbf16>) {expected_m = 24 : i64}
  return
}

// -----

// stages = 0 in a user's config: the deepest pipeline that fits that tile.
// CHECK-LABEL: func.func @stages_chosen_for_user_tile
// CHECK: config = #gg.config<block = [128, 128, 64], stages = 7, cluster = [1, 1], sms = 132>
func.func @stages_chosen_for_user_tile(%a: memref<?x256xbf16>, %b: memref<2x256x256xbf16>,
                                       %off: memref<3xi32>, %o: memref<?x256xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<2x256x256xbf16>) groups(%off : memref<3xi32>)
      out(%o : memref<?x256xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 0, cluster = [1, 1], sms = 132>}
  return
}

// -----

// f8 takes 128-row tiles whatever its groups' size: its promotions
// pipeline on two consumer warpgroups, which 192-row tiles' three have no
// registers for.
// CHECK-LABEL: func.func @fp8_masked_256_rows
// CHECK: config = #gg.config<block = [128, 128, 128], stages = 7
func.func @fp8_masked_256_rows(%a: memref<4x256x512xf8E4M3FN>,
                               %b: memref<4x512x512xf8E4M3FN>,
                               %m: memref<4xi32>, %o: memref<4x256x512xbf16>) {
  gg.grouped_matmul masked a(%a : memref<4x256x512xf8E4M3FN>)
      b(%b : memref<4x512x512xf8E4M3FN>) groups(%m : memref<4xi32>)
      out(%o : memref<4x256x512xbf16>)
  return
}
// CHECK-LABEL: func.func @fp8_masked_1024_rows
// CHECK: config = #gg.config<block = [128, 128, 128], stages = 7
func.func @fp8_masked_1024_rows(%a: memref<4x1024x512xf8E4M3FN>,
                                %b: memref<4x512x512xf8E4M3FN>,
                                %m: memref<4xi32>, %o: memref<4x1024x512xbf16>) {
  gg.grouped_matmul masked a(%a : memref<4x1024x512xf8E4M3FN>)
      b(%b : memref<4x512x512xf8E4M3FN>) groups(%m : memref<4xi32>)
      out(%o : memref<4x1024x512xbf16>)
  return
}

// -----

// Groups of 17 to 127 rows on sm_90a take 64x256 tiles on one consumer
// warpgroup (kHalfHeightGroupRows) where A's rows are gathered (a_rows) or
// K is at most 1,024; 128 rows, or K = 2,048 without a_rows, keep 128-row
// tiles.
// CHECK-LABEL: func.func @half_height_gathered
// CHECK: config = #gg.config<block = [64, 256, 64], stages = 5,
// CHECK-LABEL: func.func @half_height_short_k
// CHECK: config = #gg.config<block = [64, 256, 64], stages = 5,
// CHECK-LABEL: func.func @full_height_at_128_rows
// CHECK: config = #gg.config<block = [128, 128, 64], stages = 7,
// CHECK-LABEL: func.func @full_height_long_k
// CHECK: config = #gg.config<block = [128, 128, 64], stages = 7,
func.func @half_height_gathered(%a: memref<?x2048xbf16>, %r: memref<?xi32>,
                                %b: memref<128x1536x2048xbf16>, %off: memref<129xi32>,
                                %o: memref<?x768xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2048xbf16>) a_rows(%r : memref<?xi32>)
      b(%b : memref<128x1536x2048xbf16>) groups(%off : memref<129xi32>)
      out(%o : memref<?x768xbf16>) {column_halves, expected_m = 64 : i64}
      epilogue {
  ^bb0(%gate: f32, %up: f32, %g: index):
    %s = gg.silu %gate : f32
    %h = arith.mulf %s, %up : f32
    gg.yield %h : f32
  }
  return
}
func.func @half_height_short_k(%a: memref<?x768xbf16>, %b: memref<128x2048x768xbf16>,
                               %off: memref<129xi32>, %o: memref<?x2048xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x768xbf16>)
      b(%b : memref<128x2048x768xbf16>) groups(%off : memref<129xi32>)
      out(%o : memref<?x2048xbf16>) {expected_m = 32 : i64}
  return
}
func.func @full_height_at_128_rows(%a: memref<?x768xbf16>, %b: memref<128x2048x768xbf16>,
                                   %off: memref<129xi32>, %o: memref<?x2048xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x768xbf16>)
      b(%b : memref<128x2048x768xbf16>) groups(%off : memref<129xi32>)
      out(%o : memref<?x2048xbf16>) {expected_m = 128 : i64}
  return
}
func.func @full_height_long_k(%a: memref<?x2048xbf16>, %b: memref<128x2048x2048xbf16>,
                              %off: memref<129xi32>, %o: memref<?x2048xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2048xbf16>)
      b(%b : memref<128x2048x2048xbf16>) groups(%off : memref<129xi32>)
      out(%o : memref<?x2048xbf16>) {expected_m = 64 : i64}
  return
}

// -----

// Contiguous FP8 MoE projections of short K whose N is a multiple of 192
// take 128x192 tiles from 128 rows a group (the Qwen3-like up projection,
// N 1,536 K 2,048; the gpt-oss-like down projection, N 2,880 K 2,880),
// B's 128x128 scale blocks straddled; not at 64 rows, not where N is no
// multiple of 192 (2,048). With K past 3,072 where the serial loop's ring
// stages are constant (plain groups), not with zero_ungrouped (counted).
// CHECK-LABEL: func.func @fp8_wide_up
// CHECK: config = #gg.config<block = [128, 192, 128], stages = 5,
// CHECK-LABEL: func.func @fp8_wide_gptoss_down
// CHECK: config = #gg.config<block = [128, 192, 128], stages = 5,
// CHECK-LABEL: func.func @fp8_wide_64_rows
// CHECK: config = #gg.config<block = [128, 128, 128],
// CHECK-LABEL: func.func @fp8_wide_long_k
// CHECK: config = #gg.config<block = [128, 192, 128],
// CHECK-LABEL: func.func @fp8_wide_long_k_zero_ungrouped
// CHECK: config = #gg.config<block = [128, 128, 128],
// CHECK-LABEL: func.func @fp8_wide_n_2048
// CHECK: config = #gg.config<block = [128, 128, 128],
func.func @fp8_wide_up(%a: memref<?x2048xf8E4M3FN>, %sa: memref<16x?xf32>,
                       %b: memref<128x1536x2048xf8E4M3FN>, %sb: memref<128x12x16xf32>,
                       %off: memref<129xi32>, %o: memref<?x1536xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b : memref<128x1536x2048xf8E4M3FN>) groups(%off : memref<129xi32>)
      a_scale(%sa : memref<16x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<128x12x16xf32>, <block 128x128>)
      out(%o : memref<?x1536xbf16>) {expected_m = 256 : i64}
  return
}
func.func @fp8_wide_gptoss_down(%a: memref<?x2880xf8E4M3FN>, %sa: memref<23x?xf32>,
                                %b: memref<128x2880x2880xf8E4M3FN>, %sb: memref<128x23x23xf32>,
                                %off: memref<129xi32>, %o: memref<?x2880xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2880xf8E4M3FN>)
      b(%b : memref<128x2880x2880xf8E4M3FN>) groups(%off : memref<129xi32>)
      a_scale(%sa : memref<23x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<128x23x23xf32>, <block 128x128>)
      out(%o : memref<?x2880xbf16>) {expected_m = 128 : i64}
  return
}
func.func @fp8_wide_64_rows(%a: memref<?x2048xf8E4M3FN>, %sa: memref<16x?xf32>,
                            %b: memref<128x1536x2048xf8E4M3FN>, %sb: memref<128x12x16xf32>,
                            %off: memref<129xi32>, %o: memref<?x1536xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b : memref<128x1536x2048xf8E4M3FN>) groups(%off : memref<129xi32>)
      a_scale(%sa : memref<16x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<128x12x16xf32>, <block 128x128>)
      out(%o : memref<?x1536xbf16>) {expected_m = 64 : i64}
  return
}
func.func @fp8_wide_long_k(%a: memref<?x4096xf8E4M3FN>, %sa: memref<32x?xf32>,
                           %b: memref<8x1536x4096xf8E4M3FN>, %sb: memref<8x12x32xf32>,
                           %off: memref<9xi32>, %o: memref<?x1536xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x4096xf8E4M3FN>)
      b(%b : memref<8x1536x4096xf8E4M3FN>) groups(%off : memref<9xi32>)
      a_scale(%sa : memref<32x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<8x12x32xf32>, <block 128x128>)
      out(%o : memref<?x1536xbf16>) {expected_m = 1024 : i64}
  return
}
func.func @fp8_wide_long_k_zero_ungrouped(%a: memref<?x4096xf8E4M3FN>, %sa: memref<32x?xf32>,
                                          %b: memref<8x1536x4096xf8E4M3FN>, %sb: memref<8x12x32xf32>,
                                          %off: memref<9xi32>, %o: memref<?x1536xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x4096xf8E4M3FN>)
      b(%b : memref<8x1536x4096xf8E4M3FN>) groups(%off : memref<9xi32>)
      a_scale(%sa : memref<32x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<8x12x32xf32>, <block 128x128>)
      out(%o : memref<?x1536xbf16>) {expected_m = 1024 : i64, zero_ungrouped}
  return
}
func.func @fp8_wide_n_2048(%a: memref<?x768xf8E4M3FN>, %sa: memref<6x?xf32>,
                           %b: memref<128x2048x768xf8E4M3FN>, %sb: memref<128x16x6xf32>,
                           %off: memref<129xi32>, %o: memref<?x2048xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x768xf8E4M3FN>)
      b(%b : memref<128x2048x768xf8E4M3FN>) groups(%off : memref<129xi32>)
      a_scale(%sa : memref<6x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<128x16x6xf32>, <block 128x128>)
      out(%o : memref<?x2048xbf16>) {expected_m = 1024 : i64}
  return
}

// -----

// sm_89's FP8 mma.sync kernels keep 128 columns a warpgroup (no
// setmaxnreg): the 192-column rule is wgmma's.
// CHECK-LABEL: func.func @fp8_wide_up_sm89
// CHECK: config = #gg.config<block = [128, 128, 128],
module attributes {gg.target = "sm_89"} {
func.func @fp8_wide_up_sm89(%a: memref<?x2048xf8E4M3FN>, %sa: memref<16x?xf32>,
                            %b: memref<128x1536x2048xf8E4M3FN>, %sb: memref<128x12x16xf32>,
                            %off: memref<129xi32>, %o: memref<?x1536xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b : memref<128x1536x2048xf8E4M3FN>) groups(%off : memref<129xi32>)
      a_scale(%sa : memref<16x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<128x12x16xf32>, <block 128x128>)
      out(%o : memref<?x1536xbf16>) {expected_m = 256 : i64}
  return
}
}

// -----

// Step 3d, the FP8 weight gradient (k_grouped, 1x128 scales over the
// tokens): a bf16 gradient written takes the wide tile (128 x 160; the
// store pool then leaves it four stages, gg-plan-kernel serial promotion)
// from 256 tokens an expert; below that, and where it adds to an f32
// gradient below 2,048 tokens, 128 x 128.
// CHECK-LABEL: func.func @wgrad_bf16_256
// CHECK: config = #gg.config<block = [128, 160, 128],
// CHECK-LABEL: func.func @wgrad_bf16_255
// CHECK: config = #gg.config<block = [128, 128, 128],
// CHECK-LABEL: func.func @wgrad_f32_added_1024
// CHECK: config = #gg.config<block = [128, 128, 128],
module attributes {gg.target = "sm_90a"} {
func.func @wgrad_bf16_256(%a: memref<2048x?xf8E4M3FN>, %b: memref<768x?xf8E4M3FN>,
                          %g: memref<129xi32>, %sa: memref<?x2048xf32>, %sb: memref<?x768xf32>,
                          %o: memref<128x2048x768xbf16>) {
  gg.grouped_matmul k_grouped a(%a : memref<2048x?xf8E4M3FN>) b(%b : memref<768x?xf8E4M3FN>)
      groups(%g : memref<129xi32>)
      a_scale(%sa : memref<?x2048xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<?x768xf32>, <block 1x128, mn_major>)
      out(%o : memref<128x2048x768xbf16>) {expected_m = 256 : i64}
  return
}
func.func @wgrad_bf16_255(%a: memref<2048x?xf8E4M3FN>, %b: memref<768x?xf8E4M3FN>,
                          %g: memref<129xi32>, %sa: memref<?x2048xf32>, %sb: memref<?x768xf32>,
                          %o: memref<128x2048x768xbf16>) {
  gg.grouped_matmul k_grouped a(%a : memref<2048x?xf8E4M3FN>) b(%b : memref<768x?xf8E4M3FN>)
      groups(%g : memref<129xi32>)
      a_scale(%sa : memref<?x2048xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<?x768xf32>, <block 1x128, mn_major>)
      out(%o : memref<128x2048x768xbf16>) {expected_m = 255 : i64}
  return
}
func.func @wgrad_f32_added_1024(%a: memref<2048x?xf8E4M3FN>, %b: memref<768x?xf8E4M3FN>,
                                %g: memref<129xi32>, %sa: memref<?x2048xf32>,
                                %sb: memref<?x768xf32>, %o: memref<128x2048x768xf32>) {
  gg.grouped_matmul k_grouped a(%a : memref<2048x?xf8E4M3FN>) b(%b : memref<768x?xf8E4M3FN>)
      groups(%g : memref<129xi32>)
      a_scale(%sa : memref<?x2048xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<?x768xf32>, <block 1x128, mn_major>)
      out(%o : memref<128x2048x768xf32>) {accumulate, expected_m = 1024 : i64}
  return
}
}

// -----

// Step 3f, an out quantised in 1x128 blocks (out_scale): each consumer
// warpgroup holds whole 128-column blocks of out. The FP8 prefill shape
// that takes 128 x 192 with a bf16 out (step 3e) takes 128 x 128; a bf16
// SwiGLU with small groups, 128 x 128 elsewhere (step 3c), takes 128 x 256,
// 128 outputs.
// CHECK-LABEL: func.func @fp8_bf16_out
// CHECK: config = #gg.config<block = [128, 192, 128],
// CHECK-LABEL: func.func @fp8_quantized_out
// CHECK: config = #gg.config<block = [128, 128, 128],
// CHECK-LABEL: func.func @swiglu_quantized_out
// CHECK: config = #gg.config<block = [128, 256, 64],
func.func @fp8_bf16_out(%a: memref<?x2048xf8E4M3FN>, %b: memref<8x4608x2048xf8E4M3FN>,
                        %g: memref<9xi32>, %sa: memref<16x?xf32>, %sb: memref<8x36x16xf32>,
                        %o: memref<?x4608xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b : memref<8x4608x2048xf8E4M3FN>) groups(%g : memref<9xi32>)
      a_scale(%sa : memref<16x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<8x36x16xf32>, <block 128x128>)
      out(%o : memref<?x4608xbf16>) {expected_m = 1024 : i64}
  return
}
func.func @fp8_quantized_out(%a: memref<?x2048xf8E4M3FN>, %b: memref<8x4608x2048xf8E4M3FN>,
                             %g: memref<9xi32>, %sa: memref<16x?xf32>, %sb: memref<8x36x16xf32>,
                             %o: memref<?x4608xf8E4M3FN>, %so: memref<36x?xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b : memref<8x4608x2048xf8E4M3FN>) groups(%g : memref<9xi32>)
      a_scale(%sa : memref<16x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<8x36x16xf32>, <block 128x128>)
      out(%o : memref<?x4608xf8E4M3FN>) out_scale(%so : memref<36x?xf32>) {expected_m = 1024 : i64}
  return
}
func.func @swiglu_quantized_out(%a: memref<?x2048xbf16>, %b: memref<128x1536x2048xbf16>,
                                %g: memref<129xi32>, %o: memref<?x768xf8E4M3FN>,
                                %so: memref<6x?xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2048xbf16>)
      b(%b : memref<128x1536x2048xbf16>) groups(%g : memref<129xi32>)
      out(%o : memref<?x768xf8E4M3FN>) out_scale(%so : memref<6x?xf32>)
      {column_pairs, expected_m = 64 : i64} epilogue {
  ^bb0(%gate: f32, %up: f32, %group: index):
    %s = gg.silu %gate : f32
    %y = arith.mulf %s, %up : f32
    gg.yield %y : f32
  }
  return
}
