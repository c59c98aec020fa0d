// RUN: ggc-opt %s -split-input-file -ggk-collect-launch -verify-diagnostics | FileCheck %s

// Before: a kernel as the pipeline leaves it: what gg-lower-to-nvvm wrote
// of its launch (no block, shared memory or parameters), its nvvm.maxntid
// (ggk-warp-specialize's), its ggk.shared_bytes (ggk-allocate-shared-
// memory's) and a ggk.param on each argument. After: the complete
// contract, the parameters in argument order; ggk.shared_bytes and the
// ggk.param attributes are gone.
// CHECK-LABEL: llvm.func @k_kernel
// CHECK-SAME: (%{{[^:]*}}: !llvm.ptr<1>, %{{[^:]*}}: !llvm.ptr<1>, %{{[^:]*}}: i64)
// CHECK-SAME: ggk.launch = #ggk.launch<name = "k_kernel", layout = "contiguous", block = 256, sharedBytes = 99328, cluster = 1, maxGrid = 132, tile = [128, 128, 64], numGroups = 8, n = 1024, k = 512, params = [#ggk.param<pointer, operand = "out", arg = 3>, #ggk.param<pointer, operand = "groups", arg = 2>, #ggk.param<size, operand = "a", arg = 0, dim = 0>], args = []>
// CHECK-NOT: ggk.shared_bytes
// CHECK-SAME: nvvm.maxntid = array<i32: 256, 1, 1>
llvm.func @k_kernel(%out: !llvm.ptr<1> {ggk.param = #ggk.param<pointer, operand = "out", arg = 3>},
                    %groups: !llvm.ptr<1> {ggk.param = #ggk.param<pointer, operand = "groups", arg = 2>},
                    %m: i64 {ggk.param = #ggk.param<size, operand = "a", arg = 0, dim = 0>})
    attributes {ggk.launch = #ggk.launch<name = "k_kernel", layout = "contiguous", cluster = 1, maxGrid = 132, tile = [128, 128, 64], numGroups = 8, n = 1024, k = 512, args = []>,
                ggk.shared_bytes = 99328 : i64, nvvm.maxntid = array<i32: 256, 1, 1>} {
  llvm.return
}

// -----

// expected-error @+1 {{has no nvvm.maxntid [threads, 1, 1] for its launch; ggk-warp-specialize sets it}}
llvm.func @no_block(%m: i64 {ggk.param = #ggk.param<size, operand = "a", arg = 0, dim = 0>})
    attributes {ggk.launch = #ggk.launch<name = "no_block", layout = "contiguous", cluster = 1, maxGrid = 132, tile = [128, 128, 64], numGroups = 8, n = 1024, k = 512, args = []>,
                ggk.shared_bytes = 1024 : i64} {
  llvm.return
}

// -----

// expected-error @+1 {{has no ggk.shared_bytes for its launch; ggk-allocate-shared-memory sets it}}
llvm.func @no_shared(%m: i64 {ggk.param = #ggk.param<size, operand = "a", arg = 0, dim = 0>})
    attributes {ggk.launch = #ggk.launch<name = "no_shared", layout = "contiguous", cluster = 1, maxGrid = 132, tile = [128, 128, 64], numGroups = 8, n = 1024, k = 512, args = []>,
                nvvm.maxntid = array<i32: 256, 1, 1>} {
  llvm.return
}

// -----

// A pass that adds a parameter must say what feeds it.
// expected-error @+1 {{argument 1 has no ggk.param: nothing says what feeds it at launch}}
llvm.func @unlabelled(%m: i64 {ggk.param = #ggk.param<size, operand = "a", arg = 0, dim = 0>}, %extra: !llvm.ptr<1>)
    attributes {ggk.launch = #ggk.launch<name = "unlabelled", layout = "contiguous", cluster = 1, maxGrid = 132, tile = [128, 128, 64], numGroups = 8, n = 1024, k = 512, args = []>,
                ggk.shared_bytes = 1024 : i64, nvvm.maxntid = array<i32: 256, 1, 1>} {
  llvm.return
}

// -----

// Before: parameters stated as ggk.kernel_param ops (as gg-lower-to-nvvm
// and the passes after it state them), after an argument the kernel has.
// After: each an argument after it, in order, its uses the argument; a
// tensor map passed by value as a __grid_constant__; the contract lists
// them all in argument order.
// CHECK-LABEL: llvm.func @stated_kernel
// CHECK-SAME: (%{{[^:]*}}: i64, %[[MAP:[^:]*]]: !llvm.ptr {llvm.align = 64 : i64, llvm.byval = !llvm.array<128 x i8>, nvvm.grid_constant}, %[[OUT:[^:]*]]: !llvm.ptr<1>)
// CHECK-SAME: params = [#ggk.param<size, operand = "a", arg = 0, dim = 0>, #ggk.param<tensor_map, operand = "b", arg = 1, dtype = "bfloat16", box = [64, 128, 1], swizzle = "128B">, #ggk.param<pointer, operand = "out", arg = 3>]
// CHECK-NEXT: llvm.call @use(%[[MAP]], %[[OUT]])
// CHECK-NOT: ggk.kernel_param
llvm.func @use(!llvm.ptr, !llvm.ptr<1>)
llvm.func @stated_kernel(%m: i64 {ggk.param = #ggk.param<size, operand = "a", arg = 0, dim = 0>})
    attributes {ggk.launch = #ggk.launch<name = "stated_kernel", layout = "contiguous", cluster = 1, maxGrid = 132, tile = [128, 128, 64], numGroups = 8, n = 1024, k = 512, args = []>,
                ggk.shared_bytes = 1024 : i64, nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>} {
  %map = ggk.kernel_param #ggk.param<tensor_map, operand = "b", arg = 1, dtype = "bfloat16", box = [64, 128, 1], swizzle = "128B"> -> !llvm.ptr
  %out = ggk.kernel_param #ggk.param<pointer, operand = "out", arg = 3> -> !llvm.ptr<1>
  llvm.call @use(%map, %out) : (!llvm.ptr, !llvm.ptr<1>) -> ()
  llvm.return
}
