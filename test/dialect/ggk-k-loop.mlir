// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// ggk.k_loop prints as it parses.
// CHECK-LABEL: llvm.func @round_trip
// CHECK: ggk.k_loop %{{.*}} from %{{.*}} acc(%{{.*}} : f32) attributes {release_lag = 1 : i64, stages = 3 : i64}
// CHECK: issue {
// CHECK: } release {
// CHECK: } load_ahead {
llvm.func @round_trip(%n: i32, %c: i32, %z: f32) {
  %acc, %end = ggk.k_loop %n from %c acc(%z : f32)
      attributes {stages = 3 : i64, release_lag = 1 : i64}
    issue {
    ^bb0(%k: i32, %stage: i32, %phase: i32, %a: f32):
      ggk.yield %a : f32
    } release {
    ^bb0(%stage: i32):
      ggk.yield
    } load_ahead {
    ^bb0(%k: i32, %it: i32):
      ggk.yield
    }
  llvm.return
}

// -----

llvm.func @lag_two(%n: i32, %c: i32, %z: f32) {
  // expected-error @+1 {{release_lag must be 0 or 1 (blocks in flight when a stage goes back), got 2}}
  %acc, %end = ggk.k_loop %n from %c acc(%z : f32)
      attributes {stages = 3 : i64, release_lag = 2 : i64}
    issue {
    ^bb0(%k: i32, %stage: i32, %phase: i32, %a: f32):
      ggk.yield %a : f32
    } release {
    ^bb0(%stage: i32):
      ggk.yield
    } load_ahead {
    ^bb0(%k: i32, %it: i32):
      ggk.yield
    }
  llvm.return
}

// -----

llvm.func @no_stages(%n: i32, %c: i32, %z: f32) {
  // expected-error @+1 {{stages must be at least 1, got 0}}
  %acc, %end = ggk.k_loop %n from %c acc(%z : f32)
      attributes {stages = 0 : i64, release_lag = 0 : i64}
    issue {
    ^bb0(%k: i32, %stage: i32, %phase: i32, %a: f32):
      ggk.yield %a : f32
    } release {
    ^bb0(%stage: i32):
      ggk.yield
    } load_ahead {
    ^bb0(%k: i32, %it: i32):
      ggk.yield
    }
  llvm.return
}

// -----

llvm.func @issue_without_acc(%n: i32, %c: i32, %z: f32) {
  // expected-error @+1 {{region 'issue' must take 4 arguments of types 'i32', 'i32', 'i32', 'f32', got 'i32', 'i32', 'i32'}}
  %acc, %end = ggk.k_loop %n from %c acc(%z : f32)
      attributes {stages = 3 : i64, release_lag = 1 : i64}
    issue {
    ^bb0(%k: i32, %stage: i32, %phase: i32):
      ggk.yield %z : f32
    } release {
    ^bb0(%stage: i32):
      ggk.yield
    } load_ahead {
    ^bb0(%k: i32, %it: i32):
      ggk.yield
    }
  llvm.return
}

// -----

// With epilogue_blocks = 1 the loop has an overlap step, printed last.
// CHECK-LABEL: llvm.func @overlap_round_trip
// CHECK: attributes {epilogue_blocks = 1 : i64, release_lag = 1 : i64, stages = 3 : i64}
// CHECK: } overlap {
llvm.func @overlap_round_trip(%n: i32, %c: i32, %z: f32) {
  %acc, %end = ggk.k_loop %n from %c acc(%z : f32)
      attributes {stages = 3 : i64, release_lag = 1 : i64, epilogue_blocks = 1 : i64}
    issue {
    ^bb0(%k: i32, %stage: i32, %phase: i32, %a: f32):
      ggk.yield %a : f32
    } release {
    ^bb0(%stage: i32):
      ggk.yield
    } load_ahead {
    ^bb0(%k: i32, %it: i32):
      ggk.yield
    } overlap {
      ggk.yield
    }
  llvm.return
}

// -----

llvm.func @overlap_without_blocks(%n: i32, %c: i32, %z: f32) {
  // expected-error @+1 {{has an 'overlap' region with epilogue_blocks = 0: the region is the previous tile's epilogue beside block 0, present exactly where epilogue_blocks = 1}}
  %acc, %end = ggk.k_loop %n from %c acc(%z : f32)
      attributes {stages = 3 : i64, release_lag = 1 : i64}
    issue {
    ^bb0(%k: i32, %stage: i32, %phase: i32, %a: f32):
      ggk.yield %a : f32
    } release {
    ^bb0(%stage: i32):
      ggk.yield
    } load_ahead {
    ^bb0(%k: i32, %it: i32):
      ggk.yield
    } overlap {
      ggk.yield
    }
  llvm.return
}

// -----

llvm.func @blocks_without_overlap(%n: i32, %c: i32, %z: f32) {
  // expected-error @+1 {{has no 'overlap' region with epilogue_blocks = 1}}
  %acc, %end = ggk.k_loop %n from %c acc(%z : f32)
      attributes {stages = 3 : i64, release_lag = 1 : i64, epilogue_blocks = 1 : i64}
    issue {
    ^bb0(%k: i32, %stage: i32, %phase: i32, %a: f32):
      ggk.yield %a : f32
    } release {
    ^bb0(%stage: i32):
      ggk.yield
    } load_ahead {
    ^bb0(%k: i32, %it: i32):
      ggk.yield
    }
  llvm.return
}

// -----

llvm.func @two_epilogue_blocks(%n: i32, %c: i32, %z: f32) {
  // expected-error @+1 {{epilogue_blocks must be 0 or 1 (K blocks issued before the previous tile's epilogue), got 2}}
  %acc, %end = ggk.k_loop %n from %c acc(%z : f32)
      attributes {stages = 3 : i64, release_lag = 1 : i64, epilogue_blocks = 2 : i64}
    issue {
    ^bb0(%k: i32, %stage: i32, %phase: i32, %a: f32):
      ggk.yield %a : f32
    } release {
    ^bb0(%stage: i32):
      ggk.yield
    } load_ahead {
    ^bb0(%k: i32, %it: i32):
      ggk.yield
    } overlap {
      ggk.yield
    }
  llvm.return
}
