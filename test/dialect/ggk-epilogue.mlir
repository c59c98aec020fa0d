// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// The user's epilogue as the kernel carries it prints as it parses.
// CHECK-LABEL: func.func @round_trip
// CHECK: ggk.epilogue(%{{.*}}, %{{.*}}, %{{.*}}) : (f32, f32, index) -> f32 {
// CHECK-NEXT: ^bb0(%{{.*}}: f32, %{{.*}}: f32, %{{.*}}: index):
// CHECK-NEXT: arith.addf
// CHECK-NEXT: gg.silu
// CHECK-NEXT: ggk.yield %{{.*}} : f32
func.func @round_trip(%acc: f32, %bias: f32, %g: index) -> f32 {
  %0 = ggk.epilogue(%acc, %bias, %g) : (f32, f32, index) -> f32 {
  ^bb0(%x: f32, %b: f32, %group: index):
    %y = arith.addf %x, %b : f32
    %z = gg.silu %y : f32
    ggk.yield %z : f32
  }
  func.return %0 : f32
}

// -----

func.func @arguments(%acc: f32, %g: index) -> f32 {
  // expected-error @+1 {{takes its block's arguments as inputs: the block has 1 ('f32'), the op 2 ('f32', 'index')}}
  %0 = ggk.epilogue(%acc, %g) : (f32, index) -> f32 {
  ^bb0(%x: f32):
    ggk.yield %x : f32
  }
  func.return %0 : f32
}

// -----

func.func @yield_type(%acc: f32) -> f32 {
  // expected-error @+1 {{yields one value of its result's type ('f32') with ggk.yield}}
  %0 = ggk.epilogue(%acc) : (f32) -> f32 {
  ^bb0(%x: f32):
    %h = arith.truncf %x : f32 to f16
    ggk.yield %h : f16
  }
  func.return %0 : f32
}

// -----

func.func @unsupported(%acc: f32) -> f32 {
  %0 = ggk.epilogue(%acc) : (f32) -> f32 {
  ^bb0(%x: f32):
    // expected-error @+1 {{is not supported in epilogues by the NVPTX lowering (arith ops, math.exp, math.exp2, math.absf, math.sqrt, math.rsqrt, math.fma, math.copysign, gg.sigmoid and gg.silu are)}}
    %t = math.tanh %x : f32
    ggk.yield %t : f32
  }
  func.return %0 : f32
}
