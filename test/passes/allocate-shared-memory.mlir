// RUN: ggc-opt %s -split-input-file -ggk-allocate-shared-memory | FileCheck %s

// Before: three buffers declared in layout order (two stages of 1,000-byte
// A tiles, their two full barriers, a staged output tile aligned to 1,024
// bytes) and addresses into them. After: the buffers sit at 0, 2000 and
// 2048 (2016 rounded up to 1024); each address is the byte arithmetic on
// the base where it stood (no add at offset 0, the i32 stage
// sign-extended), and the declarations are gone. The kernel records the
// total, 2304 and the base's 1024 of slack, in ggk.shared_bytes.
// CHECK-LABEL: llvm.func @placed
// CHECK-SAME: (%[[SMEM:.*]]: !llvm.ptr<3>, %[[S:.*]]: i32)
// CHECK-SAME: attributes {ggk.shared_bytes = 3328 : i64}
// CHECK-NOT: ggk.
// CHECK: %[[S64:.*]] = arith.extsi %[[S]] : i32 to i64
// CHECK: %[[A_OFF:.*]] = arith.muli %[[S64]], %c1000_i64
// CHECK: llvm.getelementptr %[[SMEM]][%[[A_OFF]]] : (!llvm.ptr<3>, i64) -> !llvm.ptr<3>, i8
// CHECK: %[[B_IDX:.*]] = arith.muli %{{.*}}, %c8_i64
// CHECK: %[[B_OFF:.*]] = arith.addi %c2000_i64, %[[B_IDX]]
// CHECK: llvm.getelementptr %[[SMEM]][%[[B_OFF]]]
// CHECK: llvm.getelementptr %[[SMEM]][%c2080_i64]
// CHECK-NOT: ggk.
llvm.func @placed(%smem: !llvm.ptr<3>, %s: i32) -> !llvm.ptr<3> {
  ggk.shared_buffer "a_tiles" attributes {bytes = 2000, align = 1}
  ggk.shared_buffer "full_barriers" attributes {bytes = 16, align = 1}
  ggk.shared_buffer "staged_output" attributes {bytes = 256, align = 1024}
  %a = ggk.shared_address %smem "a_tiles"[%s : i32] attributes {stride = 1000, offset = 0}
  %full = ggk.shared_address %smem "full_barriers"[%s : i32] attributes {stride = 8, offset = 0}
  %out = ggk.shared_address %smem "staged_output" attributes {stride = 0, offset = 32}
  llvm.return %out : !llvm.ptr<3>
}

// -----

// An empty buffer still aligns the next: here 0 bytes at 1,024 move the
// 8-byte one after 100 to 1024.
// CHECK-LABEL: llvm.func @empty_aligns
// CHECK: llvm.getelementptr %{{.*}}[%c1024_i64]
llvm.func @empty_aligns(%smem: !llvm.ptr<3>) -> !llvm.ptr<3> {
  ggk.shared_buffer "first" attributes {bytes = 100, align = 1}
  ggk.shared_buffer "unused" attributes {bytes = 0, align = 1024}
  ggk.shared_buffer "last" attributes {bytes = 8, align = 1}
  %p = ggk.shared_address %smem "last" attributes {stride = 0, offset = 0}
  llvm.return %p : !llvm.ptr<3>
}
