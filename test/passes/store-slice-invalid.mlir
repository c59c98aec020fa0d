// RUN: ggc-opt %s -split-input-file -gg-select-config -gg-tma-store-pool -verify-diagnostics

// A slice width fits the tile it slices: the user gives both.
func.func @no_config(%a: memref<?x4096xbf16>, %b: memref<8x4096x4096xbf16>,
                     %off: memref<9xi32>, %o: memref<?x4096xbf16>) {
  // expected-error @+1 {{has a store_slice but no config: give the config whose output tile it slices}}
  gg.grouped_matmul contiguous a(%a : memref<?x4096xbf16>)
      b(%b : memref<8x4096x4096xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x4096xbf16>) {store_slice = 64 : i64}
  return
}

// -----

// Before sm_90a there are no TMA stores to slice for.
module attributes {gg.target = "sm_80"} {
func.func @no_tma(%a: memref<?x4096xbf16>, %b: memref<8x4096x4096xbf16>,
                  %off: memref<9xi32>, %o: memref<?x4096xbf16>) {
  // expected-error @+1 {{cannot be lowered for sm_80: its store_slice stages the tile for TMA stores; drop it (sm_90a lowers it)}}
  gg.grouped_matmul contiguous a(%a : memref<?x4096xbf16>)
      b(%b : memref<8x4096x4096xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x4096xbf16>)
      {config = #gg.config<block = [128, 128, 32], stages = 3, cluster = [1, 1], sms = 108>,
       store_slice = 64 : i64}
  return
}
}

// -----

// Two 128 x 128 bf16 slices (64 KB) beside two 96 KB stages are more than a
// CTA's shared memory, and fewer stages than the user's two are not taken.
func.func @no_room(%a: memref<?x4096xbf16>, %b: memref<8x4096x4096xbf16>,
                   %off: memref<9xi32>, %o: memref<?x4096xbf16>) {
  // expected-error @+1 {{has a store_slice, but even 2 stages leave no room for its ring of staged slices beside the pipeline; lower the stages or the tile}}
  gg.grouped_matmul contiguous a(%a : memref<?x4096xbf16>)
      b(%b : memref<8x4096x4096xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x4096xbf16>)
      {config = #gg.config<block = [128, 256, 128], stages = 2, cluster = [1, 1], sms = 132>,
       store_slice = 128 : i64}
  return
}
