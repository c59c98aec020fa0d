// RUN: ggc-opt %s -split-input-file -gg-schedule-groups -gg-eliminate-padding -gg-plan-overfetch -gg-plan-kernel -gg-lower-to-nvvm -verify-diagnostics

func.func @no_config(%a: memref<?x256xbf16>, %b: memref<4x128x256xbf16>,
                     %off: memref<5xi32>, %o: memref<?x128xbf16>) {
  // expected-error @+1 {{has no #gg.config; run gg-select-config before gg-schedule-groups}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x128x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x128xbf16>)
  return
}

// -----

func.func @block_k_not_one_row(%a: memref<?x256xbf16>, %b: memref<4x128x256xbf16>,
                               %off: memref<5xi32>, %o: memref<?x128xbf16>) {
  // expected-error @+1 {{block K of 128 gives 256-byte rows of A; the kernel needs exactly 128}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x128x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x128xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 2, cluster = [1, 1], sms = 132>}
  return
}

// -----

func.func @k_not_16_bytes(%a: memref<?x100xbf16>, %b: memref<4x128x100xbf16>,
                          %off: memref<5xi32>, %o: memref<?x128xbf16>) {
  // expected-error @+1 {{K = 100 gives rows of 200 bytes; TMA needs a multiple of 16 (K a multiple of 8)}}
  gg.grouped_matmul contiguous a(%a : memref<?x100xbf16>)
      b(%b : memref<4x128x100xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x128xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 2, cluster = [1, 1], sms = 132>}
  return
}

// -----

func.func @n_not_8(%a: memref<?x256xbf16>, %b: memref<4x100x256xbf16>,
                   %off: memref<5xi32>, %o: memref<?x100xbf16>) {
  // expected-error @+1 {{N = 100 must be a multiple of 8}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x100x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x100xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 2, cluster = [1, 1], sms = 132>}
  return
}

// -----

// expected-error @+1 {{holds 2 gg.grouped_matmul ops; gg-lower-to-nvvm makes one kernel per function}}
func.func @two(%a: memref<?x256xbf16>, %b: memref<4x128x256xbf16>,
               %off: memref<5xi32>, %o: memref<?x128xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x128x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x128xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 2, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x128x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x128xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 2, cluster = [1, 1], sms = 132>}
  return
}

// -----

func.func @tanh_epilogue(%a: memref<?x256xbf16>, %b: memref<4x128x256xbf16>,
                         %off: memref<5xi32>, %o: memref<?x128xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x128x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x128xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 2, cluster = [1, 1], sms = 132>}
      epilogue {
      ^bb0(%acc: f32, %g: index):
        // expected-error @+1 {{is not supported in epilogues by the NVPTX lowering}}
        %t = math.tanh %acc : f32
        gg.yield %t : f32
      }
  return
}

// -----

func.func @cluster(%a: memref<?x256xbf16>, %b: memref<4x128x256xbf16>,
                   %off: memref<5xi32>, %o: memref<?x128xbf16>) {
  // expected-error @+1 {{is not supported by gg-lower-to-nvvm yet: clusters other than [1, 1] and [2, 1]}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x128x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x128xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 2, cluster = [4, 1], sms = 132>}
  return
}

// -----

func.func @cluster_padded(%a: memref<?x256xbf16>, %b: memref<4x128x256xbf16>,
                          %tags: memref<?xi32>, %o: memref<?x128xbf16>) {
  // expected-error @+1 {{is not supported by gg-lower-to-nvvm yet: clusters with padded_contiguous}}
  gg.grouped_matmul padded_contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x128x256xbf16>) groups(%tags : memref<?xi32>)
      out(%o : memref<?x128xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 2, cluster = [2, 1], sms = 132>, store_pool = array<i64>}
  return
}

// -----

// One thread per column stages B's per-column scales, so a tile takes at
// most 128 columns.
func.func @column_scales_block_n_256(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>,
                                     %off: memref<5xi32>, %sb: memref<4x256x4xf32>,
                                     %o: memref<?x256xbf16>) {
  // expected-error @+1 {{is not supported by gg-lower-to-nvvm yet: 1x128 block scales of 'b' with block N over 128}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>)
      b(%b : memref<4x256x512xf8E4M3FN>) groups(%off : memref<5xi32>)
      b_scale(%sb : memref<4x256x4xf32>, <block 1x128>)
      out(%o : memref<?x256xbf16>)
      {config = #gg.config<block = [128, 192, 128], stages = 2, cluster = [1, 1], sms = 132>}
  return
}

// -----

func.func @b_block_scales_on_224_columns(%a: memref<?x512xf8E4M3FN>, %sa: memref<4x?xf32>,
                                         %b: memref<4x256x512xf8E4M3FN>, %sb: memref<4x2x4xf32>,
                                         %off: memref<5xi32>, %o: memref<?x256xbf16>) {
  // expected-error @+1 {{block N must be a multiple of 128, or its warpgroups' columns touch at most two 128-column scale blocks (e.g. 112 or 192), with 128x128 scales of 'b', got 224}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>)
      b(%b : memref<4x256x512xf8E4M3FN>) groups(%off : memref<5xi32>)
      a_scale(%sa : memref<4x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<4x2x4xf32>, <block 128x128>)
      out(%o : memref<?x256xbf16>)
      {config = #gg.config<block = [128, 224, 128], stages = 2, cluster = [1, 1], sms = 132>}
  return
}

// -----

func.func @stages_not_chosen(%a: memref<?x256xbf16>, %b: memref<4x128x256xbf16>,
                             %off: memref<5xi32>, %o: memref<?x128xbf16>) {
  // expected-error @+1 {{has stages = 0 in its #gg.config; run gg-select-config to choose them}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x128x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x128xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 0, cluster = [1, 1], sms = 132>}
  return
}

// -----

func.func @padded_tall_tiles(%a: memref<?x256xbf16>, %b: memref<4x128x256xbf16>,
                             %tags: memref<?xi32>, %o: memref<?x128xbf16>) {
  // expected-error @+1 {{padded_contiguous needs block M to divide the 128-row group alignment (64 or 128), got 256}}
  gg.grouped_matmul padded_contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x128x256xbf16>) groups(%tags : memref<?xi32>)
      out(%o : memref<?x128xbf16>)
      {config = #gg.config<block = [256, 128, 64], stages = 2, cluster = [1, 1], sms = 132>, store_pool = array<i64>}
  return
}

// -----

// Four consumer warpgroups and a producer share the register file: each
// consumer thread gets at most 112 registers, too few for a 64x256 f32
// accumulator's wgmma.
func.func @accumulator_too_big(%a: memref<?x256xbf16>, %b: memref<4x256x256xbf16>,
                               %off: memref<5xi32>, %o: memref<?x256xbf16>) {
  // expected-error @+1 {{the 128-register accumulator of a warpgroup's 256 columns does not fit the 112 registers per consumer thread of a CTA of 640 threads; use a smaller block N or M}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x256x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x256xbf16>)
      {config = #gg.config<block = [256, 256, 64], stages = 2, cluster = [1, 1], sms = 132>}
  return
}

// -----

// column_halves pairs a column with one half a tile away: each CTA loads
// its own B.
func.func @halves_in_a_cluster(%a: memref<?x256xbf16>, %b: memref<4x256x256xbf16>,
                               %off: memref<5xi32>, %o: memref<?x128xbf16>) {
  // expected-error @+1 {{is not supported by gg-lower-to-nvvm yet: column_halves with a cluster (each CTA loads its own B)}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x256x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x128xbf16>)
      {column_halves, config = #gg.config<block = [128, 128, 64], stages = 2, cluster = [2, 1], sms = 132>}
      epilogue {
      ^bb0(%x: f32, %y: f32, %gi: index):
        gg.yield %x : f32
      }
  return
}

// -----

// Gathered rows: each CTA copies its own rows of A, where a cluster's pair
// would share them.
func.func @gathered_rows_in_a_cluster(%a: memref<?x256xbf16>, %r: memref<?xi32>,
                                      %b: memref<4x256x256xbf16>,
                                      %off: memref<5xi32>, %o: memref<?x256xbf16>) {
  // expected-error @+1 {{is not supported by gg-lower-to-nvvm yet: a_rows with a cluster (each CTA gathers its own rows of A)}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) a_rows(%r : memref<?xi32>)
      b(%b : memref<4x256x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x256xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 2, cluster = [2, 1], sms = 132>}
  return
}

// -----

// Seven stages of 128x128x64 bf16 tiles fill the 227 KiB; a table of 1,024
// counts does not fit beside them.
func.func @group_table_too_large(%a: memref<1024x128x256xbf16>, %b: memref<1024x256x256xbf16>,
                                 %m: memref<1024xi32>, %o: memref<1024x128x256xbf16>) {
  // expected-error @+1 {{schedule group_reads = shared adds a table of 4096 bytes, which takes the kernel's shared memory to 235520 bytes, more than the target's 232448; lower the stages, or read the groups from global memory (group_reads = global)}}
  gg.grouped_matmul masked a(%a : memref<1024x128x256xbf16>)
      b(%b : memref<1024x256x256xbf16>) groups(%m : memref<1024xi32>)
      out(%o : memref<1024x128x256xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 7, cluster = [1, 1], sms = 132>,
       schedule = #gg.schedule<order = m_fastest, group_reads = shared>}
  return
}

// -----

// A CTA alone has no peer to share A's rows with.
func.func @odd_block_a_alone(%a: memref<4x128x256xbf16>, %b: memref<4x256x256xbf16>,
                             %m: memref<4xi32>, %o: memref<4x128x256xbf16>) {
  // expected-error @+1 {{schedule odd_block_a = multicast shares A's rows between the CTAs of a pair by TMA: it needs cluster [2, 1], tensor maps (sm_90a) and K-major rows of A that are not gathered, got cluster 1}}
  gg.grouped_matmul masked a(%a : memref<4x128x256xbf16>)
      b(%b : memref<4x256x256xbf16>) groups(%m : memref<4xi32>)
      out(%o : memref<4x128x256xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 2, cluster = [1, 1], sms = 132>,
       schedule = #gg.schedule<order = m_fastest, odd_block_a = multicast>}
  return
}

// -----

// A quantised out's 1x128 blocks lie in one warpgroup's quads: DeepGEMM's
// 192-column tile splits a block between two tiles.
func.func @quantized_192(%a: memref<?x256xf8E4M3FN>, %b: memref<8x384x256xf8E4M3FN>,
                         %off: memref<9xi32>, %sa: memref<2x?xf32>, %sb: memref<8x3x2xf32>,
                         %out: memref<?x384xf8E4M3FN>, %so: memref<3x?xf32>) {
  // expected-error @+1 {{quantises out in 1x128 blocks (out_scale), which needs each consumer warp to hold whole 128-column blocks of a row, or two warpgroups one block: config block N / split_n a multiple of 128 (of 256 with column_pairs or column_halves) or split_n = 2 over 128 output columns, and warp_columns = 1; got 192 output columns a warpgroup and warp_columns = 1}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xf8E4M3FN>)
      b(%b : memref<8x384x256xf8E4M3FN>) groups(%off : memref<9xi32>)
      a_scale(%sa : memref<2x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<8x3x2xf32>, <block 128x128>)
      out(%out : memref<?x384xf8E4M3FN>) out_scale(%so : memref<3x?xf32>)
      {config = #gg.config<block = [128, 192, 128], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>}
  return
}

// -----

// sm_80 converts nothing to FP8: a quantised out is refused by name.
module attributes {gg.target = "sm_80"} {
func.func @quantized_sm80(%a: memref<?x256xbf16>, %b: memref<8x256x256xbf16>,
                          %off: memref<9xi32>, %out: memref<?x256xf8E4M3FN>,
                          %so: memref<2x?xf32>) {
  // expected-error @+1 {{quantises out to FP8 (out_scale), which takes a target that converts to FP8 (sm_89, sm_90a)}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<8x256x256xbf16>) groups(%off : memref<9xi32>)
      out(%out : memref<?x256xf8E4M3FN>) out_scale(%so : memref<2x?xf32>)
      {config = #gg.config<block = [128, 256, 64], stages = 3, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>}
  return
}
}
