// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// ggk.tile_epilogue prints as it parses.
// CHECK-LABEL: llvm.func @roundtrip
// CHECK: ggk.tile_epilogue(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) acc(%{{.*}} : f32) {
// CHECK: ggk.yield
llvm.func @roundtrip(%f: i32, %acc: f32) {
  ggk.tile_epilogue(%f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f) acc(%acc : f32) {
  ^bb0(%a0: i32, %a1: i32, %a2: i32, %a3: i32, %a4: i32, %a5: i32, %a6: i32,
       %a7: i32, %a8: i32, %a9: i32, %a10: i32, %a: f32):
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @fields(%f: i32, %acc: f32) {
  // expected-error @+1 {{takes the tile's 11 fields (then any words it carries), got 2}}
  ggk.tile_epilogue(%f, %f) acc(%acc : f32) {
  ^bb0(%a0: i32, %a1: i32, %a: f32):
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @arguments(%f: i32, %acc: f32) {
  // expected-error @+1 {{region 'body' must take 12 arguments of types}}
  ggk.tile_epilogue(%f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f) acc(%acc : f32) {
  ^bb0(%a0: i32, %a1: i32, %a2: i32, %a3: i32, %a4: i32, %a5: i32, %a6: i32,
       %a7: i32, %a8: i32, %a9: i32, %a10: i32):
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @yields(%f: i32, %acc: f32) {
  ggk.tile_epilogue(%f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f) acc(%acc : f32) {
  ^bb0(%a0: i32, %a1: i32, %a2: i32, %a3: i32, %a4: i32, %a5: i32, %a6: i32,
       %a7: i32, %a8: i32, %a9: i32, %a10: i32, %a: f32):
    // expected-error @+1 {{must yield no values in region 'body', got 'f32'}}
    ggk.yield %a : f32
  }
  llvm.return
}
