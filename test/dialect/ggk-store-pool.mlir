// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// The TMA store pool's ops print as they parse.
// CHECK-LABEL: llvm.func @pool
// CHECK: ggk.await_staged_tile %{{.*}} attributes {consumer_threads = 256 : i64, issuer = 128 : i64}
// CHECK: ggk.stage_output %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] attributes {swizzle = 128 : i64, tile_shape = array<i64: 128, 128>} : vector<2xbf16>
// CHECK: ggk.stage_output %{{.*}}, %{{.*}}[%{{.*}}, %{{.*}}] attributes {tile_shape = array<i64: 128, 96>} : vector<2xf32>
// CHECK: ggk.store_staged_tile %{{.*}} rows(%{{.*}}) at(%{{.*}}) n_block(%{{.*}}) group(%{{.*}}) maps(%{{.*}}, %{{.*}}) attributes {chunk_columns = 64 : i64
// CHECK: ggk.store_staged_tile %{{.*}} rows(%{{.*}}) at(%{{.*}}) n_block(%{{.*}}) maps(
// CHECK: ggk.drain_tile_stores attributes {issuer = 128 : i64}
llvm.func @pool(%tile: !llvm.ptr<3>, %pair: vector<2xbf16>, %wide: vector<2xf32>,
                %row: i32, %col: i32, %rows: i32, %start: i32, %nb: i32,
                %g: i32, %m2: !llvm.ptr, %m1: !llvm.ptr) {
  ggk.await_staged_tile %tile attributes {issuer = 128, consumer_threads = 256}
  ggk.stage_output %pair, %tile[%row, %col] attributes {swizzle = 128,
      tile_shape = array<i64: 128, 128>} : vector<2xbf16>
  ggk.stage_output %wide, %tile[%row, %col] attributes {
      tile_shape = array<i64: 128, 96>} : vector<2xf32>
  // A pool of 2 for a tile of 3 rows (192-row tiles take 128, ..., 1).
  ggk.store_staged_tile %tile rows(%rows) at(%start) n_block(%nb) group(%g)
      maps(%m2, %m1) attributes {heights = array<i64: 2, 1>,
      tile_shape = array<i64: 3, 128>, chunk_columns = 64, n = 4096,
      element_type = bf16, issuer = 128, consumer_threads = 256}
  ggk.store_staged_tile %tile rows(%rows) at(%start) n_block(%nb)
      maps(%m2, %m1) attributes {heights = array<i64: 2, 1>,
      tile_shape = array<i64: 2, 96>, chunk_columns = 96, n = 4096,
      element_type = f32, issuer = 128, consumer_threads = 256}
  ggk.drain_tile_stores attributes {issuer = 128}
  llvm.return
}

// -----

llvm.func @heights(%tile: !llvm.ptr<3>, %rows: i32, %start: i32, %nb: i32,
                   %m0: !llvm.ptr, %m1: !llvm.ptr, %m2: !llvm.ptr) {
  // expected-error @+1 {{heights must halve from 128 (the largest power of two not above the tile's rows) down to 1}}
  ggk.store_staged_tile %tile rows(%rows) at(%start) n_block(%nb)
      maps(%m0, %m1, %m2) attributes {heights = array<i64: 128, 64, 32>,
      tile_shape = array<i64: 192, 128>, chunk_columns = 64, n = 4096,
      element_type = bf16, issuer = 128, consumer_threads = 384}
  llvm.return
}

// -----

llvm.func @heights_skip(%tile: !llvm.ptr<3>, %rows: i32, %start: i32,
                        %nb: i32, %m0: !llvm.ptr, %m1: !llvm.ptr) {
  // expected-error @+1 {{heights must halve from 4 (the largest power of two not above the tile's rows) down to 1}}
  ggk.store_staged_tile %tile rows(%rows) at(%start) n_block(%nb)
      maps(%m0, %m1) attributes {heights = array<i64: 4, 1>,
      tile_shape = array<i64: 4, 128>, chunk_columns = 64, n = 4096,
      element_type = bf16, issuer = 128, consumer_threads = 128}
  llvm.return
}

// -----

llvm.func @maps(%tile: !llvm.ptr<3>, %rows: i32, %start: i32, %nb: i32,
                %m0: !llvm.ptr) {
  // expected-error @+1 {{takes one tensor map per height, 2, got 1}}
  ggk.store_staged_tile %tile rows(%rows) at(%start) n_block(%nb)
      maps(%m0) attributes {heights = array<i64: 2, 1>,
      tile_shape = array<i64: 2, 128>, chunk_columns = 64, n = 4096,
      element_type = bf16, issuer = 128, consumer_threads = 128}
  llvm.return
}

// -----

llvm.func @chunk(%tile: !llvm.ptr<3>, %rows: i32, %start: i32, %nb: i32,
                 %m0: !llvm.ptr, %m1: !llvm.ptr) {
  // expected-error @+1 {{chunk_columns must be the tile's columns (128, dense) or 64 or 128 bytes of them (the maps' swizzle), got 16}}
  ggk.store_staged_tile %tile rows(%rows) at(%start) n_block(%nb)
      maps(%m0, %m1) attributes {heights = array<i64: 2, 1>,
      tile_shape = array<i64: 2, 128>, chunk_columns = 16, n = 4096,
      element_type = bf16, issuer = 128, consumer_threads = 128}
  llvm.return
}

// -----

llvm.func @element(%tile: !llvm.ptr<3>, %rows: i32, %start: i32, %nb: i32,
                   %m0: !llvm.ptr, %m1: !llvm.ptr) {
  // expected-error @+1 {{element_type must be a float type, got 'i32'}}
  ggk.store_staged_tile %tile rows(%rows) at(%start) n_block(%nb)
      maps(%m0, %m1) attributes {heights = array<i64: 2, 1>,
      tile_shape = array<i64: 2, 128>, chunk_columns = 128, n = 4096,
      element_type = i32, issuer = 128, consumer_threads = 128}
  llvm.return
}

// -----

llvm.func @threads(%tile: !llvm.ptr<3>) {
  // expected-error @+1 {{consumer_threads must be a positive multiple of 32 (whole warps), got 100}}
  ggk.await_staged_tile %tile attributes {issuer = 128, consumer_threads = 100}
  llvm.return
}

// -----

llvm.func @swizzled_rows(%tile: !llvm.ptr<3>, %pair: vector<2xbf16>,
                         %row: i32, %col: i32) {
  // expected-error @+1 {{a tile swizzled by 128 bytes must have rows of whole 128-byte chunks, got 192 bytes}}
  ggk.stage_output %pair, %tile[%row, %col] attributes {swizzle = 128,
      tile_shape = array<i64: 128, 96>} : vector<2xbf16>
  llvm.return
}

// -----

llvm.func @fragment_row_group(%tile: !llvm.ptr<3>, %pair: vector<2xbf16>,
                              %row: i32, %col: i32) {
  // expected-error @+1 {{fragment must be [row group 0 or 1, column block >= 0], got [2, 0]}}
  ggk.stage_output %pair, %tile[%row, %col] attributes {swizzle = 128,
      tile_shape = array<i64: 128, 64>, fragment = array<i64: 2, 0>} : vector<2xbf16>
  llvm.return
}

// -----

llvm.func @fragment_size(%tile: !llvm.ptr<3>, %pair: vector<2xbf16>,
                         %row: i32, %col: i32) {
  // expected-error @+1 {{fragment must be [row group 0 or 1, column block >= 0], got [0]}}
  ggk.stage_output %pair, %tile[%row, %col] attributes {swizzle = 128,
      tile_shape = array<i64: 128, 64>, fragment = array<i64: 0>} : vector<2xbf16>
  llvm.return
}

// -----

llvm.func @swizzled_64_rows(%tile: !llvm.ptr<3>, %pair: vector<2xf32>,
                            %row: i32, %col: i32) {
  // expected-error @+1 {{a tile swizzled by 64 bytes must have rows of whole 64-byte chunks, got 360 bytes}}
  ggk.stage_output %pair, %tile[%row, %col] attributes {swizzle = 64,
      tile_shape = array<i64: 128, 90>} : vector<2xf32>
  llvm.return
}

// -----

llvm.func @swizzle_width(%tile: !llvm.ptr<3>, %pair: vector<2xf32>,
                         %row: i32, %col: i32) {
  // expected-error @+1 {{swizzle must be 0 (dense), 64 or 128 bytes, got 32}}
  ggk.stage_output %pair, %tile[%row, %col] attributes {swizzle = 32,
      tile_shape = array<i64: 128, 176>} : vector<2xf32>
  llvm.return
}

// -----

llvm.func @tile_shape(%tile: !llvm.ptr<3>, %pair: vector<2xbf16>, %row: i32,
                      %col: i32) {
  // expected-error @+1 {{tile_shape must be [rows, columns], both positive, got 3 sizes}}
  ggk.stage_output %pair, %tile[%row, %col] attributes {
      tile_shape = array<i64: 128, 128, 1>} : vector<2xbf16>
  llvm.return
}

// -----

llvm.func @pair(%tile: !llvm.ptr<3>, %quad: vector<4xbf16>, %row: i32,
                %col: i32) {
  // expected-error @+1 {{operand #0 must be fixed-length vector of floating-point values of length 1/2, but got 'vector<4xbf16>'}}
  ggk.stage_output %quad, %tile[%row, %col] attributes {
      tile_shape = array<i64: 128, 128>} : vector<4xbf16>
  llvm.return
}

// -----

llvm.func @add_bf16(%tile: !llvm.ptr<3>, %i: i32, %m1: !llvm.ptr) {
  // expected-error @+1 {{adds its boxes to the output with TMA's reduce-add, which takes an f32 element_type, got 'bf16'}}
  ggk.store_staged_tile %tile rows(%i) at(%i) n_block(%i) maps(%m1)
      attributes {heights = array<i64: 1>, tile_shape = array<i64: 1, 128>,
      chunk_columns = 128, n = 4096, element_type = bf16, issuer = 128,
      consumer_threads = 128, add}
  llvm.return
}

// -----

llvm.func @warpgroup_rows_of_a_tile(%tile: !llvm.ptr<3>, %rows: i32, %start: i32, %nb: i32,
                                    %m0: !llvm.ptr, %m1: !llvm.ptr) {
  // expected-error @+1 {{stores each consumer warpgroup's 64 rows: the tile's rows must be 64 for every 128 consumer threads, got 2 rows and 256 threads}}
  ggk.store_staged_tile %tile rows(%rows) at(%start) n_block(%nb)
      maps(%m0, %m1) attributes {heights = array<i64: 2, 1>,
      tile_shape = array<i64: 2, 128>, chunk_columns = 128, n = 4096,
      element_type = bf16, issuer = 128, consumer_threads = 256, warpgroup_rows = 64}
  llvm.return
}

// -----

llvm.func @warpgroup_rows_value(%tile: !llvm.ptr<3>) {
  // expected-error @+1 {{warpgroup_rows must be 0 (one issuer for the tile) or 64 (a consumer warpgroup's rows), got 32}}
  ggk.await_staged_tile %tile attributes {issuer = 128, consumer_threads = 256,
                                          warpgroup_rows = 32}
  llvm.return
}

// -----

llvm.func @warpgroup_issuer() {
  // expected-error @+1 {{stores each consumer warpgroup's rows from its first thread: issuer must be the first consumer warpgroup's first thread (a multiple of 128), got 160}}
  ggk.drain_tile_stores attributes {issuer = 160, warpgroup_rows = 64}
  llvm.return
}

// -----

llvm.func @drain_warpgroup_rows() {
  // expected-error @+1 {{warpgroup_rows must be 0 (one issuer for the tile) or 64 (a consumer warpgroup's rows), got 1}}
  ggk.drain_tile_stores attributes {issuer = 128, warpgroup_rows = 1}
  llvm.return
}

// -----

llvm.func @pending_two(%tile: !llvm.ptr<3>) {
  // expected-error @+1 {{pending must be 0 (every earlier store has read the tile) or 1 (all but the newest: a ring of two buffers), got 2}}
  ggk.await_staged_tile %tile attributes {issuer = 128, consumer_threads = 256, pending = 2}
  llvm.return
}

// -----

llvm.func @slice_outside_block(%tile: !llvm.ptr<3>, %rows: i32, %start: i32, %nb: i32,
                               %m0: !llvm.ptr, %m1: !llvm.ptr) {
  // expected-error @+1 {{stores a slice of 64 columns at first_column 128 of a block of 128: it must be a whole slice inside the block}}
  ggk.store_staged_tile %tile rows(%rows) at(%start) n_block(%nb)
      maps(%m0, %m1) attributes {heights = array<i64: 2, 1>,
      tile_shape = array<i64: 2, 64>, chunk_columns = 64, n = 4096,
      element_type = bf16, issuer = 128, consumer_threads = 128,
      first_column = 128, block_columns = 128}
  llvm.return
}

// -----

llvm.func @warpgroup_threads(%tile: !llvm.ptr<3>) {
  // expected-error @+1 {{stores each consumer warpgroup's rows: consumer_threads must be whole warpgroups (a multiple of 128), got 160}}
  ggk.await_staged_tile %tile attributes {issuer = 128, consumer_threads = 160,
                                          warpgroup_rows = 64}
  llvm.return
}
