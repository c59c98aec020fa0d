// RUN: ggc-opt %s -split-input-file -ggk-await-prior-grid | FileCheck %s
// RUN: ggc-opt %s -split-input-file -ggk-await-prior-grid="enabled=false" | FileCheck %s --check-prefix=OFF
// RUN: ggc-opt %s -split-input-file -ggk-await-prior-grid="launch-dependents-at-entry=true" | FileCheck %s --check-prefix=EARLY

// Before: a kernel for sm_90a (no gg.target) with its partial launch
// contract, whose first instruction loads from global memory. After: it
// waits for the grid ahead of it first, and its contract says so
// (dependent_launch, which the runtime reads); with
// launch-dependents-at-entry it then lets the grid behind it launch. A
// function that is not a kernel is left alone.
// CHECK-LABEL: llvm.func @k_kernel
// CHECK-SAME: dependentLaunch = true
// CHECK-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.wait;", "~{memory}"
// CHECK-NEXT: llvm.load
// EARLY-LABEL: llvm.func @k_kernel
// EARLY-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.wait;", "~{memory}"
// EARLY-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.launch_dependents;", "~{memory}"
// EARLY-NEXT: llvm.load
// CHECK-LABEL: llvm.func @helper
// CHECK-NOT: griddepcontrol
// OFF-NOT: griddepcontrol
// OFF-NOT: dependentLaunch
module {
  llvm.func @k_kernel(%p: !llvm.ptr<1>)
      attributes {ggk.launch = #ggk.launch<name = "k_kernel", layout = "contiguous", cluster = 1, maxGrid = 132, tile = [128, 128, 64], numGroups = 8, n = 1024, k = 512, args = []>,
                  nvvm.kernel} {
    %v = llvm.load %p : !llvm.ptr<1> -> i32
    llvm.return
  }
  llvm.func @helper(%p: !llvm.ptr<1>) {
    %v = llvm.load %p : !llvm.ptr<1> -> i32
    llvm.return
  }
}

// -----

// A small kernel without a launch contract (gg's MoE kernels) waits too:
// its launcher sees the wait in the PTX.
// CHECK-LABEL: llvm.func @small_kernel
// CHECK-NEXT: llvm.inline_asm has_side_effects "griddepcontrol.wait;", "~{memory}"
// CHECK-NEXT: llvm.return
module {
  llvm.func @small_kernel(%p: !llvm.ptr<1>) attributes {nvvm.kernel} {
    llvm.return
  }
}

// -----

// sm_80 has no griddepcontrol: nothing changes.
// CHECK-LABEL: llvm.func @ampere_kernel
// CHECK-NOT: dependentLaunch
// CHECK-NEXT: llvm.return
module attributes {gg.target = "sm_80"} {
  llvm.func @ampere_kernel(%p: !llvm.ptr<1>)
      attributes {ggk.launch = #ggk.launch<name = "ampere_kernel", layout = "contiguous", cluster = 1, maxGrid = 108, tile = [128, 128, 64], numGroups = 8, n = 1024, k = 512, args = []>,
                  nvvm.kernel} {
    llvm.return
  }
}
