// RUN: ggc-opt %s -split-input-file -verify-diagnostics

// Negative tests for gg.grouped_matmul, #gg.scale and #gg.config: every case
// has exactly one thing wrong.

//===----------------------------------------------------------------------===//
// Operand memory layouts and element types
//===----------------------------------------------------------------------===//

func.func @unknown_group_layout(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{expected string or keyword containing one of the following enum values for attribute 'layout' [contiguous, masked, padded_contiguous, k_grouped]}}
  gg.grouped_matmul sorted a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>)
  return
}

// -----

func.func @a_not_identity(%a: memref<?x256xbf16, strided<[512, 1]>>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'a' must have an identity (contiguous row-major) layout}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16, strided<[512, 1]>>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>)
  return
}

// -----

func.func @rows_not_identity(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>, %r: memref<?xf32, strided<[2]>>) {
  // expected-error @+1 {{'rows' must have an identity (contiguous row-major) layout}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) rows(%r : memref<?xf32, strided<[2]>>)
  return
}

// -----

func.func @a_bad_element(%a: memref<?x256xi8>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'a' must have element type bf16, f16, f32, f8E4M3FN or f8E5M2, but has 'i8'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xi8>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>)
  return
}

// -----

func.func @b_bad_element(%a: memref<?x256xbf16>, %b: memref<8x512x256xf64>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'b' must have element type bf16, f16, f32, f8E4M3FN or f8E5M2, but has 'f64'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xf64>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>)
  return
}

// -----

func.func @out_f8(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xf8E4M3FN>) {
  // expected-error @+1 {{'out' must have element type bf16, f16 or f32, but has 'f8E4M3FN'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xf8E4M3FN>)
  return
}

// -----

func.func @a_b_mismatch(%a: memref<?x256xbf16>, %b: memref<8x512x256xf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'a' and 'b' must have the same element type (or both be f8), but have 'bf16' and 'f16'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>)
  return
}

// -----

func.func @f8_with_bf16(%a: memref<?x256xf8E4M3FN>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'a' and 'b' must have the same element type (or both be f8), but have 'f8E4M3FN' and 'bf16'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xf8E4M3FN>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>)
  return
}

// -----

func.func @tf32_on_bf16(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'tf32' math applies to f32 operands only, but 'a' has element type 'bf16'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {tf32}
  return
}

// -----

//===----------------------------------------------------------------------===//
// Operand layouts
//===----------------------------------------------------------------------===//

func.func @a_layout_nk(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{layout of 'a' must be mk or km, but is nk}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>, nk) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>)
  return
}

// -----

func.func @a_km_contiguous(%a: memref<256x?xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{layout km of 'a' (tokens along the columns) is only supported with k_grouped}}
  gg.grouped_matmul contiguous a(%a : memref<256x?xbf16>, km) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>)
  return
}

// -----

func.func @b_layout_mk(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{layout of 'b' must be nk or kn, but is mk}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>, mk) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>)
  return
}

// -----

func.func @out_layout_kn(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{layout of 'out' must be mn or nm, but is kn}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>, kn)
  return
}

// -----

func.func @out_nm_masked(%a: memref<8x128x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<8xi32>, %o: memref<8x512x128xbf16>) {
  // expected-error @+1 {{layout nm of 'out' is only supported with k_grouped (a transposed per-group output)}}
  gg.grouped_matmul masked a(%a : memref<8x128x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<8xi32>) out(%o : memref<8x512x128xbf16>, nm)
  return
}

// -----

func.func @f8_b_kn(%a: memref<?x512xf8E4M3FN>, %b: memref<4x512x256xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>) {
  // expected-error @+1 {{f8 operands must be K-major (wgmma reads f8 only along K): 'a' must be mk and 'b' nk}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x512x256xf8E4M3FN>, kn) groups(%g : memref<5xi32>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @f8_a_km(%a: memref<?x256xf8E5M2>, %b: memref<128x?xf8E5M2>, %g: memref<5xi32>, %o: memref<4x256x128xbf16>) {
  // expected-error @+1 {{f8 operands must be K-major}}
  gg.grouped_matmul k_grouped a(%a : memref<?x256xf8E5M2>, km) b(%b : memref<128x?xf8E5M2>) groups(%g : memref<5xi32>) out(%o : memref<4x256x128xbf16>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// Ranks and static dimensions
//===----------------------------------------------------------------------===//

func.func @b_rank2_contiguous(%a: memref<?x256xbf16>, %b: memref<512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'b' must be rank 3 ([G, N, K]), but has 'memref<512x256xbf16>'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>)
  return
}

// -----

func.func @b_rank3_k_grouped(%a: memref<256x?xbf16>, %b: memref<4x?x128xbf16>, %g: memref<5xi32>, %o: memref<4x256x128xbf16>) {
  // expected-error @+1 {{'b' must be rank 2 ([K, N])}}
  gg.grouped_matmul k_grouped a(%a : memref<256x?xbf16>) b(%b : memref<4x?x128xbf16>, kn) groups(%g : memref<5xi32>) out(%o : memref<4x256x128xbf16>)
  return
}

// -----

func.func @a_rank3_contiguous(%a: memref<8x?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'a' must be rank 2 ([M, K] token-packed rows)}}
  gg.grouped_matmul contiguous a(%a : memref<8x?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>)
  return
}

// -----

func.func @a_rank2_masked(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<8xi32>, %o: memref<8x128x512xbf16>) {
  // expected-error @+1 {{'a' must be rank 3 ([G, M_max, K])}}
  gg.grouped_matmul masked a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<8xi32>) out(%o : memref<8x128x512xbf16>)
  return
}

// -----

func.func @a_rank3_k_grouped(%a: memref<1x?x256xbf16>, %b: memref<128x?xbf16>, %g: memref<5xi32>, %o: memref<4x128x256xbf16>) {
  // expected-error @+1 {{'a' must be rank 2 ([K, M])}}
  gg.grouped_matmul k_grouped a(%a : memref<1x?x256xbf16>, km) b(%b : memref<128x?xbf16>) groups(%g : memref<5xi32>) out(%o : memref<4x128x256xbf16>, nm)
  return
}

// -----

func.func @out_rank2_k_grouped(%a: memref<256x?xbf16>, %b: memref<128x?xbf16>, %g: memref<5xi32>, %o: memref<256x128xbf16>) {
  // expected-error @+1 {{'out' must be rank 3 ([G, M, N])}}
  gg.grouped_matmul k_grouped a(%a : memref<256x?xbf16>) b(%b : memref<128x?xbf16>) groups(%g : memref<5xi32>) out(%o : memref<256x128xbf16>)
  return
}

// -----

func.func @dynamic_g(%a: memref<?x256xbf16>, %b: memref<?x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'b' dimension 0 (G) must be static}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<?x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>)
  return
}

// -----

func.func @dynamic_n_nk(%a: memref<?x256xbf16>, %b: memref<8x?x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'b' dimension 1 (N) must be static}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x?x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>)
  return
}

// -----

func.func @dynamic_k_nk(%a: memref<?x256xbf16>, %b: memref<8x512x?xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'b' dimension 2 (K) must be static}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x?xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>)
  return
}

// -----

func.func @dynamic_k_kn(%a: memref<?x256xbf16>, %b: memref<8x?x512xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'b' dimension 1 (K) must be static}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x?x512xbf16>, kn) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>)
  return
}

// -----

func.func @dynamic_n_kn(%a: memref<?x256xbf16>, %b: memref<8x256x?xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'b' dimension 2 (N) must be static}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x256x?xbf16>, kn) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>)
  return
}

// -----

func.func @dynamic_n_k_grouped(%a: memref<256x?xbf16>, %b: memref<?x?xbf16>, %g: memref<5xi32>, %o: memref<4x256x128xbf16>) {
  // expected-error @+1 {{'b' dimension 1 (N) must be static}}
  gg.grouped_matmul k_grouped a(%a : memref<256x?xbf16>) b(%b : memref<?x?xbf16>, kn) groups(%g : memref<5xi32>) out(%o : memref<4x256x128xbf16>)
  return
}

// -----

func.func @dynamic_m_k_grouped(%a: memref<?x?xbf16>, %b: memref<128x?xbf16>, %g: memref<5xi32>, %o: memref<4x256x128xbf16>) {
  // expected-error @+1 {{'a' dimension 0 (M) must be static}}
  gg.grouped_matmul k_grouped a(%a : memref<?x?xbf16>) b(%b : memref<128x?xbf16>) groups(%g : memref<5xi32>) out(%o : memref<4x256x128xbf16>)
  return
}

// -----

func.func @dynamic_m_k_grouped_km(%a: memref<?x?xbf16>, %b: memref<128x?xbf16>, %g: memref<5xi32>, %o: memref<4x256x128xbf16>) {
  // expected-error @+1 {{'a' dimension 1 (M) must be static}}
  gg.grouped_matmul k_grouped a(%a : memref<?x?xbf16>, km) b(%b : memref<128x?xbf16>) groups(%g : memref<5xi32>) out(%o : memref<4x256x128xbf16>)
  return
}

// -----

func.func @dynamic_g_k_grouped(%a: memref<256x?xbf16>, %b: memref<128x?xbf16>, %g: memref<5xi32>, %o: memref<?x256x128xbf16>) {
  // expected-error @+1 {{'out' dimension 0 (G) must be static}}
  gg.grouped_matmul k_grouped a(%a : memref<256x?xbf16>) b(%b : memref<128x?xbf16>) groups(%g : memref<5xi32>) out(%o : memref<?x256x128xbf16>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// Shapes per group layout
//===----------------------------------------------------------------------===//

func.func @contiguous_a_k(%a: memref<?x128xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'a' must have shape [?, 256] (M x K), but has 'memref<?x128xbf16>'}}
  gg.grouped_matmul contiguous a(%a : memref<?x128xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>)
  return
}

// -----

func.func @contiguous_a_k_kn(%a: memref<?x512xbf16>, %b: memref<8x256x512xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'a' must have shape [?, 256] (M x K)}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>) b(%b : memref<8x256x512xbf16>, kn) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>)
  return
}

// -----

func.func @contiguous_out_n(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x256xbf16>) {
  // expected-error @+1 {{'out' must have shape [?, 512] (M x N)}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @contiguous_out_m(%a: memref<1024x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<1000x512xbf16>) {
  // expected-error @+1 {{'out' must have shape [1024, 512] (M x N)}}
  gg.grouped_matmul contiguous a(%a : memref<1024x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<1000x512xbf16>)
  return
}

// -----

func.func @contiguous_groups_shape(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<8xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'groups' must have shape [9] (G+1 group offsets, CSR m_indptr), but has 'memref<8xi32>'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<8xi32>) out(%o : memref<?x512xbf16>)
  return
}

// -----

func.func @contiguous_groups_f32(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xf32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'groups' must have element type i32 or i64 (offsets), but has 'f32'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xf32>) out(%o : memref<?x512xbf16>)
  return
}

// -----

func.func @padded_groups_shape(%a: memref<1024x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<1024x512xbf16>) {
  // expected-error @+1 {{'groups' must have shape [1024] (one group index per row of A)}}
  gg.grouped_matmul padded_contiguous a(%a : memref<1024x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<1024x512xbf16>)
  return
}

// -----

func.func @padded_groups_i64(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<?xi64>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'groups' must have element type i32 (group index per row, -1 = skip), but has 'i64'}}
  gg.grouped_matmul padded_contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<?xi64>) out(%o : memref<?x512xbf16>)
  return
}

// -----

func.func @masked_a_g(%a: memref<4x128x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<8xi32>, %o: memref<8x128x512xbf16>) {
  // expected-error @+1 {{'a' must have shape [8, ?, 256] (G x M_max x K)}}
  gg.grouped_matmul masked a(%a : memref<4x128x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<8xi32>) out(%o : memref<8x128x512xbf16>)
  return
}

// -----

func.func @masked_out(%a: memref<8x128x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<8xi32>, %o: memref<8x64x512xbf16>) {
  // expected-error @+1 {{'out' must have shape [8, 128, 512] (G x M_max x N)}}
  gg.grouped_matmul masked a(%a : memref<8x128x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<8xi32>) out(%o : memref<8x64x512xbf16>)
  return
}

// -----

func.func @masked_groups_shape(%a: memref<8x128x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<8x128x512xbf16>) {
  // expected-error @+1 {{'groups' must have shape [8] (valid rows per group, masked_m)}}
  gg.grouped_matmul masked a(%a : memref<8x128x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<8x128x512xbf16>)
  return
}

// -----

func.func @masked_groups_i64(%a: memref<8x128x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<8xi64>, %o: memref<8x128x512xbf16>) {
  // expected-error @+1 {{'groups' must have element type i32 (valid rows per group), but has 'i64'}}
  gg.grouped_matmul masked a(%a : memref<8x128x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<8xi64>) out(%o : memref<8x128x512xbf16>)
  return
}

// -----

func.func @k_grouped_b_k(%a: memref<256x1024xbf16>, %b: memref<128x512xbf16>, %g: memref<5xi32>, %o: memref<4x256x128xbf16>) {
  // expected-error @+1 {{'b' must have shape [128, 1024] (K of 'b' must equal K of 'a')}}
  gg.grouped_matmul k_grouped a(%a : memref<256x1024xbf16>) b(%b : memref<128x512xbf16>) groups(%g : memref<5xi32>) out(%o : memref<4x256x128xbf16>)
  return
}

// -----

func.func @k_grouped_out_nm(%a: memref<?x256xbf16>, %b: memref<?x128xbf16>, %g: memref<5xi64>, %o: memref<4x256x128xbf16>) {
  // expected-error @+1 {{'out' must have shape [4, 128, 256] (one output matrix per group)}}
  gg.grouped_matmul k_grouped a(%a : memref<?x256xbf16>, km) b(%b : memref<?x128xbf16>, kn) groups(%g : memref<5xi64>) out(%o : memref<4x256x128xbf16>, nm)
  return
}

// -----

func.func @k_grouped_groups_shape(%a: memref<256x?xbf16>, %b: memref<128x?xbf16>, %g: memref<4xi32>, %o: memref<4x256x128xbf16>) {
  // expected-error @+1 {{'groups' must have shape [5] (G+1 offsets into K)}}
  gg.grouped_matmul k_grouped a(%a : memref<256x?xbf16>) b(%b : memref<128x?xbf16>) groups(%g : memref<4xi32>) out(%o : memref<4x256x128xbf16>)
  return
}

// -----

func.func @k_grouped_groups_index(%a: memref<256x?xbf16>, %b: memref<128x?xbf16>, %g: memref<5xindex>, %o: memref<4x256x128xbf16>) {
  // expected-error @+1 {{'groups' must have element type i32 or i64 (offsets), but has 'index'}}
  gg.grouped_matmul k_grouped a(%a : memref<256x?xbf16>) b(%b : memref<128x?xbf16>) groups(%g : memref<5xindex>) out(%o : memref<4x256x128xbf16>)
  return
}

// -----

func.func @zero_groups(%a: memref<?x256xbf16>, %b: memref<0x512x256xbf16>, %g: memref<1xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{the number of groups G must be at least 1, but is 0}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<0x512x256xbf16>) groups(%g : memref<1xi32>) out(%o : memref<?x512xbf16>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// expected_m
//===----------------------------------------------------------------------===//

func.func @expected_m_k_grouped(%a: memref<256x?xbf16>, %b: memref<128x?xbf16>, %g: memref<5xi32>, %o: memref<4x256x128xf32>) {
  // expected-error @+1 {{'expected_m' (a k_grouped group's tokens) must be at least 1, but is 0}}
  gg.grouped_matmul k_grouped a(%a : memref<256x?xbf16>) b(%b : memref<128x?xbf16>) groups(%g : memref<5xi32>) out(%o : memref<4x256x128xf32>) {expected_m = 0 : i64}
  return
}

// -----

func.func @expected_m_above_rows(%a: memref<1000x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<1000x512xbf16>) {
  // expected-error @+1 {{'expected_m' must be in [1, M = 1000], but is 4096}}
  gg.grouped_matmul contiguous a(%a : memref<1000x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<1000x512xbf16>) {expected_m = 4096 : i64}
  return
}

// -----

func.func @expected_m_zero(%a: memref<8x128x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<8xi32>, %o: memref<8x128x512xbf16>) {
  // expected-error @+1 {{'expected_m' must be in [1, M_max = 128], but is 0}}
  gg.grouped_matmul masked a(%a : memref<8x128x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<8xi32>) out(%o : memref<8x128x512xbf16>) {expected_m = 0 : i64}
  return
}

// -----

func.func @expected_m_too_large(%a: memref<8x128x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<8xi32>, %o: memref<8x128x512xbf16>) {
  // expected-error @+1 {{'expected_m' must be in [1, M_max = 128], but is 129}}
  gg.grouped_matmul masked a(%a : memref<8x128x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<8xi32>) out(%o : memref<8x128x512xbf16>) {expected_m = 129 : i64}
  return
}

// -----

func.func @expected_m_negative_dynamic(%a: memref<8x?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<8xi32>, %o: memref<8x?x512xbf16>) {
  // expected-error @+1 {{'expected_m' must be in [1, M_max = ?], but is -1}}
  gg.grouped_matmul masked a(%a : memref<8x?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<8xi32>) out(%o : memref<8x?x512xbf16>) {expected_m = -1 : i64}
  return
}

// -----

//===----------------------------------------------------------------------===//
// Scales
//===----------------------------------------------------------------------===//

// A scale operand without its #gg.scale kind can only be written generically.
func.func @a_scale_without_kind(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %as: memref<4xf32>) {
  // expected-error @+1 {{'a_scale' and its #gg.scale kind must be given together}}
  "gg.grouped_matmul"(%a, %b, %g, %o, %as) <{a_layout = 0 : i32, b_layout = 2 : i32, layout = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 1, 1, 1, 0, 0, 1, 0, 0, 0, 0>, out_layout = 4 : i32}> ({
  }) : (memref<?x512xf8E4M3FN>, memref<4x256x512xf8E4M3FN>, memref<5xi32>, memref<?x256xbf16>, memref<4xf32>) -> ()
  return
}

// -----

func.func @b_scale_kind_without_operand(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>) {
  // expected-error @+1 {{'b_scale' and its #gg.scale kind must be given together}}
  "gg.grouped_matmul"(%a, %b, %g, %o) <{a_layout = 0 : i32, b_layout = 2 : i32, b_scale_kind = #gg.scale<tensor>, layout = 0 : i32, operandSegmentSizes = array<i32: 1, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0>, out_layout = 4 : i32}> ({
  }) : (memref<?x512xf8E4M3FN>, memref<4x256x512xf8E4M3FN>, memref<5xi32>, memref<?x256xbf16>) -> ()
  return
}

// -----

func.func @a_scale_bf16(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>, %as: memref<8xf32>) {
  // expected-error @+1 {{'a_scale' is only allowed with f8E4M3FN or f8E5M2 operands, but 'a' has element type 'bf16'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) a_scale(%as : memref<8xf32>, <tensor>) out(%o : memref<?x512xbf16>)
  return
}

// -----

func.func @b_scale_f32(%a: memref<?x256xf32>, %b: memref<8x512x256xf32>, %g: memref<9xi32>, %o: memref<?x512xf32>, %bs: memref<8x512xf32>) {
  // expected-error @+1 {{'b_scale' is only allowed with f8E4M3FN or f8E5M2 operands, but 'b' has element type 'f32'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xf32>) b(%b : memref<8x512x256xf32>) groups(%g : memref<9xi32>) b_scale(%bs : memref<8x512xf32>, <channel>) out(%o : memref<?x512xf32>)
  return
}

// -----

func.func @tensor_scale_shape(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %as: memref<5xf32>) {
  // expected-error @+1 {{'a_scale' must have shape [4] (one per group, for tensor scales of A), but has 'memref<5xf32>'}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<5xf32>, <tensor>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @tensor_scale_f16(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %bs: memref<4xf16>) {
  // expected-error @+1 {{'b_scale' must have element type f32, but has 'f16'}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) b_scale(%bs : memref<4xf16>, <tensor>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @channel_a_contiguous(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %as: memref<4x?xf32>) {
  // expected-error @+1 {{'a_scale' must have shape [?] (M, one per row, for channel scales of A)}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<4x?xf32>, <channel>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @channel_a_masked(%a: memref<4x128x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<4xi32>, %o: memref<4x128x256xbf16>, %as: memref<128xf32>) {
  // expected-error @+1 {{'a_scale' must have shape [4, 128] (G x M_max, one per row, for channel scales of A)}}
  gg.grouped_matmul masked a(%a : memref<4x128x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<4xi32>) a_scale(%as : memref<128xf32>, <channel>) out(%o : memref<4x128x256xbf16>)
  return
}

// -----

func.func @channel_b(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %bs: memref<256xf32>) {
  // expected-error @+1 {{'b_scale' must have shape [4, 256] (G x N, one per column, for channel scales of B)}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) b_scale(%bs : memref<256xf32>, <channel>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @channel_b_k_grouped(%a: memref<256x?xf8E4M3FN>, %b: memref<128x?xf8E4M3FN>, %g: memref<5xi32>, %o: memref<4x256x128xbf16>, %bs: memref<4x128xf32>) {
  // expected-error @+1 {{'b_scale' must have shape [128] (N, one per column, for channel scales of B)}}
  gg.grouped_matmul k_grouped a(%a : memref<256x?xf8E4M3FN>) b(%b : memref<128x?xf8E4M3FN>) groups(%g : memref<5xi32>) b_scale(%bs : memref<4x128xf32>, <channel>) out(%o : memref<4x256x128xbf16>)
  return
}

// -----

func.func @block_a_128x128(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %as: memref<?x4xf32>) {
  // expected-error @+1 {{'a_scale' block scales must be 1x128 (one per row per K block), but are 128x128}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<?x4xf32>, <block 128x128>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @block_a_k_major(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %as: memref<?x2xf32>) {
  // expected-error @+1 {{'a_scale' must have shape [?, 4] (M x ceil(K/128), for block scales of A)}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<?x2xf32>, <block 1x128>) out(%o : memref<?x256xbf16>)
  return
}

// -----

// align4(250) = 252
func.func @block_a_mn_major(%a: memref<250x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<250x256xbf16>, %as: memref<4x250xf32>) {
  // expected-error @+1 {{'a_scale' must have shape [4, 252] (ceil(K/128) x align4(M), for block scales of A)}}
  gg.grouped_matmul contiguous a(%a : memref<250x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<4x250xf32>, <block 1x128, mn_major>) out(%o : memref<250x256xbf16>)
  return
}

// -----

func.func @block_a_masked_k_major(%a: memref<4x128x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<4xi32>, %o: memref<4x128x256xbf16>, %as: memref<128x4xf32>) {
  // expected-error @+1 {{'a_scale' must have shape [4, 128, 4] (G x M x ceil(K/128), M = M_max, for block scales of A)}}
  gg.grouped_matmul masked a(%a : memref<4x128x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<4xi32>) a_scale(%as : memref<128x4xf32>, <block 1x128>) out(%o : memref<4x128x256xbf16>)
  return
}

// -----

func.func @block_a_masked_mn_major(%a: memref<4x30x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<4xi32>, %o: memref<4x30x256xbf16>, %as: memref<4x4x30xf32>) {
  // expected-error @+1 {{'a_scale' must have shape [4, 4, 32] (G x ceil(K/128) x align4(M), M = M_max, for block scales of A)}}
  gg.grouped_matmul masked a(%a : memref<4x30x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<4xi32>) a_scale(%as : memref<4x4x30xf32>, <block 1x128, mn_major>) out(%o : memref<4x30x256xbf16>)
  return
}

// -----

func.func @block_a_k_grouped_k_major(%a: memref<256x?xf8E4M3FN>, %b: memref<128x?xf8E4M3FN>, %g: memref<5xi32>, %o: memref<4x256x128xbf16>, %as: memref<?x256xf32>) {
  // expected-error @+1 {{'a_scale' must have shape [256, ?] (M x ceil(K/128), for block scales of A)}}
  gg.grouped_matmul k_grouped a(%a : memref<256x?xf8E4M3FN>) b(%b : memref<128x?xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<?x256xf32>, <block 1x128>) out(%o : memref<4x256x128xbf16>)
  return
}

// -----

func.func @block_a_k_grouped_mn_major(%a: memref<256x?xf8E4M3FN>, %b: memref<128x?xf8E4M3FN>, %g: memref<5xi32>, %o: memref<4x256x128xbf16>, %as: memref<256x?xf32>) {
  // expected-error @+1 {{'a_scale' must have shape [?, 256] (ceil(K/128) x M, for block scales of A)}}
  gg.grouped_matmul k_grouped a(%a : memref<256x?xf8E4M3FN>) b(%b : memref<128x?xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<256x?xf32>, <block 1x128, mn_major>) out(%o : memref<4x256x128xbf16>)
  return
}

// -----

func.func @block_b_k_major(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %bs: memref<4x4x2xf32>) {
  // expected-error @+1 {{'b_scale' must have shape [4, 2, 4] (G x ceil(N/128) x ceil(K/128), for block scales of B)}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) b_scale(%bs : memref<4x4x2xf32>, <block 128x128>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @block_b_mn_major(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %bs: memref<4x2x4xf32>) {
  // expected-error @+1 {{'b_scale' must have shape [4, 4, 2] (G x ceil(K/128) x ceil(N/128), for block scales of B)}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) b_scale(%bs : memref<4x2x4xf32>, <block 128x128, mn_major>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @block_b_1x128(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %bs: memref<4x2x4xf32>) {
  // expected-error @+1 {{'b_scale' must have shape [4, 256, 4] (G x N x ceil(K/128), for block scales of B)}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) b_scale(%bs : memref<4x2x4xf32>, <block 1x128>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @block_b_k_grouped(%a: memref<256x?xf8E4M3FN>, %b: memref<128x?xf8E4M3FN>, %g: memref<5xi32>, %o: memref<4x256x128xbf16>, %bs: memref<4x1x?xf32>) {
  // expected-error @+1 {{'b_scale' must have shape [1, ?] (ceil(N/128) x ceil(K/128), for block scales of B)}}
  gg.grouped_matmul k_grouped a(%a : memref<256x?xf8E4M3FN>) b(%b : memref<128x?xf8E4M3FN>) groups(%g : memref<5xi32>) b_scale(%bs : memref<4x1x?xf32>, <block 128x128>) out(%o : memref<4x256x128xbf16>)
  return
}

// -----

func.func @block_scale_i32(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %as: memref<?x4xi32>) {
  // expected-error @+1 {{'a_scale' must have element type f32, but has 'i32'}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<?x4xi32>, <block 1x128>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @mx_scale_f32(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %as: memref<?x4xf32>, %bs: memref<4x256x4xi32>) {
  // expected-error @+1 {{'a_scale' must have element type i32 (packed UE8M0), but has 'f32'}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<?x4xf32>, <mx 1x32>) b_scale(%bs : memref<4x256x4xi32>, <mx 1x32>) out(%o : memref<?x256xbf16>)
  return
}

// -----

// (1000 + 3 * 4) / 4 * 4 = 1012 rows; ceil(512 / (4 * 32)) = 4 columns.
func.func @mx_a_contiguous(%a: memref<1000x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<1000x256xbf16>, %as: memref<1000x4xi32>, %bs: memref<4x256x4xi32>) {
  // expected-error @+1 {{'a_scale' must have shape [1012, 4] ((M + 3G)/4*4 x ceil(K/128), four exponents per i32, for mx scales of A)}}
  gg.grouped_matmul contiguous a(%a : memref<1000x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<1000x4xi32>, <mx 1x32>) b_scale(%bs : memref<4x256x4xi32>, <mx 1x32>) out(%o : memref<1000x256xbf16>)
  return
}

// -----

func.func @mx_a_masked(%a: memref<4x128x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<4xi32>, %o: memref<4x128x256xbf16>, %as: memref<4x128x4xi32>, %bs: memref<4x256x1xi32>) {
  // expected-error @+1 {{'a_scale' must have shape [4, 128, 1] (G x M_max x ceil(K/512), four exponents per i32, for mx scales of A)}}
  gg.grouped_matmul masked a(%a : memref<4x128x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<4xi32>) a_scale(%as : memref<4x128x4xi32>, <mx 1x128>) b_scale(%bs : memref<4x256x1xi32>, <mx 1x128>) out(%o : memref<4x128x256xbf16>)
  return
}

// -----

func.func @mx_a_padded(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<?xi32>, %o: memref<?x256xbf16>, %as: memref<?x8xi32>, %bs: memref<4x256x4xi32>) {
  // expected-error @+1 {{'a_scale' must have shape [?, 4] (M x ceil(K/128), four exponents per i32, for mx scales of A)}}
  gg.grouped_matmul padded_contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<?xi32>) a_scale(%as : memref<?x8xi32>, <mx 1x32>) b_scale(%bs : memref<4x256x4xi32>, <mx 1x32>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @mx_b(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %as: memref<?x4xi32>, %bs: memref<256x4xi32>) {
  // expected-error @+1 {{'b_scale' must have shape [4, 256, 4] (G x N x ceil(K/128), four exponents per i32, for mx scales of B)}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<?x4xi32>, <mx 1x32>) b_scale(%bs : memref<256x4xi32>, <mx 1x32>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @mx_k_grouped(%a: memref<256x?xf8E4M3FN>, %b: memref<128x?xf8E4M3FN>, %g: memref<5xi32>, %o: memref<4x256x128xbf16>, %as: memref<256x?xi32>, %bs: memref<4x128x?xi32>) {
  // expected-error @+1 {{'b_scale' must have shape [128, ?] (N x ceil(K/128), four exponents per i32, for mx scales of B)}}
  gg.grouped_matmul k_grouped a(%a : memref<256x?xf8E4M3FN>) b(%b : memref<128x?xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<256x?xi32>, <mx 1x32>) b_scale(%bs : memref<4x128x?xi32>, <mx 1x32>) out(%o : memref<4x256x128xbf16>)
  return
}

// -----

func.func @mx_a_only(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %as: memref<?x4xi32>, %bs: memref<4x2x4xf32>) {
  // expected-error @+1 {{mx scales must be given for both 'a_scale' and 'b_scale'}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<?x4xi32>, <mx 1x32>) b_scale(%bs : memref<4x2x4xf32>, <block 128x128>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @mx_b_only(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %bs: memref<4x256x1xi32>) {
  // expected-error @+1 {{mx scales must be given for both 'a_scale' and 'b_scale'}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) b_scale(%bs : memref<4x256x1xi32>, <mx 1x128>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @mx_block_k_mismatch(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %as: memref<?x4xi32>, %bs: memref<4x256x1xi32>) {
  // expected-error @+1 {{mx scales of 'a' and 'b' must use the same K block, but use 32 and 128}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<?x4xi32>, <mx 1x32>) b_scale(%bs : memref<4x256x1xi32>, <mx 1x128>) out(%o : memref<?x256xbf16>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// Epilogue vectors
//===----------------------------------------------------------------------===//

func.func @rows_rank2(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>, %r: memref<8x?xf32>) {
  // expected-error @+1 {{'rows' must have shape [?] (M, one per row)}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) rows(%r : memref<8x?xf32>)
  return
}

// -----

func.func @rows_masked(%a: memref<8x128x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<8xi32>, %o: memref<8x128x512xbf16>, %r: memref<8x64xf32>) {
  // expected-error @+1 {{'rows' must have shape [8, 128] (G x M_max, one per row)}}
  gg.grouped_matmul masked a(%a : memref<8x128x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<8xi32>) out(%o : memref<8x128x512xbf16>) rows(%r : memref<8x64xf32>)
  return
}

// -----

func.func @rows_i32(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>, %r: memref<?xi32>) {
  // expected-error @+1 {{'rows' must have element type f32, bf16 or f16, but has 'i32'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) rows(%r : memref<?xi32>)
  return
}

// -----

func.func @cols_n(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>, %c: memref<256xf32>) {
  // expected-error @+1 {{'cols' must have shape [512] (N, or G x N for one vector per group)}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) cols(%c : memref<256xf32>)
  return
}

// -----

func.func @cols_gn(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>, %c: memref<4x512xf32>) {
  // expected-error @+1 {{'cols' must have shape [8, 512] (N, or G x N for one vector per group)}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) cols(%c : memref<4x512xf32>)
  return
}

// -----

func.func @cols_f64(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>, %c: memref<8x512xf64>) {
  // expected-error @+1 {{'cols' must have element type f32, bf16 or f16, but has 'f64'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) cols(%c : memref<8x512xf64>)
  return
}

// -----

func.func @group_scalars_shape(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>, %s: memref<9xf32>) {
  // expected-error @+1 {{'group_scalars' must have shape [8] (one per group)}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) group_scalars(%s : memref<9xf32>)
  return
}

// -----

func.func @group_scalars_i8(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>, %s: memref<8xi8>) {
  // expected-error @+1 {{'group_scalars' must have element type f32, bf16 or f16, but has 'i8'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) group_scalars(%s : memref<8xi8>)
  return
}

// -----

//===----------------------------------------------------------------------===//
// Epilogue region
//===----------------------------------------------------------------------===//

// "epilogue must end with gg.yield" is not reachable here: the only
// terminators in the registered dialects (func.return,
// memref.alloca_scope.return) fail their own parent check first.

func.func @epilogue_two_blocks(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{epilogue must have exactly one block}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) epilogue {
  ^bb0(%acc: f32, %gi: index):
    gg.yield %acc : f32
  ^bb1(%acc1: f32, %gi1: index):
    gg.yield %acc1 : f32
  }
  return
}

// -----

func.func @epilogue_arg_count(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>, %r: memref<?xf32>) {
  // expected-error @+1 {{epilogue must have 3 block arguments (accumulator, 1 rows, 0 cols, 0 group scalars, group index), but has 2}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) rows(%r : memref<?xf32>) epilogue {
  ^bb0(%acc: f32, %gi: index):
    gg.yield %acc : f32
  }
  return
}

// -----

func.func @epilogue_acc_f16(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{epilogue argument #0 must be 'f32' (the f32 accumulator), but is 'f16'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) epilogue {
  ^bb0(%acc: f16, %gi: index):
    gg.yield %acc : f16
  }
  return
}

// -----

func.func @epilogue_col_type(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>, %c: memref<512xbf16>) {
  // expected-error @+1 {{epilogue argument #1 must be 'bf16' (the element of 'cols' #0}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) cols(%c : memref<512xbf16>) epilogue {
  ^bb0(%acc: f32, %bias: f32, %gi: index):
    %0 = arith.addf %acc, %bias : f32
    gg.yield %0 : f32
  }
  return
}

// -----

func.func @epilogue_group_index_i32(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{epilogue argument #1 must be 'index' (the group index), but is 'i32'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) epilogue {
  ^bb0(%acc: f32, %gi: i32):
    gg.yield %acc : f32
  }
  return
}

// -----

func.func @epilogue_yield_f16(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{epilogue must yield f32 or the element type of 'out' ('bf16'), but yields 'f16'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) epilogue {
  ^bb0(%acc: f32, %gi: index):
    %0 = arith.truncf %acc : f32 to f16
    gg.yield %0 : f16
  }
  return
}

// -----

func.func @epilogue_memref_op(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) epilogue {
  ^bb0(%acc: f32, %gi: index):
    // expected-error @+1 {{'memref.alloca' op is not allowed in a gg.grouped_matmul epilogue: only side-effect-free scalar operations may appear there}}
    %m = memref.alloca() : memref<8xf32>
    %v = memref.load %m[%gi] : memref<8xf32>
    %0 = arith.addf %acc, %v : f32
    gg.yield %0 : f32
  }
  return
}

// -----

func.func @epilogue_vector_constant(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) epilogue {
  ^bb0(%acc: f32, %gi: index):
    // expected-error @+1 {{'arith.constant' op is not allowed in a gg.grouped_matmul epilogue}}
    %t = arith.constant dense<1.0> : tensor<4xf32>
    gg.yield %acc : f32
  }
  return
}

// -----

func.func private @scale() -> f32

func.func @epilogue_call(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) epilogue {
  ^bb0(%acc: f32, %gi: index):
    // expected-error @+1 {{'func.call' op is not allowed in a gg.grouped_matmul epilogue}}
    %s = func.call @scale() : () -> f32
    %0 = arith.mulf %acc, %s : f32
    gg.yield %0 : f32
  }
  return
}

// -----

func.func @epilogue_region_op(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) epilogue {
  ^bb0(%acc: f32, %gi: index):
    // expected-error @+1 {{'memref.alloca_scope' op is not allowed in a gg.grouped_matmul epilogue}}
    %0 = memref.alloca_scope -> f32 {
      memref.alloca_scope.return %acc : f32
    }
    gg.yield %0 : f32
  }
  return
}

// -----

//===----------------------------------------------------------------------===//
// #gg.config
//===----------------------------------------------------------------------===//

func.func @config_block_m(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{block M must be 64, 128, 192 or 256, got 96}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {config = #gg.config<block = [96, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

func.func @config_block_m_large(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{block M must be 64, 128, 192 or 256, got 320}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {config = #gg.config<block = [320, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

func.func @config_block_n(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{block N must be a multiple of 8 in [8, 256], got 12}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {config = #gg.config<block = [128, 12, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

func.func @config_block_k(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{block K must be a multiple of 32 in [32, 256], got 48}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {config = #gg.config<block = [128, 128, 48], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

func.func @config_stages(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{stages must be in [1, 16] (or 0: chosen by gg-select-config), got 17}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {config = #gg.config<block = [128, 128, 64], stages = 17, cluster = [1, 1], sms = 132>}
  return
}

// -----

func.func @config_cluster_not_pow2(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{cluster must be powers of two with at most 8 CTAs, got [3, 1]}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [3, 1], sms = 132>}
  return
}

// -----

func.func @config_cluster_overflow(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{cluster must be powers of two with at most 8 CTAs, got [4294967296, 4294967296]}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [4294967296, 4294967296], sms = 132>}
  return
}

// -----

func.func @config_cluster_too_big(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{cluster must be powers of two with at most 8 CTAs, got [4, 4]}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [4, 4], sms = 132>}
  return
}

// -----

func.func @config_sms(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{sms must be positive, got 0}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 0>}
  return
}

// -----

//===----------------------------------------------------------------------===//
// #gg.scale
//===----------------------------------------------------------------------===//

func.func @scale_unknown_kind(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %as: memref<?xf32>) {
  // expected-error @+1 {{unknown scale kind 'row'; expected tensor, channel, block or mx}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<?xf32>, <row>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @scale_block_one_dim(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %as: memref<?x4xf32>) {
  // expected-error @+1 {{expected a block shape BMxBK, e.g. 1x128}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<?x4xf32>, <block 128>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @scale_mx_no_block(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %as: memref<?x4xi32>) {
  // expected-error @+1 {{expected a block shape BMxBK, e.g. 1x128}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<?x4xi32>, <mx>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @scale_block_three_dims(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %as: memref<?x4xf32>) {
  // expected-error @+1 {{expected a block shape BMxBK, e.g. 1x128}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<?x4xf32>, <block 1x1x128>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @scale_bad_major(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %as: memref<?x4xf32>) {
  // expected-error @+1 {{expected k_major or mn_major, got 'row_major'}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<?x4xf32>, <block 1x128, row_major>) out(%o : memref<?x256xbf16>)
  return
}

// -----

// tensor and channel scales take no block shape: the parser stops at it.
func.func @scale_tensor_with_block(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %as: memref<4xf32>) {
  // expected-error @+1 {{expected '>'}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<4xf32>, <tensor 1x128>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @scale_block_64x128(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %bs: memref<4x4x4xf32>) {
  // expected-error @+1 {{block scales cover 1x128 or 128x128 blocks, got 64x128}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) b_scale(%bs : memref<4x4x4xf32>, <block 64x128>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @scale_block_1x64(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %as: memref<?x8xf32>) {
  // expected-error @+1 {{block scales cover 1x128 or 128x128 blocks, got 1x64}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<?x8xf32>, <block 1x64>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @scale_mx_1x64(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %as: memref<?x2xi32>) {
  // expected-error @+1 {{mx scales are per row with K blocks of 32 or 128 (1x32 or 1x128), got 1x64}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<?x2xi32>, <mx 1x64>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @scale_mx_mn_major(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %as: memref<?x4xi32>) {
  // expected-error @+1 {{mx scales have a fixed per-token layout (four UE8M0 exponents per i32 along K); drop mn_major}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<?x4xi32>, <mx 1x32, mn_major>) out(%o : memref<?x256xbf16>)
  return
}

// -----

func.func @store_pool_not_halving(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'store_pool' must halve from a power of two down to 1 (e.g. [128, 64, ..., 1]), but is [128, 32, 1]}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {store_pool = array<i64: 128, 32, 1>}
  return
}

// -----

func.func @store_pool_wrong_start(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'store_pool' must start at the largest power of two not above the block M of the config (128), which is 128, but starts at 64}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>, store_pool = array<i64: 64, 32, 16, 8, 4, 2, 1>}
  return
}

// -----

func.func @padding_skip_padded(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<?xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'padding' with idle_warpgroups = skip needs a contiguous or masked layout, whose valid rows of a tile are a prefix; got padded_contiguous}}
  gg.grouped_matmul padded_contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<?xi32>) out(%o : memref<?x512xbf16>) {padding = #gg.padding<idle_warpgroups = skip>}
  return
}

// -----

func.func @overfetch_k_outside_k_grouped(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'overfetch' k must be 0 outside k_grouped, got 7}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {overfetch = #gg.overfetch<rows = 127, k = 7>}
  return
}

// -----

func.func @overfetch_k_not_alignment(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{overfetch k + 1 must be a power of two (the alignment of a group's first K block), got k = 6}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {overfetch = #gg.overfetch<rows = 127, k = 6>}
  return
}

// -----

func.func @schedule_band_range(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{schedule m_band must be in [0, 1024] (0: one band per group), got -1}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {schedule = #gg.schedule<order = m_fastest, m_band = -1>}
  return
}

// -----

func.func @schedule_unknown_entry(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{expected 'b_cache', 'm_band', 'group_reads' or 'odd_block_a'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {schedule = #gg.schedule<order = m_fastest, band = 3>}
  return
}

// -----

func.func @schedule_unknown_policy(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{expected normal, evict_first or evict_last, got 'evict_never'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {schedule = #gg.schedule<order = m_fastest, b_cache = evict_never>}
  return
}

// -----

func.func @schedule_unknown_group_reads(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{expected global or shared, got 'local'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {schedule = #gg.schedule<order = m_fastest, group_reads = local>}
  return
}

// -----

func.func @schedule_group_reads_k_grouped(%a: memref<256x?xbf16>, %b: memref<512x?xbf16>, %g: memref<9xi32>, %o: memref<8x256x512xf32>) {
  // expected-error @+1 {{schedule group_reads = shared tables the counts or offsets a masked or contiguous walk steps over; layout k_grouped takes group_reads = global}}
  gg.grouped_matmul k_grouped a(%a : memref<256x?xbf16>) b(%b : memref<512x?xbf16>) groups(%g : memref<9xi32>) out(%o : memref<8x256x512xf32>) {schedule = #gg.schedule<order = m_fastest, group_reads = shared>}
  return
}

// -----

func.func @schedule_band_order(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{schedule m_band bands a group's M blocks and needs order = m_fastest, got order = n_fastest}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {schedule = #gg.schedule<order = n_fastest, m_band = 4>}
  return
}

// -----

func.func @overfetch_rows_range(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{overfetch rows must be in [0, 255] (below block M), got 300}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {overfetch = #gg.overfetch<rows = 300, k = 0>}
  return
}

// -----

func.func @split_n_three(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{split_n must be 1 or 2, got 3}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {config = #gg.config<block = [64, 192, 64], stages = 4, cluster = [1, 1], sms = 132, split_n = 3>}
  return
}

// -----

func.func @split_n_narrow(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{split_n = 2 needs block N a multiple of 32 (each warpgroup's wgmma takes a multiple of 16 columns), got 48}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {config = #gg.config<block = [64, 48, 64], stages = 4, cluster = [1, 1], sms = 132, split_n = 2>}
  return
}

// -----

func.func @store_pool_out_nm(%a: memref<?x64xbf16>, %b: memref<?x64xbf16>, %g: memref<3xi32>, %o: memref<2x64x64xf32>) {
  // expected-error @+1 {{'store_pool' stores rows of an 'out' in layout mn; 'out' in layout nm takes per-thread stores (an empty store_pool)}}
  gg.grouped_matmul k_grouped a(%a : memref<?x64xbf16>, km) b(%b : memref<?x64xbf16>, kn) groups(%g : memref<3xi32>) out(%o : memref<2x64x64xf32>, nm) {store_pool = array<i64: 64, 32, 16, 8, 4, 2, 1>}
  return
}

// -----

func.func @store_pool_accumulate_bf16(%a: memref<?x64xbf16>, %b: memref<?x64xbf16>, %g: memref<3xi32>, %o: memref<2x64x64xbf16>) {
  // expected-error @+1 {{'store_pool' adds to 'out' with TMA's reduce-add only for f32 (a 16-bit sum would be rounded twice); accumulate into a 16-bit 'out' takes per-thread stores (an empty store_pool)}}
  gg.grouped_matmul k_grouped a(%a : memref<?x64xbf16>, km) b(%b : memref<?x64xbf16>, kn) groups(%g : memref<3xi32>) out(%o : memref<2x64x64xbf16>) {accumulate, store_pool = array<i64: 64, 32, 16, 8, 4, 2, 1>}
  return
}

// -----

func.func @store_pool_unaligned_rows(%a: memref<?x256xbf16>, %b: memref<8x448x256xbf16>, %g: memref<9xi32>, %o: memref<?x448xbf16>) {
  // expected-error @+1 {{'store_pool' needs the staged tile's rows of block N elements to be a multiple of 64 bytes (its boxes start 128-byte aligned), but block N 112 makes them 224; use an empty store_pool (per-thread stores)}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x448x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x448xbf16>) {config = #gg.config<block = [128, 112, 64], stages = 4, cluster = [1, 1], sms = 132>, store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>}
  return
}

// -----

//===----------------------------------------------------------------------===//
// column_pairs: the epilogue combines columns 2j, 2j+1 into output column j
//===----------------------------------------------------------------------===//

func.func @column_pairs_without_epilogue(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x256xbf16>) {
  // expected-error @+1 {{column_pairs needs an epilogue that combines each pair of accumulators into one output}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x256xbf16>) {column_pairs}
  return
}

// -----

func.func @column_pairs_odd_n(%a: memref<?x256xbf16>, %b: memref<8x511x256xbf16>, %g: memref<9xi32>, %o: memref<?x255xbf16>) {
  // expected-error @+1 {{column_pairs needs an even N (pairs of columns of 'b'), got N = 511}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x511x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x255xbf16>) {column_pairs} epilogue {
  ^bb0(%x: f32, %y: f32, %gi: index):
    gg.yield %x : f32
  }
  return
}

// -----

func.func @column_pairs_full_width_out(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'out' must have shape [?, 256] (M x N/2 (column_pairs))}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {column_pairs} epilogue {
  ^bb0(%x: f32, %y: f32, %gi: index):
    gg.yield %x : f32
  }
  return
}

// -----

func.func @column_pairs_k_grouped(%a: memref<512x256xbf16>, %b: memref<512x1024xbf16>, %g: memref<5xi32>, %o: memref<4x256x512xf32>) {
  // expected-error @+1 {{column_pairs is for row layouts (contiguous, masked, padded_contiguous), not k_grouped}}
  gg.grouped_matmul k_grouped a(%a : memref<512x256xbf16>, km) b(%b : memref<512x1024xbf16>, kn) groups(%g : memref<5xi32>) out(%o : memref<4x256x512xf32>) {column_pairs} epilogue {
  ^bb0(%x: f32, %y: f32, %gi: index):
    gg.yield %x : f32
  }
  return
}

// -----

func.func @column_pairs_cols(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x256xbf16>, %c: memref<512xf32>) {
  // expected-error @+1 {{column_pairs takes no 'cols' vectors}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x256xbf16>) cols(%c : memref<512xf32>) {column_pairs} epilogue {
  ^bb0(%x: f32, %y: f32, %cv: f32, %gi: index):
    gg.yield %x : f32
  }
  return
}

// -----

func.func @column_pairs_one_accumulator(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x256xbf16>) {
  // expected-error @+1 {{epilogue must have 3 block arguments (two accumulators, 0 rows, 0 cols, 0 group scalars, group index), but has 2}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x256xbf16>) {column_pairs} epilogue {
  ^bb0(%x: f32, %gi: index):
    gg.yield %x : f32
  }
  return
}

// -----

// A tile's outputs are block N / 2 columns: 32 of bf16 are 64 bytes a
// row, 16 are too few for the pool's 128-byte-aligned boxes.
func.func @column_pairs_store_pool(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x256xbf16>) {
  // expected-error @+1 {{'store_pool' needs the staged tile's rows of block N / 2 (column_pairs) elements to be a multiple of 64 bytes (its boxes start 128-byte aligned), but block N 32 makes them 32; use an empty store_pool (per-thread stores)}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x256xbf16>) {column_pairs, config = #gg.config<block = [128, 32, 64], stages = 4, cluster = [1, 1], sms = 132>, store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>} epilogue {
  ^bb0(%x: f32, %y: f32, %gi: index):
    gg.yield %x : f32
  }
  return
}

// -----

// N/2 = 100 bf16 columns are rows of 200 bytes: TMA's strides take
// multiples of 16.
func.func @column_pairs_store_pool_stride(%a: memref<?x256xbf16>, %b: memref<8x200x256xbf16>, %g: memref<9xi32>, %o: memref<?x100xbf16>) {
  // expected-error @+1 {{'store_pool' needs rows of 'out' of a multiple of 16 bytes (TMA's strides), but its N/2 = 100 columns (column_pairs) make 200; use an empty store_pool (per-thread stores)}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x200x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x100xbf16>) {column_pairs, store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>} epilogue {
  ^bb0(%x: f32, %y: f32, %gi: index):
    gg.yield %x : f32
  }
  return
}

// -----

//===----------------------------------------------------------------------===//
// column_halves: the epilogue combines columns j, j + N/2 into output column j
//===----------------------------------------------------------------------===//

func.func @column_halves_and_pairs(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x256xbf16>) {
  // expected-error @+1 {{takes column_pairs or column_halves, not both}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x256xbf16>) {column_pairs, column_halves} epilogue {
  ^bb0(%x: f32, %y: f32, %gi: index):
    gg.yield %x : f32
  }
  return
}

// -----

func.func @column_halves_without_epilogue(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x256xbf16>) {
  // expected-error @+1 {{column_halves needs an epilogue that combines each pair of accumulators into one output}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x256xbf16>) {column_halves}
  return
}

// -----

func.func @column_halves_full_width_out(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'out' must have shape [?, 256] (M x N/2 (column_halves))}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {column_halves} epilogue {
  ^bb0(%x: f32, %y: f32, %gi: index):
    gg.yield %x : f32
  }
  return
}

// -----

func.func @column_halves_kn(%a: memref<?x256xbf16>, %b: memref<8x256x512xbf16>, %g: memref<9xi32>, %o: memref<?x256xbf16>) {
  // expected-error @+1 {{column_halves needs 'b' in layout nk (rows of N, K contiguous), got kn}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x256x512xbf16>, kn) groups(%g : memref<9xi32>) out(%o : memref<?x256xbf16>) {column_halves} epilogue {
  ^bb0(%x: f32, %y: f32, %gi: index):
    gg.yield %x : f32
  }
  return
}

// -----

func.func @column_halves_b_scales(%a: memref<?x256xf8E4M3FN>, %b: memref<8x512x256xf8E4M3FN>, %g: memref<9xi32>, %o: memref<?x256xbf16>, %bs: memref<8xf32>) {
  // expected-error @+1 {{column_halves takes scales of 'b' only in 128x128 blocks (one per half of a tile), got #gg.scale<tensor>}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xf8E4M3FN>) b(%b : memref<8x512x256xf8E4M3FN>) groups(%g : memref<9xi32>) b_scale(%bs : memref<8xf32>, <tensor>) out(%o : memref<?x256xbf16>) {column_halves} epilogue {
  ^bb0(%x: f32, %y: f32, %gi: index):
    gg.yield %x : f32
  }
  return
}

// -----

func.func @column_halves_b_blocks_straddle_halves(%a: memref<?x256xf8E4M3FN>, %b: memref<8x320x256xf8E4M3FN>, %g: memref<9xi32>, %o: memref<?x160xbf16>, %bs: memref<8x3x2xf32>) {
  // expected-error @+1 {{column_halves with 128x128 scales of 'b' needs N/2 a multiple of 128 (the up half starting on a block), got N/2 = 160}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xf8E4M3FN>) b(%b : memref<8x320x256xf8E4M3FN>) groups(%g : memref<9xi32>) b_scale(%bs : memref<8x3x2xf32>, <block 128x128>) out(%o : memref<?x160xbf16>) {column_halves} epilogue {
  ^bb0(%x: f32, %y: f32, %gi: index):
    gg.yield %x : f32
  }
  return
}

// -----

func.func @column_halves_b_blocks_tile_straddles(%a: memref<?x256xf8E4M3FN>, %b: memref<8x512x256xf8E4M3FN>, %g: memref<9xi32>, %o: memref<?x256xbf16>, %bs: memref<8x4x2xf32>) {
  // expected-error @+1 {{column_halves with 128x128 scales of 'b' needs block N / 2 to divide 128 (each half of a tile within one scale block), got 96}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xf8E4M3FN>) b(%b : memref<8x512x256xf8E4M3FN>) groups(%g : memref<9xi32>) b_scale(%bs : memref<8x4x2xf32>, <block 128x128>) out(%o : memref<?x256xbf16>) {column_halves, config = #gg.config<block = [128, 192, 128], stages = 4, cluster = [1, 1], sms = 132>} epilogue {
  ^bb0(%x: f32, %y: f32, %gi: index):
    gg.yield %x : f32
  }
  return
}

// -----

func.func @column_halves_odd_n(%a: memref<?x256xbf16>, %b: memref<8x511x256xbf16>, %g: memref<9xi32>, %o: memref<?x255xbf16>) {
  // expected-error @+1 {{column_halves needs an even N (pairs of columns of 'b'), got N = 511}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x511x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x255xbf16>) {column_halves} epilogue {
  ^bb0(%x: f32, %y: f32, %gi: index):
    gg.yield %x : f32
  }
  return
}

// -----

func.func @column_halves_cols(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x256xbf16>, %c: memref<512xf32>) {
  // expected-error @+1 {{column_halves takes no 'cols' vectors}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x256xbf16>) cols(%c : memref<512xf32>) {column_halves} epilogue {
  ^bb0(%x: f32, %y: f32, %cv: f32, %gi: index):
    gg.yield %x : f32
  }
  return
}

//===----------------------------------------------------------------------===//
// Gathered rows of A (a_rows)
//===----------------------------------------------------------------------===//

// -----

func.func @a_rows_masked(%a: memref<8x64x256xbf16>, %r: memref<?xi32>, %b: memref<8x512x256xbf16>, %g: memref<8xi32>, %o: memref<8x64x512xbf16>) {
  // expected-error @+1 {{a_rows gathers rows of a token-packed 'a': it takes layout contiguous, got masked}}
  gg.grouped_matmul masked a(%a : memref<8x64x256xbf16>) a_rows(%r : memref<?xi32>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<8xi32>) out(%o : memref<8x64x512xbf16>)
  return
}

// -----

func.func @a_rows_i64(%a: memref<?x256xbf16>, %r: memref<?xi64>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'a_rows' must be [M] i32 (a row index of 'a' per row of the product), got 'memref<?xi64>'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) a_rows(%r : memref<?xi64>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>)
  return
}

// -----

// Scales of A follow the product's rows (the list's), not a's.
func.func @a_rows_scales_of_a_rows(%a: memref<100x256xf8E4M3FN>, %r: memref<64xi32>, %b: memref<8x512x256xf8E4M3FN>, %g: memref<9xi32>, %sa: memref<2x100xf32>, %sb: memref<8x2x4xf32>, %o: memref<64x512xbf16>) {
  // expected-error @+1 {{'a_scale' must have shape [2, 64] (ceil(K/128) x align4(M), for block scales of A), but has 'memref<2x100xf32>'}}
  gg.grouped_matmul contiguous a(%a : memref<100x256xf8E4M3FN>) a_rows(%r : memref<64xi32>) b(%b : memref<8x512x256xf8E4M3FN>) groups(%g : memref<9xi32>) a_scale(%sa : memref<2x100xf32>, <block 1x128, mn_major>) b_scale(%sb : memref<8x2x4xf32>, <block 128x128, mn_major>) out(%o : memref<64x512xbf16>)
  return
}

// -----

// The product has a row per entry of the list: out's rows follow a_rows.
func.func @a_rows_out_rows(%a: memref<?x256xbf16>, %r: memref<64xi32>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<32x512xbf16>) {
  // expected-error @+1 {{'out' must have shape [64, 512] (M x N)}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) a_rows(%r : memref<64xi32>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<32x512xbf16>)
  return
}

// -----

func.func @store_slice_of_no_whole_chunks(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'store_slice' must divide the tile's 128 output columns, be fewer, and make rows of whole 128-byte chunks (64 columns of 'bf16'), got 32}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>, store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>, store_slice = 32 : i64}
  return
}

// -----

func.func @store_slice_per_thread(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{'store_slice' stages the tile for the TMA store pool, but 'store_pool' is empty (per-thread stores)}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {store_pool = array<i64>, store_slice = 64 : i64}
  return
}

// -----

func.func @store_slice_of_column_pairs(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x256xbf16>) {
  // expected-error @+1 {{'store_slice' takes output columns that are the product's, not column_pairs}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x256xbf16>) {column_pairs, store_slice = 64 : i64} epilogue {
  ^bb0(%x: f32, %y: f32, %gi: index):
    gg.yield %x : f32
  }
  return
}

// -----

func.func @store_slice_split_n(%a: memref<4x64x256xbf16>, %b: memref<4x512x256xbf16>, %m: memref<4xi32>, %o: memref<4x64x512xbf16>) {
  // expected-error @+1 {{'store_slice' takes consumer warpgroups that split the tile by rows, not split_n = 2}}
  gg.grouped_matmul masked a(%a : memref<4x64x256xbf16>) b(%b : memref<4x512x256xbf16>) groups(%m : memref<4xi32>) out(%o : memref<4x64x512xbf16>) {config = #gg.config<block = [64, 256, 64], stages = 4, cluster = [1, 1], sms = 132, split_n = 2>, store_slice = 64 : i64}
  return
}

// -----

func.func @zero_ungrouped_masked(%a: memref<4x64x256xbf16>, %b: memref<4x512x256xbf16>, %m: memref<4xi32>, %o: memref<4x64x512xbf16>) {
  // expected-error @+1 {{zero_ungrouped clears the rows of a contiguous 'out' outside every group: it takes layout contiguous, got masked}}
  gg.grouped_matmul masked a(%a : memref<4x64x256xbf16>) b(%b : memref<4x512x256xbf16>) groups(%m : memref<4xi32>) out(%o : memref<4x64x512xbf16>) {zero_ungrouped}
  return
}

// -----

func.func @zero_ungrouped_epilogue(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{zero_ungrouped writes zeros to the rows outside every group, which an epilogue would not leave zero: it takes no epilogue region}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {zero_ungrouped} epilogue {
  ^bb0(%acc: f32, %group: index):
    %one = arith.constant 1.0 : f32
    %r = arith.addf %acc, %one : f32
    gg.yield %r : f32
  }
  return
}

// -----

func.func @zero_ungrouped_accumulate(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xf32>) {
  // expected-error @+1 {{zero_ungrouped cannot go with accumulate, which would leave the rows outside every group as 'out' held them}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xf32>) {accumulate, zero_ungrouped}
  return
}

// -----

func.func @zero_ungrouped_a_rows(%a: memref<?x256xbf16>, %r: memref<?xi32>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{zero_ungrouped cannot go with a_rows (not lowered)}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) a_rows(%r : memref<?xi32>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {zero_ungrouped}
  return
}

// -----

func.func @out_rows_masked(%a: memref<8x128x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<8xi32>, %o: memref<8x128x512xbf16>, %r: memref<128xi32>) {
  // expected-error @+1 {{out_rows scatters the rows of a token-packed product: it takes layout contiguous, got masked}}
  gg.grouped_matmul masked a(%a : memref<8x128x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<8xi32>) out(%o : memref<8x128x512xbf16>) out_rows(%r : memref<128xi32>)
  return
}

// -----

func.func @out_rows_i64(%a: memref<100x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>, %r: memref<100xi64>) {
  // expected-error @+1 {{'out_rows' must be [M] i32 (a row of 'out' per row of the product, M = 100), got 'memref<100xi64>'}}
  gg.grouped_matmul contiguous a(%a : memref<100x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) out_rows(%r : memref<100xi64>)
  return
}

// -----

func.func @out_rows_length(%a: memref<100x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>, %r: memref<99xi32>) {
  // expected-error @+1 {{'out_rows' must be [M] i32 (a row of 'out' per row of the product, M = 100), got 'memref<99xi32>'}}
  gg.grouped_matmul contiguous a(%a : memref<100x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) out_rows(%r : memref<99xi32>)
  return
}

// -----

func.func @out_rows_accumulate(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xf32>, %r: memref<?xi32>) {
  // expected-error @+1 {{out_rows cannot go with accumulate: two indices naming one row would add in no fixed order}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xf32>) out_rows(%r : memref<?xi32>) {accumulate}
  return
}

// -----

func.func @out_rows_zero_ungrouped(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>, %r: memref<?xi32>) {
  // expected-error @+1 {{out_rows cannot go with zero_ungrouped: the rows of 'out' are the list's, not the groups'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) out_rows(%r : memref<?xi32>) {zero_ungrouped}
  return
}

// -----

func.func @out_rows_pool(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>, %r: memref<?xi32>) {
  // expected-error @+1 {{'store_pool' stores boxes of consecutive rows; rows scattered through 'out_rows' take per-thread stores (an empty store_pool)}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) out_rows(%r : memref<?xi32>) {store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>}
  return
}

// -----

func.func @schedule_unknown_odd_block_a(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  // expected-error @+1 {{expected own or multicast, got 'broadcast'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {schedule = #gg.schedule<order = m_fastest, odd_block_a = broadcast>}
  return
}

// -----

// An out quantised to FP8 in the epilogue (out_scale).
func.func @out_scale_masked(%a: memref<8x64x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<8xi32>, %o: memref<8x64x512xf8E4M3FN>, %s: memref<4x64xf32>) {
  // expected-error @+1 {{out_scale quantises a contiguous product's rows: it takes layout contiguous, got masked}}
  gg.grouped_matmul masked a(%a : memref<8x64x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<8xi32>) out(%o : memref<8x64x512xf8E4M3FN>) out_scale(%s : memref<4x64xf32>)
  return
}

// -----

func.func @out_scale_bf16_out(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>, %s: memref<4x?xf32>) {
  // expected-error @+1 {{'out' must have element type f8E4M3FN (quantised by out_scale), but has 'bf16'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) out_scale(%s : memref<4x?xf32>)
  return
}

// -----

func.func @f8_out_without_out_scale(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xf8E4M3FN>) {
  // expected-error @+1 {{'out' must have element type bf16, f16 or f32, but has 'f8E4M3FN'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xf8E4M3FN>)
  return
}

// -----

func.func @out_scale_shape(%a: memref<99x256xbf16>, %b: memref<8x520x256xbf16>, %g: memref<9xi32>, %o: memref<99x520xf8E4M3FN>, %s: memref<5x99xf32>) {
  // expected-error @+1 {{'out_scale' must have shape [5, 100] (ceil(N/128) x align4(M), the block_mn scales), but has 'memref<5x99xf32>'}}
  gg.grouped_matmul contiguous a(%a : memref<99x256xbf16>) b(%b : memref<8x520x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<99x520xf8E4M3FN>) out_scale(%s : memref<5x99xf32>)
  return
}

// -----

func.func @out_scale_accumulate(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xf8E4M3FN>, %s: memref<4x?xf32>) {
  // expected-error @+1 {{out_scale cannot go with accumulate: an FP8 out is written once, with its scales}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xf8E4M3FN>) out_scale(%s : memref<4x?xf32>) {accumulate}
  return
}

// -----

func.func @out_scale_out_rows(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xf8E4M3FN>, %r: memref<?xi32>, %s: memref<4x?xf32>) {
  // expected-error @+1 {{out_scale cannot go with out_rows yet: the scales are stored by the product's rows}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xf8E4M3FN>) out_rows(%r : memref<?xi32>) out_scale(%s : memref<4x?xf32>)
  return
}

// -----

func.func @out_scale_store_pool(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xf8E4M3FN>, %s: memref<4x?xf32>) {
  // expected-error @+1 {{'store_pool' stores boxes of a staged tile; an FP8 out quantised by out_scale takes per-thread stores (an empty store_pool)}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xf8E4M3FN>) out_scale(%s : memref<4x?xf32>) {store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>}
  return
}

// -----

func.func @out_scale_yields_f8(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xf8E4M3FN>, %s: memref<4x?xf32>) {
  // expected-error @+1 {{epilogue must yield f32 with out_scale (the values quantised), but yields 'f8E4M3FN'}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xf8E4M3FN>) out_scale(%s : memref<4x?xf32>) epilogue {
  ^bb0(%x: f32, %group: index):
    %y = arith.truncf %x : f32 to f8E4M3FN
    gg.yield %y : f8E4M3FN
  }
  return
}
