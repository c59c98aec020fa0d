// RUN: ggc-opt %s -split-input-file -gg-lower-select-experts | FileCheck %s

// Before: a function holding gg.select_experts over E = 40 f32 logits,
// top-2, renormalised. After: the function is gone and one kernel takes its
// place: logits, weights, ids, then T. A warp a token (a grid-stride loop
// over T): each lane loads two logits (experts lane and lane + 32; the
// second past E = 40 for lanes 8 and up, read at expert 39 and offered as
// taken), the warp's maximum by five shuffles, each logit's exp by ex2,
// then two rounds of a (key, expert, score) butterfly of fifteen shuffles
// each; the weight divided by the chosen ones' sum; lanes below 2 store.
// CHECK-NOT: func.func
// CHECK: llvm.func @router_select_experts(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64)
// CHECK-SAME: nvvm.kernel, nvvm.maxntid = array<i32: 64, 1, 1>
// CHECK: scf.for %{{.*}} = %{{.*}} to %{{.*}} step %{{.*}} : i64
// CHECK: arith.minsi %{{.*}}, %c39_i32 : i32
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK: arith.minsi %{{.*}}, %c39_i32{{.*}} : i32
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK-NOT: llvm.load
// CHECK-COUNT-5: ggk.warp_shuffle_xor
// CHECK-COUNT-2: ggk.exp2_approx
// CHECK-NOT: ggk.exp2_approx
// CHECK-COUNT-30: ggk.warp_shuffle_xor
// CHECK-NOT: ggk.warp_shuffle_xor
// CHECK: arith.divf
// CHECK-NOT: arith.mulf
// CHECK: arith.cmpi slt, %{{.*}}, %c2_i32{{.*}} : i32
// CHECK: scf.if
// CHECK: llvm.store %{{.*}} : f32, !llvm.ptr<1>
// CHECK: llvm.store %{{.*}} : i32, !llvm.ptr<1>
func.func @router(%l: memref<?x40xf32>, %w: memref<?x2xf32>, %i: memref<?x2xi32>) {
  gg.select_experts logits(%l : memref<?x40xf32>) weights(%w : memref<?x2xf32>)
      ids(%i : memref<?x2xi32>) {renormalize, threads = 64 : i64}
  return
}

// -----

// Before: bf16 logits of 8 experts, top-1, not renormalised. After: each
// lane reads one bf16 logit (lanes 8 and up the eighth again, offered as
// taken) and widens it; the weight divides by the sum over all 8 experts'
// exp (five shuffles after the maximum's five, before the round's
// fifteen).
// CHECK-NOT: func.func
// CHECK: llvm.func @top1_select_experts(
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> bf16
// CHECK: arith.extf %{{.*}} : bf16 to f32
// CHECK-COUNT-5: arith.maximumf
// CHECK: ggk.exp2_approx
// CHECK-COUNT-20: ggk.warp_shuffle_xor
// CHECK-NOT: ggk.warp_shuffle_xor
// CHECK: arith.divf
func.func @top1(%l: memref<?x8xbf16>, %w: memref<?x1xf32>, %i: memref<?x1xi32>) {
  gg.select_experts logits(%l : memref<?x8xbf16>) weights(%w : memref<?x1xf32>)
      ids(%i : memref<?x1xi32>) {threads = 256 : i64}
  return
}

// -----

// Before: DeepSeek-V3's router in small: sigmoid scores of 64 experts, a
// correction bias, 4 groups of 16 of which 2 are kept, top-4,
// renormalised, scaled by 2.5. After: one kernel taking logits, bias,
// weights, ids, then T. Each lane's two sigmoids (ex2, approximate
// reciprocal), each plus the expert's bias (two bias loads); each group's
// two best by a butterfly of ten shuffles (four groups: forty); the two
// kept groups' mask by shifts; four rounds of fifteen shuffles; the
// weight divided by the chosen scores' sum, then times 2.5.
// CHECK-NOT: func.func
// CHECK: llvm.func @deepseek_select_experts(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64)
// CHECK-COUNT-2: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK-COUNT-2: ggk.reciprocal_approx
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK: arith.addf
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK: arith.addf
// CHECK-COUNT-40: ggk.warp_shuffle_xor
// CHECK: arith.shli
// CHECK: arith.shli
// CHECK: arith.shrui
// CHECK-COUNT-60: ggk.warp_shuffle_xor
// CHECK-NOT: ggk.warp_shuffle_xor
// CHECK: arith.divf
// CHECK: arith.mulf %{{.*}}, %cst{{.*}} : f32
// CHECK: scf.if
func.func @deepseek(%l: memref<?x64xf32>, %b: memref<64xf32>, %w: memref<?x4xf32>, %i: memref<?x4xi32>) {
  gg.select_experts logits(%l : memref<?x64xf32>) bias(%b : memref<64xf32>)
      weights(%w : memref<?x4xf32>) ids(%i : memref<?x4xi32>)
      {sigmoid, renormalize, groups = 4 : i64, topk_groups = 2 : i64, scaling = 2.5 : f32,
       threads = 128 : i64}
  return
}

// -----

// Before: gg.select_experts_backward, top-8 of 128 experts, a bf16
// gradient. After: one kernel taking weights, ids, grad, out, then T. A
// warp a token: lane j < 8 loads the j-th weight, gradient and id (lanes
// past 7 the eighth's, adding nothing), the lanes' w * g added by five
// shuffles; each lane stores zeros at its four experts of the row, the
// warp meets, then lanes below 8 store w * (g - sum), rounded to bf16, at
// their expert (one inside [0, 128)).
// CHECK-NOT: func.func
// CHECK: llvm.func @grad_select_experts_backward(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64)
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> i32
// CHECK-COUNT-5: ggk.warp_shuffle_xor
// CHECK-COUNT-4: llvm.store %{{.*}} : bf16, !llvm.ptr<1>
// CHECK: ggk.warp_sync
// CHECK: arith.cmpi slt, %{{.*}}, %c128_i32{{.*}} : i32
// CHECK: scf.if
// CHECK: arith.truncf %{{.*}} : f32 to bf16
// CHECK: llvm.store %{{.*}} : bf16, !llvm.ptr<1>
func.func @grad(%w: memref<?x8xf32>, %i: memref<?x8xi32>, %g: memref<?x8xf32>, %d: memref<?x128xbf16>) {
  gg.select_experts_backward weights(%w : memref<?x8xf32>) ids(%i : memref<?x8xi32>)
      grad(%g : memref<?x8xf32>) out(%d : memref<?x128xbf16>) {threads = 128 : i64}
  return
}

// -----

// Before: softmax scores with a correction bias, not renormalised: each
// expert ranks by exp(l - max) / S plus its bias, so S (five shuffles)
// comes before the ranking values; the weight is the chosen exp over S.
// After: the bias loaded beside the logits' divisions, no groups (no
// group butterflies), one round.
// CHECK-NOT: func.func
// CHECK: llvm.func @biased_select_experts(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64)
// CHECK-COUNT-5: arith.maximumf
// CHECK: ggk.exp2_approx
// CHECK-COUNT-5: ggk.warp_shuffle_xor
// CHECK: arith.divf
// CHECK: llvm.load %{{.*}} : !llvm.ptr<1> -> f32
// CHECK: arith.addf
// CHECK-COUNT-15: ggk.warp_shuffle_xor
// CHECK-NOT: ggk.warp_shuffle_xor
// CHECK: arith.divf
// CHECK-NOT: arith.mulf
// CHECK: scf.if
func.func @biased(%l: memref<?x32xbf16>, %b: memref<32xf32>, %w: memref<?x1xf32>, %i: memref<?x1xi32>) {
  gg.select_experts logits(%l : memref<?x32xbf16>) bias(%b : memref<32xf32>)
      weights(%w : memref<?x1xf32>) ids(%i : memref<?x1xi32>) {threads = 32 : i64}
  return
}
