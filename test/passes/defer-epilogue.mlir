// RUN: ggc-opt %s -split-input-file -ggk-defer-epilogue -canonicalize | FileCheck %s --implicit-check-not=ggk.tile_epilogue

// Before: a consumer's loop over tiles whose K loop is a pipelined
// promotion loop; each tile ends in its epilogue (here a call storing the
// tile's M and N block and accumulator). After: the loop carries the
// finished tile (pending flag, ten fields, accumulator; first false, zeros
// and a zero accumulator); the next tile stores it in the promotion loop's
// `overlap` (beside its first wgmma) or, on the idle path, first thing; a
// tile without K blocks takes the idle path (`when`); the last tile is
// stored after the loop.
// CHECK-LABEL: func.func @pipelined
// CHECK: %[[ZEROS:.*]] = ggk.acc_zero : !ggk.acc<64x8xf32>
// CHECK: %[[R:.*]]:14 = ggk.foreach_tile masked {{.*}} iter_args(%c0_i32, %false, %c0_i32, %c0_i32, %c0_i32, %c0_i32, %c0_i32, %c0_i32, %c0_i32, %c0_i32, %c0_i32, %c0_i32, %c0_i32, %[[ZEROS]] : i32, i1, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, !ggk.acc<64x8xf32>)
// CHECK: ^bb0(%[[G:[^:]*]]: i32, %[[MB:[^:]*]]: i32, %[[NB:[^:]*]]: i32, {{.*}}, %[[NK:[^:]*]]: i32, %[[SB:[^:]*]]: i32, %[[COUNT:[^:]*]]: i32, %[[PENDING:[^:]*]]: i1, %{{[^:]*}}: i32, %[[PMB:[^:]*]]: i32, %[[PNB:[^:]*]]: i32, {{.*}}, %[[PACC:[^:]*]]: !ggk.acc<64x8xf32>):
// CHECK: %[[WORKS:.*]] = arith.cmpi sgt, %[[NK]], %c0_i32
// CHECK: %[[DONE:.*]]:2 = ggk.warpgroup_tile {{.*}} when(%[[WORKS]])
// CHECK: overlap {
// CHECK-NEXT: scf.if %[[PENDING]] {
// CHECK-NEXT: call @store(%[[PMB]], %[[PNB]], %[[PACC]])
// CHECK: } idle {
// CHECK-NEXT: scf.if %[[PENDING]] {
// CHECK-NEXT: call @store(%[[PMB]], %[[PNB]], %[[PACC]])
// CHECK-NEXT: }
// CHECK-NEXT: call @idle
// CHECK-NOT: call @store
// CHECK: ggk.yield %[[DONE]]#1, %true, %[[G]], %[[MB]], %[[NB]], {{.*}}, %[[NK]], %[[SB]], %[[DONE]]#0 :
// CHECK: scf.if %[[R]]#1 {
// CHECK-NEXT: call @store(%[[R]]#3, %[[R]]#4, %[[R]]#13)
// CHECK: return %[[R]]#0
func.func private @store(i32, i32, !ggk.acc<64x8xf32>)
func.func private @main_loop(i32, i32) -> !ggk.acc<64x8xf32>
func.func private @idle(i32, i32) -> i32
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func private @promote(!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32) -> !ggk.acc<64x8xf32>
func.func @pipelined(%groups: !llvm.ptr<1>, %m: i64, %first: i32,
                     %zero: !ggk.acc<64x8xf32>) -> i32 {
  %c0 = arith.constant 0 : i32
  %n = ggk.foreach_tile masked groups(%groups : !llvm.ptr<1>, i32) size(%m)
      iter_args(%c0 : i32) attributes {tile = array<i64: 128, 128, 128>,
      num_groups = 8, m = 256, n = 4096, k = 7168, cluster = 1, k_alignment = 1} {
  ^bb0(%group: i32, %m_block: i32, %n_block: i32, %row_start: i32,
       %group_start: i32, %rows_valid: i32, %k_start: i32, %k_first: i32,
       %k_end: i32, %num_k_blocks: i32, %shares_b: i32, %count: i32):
    %done:2 = ggk.warpgroup_tile first_row(%first) rows(%rows_valid)
        attributes {padding = #gg.padding<idle_warpgroups = compute>}
        -> !ggk.acc<64x8xf32>, i32 {
      %acc, %end = ggk.promotion_loop %num_k_blocks from %count acc(%zero : !ggk.acc<64x8xf32>)
          attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = pipelined, scales = none, registers = [24, 240], staging = none>}
        prefetch {
        ^bb0(%k: i32):
          ggk.yield
        } start {
          ggk.yield
        } issue {
        ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
          %p = func.call @issue(%k, %stage, %phase) : (i32, i32, i32) -> !ggk.acc<64x8xf32>
          ggk.yield %p : !ggk.acc<64x8xf32>
        } read_scales {
        ^bb0(%k: i32, %j: i32, %stage: i32):
          ggk.yield
        } promote {
        ^bb0(%a: !ggk.acc<64x8xf32>, %p: !ggk.acc<64x8xf32>, %k: i32, %j: i32):
          %sum = func.call @promote(%a, %p, %k) : (!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32) -> !ggk.acc<64x8xf32>
          ggk.yield %sum : !ggk.acc<64x8xf32>
        } end_block {
        ^bb0(%kb: i32):
          ggk.yield
        } release {
        ^bb0(%stage: i32):
          ggk.yield
        } overlap {
          ggk.yield
        }
      ggk.yield %acc, %end : !ggk.acc<64x8xf32>, i32
    } idle {
      %passed = func.call @idle(%num_k_blocks, %count) : (i32, i32) -> i32
      ggk.yield %zero, %passed : !ggk.acc<64x8xf32>, i32
    }
    ggk.tile_epilogue(%group, %m_block, %n_block, %row_start, %group_start,
                      %rows_valid, %k_start, %k_first, %k_end, %num_k_blocks,
                      %shares_b)
        acc(%done#0 : !ggk.acc<64x8xf32>) {
    ^bb0(%g: i32, %mb: i32, %nb: i32, %rs: i32, %gs: i32, %rv: i32, %ks: i32,
         %kf: i32, %ke: i32, %nk: i32, %sb: i32, %a: !ggk.acc<64x8xf32>):
      func.call @store(%mb, %nb, %a) : (i32, i32, !ggk.acc<64x8xf32>) -> ()
      ggk.yield
    }
    ggk.yield %done#1 : i32
  } -> i32
  func.return %n : i32
}

// -----

// A tile that carries a word besides its ten fields (the generator's
// prefetched row-vector value, loaded when the tile starts): the word is
// carried with the fields and the next tile's overlap stores the pending
// tile with its own word.
// CHECK-LABEL: func.func @pipelined_words
// CHECK: ggk.foreach_tile masked {{.*}} iter_args(%c0_i32, %false, %c0_i32, %c0_i32, %c0_i32, %c0_i32, %c0_i32, %c0_i32, %c0_i32, %c0_i32, %c0_i32, %c0_i32, %c0_i32, %c0_i32, %{{.*}} : i32, i1, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, i32, !ggk.acc<64x8xf32>)
// CHECK: ^bb0({{.*}}, %[[PENDING:[^:]*]]: i1, %{{[^:]*}}: i32, %{{[^:]*}}: i32, %[[PNB:[^:]*]]: i32, {{.*}}, %[[PW:[^:]*]]: i32, %[[PACC:[^:]*]]: !ggk.acc<64x8xf32>):
// CHECK: %[[W:[^ ]*]] = func.call @weight
// CHECK: overlap {
// CHECK-NEXT: scf.if %[[PENDING]] {
// CHECK-NEXT: call @store_weighted(%[[PNB]], %[[PW]], %[[PACC]])
// CHECK: ggk.yield {{.*}}, %true, {{.*}}, %[[W]], %{{.*}} :
func.func private @store_weighted(i32, i32, !ggk.acc<64x8xf32>)
func.func private @weight(i32) -> i32
func.func private @idle(i32, i32) -> i32
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func private @promote(!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32) -> !ggk.acc<64x8xf32>
func.func @pipelined_words(%groups: !llvm.ptr<1>, %m: i64, %first: i32,
                     %zero: !ggk.acc<64x8xf32>) -> i32 {
  %c0 = arith.constant 0 : i32
  %n = ggk.foreach_tile masked groups(%groups : !llvm.ptr<1>, i32) size(%m)
      iter_args(%c0 : i32) attributes {tile = array<i64: 128, 128, 128>,
      num_groups = 8, m = 256, n = 4096, k = 7168, cluster = 1, k_alignment = 1} {
  ^bb0(%group: i32, %m_block: i32, %n_block: i32, %row_start: i32,
       %group_start: i32, %rows_valid: i32, %k_start: i32, %k_first: i32,
       %k_end: i32, %num_k_blocks: i32, %shares_b: i32, %count: i32):
    %w = func.call @weight(%row_start) : (i32) -> i32
    %done:2 = ggk.warpgroup_tile first_row(%first) rows(%rows_valid)
        attributes {padding = #gg.padding<idle_warpgroups = compute>}
        -> !ggk.acc<64x8xf32>, i32 {
      %acc, %end = ggk.promotion_loop %num_k_blocks from %count acc(%zero : !ggk.acc<64x8xf32>)
          attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = pipelined, scales = none, registers = [24, 240], staging = none>}
        prefetch {
        ^bb0(%k: i32):
          ggk.yield
        } start {
          ggk.yield
        } issue {
        ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
          %p = func.call @issue(%k, %stage, %phase) : (i32, i32, i32) -> !ggk.acc<64x8xf32>
          ggk.yield %p : !ggk.acc<64x8xf32>
        } read_scales {
        ^bb0(%k: i32, %j: i32, %stage: i32):
          ggk.yield
        } promote {
        ^bb0(%a: !ggk.acc<64x8xf32>, %p: !ggk.acc<64x8xf32>, %k: i32, %j: i32):
          %sum = func.call @promote(%a, %p, %k) : (!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32) -> !ggk.acc<64x8xf32>
          ggk.yield %sum : !ggk.acc<64x8xf32>
        } end_block {
        ^bb0(%kb: i32):
          ggk.yield
        } release {
        ^bb0(%stage: i32):
          ggk.yield
        } overlap {
          ggk.yield
        }
      ggk.yield %acc, %end : !ggk.acc<64x8xf32>, i32
    } idle {
      %passed = func.call @idle(%num_k_blocks, %count) : (i32, i32) -> i32
      ggk.yield %zero, %passed : !ggk.acc<64x8xf32>, i32
    }
    ggk.tile_epilogue(%group, %m_block, %n_block, %row_start, %group_start,
                      %rows_valid, %k_start, %k_first, %k_end, %num_k_blocks, %shares_b, %w)
        acc(%done#0 : !ggk.acc<64x8xf32>) {
    ^bb0(%g: i32, %mb: i32, %nb: i32, %rs: i32, %gs: i32, %rv: i32, %ks: i32,
         %kf: i32, %ke: i32, %nk: i32, %sb: i32, %wd: i32, %a: !ggk.acc<64x8xf32>):
      func.call @store_weighted(%nb, %wd, %a) : (i32, i32, !ggk.acc<64x8xf32>) -> ()
      ggk.yield
    }
    ggk.yield %done#1 : i32
  } -> i32
  func.return %n : i32
}

// -----

// Before: the same tile with a serial promotion loop. After: the epilogue
// where it stood, on the tile's own values; nothing carried.
// CHECK-LABEL: func.func @serial
// CHECK: %[[R:.*]] = ggk.foreach_tile masked {{.*}} iter_args(%c0_i32 : i32)
// CHECK: ^bb0(%{{[^:]*}}: i32, %[[MB:[^:]*]]: i32, %[[NB:[^:]*]]: i32,
// CHECK: %[[DONE:.*]]:2 = ggk.warpgroup_tile first_row(%{{[^)]*}}) rows(%{{[^)]*}}) attributes
// CHECK: overlap {
// CHECK-NEXT: ggk.yield
// CHECK: call @store(%[[MB]], %[[NB]], %[[DONE]]#0)
// CHECK-NEXT: ggk.yield %[[DONE]]#1 : i32
func.func private @store(i32, i32, !ggk.acc<64x8xf32>)
func.func private @main_loop(i32, i32) -> !ggk.acc<64x8xf32>
func.func private @idle(i32, i32) -> i32
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func private @promote(!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32) -> !ggk.acc<64x8xf32>
func.func @serial(%groups: !llvm.ptr<1>, %m: i64, %first: i32,
                     %zero: !ggk.acc<64x8xf32>) -> i32 {
  %c0 = arith.constant 0 : i32
  %n = ggk.foreach_tile masked groups(%groups : !llvm.ptr<1>, i32) size(%m)
      iter_args(%c0 : i32) attributes {tile = array<i64: 128, 128, 128>,
      num_groups = 8, m = 256, n = 4096, k = 7168, cluster = 1, k_alignment = 1} {
  ^bb0(%group: i32, %m_block: i32, %n_block: i32, %row_start: i32,
       %group_start: i32, %rows_valid: i32, %k_start: i32, %k_first: i32,
       %k_end: i32, %num_k_blocks: i32, %shares_b: i32, %count: i32):
    %done:2 = ggk.warpgroup_tile first_row(%first) rows(%rows_valid)
        attributes {padding = #gg.padding<idle_warpgroups = compute>}
        -> !ggk.acc<64x8xf32>, i32 {
      %acc, %end = ggk.promotion_loop %num_k_blocks from %count acc(%zero : !ggk.acc<64x8xf32>)
          attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [24, 240], staging = none>}
        prefetch {
        ^bb0(%k: i32):
          ggk.yield
        } start {
          ggk.yield
        } issue {
        ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
          %p = func.call @issue(%k, %stage, %phase) : (i32, i32, i32) -> !ggk.acc<64x8xf32>
          ggk.yield %p : !ggk.acc<64x8xf32>
        } read_scales {
        ^bb0(%k: i32, %j: i32, %stage: i32):
          ggk.yield
        } promote {
        ^bb0(%a: !ggk.acc<64x8xf32>, %p: !ggk.acc<64x8xf32>, %k: i32, %j: i32):
          %sum = func.call @promote(%a, %p, %k) : (!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32) -> !ggk.acc<64x8xf32>
          ggk.yield %sum : !ggk.acc<64x8xf32>
        } end_block {
        ^bb0(%kb: i32):
          ggk.yield
        } release {
        ^bb0(%stage: i32):
          ggk.yield
        } overlap {
          ggk.yield
        }
      ggk.yield %acc, %end : !ggk.acc<64x8xf32>, i32
    } idle {
      %passed = func.call @idle(%num_k_blocks, %count) : (i32, i32) -> i32
      ggk.yield %zero, %passed : !ggk.acc<64x8xf32>, i32
    }
    ggk.tile_epilogue(%group, %m_block, %n_block, %row_start, %group_start,
                      %rows_valid, %k_start, %k_first, %k_end, %num_k_blocks,
                      %shares_b)
        acc(%done#0 : !ggk.acc<64x8xf32>) {
    ^bb0(%g: i32, %mb: i32, %nb: i32, %rs: i32, %gs: i32, %rv: i32, %ks: i32,
         %kf: i32, %ke: i32, %nk: i32, %sb: i32, %a: !ggk.acc<64x8xf32>):
      func.call @store(%mb, %nb, %a) : (i32, i32, !ggk.acc<64x8xf32>) -> ()
      ggk.yield
    }
    ggk.yield %done#1 : i32
  } -> i32
  func.return %n : i32
}

// -----

// Before: the same tile with a serial promotion loop whose plan says
// epilogue_blocks = 1. After: deferred as with the pipelined one, the
// finished tile carried and stored in the next tile's `overlap` or idle
// path, the last after the loop.
// CHECK-LABEL: func.func @serial_overlapped
// CHECK: %[[R:.*]]:14 = ggk.foreach_tile masked
// CHECK: ^bb0({{.*}}, %[[PENDING:[^:]*]]: i1, %{{[^:]*}}: i32, %[[PMB:[^:]*]]: i32, %[[PNB:[^:]*]]: i32, {{.*}}, %[[PACC:[^:]*]]: !ggk.acc<64x8xf32>):
// CHECK: overlap {
// CHECK-NEXT: scf.if %[[PENDING]] {
// CHECK-NEXT: call @store(%[[PMB]], %[[PNB]], %[[PACC]])
// CHECK: } idle {
// CHECK-NEXT: scf.if %[[PENDING]] {
// CHECK-NEXT: call @store(%[[PMB]], %[[PNB]], %[[PACC]])
// CHECK: scf.if %[[R]]#1 {
// CHECK-NEXT: call @store(%[[R]]#3, %[[R]]#4, %[[R]]#13)
func.func private @store(i32, i32, !ggk.acc<64x8xf32>)
func.func private @main_loop(i32, i32) -> !ggk.acc<64x8xf32>
func.func private @idle(i32, i32) -> i32
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func private @promote(!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32) -> !ggk.acc<64x8xf32>
func.func @serial_overlapped(%groups: !llvm.ptr<1>, %m: i64, %first: i32,
                     %zero: !ggk.acc<64x8xf32>) -> i32 {
  %c0 = arith.constant 0 : i32
  %n = ggk.foreach_tile masked groups(%groups : !llvm.ptr<1>, i32) size(%m)
      iter_args(%c0 : i32) attributes {tile = array<i64: 128, 128, 128>,
      num_groups = 8, m = 256, n = 4096, k = 7168, cluster = 1, k_alignment = 1} {
  ^bb0(%group: i32, %m_block: i32, %n_block: i32, %row_start: i32,
       %group_start: i32, %rows_valid: i32, %k_start: i32, %k_first: i32,
       %k_end: i32, %num_k_blocks: i32, %shares_b: i32, %count: i32):
    %done:2 = ggk.warpgroup_tile first_row(%first) rows(%rows_valid)
        attributes {padding = #gg.padding<idle_warpgroups = compute>}
        -> !ggk.acc<64x8xf32>, i32 {
      %acc, %end = ggk.promotion_loop %num_k_blocks from %count acc(%zero : !ggk.acc<64x8xf32>)
          attributes {stages = 4 : i64, plan = #gg.kernel_plan<promotion = serial, scales = none, registers = [24, 240], staging = none, epilogue_blocks = 1>}
        prefetch {
        ^bb0(%k: i32):
          ggk.yield
        } start {
          ggk.yield
        } issue {
        ^bb0(%k: i32, %j: i32, %stage: i32, %phase: i32):
          %p = func.call @issue(%k, %stage, %phase) : (i32, i32, i32) -> !ggk.acc<64x8xf32>
          ggk.yield %p : !ggk.acc<64x8xf32>
        } read_scales {
        ^bb0(%k: i32, %j: i32, %stage: i32):
          ggk.yield
        } promote {
        ^bb0(%a: !ggk.acc<64x8xf32>, %p: !ggk.acc<64x8xf32>, %k: i32, %j: i32):
          %sum = func.call @promote(%a, %p, %k) : (!ggk.acc<64x8xf32>, !ggk.acc<64x8xf32>, i32) -> !ggk.acc<64x8xf32>
          ggk.yield %sum : !ggk.acc<64x8xf32>
        } end_block {
        ^bb0(%kb: i32):
          ggk.yield
        } release {
        ^bb0(%stage: i32):
          ggk.yield
        } overlap {
          ggk.yield
        }
      ggk.yield %acc, %end : !ggk.acc<64x8xf32>, i32
    } idle {
      %passed = func.call @idle(%num_k_blocks, %count) : (i32, i32) -> i32
      ggk.yield %zero, %passed : !ggk.acc<64x8xf32>, i32
    }
    ggk.tile_epilogue(%group, %m_block, %n_block, %row_start, %group_start,
                      %rows_valid, %k_start, %k_first, %k_end, %num_k_blocks,
                      %shares_b)
        acc(%done#0 : !ggk.acc<64x8xf32>) {
    ^bb0(%g: i32, %mb: i32, %nb: i32, %rs: i32, %gs: i32, %rv: i32, %ks: i32,
         %kf: i32, %ke: i32, %nk: i32, %sb: i32, %a: !ggk.acc<64x8xf32>):
      func.call @store(%mb, %nb, %a) : (i32, i32, !ggk.acc<64x8xf32>) -> ()
      ggk.yield
    }
    ggk.yield %done#1 : i32
  } -> i32
  func.return %n : i32
}

// -----

// Before: a kernel without a producer (the plan's producer = none): each
// tile's consumers first copy its first stages (here a call), then run
// their K loop, then its epilogue. After: the loop carries the finished
// tile, and the next tile stores it right after issuing its own first
// copies, before its K loop, so that their latency passes behind the
// stores; the last tile is stored after the loop.
// CHECK-LABEL: func.func @no_producer
// CHECK: ggk.warp_specialize
// CHECK: %[[R:.*]]:14 = ggk.foreach_tile contiguous
// CHECK: ^bb0(%{{[^:]*}}: i32, %[[MB:[^:]*]]: i32, %[[NB:[^:]*]]: i32, {{.*}}, %[[PENDING:[^:]*]]: i1, %{{[^:]*}}: i32, %[[PMB:[^:]*]]: i32, %[[PNB:[^:]*]]: i32, {{.*}}, %[[PACC:[^:]*]]: !ggk.acc<64x8xf32>):
// CHECK-NEXT: call @copy_first_stages
// CHECK-NEXT: scf.if %[[PENDING]] {
// CHECK-NEXT: call @store(%[[PMB]], %[[PNB]], %[[PACC]])
// CHECK-NEXT: }
// CHECK-NEXT: %[[DONE:.*]]:2 = ggk.warpgroup_tile
// CHECK-NOT: call @store
// CHECK: ggk.yield %[[DONE]]#1, %true, %{{[^,]*}}, %[[MB]], %[[NB]], {{.*}}, %[[DONE]]#0 :
// CHECK: scf.if %[[R]]#1 {
// CHECK-NEXT: call @store(%[[R]]#3, %[[R]]#4, %[[R]]#13)
module attributes {gg.target = "sm_80"} {
func.func private @store(i32, i32, !ggk.acc<64x8xf32>)
func.func private @copy_first_stages(i32)
func.func private @main_loop(i32, i32) -> !ggk.acc<64x8xf32>
func.func private @idle(i32, i32) -> i32
func.func @no_producer(%groups: !llvm.ptr<1>, %m: i64, %first: i32,
                       %zero: !ggk.acc<64x8xf32>, %tid: i32, %leader: i1) {
  ggk.warp_specialize %tid, %leader attributes {
      plan = #gg.kernel_plan<promotion = serial, scales = none,
                             registers = [256, 256], staging = none,
                             release_lag = 0, producer = none>,
      consumer_warpgroups = 2}
  producer {
    ggk.yield
  } consumers {
  ^bb0(%consumer: i32):
    %c0 = arith.constant 0 : i32
    %n = ggk.foreach_tile contiguous groups(%groups : !llvm.ptr<1>, i32) size(%m)
        iter_args(%c0 : i32) attributes {tile = array<i64: 128, 128, 64>,
        num_groups = 8, m = -1, n = 4096, k = 4096, cluster = 1, k_alignment = 1} {
    ^bb0(%group: i32, %m_block: i32, %n_block: i32, %row_start: i32,
         %group_start: i32, %rows_valid: i32, %k_start: i32, %k_first: i32,
         %k_end: i32, %num_k_blocks: i32, %shares_b: i32, %count: i32):
      func.call @copy_first_stages(%count) : (i32) -> ()
      %done:2 = ggk.warpgroup_tile first_row(%first) rows(%rows_valid)
          attributes {padding = #gg.padding<idle_warpgroups = compute>}
          -> !ggk.acc<64x8xf32>, i32 {
        %acc = func.call @main_loop(%num_k_blocks, %count) : (i32, i32) -> !ggk.acc<64x8xf32>
        ggk.yield %acc, %count : !ggk.acc<64x8xf32>, i32
      } idle {
        %passed = func.call @idle(%num_k_blocks, %count) : (i32, i32) -> i32
        ggk.yield %zero, %passed : !ggk.acc<64x8xf32>, i32
      }
      ggk.tile_epilogue(%group, %m_block, %n_block, %row_start, %group_start,
                        %rows_valid, %k_start, %k_first, %k_end, %num_k_blocks,
                      %shares_b)
          acc(%done#0 : !ggk.acc<64x8xf32>) {
      ^bb0(%g: i32, %mb: i32, %nb: i32, %rs: i32, %gs: i32, %rv: i32, %ks: i32,
           %kf: i32, %ke: i32, %nk: i32, %sb: i32, %a: !ggk.acc<64x8xf32>):
        func.call @store(%mb, %nb, %a) : (i32, i32, !ggk.acc<64x8xf32>) -> ()
        ggk.yield
      }
      ggk.yield %done#1 : i32
    } -> i32
    ggk.yield
  }
  func.return
}
}

// -----

// A one-level K loop (bf16: ggk.k_loop) with epilogue_blocks = 1 takes the
// previous tile's epilogue in its overlap step, as a promotion loop does:
// beside block 0's wgmma, on the idle path first thing, after the last
// tile once.
// CHECK-LABEL: func.func @one_level
// CHECK: %[[R:.*]]:14 = ggk.foreach_tile
// CHECK: ^bb0({{.*}}, %[[NK:[^:]*]]: i32, %[[SB:[^:]*]]: i32, %[[COUNT:[^:]*]]: i32, %[[PENDING:[^:]*]]: i1, %{{[^:]*}}: i32, %[[PMB:[^:]*]]: i32, %[[PNB:[^:]*]]: i32, {{.*}}, %[[PACC:[^:]*]]: !ggk.acc<64x8xf32>):
// CHECK: %[[WORKS:.*]] = arith.cmpi sgt, %[[NK]], %c0_i32
// CHECK: ggk.warpgroup_tile {{.*}} when(%[[WORKS]])
// CHECK: ggk.k_loop {{.*}} attributes {epilogue_blocks = 1 : i64
// CHECK: overlap {
// CHECK-NEXT: scf.if %[[PENDING]] {
// CHECK-NEXT: call @store(%[[PMB]], %[[PNB]], %[[PACC]])
// CHECK: } idle {
// CHECK-NEXT: scf.if %[[PENDING]] {
// CHECK-NEXT: call @store(%[[PMB]], %[[PNB]], %[[PACC]])
// CHECK: scf.if %[[R]]#1 {
// CHECK-NEXT: call @store(%[[R]]#3, %[[R]]#4, %[[R]]#13)
func.func private @store(i32, i32, !ggk.acc<64x8xf32>)
func.func private @idle(i32, i32) -> i32
func.func private @mma(i32, i32, !ggk.acc<64x8xf32>) -> !ggk.acc<64x8xf32>
func.func @one_level(%groups: !llvm.ptr<1>, %m: i64, %first: i32,
                     %zero: !ggk.acc<64x8xf32>) -> i32 {
  %c0 = arith.constant 0 : i32
  %n = ggk.foreach_tile k_grouped groups(%groups : !llvm.ptr<1>, i32) size(%m)
      iter_args(%c0 : i32) attributes {tile = array<i64: 128, 128, 64>,
      num_groups = 8, m = 256, n = 4096, k = -9223372036854775808 : i64, cluster = 1, k_alignment = 8} {
  ^bb0(%group: i32, %m_block: i32, %n_block: i32, %row_start: i32,
       %group_start: i32, %rows_valid: i32, %k_start: i32, %k_first: i32,
       %k_end: i32, %num_k_blocks: i32, %shares_b: i32, %count: i32):
    %done:2 = ggk.warpgroup_tile first_row(%first) rows(%rows_valid)
        attributes {padding = #gg.padding<idle_warpgroups = compute>}
        -> !ggk.acc<64x8xf32>, i32 {
      %acc, %end = ggk.k_loop %num_k_blocks from %count acc(%zero : !ggk.acc<64x8xf32>)
          attributes {stages = 4 : i64, release_lag = 1 : i64, epilogue_blocks = 1 : i64}
        issue {
        ^bb0(%k: i32, %stage: i32, %phase: i32, %a: !ggk.acc<64x8xf32>):
          %s = func.call @mma(%k, %stage, %a) : (i32, i32, !ggk.acc<64x8xf32>) -> !ggk.acc<64x8xf32>
          ggk.yield %s : !ggk.acc<64x8xf32>
        } release {
        ^bb0(%stage: i32):
          ggk.yield
        } load_ahead {
        ^bb0(%k: i32, %it: i32):
          ggk.yield
        } overlap {
          ggk.yield
        }
      ggk.yield %acc, %end : !ggk.acc<64x8xf32>, i32
    } idle {
      %passed = func.call @idle(%num_k_blocks, %count) : (i32, i32) -> i32
      ggk.yield %zero, %passed : !ggk.acc<64x8xf32>, i32
    }
    ggk.tile_epilogue(%group, %m_block, %n_block, %row_start, %group_start,
                      %rows_valid, %k_start, %k_first, %k_end, %num_k_blocks,
                      %shares_b)
        acc(%done#0 : !ggk.acc<64x8xf32>) {
    ^bb0(%g: i32, %mb: i32, %nb: i32, %rs: i32, %gs: i32, %rv: i32, %ks: i32,
         %kf: i32, %ke: i32, %nk: i32, %sb: i32, %a: !ggk.acc<64x8xf32>):
      func.call @store(%mb, %nb, %a) : (i32, i32, !ggk.acc<64x8xf32>) -> ()
      ggk.yield
    }
    ggk.yield %done#1 : i32
  } -> i32
  func.return %n : i32
}
