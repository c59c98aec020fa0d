// RUN: ggc-opt %s -split-input-file -ggk-defer-epilogue -verify-diagnostics

// Deferred, the epilogue runs in the next tile: a value of its own tile's
// body that it reads other than through its operands would be the next
// tile's there.
func.func private @store(i32, !ggk.acc<64x8xf32>)
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func @reads_the_body(%groups: !llvm.ptr<1>, %m: i64, %first: i32,
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
          ggk.yield %a : !ggk.acc<64x8xf32>
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
      ggk.yield %zero, %count : !ggk.acc<64x8xf32>, i32
    }
    // expected-error @+1 {{reads a value of its tile's body other than its operands; the deferred epilogue would read the next tile's}}
    ggk.tile_epilogue(%group, %m_block, %n_block, %row_start, %group_start,
                      %rows_valid, %k_start, %k_first, %k_end, %num_k_blocks,
                      %shares_b)
        acc(%done#0 : !ggk.acc<64x8xf32>) {
    ^bb0(%g: i32, %mb: i32, %nb: i32, %rs: i32, %gs: i32, %rv: i32, %ks: i32,
         %kf: i32, %ke: i32, %nk: i32, %sb: i32, %a: !ggk.acc<64x8xf32>):
      func.call @store(%m_block, %a) : (i32, !ggk.acc<64x8xf32>) -> ()
      ggk.yield
    }
    ggk.yield %done#1 : i32
  } -> i32
  func.return %n : i32
}

// -----

// A tile has one overlapping K loop and one end.
func.func private @store(i32, !ggk.acc<64x8xf32>)
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func @two_epilogues(%groups: !llvm.ptr<1>, %m: i64, %first: i32,
                          %zero: !ggk.acc<64x8xf32>) -> i32 {
  %c0 = arith.constant 0 : i32
  // expected-error @+1 {{has 1 overlapping K loops and 2 tile epilogues; a deferred epilogue needs one of each per tile}}
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
          ggk.yield %a : !ggk.acc<64x8xf32>
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
      ggk.yield %zero, %count : !ggk.acc<64x8xf32>, i32
    }
    ggk.tile_epilogue(%group, %m_block, %n_block, %row_start, %group_start,
                      %rows_valid, %k_start, %k_first, %k_end, %num_k_blocks,
                      %shares_b)
        acc(%done#0 : !ggk.acc<64x8xf32>) {
    ^bb0(%g: i32, %mb: i32, %nb: i32, %rs: i32, %gs: i32, %rv: i32, %ks: i32,
         %kf: i32, %ke: i32, %nk: i32, %sb: i32, %a: !ggk.acc<64x8xf32>):
      func.call @store(%mb, %a) : (i32, !ggk.acc<64x8xf32>) -> ()
      ggk.yield
    }
    ggk.tile_epilogue(%group, %m_block, %n_block, %row_start, %group_start,
                      %rows_valid, %k_start, %k_first, %k_end, %num_k_blocks,
                      %shares_b)
        acc(%done#0 : !ggk.acc<64x8xf32>) {
    ^bb0(%g: i32, %mb: i32, %nb: i32, %rs: i32, %gs: i32, %rv: i32, %ks: i32,
         %kf: i32, %ke: i32, %nk: i32, %sb: i32, %a: !ggk.acc<64x8xf32>):
      func.call @store(%mb, %a) : (i32, !ggk.acc<64x8xf32>) -> ()
      ggk.yield
    }
    ggk.yield %done#1 : i32
  } -> i32
  func.return %n : i32
}

// -----

// The carried accumulator starts as zeros of f32.
func.func private @store(i32, !ggk.acc<64x8xf32>)
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func @f32_accumulator(%groups: !llvm.ptr<1>, %m: i64, %first: i32,
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
          ggk.yield %a : !ggk.acc<64x8xf32>
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
      ggk.yield %zero, %count : !ggk.acc<64x8xf32>, i32
    }
    // expected-error @+1 {{carries its accumulator to the next tile, which starts as zeros: it must be a !ggk.acc, got 'i32'}}
    ggk.tile_epilogue(%group, %m_block, %n_block, %row_start, %group_start,
                      %rows_valid, %k_start, %k_first, %k_end, %num_k_blocks,
                      %shares_b)
        acc(%k_end : i32) {
    ^bb0(%g: i32, %mb: i32, %nb: i32, %rs: i32, %gs: i32, %rv: i32, %ks: i32,
         %kf: i32, %ke: i32, %nk: i32, %sb: i32, %a: i32):
      func.call @store(%mb, %zero) : (i32, !ggk.acc<64x8xf32>) -> ()
      ggk.yield
    }
    ggk.yield %done#1 : i32
  } -> i32
  func.return %n : i32
}

// -----

// The previous tile's epilogue goes into the loop's overlap step or the
// idle path: one of them runs in every tile only where the loop stands
// directly in the work region.
func.func private @store(i32, !ggk.acc<64x8xf32>)
func.func private @issue(i32, i32, i32) -> !ggk.acc<64x8xf32>
func.func @nested_loop(%groups: !llvm.ptr<1>, %m: i64, %first: i32,
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
      %r:2 = scf.execute_region -> (!ggk.acc<64x8xf32>, i32) {
      // expected-error @+1 {{must stand in the work region of a ggk.warpgroup_tile of its tile's body to take the previous tile's epilogue}}
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
          ggk.yield %a : !ggk.acc<64x8xf32>
        } end_block {
        ^bb0(%kb: i32):
          ggk.yield
        } release {
        ^bb0(%stage: i32):
          ggk.yield
        } overlap {
          ggk.yield
        }
      scf.yield %acc, %end : !ggk.acc<64x8xf32>, i32
      }
      ggk.yield %r#0, %r#1 : !ggk.acc<64x8xf32>, i32
    } idle {
      ggk.yield %zero, %count : !ggk.acc<64x8xf32>, i32
    }
    ggk.tile_epilogue(%group, %m_block, %n_block, %row_start, %group_start,
                      %rows_valid, %k_start, %k_first, %k_end, %num_k_blocks,
                      %shares_b)
        acc(%done#0 : !ggk.acc<64x8xf32>) {
    ^bb0(%g: i32, %mb: i32, %nb: i32, %rs: i32, %gs: i32, %rv: i32, %ks: i32,
         %kf: i32, %ke: i32, %nk: i32, %sb: i32, %a: !ggk.acc<64x8xf32>):
      func.call @store(%mb, %a) : (i32, !ggk.acc<64x8xf32>) -> ()
      ggk.yield
    }
    ggk.yield %done#1 : i32
  } -> i32
  func.return %n : i32
}

// -----

// An epilogue ends a tile of a ggk.foreach_tile.
func.func @no_loop(%f: i32, %acc: f32) {
  // expected-error @+1 {{must stand in a ggk.foreach_tile's body: it ends one of its tiles}}
  ggk.tile_epilogue(%f, %f, %f, %f, %f, %f, %f, %f, %f, %f, %f) acc(%acc : f32) {
  ^bb0(%a0: i32, %a1: i32, %a2: i32, %a3: i32, %a4: i32, %a5: i32, %a6: i32,
       %a7: i32, %a8: i32, %a9: i32, %a10: i32, %a: f32):
    ggk.yield
  }
  func.return
}
