// RUN: ggc-opt %s -gg-lower-to-nvvm | FileCheck %s

// Before: the FP8 weight gradient (k_grouped, 1x128 scales of both
// operands in the stages) on 128x176 tiles whose plan reads B's
// per-column scales at the wgmma's issue (column_scale_reads = at_issue).
// After: the K loop's promotion_loop does not keep the stage through the
// promotion (no promote_reads_stage, so ggk-pipeline-promotion gives it
// back once the wgmma is done); read_scales reads, beside A's scales, the
// thread's 44 column scales (two per 8 of the warpgroup's 176 columns)
// from the stage, and the promotion takes them from registers
// (per_column) instead of reading the stage.
// CHECK: ggk.promotion_loop {{.*}} attributes {plan = #gg.kernel_plan<{{.*}}, column_scale_reads = at_issue>, stages = 3 : i64} prefetch {
// CHECK: } read_scales {
// CHECK: ggk.read_block_scales
// CHECK: ggk.load_column_scales %{{.*}} at(%{{.*}}) {columns = 176 : i64} : f32, f32,
// CHECK: } promote {
// CHECK-NOT: ggk.shared_address
// CHECK: ggk.promote %{{.*}} into %{{.*}} rows({{.*}}) blocks({{.*}}) at({{.*}}) {block_n = 176 : i64, per_column}
// CHECK: } end_block {
module attributes {gg.target = "sm_90a"} {
  func.func @wgrad(%a: memref<256x?xf8E4M3FN>, %b: memref<256x?xf8E4M3FN>, %groups: memref<3xi32>,
                   %a_scale: memref<?x256xf32>, %b_scale: memref<?x256xf32>,
                   %out: memref<2x256x256xf32>) {
    gg.grouped_matmul k_grouped a(%a : memref<256x?xf8E4M3FN>) b(%b : memref<256x?xf8E4M3FN>)
        groups(%groups : memref<3xi32>)
        a_scale(%a_scale : memref<?x256xf32>, <block 1x128, mn_major>)
        b_scale(%b_scale : memref<?x256xf32>, <block 1x128, mn_major>)
        out(%out : memref<2x256x256xf32>)
        {accumulate, config = #gg.config<block = [128, 176, 128], stages = 3, cluster = [1, 1], sms = 132>,
         kernel_plan = #gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], staging = dense, column_scale_reads = at_issue>,
         overfetch = #gg.overfetch<rows = 0, k = 127>, padding = #gg.padding<idle_warpgroups = compute>,
         schedule = #gg.schedule<order = m_fastest>, store_pool = array<i64: 128, 64, 32, 16, 8, 4, 2, 1>}
    return
  }
}
