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

// -----

// The scales constant along K and a pair's outputs print as they parse.
// CHECK-LABEL: func.func @scale_and_pair
// CHECK: %[[S:.*]] = ggk.scale %{{.*}} by %{{.*}}, %{{.*}}
// CHECK: %[[P0:.*]] = ggk.insert_output %[[S]] into %{{.*}}[0] : f32 into vector<2xbf16>
// CHECK: ggk.insert_output %{{.*}} into %[[P0]][1] : f32 into vector<2xbf16>
func.func @scale_and_pair(%acc: f32, %row: f32, %col: f32, %pair: vector<2xbf16>) -> vector<2xbf16> {
  %s = ggk.scale %acc by %row, %col
  %p0 = ggk.insert_output %s into %pair[0] : f32 into vector<2xbf16>
  %p1 = ggk.insert_output %acc into %p0[1] : f32 into vector<2xbf16>
  func.return %p1 : vector<2xbf16>
}

// -----

func.func @scale_without_factors(%acc: f32) -> f32 {
  // expected-error @+1 {{takes at least one factor}}
  %s = ggk.scale %acc by
  func.return %s : f32
}

// -----

func.func @output_past_the_pair(%acc: f32, %pair: vector<2xbf16>) -> vector<2xbf16> {
  // expected-error @+1 {{position 2 is outside the pair's 2 outputs}}
  %p = ggk.insert_output %acc into %pair[2] : f32 into vector<2xbf16>
  func.return %p : vector<2xbf16>
}
