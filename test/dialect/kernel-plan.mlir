// RUN: ggc-opt %s -split-input-file -verify-diagnostics | FileCheck %s

// #gg.kernel_plan prints as it parses.
// CHECK: kernel_plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = swizzled>
func.func @roundtrip(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                     %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = swizzled>}
  return
}

// The optional fields parse in any order and print in one, each only where
// it is not its default.
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [256, 256], staging = none, warp_columns = 4, release_lag = 0, producer = none, store_columns = 8>
func.func @optional_fields(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                           %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [256, 256], staging = none, store_columns = 8, producer = none, release_lag = 0, warp_columns = 4>}
  return
}

// A serial plan's epilogue_blocks defaults to 0 (at the tile's end), so 1
// prints; a pipelined plan's to 1, which does not.
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = swizzled_64, epilogue_blocks = 1>
// CHECK: kernel_plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = swizzled, store_issuers = warpgroup>
func.func @serial_epilogue_block(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                                 %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = swizzled_64, epilogue_blocks = 1>}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = swizzled, store_issuers = warpgroup, epilogue_blocks = 1>}
  return
}

// column_scale_reads prints where it is not at_promotion, after every
// other optional field.
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = dense, store_issuers = warpgroup, column_scale_reads = at_issue>
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = dense>
func.func @column_scale_reads(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                              %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = dense, column_scale_reads = at_issue, store_issuers = warpgroup>}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = dense, column_scale_reads = at_promotion>}
  return
}

// ring_stages prints where it is not counted, last.
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = dense, column_scale_reads = at_issue, ring_stages = constant>
// CHECK: kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = dense>
func.func @ring_stages(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                       %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = dense, ring_stages = constant, column_scale_reads = at_issue>}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = dense, ring_stages = counted>}
  return
}

// CHECK: kernel_plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = swizzled, epilogue_blocks = 2>
func.func @epilogue_blocks(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                           %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = swizzled, epilogue_blocks = 2>}
  return
}

// -----

func.func @three_epilogue_blocks(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                                 %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+4 {{kernel_plan epilogue_blocks must be 1 or 2 with promotion = pipelined, got 3}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = swizzled, epilogue_blocks = 3>}
  return
}

// -----

func.func @serial_epilogue_blocks(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                                  %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+4 {{kernel_plan epilogue_blocks must be 0 or 1 with promotion = serial, got 2}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = swizzled, epilogue_blocks = 2>}
  return
}

// -----

func.func @odd_registers(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                         %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+4 {{kernel_plan consumer registers must be a multiple of 8 in [24, 256] (setmaxnreg), got 230}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 230], staging = none>}
  return
}

// -----

func.func @producer_registers(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                              %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+4 {{kernel_plan producer registers must be a multiple of 8 in [24, 256] (setmaxnreg), got 16}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [16, 232], staging = none>}
  return
}

// -----

func.func @producer_over_consumer(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                                  %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+4 {{kernel_plan gives the producer more registers (232) than each consumer (40); the producer only issues loads}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [232, 40], staging = none>}
  return
}

// -----

func.func @warp_columns(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                        %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+4 {{kernel_plan warp_columns must be 1, 2 or 4, got 3}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none, warp_columns = 3>}
  return
}

// -----

func.func @store_columns(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                         %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+4 {{kernel_plan store_columns must be 2 or 8, got 4}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none, store_columns = 4>}
  return
}

// -----

func.func @release_lag(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                       %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+4 {{kernel_plan release_lag must be 0 or 1, got 2}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none, release_lag = 2>}
  return
}

// -----

func.func @twice(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                 %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+4 {{kernel_plan gives warp_columns twice}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none, warp_columns = 4, release_lag = 0, warp_columns = 2>}
  return
}

// -----

func.func @unknown_field(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                         %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+4 {{kernel_plan has no field 'lag' (expected 'warp_columns', 'release_lag', 'producer', 'store_columns', 'epilogue_blocks', 'store_issuers', 'column_scale_reads' or 'ring_stages')}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none, lag = 0>}
  return
}

// -----

func.func @producer(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                    %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+4 {{expected warpgroup, none or all_threads, got 'three'}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], staging = none, producer = three>}
  return
}

// -----

func.func @pipelined_in_place(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                              %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+4 {{kernel_plan epilogue_blocks must be 1 or 2 with promotion = pipelined, got 0}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = swizzled, epilogue_blocks = 0>}
  return
}

// -----

func.func @column_scale_reads_pipelined(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                                        %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+4 {{kernel_plan column_scale_reads = at_issue takes promotion = serial (two partial accumulators and the columns' scales do not fit beside each other)}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = swizzled, column_scale_reads = at_issue>}
  return
}

// -----

func.func @column_scale_reads_value(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                                    %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      // expected-error @+1 {{expected at_promotion or at_issue}}
      {kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = dense, column_scale_reads = later>}
  return
}

// -----

func.func @ring_stages_pipelined(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                                 %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+4 {{kernel_plan ring_stages = constant takes promotion = serial with epilogue_blocks = 0 or promotion = pipelined with epilogue_blocks = 1, got promotion = serial with epilogue_blocks = 1}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = dense, epilogue_blocks = 1, ring_stages = constant>}
  return
}

// -----

func.func @ring_stages_pipelined_two_blocks(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                                            %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+4 {{kernel_plan ring_stages = constant takes promotion = serial with epilogue_blocks = 0 or promotion = pipelined with epilogue_blocks = 1, got promotion = pipelined with epilogue_blocks = 2}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], staging = dense, epilogue_blocks = 2, ring_stages = constant>}
  return
}

// -----

func.func @ring_stages_value(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                             %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
  // expected-error @+4 {{expected counted or constant, got 'unrolled'}}
  gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
      b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x1024xbf16>)
      {kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = dense, ring_stages = unrolled>}
  return
}
