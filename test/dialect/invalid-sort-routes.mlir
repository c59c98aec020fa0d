// RUN: ggc-opt %s -split-input-file -verify-diagnostics

// Negative tests for gg.sort_routes: every case has exactly one thing wrong.

func.func @bad(%ids: memref<?xi32>, %w: memref<?xf32>, %c: memref<?xi32>, %off: memref<9xi32>,
               %o: memref<?xi64>, %s: memref<?xi32>, %p: memref<?xi64>, %r: memref<?xf32>) {
  // expected-error @+1 {{threads must be a multiple of 32 in [32, 1024], got 48}}
  gg.sort_routes ids(%ids : memref<?xi32>) weights(%w : memref<?xf32>)
      chunk_counts(%c : memref<?xi32>) offsets(%off : memref<9xi32>)
      order(%o : memref<?xi64>) source(%s : memref<?xi32>)
      position(%p : memref<?xi64>) route(%r : memref<?xf32>)
      {experts = 8 : i64, top_k = 2 : i64, chunk_routes = 96 : i64, threads = 48 : i64}
  return
}

// -----

func.func @bad(%ids: memref<?xi32>, %w: memref<?xf32>, %c: memref<?xi32>, %off: memref<9xi32>,
               %o: memref<?xi64>, %s: memref<?xi32>, %p: memref<?xi64>, %r: memref<?xf32>) {
  // expected-error @+1 {{chunk_routes must be a positive multiple of threads = 256, got 1000}}
  gg.sort_routes ids(%ids : memref<?xi32>) weights(%w : memref<?xf32>)
      chunk_counts(%c : memref<?xi32>) offsets(%off : memref<9xi32>)
      order(%o : memref<?xi64>) source(%s : memref<?xi32>)
      position(%p : memref<?xi64>) route(%r : memref<?xf32>)
      {experts = 8 : i64, top_k = 2 : i64, chunk_routes = 1000 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%ids: memref<?xi32>, %w: memref<?xf32>, %c: memref<?xi32>, %off: memref<34xi32>,
               %o: memref<?xi64>, %s: memref<?xi32>, %p: memref<?xi64>, %r: memref<?xf32>) {
  // expected-error @+1 {{experts must be in [1, threads = 32], got 33}}
  gg.sort_routes ids(%ids : memref<?xi32>) weights(%w : memref<?xf32>)
      chunk_counts(%c : memref<?xi32>) offsets(%off : memref<34xi32>)
      order(%o : memref<?xi64>) source(%s : memref<?xi32>)
      position(%p : memref<?xi64>) route(%r : memref<?xf32>)
      {experts = 33 : i64, top_k = 2 : i64, chunk_routes = 64 : i64, threads = 32 : i64}
  return
}

// -----

func.func @bad(%ids: memref<?xi32>, %w: memref<?xf32>, %c: memref<?xi32>, %off: memref<9xi32>,
               %o: memref<?xi64>, %s: memref<?xi32>, %p: memref<?xi64>, %r: memref<?xf32>) {
  // expected-error @+1 {{top_k must be at least 1, got 0}}
  gg.sort_routes ids(%ids : memref<?xi32>) weights(%w : memref<?xf32>)
      chunk_counts(%c : memref<?xi32>) offsets(%off : memref<9xi32>)
      order(%o : memref<?xi64>) source(%s : memref<?xi32>)
      position(%p : memref<?xi64>) route(%r : memref<?xf32>)
      {experts = 8 : i64, top_k = 0 : i64, chunk_routes = 1024 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%ids: memref<?xi32>, %w: memref<?xf32>, %c: memref<?xi32>, %off: memref<641xi32>,
               %o: memref<?xi64>, %s: memref<?xi32>, %p: memref<?xi64>, %r: memref<?xf32>) {
  // expected-error @+1 {{needs 97792 bytes of shared memory for 640 experts and 1024 threads, more than the 49152 a kernel declares statically; use fewer threads}}
  gg.sort_routes ids(%ids : memref<?xi32>) weights(%w : memref<?xf32>)
      chunk_counts(%c : memref<?xi32>) offsets(%off : memref<641xi32>)
      order(%o : memref<?xi64>) source(%s : memref<?xi32>)
      position(%p : memref<?xi64>) route(%r : memref<?xf32>)
      {experts = 640 : i64, top_k = 2 : i64, chunk_routes = 1024 : i64, threads = 1024 : i64}
  return
}

// -----

func.func @bad(%ids: memref<?xi16>, %w: memref<?xf32>, %c: memref<?xi32>, %off: memref<9xi32>,
               %o: memref<?xi64>, %s: memref<?xi32>, %p: memref<?xi64>, %r: memref<?xf32>) {
  // expected-error @+1 {{ids must hold i32 or i64, got 'i16'}}
  gg.sort_routes ids(%ids : memref<?xi16>) weights(%w : memref<?xf32>)
      chunk_counts(%c : memref<?xi32>) offsets(%off : memref<9xi32>)
      order(%o : memref<?xi64>) source(%s : memref<?xi32>)
      position(%p : memref<?xi64>) route(%r : memref<?xf32>)
      {experts = 8 : i64, top_k = 2 : i64, chunk_routes = 1024 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%ids: memref<?xi32>, %w: memref<?xbf16>, %c: memref<?xi32>, %off: memref<9xi32>,
               %o: memref<?xi64>, %s: memref<?xi32>, %p: memref<?xi64>, %r: memref<?xf32>) {
  // expected-error @+1 {{weights must hold f32, got 'bf16'}}
  gg.sort_routes ids(%ids : memref<?xi32>) weights(%w : memref<?xbf16>)
      chunk_counts(%c : memref<?xi32>) offsets(%off : memref<9xi32>)
      order(%o : memref<?xi64>) source(%s : memref<?xi32>)
      position(%p : memref<?xi64>) route(%r : memref<?xf32>)
      {experts = 8 : i64, top_k = 2 : i64, chunk_routes = 1024 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%ids: memref<?xi32>, %w: memref<?xf32>, %c: memref<?xi32>, %off: memref<9xi32>,
               %o: memref<?xi64>, %s: memref<?xi64>, %p: memref<?xi64>, %r: memref<?xf32>) {
  // expected-error @+1 {{source must hold i32, got 'i64'}}
  gg.sort_routes ids(%ids : memref<?xi32>) weights(%w : memref<?xf32>)
      chunk_counts(%c : memref<?xi32>) offsets(%off : memref<9xi32>)
      order(%o : memref<?xi64>) source(%s : memref<?xi64>)
      position(%p : memref<?xi64>) route(%r : memref<?xf32>)
      {experts = 8 : i64, top_k = 2 : i64, chunk_routes = 1024 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%ids: memref<?xi32>, %w: memref<?xf32>, %c: memref<?xi32>, %off: memref<9xi32>,
               %o: memref<?xi64>, %s: memref<?xi32>, %p: memref<?x2xi64>, %r: memref<?xf32>) {
  // expected-error @+1 {{position must be a 1-D memref with the identity layout, got 'memref<?x2xi64>'}}
  gg.sort_routes ids(%ids : memref<?xi32>) weights(%w : memref<?xf32>)
      chunk_counts(%c : memref<?xi32>) offsets(%off : memref<9xi32>)
      order(%o : memref<?xi64>) source(%s : memref<?xi32>)
      position(%p : memref<?x2xi64>) route(%r : memref<?xf32>)
      {experts = 8 : i64, top_k = 2 : i64, chunk_routes = 1024 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%ids: memref<10xi32>, %w: memref<?xf32>, %c: memref<?xi32>, %off: memref<9xi32>,
               %o: memref<12xi64>, %s: memref<?xi32>, %p: memref<?xi64>, %r: memref<?xf32>) {
  // expected-error @+1 {{order has 12 routes where the operands before it have 10}}
  gg.sort_routes ids(%ids : memref<10xi32>) weights(%w : memref<?xf32>)
      chunk_counts(%c : memref<?xi32>) offsets(%off : memref<9xi32>)
      order(%o : memref<12xi64>) source(%s : memref<?xi32>)
      position(%p : memref<?xi64>) route(%r : memref<?xf32>)
      {experts = 8 : i64, top_k = 2 : i64, chunk_routes = 1024 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%ids: memref<9xi32>, %w: memref<?xf32>, %c: memref<?xi32>, %off: memref<9xi32>,
               %o: memref<?xi64>, %s: memref<?xi32>, %p: memref<?xi64>, %r: memref<?xf32>) {
  // expected-error @+1 {{holds 9 routes, not a multiple of top_k = 2}}
  gg.sort_routes ids(%ids : memref<9xi32>) weights(%w : memref<?xf32>)
      chunk_counts(%c : memref<?xi32>) offsets(%off : memref<9xi32>)
      order(%o : memref<?xi64>) source(%s : memref<?xi32>)
      position(%p : memref<?xi64>) route(%r : memref<?xf32>)
      {experts = 8 : i64, top_k = 2 : i64, chunk_routes = 1024 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%ids: memref<?xi32>, %w: memref<?xf32>, %c: memref<?xi32>, %off: memref<8xi32>,
               %o: memref<?xi64>, %s: memref<?xi32>, %p: memref<?xi64>, %r: memref<?xf32>) {
  // expected-error @+1 {{offsets must have experts + 1 = 9 entries, got 8}}
  gg.sort_routes ids(%ids : memref<?xi32>) weights(%w : memref<?xf32>)
      chunk_counts(%c : memref<?xi32>) offsets(%off : memref<8xi32>)
      order(%o : memref<?xi64>) source(%s : memref<?xi32>)
      position(%p : memref<?xi64>) route(%r : memref<?xf32>)
      {experts = 8 : i64, top_k = 2 : i64, chunk_routes = 1024 : i64, threads = 256 : i64}
  return
}

// -----

func.func @bad(%ids: memref<?xi32>, %w: memref<?xf32>, %c: memref<?xi32>, %off: memref<?xi32>,
               %o: memref<?xi64>, %s: memref<?xi32>, %p: memref<?xi64>, %r: memref<?xf32>) {
  // expected-error @+1 {{offsets must have experts + 1 = 9 entries, got ?}}
  gg.sort_routes ids(%ids : memref<?xi32>) weights(%w : memref<?xf32>)
      chunk_counts(%c : memref<?xi32>) offsets(%off : memref<?xi32>)
      order(%o : memref<?xi64>) source(%s : memref<?xi32>)
      position(%p : memref<?xi64>) route(%r : memref<?xf32>)
      {experts = 8 : i64, top_k = 2 : i64, chunk_routes = 1024 : i64, threads = 256 : i64}
  return
}
