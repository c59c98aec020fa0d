// RUN: ggc-opt %s -gg-select-config -verify-diagnostics
// The num-sms option goes into #gg.config unverified: checked first.
// RUN: not ggc-opt %s -gg-select-config=num-sms=-1 2>&1 | FileCheck %s --check-prefix=SMS
// SMS: error: gg-select-config: num-sms must be positive, got -1
// RUN: not ggc-opt %s -gg-select-config=shared-memory-bytes=-1 2>&1 | FileCheck %s --check-prefix=SMEM
// SMEM: error: gg-select-config: shared-memory-bytes must be 0 (the target's) or positive, got -1
// RUN: not ggc-opt %s -gg-select-config=memory-gbps=-1 2>&1 | FileCheck %s --check-prefix=GBPS
// GBPS: error: gg-select-config: memory-gbps must be 0 (unknown) or positive, got -1

// A user config is checked against the shared-memory budget of one CTA.
func.func @too_deep(%a: memref<?x256xbf16>, %b: memref<2x256x256xbf16>,
                    %off: memref<3xi32>, %o: memref<?x256xbf16>) {
  // expected-error @+1 {{needs 526336 bytes of shared memory, more than the 232448 one CTA may use}}
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<2x256x256xbf16>) groups(%off : memref<3xi32>)
      out(%o : memref<?x256xbf16>)
      {config = #gg.config<block = [256, 256, 128], stages = 4, cluster = [1, 1], sms = 132>}
  return
}
