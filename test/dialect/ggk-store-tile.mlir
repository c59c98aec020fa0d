// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// ggk.store_tile and ggk.store_pair print as they parse, with or without
// a pool.
// CHECK-LABEL: llvm.func @roundtrip
// CHECK: ggk.store_tile %{{.*}}, %{{.*}} rows(%{{.*}}, %{{.*}}) block(%{{.*}}) group(%{{.*}}) maps(%{{.*}}, %{{.*}}) attributes {chunk_columns = 64 : i64
// CHECK: ggk.store_pair %{{.*}} at(%{{.*}}, %{{.*}}) to(%{{.*}}, %{{.*}}) valid(%{{.*}}, %{{.*}}) : vector<2xbf16>
// CHECK: ggk.store_tile %{{.*}}, %{{.*}} rows(%{{.*}}, %{{.*}}) block(%{{.*}}) group(%{{.*}}) attributes {chunk_columns = 128 : i64
llvm.func @roundtrip(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32,
                     %m2: !llvm.ptr, %m1: !llvm.ptr, %pair: vector<2xbf16>,
                     %r: i64, %ok: i1) {
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i) maps(%m2, %m1)
      attributes {pool = array<i64: 2, 1>, tile_shape = array<i64: 2, 128>,
      chunk_columns = 64, swizzle = 128, n = 4096, m = 0, out_type = bf16,
      group_maps, issuer = 128, threads = 128} {
    ggk.store_pair %pair at(%i, %i) to(%r, %i) valid(%ok, %ok) : vector<2xbf16>
    ggk.yield
  }
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 4096, m = 0, out_type = bf16, issuer = 128,
      threads = 256} {
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @maps(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32, %m2: !llvm.ptr) {
  // expected-error @+1 {{takes one tensor map per pool height, 2, got 1}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i) maps(%m2)
      attributes {pool = array<i64: 2, 1>, tile_shape = array<i64: 2, 128>,
      chunk_columns = 64, n = 4096, m = 0, out_type = bf16, issuer = 128,
      threads = 128} {
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @out_type(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32) {
  // expected-error @+1 {{out_type must be a float type, got 'i32'}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 4096, m = 0, out_type = i32, issuer = 128,
      threads = 256} {
    ggk.yield
  }
  llvm.return
}

// -----

// A scatter by a row-index list prints as it parses, after the maps.
// CHECK-LABEL: llvm.func @scatter
// CHECK: ggk.store_tile %{{.*}}, %{{.*}} rows(%{{.*}}, %{{.*}}) block(%{{.*}}) group(%{{.*}}) scatter(%{{.*}} bound %{{.*}}) attributes
llvm.func @scatter(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32,
                   %ids: !llvm.ptr<1>, %rows: i64) {
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i) scatter(%ids bound %rows)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 4096, m = 0, out_type = bf16, issuer = 128,
      threads = 256} {
    ggk.yield
  }
  llvm.return
}

// -----

// The pool's TMA boxes store consecutive rows: no scatter through them.
llvm.func @scatter_pooled(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32,
                          %m1: !llvm.ptr, %ids: !llvm.ptr<1>, %rows: i64) {
  // expected-error @+1 {{scatters rows by index per thread, into a row-major output: it takes no pool (TMA boxes store consecutive rows) and no out_nm}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i) maps(%m1)
      scatter(%ids bound %rows) attributes {pool = array<i64: 1>,
      tile_shape = array<i64: 1, 128>, chunk_columns = 64, swizzle = 128, n = 4096,
      m = 0, out_type = bf16, group_maps, issuer = 128, threads = 128} {
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @no_n(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32) {
  // expected-error @+1 {{n must be positive, got 0}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 0, m = 0, out_type = bf16, issuer = 128,
      threads = 256} {
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @transposed_without_m(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32) {
  // expected-error @+1 {{stores the transposed [G, N, M] output per thread: it needs a positive m and no pool}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 4096, m = 0, out_type = bf16, out_nm,
      issuer = 128, threads = 256} {
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @threads(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32) {
  // expected-error @+1 {{consumer_threads must be a positive multiple of 32 (whole warps), got 100}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 4096, m = 0, out_type = bf16, issuer = 128,
      threads = 100} {
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @region_yield(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32) {
  // expected-error @+1 {{region must end with a ggk.yield of no values}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 4096, m = 0, out_type = bf16, issuer = 128,
      threads = 256} {
    ggk.yield %i : i32
  }
  llvm.return
}

// -----

llvm.func @pair_outside(%pair: vector<2xbf16>, %i: i32, %r: i64, %ok: i1) {
  // expected-error @+1 {{must be inside a ggk.store_tile, which says where its tile's outputs go}}
  ggk.store_pair %pair at(%i, %i) to(%r, %i) valid(%ok, %ok) : vector<2xbf16>
  llvm.return
}

// -----

llvm.func @pair_type(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32,
                     %pair: vector<2xf16>, %r: i64, %ok: i1) {
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 4096, m = 0, out_type = bf16, issuer = 128,
      threads = 256} {
    // expected-error @+1 {{stores 'f16' outputs, but its ggk.store_tile's out_type is 'bf16'}}
    ggk.store_pair %pair at(%i, %i) to(%r, %i) valid(%ok, %ok) : vector<2xf16>
    ggk.yield
  }
  llvm.return
}

// -----

// An f8E4M3FN tile's outputs travel as their e4m3 bytes.
llvm.func @f8_pair_type(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32,
                        %pair: vector<2xf32>, %bytes: vector<2xi8>, %r: i64, %ok: i1) {
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 4096, m = 0, out_type = f8E4M3FN, issuer = 128,
      threads = 256} {
    ggk.store_pair %bytes at(%i, %i) to(%r, %i) valid(%ok, %ok) : vector<2xi8>
    // expected-error @+1 {{stores 'f32' outputs, but its ggk.store_tile's out_type is 'f8E4M3FN' (whose outputs are i8 bytes)}}
    ggk.store_pair %pair at(%i, %i) to(%r, %i) valid(%ok, %ok) : vector<2xf32>
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @region_arguments(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32) {
  // expected-error @+1 {{region must take no arguments, got 1}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 4096, m = 0, out_type = bf16, issuer = 128,
      threads = 256} {
  ^bb0(%x: i32):
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @tile_shape(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32) {
  // expected-error @+1 {{tile_shape must be [rows, columns], both positive, got 1 sizes}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128>,
      chunk_columns = 128, n = 4096, m = 0, out_type = bf16, issuer = 128,
      threads = 256} {
    ggk.yield
  }
  llvm.return
}

// -----

// column_pairs: each store_pair holds one output, a combined column pair.
// CHECK-LABEL: llvm.func @column_pairs
// CHECK: ggk.store_tile {{.*}} attributes {{{.*}}column_pairs
// CHECK: ggk.store_pair %{{.*}} : vector<1xbf16>
llvm.func @column_pairs(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32,
                        %one: vector<1xbf16>, %r: i64, %ok: i1) {
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 2048, m = 0, out_type = bf16, column_pairs,
      issuer = 128, threads = 256} {
    ggk.store_pair %one at(%i, %i) to(%r, %i) valid(%ok, %ok) : vector<1xbf16>
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @column_pairs_transposed(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>,
                                   %i: i32) {
  // expected-error @+1 {{stores combined column pairs into a row-major output: it takes no out_nm}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 64>,
      chunk_columns = 64, n = 2048, m = 128, out_type = bf16, out_nm,
      column_pairs, issuer = 128, threads = 256} {
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @pair_of_two_in_column_pairs(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>,
                                       %i: i32, %pair: vector<2xbf16>, %r: i64,
                                       %ok: i1) {
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 2048, m = 0, out_type = bf16, column_pairs,
      issuer = 128, threads = 256} {
    // expected-error @+1 {{holds 2 outputs, but its ggk.store_tile combines column pairs: one a pair}}
    ggk.store_pair %pair at(%i, %i) to(%r, %i) valid(%ok, %ok) : vector<2xbf16>
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @one_output_without_column_pairs(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>,
                                           %i: i32, %one: vector<1xbf16>, %r: i64,
                                           %ok: i1) {
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 4096, m = 0, out_type = bf16, issuer = 128,
      threads = 256} {
    // expected-error @+1 {{holds 1 output, but its ggk.store_tile stores two adjacent columns a pair}}
    ggk.store_pair %one at(%i, %i) to(%r, %i) valid(%ok, %ok) : vector<1xbf16>
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @quads_f32(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32) {
  // expected-error @+1 {{stores 8 columns a thread (store_columns = 8), which takes a 16-bit or f8E4M3FN out_type}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 4096, m = 0, out_type = f32, issuer = 128,
      threads = 256, store_columns = 8} {
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @quads_pool(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32, %map: !llvm.ptr) {
  // expected-error @+1 {{stores 8 columns a thread (store_columns = 8), which takes per-thread stores (no pool, or a tagged tile's stores where its group's rows do not lead)}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i) maps(%map)
      attributes {pool = array<i64: 1>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 64, swizzle = 128, n = 4096, m = 0, out_type = bf16,
      issuer = 128, threads = 256, store_columns = 8} {
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @quads_pairs(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32) {
  // expected-error @+1 {{stores 8 columns a thread (store_columns = 8), which takes a row-major output of pairs (no out_nm, no column_pairs)}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 64>,
      chunk_columns = 64, n = 2048, m = 0, out_type = bf16, column_pairs,
      issuer = 128, threads = 256, store_columns = 8} {
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @quads_odd_n(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32) {
  // expected-error @+1 {{stores 8 columns a thread (store_columns = 8), which takes n a multiple of 8 (rows of whole 8-column blocks)}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 4092, m = 0, out_type = bf16, issuer = 128,
      threads = 256, store_columns = 8} {
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @quads_columns(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32) {
  // expected-error @+1 {{store_columns must be 2 or 8, got 4}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 4096, m = 0, out_type = bf16, issuer = 128,
      threads = 256, store_columns = 4} {
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @quads_fragment(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32,
                          %pair: vector<2xbf16>, %r: i64, %ok: i1) {
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 4096, m = 0, out_type = bf16, issuer = 128,
      threads = 256, store_columns = 8} {
    // expected-error @+1 {{needs fragment = [row group, column block] in a ggk.store_tile of store_columns = 8}}
    ggk.store_pair %pair at(%i, %i) to(%r, %i) valid(%ok, %ok) : vector<2xbf16>
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @accumulate_pooled_bf16(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32,
                                  %m1: !llvm.ptr) {
  // expected-error @+1 {{adds each pair to what 'out' holds: it takes store_columns = 2, no scatter (repeated indices would race) and a pool only for an f32 out_type (TMA's reduce-add)}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i) maps(%m1)
      attributes {pool = array<i64: 1>, tile_shape = array<i64: 1, 128>,
      chunk_columns = 128, n = 4096, m = 0, out_type = bf16, accumulate,
      issuer = 128, threads = 128} {
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @accumulate_scatter(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32,
                              %idx: !llvm.ptr<1>, %rows: i64) {
  // expected-error @+1 {{it takes store_columns = 2, no scatter}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i) scatter(%idx bound %rows)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 4096, m = 0, out_type = f32, accumulate,
      issuer = 128, threads = 256} {
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @accumulate_rounded_pair(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>,
                                   %i: i32, %r: i64, %ok: i1,
                                   %pair: vector<2xbf16>) {
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 4096, m = 0, out_type = bf16, accumulate,
      issuer = 128, threads = 256} {
    // expected-error @+1 {{holds 'bf16' values, but its ggk.store_tile accumulates: they are f32, added to 'out' before rounding}}
    ggk.store_pair %pair at(%i, %i) to(%r, %i) valid(%ok, %ok) : vector<2xbf16>
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @chunk_of_swizzle(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32, %map: !llvm.ptr) {
  // expected-error @+1 {{chunk_columns must be the staged tile's column chunk, 16 columns (64 swizzled bytes, or the whole row when dense), got 32}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i) maps(%map)
      attributes {pool = array<i64: 1>, tile_shape = array<i64: 1, 176>,
      chunk_columns = 32, swizzle = 64, n = 7168, m = 0, out_type = f32,
      issuer = 128, threads = 256} {
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @slice_of_no_pool(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32) {
  // expected-error @+1 {{slice_columns must divide the tile's 128 columns, be fewer, make rows of whole 128-byte chunks, and come with a pool and no column_pairs, got 64}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, slice_columns = 64, n = 4096, m = 0, out_type = bf16,
      issuer = 128, threads = 256} {
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @warpgroup_rows_without_pool(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32) {
  // expected-error @+1 {{stores each consumer warpgroup's rows through the TMA store pool (warpgroup_rows), but has no pool}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, warpgroup_rows = 64, n = 4096, m = 0, out_type = bf16,
      issuer = 128, threads = 256} {
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @scatter_unbounded(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32,
                             %ids: !llvm.ptr<1>) {
  // expected-error @+1 {{scatters rows by index with the output's row count as the indices' bound: it takes both or neither}}
  "ggk.store_tile"(%smem, %out, %i, %i, %i, %i, %ids) <{pool = array<i64>,
      tile_shape = array<i64: 128, 128>, chunk_columns = 128, n = 4096, m = 0,
      out_type = bf16, issuer = 128, threads = 256,
      operandSegmentSizes = array<i32: 1, 1, 1, 1, 1, 1, 0, 1, 0, 0>}> ({
    ggk.yield
  }) : (!llvm.ptr<3>, !llvm.ptr<1>, i32, i32, i32, i32, !llvm.ptr<1>) -> ()
  llvm.return
}
