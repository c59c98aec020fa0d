// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// ggk.load_b_tile and ggk.release_stage print as they parse.
// CHECK-LABEL: llvm.func @round_trip
// CHECK: ggk.load_b_tile %{{.*}}, %{{.*}} from(%{{.*}}) at[%{{.*}}, %{{.*}}, %{{.*}}] rank(%{{.*}}) attributes {block_k = 64 : i64, block_n = 128 : i64, cache_policy = 0 : i64, chunk_columns = 64 : i64, cluster = 2 : i64}
// CHECK: ggk.load_b_tile %{{.*}}, %{{.*}} from(%{{.*}}) at[%{{.*}}, %{{.*}}] attributes {block_k = 64 : i64, block_n = 256 : i64, cache_policy = 0 : i64, chunk_columns = 64 : i64, cluster = 1 : i64, n_major}
// CHECK: ggk.load_b_tile %{{.*}}, %{{.*}} from(%{{.*}}) at[%{{.*}}, %{{.*}}, %{{.*}}] rank(%{{.*}}) shared(%{{.*}}) attributes {block_k = 64 : i64, block_n = 128 : i64, cache_policy = 0 : i64, chunk_columns = 64 : i64, cluster = 2 : i64}
// CHECK: ggk.release_stage %{{.*}} attributes {cluster = 2 : i64}
llvm.func @round_trip(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %map: !llvm.ptr,
                      %k: i32, %n: i32, %g: i32, %rank: i32, %shared: i1) {
  ggk.load_b_tile %dst, %full from(%map) at[%k, %n, %g] rank(%rank)
      attributes {block_n = 128, block_k = 64, chunk_columns = 64,
                  cluster = 2, cache_policy = 0}
  ggk.load_b_tile %dst, %full from(%map) at[%k, %n]
      attributes {n_major, block_n = 256, block_k = 64, chunk_columns = 64,
                  cluster = 1, cache_policy = 0}
  ggk.load_b_tile %dst, %full from(%map) at[%k, %n, %g] rank(%rank)
      shared(%shared) attributes {block_n = 128, block_k = 64,
                                  chunk_columns = 64, cluster = 2,
                                  cache_policy = 0}
  ggk.release_stage %full attributes {cluster = 2}
  llvm.return
}

// -----

// Without TMA, `map` is B's address and `extents` its sizes, innermost
// first: two for a 2-D B, three (the groups last) with a group.
// CHECK-LABEL: llvm.func @extents
// CHECK-SAME: (%{{[^:]*}}: !llvm.ptr<3>, %{{[^:]*}}: !llvm.ptr<3>, %{{[^:]*}}: !llvm.ptr, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %[[KS:[^:]*]]: i32, %[[NS:[^:]*]]: i32, %[[GS:[^:]*]]: i32)
// CHECK: ggk.load_b_tile %{{.*}}, %{{.*}} from(%{{.*}}) at[%{{.*}}, %{{.*}}, %{{.*}}] extents(%[[KS]], %[[NS]], %[[GS]]) attributes {block_k = 64 : i64, block_n = 128 : i64, cache_policy = 0 : i64, chunk_columns = 64 : i64, cluster = 1 : i64}
// CHECK: ggk.load_b_tile %{{.*}}, %{{.*}} from(%{{.*}}) at[%{{.*}}, %{{.*}}] extents(%[[NS]], %[[KS]]) attributes {{{.*}}n_major}
llvm.func @extents(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %b: !llvm.ptr,
                   %k: i32, %n: i32, %g: i32, %ks: i32, %ns: i32, %gs: i32) {
  ggk.load_b_tile %dst, %full from(%b) at[%k, %n, %g] extents(%ks, %ns, %gs)
      attributes {block_n = 128, block_k = 64, chunk_columns = 64,
                  cluster = 1, cache_policy = 0}
  ggk.load_b_tile %dst, %full from(%b) at[%k, %n] extents(%ns, %ks)
      attributes {n_major, block_n = 128, block_k = 64, chunk_columns = 64,
                  cluster = 1, cache_policy = 0}
  llvm.return
}

// -----

// A group means a 3-D operand: its groups are the third extent.
llvm.func @extents_without_groups(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>,
    %b: !llvm.ptr, %k: i32, %n: i32, %g: i32, %ks: i32, %ns: i32) {
  // expected-error @+1 {{takes the operand's 3 extents (innermost first, the groups last) or none, got 2}}
  ggk.load_b_tile %dst, %full from(%b) at[%k, %n, %g] extents(%ks, %ns)
      attributes {block_n = 128, block_k = 64, chunk_columns = 64,
                  cluster = 1, cache_policy = 0}
  llvm.return
}

// -----

llvm.func @cluster_without_rank(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>,
                                %map: !llvm.ptr, %k: i32, %n: i32) {
  // expected-error @+1 {{takes a cluster_rank exactly when its cluster (2) has more than one CTA}}
  ggk.load_b_tile %dst, %full from(%map) at[%k, %n]
      attributes {block_n = 128, block_k = 64, chunk_columns = 64,
                  cluster = 2, cache_policy = 0}
  llvm.return
}

// -----

llvm.func @rank_alone(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>,
                      %map: !llvm.ptr, %k: i32, %n: i32, %rank: i32) {
  // expected-error @+1 {{takes a cluster_rank exactly when its cluster (1) has more than one CTA}}
  ggk.load_b_tile %dst, %full from(%map) at[%k, %n] rank(%rank)
      attributes {block_n = 128, block_k = 64, chunk_columns = 64,
                  cluster = 1, cache_policy = 0}
  llvm.return
}

// -----

llvm.func @shared_alone(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>,
                        %map: !llvm.ptr, %k: i32, %n: i32, %shared: i1) {
  // expected-error @+1 {{takes `shared` (whether the cluster's CTAs load one tile together) only in a cluster, got cluster 1}}
  ggk.load_b_tile %dst, %full from(%map) at[%k, %n] shared(%shared)
      attributes {block_n = 128, block_k = 64, chunk_columns = 64,
                  cluster = 1, cache_policy = 0}
  llvm.return
}

// -----

llvm.func @halves_in_a_cluster(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>,
                               %map: !llvm.ptr, %k: i32, %n: i32, %rank: i32) {
  // column_halves' two boxes are the CTA's own.
  // expected-error @+1 {{loads two halves (second_half_row 768) only K-major, alone (cluster 1) and with block_n a multiple of 16, got cluster 2, block_n 128}}
  ggk.load_b_tile %dst, %full from(%map) at[%k, %n] rank(%rank)
      attributes {block_n = 128, block_k = 64, chunk_columns = 64,
                  cluster = 2, cache_policy = 0, second_half_row = 768}
  llvm.return
}

// -----

llvm.func @uneven_chunks(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>,
                         %map: !llvm.ptr, %k: i32, %n: i32, %rank: i32) {
  // Three 64-column chunks cannot be shared by two CTAs.
  // expected-error @+1 {{cannot split its 3 column chunks among the 2 CTAs of its cluster}}
  ggk.load_b_tile %dst, %full from(%map) at[%k, %n] rank(%rank)
      attributes {n_major, block_n = 192, block_k = 64, chunk_columns = 64,
                  cluster = 2, cache_policy = 0}
  llvm.return
}

// -----

llvm.func @partial_chunk(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>,
                         %map: !llvm.ptr, %k: i32, %n: i32) {
  // expected-error @+1 {{block_n 96 is not a whole number of column chunks of 64}}
  ggk.load_b_tile %dst, %full from(%map) at[%k, %n]
      attributes {n_major, block_n = 96, block_k = 64, chunk_columns = 64,
                  cluster = 1, cache_policy = 0}
  llvm.return
}

// -----

llvm.func @zero_block(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>,
                      %map: !llvm.ptr, %k: i32, %n: i32) {
  // expected-error @+1 {{block_n, block_k and chunk_columns must be positive}}
  ggk.load_b_tile %dst, %full from(%map) at[%k, %n]
      attributes {block_n = 0, block_k = 64, chunk_columns = 64,
                  cluster = 1, cache_policy = 0}
  llvm.return
}

// -----

llvm.func @no_cluster(%empty: !llvm.ptr<3>) {
  // expected-error @+1 {{cluster must be at least 1, got 0}}
  ggk.release_stage %empty attributes {cluster = 0}
  llvm.return
}

// -----

llvm.func @cluster_past_a_warp(%empty: !llvm.ptr<3>) {
  // expected-error @+1 {{cluster must be at most 32 (a warp's lanes arrive one CTA each), got 64}}
  ggk.release_stage %empty attributes {cluster = 64}
  llvm.return
}

// -----

llvm.func @load_no_cluster(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>,
                           %map: !llvm.ptr, %k: i32, %n: i32) {
  // expected-error @+1 {{cluster must be at least 1, got 0}}
  ggk.load_b_tile %dst, %full from(%map) at[%k, %n]
      attributes {block_n = 128, block_k = 64, chunk_columns = 64,
                  cluster = 0, cache_policy = 0}
  llvm.return
}

// -----

llvm.func @negative_second_half(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>,
                                %map: !llvm.ptr, %k: i32, %n: i32) {
  // expected-error @+1 {{second_half_row must be >= 0, got -64}}
  ggk.load_b_tile %dst, %full from(%map) at[%k, %n]
      attributes {block_n = 128, block_k = 64, chunk_columns = 64,
                  cluster = 1, cache_policy = 0, second_half_row = -64}
  llvm.return
}

// -----

llvm.func @shares_without_halves(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>,
                                 %map: !llvm.ptr, %k: i32, %n: i32) {
  // Shares of the gate and up halves (split_n warpgroups) need the halves.
  // expected-error @+1 {{half_shares must be at least 1, and above 1 only with second_half_row and block_n a multiple of 16 * half_shares; got half_shares 2, second_half_row 0, block_n 256}}
  ggk.load_b_tile %dst, %full from(%map) at[%k, %n]
      attributes {block_n = 256, block_k = 128, chunk_columns = 128,
                  cluster = 1, cache_policy = 0, half_shares = 2}
  llvm.return
}

// -----

llvm.func @no_shares(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>,
                     %map: !llvm.ptr, %k: i32, %n: i32) {
  // expected-error @+1 {{half_shares must be at least 1, and above 1 only with second_half_row and block_n a multiple of 16 * half_shares; got half_shares 0, second_half_row 512, block_n 256}}
  ggk.load_b_tile %dst, %full from(%map) at[%k, %n]
      attributes {block_n = 256, block_k = 128, chunk_columns = 128,
                  cluster = 1, cache_policy = 0, second_half_row = 512, half_shares = 0}
  llvm.return
}
