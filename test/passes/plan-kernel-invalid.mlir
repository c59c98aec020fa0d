// RUN: ggc-opt %s -split-input-file -gg-plan-kernel -verify-diagnostics

// Only two-level kernels promote.
func.func @pipelined_bf16(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                          %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{cannot pipeline the promotion: only two-level kernels (f8, scales that change along K) promote}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>,
       kernel_plan = #gg.kernel_plan<promotion = pipelined, scales = none, registers = [24, 240], staging = none>}
  return
}

// -----

// Scales that change along K must be placed somewhere.
func.func @unplaced_scales(%a: memref<4x256x2048xf8E4M3FN>, %b: memref<4x7168x2048xf8E4M3FN>,
                           %m: memref<4xi32>, %sa: memref<4x16x256xf32>,
                           %sb: memref<4x56x16xf32>, %o: memref<4x256x7168xbf16>) {
  // expected-error @+1 {{must place scales in 'slots' or 'stages': the op has scales that change along K}}
  gg.grouped_matmul masked a(%a : memref<4x256x2048xf8E4M3FN>)
      b(%b : memref<4x7168x2048xf8E4M3FN>) groups(%m : memref<4xi32>)
      a_scale(%sa : memref<4x16x256xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<4x56x16xf32>, <block 128x128, k_major>)
      out(%o : memref<4x256x7168xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [24, 240], staging = none>}
  return
}

// -----

// K-major scales of A ride with the stages as boxes four K blocks wide,
// whose rows must be whole 16-byte units: ceil(K/128) = 6 is not.
func.func @stages_k_major(%a: memref<?x768xf8E4M3FN>, %b: memref<4x1024x768xf8E4M3FN>,
                          %off: memref<5xi32>, %sa: memref<?x6xf32>,
                          %sb: memref<4x8x6xf32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{cannot carry scales in the stages: that takes 1x128 block scales of 'a' M-major, or K-major with ceil(K/128) a multiple of 4, 128x128 of 'b' (k_grouped: 1x128 N-major, 'a' K-major, M and N multiples of 4, block N at most 256), block M at most 252 (a TMA box of block M + 4 rows), no split_n and no a_rows}}
  gg.grouped_matmul contiguous a(%a : memref<?x768xf8E4M3FN>)
      b(%b : memref<4x1024x768xf8E4M3FN>) groups(%off : memref<5xi32>)
      a_scale(%sa : memref<?x6xf32>, <block 1x128, k_major>)
      b_scale(%sb : memref<4x8x6xf32>, <block 128x128, k_major>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 4, cluster = [1, 1], sms = 132>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = none>}
  return
}

// -----

// A's scale window of a 256-row tile would be a TMA box of 260 rows,
// past TMA's 256.
func.func @stages_tall_tile(%a: memref<?x2048xf8E4M3FN>, %b: memref<4x1024x2048xf8E4M3FN>,
                            %off: memref<5xi32>, %sa: memref<16x?xf32>,
                            %sb: memref<4x8x16xf32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{block M at most 252 (a TMA box of block M + 4 rows)}}
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      b(%b : memref<4x1024x2048xf8E4M3FN>) groups(%off : memref<5xi32>)
      a_scale(%sa : memref<16x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<4x8x16xf32>, <block 128x128, k_major>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [256, 128, 128], stages = 3, cluster = [1, 1], sms = 132>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [24, 112], staging = none>}
  return
}

// -----

// A one-level kernel defers its epilogue beside the next tile's first
// wgmma only where the finished accumulator fits beside the next one:
// 128x256 tiles hold 128 registers of each a thread (282 with the
// overhead, more than 232).
func.func @deferred_one_level_registers(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                                        %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{gives each consumer 232 registers, fewer than the 282 that the finished tile's accumulator beside the next one's needs to defer the epilogue; use epilogue_blocks = 0}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 3, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none, epilogue_blocks = 1>}
  return
}

// -----

// A k-grouped one-level kernel needs more beside its two accumulators
// (ptxas spilled 128x192 weight-gradient tiles deferred at 232 and 240
// registers): 2 x 96 + 26 + 30 = 248.
func.func @deferred_k_grouped_registers(%a: memref<?x4096xbf16>, %b: memref<?x7168xbf16>,
                                        %off: memref<9xi32>, %o: memref<8x4096x7168xbf16>) {
  // expected-error @+1 {{gives each consumer 240 registers, fewer than the 248 that the finished tile's accumulator beside the next one's needs to defer the epilogue; use epilogue_blocks = 0}}
  gg.grouped_matmul k_grouped a(%a : memref<?x4096xbf16>, km)
      b(%b : memref<?x7168xbf16>, kn) groups(%off : memref<9xi32>)
      out(%o : memref<8x4096x7168xbf16>)
      {config = #gg.config<block = [128, 192, 64], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [24, 240], staging = none, epilogue_blocks = 1>}
  return
}

// -----

// mma.sync is done when issued: nothing runs beside it.
module attributes {gg.target = "sm_80"} {
func.func @deferred_one_level_mma_sync(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                                       %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{cannot defer the epilogue beside the next tile's first multiply on sm_80: mma.sync is done when issued; use epilogue_blocks = 0}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [168, 168], staging = none, epilogue_blocks = 1>}
  return
}
}

// -----

// Warpgroups that split a tile's columns (split_n) share its rows: none
// can store rows of its own.
func.func @warpgroup_stores_split_n(%a: memref<4x256x512xbf16>, %b: memref<4x1024x512xbf16>,
                                    %m: memref<4xi32>, %o: memref<4x256x1024xbf16>) {
  // expected-error @+1 {{cannot have each consumer warpgroup store its own rows (store_issuers = warpgroup): that takes a store_pool and warpgroups that split the tile by rows (no split_n); use store_issuers = tile}}
  gg.grouped_matmul masked a(%a : memref<4x256x512xbf16>)
      b(%b : memref<4x1024x512xbf16>) groups(%m : memref<4xi32>)
      out(%o : memref<4x256x1024xbf16>)
      {config = #gg.config<block = [64, 256, 64], stages = 4, cluster = [1, 1], sms = 132, split_n = 2>,
       store_pool = array<i64: 64, 32, 16, 8, 4, 2, 1>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = swizzled, store_issuers = warpgroup>}
  return
}

// -----

// A tile staged a slice at a time has one issuer: the slices' ring counts
// its store groups.
func.func @warpgroup_stores_of_slices(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                                      %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{cannot have each consumer warpgroup store its own rows (store_issuers = warpgroup) of a tile staged a slice at a time (store_slice); use store_issuers = tile}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>, store_slice = 64 : i64,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = swizzled, store_issuers = warpgroup>}
  return
}

// -----

// A staged tile needs a store pool, and the pool a staged tile.
func.func @staging_without_pool(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                                %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{must have staging 'none' without a store_pool}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = dense>}
  return
}

// -----

// 96 bf16 outputs are 192 bytes: not whole 128-byte rows to swizzle.
func.func @swizzle_narrow(%a: memref<?x512xbf16>, %b: memref<8x960x512xbf16>,
                          %off: memref<9xi32>, %o: memref<?x960xbf16>) {
  // expected-error @+1 {{cannot swizzle the staged tile by 128 bytes: its rows of 96 outputs are not whole 128-byte chunks; use staging = swizzled_64}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x960x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x960xbf16>)
      {config = #gg.config<block = [128, 96, 64], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = swizzled>}
  return
}

// -----

// Two consumer warpgroups and a producer start with 168 registers a thread
// (65536 over 384 threads): 40 + 2 x 240 is more than they hold.
func.func @too_many_registers(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                              %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{does not split the register file: a CTA of 384 threads starts with 168 per thread}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 240], staging = none>}
  return
}

// -----

// A 64x256 accumulator takes 128 registers a thread, plus what ptxas
// needs around it.
func.func @too_few_registers(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                             %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{gives each consumer 136 registers, too few for its 128-register accumulator}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 3, cluster = [1, 1], sms = 132>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 136], staging = none>}
  return
}

// -----

// Four consumer warpgroups (256-row tiles) leave 112 registers a consumer
// thread, too few for a 64x256 accumulator.
func.func @accumulator_too_big(%a: memref<?x256xbf16>, %b: memref<4x256x256xbf16>,
                               %off: memref<5xi32>, %o: memref<?x256xbf16>) {
  // expected-error @+1 {{the 128-register accumulator of a warpgroup's 256 columns does not fit the 112 registers per consumer thread of a CTA of 640 threads}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x256x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x256xbf16>)
      {config = #gg.config<block = [256, 256, 64], stages = 2, cluster = [1, 1], sms = 132>}
  return
}

// -----

// wgmma's fragment has one warp column: sm_90a refuses a user's 2.
func.func @warp_columns_on_hopper(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                                  %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{splits the warps' columns, which wgmma's fragment does not: sm_90a takes warp_columns = 1}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none, warp_columns = 2>}
  return
}

// -----

// Two warp columns of 24 would split B's 16-column loads.
module attributes {gg.target = "sm_80"} {
func.func @warp_columns_narrow(%a: memref<?x512xbf16>, %b: memref<8x48x512xbf16>,
                               %off: memref<9xi32>, %o: memref<?x48xbf16>) {
  // expected-error @+1 {{splits the warps' columns, which takes a multiple of 32 columns per warpgroup, got 48}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x48x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x48xbf16>)
      {config = #gg.config<block = [64, 48, 64], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none, warp_columns = 2>}
  return
}
}

// -----

// A user's sm_90a plan on sm_89: its scales ride the stages by TMA.
module attributes {gg.target = "sm_89"} {
func.func @stages_without_tma(%a: memref<4x256x2048xf8E4M3FN>, %b: memref<4x7168x2048xf8E4M3FN>,
                              %m: memref<4xi32>, %sa: memref<4x16x256xf32>,
                              %sb: memref<4x56x16xf32>, %o: memref<4x256x7168xbf16>) {
  // expected-error @+1 {{cannot be lowered for sm_89: kernel_plan scales = stages loads A's scales by TMA; use slots (sm_90a lowers it)}}
  gg.grouped_matmul masked a(%a : memref<4x256x2048xf8E4M3FN>)
      b(%b : memref<4x7168x2048xf8E4M3FN>) groups(%m : memref<4xi32>)
      a_scale(%sa : memref<4x16x256xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<4x56x16xf32>, <block 128x128, k_major>)
      out(%o : memref<4x256x7168xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 2, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [168, 168], staging = none>}
  return
}
}

// -----

// ... and its staged output tile is for TMA stores.
module attributes {gg.target = "sm_80"} {
func.func @staging_without_tma(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                               %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{cannot be lowered for sm_80: kernel_plan staging = swizzled stages the tile for TMA stores; use none (sm_90a lowers it)}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [168, 168], staging = swizzled>}
  return
}
}

// -----

// Four warp columns take a multiple of 64 columns (16 a warp): 96 is not.
module attributes {gg.target = "sm_80"} {
func.func @four_warp_columns_narrow(%a: memref<?x512xbf16>, %b: memref<8x96x512xbf16>,
                                    %off: memref<9xi32>, %o: memref<?x96xbf16>) {
  // expected-error @+1 {{splits the warps' columns, which takes a multiple of 64 columns per warpgroup, got 96}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x96x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x96xbf16>)
      {config = #gg.config<block = [64, 96, 64], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [256, 256], staging = none, warp_columns = 4>}
  return
}
}

// -----

// wgmma reads its stage after it is issued: sm_90a cannot hand the stage
// back then.
func.func @release_lag_on_hopper(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                                 %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{hands a stage back as its MMA is issued, which wgmma does not allow (it reads the stage after): sm_90a takes release_lag = 1}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none, release_lag = 0>}
  return
}

// -----

// Without setmaxnreg every thread keeps the CTA's share: a split of the
// registers would be ignored, so it is refused.
module attributes {gg.target = "sm_80"} {
func.func @register_split_without_setmaxnreg(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                                             %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{splits the registers, which takes setmaxnreg (sm_90a): on sm_80 every thread of a CTA of 384 keeps 168; use registers = [168, 168]}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none, warp_columns = 2, release_lag = 0>}
  return
}
}

// -----

// column_pairs stages BN/2 outputs a row: 96 bf16 are 192 bytes, not whole
// 128-byte rows.
func.func @column_pairs_swizzle(%a: memref<?x512xbf16>, %b: memref<8x1536x512xbf16>,
                                %off: memref<9xi32>, %o: memref<?x768xbf16>) {
  // expected-error @+1 {{cannot swizzle the staged tile by 128 bytes: its rows of 96 outputs are not whole 128-byte chunks; use staging = swizzled_64}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1536x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x768xbf16>)
      {column_pairs,
       config = #gg.config<block = [128, 192, 64], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = swizzled>}
      epilogue {
      ^bb0(%x: f32, %y: f32, %gi: index):
        gg.yield %x : f32
      }
  return
}

// -----

// Without a producer the CTA is the consumer warpgroups alone (256
// threads), each of whose threads keeps 256 registers: a plan with the
// share of 384 threads is refused with the right share.
module attributes {gg.target = "sm_80"} {
func.func @no_producer_registers(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                                 %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{splits the registers, which takes setmaxnreg (sm_90a): on sm_80 every thread of a CTA of 256 keeps 256; use registers = [256, 256]}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 3, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [168, 168], staging = none, warp_columns = 4, release_lag = 0, producer = none>}
  return
}
}

// -----

// sm_90a's loads are one TMA thread's, in a producer warpgroup whose
// registers setmaxnreg lowers.
func.func @no_producer_on_hopper(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                                 %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{has no producer, which sm_90a does not take: its loads are one TMA thread's beside setmaxnreg's register split; use producer = warpgroup}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none, producer = none>}
  return
}

// -----

// Without a producer the consumers copy the stages in their K loop; a
// two-level kernel (f8 here) runs another K loop, which does not.
module attributes {gg.target = "sm_89"} {
func.func @no_producer_two_level(%a: memref<?x512xf8E4M3FN>, %b: memref<8x1024x512xf8E4M3FN>,
                                 %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{has no producer, which only one-level kernels take: the consumers copy each stage in their K loop, and two-level kernels (f8, scales along K) run another; use producer = warpgroup}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>)
      b(%b : memref<8x1024x512xf8E4M3FN>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [256, 256], staging = none, producer = none>}
  return
}
}

// -----

// Three consumer warpgroups copy rounds of 48 rows, which do not divide a
// B tile of 128.
module attributes {gg.target = "sm_80"} {
func.func @no_producer_rounds(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                              %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{has no producer: its 3 consumer warpgroups would copy rounds of 48 rows, which must divide block M, block N and, for an MN-major operand, block K; use producer = warpgroup}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [192, 128, 64], stages = 3, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [168, 168], staging = none, warp_columns = 2, release_lag = 0, producer = none>}
  return
}
}

// -----

// Quads store 16 bytes of 16-bit outputs (8 of quantised e4m3 ones): an f32 output keeps its pairs.
module attributes {gg.target = "sm_80"} {
func.func @store_columns_f32(%a: memref<?x512xf32>, %b: memref<8x1024x512xf32>,
                             %off: memref<9xi32>, %o: memref<?x1024xf32>) {
  // expected-error @+1 {{stores 8 columns a thread, which it cannot: 'out' does not have 16-bit or quantised e4m3 elements; use store_columns = 2}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf32>)
      b(%b : memref<8x1024x512xf32>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xf32>)
      {config = #gg.config<block = [128, 128, 32], stages = 4, cluster = [1, 1], sms = 132>, store_pool = array<i64>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [168, 168], staging = none, warp_columns = 2, release_lag = 0, store_columns = 8>}
  return
}
}

// -----

// The store pool's tile goes by TMA boxes, not by the threads.
func.func @store_columns_pool(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                              %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{stores 8 columns a thread, which it cannot: the store pool stores the tile; use store_columns = 2}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = swizzled, store_columns = 8>}
  return
}

// -----

// 48 columns a warp are one quad of column blocks and half of another.
module attributes {gg.target = "sm_80"} {
func.func @store_columns_narrow(%a: memref<?x512xbf16>, %b: memref<8x48x512xbf16>,
                                %off: memref<9xi32>, %o: memref<?x48xbf16>) {
  // expected-error @+1 {{stores 8 columns a thread, which it cannot: a warp's columns are not a multiple of 32; use store_columns = 2}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x48x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x48xbf16>)
      {config = #gg.config<block = [64, 48, 64], stages = 4, cluster = [1, 1], sms = 132>, store_pool = array<i64>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [256, 256], staging = none, release_lag = 0, store_columns = 8>}
  return
}
}

// -----

// A transposed (nm) output's pair is two rows, not 4 bytes of one.
func.func @store_columns_nm(%a: memref<?x64xbf16>, %b: memref<?x64xbf16>,
                            %off: memref<3xi32>, %o: memref<2x64x64xf32>) {
  // expected-error @+1 {{stores 8 columns a thread, which it cannot: 'out' in layout nm stores a pair's two columns in two rows; use store_columns = 2}}
  gg.grouped_matmul k_grouped a(%a : memref<?x64xbf16>, km)
      b(%b : memref<?x64xbf16>, kn) groups(%off : memref<3xi32>)
      out(%o : memref<2x64x64xf32>, nm)
      {config = #gg.config<block = [64, 64, 64], stages = 2, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none, store_columns = 8>}
  return
}

// -----

// column_pairs combines each pair into one output: nothing to exchange.
func.func @store_columns_column_pairs(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                                      %off: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{stores 8 columns a thread, which it cannot: column_pairs makes one output per pair; use store_columns = 2}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x512xbf16>)
      {column_pairs,
       config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none, store_columns = 8>}
      epilogue {
      ^bb0(%x: f32, %y: f32, %gi: index):
        gg.yield %x : f32
      }
  return
}

// -----

// Rows of N = 1020 bf16 (2040 bytes) put every other row's 16-byte stores
// off their alignment.
func.func @store_columns_odd_n(%a: memref<?x512xbf16>, %b: memref<8x1020x512xbf16>,
                               %off: memref<9xi32>, %o: memref<?x1020xbf16>) {
  // expected-error @+1 {{stores 8 columns a thread, which it cannot: N is not a multiple of 8; use store_columns = 2}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1020x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1020xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none, store_columns = 8>}
  return
}

// -----

// Three consumer warpgroups (192-row tiles) make a CTA of 512 threads,
// which ptxas caps at 128 registers each: one wgmma over 256 columns holds
// 128 accumulator registers before its operands.
func.func @wgmma_over_the_launch_cap(%a: memref<?x256xbf16>, %b: memref<4x512x256xbf16>,
                                     %off: memref<5xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{one wgmma over a warpgroup's 256 columns holds 128 accumulator registers, which with its operands exceed the 128 registers ptxas allows each of the CTA's 512 threads; use fewer consumer warpgroups (a smaller block M) or a smaller block N}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x512x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x512xbf16>)
      {config = #gg.config<block = [192, 256, 64], stages = 2, cluster = [1, 1], sms = 132>}
  return
}

// -----

// sm_90a copies gathered rows on all of the producer's threads.
func.func @gathered_one_thread(%a: memref<?x512xbf16>, %r: memref<?xi32>,
                               %b: memref<8x1024x512xbf16>, %off: memref<9xi32>,
                               %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{gathers rows of A (a_rows), which sm_90a copies by cp.async on all of the producer warpgroup's threads; use producer = all_threads}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      a_rows(%r : memref<?xi32>) b(%b : memref<8x1024x512xbf16>)
      groups(%off : memref<9xi32>) out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none>}
  return
}

// -----

// all_threads is for gathered rows only.
func.func @all_threads_without_rows(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                                    %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{runs the producer on all of warpgroup 0's threads, which only sm_90a kernels with gathered rows of A (a_rows) take; use producer = warpgroup}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none, producer = all_threads>}
  return
}

// -----

// Gathered rows arm each stage on every producer thread's arrival: no one
// load carries A's scale box, so their scales take slots.
func.func @gathered_scales_in_stages(%a: memref<?x2048xf8E4M3FN>, %r: memref<?xi32>,
                                     %b: memref<8x1536x2048xf8E4M3FN>, %off: memref<9xi32>,
                                     %sa: memref<16x?xf32>, %sb: memref<8x12x16xf32>,
                                     %o: memref<?x1536xbf16>) {
  // expected-error @+1 {{cannot carry scales in the stages: that takes 1x128 block scales of 'a' M-major, or K-major with ceil(K/128) a multiple of 4, 128x128 of 'b' (k_grouped: 1x128 N-major, 'a' K-major, M and N multiples of 4, block N at most 256), block M at most 252 (a TMA box of block M + 4 rows), no split_n and no a_rows}}
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      a_rows(%r : memref<?xi32>) b(%b : memref<8x1536x2048xf8E4M3FN>)
      groups(%off : memref<9xi32>)
      a_scale(%sa : memref<16x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<8x12x16xf32>, <block 128x128, k_major>)
      out(%o : memref<?x1536xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>,
       kernel_plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = none, producer = all_threads>}
  return
}

// -----

// A weight gradient's 1x128 scales ride the stages as TMA boxes of the
// tile's rows and columns, whose rows of scales must be whole 16 bytes:
// M = 250 is not a multiple of 4.
func.func @stages_k_grouped_m_off_4(%a: memref<250x?xf8E4M3FN>, %b: memref<512x?xf8E4M3FN>,
                                    %groups: memref<5xi32>, %a_scale: memref<?x250xf32>,
                                    %b_scale: memref<?x512xf32>, %out: memref<4x250x512xf32>) {
  // expected-error @+1 {{cannot carry scales in the stages: that takes 1x128 block scales of 'a' M-major, or K-major with ceil(K/128) a multiple of 4, 128x128 of 'b' (k_grouped: 1x128 N-major, 'a' K-major, M and N multiples of 4, block N at most 256), block M at most 252 (a TMA box of block M + 4 rows), no split_n and no a_rows}}
  gg.grouped_matmul k_grouped a(%a : memref<250x?xf8E4M3FN>) b(%b : memref<512x?xf8E4M3FN>)
      groups(%groups : memref<5xi32>)
      a_scale(%a_scale : memref<?x250xf32>, <block 1x128, mn_major>)
      b_scale(%b_scale : memref<?x512xf32>, <block 1x128, mn_major>)
      out(%out : memref<4x250x512xf32>)
      {config = #gg.config<block = [128, 128, 128], stages = 4, cluster = [1, 1], sms = 132>,
       kernel_plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = swizzled>}
  return
}

// -----

// MX scales promote by scale blocks: two K blocks before the deferred
// epilogue is a plan their loop does not keep.
func.func @mx_epilogue_blocks(%a: memref<1000x2048xf8E4M3FN>, %sa: memref<1024x16xi32>,
                              %b: memref<8x4096x2048xf8E4M3FN>, %sb: memref<8x4096x16xi32>,
                              %off: memref<9xi32>, %o: memref<1000x4096xbf16>) {
  // expected-error @+1 {{cannot issue two K blocks before the deferred epilogue with MX scales (their promotion goes by scale blocks); use epilogue_blocks = 1}}
  gg.grouped_matmul contiguous
      a(%a : memref<1000x2048xf8E4M3FN>) b(%b : memref<8x4096x2048xf8E4M3FN>)
      groups(%off : memref<9xi32>)
      a_scale(%sa : memref<1024x16xi32>, <mx 1x32>)
      b_scale(%sb : memref<8x4096x16xi32>, <mx 1x32>)
      out(%o : memref<1000x4096xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 4, cluster = [1, 1], sms = 132>,
       kernel_plan = #gg.kernel_plan<promotion = pipelined, scales = slots, registers = [24, 240], staging = none, epilogue_blocks = 2>}
  return
}

// -----

// column_scale_reads = at_issue reads B's per-column scales from the
// stages: a contiguous op has none there.
func.func @column_reads_without_columns(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                                        %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+1 {{reads B's per-column scales at the wgmma's issue (column_scale_reads = at_issue), which takes them in the stages: k_grouped with 1x128 scales of 'b' and scales = stages}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none, column_scale_reads = at_issue>}
  return
}

// -----

// Constant stages take every tile starting at stage 0: 2048 / 128 = 16 K
// blocks are no multiple of 5 stages, so each tile's last turn would end
// on a stage passed on empty, which gathered rows (every producer thread
// arrives on a stage) cannot pass.
func.func @ring_stages_unaligned_gathered(%a: memref<?x2048xf8E4M3FN>, %r: memref<?xi32>,
                                         %b: memref<8x1536x2048xf8E4M3FN>, %off: memref<9xi32>,
                                         %sa: memref<16x?xf32>, %sb: memref<8x12x16xf32>,
                                         %o: memref<?x1536xbf16>) {
  // expected-error @+1 {{cannot give each K block a constant stage (ring_stages = constant): that takes a two-level kernel (f8, scales that change along K) and K blocks a multiple of the stages where A's rows are gathered (a_rows, a static K) (16 K blocks, 5 stages); use ring_stages = counted}}
  gg.grouped_matmul contiguous a(%a : memref<?x2048xf8E4M3FN>)
      a_rows(%r : memref<?xi32>) b(%b : memref<8x1536x2048xf8E4M3FN>)
      groups(%off : memref<9xi32>)
      a_scale(%sa : memref<16x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<8x12x16xf32>, <block 128x128, k_major>)
      out(%o : memref<?x1536xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>,
       kernel_plan = #gg.kernel_plan<promotion = serial, scales = slots, registers = [40, 232], staging = none, producer = all_threads, ring_stages = constant>}
  return
}

// -----

// Pipelined promotion over constant stages counts its straight blocks and
// its last turn's empty stages when compiling: a weight gradient's K
// blocks (each group's tokens) come at run time.
func.func @pipelined_constant_stages_k_grouped(%a: memref<256x?xf8E4M3FN>, %b: memref<512x?xf8E4M3FN>,
                                               %groups: memref<5xi32>, %a_scale: memref<?x256xf32>,
                                               %b_scale: memref<?x512xf32>, %out: memref<4x256x512xf32>) {
  // expected-error @+1 {{cannot pipeline the promotions over constant stages (ring_stages = constant with promotion = pipelined): that takes a static K (not k_grouped); use ring_stages = counted or promotion = serial}}
  gg.grouped_matmul k_grouped a(%a : memref<256x?xf8E4M3FN>) b(%b : memref<512x?xf8E4M3FN>)
      groups(%groups : memref<5xi32>)
      a_scale(%a_scale : memref<?x256xf32>, <block 1x128, mn_major>)
      b_scale(%b_scale : memref<?x512xf32>, <block 1x128, mn_major>)
      out(%out : memref<4x256x512xf32>)
      {config = #gg.config<block = [128, 128, 128], stages = 4, cluster = [1, 1], sms = 132>,
       kernel_plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = none, ring_stages = constant>}
  return
}
