// RUN: ggc-opt %s -ggk-lower-epilogue | FileCheck %s --implicit-check-not=ggk.epilogue --implicit-check-not=ggk.scale --implicit-check-not=ggk.insert_output --implicit-check-not=gg.silu --implicit-check-not=math.exp

// Before: an element's epilogue: the bias added, SiLU, times exp of a
// group scalar. After: the region's ops where the op was, on its inputs,
// with SiLU as x * 1 / (1 + exp2(-x * log2 e)) (ex2 and an approximate
// reciprocal, both flushing subnormals to zero) and exp through the same
// ex2; the result replaces the op's.
// CHECK-LABEL: func.func @epilogue
// CHECK-SAME: (%[[ACC:.*]]: f32, %[[BIAS:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: index)
// CHECK-NEXT: %[[Y:.*]] = arith.addf %[[ACC]], %[[BIAS]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[NEG:.*]] = arith.negf %[[Y]] : f32
// CHECK-NEXT: %[[LOG2E:.*]] = arith.constant 1.44269{{.*}} : f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[NEG]], %[[LOG2E]] : f32
// CHECK-NEXT: %[[E:.*]] = ggk.exp2_approx %[[M]]
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK-NEXT: %[[SIG:.*]] = ggk.reciprocal_approx %[[D]]
// CHECK-NEXT: %[[SILU:.*]] = arith.mulf %[[Y]], %[[SIG]] : f32
// CHECK: %[[ES:.*]] = ggk.exp2_approx %{{.*}}
// CHECK-NEXT: %[[OUT:.*]] = arith.mulf %[[SILU]], %[[ES]] : f32
// CHECK-NEXT: return %[[OUT]] : f32
func.func @epilogue(%acc: f32, %bias: f32, %s: f32, %g: index) -> f32 {
  %0 = ggk.epilogue(%acc, %bias, %s, %g) : (f32, f32, f32, index) -> f32 {
  ^bb0(%x: f32, %b: f32, %scalar: f32, %group: index):
    %y = arith.addf %x, %b : f32
    %z = gg.silu %y : f32
    %e = math.exp %scalar : f32
    %o = arith.mulf %z, %e : f32
    ggk.yield %o : f32
  }
  func.return %0 : f32
}

// Before: an element scaled by its row's and column's scales (constant
// along K), and a pair's outputs: f32 rounded to bf16, f32 kept for an
// accumulating store's f32 pair, bf16 extended for it. After: the
// products in order, the conversions and the insertions where the ops sat.
// CHECK-LABEL: func.func @scale_and_pair
// CHECK-SAME: (%[[ACC:[^:]*]]: f32, %[[ROW:[^:]*]]: f32, %[[COL:[^:]*]]: f32, %[[PAIR:[^:]*]]: vector<2xbf16>, %[[SUMS:[^:]*]]: vector<2xf32>, %[[H:[^:]*]]: bf16)
// CHECK-NEXT: %[[R:.*]] = arith.mulf %[[ACC]], %[[ROW]] : f32
// CHECK-NEXT: %[[RC:.*]] = arith.mulf %[[R]], %[[COL]] : f32
// CHECK-NEXT: %[[T:.*]] = arith.truncf %[[RC]] : f32 to bf16
// CHECK-NEXT: %[[C0:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[P:.*]] = llvm.insertelement %[[T]], %[[PAIR]][%[[C0]] : i32] : vector<2xbf16>
// CHECK-NEXT: %[[C1:.*]] = arith.constant 1 : i32
// CHECK-NEXT: %[[S0:.*]] = llvm.insertelement %[[RC]], %[[SUMS]][%[[C1]] : i32] : vector<2xf32>
// CHECK-NEXT: %[[X:.*]] = arith.extf %[[H]] : bf16 to f32
// CHECK-NEXT: %[[C0B:.*]] = arith.constant 0 : i32
// CHECK-NEXT: %[[S1:.*]] = llvm.insertelement %[[X]], %[[S0]][%[[C0B]] : i32] : vector<2xf32>
// CHECK-NEXT: return %[[P]], %[[S1]]
func.func @scale_and_pair(%acc: f32, %row: f32, %col: f32, %pair: vector<2xbf16>,
                          %sums: vector<2xf32>, %h: bf16) -> (vector<2xbf16>, vector<2xf32>) {
  %s = ggk.scale %acc by %row, %col
  %p = ggk.insert_output %s into %pair[0] : f32 into vector<2xbf16>
  %s0 = ggk.insert_output %s into %sums[1] : f32 into vector<2xf32>
  %s1 = ggk.insert_output %h into %s0[0] : bf16 into vector<2xf32>
  func.return %p, %s1 : vector<2xbf16>, vector<2xf32>
}

// Before: SiLU on f16 in an epilogue. After: the same formula in f16, with
// math.exp2 and a division allowed to be approximate, not the f32-only
// ggk.exp2_approx and ggk.reciprocal_approx.
// CHECK-LABEL: func.func @f16_silu
// CHECK: %[[H:.*]] = arith.truncf %{{.*}} : f32 to f16
// CHECK: %[[E:.*]] = math.exp2 %{{.*}} : f16
// CHECK: %[[D:.*]] = arith.addf %{{.*}}, %[[E]] : f16
// CHECK: %[[S:.*]] = arith.divf %{{.*}}, %[[D]] fastmath<arcp,afn> : f16
// CHECK: arith.mulf %[[H]], %[[S]] : f16
func.func @f16_silu(%acc: f32) -> f32 {
  %0 = ggk.epilogue(%acc) : (f32) -> f32 {
  ^bb0(%x: f32):
    %h = arith.truncf %x : f32 to f16
    %z = gg.silu %h : f16
    %o = arith.extf %z : f16 to f32
    ggk.yield %o : f32
  }
  func.return %0 : f32
}
