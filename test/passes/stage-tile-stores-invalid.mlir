// RUN: ggc-opt %s -split-input-file -ggk-stage-tile-stores -verify-diagnostics

// A quad exchanges the pairs of four column blocks of one row group: block
// 3 of row group 0 is missing.
llvm.func @incomplete_quad(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32,
                           %pair: vector<2xbf16>, %r: i64, %ok: i1) {
  // expected-error @+1 {{stores 8 columns a thread, but the pairs of row group 0 and column blocks 0 .. 3 are not all there, in one IR block: a quad exchanges four}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 4096, m = 0, out_type = bf16, issuer = 128,
      threads = 256, store_columns = 8} {
    ggk.store_pair %pair at(%i, %i) to(%r, %i) valid(%ok, %ok) attributes {fragment = array<i64: 0, 0>} : vector<2xbf16>
    ggk.store_pair %pair at(%i, %i) to(%r, %i) valid(%ok, %ok) attributes {fragment = array<i64: 0, 1>} : vector<2xbf16>
    ggk.store_pair %pair at(%i, %i) to(%r, %i) valid(%ok, %ok) attributes {fragment = array<i64: 0, 2>} : vector<2xbf16>
    ggk.yield
  }
  llvm.return
}

// -----

// Each fragment is stored once: a second pair at [0, 1] would overwrite
// the first in its quad.
llvm.func @twice(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32,
                 %pair: vector<2xbf16>, %r: i64, %ok: i1) {
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      attributes {pool = array<i64>, tile_shape = array<i64: 128, 128>,
      chunk_columns = 128, n = 4096, m = 0, out_type = bf16, issuer = 128,
      threads = 256, store_columns = 8} {
    ggk.store_pair %pair at(%i, %i) to(%r, %i) valid(%ok, %ok) attributes {fragment = array<i64: 0, 0>} : vector<2xbf16>
    ggk.store_pair %pair at(%i, %i) to(%r, %i) valid(%ok, %ok) attributes {fragment = array<i64: 0, 1>} : vector<2xbf16>
    // expected-error @+1 {{stores fragment [0, 1] a second time; a quad exchanges one pair of each}}
    ggk.store_pair %pair at(%i, %i) to(%r, %i) valid(%ok, %ok) attributes {fragment = array<i64: 0, 1>} : vector<2xbf16>
    ggk.store_pair %pair at(%i, %i) to(%r, %i) valid(%ok, %ok) attributes {fragment = array<i64: 0, 2>} : vector<2xbf16>
    ggk.store_pair %pair at(%i, %i) to(%r, %i) valid(%ok, %ok) attributes {fragment = array<i64: 0, 3>} : vector<2xbf16>
    ggk.yield
  }
  llvm.return
}

// -----

// A sliced tile's pairs come in column order from the first slice: block
// 8 (slice 1) first is an error, not a store into the wrong buffer.
llvm.func @sliced_out_of_order(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32,
                               %m2: !llvm.ptr, %m1: !llvm.ptr, %pair: vector<2xbf16>,
                               %r: i64, %ok: i1) {
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i) maps(%m2, %m1)
      attributes {pool = array<i64: 2, 1>, tile_shape = array<i64: 2, 128>,
      chunk_columns = 64, swizzle = 128, slice_columns = 64, n = 4096, m = 0,
      out_type = bf16, group_maps, issuer = 128, threads = 128} {
    // expected-error @+1 {{stores column block 8 out of its slice's place: a tile staged 64 columns at a time takes its pairs in column order, every slice from the first, in one IR block}}
    ggk.store_pair %pair at(%i, %i) to(%r, %i) valid(%ok, %ok) attributes {fragment = array<i64: 0, 8>} : vector<2xbf16>
    ggk.store_pair %pair at(%i, %i) to(%r, %i) valid(%ok, %ok) attributes {fragment = array<i64: 0, 0>} : vector<2xbf16>
    ggk.yield
  }
  llvm.return
}

// -----

// A sliced tile finds each pair's slice by its fragment.
llvm.func @sliced_without_fragment(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32,
                                   %m2: !llvm.ptr, %m1: !llvm.ptr, %pair: vector<2xbf16>,
                                   %r: i64, %ok: i1) {
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i) maps(%m2, %m1)
      attributes {pool = array<i64: 2, 1>, tile_shape = array<i64: 2, 128>,
      chunk_columns = 64, swizzle = 128, slice_columns = 64, n = 4096, m = 0,
      out_type = bf16, group_maps, issuer = 128, threads = 128} {
    // expected-error @+1 {{needs its fragment ([row group, column block]): its tile is staged 64 columns at a time}}
    ggk.store_pair %pair at(%i, %i) to(%r, %i) valid(%ok, %ok) : vector<2xbf16>
    ggk.yield
  }
  llvm.return
}

// -----

// Every slice is there: the ring's waits count one store group a slice.
llvm.func @sliced_missing_slice(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32,
                                %m2: !llvm.ptr, %m1: !llvm.ptr, %pair: vector<2xbf16>,
                                %r: i64, %ok: i1) {
  // expected-error @+1 {{stages 2 slices of 64 columns, but its pairs stop short of the last}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i) maps(%m2, %m1)
      attributes {pool = array<i64: 2, 1>, tile_shape = array<i64: 2, 128>,
      chunk_columns = 64, swizzle = 128, slice_columns = 64, n = 4096, m = 0,
      out_type = bf16, group_maps, issuer = 128, threads = 128} {
    ggk.store_pair %pair at(%i, %i) to(%r, %i) valid(%ok, %ok) attributes {fragment = array<i64: 0, 0>} : vector<2xbf16>
    ggk.yield
  }
  llvm.return
}

// -----

// A tagged tile (DeepGEMM's padded layout) picks the pool or per-thread
// stores: it needs a pool, and one tag word a lane per 32 rows.
llvm.func @tagged_without_pool(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>,
                               %i: i32) {
  // expected-error @+1 {{picks the pool or per-thread stores by its rows' tags (tagged): it needs a pool, no scatter, no out_nm, and one tag word a lane per 32 rows of the tile (128), got 4}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      tagged(%i, %i, %i, %i) attributes {pool = array<i64>,
      tile_shape = array<i64: 128, 128>, chunk_columns = 128, n = 4096,
      m = 0, out_type = bf16, issuer = 128, threads = 256} {
    ggk.yield
  }
  llvm.return
}

// -----

llvm.func @tagged_words(%smem: !llvm.ptr<3>, %out: !llvm.ptr<1>, %i: i32,
                        %m: !llvm.ptr) {
  // expected-error @+1 {{one tag word a lane per 32 rows of the tile (64), got 1}}
  ggk.store_tile %smem, %out rows(%i, %i) block(%i) group(%i)
      maps(%m, %m, %m, %m, %m, %m, %m) tagged(%i)
      attributes {pool = array<i64: 64, 32, 16, 8, 4, 2, 1>,
      tile_shape = array<i64: 64, 128>, chunk_columns = 64, swizzle = 128,
      n = 4096, m = 0, out_type = bf16, issuer = 128, threads = 128} {
    ggk.yield
  }
  llvm.return
}
