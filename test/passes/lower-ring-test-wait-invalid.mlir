// RUN: ggc-opt %s -ggk-lower-ring-test-wait -verify-diagnostics

// Without TMA there is no transaction count to arm: a commit of bytes is an
// error (the loads arrive on the full barrier per thread instead).
llvm.func @commit(%empty: !llvm.ptr<3>, %full: !llvm.ptr<3>, %parity: i32) {
  %bytes = arith.constant 32768 : i32
  ggk.acquire_stage %empty, %parity
  // expected-error @+1 {{states bytes for TMA's transaction count, which this target lacks: its loads arrive per thread}}
  ggk.commit_stage %full, %bytes
  llvm.return
}
