// RUN: ggc-opt %s -split-input-file -ggk-lower-loads-cp-async -verify-diagnostics

// Without TMA, A's load reads the operand through its address: it needs
// the operand's extents to bound its pieces.
module attributes {gg.target = "sm_80"} {
llvm.func @a_no_extents(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %a: !llvm.ptr,
    %k: i32, %row: i32, %valid: i32) {
  // expected-error @+1 {{needs the operand's address as its one source, its extents and element_bytes (1, 2 or 4) to be loaded without TMA}}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row] valid(%valid)
      attributes {tile_rows = 64, row_bytes = 128, other_bytes = 16384,
      granule = 64, box_rows = array<i64: 64>, element_bytes = 2}
  llvm.return
}
}

// -----

// ... and the width of its elements.
module attributes {gg.target = "sm_80"} {
llvm.func @a_no_element_bytes(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>,
    %a: !llvm.ptr, %k: i32, %row: i32, %valid: i32, %ks: i32, %rows: i32) {
  // expected-error @+1 {{needs the operand's address as its one source, its extents and element_bytes (1, 2 or 4) to be loaded without TMA}}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row] valid(%valid)
      extents(%ks, %rows) attributes {tile_rows = 64, row_bytes = 128,
      other_bytes = 16384, granule = 64, box_rows = array<i64: 64>}
  llvm.return
}
}

// -----

// One source: the partial boxes' tensor maps of sm_90a have no meaning here.
module attributes {gg.target = "sm_80"} {
llvm.func @a_two_maps(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %a128: !llvm.ptr,
    %a64: !llvm.ptr, %k: i32, %row: i32, %valid: i32, %ks: i32, %rows: i32) {
  // expected-error @+1 {{needs the operand's address as its one source, its extents and element_bytes (1, 2 or 4) to be loaded without TMA}}
  ggk.load_tile_rows %dst, %full from(%a128, %a64) at[%k, %row] valid(%valid)
      extents(%ks, %rows) attributes {tile_rows = 128, row_bytes = 128,
      other_bytes = 16384, granule = 64, box_rows = array<i64: 128, 64>,
      element_bytes = 2}
  llvm.return
}
}

// -----

// The stage's layout is the 128-byte swizzle: rows of 128 bytes only.
module attributes {gg.target = "sm_80"} {
llvm.func @a_short_rows(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %a: !llvm.ptr,
    %k: i32, %row: i32, %valid: i32, %ks: i32, %rows: i32) {
  // expected-error @+1 {{loads rows of 128 bytes, a multiple of 16 rows (copy_threads / 8), without TMA}}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row] valid(%valid)
      extents(%ks, %rows) attributes {tile_rows = 64, row_bytes = 64,
      other_bytes = 16384, granule = 64, box_rows = array<i64: 64>,
      element_bytes = 2}
  llvm.return
}
}

// -----

// The 128 threads copy the tile's 16-byte pieces evenly: 8 rows are 64.
module attributes {gg.target = "sm_80"} {
llvm.func @a_few_rows(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %a: !llvm.ptr,
    %k: i32, %row: i32, %valid: i32, %ks: i32, %rows: i32) {
  // expected-error @+1 {{loads rows of 128 bytes, a multiple of 16 rows (copy_threads / 8), without TMA}}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row] valid(%valid)
      extents(%ks, %rows) attributes {tile_rows = 8, row_bytes = 128,
      other_bytes = 16384, granule = 8, box_rows = array<i64: 8>,
      element_bytes = 2}
  llvm.return
}
}

// -----

// B's load needs B's extents.
module attributes {gg.target = "sm_80"} {
llvm.func @b_no_extents(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %b: !llvm.ptr,
    %k: i32, %n_block: i32) {
  // expected-error @+1 {{needs B's extents, no cluster and one half (no second_half_row) to be loaded without TMA}}
  ggk.load_b_tile %dst, %full from(%b) at[%k, %n_block]
      attributes {block_n = 128, block_k = 64, chunk_columns = 64,
      cluster = 1, cache_policy = 0}
  llvm.return
}
}

// -----

// column_halves' two boxes are TMA's (sm_90a).
module attributes {gg.target = "sm_80"} {
llvm.func @b_halves(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %b: !llvm.ptr,
    %k: i32, %n_block: i32, %ks: i32, %ns: i32) {
  // expected-error @+1 {{needs B's extents, no cluster and one half (no second_half_row) to be loaded without TMA}}
  ggk.load_b_tile %dst, %full from(%b) at[%k, %n_block]
      extents(%ks, %ns) attributes {block_n = 128, block_k = 64,
      chunk_columns = 64, cluster = 1, cache_policy = 0, second_half_row = 768}
  llvm.return
}
}

// -----

// Without TMA there is no multicast to the cluster's CTAs.
module attributes {gg.target = "sm_80"} {
llvm.func @b_cluster(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %b: !llvm.ptr,
    %k: i32, %n_block: i32, %rank: i32, %ks: i32, %ns: i32) {
  // expected-error @+1 {{needs B's extents, no cluster and one half (no second_half_row) to be loaded without TMA}}
  ggk.load_b_tile %dst, %full from(%b) at[%k, %n_block] rank(%rank)
      extents(%ks, %ns) attributes {block_n = 128, block_k = 64,
      chunk_columns = 64, cluster = 2, cache_policy = 0}
  llvm.return
}
}

// -----

// 8 rows of N are 64 pieces of 16 bytes: the producer's 128 threads
// cannot share them evenly (no piece may be dropped).
module attributes {gg.target = "sm_80"} {
llvm.func @b_too_few_pieces(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %b: !llvm.ptr,
    %k: i32, %n_block: i32, %ks: i32, %ns: i32) {
  // expected-error @+1 {{loads tiles of 128-byte rows (chunk_columns 32, 64 or 128; block_k of them along K when K-major) in a multiple of copy_threads pieces of 16 bytes without TMA}}
  ggk.load_b_tile %dst, %full from(%b) at[%k, %n_block] extents(%ks, %ns)
      attributes {block_n = 8, block_k = 64, chunk_columns = 64,
      cluster = 1, cache_policy = 0}
  llvm.return
}
}

// -----

// A K-major row of 32 bf16 is 64 bytes, not the swizzled 128.
module attributes {gg.target = "sm_80"} {
llvm.func @b_short_rows(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %b: !llvm.ptr,
    %k: i32, %n_block: i32, %ks: i32, %ns: i32) {
  // expected-error @+1 {{loads tiles of 128-byte rows}}
  ggk.load_b_tile %dst, %full from(%b) at[%k, %n_block] extents(%ks, %ns)
      attributes {block_n = 128, block_k = 32, chunk_columns = 64,
      cluster = 1, cache_policy = 0}
  llvm.return
}
}

// -----

// chunk_columns of 256 would be half-byte elements.
module attributes {gg.target = "sm_80"} {
llvm.func @b_wide_chunks(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>, %b: !llvm.ptr,
    %k: i32, %n_block: i32, %ks: i32, %ns: i32) {
  // expected-error @+1 {{loads tiles of 128-byte rows}}
  ggk.load_b_tile %dst, %full from(%b) at[%k, %n_block] extents(%ks, %ns)
      attributes {block_n = 128, block_k = 64, chunk_columns = 256,
      cluster = 1, cache_policy = 0}
  llvm.return
}
}

// -----

// Elements of 0 (or 3) bytes do not divide a 16-byte piece.
module attributes {gg.target = "sm_80"} {
llvm.func @a_zero_element_bytes(%dst: !llvm.ptr<3>, %full: !llvm.ptr<3>,
    %a: !llvm.ptr, %k: i32, %row: i32, %valid: i32, %ks: i32, %rows: i32) {
  // expected-error @+1 {{element_bytes (1, 2 or 4)}}
  ggk.load_tile_rows %dst, %full from(%a) at[%k, %row] valid(%valid)
      extents(%ks, %rows) attributes {tile_rows = 64, row_bytes = 128,
      other_bytes = 16384, granule = 64, box_rows = array<i64: 64>,
      element_bytes = 0}
  llvm.return
}
}
