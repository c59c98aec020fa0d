// RUN: ggc-opt %s -ggk-lower-epilogue | FileCheck %s --implicit-check-not=ggk.epilogue --implicit-check-not=gg.silu --implicit-check-not=math.exp

// Before: an element's epilogue: the bias added, SiLU, times exp of a
// group scalar. After: the region's ops where the op was, on its inputs,
// with SiLU as x * 1 / (1 + exp2(-x * log2 e)) (an approximate
// reciprocal) and exp through exp2; the result replaces the op's.
// CHECK-LABEL: func.func @epilogue
// CHECK-SAME: (%[[ACC:.*]]: f32, %[[BIAS:.*]]: f32, %[[S:.*]]: f32, %{{.*}}: index)
// CHECK-NEXT: %[[Y:.*]] = arith.addf %[[ACC]], %[[BIAS]] : f32
// CHECK-NEXT: %[[ONE:.*]] = arith.constant 1.000000e+00 : f32
// CHECK-NEXT: %[[NEG:.*]] = arith.negf %[[Y]] : f32
// CHECK-NEXT: %[[LOG2E:.*]] = arith.constant 1.44269{{.*}} : f32
// CHECK-NEXT: %[[M:.*]] = arith.mulf %[[NEG]], %[[LOG2E]] : f32
// CHECK-NEXT: %[[E:.*]] = math.exp2 %[[M]] : f32
// CHECK-NEXT: %[[D:.*]] = arith.addf %[[ONE]], %[[E]] : f32
// CHECK-NEXT: %[[SIG:.*]] = arith.divf %[[ONE]], %[[D]] fastmath<arcp,afn> : f32
// CHECK-NEXT: %[[SILU:.*]] = arith.mulf %[[Y]], %[[SIG]] : f32
// CHECK: %[[ES:.*]] = math.exp2 %{{.*}} : f32
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
