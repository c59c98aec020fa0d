// RUN: ggc-opt %s -split-input-file -gg-lower-quantize-group-tokens | FileCheck %s

// Before: a function holding gg.quantize_group_tokens of [T, 2048] tokens
// in G groups. After: the function is gone and one kernel of 256 threads
// takes its place: input, groups, out, scales, padded_groups, then T, G
// and P. CTA 0's thread 0 writes the padded offsets (a loop over the
// groups carrying the running start); then a grid-stride loop over the
// blocks of out carries the cursor (group, its padded start), which an
// scf.while moves on to the block's group. Each thread loads its 8x8
// square (eight 16-byte loads, skipped where no row is the group's), takes
// its columns' maxima, the other square of its warp by one shuffle 16
// lanes apart a column, the warps' through shared memory; 128 threads
// finish a column each (its factor, one IEEE division, to shared memory;
// its scale to out's scales); then eight 8-byte stores of the square's
// columns.
// CHECK-NOT: func.func
// CHECK: llvm.mlir.global internal @t_quantize_group_tokens_factors() {{.*}} : !llvm.array<128 x f32>
// CHECK: llvm.mlir.global internal @t_quantize_group_tokens_maxima() {{.*}} : !llvm.array<1024 x f32>
// CHECK: llvm.func @t_quantize_group_tokens(%{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: !llvm.ptr<1>, %{{.*}}: i64, %{{.*}}: i64, %{{.*}}: i64)
// CHECK-SAME: nvvm.kernel, nvvm.maxntid = array<i32: 256, 1, 1>
// CHECK: scf.if
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}) -> (i32) : i32
// CHECK: llvm.store %{{.*}}, %{{.*}} : i32, !llvm.ptr<1>
// CHECK: scf.for {{.*}} iter_args(%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) -> (i32, i32) : i64
// CHECK: scf.while (%{{.*}} = %{{.*}}, %{{.*}} = %{{.*}}) : (i32, i32) -> (i32, i32, i32)
// CHECK: scf.if %{{.*}} -> (f32, f32
// CHECK-COUNT-8: llvm.load %{{.*}} {alignment = 16 : i64} : !llvm.ptr<1> -> vector<4xi32>
// CHECK-COUNT-8: ggk.warp_shuffle_xor %{{.*}}, 16
// CHECK-NOT: ggk.warp_shuffle_xor
// CHECK-COUNT-8: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<3>
// CHECK: ggk.sync_cta
// CHECK-COUNT-8: llvm.load %{{.*}} : !llvm.ptr<3> -> f32
// CHECK: arith.divf
// CHECK-NOT: arith.divf
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<3>
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<1>
// CHECK: ggk.sync_cta
// CHECK-COUNT-8: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xi32>, !llvm.ptr<1>
// CHECK-NOT: llvm.store
func.func @t(%x: memref<?x2048xbf16>, %o: memref<?xi32>, %q: memref<2048x?xf8E4M3FN>,
             %s: memref<?x2048xf32>, %p: memref<?xi32>) {
  gg.quantize_group_tokens input(%x : memref<?x2048xbf16>) groups(%o : memref<?xi32>)
      out(%q : memref<2048x?xf8E4M3FN>) scales(%s : memref<?x2048xf32>)
      padded_groups(%p : memref<?xi32>)
  return
}

// -----

// Before: C = 48, a partial block of columns. After: the squares past
// column 48 load nothing (their loads' branch also asks the column), and
// their scales and stores are under a branch on the column.
// CHECK-LABEL: llvm.func @partial_quantize_group_tokens
// CHECK: arith.constant 48 : i32
// CHECK: scf.if %{{.*}} -> (f32, f32
// CHECK: scf.if
// CHECK: llvm.store %{{.*}}, %{{.*}} : f32, !llvm.ptr<1>
// CHECK: ggk.sync_cta
// CHECK: scf.if
// CHECK-COUNT-8: llvm.store %{{.*}}, %{{.*}} {alignment = 8 : i64} : vector<2xi32>, !llvm.ptr<1>
func.func @partial(%x: memref<?x48xbf16>, %o: memref<5xi32>, %q: memref<48x?xf8E4M3FN>,
                   %s: memref<?x48xf32>, %p: memref<5xi32>) {
  gg.quantize_group_tokens input(%x : memref<?x48xbf16>) groups(%o : memref<5xi32>)
      out(%q : memref<48x?xf8E4M3FN>) scales(%s : memref<?x48xf32>)
      padded_groups(%p : memref<5xi32>)
  return
}

