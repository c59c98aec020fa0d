// RUN: ggc-opt %s | FileCheck %s
// RUN: ggc-opt %s | ggc-opt | FileCheck %s
// RUN: ggc-opt %s --mlir-print-op-generic | ggc-opt | FileCheck %s

// Round-trip tests for gg.grouped_matmul: every group layout, operand layout,
// element type, scale kind, epilogue operand kind, tf32, expected_m and
// #gg.config. Default operand layouts (mk, nk, mn) and the default k_major of
// #gg.scale are not printed.

// CHECK-LABEL: func.func @contiguous_bf16_i32_dynamic_m(
// CHECK-SAME: %[[A:[^:]+]]: memref<?x256xbf16>, %[[B:[^:]+]]: memref<8x512x256xbf16>, %[[G:[^:]+]]: memref<9xi32>, %[[O:[^:]+]]: memref<?x512xbf16>) {
// CHECK-NEXT: gg.grouped_matmul contiguous a(%[[A]] : memref<?x256xbf16>) b(%[[B]] : memref<8x512x256xbf16>)
// CHECK-SAME: groups(%[[G]] : memref<9xi32>)
// CHECK-SAME: out(%[[O]] : memref<?x512xbf16>){{$}}
// CHECK-NEXT: return
func.func @contiguous_bf16_i32_dynamic_m(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>)
  return
}

// CHECK-LABEL: func.func @contiguous_f16_i64_static_m(
// CHECK-SAME: %[[A:[^:]+]]: memref<1024x256xf16>, %[[B:[^:]+]]: memref<8x512x256xf16>, %[[G:[^:]+]]: memref<9xi64>, %[[O:[^:]+]]: memref<1024x512xf16>) {
// CHECK-NEXT: gg.grouped_matmul contiguous a(%[[A]] : memref<1024x256xf16>) b(%[[B]] : memref<8x512x256xf16>)
// CHECK-SAME: groups(%[[G]] : memref<9xi64>)
// CHECK-SAME: out(%[[O]] : memref<1024x512xf16>){{$}}
// CHECK-NEXT: return
func.func @contiguous_f16_i64_static_m(%a: memref<1024x256xf16>, %b: memref<8x512x256xf16>, %g: memref<9xi64>, %o: memref<1024x512xf16>) {
  gg.grouped_matmul contiguous a(%a : memref<1024x256xf16>, mk) b(%b : memref<8x512x256xf16>, nk) groups(%g : memref<9xi64>) out(%o : memref<1024x512xf16>, mn)
  return
}

// CHECK-LABEL: func.func @contiguous_b_kn_f32_out(
// CHECK-SAME: %[[A:[^:]+]]: memref<?x256xbf16>, %[[B:[^:]+]]: memref<8x256x512xbf16>, %[[G:[^:]+]]: memref<9xi64>, %[[O:[^:]+]]: memref<?x512xf32>) {
// CHECK-NEXT: gg.grouped_matmul contiguous a(%[[A]] : memref<?x256xbf16>) b(%[[B]] : memref<8x256x512xbf16>, kn)
// CHECK-SAME: groups(%[[G]] : memref<9xi64>)
// CHECK-SAME: out(%[[O]] : memref<?x512xf32>){{$}}
// CHECK-NEXT: return
func.func @contiguous_b_kn_f32_out(%a: memref<?x256xbf16>, %b: memref<8x256x512xbf16>, %g: memref<9xi64>, %o: memref<?x512xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x256x512xbf16>, kn) groups(%g : memref<9xi64>) out(%o : memref<?x512xf32>)
  return
}

// CHECK-LABEL: func.func @contiguous_f32_tf32(
// CHECK-SAME: %[[A:[^:]+]]: memref<?x256xf32>, %[[B:[^:]+]]: memref<8x512x256xf32>, %[[G:[^:]+]]: memref<9xi32>, %[[O:[^:]+]]: memref<?x512xf32>) {
// CHECK-NEXT: gg.grouped_matmul contiguous a(%[[A]] : memref<?x256xf32>) b(%[[B]] : memref<8x512x256xf32>)
// CHECK-SAME: groups(%[[G]] : memref<9xi32>)
// CHECK-SAME: out(%[[O]] : memref<?x512xf32>)
// CHECK-SAME: {tf32}{{$}}
// CHECK-NEXT: return
func.func @contiguous_f32_tf32(%a: memref<?x256xf32>, %b: memref<8x512x256xf32>, %g: memref<9xi32>, %o: memref<?x512xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xf32>) b(%b : memref<8x512x256xf32>) groups(%g : memref<9xi32>) out(%o : memref<?x512xf32>) {tf32}
  return
}

// CHECK-LABEL: func.func @contiguous_f32_no_tf32_kn(
// CHECK-SAME: %[[A:[^:]+]]: memref<?x256xf32>, %[[B:[^:]+]]: memref<8x256x512xf32>, %[[G:[^:]+]]: memref<9xi32>, %[[O:[^:]+]]: memref<?x512xbf16>) {
// CHECK-NEXT: gg.grouped_matmul contiguous a(%[[A]] : memref<?x256xf32>) b(%[[B]] : memref<8x256x512xf32>, kn)
// CHECK-SAME: groups(%[[G]] : memref<9xi32>)
// CHECK-SAME: out(%[[O]] : memref<?x512xbf16>){{$}}
// CHECK-NEXT: return
func.func @contiguous_f32_no_tf32_kn(%a: memref<?x256xf32>, %b: memref<8x256x512xf32>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xf32>) b(%b : memref<8x256x512xf32>, kn) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>)
  return
}

// CHECK-LABEL: func.func @masked_static(
// CHECK-SAME: %[[A:[^:]+]]: memref<8x128x256xbf16>, %[[B:[^:]+]]: memref<8x512x256xbf16>, %[[G:[^:]+]]: memref<8xi32>, %[[O:[^:]+]]: memref<8x128x512xbf16>) {
// CHECK-NEXT: gg.grouped_matmul masked a(%[[A]] : memref<8x128x256xbf16>) b(%[[B]] : memref<8x512x256xbf16>)
// CHECK-SAME: groups(%[[G]] : memref<8xi32>)
// CHECK-SAME: out(%[[O]] : memref<8x128x512xbf16>)
// CHECK-SAME: {expected_m = 32 : i64}{{$}}
// CHECK-NEXT: return
func.func @masked_static(%a: memref<8x128x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<8xi32>, %o: memref<8x128x512xbf16>) {
  gg.grouped_matmul masked a(%a : memref<8x128x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<8xi32>) out(%o : memref<8x128x512xbf16>) {expected_m = 32}
  return
}

// CHECK-LABEL: func.func @masked_dynamic_m_max_kn(
// CHECK-SAME: %[[A:[^:]+]]: memref<8x?x256xf16>, %[[B:[^:]+]]: memref<8x256x512xf16>, %[[G:[^:]+]]: memref<8xi32>, %[[O:[^:]+]]: memref<8x?x512xf32>) {
// CHECK-NEXT: gg.grouped_matmul masked a(%[[A]] : memref<8x?x256xf16>) b(%[[B]] : memref<8x256x512xf16>, kn)
// CHECK-SAME: groups(%[[G]] : memref<8xi32>)
// CHECK-SAME: out(%[[O]] : memref<8x?x512xf32>)
// CHECK-SAME: {expected_m = 64 : i64}{{$}}
// CHECK-NEXT: return
func.func @masked_dynamic_m_max_kn(%a: memref<8x?x256xf16>, %b: memref<8x256x512xf16>, %g: memref<8xi32>, %o: memref<8x?x512xf32>) {
  gg.grouped_matmul masked a(%a : memref<8x?x256xf16>) b(%b : memref<8x256x512xf16>, kn) groups(%g : memref<8xi32>) out(%o : memref<8x?x512xf32>) {expected_m = 64 : i64}
  return
}

// CHECK-LABEL: func.func @padded_contiguous(
// CHECK-SAME: %[[A:[^:]+]]: memref<?x256xbf16>, %[[B:[^:]+]]: memref<8x512x256xbf16>, %[[G:[^:]+]]: memref<?xi32>, %[[O:[^:]+]]: memref<?x512xbf16>) {
// CHECK-NEXT: gg.grouped_matmul padded_contiguous a(%[[A]] : memref<?x256xbf16>) b(%[[B]] : memref<8x512x256xbf16>)
// CHECK-SAME: groups(%[[G]] : memref<?xi32>)
// CHECK-SAME: out(%[[O]] : memref<?x512xbf16>)
// CHECK-SAME: {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}{{$}}
// CHECK-NEXT: return
func.func @padded_contiguous(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<?xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul padded_contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<?xi32>) out(%o : memref<?x512xbf16>) {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// CHECK-LABEL: func.func @padded_contiguous_static_kn(
// CHECK-SAME: %[[A:[^:]+]]: memref<1024x256xf16>, %[[B:[^:]+]]: memref<8x256x512xf16>, %[[G:[^:]+]]: memref<1024xi32>, %[[O:[^:]+]]: memref<1024x512xf16>) {
// CHECK-NEXT: gg.grouped_matmul padded_contiguous a(%[[A]] : memref<1024x256xf16>) b(%[[B]] : memref<8x256x512xf16>, kn)
// CHECK-SAME: groups(%[[G]] : memref<1024xi32>)
// CHECK-SAME: out(%[[O]] : memref<1024x512xf16>){{$}}
// CHECK-NEXT: return
func.func @padded_contiguous_static_kn(%a: memref<1024x256xf16>, %b: memref<8x256x512xf16>, %g: memref<1024xi32>, %o: memref<1024x512xf16>) {
  gg.grouped_matmul padded_contiguous a(%a : memref<1024x256xf16>) b(%b : memref<8x256x512xf16>, kn) groups(%g : memref<1024xi32>) out(%o : memref<1024x512xf16>)
  return
}

// CHECK-LABEL: func.func @k_grouped_mk_nk_mn(
// CHECK-SAME: %[[A:[^:]+]]: memref<256x?xbf16>, %[[B:[^:]+]]: memref<128x?xbf16>, %[[G:[^:]+]]: memref<5xi32>, %[[O:[^:]+]]: memref<4x256x128xf32>) {
// CHECK-NEXT: gg.grouped_matmul k_grouped a(%[[A]] : memref<256x?xbf16>) b(%[[B]] : memref<128x?xbf16>)
// CHECK-SAME: groups(%[[G]] : memref<5xi32>)
// CHECK-SAME: out(%[[O]] : memref<4x256x128xf32>){{$}}
// CHECK-NEXT: return
func.func @k_grouped_mk_nk_mn(%a: memref<256x?xbf16>, %b: memref<128x?xbf16>, %g: memref<5xi32>, %o: memref<4x256x128xf32>) {
  gg.grouped_matmul k_grouped a(%a : memref<256x?xbf16>) b(%b : memref<128x?xbf16>) groups(%g : memref<5xi32>) out(%o : memref<4x256x128xf32>)
  return
}

// CHECK-LABEL: func.func @k_grouped_km_kn_nm(
// CHECK-SAME: %[[A:[^:]+]]: memref<?x256xbf16>, %[[B:[^:]+]]: memref<?x128xbf16>, %[[G:[^:]+]]: memref<5xi64>, %[[O:[^:]+]]: memref<4x128x256xf32>) {
// CHECK-NEXT: gg.grouped_matmul k_grouped a(%[[A]] : memref<?x256xbf16>, km) b(%[[B]] : memref<?x128xbf16>, kn)
// CHECK-SAME: groups(%[[G]] : memref<5xi64>)
// CHECK-SAME: out(%[[O]] : memref<4x128x256xf32>, nm){{$}}
// CHECK-NEXT: return
func.func @k_grouped_km_kn_nm(%a: memref<?x256xbf16>, %b: memref<?x128xbf16>, %g: memref<5xi64>, %o: memref<4x128x256xf32>) {
  gg.grouped_matmul k_grouped a(%a : memref<?x256xbf16>, km) b(%b : memref<?x128xbf16>, kn) groups(%g : memref<5xi64>) out(%o : memref<4x128x256xf32>, nm)
  return
}

// CHECK-LABEL: func.func @k_grouped_km_nk_mn_static_k(
// CHECK-SAME: %[[A:[^:]+]]: memref<4096x256xf16>, %[[B:[^:]+]]: memref<128x4096xf16>, %[[G:[^:]+]]: memref<5xi32>, %[[O:[^:]+]]: memref<4x256x128xf16>) {
// CHECK-NEXT: gg.grouped_matmul k_grouped a(%[[A]] : memref<4096x256xf16>, km) b(%[[B]] : memref<128x4096xf16>)
// CHECK-SAME: groups(%[[G]] : memref<5xi32>)
// CHECK-SAME: out(%[[O]] : memref<4x256x128xf16>)
// CHECK-SAME: {config = #gg.config<block = [64, 256, 32], stages = 8, cluster = [2, 1], sms = 78>}{{$}}
// CHECK-NEXT: return
func.func @k_grouped_km_nk_mn_static_k(%a: memref<4096x256xf16>, %b: memref<128x4096xf16>, %g: memref<5xi32>, %o: memref<4x256x128xf16>) {
  gg.grouped_matmul k_grouped a(%a : memref<4096x256xf16>, km) b(%b : memref<128x4096xf16>) groups(%g : memref<5xi32>) out(%o : memref<4x256x128xf16>) {config = #gg.config<block = [64, 256, 32], stages = 8, cluster = [2, 1], sms = 78>}
  return
}

// CHECK-LABEL: func.func @k_grouped_mk_kn_nm_tf32(
// CHECK-SAME: %[[A:[^:]+]]: memref<256x?xf32>, %[[B:[^:]+]]: memref<?x128xf32>, %[[G:[^:]+]]: memref<5xi32>, %[[O:[^:]+]]: memref<4x128x256xf32>) {
// CHECK-NEXT: gg.grouped_matmul k_grouped a(%[[A]] : memref<256x?xf32>) b(%[[B]] : memref<?x128xf32>, kn)
// CHECK-SAME: groups(%[[G]] : memref<5xi32>)
// CHECK-SAME: out(%[[O]] : memref<4x128x256xf32>, nm)
// CHECK-SAME: {tf32}{{$}}
// CHECK-NEXT: return
func.func @k_grouped_mk_kn_nm_tf32(%a: memref<256x?xf32>, %b: memref<?x128xf32>, %g: memref<5xi32>, %o: memref<4x128x256xf32>) {
  gg.grouped_matmul k_grouped a(%a : memref<256x?xf32>) b(%b : memref<?x128xf32>, kn) groups(%g : memref<5xi32>) out(%o : memref<4x128x256xf32>, nm) {tf32}
  return
}

// CHECK-LABEL: func.func @f8_e4m3_tensor_scales(
// CHECK-SAME: %[[A:[^:]+]]: memref<?x512xf8E4M3FN>, %[[B:[^:]+]]: memref<4x256x512xf8E4M3FN>, %[[G:[^:]+]]: memref<5xi32>, %[[O:[^:]+]]: memref<?x256xbf16>, %[[AS:[^:]+]]: memref<4xf32>, %[[BS:[^:]+]]: memref<4xf32>) {
// CHECK-NEXT: gg.grouped_matmul contiguous a(%[[A]] : memref<?x512xf8E4M3FN>) b(%[[B]] : memref<4x256x512xf8E4M3FN>)
// CHECK-SAME: groups(%[[G]] : memref<5xi32>)
// CHECK-SAME: a_scale(%[[AS]] : memref<4xf32>, <tensor>)
// CHECK-SAME: b_scale(%[[BS]] : memref<4xf32>, <tensor>)
// CHECK-SAME: out(%[[O]] : memref<?x256xbf16>){{$}}
// CHECK-NEXT: return
func.func @f8_e4m3_tensor_scales(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %as: memref<4xf32>, %bs: memref<4xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<4xf32>, <tensor>) b_scale(%bs : memref<4xf32>, <tensor>) out(%o : memref<?x256xbf16>)
  return
}

// CHECK-LABEL: func.func @f8_e5m2_channel_scales(
// CHECK-SAME: %[[A:[^:]+]]: memref<?x512xf8E5M2>, %[[B:[^:]+]]: memref<4x256x512xf8E5M2>, %[[G:[^:]+]]: memref<5xi32>, %[[O:[^:]+]]: memref<?x256xf16>, %[[AS:[^:]+]]: memref<?xf32>, %[[BS:[^:]+]]: memref<4x256xf32>) {
// CHECK-NEXT: gg.grouped_matmul contiguous a(%[[A]] : memref<?x512xf8E5M2>) b(%[[B]] : memref<4x256x512xf8E5M2>)
// CHECK-SAME: groups(%[[G]] : memref<5xi32>)
// CHECK-SAME: a_scale(%[[AS]] : memref<?xf32>, <channel>)
// CHECK-SAME: b_scale(%[[BS]] : memref<4x256xf32>, <channel>)
// CHECK-SAME: out(%[[O]] : memref<?x256xf16>){{$}}
// CHECK-NEXT: return
func.func @f8_e5m2_channel_scales(%a: memref<?x512xf8E5M2>, %b: memref<4x256x512xf8E5M2>, %g: memref<5xi32>, %o: memref<?x256xf16>, %as: memref<?xf32>, %bs: memref<4x256xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E5M2>) b(%b : memref<4x256x512xf8E5M2>) groups(%g : memref<5xi32>) a_scale(%as : memref<?xf32>, <channel>) b_scale(%bs : memref<4x256xf32>, <channel>) out(%o : memref<?x256xf16>)
  return
}

// CHECK-LABEL: func.func @f8_unscaled_f32_out(
// CHECK-SAME: %[[A:[^:]+]]: memref<?x512xf8E5M2>, %[[B:[^:]+]]: memref<4x256x512xf8E5M2>, %[[G:[^:]+]]: memref<5xi32>, %[[O:[^:]+]]: memref<?x256xf32>) {
// CHECK-NEXT: gg.grouped_matmul contiguous a(%[[A]] : memref<?x512xf8E5M2>) b(%[[B]] : memref<4x256x512xf8E5M2>)
// CHECK-SAME: groups(%[[G]] : memref<5xi32>)
// CHECK-SAME: out(%[[O]] : memref<?x256xf32>){{$}}
// CHECK-NEXT: return
func.func @f8_unscaled_f32_out(%a: memref<?x512xf8E5M2>, %b: memref<4x256x512xf8E5M2>, %g: memref<5xi32>, %o: memref<?x256xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E5M2>) b(%b : memref<4x256x512xf8E5M2>) groups(%g : memref<5xi32>) out(%o : memref<?x256xf32>)
  return
}

// CHECK-LABEL: func.func @f8_mixed_block_k_major(
// CHECK-SAME: %[[A:[^:]+]]: memref<?x512xf8E4M3FN>, %[[B:[^:]+]]: memref<4x256x512xf8E5M2>, %[[G:[^:]+]]: memref<5xi32>, %[[O:[^:]+]]: memref<?x256xbf16>, %[[AS:[^:]+]]: memref<?x4xf32>, %[[BS:[^:]+]]: memref<4x2x4xf32>) {
// CHECK-NEXT: gg.grouped_matmul contiguous a(%[[A]] : memref<?x512xf8E4M3FN>) b(%[[B]] : memref<4x256x512xf8E5M2>)
// CHECK-SAME: groups(%[[G]] : memref<5xi32>)
// CHECK-SAME: a_scale(%[[AS]] : memref<?x4xf32>, <block 1x128>)
// CHECK-SAME: b_scale(%[[BS]] : memref<4x2x4xf32>, <block 128x128>)
// CHECK-SAME: out(%[[O]] : memref<?x256xbf16>){{$}}
// CHECK-NEXT: return
func.func @f8_mixed_block_k_major(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E5M2>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %as: memref<?x4xf32>, %bs: memref<4x2x4xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E5M2>) groups(%g : memref<5xi32>) a_scale(%as : memref<?x4xf32>, <block 1x128, k_major>) b_scale(%bs : memref<4x2x4xf32>, <block 128x128>) out(%o : memref<?x256xbf16>)
  return
}

// align4(250) = 252
// CHECK-LABEL: func.func @f8_block_mn_major(
// CHECK-SAME: %[[A:[^:]+]]: memref<250x512xf8E4M3FN>, %[[B:[^:]+]]: memref<4x256x512xf8E4M3FN>, %[[G:[^:]+]]: memref<5xi32>, %[[O:[^:]+]]: memref<250x256xbf16>, %[[AS:[^:]+]]: memref<4x252xf32>, %[[BS:[^:]+]]: memref<4x4x2xf32>) {
// CHECK-NEXT: gg.grouped_matmul contiguous a(%[[A]] : memref<250x512xf8E4M3FN>) b(%[[B]] : memref<4x256x512xf8E4M3FN>)
// CHECK-SAME: groups(%[[G]] : memref<5xi32>)
// CHECK-SAME: a_scale(%[[AS]] : memref<4x252xf32>, <block 1x128, mn_major>)
// CHECK-SAME: b_scale(%[[BS]] : memref<4x4x2xf32>, <block 128x128, mn_major>)
// CHECK-SAME: out(%[[O]] : memref<250x256xbf16>){{$}}
// CHECK-NEXT: return
func.func @f8_block_mn_major(%a: memref<250x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<250x256xbf16>, %as: memref<4x252xf32>, %bs: memref<4x4x2xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<250x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<4x252xf32>, <block 1x128, mn_major>) b_scale(%bs : memref<4x4x2xf32>, <block 128x128, mn_major>) out(%o : memref<250x256xbf16>)
  return
}

// CHECK-LABEL: func.func @f8_block_b_1x128(
// CHECK-SAME: %[[A:[^:]+]]: memref<?x512xf8E4M3FN>, %[[B:[^:]+]]: memref<4x256x512xf8E4M3FN>, %[[G:[^:]+]]: memref<5xi32>, %[[O:[^:]+]]: memref<?x256xbf16>, %[[AS:[^:]+]]: memref<?x4xf32>, %[[BS:[^:]+]]: memref<4x256x4xf32>) {
// CHECK-NEXT: gg.grouped_matmul contiguous a(%[[A]] : memref<?x512xf8E4M3FN>) b(%[[B]] : memref<4x256x512xf8E4M3FN>)
// CHECK-SAME: groups(%[[G]] : memref<5xi32>)
// CHECK-SAME: a_scale(%[[AS]] : memref<?x4xf32>, <block 1x128>)
// CHECK-SAME: b_scale(%[[BS]] : memref<4x256x4xf32>, <block 1x128>)
// CHECK-SAME: out(%[[O]] : memref<?x256xbf16>){{$}}
// CHECK-NEXT: return
func.func @f8_block_b_1x128(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x256xbf16>, %as: memref<?x4xf32>, %bs: memref<4x256x4xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<?x4xf32>, <block 1x128>) b_scale(%bs : memref<4x256x4xf32>, <block 1x128>) out(%o : memref<?x256xbf16>)
  return
}

// ceil(300 / 128) = 3 K blocks, ceil(200 / 128) = 2 N blocks.
// CHECK-LABEL: func.func @f8_block_b_1x128_mn_major_ragged(
// CHECK-SAME: %[[A:[^:]+]]: memref<?x300xf8E4M3FN>, %[[B:[^:]+]]: memref<4x200x300xf8E4M3FN>, %[[G:[^:]+]]: memref<5xi32>, %[[O:[^:]+]]: memref<?x200xbf16>, %[[AS:[^:]+]]: memref<?x3xf32>, %[[BS:[^:]+]]: memref<4x3x200xf32>) {
// CHECK-NEXT: gg.grouped_matmul contiguous a(%[[A]] : memref<?x300xf8E4M3FN>) b(%[[B]] : memref<4x200x300xf8E4M3FN>)
// CHECK-SAME: groups(%[[G]] : memref<5xi32>)
// CHECK-SAME: a_scale(%[[AS]] : memref<?x3xf32>, <block 1x128>)
// CHECK-SAME: b_scale(%[[BS]] : memref<4x3x200xf32>, <block 1x128, mn_major>)
// CHECK-SAME: out(%[[O]] : memref<?x200xbf16>){{$}}
// CHECK-NEXT: return
func.func @f8_block_b_1x128_mn_major_ragged(%a: memref<?x300xf8E4M3FN>, %b: memref<4x200x300xf8E4M3FN>, %g: memref<5xi32>, %o: memref<?x200xbf16>, %as: memref<?x3xf32>, %bs: memref<4x3x200xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x300xf8E4M3FN>) b(%b : memref<4x200x300xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<?x3xf32>, <block 1x128>) b_scale(%bs : memref<4x3x200xf32>, <block 1x128, mn_major>) out(%o : memref<?x200xbf16>)
  return
}

// CHECK-LABEL: func.func @f8_masked_block_k_major(
// CHECK-SAME: %[[A:[^:]+]]: memref<4x128x512xf8E4M3FN>, %[[B:[^:]+]]: memref<4x256x512xf8E4M3FN>, %[[G:[^:]+]]: memref<4xi32>, %[[O:[^:]+]]: memref<4x128x256xbf16>, %[[AS:[^:]+]]: memref<4x128x4xf32>, %[[BS:[^:]+]]: memref<4x2x4xf32>) {
// CHECK-NEXT: gg.grouped_matmul masked a(%[[A]] : memref<4x128x512xf8E4M3FN>) b(%[[B]] : memref<4x256x512xf8E4M3FN>)
// CHECK-SAME: groups(%[[G]] : memref<4xi32>)
// CHECK-SAME: a_scale(%[[AS]] : memref<4x128x4xf32>, <block 1x128>)
// CHECK-SAME: b_scale(%[[BS]] : memref<4x2x4xf32>, <block 128x128>)
// CHECK-SAME: out(%[[O]] : memref<4x128x256xbf16>)
// CHECK-SAME: {expected_m = 16 : i64}{{$}}
// CHECK-NEXT: return
func.func @f8_masked_block_k_major(%a: memref<4x128x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<4xi32>, %o: memref<4x128x256xbf16>, %as: memref<4x128x4xf32>, %bs: memref<4x2x4xf32>) {
  gg.grouped_matmul masked a(%a : memref<4x128x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<4xi32>) a_scale(%as : memref<4x128x4xf32>, <block 1x128>) b_scale(%bs : memref<4x2x4xf32>, <block 128x128>) out(%o : memref<4x128x256xbf16>) {expected_m = 16 : i64}
  return
}

// align4(30) = 32
// CHECK-LABEL: func.func @f8_masked_block_mn_major(
// CHECK-SAME: %[[A:[^:]+]]: memref<4x30x512xf8E4M3FN>, %[[B:[^:]+]]: memref<4x256x512xf8E4M3FN>, %[[G:[^:]+]]: memref<4xi32>, %[[O:[^:]+]]: memref<4x30x256xbf16>, %[[AS:[^:]+]]: memref<4x4x32xf32>, %[[BS:[^:]+]]: memref<4x4x2xf32>) {
// CHECK-NEXT: gg.grouped_matmul masked a(%[[A]] : memref<4x30x512xf8E4M3FN>) b(%[[B]] : memref<4x256x512xf8E4M3FN>)
// CHECK-SAME: groups(%[[G]] : memref<4xi32>)
// CHECK-SAME: a_scale(%[[AS]] : memref<4x4x32xf32>, <block 1x128, mn_major>)
// CHECK-SAME: b_scale(%[[BS]] : memref<4x4x2xf32>, <block 128x128, mn_major>)
// CHECK-SAME: out(%[[O]] : memref<4x30x256xbf16>){{$}}
// CHECK-NEXT: return
func.func @f8_masked_block_mn_major(%a: memref<4x30x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<4xi32>, %o: memref<4x30x256xbf16>, %as: memref<4x4x32xf32>, %bs: memref<4x4x2xf32>) {
  gg.grouped_matmul masked a(%a : memref<4x30x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<4xi32>) a_scale(%as : memref<4x4x32xf32>, <block 1x128, mn_major>) b_scale(%bs : memref<4x4x2xf32>, <block 128x128, mn_major>) out(%o : memref<4x30x256xbf16>)
  return
}

// CHECK-LABEL: func.func @f8_masked_channel(
// CHECK-SAME: %[[A:[^:]+]]: memref<4x128x512xf8E4M3FN>, %[[B:[^:]+]]: memref<4x256x512xf8E4M3FN>, %[[G:[^:]+]]: memref<4xi32>, %[[O:[^:]+]]: memref<4x128x256xf16>, %[[AS:[^:]+]]: memref<4x128xf32>, %[[BS:[^:]+]]: memref<4x256xf32>) {
// CHECK-NEXT: gg.grouped_matmul masked a(%[[A]] : memref<4x128x512xf8E4M3FN>) b(%[[B]] : memref<4x256x512xf8E4M3FN>)
// CHECK-SAME: groups(%[[G]] : memref<4xi32>)
// CHECK-SAME: a_scale(%[[AS]] : memref<4x128xf32>, <channel>)
// CHECK-SAME: b_scale(%[[BS]] : memref<4x256xf32>, <channel>)
// CHECK-SAME: out(%[[O]] : memref<4x128x256xf16>){{$}}
// CHECK-NEXT: return
func.func @f8_masked_channel(%a: memref<4x128x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<4xi32>, %o: memref<4x128x256xf16>, %as: memref<4x128xf32>, %bs: memref<4x256xf32>) {
  gg.grouped_matmul masked a(%a : memref<4x128x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<4xi32>) a_scale(%as : memref<4x128xf32>, <channel>) b_scale(%bs : memref<4x256xf32>, <channel>) out(%o : memref<4x128x256xf16>)
  return
}

// CHECK-LABEL: func.func @f8_padded_block(
// CHECK-SAME: %[[A:[^:]+]]: memref<?x512xf8E4M3FN>, %[[B:[^:]+]]: memref<4x256x512xf8E4M3FN>, %[[G:[^:]+]]: memref<?xi32>, %[[O:[^:]+]]: memref<?x256xbf16>, %[[AS:[^:]+]]: memref<4x?xf32>, %[[BS:[^:]+]]: memref<4x2x4xf32>) {
// CHECK-NEXT: gg.grouped_matmul padded_contiguous a(%[[A]] : memref<?x512xf8E4M3FN>) b(%[[B]] : memref<4x256x512xf8E4M3FN>)
// CHECK-SAME: groups(%[[G]] : memref<?xi32>)
// CHECK-SAME: a_scale(%[[AS]] : memref<4x?xf32>, <block 1x128, mn_major>)
// CHECK-SAME: b_scale(%[[BS]] : memref<4x2x4xf32>, <block 128x128>)
// CHECK-SAME: out(%[[O]] : memref<?x256xbf16>){{$}}
// CHECK-NEXT: return
func.func @f8_padded_block(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<?xi32>, %o: memref<?x256xbf16>, %as: memref<4x?xf32>, %bs: memref<4x2x4xf32>) {
  gg.grouped_matmul padded_contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<?xi32>) a_scale(%as : memref<4x?xf32>, <block 1x128, mn_major>) b_scale(%bs : memref<4x2x4xf32>, <block 128x128>) out(%o : memref<?x256xbf16>)
  return
}

// CHECK-LABEL: func.func @f8_k_grouped_block(
// CHECK-SAME: %[[A:[^:]+]]: memref<256x?xf8E4M3FN>, %[[B:[^:]+]]: memref<128x?xf8E4M3FN>, %[[G:[^:]+]]: memref<5xi32>, %[[O:[^:]+]]: memref<4x256x128xf32>, %[[AS:[^:]+]]: memref<?x256xf32>, %[[BS:[^:]+]]: memref<?x128xf32>) {
// CHECK-NEXT: gg.grouped_matmul k_grouped a(%[[A]] : memref<256x?xf8E4M3FN>) b(%[[B]] : memref<128x?xf8E4M3FN>)
// CHECK-SAME: groups(%[[G]] : memref<5xi32>)
// CHECK-SAME: a_scale(%[[AS]] : memref<?x256xf32>, <block 1x128, mn_major>)
// CHECK-SAME: b_scale(%[[BS]] : memref<?x128xf32>, <block 1x128, mn_major>)
// CHECK-SAME: out(%[[O]] : memref<4x256x128xf32>){{$}}
// CHECK-NEXT: return
func.func @f8_k_grouped_block(%a: memref<256x?xf8E4M3FN>, %b: memref<128x?xf8E4M3FN>, %g: memref<5xi32>, %o: memref<4x256x128xf32>, %as: memref<?x256xf32>, %bs: memref<?x128xf32>) {
  gg.grouped_matmul k_grouped a(%a : memref<256x?xf8E4M3FN>) b(%b : memref<128x?xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<?x256xf32>, <block 1x128, mn_major>) b_scale(%bs : memref<?x128xf32>, <block 1x128, mn_major>) out(%o : memref<4x256x128xf32>)
  return
}

// CHECK-LABEL: func.func @f8_k_grouped_block_k_major(
// CHECK-SAME: %[[A:[^:]+]]: memref<256x?xf8E5M2>, %[[B:[^:]+]]: memref<128x?xf8E4M3FN>, %[[G:[^:]+]]: memref<5xi64>, %[[O:[^:]+]]: memref<4x256x128xbf16>, %[[AS:[^:]+]]: memref<256x?xf32>, %[[BS:[^:]+]]: memref<1x?xf32>) {
// CHECK-NEXT: gg.grouped_matmul k_grouped a(%[[A]] : memref<256x?xf8E5M2>) b(%[[B]] : memref<128x?xf8E4M3FN>)
// CHECK-SAME: groups(%[[G]] : memref<5xi64>)
// CHECK-SAME: a_scale(%[[AS]] : memref<256x?xf32>, <block 1x128>)
// CHECK-SAME: b_scale(%[[BS]] : memref<1x?xf32>, <block 128x128>)
// CHECK-SAME: out(%[[O]] : memref<4x256x128xbf16>){{$}}
// CHECK-NEXT: return
func.func @f8_k_grouped_block_k_major(%a: memref<256x?xf8E5M2>, %b: memref<128x?xf8E4M3FN>, %g: memref<5xi64>, %o: memref<4x256x128xbf16>, %as: memref<256x?xf32>, %bs: memref<1x?xf32>) {
  gg.grouped_matmul k_grouped a(%a : memref<256x?xf8E5M2>) b(%b : memref<128x?xf8E4M3FN>) groups(%g : memref<5xi64>) a_scale(%as : memref<256x?xf32>, <block 1x128>) b_scale(%bs : memref<1x?xf32>, <block 128x128>) out(%o : memref<4x256x128xbf16>)
  return
}

// CHECK-LABEL: func.func @f8_k_grouped_tensor_channel(
// CHECK-SAME: %[[A:[^:]+]]: memref<256x?xf8E4M3FN>, %[[B:[^:]+]]: memref<128x?xf8E4M3FN>, %[[G:[^:]+]]: memref<5xi32>, %[[O:[^:]+]]: memref<4x256x128xf32>, %[[AS:[^:]+]]: memref<4xf32>, %[[BS:[^:]+]]: memref<128xf32>) {
// CHECK-NEXT: gg.grouped_matmul k_grouped a(%[[A]] : memref<256x?xf8E4M3FN>) b(%[[B]] : memref<128x?xf8E4M3FN>)
// CHECK-SAME: groups(%[[G]] : memref<5xi32>)
// CHECK-SAME: a_scale(%[[AS]] : memref<4xf32>, <tensor>)
// CHECK-SAME: b_scale(%[[BS]] : memref<128xf32>, <channel>)
// CHECK-SAME: out(%[[O]] : memref<4x256x128xf32>){{$}}
// CHECK-NEXT: return
func.func @f8_k_grouped_tensor_channel(%a: memref<256x?xf8E4M3FN>, %b: memref<128x?xf8E4M3FN>, %g: memref<5xi32>, %o: memref<4x256x128xf32>, %as: memref<4xf32>, %bs: memref<128xf32>) {
  gg.grouped_matmul k_grouped a(%a : memref<256x?xf8E4M3FN>) b(%b : memref<128x?xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<4xf32>, <tensor>) b_scale(%bs : memref<128xf32>, <channel>) out(%o : memref<4x256x128xf32>)
  return
}

// (1000 + 3 * 4) / 4 * 4 = 1012 scale rows; ceil(512 / (4 * 32)) = 4 i32 columns.
// CHECK-LABEL: func.func @mx_1x32_contiguous(
// CHECK-SAME: %[[A:[^:]+]]: memref<1000x512xf8E4M3FN>, %[[B:[^:]+]]: memref<4x256x512xf8E4M3FN>, %[[G:[^:]+]]: memref<5xi32>, %[[O:[^:]+]]: memref<1000x256xbf16>, %[[AS:[^:]+]]: memref<1012x4xi32>, %[[BS:[^:]+]]: memref<4x256x4xi32>) {
// CHECK-NEXT: gg.grouped_matmul contiguous a(%[[A]] : memref<1000x512xf8E4M3FN>) b(%[[B]] : memref<4x256x512xf8E4M3FN>)
// CHECK-SAME: groups(%[[G]] : memref<5xi32>)
// CHECK-SAME: a_scale(%[[AS]] : memref<1012x4xi32>, <mx 1x32>)
// CHECK-SAME: b_scale(%[[BS]] : memref<4x256x4xi32>, <mx 1x32>)
// CHECK-SAME: out(%[[O]] : memref<1000x256xbf16>){{$}}
// CHECK-NEXT: return
func.func @mx_1x32_contiguous(%a: memref<1000x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi32>, %o: memref<1000x256xbf16>, %as: memref<1012x4xi32>, %bs: memref<4x256x4xi32>) {
  gg.grouped_matmul contiguous a(%a : memref<1000x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<1012x4xi32>, <mx 1x32>) b_scale(%bs : memref<4x256x4xi32>, <mx 1x32>) out(%o : memref<1000x256xbf16>)
  return
}

// ceil(512 / (4 * 128)) = 1 i32 column.
// CHECK-LABEL: func.func @mx_1x128_contiguous_dynamic(
// CHECK-SAME: %[[A:[^:]+]]: memref<?x512xf8E4M3FN>, %[[B:[^:]+]]: memref<4x256x512xf8E4M3FN>, %[[G:[^:]+]]: memref<5xi64>, %[[O:[^:]+]]: memref<?x256xbf16>, %[[AS:[^:]+]]: memref<?x1xi32>, %[[BS:[^:]+]]: memref<4x256x1xi32>) {
// CHECK-NEXT: gg.grouped_matmul contiguous a(%[[A]] : memref<?x512xf8E4M3FN>) b(%[[B]] : memref<4x256x512xf8E4M3FN>)
// CHECK-SAME: groups(%[[G]] : memref<5xi64>)
// CHECK-SAME: a_scale(%[[AS]] : memref<?x1xi32>, <mx 1x128>)
// CHECK-SAME: b_scale(%[[BS]] : memref<4x256x1xi32>, <mx 1x128>)
// CHECK-SAME: out(%[[O]] : memref<?x256xbf16>){{$}}
// CHECK-NEXT: return
func.func @mx_1x128_contiguous_dynamic(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<5xi64>, %o: memref<?x256xbf16>, %as: memref<?x1xi32>, %bs: memref<4x256x1xi32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi64>) a_scale(%as : memref<?x1xi32>, <mx 1x128>) b_scale(%bs : memref<4x256x1xi32>, <mx 1x128>) out(%o : memref<?x256xbf16>)
  return
}

// CHECK-LABEL: func.func @mx_1x32_masked(
// CHECK-SAME: %[[A:[^:]+]]: memref<4x128x512xf8E5M2>, %[[B:[^:]+]]: memref<4x256x512xf8E4M3FN>, %[[G:[^:]+]]: memref<4xi32>, %[[O:[^:]+]]: memref<4x128x256xf32>, %[[AS:[^:]+]]: memref<4x128x4xi32>, %[[BS:[^:]+]]: memref<4x256x4xi32>) {
// CHECK-NEXT: gg.grouped_matmul masked a(%[[A]] : memref<4x128x512xf8E5M2>) b(%[[B]] : memref<4x256x512xf8E4M3FN>)
// CHECK-SAME: groups(%[[G]] : memref<4xi32>)
// CHECK-SAME: a_scale(%[[AS]] : memref<4x128x4xi32>, <mx 1x32>)
// CHECK-SAME: b_scale(%[[BS]] : memref<4x256x4xi32>, <mx 1x32>)
// CHECK-SAME: out(%[[O]] : memref<4x128x256xf32>){{$}}
// CHECK-NEXT: return
func.func @mx_1x32_masked(%a: memref<4x128x512xf8E5M2>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<4xi32>, %o: memref<4x128x256xf32>, %as: memref<4x128x4xi32>, %bs: memref<4x256x4xi32>) {
  gg.grouped_matmul masked a(%a : memref<4x128x512xf8E5M2>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<4xi32>) a_scale(%as : memref<4x128x4xi32>, <mx 1x32>) b_scale(%bs : memref<4x256x4xi32>, <mx 1x32>) out(%o : memref<4x128x256xf32>)
  return
}

// CHECK-LABEL: func.func @mx_1x128_masked(
// CHECK-SAME: %[[A:[^:]+]]: memref<4x?x512xf8E4M3FN>, %[[B:[^:]+]]: memref<4x256x512xf8E4M3FN>, %[[G:[^:]+]]: memref<4xi32>, %[[O:[^:]+]]: memref<4x?x256xbf16>, %[[AS:[^:]+]]: memref<4x?x1xi32>, %[[BS:[^:]+]]: memref<4x256x1xi32>) {
// CHECK-NEXT: gg.grouped_matmul masked a(%[[A]] : memref<4x?x512xf8E4M3FN>) b(%[[B]] : memref<4x256x512xf8E4M3FN>)
// CHECK-SAME: groups(%[[G]] : memref<4xi32>)
// CHECK-SAME: a_scale(%[[AS]] : memref<4x?x1xi32>, <mx 1x128>)
// CHECK-SAME: b_scale(%[[BS]] : memref<4x256x1xi32>, <mx 1x128>)
// CHECK-SAME: out(%[[O]] : memref<4x?x256xbf16>){{$}}
// CHECK-NEXT: return
func.func @mx_1x128_masked(%a: memref<4x?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<4xi32>, %o: memref<4x?x256xbf16>, %as: memref<4x?x1xi32>, %bs: memref<4x256x1xi32>) {
  gg.grouped_matmul masked a(%a : memref<4x?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<4xi32>) a_scale(%as : memref<4x?x1xi32>, <mx 1x128>) b_scale(%bs : memref<4x256x1xi32>, <mx 1x128>) out(%o : memref<4x?x256xbf16>)
  return
}

// CHECK-LABEL: func.func @mx_1x32_padded(
// CHECK-SAME: %[[A:[^:]+]]: memref<?x512xf8E4M3FN>, %[[B:[^:]+]]: memref<4x256x512xf8E4M3FN>, %[[G:[^:]+]]: memref<?xi32>, %[[O:[^:]+]]: memref<?x256xbf16>, %[[AS:[^:]+]]: memref<?x4xi32>, %[[BS:[^:]+]]: memref<4x256x4xi32>) {
// CHECK-NEXT: gg.grouped_matmul padded_contiguous a(%[[A]] : memref<?x512xf8E4M3FN>) b(%[[B]] : memref<4x256x512xf8E4M3FN>)
// CHECK-SAME: groups(%[[G]] : memref<?xi32>)
// CHECK-SAME: a_scale(%[[AS]] : memref<?x4xi32>, <mx 1x32>)
// CHECK-SAME: b_scale(%[[BS]] : memref<4x256x4xi32>, <mx 1x32>)
// CHECK-SAME: out(%[[O]] : memref<?x256xbf16>){{$}}
// CHECK-NEXT: return
func.func @mx_1x32_padded(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>, %g: memref<?xi32>, %o: memref<?x256xbf16>, %as: memref<?x4xi32>, %bs: memref<4x256x4xi32>) {
  gg.grouped_matmul padded_contiguous a(%a : memref<?x512xf8E4M3FN>) b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<?xi32>) a_scale(%as : memref<?x4xi32>, <mx 1x32>) b_scale(%bs : memref<4x256x4xi32>, <mx 1x32>) out(%o : memref<?x256xbf16>)
  return
}

// CHECK-LABEL: func.func @epilogue_acc_only(
// CHECK-SAME: %[[A:[^:]+]]: memref<?x256xbf16>, %[[B:[^:]+]]: memref<8x512x256xbf16>, %[[G:[^:]+]]: memref<9xi32>, %[[O:[^:]+]]: memref<?x512xbf16>) {
// CHECK-NEXT: gg.grouped_matmul contiguous a(%[[A]] : memref<?x256xbf16>) b(%[[B]] : memref<8x512x256xbf16>)
// CHECK-SAME: groups(%[[G]] : memref<9xi32>)
// CHECK-SAME: out(%[[O]] : memref<?x512xbf16>)
// CHECK-SAME: epilogue {
// CHECK-NEXT: ^bb0(%[[ACC:[^:]+]]: f32, %[[GI:[^:]+]]: index):
// CHECK-NEXT: %[[V0:[^ ]+]] = gg.silu %[[ACC]] : f32
// CHECK-NEXT: gg.yield %[[V0]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @epilogue_acc_only(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) epilogue {
  ^bb0(%acc: f32, %gi: index):
    %0 = gg.silu %acc : f32
    gg.yield %0 : f32
  }
  return
}

// Block arguments: accumulator, rows, cols ([N] then [G, N]), group scalars, group index.
// CHECK-LABEL: func.func @epilogue_full(
// CHECK-SAME: %[[A:[^:]+]]: memref<?x256xbf16>, %[[B:[^:]+]]: memref<8x512x256xbf16>, %[[G:[^:]+]]: memref<9xi32>, %[[O:[^:]+]]: memref<?x512xbf16>, %[[ROUTE:[^:]+]]: memref<?xf32>, %[[BIAS:[^:]+]]: memref<512xbf16>, %[[GBIAS:[^:]+]]: memref<8x512xf32>, %[[ALPHA:[^:]+]]: memref<8xf16>) {
// CHECK-NEXT: gg.grouped_matmul contiguous a(%[[A]] : memref<?x256xbf16>) b(%[[B]] : memref<8x512x256xbf16>)
// CHECK-SAME: groups(%[[G]] : memref<9xi32>)
// CHECK-SAME: out(%[[O]] : memref<?x512xbf16>)
// CHECK-SAME: rows(%[[ROUTE]] : memref<?xf32>)
// CHECK-SAME: cols(%[[BIAS]], %[[GBIAS]] : memref<512xbf16>, memref<8x512xf32>)
// CHECK-SAME: group_scalars(%[[ALPHA]] : memref<8xf16>)
// CHECK-SAME: {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
// CHECK-SAME: epilogue {
// CHECK-NEXT: ^bb0(%[[ACC:[^:]+]]: f32, %[[W:[^:]+]]: f32, %[[BIAS_N:[^:]+]]: bf16, %[[GBIAS_N:[^:]+]]: f32, %[[ALPHA_G:[^:]+]]: f16, %[[GI:[^:]+]]: index):
// CHECK-NEXT: %[[ALPHA32:[^ ]+]] = arith.extf %[[ALPHA_G]] : f16 to f32
// CHECK-NEXT: %[[SCALED:[^ ]+]] = arith.mulf %[[ACC]], %[[ALPHA32]] : f32
// CHECK-NEXT: %[[BIAS32:[^ ]+]] = arith.extf %[[BIAS_N]] : bf16 to f32
// CHECK-NEXT: %[[BIASED:[^ ]+]] = arith.addf %[[SCALED]], %[[BIAS32]] : f32
// CHECK-NEXT: %[[GB:[^ ]+]] = arith.addf %[[BIASED]], %[[GBIAS_N]] : f32
// CHECK-NEXT: %[[GI32:[^ ]+]] = arith.index_cast %[[GI]] : index to i32
// CHECK-NEXT: %[[GIF:[^ ]+]] = arith.sitofp %[[GI32]] : i32 to f32
// CHECK-NEXT: %[[SHIFT:[^ ]+]] = arith.addf %[[GB]], %[[GIF]] : f32
// CHECK-NEXT: %[[GATE:[^ ]+]] = gg.sigmoid %[[SHIFT]] : f32
// CHECK-NEXT: %[[ACT:[^ ]+]] = gg.silu %[[GATE]] : f32
// CHECK-NEXT: %[[E:[^ ]+]] = math.exp %[[ACT]] : f32
// CHECK-NEXT: %[[T:[^ ]+]] = math.tanh %[[E]] : f32
// CHECK-NEXT: %[[WEIGHTED:[^ ]+]] = arith.mulf %[[T]], %[[W]] : f32
// CHECK-NEXT: %[[R:[^ ]+]] = arith.truncf %[[WEIGHTED]] : f32 to bf16
// CHECK-NEXT: gg.yield %[[R]] : bf16
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @epilogue_full(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>, %route: memref<?xf32>, %bias: memref<512xbf16>, %gbias: memref<8x512xf32>, %alpha: memref<8xf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) rows(%route : memref<?xf32>) cols(%bias, %gbias : memref<512xbf16>, memref<8x512xf32>) group_scalars(%alpha : memref<8xf16>) {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>} epilogue {
  ^bb0(%acc: f32, %w: f32, %bias_n: bf16, %gbias_n: f32, %alpha_g: f16, %gi: index):
    %alpha32 = arith.extf %alpha_g : f16 to f32
    %scaled = arith.mulf %acc, %alpha32 : f32
    %bias32 = arith.extf %bias_n : bf16 to f32
    %biased = arith.addf %scaled, %bias32 : f32
    %gb = arith.addf %biased, %gbias_n : f32
    %gi32 = arith.index_cast %gi : index to i32
    %gif = arith.sitofp %gi32 : i32 to f32
    %shift = arith.addf %gb, %gif : f32
    %gate = gg.sigmoid %shift : f32
    %act = gg.silu %gate : f32
    %e = math.exp %act : f32
    %t = math.tanh %e : f32
    %weighted = arith.mulf %t, %w : f32
    %r = arith.truncf %weighted : f32 to bf16
    gg.yield %r : bf16
  }
  return
}

// CHECK-LABEL: func.func @epilogue_masked_rows(
// CHECK-SAME: %[[A:[^:]+]]: memref<8x128x256xf16>, %[[B:[^:]+]]: memref<8x256x512xf16>, %[[G:[^:]+]]: memref<8xi32>, %[[O:[^:]+]]: memref<8x128x512xf16>, %[[RS:[^:]+]]: memref<8x128xbf16>, %[[CS:[^:]+]]: memref<8x512xf16>, %[[S0:[^:]+]]: memref<8xf32>, %[[S1:[^:]+]]: memref<8xbf16>) {
// CHECK-NEXT: gg.grouped_matmul masked a(%[[A]] : memref<8x128x256xf16>) b(%[[B]] : memref<8x256x512xf16>, kn)
// CHECK-SAME: groups(%[[G]] : memref<8xi32>)
// CHECK-SAME: out(%[[O]] : memref<8x128x512xf16>)
// CHECK-SAME: rows(%[[RS]] : memref<8x128xbf16>)
// CHECK-SAME: cols(%[[CS]] : memref<8x512xf16>)
// CHECK-SAME: group_scalars(%[[S0]], %[[S1]] : memref<8xf32>, memref<8xbf16>)
// CHECK-SAME: {expected_m = 128 : i64}
// CHECK-SAME: epilogue {
// CHECK-NEXT: ^bb0(%[[ACC:[^:]+]]: f32, %[[ROW:[^:]+]]: bf16, %[[COL:[^:]+]]: f16, %[[S0V:[^:]+]]: f32, %[[S1V:[^:]+]]: bf16, %[[GI:[^:]+]]: index):
// CHECK-NEXT: %[[R32:[^ ]+]] = arith.extf %[[ROW]] : bf16 to f32
// CHECK-NEXT: %[[C32:[^ ]+]] = arith.extf %[[COL]] : f16 to f32
// CHECK-NEXT: %[[S132:[^ ]+]] = arith.extf %[[S1V]] : bf16 to f32
// CHECK-NEXT: %[[X:[^ ]+]] = arith.mulf %[[ACC]], %[[R32]] : f32
// CHECK-NEXT: %[[Y:[^ ]+]] = arith.addf %[[X]], %[[C32]] : f32
// CHECK-NEXT: %[[Z:[^ ]+]] = arith.mulf %[[Y]], %[[S0V]] : f32
// CHECK-NEXT: %[[C0:[^ ]+]] = arith.constant 0.000000e+00 : f32
// CHECK-NEXT: %[[RELU:[^ ]+]] = arith.maximumf %[[Z]], %[[C0]] : f32
// CHECK-NEXT: %[[W:[^ ]+]] = arith.addf %[[RELU]], %[[S132]] : f32
// CHECK-NEXT: %[[H:[^ ]+]] = arith.truncf %[[W]] : f32 to f16
// CHECK-NEXT: gg.yield %[[H]] : f16
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @epilogue_masked_rows(%a: memref<8x128x256xf16>, %b: memref<8x256x512xf16>, %g: memref<8xi32>, %o: memref<8x128x512xf16>, %rs: memref<8x128xbf16>, %cs: memref<8x512xf16>, %s0: memref<8xf32>, %s1: memref<8xbf16>) {
  gg.grouped_matmul masked a(%a : memref<8x128x256xf16>) b(%b : memref<8x256x512xf16>, kn) groups(%g : memref<8xi32>) out(%o : memref<8x128x512xf16>) rows(%rs : memref<8x128xbf16>) cols(%cs : memref<8x512xf16>) group_scalars(%s0, %s1 : memref<8xf32>, memref<8xbf16>) {expected_m = 128 : i64} epilogue {
  ^bb0(%acc: f32, %row: bf16, %col: f16, %s0v: f32, %s1v: bf16, %gi: index):
    %r32 = arith.extf %row : bf16 to f32
    %c32 = arith.extf %col : f16 to f32
    %s132 = arith.extf %s1v : bf16 to f32
    %x = arith.mulf %acc, %r32 : f32
    %y = arith.addf %x, %c32 : f32
    %z = arith.mulf %y, %s0v : f32
    %c0 = arith.constant 0.0 : f32
    %relu = arith.maximumf %z, %c0 : f32
    %w = arith.addf %relu, %s132 : f32
    %h = arith.truncf %w : f32 to f16
    gg.yield %h : f16
  }
  return
}

// CHECK-LABEL: func.func @f8_epilogue_k_grouped(
// CHECK-SAME: %[[A:[^:]+]]: memref<256x?xf8E4M3FN>, %[[B:[^:]+]]: memref<128x?xf8E4M3FN>, %[[G:[^:]+]]: memref<5xi32>, %[[O:[^:]+]]: memref<4x256x128xf32>, %[[AS:[^:]+]]: memref<?x256xf32>, %[[BS:[^:]+]]: memref<1x?xf32>, %[[RS:[^:]+]]: memref<256xf32>, %[[CS:[^:]+]]: memref<4x128xf32>) {
// CHECK-NEXT: gg.grouped_matmul k_grouped a(%[[A]] : memref<256x?xf8E4M3FN>) b(%[[B]] : memref<128x?xf8E4M3FN>)
// CHECK-SAME: groups(%[[G]] : memref<5xi32>)
// CHECK-SAME: a_scale(%[[AS]] : memref<?x256xf32>, <block 1x128, mn_major>)
// CHECK-SAME: b_scale(%[[BS]] : memref<1x?xf32>, <block 128x128>)
// CHECK-SAME: out(%[[O]] : memref<4x256x128xf32>)
// CHECK-SAME: rows(%[[RS]] : memref<256xf32>)
// CHECK-SAME: cols(%[[CS]] : memref<4x128xf32>)
// CHECK-SAME: epilogue {
// CHECK-NEXT: ^bb0(%[[ACC:[^:]+]]: f32, %[[ROW:[^:]+]]: f32, %[[COL:[^:]+]]: f32, %[[GI:[^:]+]]: index):
// CHECK-NEXT: %[[X:[^ ]+]] = arith.mulf %[[ACC]], %[[ROW]] : f32
// CHECK-NEXT: %[[Y:[^ ]+]] = arith.addf %[[X]], %[[COL]] : f32
// CHECK-NEXT: gg.yield %[[Y]] : f32
// CHECK-NEXT: }
// CHECK-NEXT: return
func.func @f8_epilogue_k_grouped(%a: memref<256x?xf8E4M3FN>, %b: memref<128x?xf8E4M3FN>, %g: memref<5xi32>, %o: memref<4x256x128xf32>, %as: memref<?x256xf32>, %bs: memref<1x?xf32>, %rs: memref<256xf32>, %cs: memref<4x128xf32>) {
  gg.grouped_matmul k_grouped a(%a : memref<256x?xf8E4M3FN>) b(%b : memref<128x?xf8E4M3FN>) groups(%g : memref<5xi32>) a_scale(%as : memref<?x256xf32>, <block 1x128, mn_major>) b_scale(%bs : memref<1x?xf32>, <block 128x128>) out(%o : memref<4x256x128xf32>) rows(%rs : memref<256xf32>) cols(%cs : memref<4x128xf32>) epilogue {
  ^bb0(%acc: f32, %row: f32, %col: f32, %gi: index):
    %x = arith.mulf %acc, %row : f32
    %y = arith.addf %x, %col : f32
    gg.yield %y : f32
  }
  return
}

// The plan of gg-schedule-groups, gg-eliminate-padding and gg-plan-overfetch.
// CHECK-LABEL: func.func @planned(
// CHECK: {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>, overfetch = #gg.overfetch<rows = 7, k = 0>, padding = #gg.padding<idle_warpgroups = skip>, schedule = #gg.schedule<order = n_fastest>}{{$}}
func.func @planned(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>, schedule = #gg.schedule<order = n_fastest>, padding = #gg.padding<idle_warpgroups = skip>, overfetch = #gg.overfetch<rows = 7, k = 0>}
  return
}

// split_n = 2 prints only when not the default.
// CHECK-LABEL: func.func @split_columns(
// CHECK: {config = #gg.config<block = [64, 256, 64], stages = 4, cluster = [1, 1], sms = 132, split_n = 2>}{{$}}
func.func @split_columns(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {config = #gg.config<block = [64, 256, 64], stages = 4, cluster = [1, 1], sms = 132, split_n = 2>}
  return
}

// m_band prints only when not 0, before b_cache; either may be written
// alone.
// CHECK-LABEL: func.func @m_band(
// CHECK: {schedule = #gg.schedule<order = m_fastest, m_band = 12, b_cache = evict_first>}{{$}}
// CHECK-LABEL: func.func @m_band_alone(
// CHECK: {schedule = #gg.schedule<order = m_fastest, m_band = 3>}{{$}}
func.func @m_band(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {schedule = #gg.schedule<order = m_fastest, b_cache = evict_first, m_band = 12>}
  return
}
func.func @m_band_alone(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {schedule = #gg.schedule<order = m_fastest, m_band = 3, b_cache = normal>}
  return
}

// b_cache prints only when not the default.
// CHECK-LABEL: func.func @b_cache_policy(
// CHECK: {schedule = #gg.schedule<order = m_fastest, b_cache = evict_first>}{{$}}
func.func @b_cache_policy(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {schedule = #gg.schedule<order = m_fastest, b_cache = evict_first>}
  return
}

// group_reads prints only when not the default (global).
// CHECK-LABEL: func.func @group_reads_shared(
// CHECK: {schedule = #gg.schedule<order = m_fastest, group_reads = shared>}{{$}}
// CHECK-LABEL: func.func @group_reads_global(
// CHECK: {schedule = #gg.schedule<order = n_fastest>}{{$}}
func.func @group_reads_shared(%a: memref<8x128x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<8xi32>, %o: memref<8x128x512xbf16>) {
  gg.grouped_matmul masked a(%a : memref<8x128x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<8xi32>) out(%o : memref<8x128x512xbf16>) {schedule = #gg.schedule<order = m_fastest, group_reads = shared, b_cache = normal>}
  return
}
func.func @group_reads_global(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) {schedule = #gg.schedule<order = n_fastest, group_reads = global>}
  return
}

// Gathered rows: a_rows prints after 'a', and the product's rows follow it.
// CHECK-LABEL: func.func @gathered_rows(
// CHECK: gg.grouped_matmul contiguous a(%{{.*}} : memref<?x256xbf16>) a_rows(%{{.*}} : memref<?xi32>) b(%{{.*}} : memref<8x512x256xbf16>)
func.func @gathered_rows(%a: memref<?x256xbf16>, %r: memref<?xi32>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) a_rows(%r : memref<?xi32>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>)
  return
}

// Scattered rows: out_rows prints after 'out', and out's rows are the
// caller's (any R).
// CHECK-LABEL: func.func @scattered_rows(
// CHECK: gg.grouped_matmul contiguous a(%{{.*}} : memref<?x256xbf16>) b(%{{.*}} : memref<8x512x256xbf16>) groups(%{{.*}} : memref<9xi32>) out(%{{.*}} : memref<?x512xbf16>) out_rows(%{{.*}} : memref<?xi32>)
func.func @scattered_rows(%a: memref<?x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<9xi32>, %o: memref<?x512xbf16>, %r: memref<?xi32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x512xbf16>) out_rows(%r : memref<?xi32>)
  return
}

// An out quantised to FP8 in the epilogue: out_scale prints after 'out',
// its 1x128 scales M-major (ceil(N/128) x align4(M)).
// CHECK-LABEL: func.func @quantized_out(
// CHECK: out(%{{.*}} : memref<?x320xf8E4M3FN>) out_scale(%{{.*}} : memref<3x?xf32>) {column_pairs}
func.func @quantized_out(%a: memref<?x256xbf16>, %b: memref<8x640x256xbf16>, %g: memref<9xi32>, %o: memref<?x320xf8E4M3FN>, %s: memref<3x?xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>) b(%b : memref<8x640x256xbf16>) groups(%g : memref<9xi32>) out(%o : memref<?x320xf8E4M3FN>) out_scale(%s : memref<3x?xf32>) {column_pairs} epilogue {
  ^bb0(%gate: f32, %up: f32, %group: index):
    %y = arith.mulf %gate, %up : f32
    gg.yield %y : f32
  }
  return
}

// odd_block_a prints only when not the default (own).
// CHECK-LABEL: func.func @odd_block_a(
// CHECK: {schedule = #gg.schedule<order = m_fastest, odd_block_a = multicast>}{{$}}
func.func @odd_block_a(%a: memref<8x128x256xbf16>, %b: memref<8x512x256xbf16>, %g: memref<8xi32>, %o: memref<8x128x512xbf16>) {
  gg.grouped_matmul masked a(%a : memref<8x128x256xbf16>) b(%b : memref<8x512x256xbf16>) groups(%g : memref<8xi32>) out(%o : memref<8x128x512xbf16>) {schedule = #gg.schedule<order = m_fastest, odd_block_a = multicast, group_reads = global>}
  return
}
