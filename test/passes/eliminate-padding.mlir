// RUN: ggc-opt %s -split-input-file -gg-eliminate-padding=skip-idle-warpgroups=true | FileCheck %s
// RUN: ggc-opt %s -split-input-file -gg-eliminate-padding | FileCheck %s --check-prefix=DEFAULT

// Before: a contiguous op with two consumer warpgroups (block M 128) and
// a short main loop (K = 512 bf16: 1 KiB a row). After: a warpgroup whose
// 64 rows of a group's last tile are all past the group's end skips its
// wgmma, by default too (the skip pays over a short main loop).
// CHECK-LABEL: func.func @contiguous
// CHECK: padding = #gg.padding<idle_warpgroups = skip>
// DEFAULT-LABEL: func.func @contiguous
// DEFAULT: padding = #gg.padding<idle_warpgroups = skip>
func.func @contiguous(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                      %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// The 2 KiB bound: K = 2,048 f8 (2 KiB a row) skips by default, K = 1,040
// bf16 (2,080 bytes) computes unless skip-idle-warpgroups is set, since
// over a longer main loop the branch around it costs more than it saves.
// CHECK-LABEL: func.func @k_bytes
// CHECK: padding = #gg.padding<idle_warpgroups = skip>
// CHECK: padding = #gg.padding<idle_warpgroups = skip>
// DEFAULT-LABEL: func.func @k_bytes
// DEFAULT: padding = #gg.padding<idle_warpgroups = skip>
// DEFAULT: padding = #gg.padding<idle_warpgroups = compute>
func.func @k_bytes(%a8: memref<?x2048xf8E4M3FN>, %b8: memref<8x1024x2048xf8E4M3FN>,
                   %a: memref<?x1040xbf16>, %b: memref<8x1024x1040xbf16>,
                   %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a8 : memref<?x2048xf8E4M3FN>)
      b(%b8 : memref<8x1024x2048xf8E4M3FN>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul contiguous a(%a : memref<?x1040xbf16>)
      b(%b : memref<8x1024x1040xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// Masked batches without a hint are taken as full groups: skip with the
// option; by default they compute (full groups have no idle warpgroup),
// K = 2,048 as well as 7,168.
// CHECK-LABEL: func.func @masked
// CHECK: padding = #gg.padding<idle_warpgroups = skip>
// CHECK: padding = #gg.padding<idle_warpgroups = skip>
// DEFAULT-LABEL: func.func @masked
// DEFAULT: padding = #gg.padding<idle_warpgroups = compute>
// DEFAULT: padding = #gg.padding<idle_warpgroups = compute>
func.func @masked(%a: memref<16x128x7168xf8E4M3FN>,
                  %b: memref<16x4096x7168xf8E4M3FN>, %m: memref<16xi32>,
                  %o: memref<16x128x4096xbf16>,
                  %a2: memref<4x256x2048xf8E4M3FN>,
                  %b2: memref<4x7168x2048xf8E4M3FN>, %m2: memref<4xi32>,
                  %o2: memref<4x256x7168xbf16>) {
  gg.grouped_matmul masked a(%a : memref<16x128x7168xf8E4M3FN>)
      b(%b : memref<16x4096x7168xf8E4M3FN>) groups(%m : memref<16xi32>)
      out(%o : memref<16x128x4096xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 6, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul masked a(%a2 : memref<4x256x2048xf8E4M3FN>)
      b(%b2 : memref<4x7168x2048xf8E4M3FN>) groups(%m2 : memref<4xi32>)
      out(%o2 : memref<4x256x7168xbf16>)
      {config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  return
}

// -----

// f8 masked batches with a hint: 150 rows a group on 128-row tiles (a
// typical group's last tile partial) skips by default; 256 (whole tiles)
// computes, as do bf16 with the same partial hint (not measured) and f8
// on 64-row tiles split between the two consumers (no idle warpgroup).
// CHECK-LABEL: func.func @masked_expected_rows
// CHECK: padding = #gg.padding<idle_warpgroups = skip>
// CHECK: padding = #gg.padding<idle_warpgroups = skip>
// CHECK: padding = #gg.padding<idle_warpgroups = skip>
// CHECK: padding = #gg.padding<idle_warpgroups = compute>
// DEFAULT-LABEL: func.func @masked_expected_rows
// DEFAULT: expected_m = 150
// DEFAULT-SAME: padding = #gg.padding<idle_warpgroups = skip>
// DEFAULT: expected_m = 256
// DEFAULT-SAME: padding = #gg.padding<idle_warpgroups = compute>
// DEFAULT: expected_m = 150
// DEFAULT-SAME: padding = #gg.padding<idle_warpgroups = compute>
// DEFAULT: expected_m = 40
// DEFAULT-SAME: padding = #gg.padding<idle_warpgroups = compute>
func.func @masked_expected_rows(%a: memref<8x256x7168xf8E4M3FN>,
    %b: memref<8x4096x7168xf8E4M3FN>, %m: memref<8xi32>,
    %o: memref<8x256x4096xbf16>, %a16: memref<8x256x7168xbf16>,
    %b16: memref<8x4096x7168xbf16>) {
  gg.grouped_matmul masked a(%a : memref<8x256x7168xf8E4M3FN>)
      b(%b : memref<8x4096x7168xf8E4M3FN>) groups(%m : memref<8xi32>)
      out(%o : memref<8x256x4096xbf16>)
      {expected_m = 150 : i64, config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul masked a(%a : memref<8x256x7168xf8E4M3FN>)
      b(%b : memref<8x4096x7168xf8E4M3FN>) groups(%m : memref<8xi32>)
      out(%o : memref<8x256x4096xbf16>)
      {expected_m = 256 : i64, config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul masked a(%a16 : memref<8x256x7168xbf16>)
      b(%b16 : memref<8x4096x7168xbf16>) groups(%m : memref<8xi32>)
      out(%o : memref<8x256x4096xbf16>)
      {expected_m = 150 : i64, config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul masked a(%a : memref<8x256x7168xf8E4M3FN>)
      b(%b : memref<8x4096x7168xf8E4M3FN>) groups(%m : memref<8xi32>)
      out(%o : memref<8x256x4096xbf16>)
      {expected_m = 40 : i64, config = #gg.config<block = [64, 256, 128], stages = 4, cluster = [1, 1], sms = 132, split_n = 2>}
  return
}

// -----

// One consumer warpgroup (block M 64): a scheduled tile always has valid
// rows, so there is nothing to skip, with the option or (contiguous, a
// short K) without it.
// CHECK-LABEL: func.func @one_consumer
// CHECK: padding = #gg.padding<idle_warpgroups = compute>
// CHECK: padding = #gg.padding<idle_warpgroups = compute>
// DEFAULT-LABEL: func.func @one_consumer
// DEFAULT: padding = #gg.padding<idle_warpgroups = compute>
// DEFAULT: padding = #gg.padding<idle_warpgroups = compute>
func.func @one_consumer(%a: memref<4x128x256xbf16>, %b: memref<4x512x256xbf16>,
                        %m: memref<4xi32>, %o: memref<4x128x512xbf16>,
                        %ac: memref<?x256xbf16>, %off: memref<5xi32>,
                        %oc: memref<?x512xbf16>) {
  gg.grouped_matmul masked a(%a : memref<4x128x256xbf16>)
      b(%b : memref<4x512x256xbf16>) groups(%m : memref<4xi32>)
      out(%o : memref<4x128x512xbf16>)
      {config = #gg.config<block = [64, 128, 64], stages = 8, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul contiguous a(%ac : memref<?x256xbf16>)
      b(%b : memref<4x512x256xbf16>) groups(%off : memref<5xi32>)
      out(%oc : memref<?x512xbf16>)
      {config = #gg.config<block = [64, 128, 64], stages = 8, cluster = [1, 1], sms = 132>}
  return
}

// -----

// padded_contiguous rows are valid by their tag, not as a prefix: compute,
// whatever K.
// CHECK-LABEL: func.func @padded
// CHECK: padding = #gg.padding<idle_warpgroups = compute>
// DEFAULT-LABEL: func.func @padded
// DEFAULT: padding = #gg.padding<idle_warpgroups = compute>
func.func @padded(%a: memref<?x256xbf16>, %b: memref<4x512x256xbf16>,
                  %tags: memref<?xi32>, %o: memref<?x512xbf16>) {
  gg.grouped_matmul padded_contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x512x256xbf16>) groups(%tags : memref<?xi32>)
      out(%o : memref<?x512xbf16>)
      {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
  return
}

// -----

// tf32 with B given N-major: every consumer warpgroup helps transpose B's
// tile, so none may skip (K = 256 f32, 1 KiB a row, would skip by default).
// CHECK-LABEL: func.func @tf32_kn
// CHECK: padding = #gg.padding<idle_warpgroups = compute>
// DEFAULT-LABEL: func.func @tf32_kn
// DEFAULT: padding = #gg.padding<idle_warpgroups = compute>
func.func @tf32_kn(%a: memref<?x256xf32>, %b: memref<4x256x512xf32>,
                   %off: memref<5xi32>, %o: memref<?x512xf32>) {
  gg.grouped_matmul contiguous a(%a : memref<?x256xf32>)
      b(%b : memref<4x256x512xf32>, kn) groups(%off : memref<5xi32>)
      out(%o : memref<?x512xf32>)
      {tf32, config = #gg.config<block = [128, 128, 32], stages = 3, cluster = [1, 1], sms = 132>}
  return
}
