// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// A kernel's parameters print as they parse: a tensor map's address, a
// device pointer (global or generic) and a run-time size.
// CHECK-LABEL: llvm.func @round_trip
// CHECK-NEXT: ggk.kernel_param #ggk.param<tensor_map, operand = "a", arg = 0, dtype = "bfloat16", box = [64, 128], swizzle = "128B"> -> !llvm.ptr
// CHECK-NEXT: ggk.kernel_param #ggk.param<pointer, operand = "groups", arg = 2> -> !llvm.ptr<1>
// CHECK-NEXT: ggk.kernel_param #ggk.param<pointer, operand = "b", arg = 1> -> !llvm.ptr
// CHECK-NEXT: ggk.kernel_param #ggk.param<size, operand = "a", arg = 0, dim = 0> -> i64
llvm.func @round_trip() {
  %map = ggk.kernel_param #ggk.param<tensor_map, operand = "a", arg = 0, dtype = "bfloat16", box = [64, 128], swizzle = "128B"> -> !llvm.ptr
  %groups = ggk.kernel_param #ggk.param<pointer, operand = "groups", arg = 2> -> !llvm.ptr<1>
  %b = ggk.kernel_param #ggk.param<pointer, operand = "b", arg = 1> -> !llvm.ptr
  %m = ggk.kernel_param #ggk.param<size, operand = "a", arg = 0, dim = 0> -> i64
  llvm.return
}

// -----

func.func @not_a_kernel() {
  // expected-error @+1 {{states a parameter of the kernel: it must sit in the body of an llvm.func}}
  %m = ggk.kernel_param #ggk.param<size, operand = "a", arg = 0, dim = 0> -> i64
  func.return
}

// -----

llvm.func @map_in_global_space() {
  // expected-error @+1 {{of kind tensor_map is the map's address, an '!llvm.ptr', got '!llvm.ptr<1>'}}
  %map = ggk.kernel_param #ggk.param<tensor_map, operand = "a", arg = 0, dtype = "bfloat16", box = [64, 128], swizzle = "128B"> -> !llvm.ptr<1>
  llvm.return
}

// -----

llvm.func @pointer_in_shared_space() {
  // expected-error @+1 {{of kind pointer is a device address, an '!llvm.ptr<1>' or '!llvm.ptr', got '!llvm.ptr<3>'}}
  %p = ggk.kernel_param #ggk.param<pointer, operand = "out", arg = 3> -> !llvm.ptr<3>
  llvm.return
}

// -----

llvm.func @size_as_i32() {
  // expected-error @+1 {{of kind size is an i64, got 'i32'}}
  %m = ggk.kernel_param #ggk.param<size, operand = "a", arg = 0, dim = 0> -> i32
  llvm.return
}
