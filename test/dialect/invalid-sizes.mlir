// RUN: ggc-opt %s -split-input-file -verify-diagnostics

// Static sizes the kernel's 32-bit arithmetic cannot hold. The kernel is
// specialised for G, N, K (and a static M), and runs its indices past them
// by up to a tile, so every static dimension must be at most 2^30. Sizes
// near INT64_MAX must be rejected too, not wrap (G + 1 offsets of G =
// INT64_MAX once wrapped to the dynamic size and matched any groups).

func.func @g_int64_max(%a: memref<?x256xbf16>, %b: memref<9223372036854775807x128x256xbf16>, %g: memref<9223372036854775807xi32>, %o: memref<?x128xbf16>) {
  // expected-error @+1 {{'b' dimension 0 must be at most 2^30 = 1073741824 (the kernel indexes it with 32-bit integers), but has 'memref<9223372036854775807x128x256xbf16>'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<9223372036854775807x128x256xbf16>) groups(%g : memref<9223372036854775807xi32>) out(%o : memref<?x128xbf16>)
  return
}

// -----

func.func @groups_int64_max(%a: memref<?x256xbf16>, %b: memref<8x128x256xbf16>, %g: memref<9223372036854775807xi64>, %o: memref<?x128xbf16>) {
  // expected-error @+1 {{'groups' dimension 0 must be at most 2^30 = 1073741824 (the kernel indexes it with 32-bit integers), but has 'memref<9223372036854775807xi64>'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x128x256xbf16>) groups(%g : memref<9223372036854775807xi64>) out(%o : memref<?x128xbf16>)
  return
}

// -----

func.func @n_int64_max(%a: memref<?x256xbf16>, %b: memref<8x9223372036854775807x256xbf16>, %g: memref<9xi32>, %o: memref<?x9223372036854775807xbf16>) {
  // expected-error @+1 {{'b' dimension 1 must be at most 2^30 = 1073741824 (the kernel indexes it with 32-bit integers), but has 'memref<8x9223372036854775807x256xbf16>'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x9223372036854775807x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x9223372036854775807xbf16>)
  return
}

// -----

func.func @k_int64_max(%a: memref<?x9223372036854775807xbf16>, %b: memref<8x128x9223372036854775807xbf16>, %g: memref<9xi32>, %o: memref<?x128xbf16>) {
  // expected-error @+1 {{'a' dimension 1 must be at most 2^30 = 1073741824 (the kernel indexes it with 32-bit integers), but has 'memref<?x9223372036854775807xbf16>'}}
  gg.grouped_matmul contiguous a(%a : memref<?x9223372036854775807xbf16>) b(%b : memref<8x128x9223372036854775807xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x128xbf16>)
  return
}

// -----

// K = 2^31 was truncated to 0 (c32) in the kernel.
func.func @k_2_pow_31(%a: memref<?x2147483648xbf16>, %b: memref<8x128x2147483648xbf16>, %g: memref<9xi32>, %o: memref<?x128xbf16>) {
  // expected-error @+1 {{'a' dimension 1 must be at most 2^30 = 1073741824 (the kernel indexes it with 32-bit integers), but has 'memref<?x2147483648xbf16>'}}
  gg.grouped_matmul contiguous a(%a : memref<?x2147483648xbf16>) b(%b : memref<8x128x2147483648xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x128xbf16>)
  return
}

// -----

// The bound is exact: K = 2^30 is accepted; N = 2^30 + 8 (below) is not.
func.func @k_2_pow_30(%a: memref<?x1073741824xbf16>, %b: memref<8x128x1073741824xbf16>, %g: memref<9xi32>, %o: memref<?x128xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x1073741824xbf16>) b(%b : memref<8x128x1073741824xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x128xbf16>)
  return
}

// -----

func.func @n_over_2_pow_30(%a: memref<?x256xbf16>, %b: memref<8x1073741832x256xbf16>, %g: memref<9xi32>, %o: memref<?x1073741832xbf16>) {
  // expected-error @+1 {{'b' dimension 1 must be at most 2^30 = 1073741824 (the kernel indexes it with 32-bit integers), but has 'memref<8x1073741832x256xbf16>'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x1073741832x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x1073741832xbf16>)
  return
}

// -----

func.func @g_2_pow_31(%a: memref<?x256xbf16>, %b: memref<2147483648x128x256xbf16>, %g: memref<2147483649xi32>, %o: memref<?x128xbf16>) {
  // expected-error @+1 {{'b' dimension 0 must be at most 2^30 = 1073741824 (the kernel indexes it with 32-bit integers), but has 'memref<2147483648x128x256xbf16>'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<2147483648x128x256xbf16>) groups(%g : memref<2147483649xi32>) out(%o : memref<?x128xbf16>)
  return
}

// -----

func.func @masked_m_2_pow_31(%a: memref<4x2147483648x256xbf16>, %b: memref<4x128x256xbf16>, %g: memref<4xi32>, %o: memref<4x2147483648x128xbf16>) {
  // expected-error @+1 {{'a' dimension 1 must be at most 2^30 = 1073741824 (the kernel indexes it with 32-bit integers), but has 'memref<4x2147483648x256xbf16>'}}
  gg.grouped_matmul masked a(%a : memref<4x2147483648x256xbf16>) b(%b : memref<4x128x256xbf16>) groups(%g : memref<4xi32>) out(%o : memref<4x2147483648x128xbf16>)
  return
}

// -----

func.func @k_grouped_m_2_pow_31(%a: memref<2147483648x?xbf16>, %b: memref<128x?xbf16>, %g: memref<5xi64>, %o: memref<4x2147483648x128xf32>) {
  // expected-error @+1 {{'a' dimension 0 must be at most 2^30 = 1073741824 (the kernel indexes it with 32-bit integers), but has 'memref<2147483648x?xbf16>'}}
  gg.grouped_matmul k_grouped a(%a : memref<2147483648x?xbf16>) b(%b : memref<128x?xbf16>) groups(%g : memref<5xi64>) out(%o : memref<4x2147483648x128xf32>)
  return
}

// -----

func.func @rows_int64_max(%a: memref<?x256xbf16>, %b: memref<8x128x256xbf16>, %g: memref<9xi32>, %o: memref<?x128xbf16>, %r: memref<9223372036854775807xf32>) {
  // expected-error @+1 {{'rows' dimension 0 must be at most 2^30 = 1073741824 (the kernel indexes it with 32-bit integers), but has 'memref<9223372036854775807xf32>'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x128x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x128xbf16>) rows(%r : memref<9223372036854775807xf32>)
  return
}

// -----

// MX scales of A in a contiguous layout: the kernel adds 3 padding rows per
// group to M in 32-bit integers.
func.func @mx_too_many_groups(%a: memref<?x512xf8E4M3FN>, %b: memref<1073741823x256x512xf8E4M3FN>, %g: memref<1073741824xi32>, %o: memref<?x256xbf16>, %as: memref<?x4xi32>, %bs: memref<1073741823x256x4xi32>) {
  // expected-error @+1 {{'a_scale' mx scales pad each of the G groups by up to 3 rows: 3G must be at most 2^30 = 1073741824, but G is 1073741823}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<1073741823x256x512xf8E4M3FN>) groups(%g : memref<1073741824xi32>) a_scale(%as : memref<?x4xi32>, <mx 1x32>) b_scale(%bs : memref<1073741823x256x4xi32>, <mx 1x32>) out(%o : memref<?x256xbf16>)
  return
}

// -----

// A store pool whose doubled entry would overflow int64_t.
func.func @store_pool_2_pow_62(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'store_pool' must halve from a power of two down to 1 (e.g. [128, 64, ..., 1]), but is [4611686018427387904, 4611686018427387904, 1]}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {store_pool = array<i64: 4611686018427387904, 4611686018427387904, 1>}
  return
}

// -----

// No K: nothing to reduce over (it used to compile).
func.func @k_zero(%a: memref<?x0xbf16>, %b: memref<8x128x0xbf16>, %g: memref<9xi32>, %o: memref<?x128xbf16>) {
  // expected-error @+1 {{'gg.grouped_matmul' op has K = 0: a grouped matmul needs K >= 1 (the reduction dimension of 'a' and 'b')}}
  gg.grouped_matmul contiguous a(%a : memref<?x0xbf16>) b(%b : memref<8x128x0xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x128xbf16>)
  return
}

// -----

// No N: no columns to write (it failed late, in ggk.store_tile's verifier).
func.func @n_zero(%a: memref<?x256xbf16>, %b: memref<4x0x256xbf16>, %g: memref<5xi32>, %o: memref<?x0xbf16>) {
  // expected-error @+1 {{'gg.grouped_matmul' op has N = 0: a grouped matmul needs N >= 1 (the columns of 'out')}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<4x0x256xbf16>) groups(%g : memref<5xi32>) out(%o : memref<?x0xbf16>)
  return
}

// -----

func.func @masked_k_zero(%a: memref<4x64x0xbf16>, %b: memref<4x128x0xbf16>, %g: memref<4xi32>, %o: memref<4x64x128xbf16>) {
  // expected-error @+1 {{has K = 0}}
  gg.grouped_matmul masked a(%a : memref<4x64x0xbf16>) b(%b : memref<4x128x0xbf16>) groups(%g : memref<4xi32>) out(%o : memref<4x64x128xbf16>)
  return
}
