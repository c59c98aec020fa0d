// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// ggk.foreach_tile and #ggk.launch print as they parse.
// CHECK-LABEL: llvm.func @walk
// CHECK-SAME: ggk.launch = #ggk.launch<name = "walk", layout = "masked", block = 256, sharedBytes = 1024, cluster = 1, maxGrid = 132, tile = [64, 128, 64], numGroups = 4, n = 1024, k = 512, params = [#ggk.param<tensor_map, operand = "a", arg = 0, dtype = "bfloat16", box = [64, 64, 1], swizzle = "128B">, #ggk.param<pointer, operand = "groups", arg = 2>, #ggk.param<size, operand = "a", arg = 0, dim = 1>], args = [#ggk.arg<dtype = "bf16", shape = [4, 256, 512], written = false>, #ggk.arg<dtype = "f32", shape = ["K", 7], written = true>]>
// CHECK: ggk.foreach_tile masked groups(%{{.*}} : !llvm.ptr<1>, i32) size(%{{.*}}) iter_args(%{{.*}} : i32) attributes {cluster = 1 : i64
// CHECK: ggk.yield %{{.*}} : i32
llvm.func @walk(%groups: !llvm.ptr<1>, %m: i64) -> i32 attributes {ggk.launch = #ggk.launch<name = "walk", layout = "masked", block = 256, sharedBytes = 1024, cluster = 1, maxGrid = 132, tile = [64, 128, 64], numGroups = 4, n = 1024, k = 512, params = [#ggk.param<tensor_map, operand = "a", arg = 0, dtype = "bfloat16", box = [64, 64, 1], swizzle = "128B">, #ggk.param<pointer, operand = "groups", arg = 2>, #ggk.param<size, operand = "a", arg = 0, dim = 1>], args = [#ggk.arg<dtype = "bf16", shape = [4, 256, 512], written = false>, #ggk.arg<dtype = "f32", shape = ["K", 7], written = true>]>} {
  %c0 = arith.constant 0 : i32
  %n = ggk.foreach_tile masked groups(%groups : !llvm.ptr<1>, i32) size(%m)
      iter_args(%c0 : i32) attributes {tile = array<i64: 64, 128, 64>,
      num_groups = 4, m = 256, n = 1024, k = 512, cluster = 1, k_alignment = 1} {
  ^bb0(%g: i32, %mb: i32, %nb: i32, %row: i32, %gs: i32, %valid: i32,
       %ks: i32, %kf: i32, %ke: i32, %nk: i32, %sb: i32, %count: i32):
    %next = arith.addi %count, %nk : i32
    ggk.yield %next : i32
  } -> i32
  llvm.return %n : i32
}

// -----

llvm.func @missing_fields(%groups: !llvm.ptr<1>, %m: i64) {
  // expected-error @+1 {{body must take the 11 tile fields and the 0 carried values, 11 arguments, got 2}}
  ggk.foreach_tile contiguous groups(%groups : !llvm.ptr<1>, i32) size(%m)
      attributes {tile = array<i64: 128, 128, 64>, num_groups = 4, m = 0,
      n = 1024, k = 512, cluster = 1, k_alignment = 1} {
  ^bb0(%g: i32, %mb: i32):
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @zero_ungrouped_masked(%groups: !llvm.ptr<1>, %m: i64) {
  // expected-error @+1 {{zero_ungrouped walks the rows outside a contiguous layout's groups; got layout masked}}
  ggk.foreach_tile masked groups(%groups : !llvm.ptr<1>, i32) size(%m)
      attributes {tile = array<i64: 128, 128, 64>, num_groups = 4, m = 128,
      n = 1024, k = 512, cluster = 1, k_alignment = 1, zero_ungrouped} {
  ^bb0(%g: i32, %mb: i32, %nb: i32, %row: i32, %gs: i32, %valid: i32,
       %ks: i32, %kf: i32, %ke: i32, %nk: i32, %sb: i32):
    ggk.yield
  }
  llvm.return
}

// -----

// A walk reading a group table, and the op that fills it, print as they
// parse.
// CHECK-LABEL: llvm.func @group_table
// CHECK: ggk.fill_group_table %{{.*}} from(%{{.*}} : !llvm.ptr<1>) thread(%{{.*}}) attributes {entries = 4 : i64, groups_type = i32, threads = 384 : i64}
// CHECK: ggk.foreach_tile masked groups(%{{.*}} : !llvm.ptr<1>, i32) size(%{{.*}}) table(%{{.*}}) attributes
llvm.func @group_table(%groups: !llvm.ptr<1>, %m: i64, %table: !llvm.ptr<3>, %tid: i32) {
  ggk.fill_group_table %table from(%groups : !llvm.ptr<1>) thread(%tid)
      attributes {entries = 4, threads = 384, groups_type = i32}
  ggk.foreach_tile masked groups(%groups : !llvm.ptr<1>, i32) size(%m)
      table(%table) attributes {tile = array<i64: 128, 128, 64>,
      num_groups = 4, m = 128, n = 1024, k = 512, cluster = 1, k_alignment = 1} {
  ^bb0(%g: i32, %mb: i32, %nb: i32, %row: i32, %gs: i32, %valid: i32,
       %ks: i32, %kf: i32, %ke: i32, %nk: i32, %sb: i32):
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @group_table_k_grouped(%groups: !llvm.ptr<1>, %k: i64, %table: !llvm.ptr<3>) {
  // expected-error @+1 {{reads a table of group counts or offsets in a masked or contiguous walk only; got layout k_grouped}}
  ggk.foreach_tile k_grouped groups(%groups : !llvm.ptr<1>, i32) size(%k)
      table(%table) attributes {tile = array<i64: 128, 128, 128>,
      num_groups = 4, m = 256, n = 1024, k = 0, cluster = 1, k_alignment = 1} {
  ^bb0(%g: i32, %mb: i32, %nb: i32, %row: i32, %gs: i32, %valid: i32,
       %ks: i32, %kf: i32, %ke: i32, %nk: i32, %sb: i32):
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @group_table_f32(%groups: !llvm.ptr<1>, %table: !llvm.ptr<3>, %tid: i32) {
  // expected-error @+1 {{groups_type must be i32 or i64, got 'f32'}}
  ggk.fill_group_table %table from(%groups : !llvm.ptr<1>) thread(%tid)
      attributes {entries = 4, threads = 384, groups_type = f32}
  llvm.return
}

// -----

llvm.func @group_table_empty(%groups: !llvm.ptr<1>, %table: !llvm.ptr<3>, %tid: i32) {
  // expected-error @+1 {{copies at least one entry with at least one thread; got entries = 0, threads = 384}}
  ggk.fill_group_table %table from(%groups : !llvm.ptr<1>) thread(%tid)
      attributes {entries = 0, threads = 384, groups_type = i32}
  llvm.return
}

// -----

llvm.func @cluster_of_four(%groups: !llvm.ptr<1>, %m: i64, %rank: i32) {
  // expected-error @+1 {{walks clusters of 1 or 2 CTAs (padded_contiguous alone), got 4 with layout contiguous}}
  ggk.foreach_tile contiguous groups(%groups : !llvm.ptr<1>, i32) size(%m)
      rank(%rank) attributes {tile = array<i64: 128, 128, 64>, num_groups = 4,
      m = 0, n = 1024, k = 512, cluster = 4, k_alignment = 1} {
  ^bb0(%g: i32, %mb: i32, %nb: i32, %row: i32, %gs: i32, %valid: i32,
       %ks: i32, %kf: i32, %ke: i32, %nk: i32, %sb: i32):
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @padded_pair(%groups: !llvm.ptr<1>, %m: i64, %rank: i32) {
  // expected-error @+1 {{walks clusters of 1 or 2 CTAs (padded_contiguous alone), got 2 with layout padded_contiguous}}
  ggk.foreach_tile padded_contiguous groups(%groups : !llvm.ptr<1>, i32)
      size(%m) rank(%rank) attributes {tile = array<i64: 128, 128, 64>,
      num_groups = 4, m = 0, n = 1024, k = 512, cluster = 2, k_alignment = 1} {
  ^bb0(%g: i32, %mb: i32, %nb: i32, %row: i32, %gs: i32, %valid: i32,
       %ks: i32, %kf: i32, %ke: i32, %nk: i32, %sb: i32):
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @cluster_without_rank(%groups: !llvm.ptr<1>, %m: i64) {
  // expected-error @+1 {{takes a cluster_rank exactly when its cluster (2) has more than one CTA}}
  ggk.foreach_tile contiguous groups(%groups : !llvm.ptr<1>, i32) size(%m)
      attributes {tile = array<i64: 128, 128, 64>, num_groups = 4, m = 0,
      n = 1024, k = 512, cluster = 2, k_alignment = 1} {
  ^bb0(%g: i32, %mb: i32, %nb: i32, %row: i32, %gs: i32, %valid: i32,
       %ks: i32, %kf: i32, %ke: i32, %nk: i32, %sb: i32):
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @band_with_n_fastest(%groups: !llvm.ptr<1>, %m: i64) {
  // expected-error @+1 {{m_band must be in [0, 1024] and bands M blocks, which n_fastest does not walk first; got m_band = 4 with n_fastest}}
  ggk.foreach_tile contiguous groups(%groups : !llvm.ptr<1>, i32) size(%m)
      attributes {tile = array<i64: 128, 128, 64>, num_groups = 4, m = 0,
      n = 1024, k = 512, cluster = 1, k_alignment = 1, n_fastest, m_band = 4} {
  ^bb0(%g: i32, %mb: i32, %nb: i32, %row: i32, %gs: i32, %valid: i32,
       %ks: i32, %kf: i32, %ke: i32, %nk: i32, %sb: i32):
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @groups_type(%groups: !llvm.ptr<1>, %m: i64) {
  // expected-error @+1 {{groups_type must be i32 or i64, got 'f32'}}
  ggk.foreach_tile contiguous groups(%groups : !llvm.ptr<1>, f32) size(%m)
      attributes {tile = array<i64: 128, 128, 64>, num_groups = 4, m = 0,
      n = 1024, k = 512, cluster = 1, k_alignment = 1} {
  ^bb0(%g: i32, %mb: i32, %nb: i32, %row: i32, %gs: i32, %valid: i32,
       %ks: i32, %kf: i32, %ke: i32, %nk: i32, %sb: i32):
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @carried_types(%groups: !llvm.ptr<1>, %m: i64) {
  %c0 = arith.constant 0 : i32
  // expected-error @+1 {{carried value #0 has type 'i32', which the body argument and the result must have too}}
  %n = ggk.foreach_tile contiguous groups(%groups : !llvm.ptr<1>, i32) size(%m)
      iter_args(%c0 : i32) attributes {tile = array<i64: 128, 128, 64>,
      num_groups = 4, m = 0, n = 1024, k = 512, cluster = 1, k_alignment = 1} {
  ^bb0(%g: i32, %mb: i32, %nb: i32, %row: i32, %gs: i32, %valid: i32,
       %ks: i32, %kf: i32, %ke: i32, %nk: i32, %sb: i32, %count: i64):
    %c = arith.constant 0 : i32
    ggk.yield %c : i32
  } -> i32
  llvm.return
}

// -----

// expected-error @+1 {{param of 'out': dtype, box and swizzle are given exactly for tensor maps}}
llvm.func @pointer_with_box() attributes {p = #ggk.param<pointer, operand = "out", arg = 3, box = [64, 1]>} {
  llvm.return
}

// -----

// expected-error @+1 {{param of 'a': dim is given exactly for sizes}}
llvm.func @size_without_dim() attributes {p = #ggk.param<size, operand = "a", arg = 0>} {
  llvm.return
}

// -----

// expected-error @+1 {{arg shape entries must be sizes or names of run-time sizes, got 1.000000e+00 : f32}}
llvm.func @float_size() attributes {p = #ggk.arg<dtype = "bf16", shape = [1.0 : f32], written = false>} {
  llvm.return
}

// -----

// expected-error @+1 {{launch of 'k': block, cluster and max_grid must be positive and shared bytes and ungrouped spans not negative}}
llvm.func @launch_negative_spans() attributes {l = #ggk.launch<name = "k", layout = "contiguous", block = 384, sharedBytes = 0, cluster = 1, maxGrid = 132, tile = [128, 128, 64], numGroups = 1, n = 128, args = [], ungroupedSpans = -1>} {
  llvm.return
}

// -----

// ungroupedSpans prints where it is not 0 (gg's zero_ungrouped: 2).
// CHECK-LABEL: llvm.func @launch_spans
// CHECK-SAME: args = [], ungroupedSpans = 2>
llvm.func @launch_spans() attributes {l = #ggk.launch<name = "k", layout = "contiguous", block = 384, sharedBytes = 0, cluster = 1, maxGrid = 132, tile = [128, 128, 64], numGroups = 1, n = 128, args = [], ungroupedSpans = 2>} {
  llvm.return
}

// -----

// expected-error @+1 {{launch of 'k': params must all be #ggk.param}}
llvm.func @launch_params() attributes {l = #ggk.launch<name = "k", layout = "contiguous", block = 384, sharedBytes = 0, cluster = 1, maxGrid = 132, tile = [128, 128, 64], numGroups = 1, n = 128, params = [1 : i64], args = []>} {
  llvm.return
}

// -----

llvm.func @buffer_align(%smem: !llvm.ptr<3>) {
  // expected-error @+1 {{align must be a power of two, got 3}}
  ggk.shared_buffer "a_tiles" attributes {bytes = 100, align = 3}
  llvm.return
}

// -----

llvm.func @buffer_bytes(%smem: !llvm.ptr<3>) {
  // expected-error @+1 {{bytes must be at least 0, got -1}}
  ggk.shared_buffer "a_tiles" attributes {bytes = -1, align = 1}
  llvm.return
}

// -----

llvm.func @address_stride_without_index(%smem: !llvm.ptr<3>) -> !llvm.ptr<3> {
  // expected-error @+1 {{has a stride (8) but no index to multiply}}
  %p = ggk.shared_address %smem "a_tiles" attributes {stride = 8, offset = 0}
  llvm.return %p : !llvm.ptr<3>
}

// -----

llvm.func @empty_barrier_warps(%empty: !llvm.ptr<3>) {
  // expected-error @+1 {{consumer_warps must be at least 1, got 0}}
  ggk.init_empty_barrier %empty attributes {consumer_warps = 0, cluster = 1}
  llvm.return
}

// -----

llvm.func @publish_cluster(%leader: i1) {
  // expected-error @+1 {{cluster must be at least 1, got 0}}
  ggk.publish_barrier_init %leader attributes {cluster = 0}
  llvm.return
}

// -----

llvm.func @leave_cluster() {
  // expected-error @+1 {{cluster must be at least 1, got -2}}
  ggk.leave_cluster attributes {cluster = -2}
  llvm.return
}

// -----

llvm.func @buffer_name(%smem: !llvm.ptr<3>) {
  // expected-error @+1 {{needs a name}}
  ggk.shared_buffer "" attributes {bytes = 100, align = 1}
  llvm.return
}

// -----

llvm.func @address_negative_offset(%smem: !llvm.ptr<3>, %s: i32) -> !llvm.ptr<3> {
  // expected-error @+1 {{stride and offset must be at least 0, got 8 and -4}}
  %p = ggk.shared_address %smem "a_tiles"[%s : i32] attributes {stride = 8, offset = -4}
  llvm.return %p : !llvm.ptr<3>
}

// -----

llvm.func @shared_rows_gathered(%full: !llvm.ptr<3>, %dst: !llvm.ptr<3>, %a: !llvm.ptr,
    %k: i32, %row: i32, %valid: i32, %ids: !llvm.ptr<1>, %shared: i1, %rank: i32) {
  // expected-error @+1 {{shares its rows with the pair's other CTA by TMA multicast: it takes shared and rank together, and neither with a gather}}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row] valid(%valid)
      extents(%k, %row) gather(%ids) shared(%shared) rank(%rank)
      attributes {tile_rows = 128, row_bytes = 128, other_bytes = 0,
      granule = 128, box_rows = array<i64: 128>, element_bytes = 2}
  llvm.return
}
