// RUN: ggc-opt %s -split-input-file -gg-schedule-groups | FileCheck %s

// Before: a configured contiguous op. After: M blocks first, since a
// group's row count only arrives with the offsets at run time; CTAs running
// at once then read the same columns of the group's B. A tall group's M
// blocks go in bands of 19: a wave of 132 tiles of 128x256 loads 19 A
// tiles and 7 B tiles (4,224 rows' worth per K element), the fewest (15
// by 9 ties; the tallest band of a tie wins).
// CHECK-LABEL: func.func @contiguous
// CHECK: schedule = #gg.schedule<order = m_fastest, m_band = 19>
func.func @contiguous(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                      %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// A masked group of 128 M blocks and 16 N blocks spans several waves of
// 132 tiles. M first: a wave loads 128 A tiles of 128 rows and 2 B tiles of
// 256 columns (16896 rows' worth); N first: 9 A tiles and 16 B tiles (5248).
// CHECK-LABEL: func.func @tall_masked_groups
// CHECK: schedule = #gg.schedule<order = n_fastest>
func.func @tall_masked_groups(%a: memref<2x16384x512xbf16>,
                              %b: memref<2x4096x512xbf16>, %m: memref<2xi32>,
                              %o: memref<2x16384x4096xbf16>) {
  gg.grouped_matmul masked a(%a : memref<2x16384x512xbf16>)
      b(%b : memref<2x4096x512xbf16>) groups(%m : memref<2xi32>)
      out(%o : memref<2x16384x4096xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// Contiguous f8 (an MoE layer's up projection): B keeps L2's default
// policy, since a group's M blocks read each B tile in turn; evict-first
// had them read it again from DRAM.
// CHECK-LABEL: func.func @contiguous_f8
// CHECK: schedule = #gg.schedule<order = m_fastest, m_band = {{[0-9]+}}>
// CHECK-NOT: evict_first
func.func @contiguous_f8(%a: memref<?x2048xf8E4M3FN>, %b: memref<128x1536x2048xf8E4M3FN>,
                         %off: memref<129xi32>, %o: memref<?x1536xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b : memref<128x1536x2048xf8E4M3FN>) groups(%off : memref<129xi32>)
      out(%o : memref<?x1536xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  return
}

// -----

// The same with K = 4,096 (N 4,352: B 17 MiB an expert, walked M first) and the
// host's hint, a mean rounded down to a power of two: groups count as 1.5
// times the hint. A hint of 512 or 1,024 (768 or
// 1,536 rows: 6 or 12 M blocks) is no taller than a band of 12, so the
// walk is the unbanded one and the op takes no band (no band arithmetic
// in the tile loop); 1,025 (13 M blocks) and 4,096 (48) take the band.
// CHECK-LABEL: func.func @contiguous_f8_expected_rows
// CHECK: expected_m = 512
// CHECK-SAME: schedule = #gg.schedule<order = m_fastest>
// CHECK: expected_m = 1024
// CHECK-SAME: schedule = #gg.schedule<order = m_fastest>
// CHECK: expected_m = 1025
// CHECK-SAME: schedule = #gg.schedule<order = m_fastest, m_band = 12>
// CHECK: expected_m = 4096
// CHECK-SAME: schedule = #gg.schedule<order = m_fastest, m_band = 12>
func.func @contiguous_f8_expected_rows(%a: memref<?x4096xf8E4M3FN>,
    %b: memref<128x4352x4096xf8E4M3FN>, %off: memref<129xi32>,
    %o: memref<?x4352xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x4096xf8E4M3FN>)
      b(%b : memref<128x4352x4096xf8E4M3FN>) groups(%off : memref<129xi32>)
      out(%o : memref<?x4352xbf16>)
      {expected_m = 512 : i64, config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul contiguous a(%a : memref<?x4096xf8E4M3FN>)
      b(%b : memref<128x4352x4096xf8E4M3FN>) groups(%off : memref<129xi32>)
      out(%o : memref<?x4352xbf16>)
      {expected_m = 1024 : i64, config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul contiguous a(%a : memref<?x4096xf8E4M3FN>)
      b(%b : memref<128x4352x4096xf8E4M3FN>) groups(%off : memref<129xi32>)
      out(%o : memref<?x4352xbf16>)
      {expected_m = 1025 : i64, config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul contiguous a(%a : memref<?x4096xf8E4M3FN>)
      b(%b : memref<128x4352x4096xf8E4M3FN>) groups(%off : memref<129xi32>)
      out(%o : memref<?x4352xbf16>)
      {expected_m = 4096 : i64, config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  return
}

// -----

// Fine-grained experts (B at most 4 MiB an expert, N x K: Qwen3-like
// FP8 weights of 3 MiB, and exactly 4 MiB) expected to hold 256 to 1,024
// rows walk N blocks first (and take no band); a hint of 128, taller
// groups (2,048 and 4,096: bands of 12), 4.25 MiB of FP8 weights or the
// same N x K in bf16 (6 MiB) keep M first.
// CHECK-LABEL: func.func @small_experts
// CHECK: expected_m = 128
// CHECK-SAME: schedule = #gg.schedule<order = m_fastest>
// CHECK: expected_m = 256
// CHECK-SAME: schedule = #gg.schedule<order = n_fastest>
// CHECK: expected_m = 1024
// CHECK-SAME: schedule = #gg.schedule<order = n_fastest>
// CHECK: expected_m = 2048
// CHECK-SAME: schedule = #gg.schedule<order = m_fastest, m_band = 12>
// CHECK: expected_m = 4096
// CHECK-SAME: schedule = #gg.schedule<order = m_fastest, m_band = 12>
// CHECK: memref<128x2048x2048xf8E4M3FN>
// CHECK-SAME: schedule = #gg.schedule<order = n_fastest>
// CHECK: memref<128x2048x2176xf8E4M3FN>
// CHECK-SAME: schedule = #gg.schedule<order = m_fastest>
// CHECK: memref<128x1536x2048xbf16>
// CHECK-SAME: schedule = #gg.schedule<order = m_fastest>
// FP8 weights of 14 MiB (N 7,168 x K 2,048) and of 16 MiB exactly (N
// 8,192) walk N first at a hint of 1,024 alone; 16.5 MiB keep M first.
// CHECK: memref<32x7168x2048xf8E4M3FN>
// CHECK-SAME: expected_m = 1024
// CHECK-SAME: schedule = #gg.schedule<order = n_fastest>
// CHECK: memref<32x7168x2048xf8E4M3FN>
// CHECK-SAME: expected_m = 512
// CHECK-SAME: schedule = #gg.schedule<order = m_fastest>
// CHECK: memref<32x8192x2048xf8E4M3FN>
// CHECK-SAME: expected_m = 1024
// CHECK-SAME: schedule = #gg.schedule<order = n_fastest>
// CHECK: memref<32x8448x2048xf8E4M3FN>
// CHECK-SAME: expected_m = 1024
// CHECK-SAME: schedule = #gg.schedule<order = m_fastest>
func.func @small_experts(%a: memref<?x2048xf8E4M3FN>,
    %b: memref<128x1536x2048xf8E4M3FN>, %off: memref<129xi32>,
    %o: memref<?x1536xbf16>, %b4: memref<128x2048x2048xf8E4M3FN>,
    %o4: memref<?x2048xbf16>, %a5: memref<?x2176xf8E4M3FN>,
    %b5: memref<128x2048x2176xf8E4M3FN>, %a16: memref<?x2048xbf16>,
    %b16: memref<128x1536x2048xbf16>, %b14: memref<32x7168x2048xf8E4M3FN>,
    %off32: memref<33xi32>, %o14: memref<?x7168xbf16>,
    %b17: memref<32x8448x2048xf8E4M3FN>, %o17: memref<?x8448xbf16>,
    %b16m: memref<32x8192x2048xf8E4M3FN>, %o16m: memref<?x8192xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b : memref<128x1536x2048xf8E4M3FN>) groups(%off : memref<129xi32>)
      out(%o : memref<?x1536xbf16>)
      {expected_m = 128 : i64, config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b : memref<128x1536x2048xf8E4M3FN>) groups(%off : memref<129xi32>)
      out(%o : memref<?x1536xbf16>)
      {expected_m = 256 : i64, config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b : memref<128x1536x2048xf8E4M3FN>) groups(%off : memref<129xi32>)
      out(%o : memref<?x1536xbf16>)
      {expected_m = 1024 : i64, config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b : memref<128x1536x2048xf8E4M3FN>) groups(%off : memref<129xi32>)
      out(%o : memref<?x1536xbf16>)
      {expected_m = 2048 : i64, config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b : memref<128x1536x2048xf8E4M3FN>) groups(%off : memref<129xi32>)
      out(%o : memref<?x1536xbf16>)
      {expected_m = 4096 : i64, config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b4 : memref<128x2048x2048xf8E4M3FN>) groups(%off : memref<129xi32>)
      out(%o4 : memref<?x2048xbf16>)
      {expected_m = 256 : i64, config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul contiguous a(%a5 : memref<?x2176xf8E4M3FN>)
      b(%b5 : memref<128x2048x2176xf8E4M3FN>) groups(%off : memref<129xi32>)
      out(%o4 : memref<?x2048xbf16>)
      {expected_m = 256 : i64, config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul contiguous a(%a16 : memref<?x2048xbf16>)
      b(%b16 : memref<128x1536x2048xbf16>) groups(%off : memref<129xi32>)
      out(%o : memref<?x1536xbf16>)
      {expected_m = 1024 : i64, config = #gg.config<block = [128, 128, 64], stages = 6, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b14 : memref<32x7168x2048xf8E4M3FN>) groups(%off32 : memref<33xi32>)
      out(%o14 : memref<?x7168xbf16>)
      {expected_m = 1024 : i64, config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b14 : memref<32x7168x2048xf8E4M3FN>) groups(%off32 : memref<33xi32>)
      out(%o14 : memref<?x7168xbf16>)
      {expected_m = 512 : i64, config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b16m : memref<32x8192x2048xf8E4M3FN>) groups(%off32 : memref<33xi32>)
      out(%o16m : memref<?x8192xbf16>)
      {expected_m = 1024 : i64, config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b17 : memref<32x8448x2048xf8E4M3FN>) groups(%off32 : memref<33xi32>)
      out(%o17 : memref<?x8448xbf16>)
      {expected_m = 1024 : i64, config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  return
}

// -----

// DeepGEMM's padded layout (rows tagged with their group): with a hint of
// 1,024 rows a group, FP8 weights of 14 MiB walk N first under L2's
// default policy, as contiguous groups do; without a hint, and for 28 MiB
// weights, the banded M-first walk with B evicted first (the band kept
// whatever the hint: unbanded, the padded walk measured 0.65-0.84x).
// CHECK-LABEL: func.func @padded_walk
// CHECK: expected_m = 1024
// CHECK-SAME: schedule = #gg.schedule<order = n_fastest>
// CHECK: schedule = #gg.schedule<order = m_fastest, m_band = 12, b_cache = evict_first>
// CHECK: memref<8x4096x7168xf8E4M3FN>
// CHECK-SAME: expected_m = 1024
// CHECK-SAME: schedule = #gg.schedule<order = m_fastest, m_band = 12, b_cache = evict_first>
func.func @padded_walk(%a: memref<?x2048xf8E4M3FN>, %b: memref<8x7168x2048xf8E4M3FN>,
    %tags: memref<?xi32>, %o: memref<?x7168xbf16>, %a7: memref<?x7168xf8E4M3FN>,
    %b7: memref<8x4096x7168xf8E4M3FN>, %o7: memref<?x4096xbf16>) {
  gg.grouped_matmul padded_contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b : memref<8x7168x2048xf8E4M3FN>) groups(%tags : memref<?xi32>)
      out(%o : memref<?x7168xbf16>)
      {expected_m = 1024 : i64, config = #gg.config<block = [128, 128, 128], stages = 6, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul padded_contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b : memref<8x7168x2048xf8E4M3FN>) groups(%tags : memref<?xi32>)
      out(%o : memref<?x7168xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 6, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul padded_contiguous a(%a7 : memref<?x7168xf8E4M3FN>)
      b(%b7 : memref<8x4096x7168xf8E4M3FN>) groups(%tags : memref<?xi32>)
      out(%o7 : memref<?x4096xbf16>)
      {expected_m = 1024 : i64, config = #gg.config<block = [128, 128, 128], stages = 6, cluster = [1, 1], sms = 132>}
  return
}

// -----

// A decode batch: each group's 32 tiles run in one wave; M first. Masked
// f8 weights load under L2's default policy (evict-first measured slower,
// on single CTAs and on pairs of CTAs alike).
// CHECK-LABEL: func.func @decode
// CHECK: schedule = #gg.schedule<order = m_fastest>
func.func @decode(%a: memref<16x128x7168xf8E4M3FN>,
                  %b: memref<16x4096x7168xf8E4M3FN>, %m: memref<16xi32>,
                  %o: memref<16x128x4096xbf16>) {
  gg.grouped_matmul masked a(%a : memref<16x128x7168xf8E4M3FN>)
      b(%b : memref<16x4096x7168xf8E4M3FN>) groups(%m : memref<16xi32>)
      out(%o : memref<16x128x4096xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 6, cluster = [1, 1], sms = 132>}
  return
}

// -----

// A schedule the user wrote is kept.
// CHECK-LABEL: func.func @user_order
// CHECK: schedule = #gg.schedule<order = n_fastest>
func.func @user_order(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                      %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>,
       schedule = #gg.schedule<order = n_fastest>}
  return
}

// -----

// Square 128x128 tiles: bands of 12 (12 A and 11 B tiles a wave). Clusters
// of two walk units of two M blocks: bands of 6 units (66 units a wave:
// 6 A units of 256 rows and 11 B tiles).
// CHECK-LABEL: func.func @square_tiles
// CHECK: schedule = #gg.schedule<order = m_fastest, m_band = 12>
// CHECK-LABEL: func.func @clusters
// CHECK: schedule = #gg.schedule<order = m_fastest, m_band = 6>
func.func @square_tiles(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                        %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}
func.func @clusters(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                    %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [2, 1], sms = 132>}
  return
}

// -----

// Before sm_90a (mma.sync) a 128x256 tile's band is its 128-column tile's:
// 12, not 19.
// CHECK-LABEL: func.func @contiguous_sm80
// CHECK: schedule = #gg.schedule<order = m_fastest, m_band = 12>
module attributes {gg.target = "sm_80"} {
  func.func @contiguous_sm80(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                             %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
    gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
        b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
        out(%o : memref<?x1024xbf16>)
        {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>}
    return
  }
}

// -----

// Before sm_90a (mma.sync) the rule is not taken: M first, and a group of
// 1.5 x 256 rows is no taller than the band.
// CHECK-LABEL: func.func @small_experts_sm80
// CHECK: schedule = #gg.schedule<order = m_fastest>
module attributes {gg.target = "sm_80"} {
func.func @small_experts_sm80(%a: memref<?x1024xbf16>, %b: memref<128x1536x1024xbf16>,
                              %off: memref<129xi32>, %o: memref<?x1536xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x1024xbf16>)
      b(%b : memref<128x1536x1024xbf16>) groups(%off : memref<129xi32>)
      out(%o : memref<?x1536xbf16>)
      {expected_m = 256 : i64, config = #gg.config<block = [128, 128, 64], stages = 3, cluster = [1, 1], sms = 132>}
  return
}
}

// -----

// The FP8 weight gradient (k_grouped): B is a group's tokens, read by all
// of the group's M blocks, so its loads keep L2's default policy (no
// b_cache); M blocks go first, the order whose wave loads fewer bytes.
// CHECK-LABEL: func.func @weight_gradient
// CHECK: schedule = #gg.schedule<order = m_fastest>
func.func @weight_gradient(%a: memref<4096x?xf8E4M3FN>, %b: memref<7168x?xf8E4M3FN>,
                           %groups: memref<17xi32>, %a_scale: memref<?x4096xf32>,
                           %b_scale: memref<?x7168xf32>, %out: memref<16x4096x7168xf32>) {
  gg.grouped_matmul k_grouped a(%a : memref<4096x?xf8E4M3FN>) b(%b : memref<7168x?xf8E4M3FN>)
      groups(%groups : memref<17xi32>)
      a_scale(%a_scale : memref<?x4096xf32>, <block 1x128, mn_major>)
      b_scale(%b_scale : memref<?x7168xf32>, <block 1x128, mn_major>)
      out(%out : memref<16x4096x7168xf32>)
      {accumulate, config = #gg.config<block = [128, 176, 128], stages = 3, cluster = [1, 1], sms = 132>}
  return
}
