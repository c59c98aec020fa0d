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

// padded_contiguous keeps per-thread stores: a slice has no pool to go to.
func.func @padded(%a: memref<1024x4096xbf16>, %b: memref<8x4096x4096xbf16>,
                  %rows: memref<1024xi32>, %o: memref<1024x4096xbf16>) {
  // expected-error @+1 {{has a store_slice, which stages the tile for the TMA store pool, but the pool needs the valid rows of a tile to be a prefix, which padded_contiguous does not promise}}
  gg.grouped_matmul padded_contiguous a(%a : memref<1024x4096xbf16>)
      b(%b : memref<8x4096x4096xbf16>) groups(%rows : memref<1024xi32>)
      out(%o : memref<1024x4096xbf16>)
      {config = #gg.config<block = [128, 256, 64], stages = 3, cluster = [1, 1], sms = 132>,
       store_slice = 64 : i64}
  return
}
