// RUN: ggc-opt %s -split-input-file -gg-select-config -verify-diagnostics

// Without TMA and wgmma (gg.target sm_80, sm_86, sm_89) the lowering takes
// bf16, f16 and f32 operands, and FP8 on sm_89: f8 ones on sm_80 (here
// with their scales) are refused by name.
module attributes {gg.target = "sm_80"} {
  func.func @f8(%a: memref<?x512xf8E4M3FN>, %b: memref<4x256x512xf8E4M3FN>,
                %g: memref<5xi32>, %as: memref<4xf32>, %bs: memref<4xf32>,
                %o: memref<?x256xbf16>) {
    // expected-error @+1 {{cannot be lowered for sm_80: its operands are f8E4M3FN; FP8 mma.sync takes sm_89 (sm_90a lowers it)}}
    gg.grouped_matmul contiguous a(%a : memref<?x512xf8E4M3FN>)
        b(%b : memref<4x256x512xf8E4M3FN>) groups(%g : memref<5xi32>)
        a_scale(%as : memref<4xf32>, <tensor>)
        b_scale(%bs : memref<4xf32>, <tensor>) out(%o : memref<?x256xbf16>)
    return
  }
}

// -----

// A store pool stores the output tile by TMA.
module attributes {gg.target = "sm_80"} {
  func.func @store_pool(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                        %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
    // expected-error @+1 {{cannot be lowered for sm_80: its store_pool stores by TMA; give store_pool = [] (sm_90a lowers it)}}
    gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
        b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
        out(%o : memref<?x1024xbf16>)
        {store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>}
    return
  }
}

// -----

// A cluster multicasts B by TMA.
module attributes {gg.target = "sm_86"} {
  func.func @cluster(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                     %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
    // expected-error @+1 {{cannot be lowered for sm_86: its config asks for a cluster; give cluster = [1, 1] (sm_90a lowers it)}}
    gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
        b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
        out(%o : memref<?x1024xbf16>)
        {config = #gg.config<block = [128, 128, 64], stages = 2, cluster = [2, 1], sms = 132>}
    return
  }
}

// -----

// A user config is checked against the target's shared memory: four 32 KiB
// stages fit in sm_90a's 227 KiB and sm_80's 163 KiB, not in sm_86's 99.
module attributes {gg.target = "sm_86"} {
  func.func @too_deep(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                      %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
    // expected-error @+1 {{needs 133120 bytes of shared memory, more than the 101376 one CTA may use}}
    gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
        b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
        out(%o : memref<?x1024xbf16>)
        {config = #gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>}
    return
  }
}

// -----

// gg.target names one of the targets ggc lowers to...
// expected-error @+1 {{gg.target must be a string naming one of sm_90a, sm_80, sm_86, sm_89, got "sm_75"}}
module attributes {gg.target = "sm_75"} {
  func.func @turing(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                    %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
    gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
        b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
        out(%o : memref<?x1024xbf16>)
    return
  }
}

// -----

// ... as a string.
// expected-error @+1 {{gg.target must be a string naming one of sm_90a, sm_80, sm_86, sm_89, got 80 : i64}}
module attributes {gg.target = 80} {
  func.func @number(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                    %off: memref<9xi32>, %o: memref<?x1024xbf16>) {
    gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
        b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
        out(%o : memref<?x1024xbf16>)
    return
  }
}

// -----

// column_halves loads B's two halves by TMA and pairs columns one half a
// tile apart, which mma.sync warps (a share of the columns each) do not hold.
module attributes {gg.target = "sm_80"} {
  func.func @halves(%a: memref<?x512xbf16>, %b: memref<8x1024x512xbf16>,
                    %off: memref<9xi32>, %o: memref<?x512xbf16>) {
    // expected-error @+1 {{cannot be lowered for sm_80: column_halves loads B's two halves by TMA for wgmma; interleave B's gate and up rows and use column_pairs (sm_90a lowers it)}}
    gg.grouped_matmul contiguous a(%a : memref<?x512xbf16>)
        b(%b : memref<8x1024x512xbf16>) groups(%off : memref<9xi32>)
        out(%o : memref<?x512xbf16>) {column_halves} epilogue {
        ^bb0(%x: f32, %y: f32, %gi: index):
          gg.yield %x : f32
        }
    return
  }
}
