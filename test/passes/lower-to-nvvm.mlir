// RUN: ggc-opt %s -split-input-file -gg-schedule-groups -gg-eliminate-padding -gg-plan-overfetch -gg-plan-kernel -gg-lower-to-nvvm -ggk-place-scales -ggk-stage-tile-stores -ggk-prepare-operands -ggk-lower-store-pool -ggk-split-partial-loads -ggk-multicast -ggk-defer-epilogue -ggk-lower-k-loop -ggk-pipeline-promotion -ggk-lower-promotion -ggk-lower-epilogue -ggk-lower-tile-schedule -ggk-warp-specialize -ggk-lower-ring -ggk-lower-mma -ggk-lower-mn-major-loads -ggk-lower-accumulators -ggk-lower-async-copies -ggk-lower-tma -ggk-lower-threads -ggk-allocate-shared-memory -ggk-collect-launch | FileCheck %s

// Before: a function holding one configured grouped matmul. After: the
// function is gone and a kernel takes its place, with the tensor maps of A
// and B as __grid_constant__ parameters, then out, groups, the run-time row
// count, and the epilogue vectors.
// CHECK: llvm.mlir.global external @ggc_smem() {addr_space = 3 : i32, alignment = 1024 : i64}
// CHECK-NOT: func.func
// CHECK: llvm.func @routed_kernel(%{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}, %{{.*}}: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: !llvm.ptr<1>)
// CHECK-SAME: ggk.launch = #ggk.launch<name = "routed_kernel", layout = "contiguous", block = 384,
// CHECK-SAME: nvvm.kernel, nvvm.maxntid = array<i32: 384, 1, 1>, nvvm.minctasm = 1 : i32
// Leader thread initialises the full/empty barrier pairs of both stages.
// CHECK-COUNT-4: nvvm.mbarrier.init
// CHECK: nvvm.barrier0
// Producer warpgroup: gives registers away, walks the tiles, loads A and B.
// CHECK: nvvm.setmaxregister decrease 40
// CHECK: scf.while
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} box[{{.*}}] {isCTAOnly = true}
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} box[{{.*}}] {isCTAOnly = true}
// Consumers: take registers, load the routing weights of their two rows
// as the tile starts (their latency behind the K loop), wgmma over the
// four 16-wide K steps of a 64-wide bf16 block, release the buffer, then
// the epilogue.
// CHECK: nvvm.setmaxregister increase 232
// CHECK-COUNT-2: llvm.load {{.*}} : !llvm.ptr<1> -> f32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK-COUNT-4: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.wgmma.wait.group.sync.aligned 0
// CHECK: nvvm.mbarrier.arrive
// CHECK-NOT: llvm.load {{.*}} : !llvm.ptr<1> -> f32
// The epilogue multiplies by the routing weight and rounds to bf16 pairs,
// which each quad exchanges (no store pool: store_columns = 8) and
// stores as 16 bytes a thread.
// CHECK: arith.mulf
// CHECK: arith.truncf {{.*}} : f32 to bf16
// CHECK: nvvm.shfl.sync bfly
// CHECK: llvm.store {{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
func.func @routed(%a: memref<?x256xbf16>, %b: memref<4x128x256xbf16>,
                  %off: memref<5xi32>, %w: memref<?xf32>, %o: memref<?x128xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x128x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x128xbf16>) rows(%w : memref<?xf32>)
      {config = #gg.config<block = [128, 128, 64], stages = 2, cluster = [1, 1], sms = 132>}
      epilogue {
      ^bb0(%acc: f32, %weight: f32, %g: index):
        %r = arith.mulf %acc, %weight : f32
        gg.yield %r : f32
      }
  return
}

// -----

// 64-row tiles need one consumer warpgroup: 256 threads. Masked A is loaded
// with a 3-D tensor map (K, row, group).
// CHECK: llvm.func @decode_kernel
// CHECK-SAME: nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}]
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 64, k = 16>, D[<f32>, <one>], A[<f16>, <one>, <row>], B[<f16>, <one>, <col>]
func.func @decode(%a: memref<8x64x128xf16>, %b: memref<8x64x128xf16>,
                  %m: memref<8xi32>, %o: memref<8x64x64xf16>) {
  gg.grouped_matmul masked a(%a : memref<8x64x128xf16>)
      b(%b : memref<8x64x128xf16>) groups(%m : memref<8xi32>)
      out(%o : memref<8x64x64xf16>)
      {config = #gg.config<block = [64, 64, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// B given as [G, K, N]: four [64 K, 64 N] boxes per stage fill the 256-wide
// B tile, and wgmma reads it N-major (B layout row).
// CHECK: llvm.func @weights_kn_kernel
// CHECK-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} box[%{{.*}}, %{{.*}}, %{{.*}}]
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 256, k = 16>, D[<f32>, <one>], A[<bf16>, <one>, <row>], B[<bf16>, <one>, <row>]
func.func @weights_kn(%a: memref<?x512xbf16>, %b: memref<8x512x1024xbf16>,
                      %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x512x1024xbf16>, kn) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// k_grouped (weight gradient): A and B are token-major ([K, M], [K, N]);
// the last K block of a group has its rows past the group zeroed, fenced
// against the tensor cores' reads, before the wgmma (A and B both MN-major).
// CHECK: llvm.func @wgrad_kernel
// A group's K range from i64 offsets is clamped to [0, K] in i64 and only
// then narrowed to i32, so an offset of 2^32 + 5 clamps to K, not to 5.
// CHECK: %[[KBEGIN:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> i64
// CHECK: %[[KEND:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> i64
// CHECK: %[[KLO:.*]] = arith.maxsi %[[KBEGIN]], %{{.*}} : i64
// CHECK: %[[KFIRST:.*]] = arith.minsi %[[KLO]], %[[K:.*]] : i64
// CHECK: %[[KHI:.*]] = arith.maxsi %[[KEND]], %[[KFIRST]] : i64
// CHECK: %[[KLAST:.*]] = arith.minsi %[[KHI]], %[[K]] : i64
// CHECK: arith.trunci %[[KFIRST]] : i64 to i32
// CHECK: arith.trunci %[[KLAST]] : i64 to i32
// CHECK: llvm.store %{{.*}} : vector<4xi32>, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id = %{{.*}} number_of_threads = %{{.*}}
// CHECK: nvvm.wgmma.mma_async {{.*}} A[<bf16>, <one>, <col>], B[<bf16>, <one>, <row>]
func.func @wgrad(%dy: memref<?x128xbf16>, %x: memref<?x256xbf16>,
                 %off: memref<9xi64>, %dw: memref<8x128x256xf32>) {
  gg.grouped_matmul k_grouped a(%dy : memref<?x128xbf16>, km)
      b(%x : memref<?x256xbf16>, kn) groups(%off : memref<9xi64>)
      out(%dw : memref<8x128x256xf32>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// Contiguous rows from i64 offsets: clamped to [0, M] (the kernel's i64
// argument) before they are narrowed to the kernel's i32 row indices.
// CHECK-LABEL: llvm.func @offsets_i64_kernel
// CHECK-SAME: %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %[[M:.*]]: i64)
// CHECK: %[[BEGIN:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> i64
// CHECK: %[[END:.*]] = llvm.load %{{.*}} : !llvm.ptr<1> -> i64
// CHECK: %[[LO:.*]] = arith.maxsi %[[BEGIN]], %{{.*}} : i64
// CHECK: %[[FIRST:.*]] = arith.minsi %[[LO]], %[[M]] : i64
// CHECK: %[[HI:.*]] = arith.maxsi %[[END]], %[[FIRST]] : i64
// CHECK: %[[LAST:.*]] = arith.minsi %[[HI]], %[[M]] : i64
// CHECK: arith.trunci %[[FIRST]] : i64 to i32
// CHECK: arith.trunci %[[LAST]] : i64 to i32
func.func @offsets_i64(%a: memref<?x256xbf16>, %b: memref<4x128x256xbf16>,
                       %off: memref<5xi64>, %o: memref<?x128xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x128x256xbf16>) groups(%off : memref<5xi64>)
      out(%o : memref<?x128xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 2, cluster = [1, 1], sms = 132>}
  return
}

// -----

// With a store pool: fragments go to the staged tile in shared memory, two
// 128B-swizzled chunks of 64 columns (16-byte units XORed with row % 8), are
// fenced for the async proxy, and one thread stores the group's rows as
// boxes of 128, 64, ..., 1 rows (eight 128B-swizzled tensor maps of 64
// columns), one per chunk, then commits.
// CHECK: llvm.func @pooled_kernel(%{{.*}}: !llvm.ptr {{{.*}}nvvm.grid_constant}, %{{.*}}: !llvm.ptr {{{.*}}nvvm.grid_constant}, %{{.*}}: !llvm.ptr {{{.*}}nvvm.grid_constant}
// CHECK-SAME: #ggk.param<tensor_map, operand = "out", arg = 3, dtype = "bfloat16", box = [64, 128], swizzle = "128B">
// CHECK: nvvm.cp.async.bulk.wait_group 0 {read}
// CHECK: arith.xori
// CHECK: llvm.store {{.*}} : vector<2xbf16>, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK-COUNT-16: nvvm.cp.async.bulk.tensor.global.shared.cta
// CHECK: nvvm.cp.async.bulk.commit.group
func.func @pooled(%a: memref<?x256xbf16>, %b: memref<4x128x256xbf16>,
                  %off: memref<5xi32>, %o: memref<?x128xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x128x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x128xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>}
  return
}

// -----

// k_grouped with K-major operands (the only form f8 has): the K tail of a
// group's last block is cleared chunk by chunk through the 128B swizzle
// (physical chunk = logical ^ row % 8), bytes past the boundary inside the
// first chunk one by one.
// CHECK: llvm.func @wgrad_k_major_kernel
// CHECK: arith.xori
// CHECK: llvm.store %{{.*}} : vector<4xi32>, !llvm.ptr<3>
// CHECK: llvm.store %{{.*}} : i8, !llvm.ptr<3>
// CHECK: nvvm.wgmma.mma_async {{.*}} A[<e4m3>, <one>, <row>], B[<e4m3>, <one>, <col>]
func.func @wgrad_k_major(%dy: memref<128x?xf8E4M3FN>, %x: memref<256x?xf8E4M3FN>,
                         %off: memref<9xi64>, %dw: memref<8x128x256xf32>) {
  gg.grouped_matmul k_grouped a(%dy : memref<128x?xf8E4M3FN>)
      b(%x : memref<256x?xf8E4M3FN>) groups(%off : memref<9xi64>)
      out(%dw : memref<8x128x256xf32>)
      {config = #gg.config<block = [128, 128, 128], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// tf32 with B given [G, K, N]: wgmma reads tf32 only K-major, so the
// consumers copy each B tile transposed into a K-major buffer (16-byte
// loads along N, 4-byte stores along K), fence it, and meet at a barrier.
// CHECK: llvm.func @tf32_kn_kernel
// CHECK: llvm.load {{.*}} : !llvm.ptr<3> -> vector<4xf32>
// CHECK-COUNT-4: llvm.store {{.*}} : f32, !llvm.ptr<3>
// CHECK: nvvm.fence.proxy {kind = #nvvm.proxy_kind<async.shared>, space = #nvvm.shared_space<cta>}
// CHECK: nvvm.barrier id
// CHECK: nvvm.wgmma.mma_async {{.*}} A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]
func.func @tf32_kn(%a: memref<?x256xf32>, %b: memref<4x256x128xf32>,
                   %off: memref<5xi32>, %o: memref<?x128xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xf32>)
      b(%b : memref<4x256x128xf32>, kn) groups(%off : memref<5xi32>)
      out(%o : memref<?x128xf32>) {tf32,
      config = #gg.config<block = [128, 128, 32], stages = 3, cluster = [1, 1], sms = 132>,
      store_pool = array<i64>}
  return
}

// -----

// A cluster of 2 along M: each CTA loads half of the B tile (a 64-row box)
// and multicasts it to both (mask 0b11); consumers arrive on both CTAs'
// empty barriers through mapa; the cluster meets after barrier init and
// before leaving.
// CHECK: llvm.func @paired_kernel
// CHECK-SAME: cluster = 2,
// CHECK-SAME: operand = "b", {{.*}} box = [64, 64, 1]
// CHECK: nvvm.read.ptx.sreg.cluster.ctarank
// CHECK: nvvm.fence.mbarrier.init
// CHECK: nvvm.cluster.arrive
// CHECK: nvvm.cluster.wait
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} multicast_mask
// CHECK: nvvm.mapa
// CHECK: nvvm.mbarrier.arrive %{{.*}} : !llvm.ptr<7>
func.func @paired(%a: memref<?x256xbf16>, %b: memref<4x128x256xbf16>,
                  %off: memref<5xi32>, %o: memref<?x128xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x128x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x128xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 3, cluster = [2, 1], sms = 132>,
       store_pool = array<i64>}
  return
}

// -----

// Block M 192: three consumer warpgroups (512 threads). The register file
// starts split as 128 per thread; the producer gives back to 24 and each
// consumer asks for 160, which the pool can meet (24 + 3 * 160 <= 4 * 128):
// a request beyond it would wait forever.
// CHECK-LABEL: llvm.func @three_consumers_kernel
// CHECK-SAME: nvvm.maxntid = array<i32: 512, 1, 1>
// CHECK: nvvm.setmaxregister decrease 24
// CHECK: nvvm.setmaxregister increase 160
func.func @three_consumers(%a: memref<?x256xbf16>, %b: memref<4x128x256xbf16>,
                           %off: memref<5xi32>, %o: memref<?x128xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x128x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x128xbf16>)
      {config = #gg.config<block = [192, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// Block M 256: four consumer warpgroups (640 threads) start with 96
// registers each; 24 + 4 * 112 <= 5 * 96.
// CHECK-LABEL: llvm.func @four_consumers_kernel
// CHECK-SAME: nvvm.maxntid = array<i32: 640, 1, 1>
// CHECK: nvvm.setmaxregister decrease 24
// CHECK: nvvm.setmaxregister increase 112
func.func @four_consumers(%a: memref<?x256xbf16>, %b: memref<4x128x256xbf16>,
                          %off: memref<5xi32>, %o: memref<?x128xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x128x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x128xbf16>)
      {config = #gg.config<block = [256, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// gg-eliminate-padding's `idle_warpgroups = skip`: each consumer's tile is
// a ggk.warpgroup_tile carrying the padding decision, from the warpgroup's
// first row (64 * index); its work region runs wgmma, its idle region only
// waits for each stage and releases it (ggk-skip-idle-warpgroups makes the
// guard: test/passes/skip-idle-warpgroups.mlir).
// CHECK-LABEL: llvm.func @skip_idle_kernel
// CHECK: nvvm.setmaxregister increase 232
// CHECK: llvm.insertvalue %{{.*}}[63]
// CHECK: %[[FIRST:.*]] = arith.muli %{{.*}}, %c64_i32{{.*}} : i32
// CHECK-NEXT: ggk.warpgroup_tile first_row(%[[FIRST]]) rows(%{{.*}}) attributes {padding = #gg.padding<idle_warpgroups = skip>} -> !llvm.struct<{{.*}}>, i32 {
// CHECK: nvvm.wgmma.mma_async
// CHECK: } idle {
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: scf.for {{.*}} -> (i32)
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: nvvm.mbarrier.arrive
// CHECK-NOT: nvvm.wgmma.mma_async
// CHECK: ggk.yield
func.func @skip_idle(%a: memref<4x128x256xbf16>, %b: memref<4x512x256xbf16>,
                     %m: memref<4xi32>, %o: memref<4x128x512xbf16>) {
  gg.grouped_matmul masked a(%a : memref<4x128x256xbf16>)
      b(%b : memref<4x512x256xbf16>) groups(%m : memref<4xi32>)
      out(%o : memref<4x128x512xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>, padding = #gg.padding<idle_warpgroups = skip>}
  return
}

// -----

// gg-plan-overfetch's 8-row granule: A has a tensor map per box height
// (the whole 128-row tile, then 64 down to 8); a group's last tile arms its
// full barrier with the bytes of its valid rows rounded up to 8 (plus B's
// tile) and loads them as a sum of those boxes.
// CHECK-LABEL: llvm.func @partial_a_loads_kernel
// CHECK-SAME: operand = "a", {{.*}} box = [64, 128]{{.*}}operand = "a", {{.*}} box = [64, 64]{{.*}}operand = "a", {{.*}} box = [64, 32]{{.*}}box = [64, 16]{{.*}}operand = "a", {{.*}} box = [64, 8]{{.*}}operand = "b"
// CHECK: %[[ROUNDED:.*]] = arith.andi %{{.*}}, %c-8_i32 : i32
// CHECK: %[[ROWS:.*]] = arith.minsi %[[ROUNDED]], %c128_i32{{.*}} : i32
// CHECK: %[[BYTES:.*]] = arith.muli %[[ROWS]], %c128_i32{{.*}} : i32
// CHECK: %[[TX:.*]] = arith.addi %[[BYTES]], %c16384_i32{{.*}} : i32
// CHECK: nvvm.mbarrier.arrive.expect_tx %{{.*}}, %[[TX]]
// CHECK: scf.if
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: } else {
// CHECK-COUNT-4: nvvm.cp.async.bulk.tensor.shared.cluster.global
func.func @partial_a_loads(%a: memref<?x256xbf16>, %b: memref<4x128x256xbf16>,
                           %off: memref<5xi32>, %o: memref<?x128xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x128x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x128xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// tf32 with token-major A and B (k_grouped km/kn): wgmma reads tf32 only
// K-major, so the consumers transpose each A and B tile into K-major copies
// (4-byte stores) and meet at a barrier before the wgmma reads the copies
// with K-major descriptors (A and B "row"/"col").
// CHECK-LABEL: llvm.func @tf32_token_major_kernel
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-2: nvvm.barrier id = %{{.*}} number_of_threads
// CHECK: nvvm.wgmma.mma_async {{.*}} A[<tf32>, <one>, <row>], B[<tf32>, <one>, <col>]
func.func @tf32_token_major(%a: memref<?x128xf32>, %b: memref<?x128xf32>,
                            %off: memref<5xi32>, %o: memref<4x128x128xf32>) {
  gg.grouped_matmul k_grouped a(%a : memref<?x128xf32>, km)
      b(%b : memref<?x128xf32>, kn) groups(%off : memref<5xi32>)
      out(%o : memref<4x128x128xf32>) {tf32,
      config = #gg.config<block = [128, 128, 32], stages = 2, cluster = [1, 1], sms = 132>}
  return
}

// -----

// split_n = 2: a 64x256 f8 tile goes to two consumer warpgroups (384
// threads), each running m64n128 wgmmas on its half of B's columns.
// CHECK-LABEL: llvm.func @split_columns_kernel
// CHECK-SAME: nvvm.maxntid = array<i32: 384, 1, 1>
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 128, k = 32>
func.func @split_columns(%a: memref<16x128x7168xf8E4M3FN>,
                         %b: memref<16x4096x7168xf8E4M3FN>, %m: memref<16xi32>,
                         %o: memref<16x128x4096xbf16>) {
  gg.grouped_matmul masked a(%a : memref<16x128x7168xf8E4M3FN>)
      b(%b : memref<16x4096x7168xf8E4M3FN>) groups(%m : memref<16xi32>)
      out(%o : memref<16x128x4096xbf16>)
      {config = #gg.config<block = [64, 256, 128], stages = 4, cluster = [1, 1], sms = 132, split_n = 2>}
  return
}

// -----

// `b_cache = evict_first` (stated here: gg-schedule-groups gives masked
// ops the default): B's TMA loads carry L2's evict-first policy as their
// cache hint (A's carry none).
// CHECK-LABEL: llvm.func @evict_first_b_kernel
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} box[{{.*}}] {isCTAOnly = true}
// CHECK: %[[POLICY:.*]] = arith.constant 1364590687093260288 : i64
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global {{.*}} l2_cache_hint = %[[POLICY]] {isCTAOnly = true}
func.func @evict_first_b(%a: memref<4x128x256xf8E4M3FN>, %b: memref<4x256x256xf8E4M3FN>,
                         %m: memref<4xi32>, %o: memref<4x128x256xbf16>) {
  gg.grouped_matmul masked a(%a : memref<4x128x256xf8E4M3FN>)
      b(%b : memref<4x256x256xf8E4M3FN>) groups(%m : memref<4xi32>)
      out(%o : memref<4x128x256xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 2, cluster = [1, 1], sms = 132>,
       schedule = #gg.schedule<order = m_fastest, b_cache = evict_first>}
  return
}

// -----

// `group_reads = shared`: the table of the four counts (16 bytes at 66,560,
// after the other buffers; sharedBytes counts it) is filled by the CTA's
// 384 threads before the barrier that publishes the mbarriers, and the
// walks of the producer and the consumers load no count from global memory.
// CHECK-LABEL: llvm.func @group_table_kernel
// CHECK-SAME: sharedBytes = 67600
// CHECK: %[[TABLE:.*]] = llvm.getelementptr %{{.*}}[%c66560_i64] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// CHECK: scf.for %{{.*}} = %{{.*}} to %c4_i32 step %c384_i32 : i32 {
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// CHECK: %[[ENTRY:.*]] = llvm.getelementptr %[[TABLE]][%{{.*}}] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i32
// CHECK: llvm.store %{{.*}}, %[[ENTRY]] : i32, !llvm.ptr<3>
// CHECK: nvvm.barrier0
// CHECK-NOT: !llvm.ptr<1> -> i32
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> i32
// CHECK-NOT: !llvm.ptr<1> -> i32
// CHECK: llvm.return
func.func @group_table(%a: memref<4x128x256xbf16>, %b: memref<4x256x256xbf16>,
                       %m: memref<4xi32>, %o: memref<4x128x256xbf16>) {
  gg.grouped_matmul masked a(%a : memref<4x128x256xbf16>)
      b(%b : memref<4x256x256xbf16>) groups(%m : memref<4xi32>)
      out(%o : memref<4x128x256xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 2, cluster = [1, 1], sms = 132>,
       schedule = #gg.schedule<order = m_fastest, group_reads = shared>}
  return
}

// -----

// `out_rows`: the launch takes the list and out's row count (R, the
// indices' bound) after the run-time size M (the first size, which the
// host sizes the grid by); each stored pair reads its product row's index from the
// list and is stored only where 0 <= index < R (the plan's 16-byte stores
// of a quad's eight columns).
// CHECK-LABEL: llvm.func @scattered_kernel
// CHECK-SAME: %[[OUT:[^:]*]]: !llvm.ptr<1>, %{{[^:]*}}: !llvm.ptr<1>, %{{[^:]*}}: i64, %[[LIST:[^:]*]]: !llvm.ptr<1>, %[[BOUND:[^:]*]]: i64)
// CHECK-SAME: #ggk.param<size, operand = "a", arg = 0, dim = 0>, #ggk.param<pointer, operand = "out_rows", arg = 4>, #ggk.param<size, operand = "out", arg = 3, dim = 0>
// CHECK-SAME: #ggk.arg<dtype = "bf16", shape = ["R", 256], written = true>, #ggk.arg<dtype = "i32", shape = ["M"], written = false>
// CHECK: %[[SLOT:.*]] = llvm.getelementptr %[[LIST]][%{{.*}}] : (!llvm.ptr<1>, i64) -> !llvm.ptr<1>, i32
// CHECK: llvm.load %[[SLOT]] : !llvm.ptr<1> -> i32
// CHECK: %[[FROM:.*]] = arith.cmpi sge, %[[ROW:.*]], %{{.*}} : i64
// CHECK: %[[BELOW:.*]] = arith.cmpi slt, %[[ROW]], %[[BOUND]] : i64
// CHECK: %[[STORED:.*]] = arith.andi %[[FROM]], %[[BELOW]] : i1
// CHECK: scf.if %[[STORED]]
// CHECK: arith.muli %[[ROW]], %c256_i64 : i64
// CHECK: llvm.store %{{.*}}, %{{.*}} {alignment = 16 : i64} : vector<4xi32>, !llvm.ptr<1>
func.func @scattered(%a: memref<?x256xbf16>, %b: memref<4x256x256xbf16>,
                     %g: memref<5xi32>, %o: memref<?x256xbf16>, %r: memref<?xi32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x256x256xbf16>) groups(%g : memref<5xi32>)
      out(%o : memref<?x256xbf16>) out_rows(%r : memref<?xi32>)
      {config = #gg.config<block = [128, 128, 64], stages = 2, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>}
  return
}

// -----

// `out` in nm ([G, N, M], a transposed weight gradient): per-thread stores
// (no store pool), the two columns of each pair as two scalars M apart.
// CHECK-LABEL: llvm.func @out_nm_kernel
// CHECK: nvvm.wgmma.mma_async
// CHECK: llvm.extractelement %{{.*}}[%c0_i32{{.*}} : i32] : vector<2xf32>
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<1>
// CHECK: llvm.extractelement %{{.*}}[%c1_i32{{.*}} : i32] : vector<2xf32>
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<1>
func.func @out_nm(%a: memref<?x64xbf16>, %b: memref<?x64xbf16>,
                  %off: memref<3xi32>, %o: memref<2x64x64xf32>) {
  gg.grouped_matmul k_grouped a(%a : memref<?x64xbf16>, km)
      b(%b : memref<?x64xbf16>, kn) groups(%off : memref<3xi32>)
      out(%o : memref<2x64x64xf32>, nm)
      {config = #gg.config<block = [64, 64, 64], stages = 2, cluster = [1, 1], sms = 132>,
       store_pool = array<i64>}
  return
}

// -----

// DeepGEMM's block scales, A's M-major (1x128, [G, ceil(K/128), align4(M)])
// and B's 128x128, travel with the stages: the producer copies B's block
// scale by cp.async, makes the full barrier track that copy, announces the
// tiles' bytes and A's scales (A's valid rows of 128 bytes, then B's 16384
// + 132 * 4), and loads a window of A's scales with one TMA box of 132 f32
// at (first row rounded down to 4, K block, group): TMA's innermost
// coordinate must be 16-byte aligned. Each consumer reads its rows' scales
// (past the window's rounding) and B's from the stage after issuing the
// block's wgmma, before releasing it; it copies none. The copy's arrival
// is one of the two the full barrier is initialised with (.noinc).
// CHECK-LABEL: llvm.func @block_scaled_kernel
// CHECK-SAME: #ggk.param<tensor_map, operand = "a_scale", arg = {{[0-9]+}}, dtype = "float32", box = [132, 1, 1], swizzle = "none">
// CHECK: %[[TWO:.*]] = arith.constant 2 : i32
// CHECK-NEXT: nvvm.mbarrier.init %{{.*}}, %[[TWO]]
// CHECK: nvvm.setmaxregister decrease
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache = ca : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK-NEXT: nvvm.cp.async.mbarrier.arrive %{{.*}} {noinc = true} : !llvm.ptr<3>
// CHECK: arith.constant 16912 : i32
// CHECK: nvvm.mbarrier.arrive.expect_tx
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%{{.*}}, %{{.*}}, %{{.*}}]
// CHECK: nvvm.setmaxregister increase
// CHECK-NOT: nvvm.cp.async.shared.global
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-4: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK-COUNT-3: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: nvvm.wgmma.wait.group.sync.aligned
// CHECK: math.fma
func.func @block_scaled(%a: memref<4x128x256xf8E4M3FN>, %sa: memref<4x2x128xf32>,
                       %b: memref<4x256x256xf8E4M3FN>, %sb: memref<4x2x2xf32>,
                       %m: memref<4xi32>, %o: memref<4x128x256xbf16>) {
  gg.grouped_matmul masked a(%a : memref<4x128x256xf8E4M3FN>)
      b(%b : memref<4x256x256xf8E4M3FN>) groups(%m : memref<4xi32>)
      a_scale(%sa : memref<4x2x128xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<4x2x2xf32>, <block 128x128>)
      out(%o : memref<4x128x256xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 2, cluster = [1, 1], sms = 132>}
  return
}

// -----

// Contiguous groups start on any row, and TMA's innermost coordinate must
// be 16-byte aligned: A's scale window (a 2-D box of 132 f32 over
// [ceil(K/128), align4(M)]) starts at the tile's first row rounded down to
// 4, and the consumers skip the first row % 4 entries of it.
// CHECK-LABEL: llvm.func @contiguous_block_scaled_kernel
// CHECK-SAME: #ggk.param<tensor_map, operand = "a_scale", arg = {{[0-9]+}}, dtype = "float32", box = [132, 1], swizzle = "none">
// CHECK: %[[DOWN:.*]] = arith.constant -4 : i32
// CHECK-NEXT: %[[FIRST:.*]] = arith.andi %{{.*}}, %[[DOWN]] : i32
// CHECK: nvvm.cp.async.bulk.tensor.shared.cluster.global %{{.*}}, %{{.*}}, %{{.*}}, box[%[[FIRST]], %{{.*}}] {isCTAOnly = true}
// CHECK: nvvm.setmaxregister increase
// CHECK: %[[THREE:.*]] = arith.constant 3 : i32
// CHECK-NEXT: arith.andi %{{.*}}, %[[THREE]] : i32
func.func @contiguous_block_scaled(%a: memref<?x256xf8E4M3FN>, %sa: memref<2x?xf32>,
                                   %b: memref<4x256x256xf8E4M3FN>, %sb: memref<4x2x2xf32>,
                                   %off: memref<5xi32>, %o: memref<?x256xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xf8E4M3FN>)
      b(%b : memref<4x256x256xf8E4M3FN>) groups(%off : memref<5xi32>)
      a_scale(%sa : memref<2x?xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<4x2x2xf32>, <block 128x128>)
      out(%o : memref<?x256xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 2, cluster = [1, 1], sms = 132>}
  return
}

// -----

// K-major 1x128 scales of A ([G, M, ceil(K/128)]: a row's scales are not
// one TMA box) reach the consumers through per-warp shared-memory slots:
// each K block's words are copied by cp.async ahead of their use (lanes
// 0-15: the warp's 16 rows of A; lane 16: B's block), read once all but
// the newest copy group have landed.
// CHECK-LABEL: llvm.func @block_scaled_k_major_kernel
// CHECK: nvvm.setmaxregister increase
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache = ca : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK: nvvm.cp.async.shared.global %{{.*}}, %{{.*}}, 4, cache = ca : !llvm.ptr<3>, !llvm.ptr<1>
// CHECK: nvvm.cp.async.commit.group
// CHECK: nvvm.mbarrier.try_wait.parity
// CHECK-COUNT-4: nvvm.wgmma.mma_async
// CHECK: nvvm.wgmma.commit.group.sync.aligned
// CHECK: nvvm.cp.async.wait.group 1
// CHECK: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: math.fma
func.func @block_scaled_k_major(%a: memref<4x128x256xf8E4M3FN>, %sa: memref<4x128x2xf32>,
                                %b: memref<4x256x256xf8E4M3FN>, %sb: memref<4x2x2xf32>,
                                %m: memref<4xi32>, %o: memref<4x128x256xbf16>) {
  gg.grouped_matmul masked a(%a : memref<4x128x256xf8E4M3FN>)
      b(%b : memref<4x256x256xf8E4M3FN>) groups(%m : memref<4xi32>)
      a_scale(%sa : memref<4x128x2xf32>, <block 1x128>)
      b_scale(%sb : memref<4x2x2xf32>, <block 128x128>)
      out(%o : memref<4x128x256xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 2, cluster = [1, 1], sms = 132>}
  return
}

// -----

// MX scales on a weight gradient (k_grouped): words over the concatenated
// K, named for the runtime as ceil(K/512) (four 128-token exponents each).
// CHECK-LABEL: llvm.func @mx_wgrad_kernel
// CHECK-SAME: #ggk.arg<dtype = "i32", shape = [256, "ceil(K/512)"], written = false>
// CHECK-SAME: #ggk.arg<dtype = "i32", shape = [128, "ceil(K/512)"], written = false>
// CHECK: nvvm.wgmma.mma_async
func.func @mx_wgrad(%a: memref<256x?xf8E4M3FN>, %b: memref<128x?xf8E4M3FN>,
                    %off: memref<5xi32>, %sa: memref<256x?xi32>, %sb: memref<128x?xi32>,
                    %o: memref<4x256x128xf32>) {
  gg.grouped_matmul k_grouped a(%a : memref<256x?xf8E4M3FN>)
      b(%b : memref<128x?xf8E4M3FN>) groups(%off : memref<5xi32>)
      a_scale(%sa : memref<256x?xi32>, <mx 1x128>)
      b_scale(%sb : memref<128x?xi32>, <mx 1x128>)
      out(%o : memref<4x256x128xf32>)
      {config = #gg.config<block = [128, 128, 128], stages = 2, cluster = [1, 1], sms = 132>}
  return
}

// -----

// 112-wide f8 tiles with 128x128 scale blocks of B: a tile's columns may
// straddle two blocks, at one of six places (multiples of 16). The
// promotion switches once per K block between six copies of its FMAs with
// the scales fixed, and a default copy (no boundary inside the tile),
// instead of selecting a scale per element. The consumer warpgroup index
// is made warp-uniform (a shuffle from lane 0), so the tile addresses and
// wgmma descriptors derived from it live in uniform registers.
// CHECK-LABEL: llvm.func @straddling_kernel
// CHECK: nvvm.shfl.sync idx
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 112, k = 32>
// CHECK: scf.index_switch
// CHECK-NEXT: case 1 {
// CHECK-COUNT-56: math.fma
// CHECK: case 6 {
// CHECK: default {
// CHECK-NOT: arith.select
// CHECK-COUNT-56: math.fma
// CHECK: scf.yield
func.func @straddling(%a: memref<4x256x512xf8E4M3FN>, %sa: memref<4x4x256xf32>,
                      %b: memref<4x448x512xf8E4M3FN>, %sb: memref<4x4x4xf32>,
                      %m: memref<4xi32>, %o: memref<4x256x448xbf16>) {
  gg.grouped_matmul masked a(%a : memref<4x256x512xf8E4M3FN>)
      b(%b : memref<4x448x512xf8E4M3FN>) groups(%m : memref<4xi32>)
      a_scale(%sa : memref<4x4x256xf32>, <block 1x128, mn_major>)
      b_scale(%sb : memref<4x4x4xf32>, <block 128x128>)
      out(%o : memref<4x256x448xbf16>)
      {config = #gg.config<block = [128, 112, 128], stages = 4, cluster = [1, 1], sms = 132>, store_pool = array<i64>}
  return
}

// -----

// f8 with 256-column warpgroups and one scale of B for all columns (none
// here): every FMA of the promotion takes that one factor. (Indexing a
// factor per 128 columns read past the factors and crashed; found by
// ggc-fuzz.)
// CHECK-LABEL: llvm.func @f8_wide_kernel
// CHECK: nvvm.wgmma.mma_async {{.*}} <m = 64, n = 256, k = 32>
// CHECK-COUNT-128: math.fma
func.func @f8_wide(%a: memref<4x256x512xf8E4M3FN>, %b: memref<4x512x512xf8E4M3FN>,
                   %m: memref<4xi32>, %o: memref<4x256x512xbf16>) {
  gg.grouped_matmul masked a(%a : memref<4x256x512xf8E4M3FN>)
      b(%b : memref<4x512x512xf8E4M3FN>) groups(%m : memref<4xi32>)
      out(%o : memref<4x256x512xbf16>)
      {config = #gg.config<block = [128, 256, 128], stages = 2, cluster = [1, 1], sms = 132>}
  return
}

// -----

// A bf16 row vector rides the tile's fields as an i32 word: loaded before
// the tile's first wgmma and widened by its bits, narrowed back in the
// epilogue, where the user's epilogue extends it.
// CHECK-LABEL: llvm.func @routed16_kernel
// CHECK: nvvm.setmaxregister increase
// CHECK: llvm.load {{.*}} : !llvm.ptr<1> -> bf16
// CHECK-NEXT: arith.bitcast {{.*}} : bf16 to i16
// CHECK-NEXT: arith.extui {{.*}} : i16 to i32
// CHECK: nvvm.wgmma.fence.aligned
// CHECK: arith.trunci {{.*}} : i32 to i16
// CHECK-NEXT: arith.bitcast {{.*}} : i16 to bf16
// CHECK: arith.extf {{.*}} : bf16 to f32
func.func @routed16(%a: memref<?x256xbf16>, %b: memref<4x128x256xbf16>,
                    %off: memref<5xi32>, %w: memref<?xbf16>, %o: memref<?x128xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x128x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x128xbf16>) rows(%w : memref<?xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 2, cluster = [1, 1], sms = 132>}
      epilogue {
      ^bb0(%acc: f32, %weight: bf16, %g: index):
        %wf = arith.extf %weight : bf16 to f32
        %r = arith.mulf %acc, %wf : f32
        gg.yield %r : f32
      }
  return
}
