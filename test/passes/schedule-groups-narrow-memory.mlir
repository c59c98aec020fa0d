// RUN: ggc-opt %s -gg-schedule-groups=memory-gbps=3352 | FileCheck %s --check-prefix=NARROW
// RUN: ggc-opt %s -gg-schedule-groups | FileCheck %s --check-prefix=WIDE
// RUN: ggc-opt %s -gg-schedule-groups=memory-gbps=4915 | FileCheck %s --check-prefix=WIDE
// A negative bandwidth is refused, as gg-select-config refuses it.
// RUN: not ggc-opt %s -gg-schedule-groups=memory-gbps=-1 2>&1 | FileCheck %s --check-prefix=GBPS
// GBPS: error: gg-schedule-groups: memory-gbps must be 0 (unknown) or positive, got -1

// On a card of narrow memory (below 4,000 GB/s: an H100), contiguous f8
// groups hinted at 1,024 rows and walked M blocks first take bands of 8,
// where other cards (and an unknown bandwidth) take none. Hints of 512 and
// 2,048, bf16 operands and the f8 weights walked N first keep what any
// card takes.
// NARROW-LABEL: func.func @mid_groups
// NARROW: expected_m = 1024
// NARROW-SAME: schedule = #gg.schedule<order = m_fastest, m_band = 8>
// NARROW: expected_m = 512
// NARROW-SAME: schedule = #gg.schedule<order = m_fastest>
// NARROW: expected_m = 2048
// NARROW-SAME: schedule = #gg.schedule<order = m_fastest, m_band = 12>
// NARROW: memref<8x4096x7168xbf16>
// NARROW-SAME: schedule = #gg.schedule<order = m_fastest>
// NARROW: memref<8x7168x2048xf8E4M3FN>
// NARROW-SAME: schedule = #gg.schedule<order = n_fastest>
// WIDE-LABEL: func.func @mid_groups
// WIDE: expected_m = 1024
// WIDE-SAME: schedule = #gg.schedule<order = m_fastest>
// WIDE: expected_m = 512
// WIDE-SAME: schedule = #gg.schedule<order = m_fastest>
// WIDE: expected_m = 2048
// WIDE-SAME: schedule = #gg.schedule<order = m_fastest, m_band = 12>
// WIDE: memref<8x4096x7168xbf16>
// WIDE-SAME: schedule = #gg.schedule<order = m_fastest>
// WIDE: memref<8x7168x2048xf8E4M3FN>
// WIDE-SAME: schedule = #gg.schedule<order = n_fastest>
func.func @mid_groups(%a: memref<?x7168xf8E4M3FN>, %b: memref<8x4096x7168xf8E4M3FN>,
                      %off: memref<9xi32>, %o: memref<?x4096xbf16>,
                      %a16: memref<?x7168xbf16>, %b16: memref<8x4096x7168xbf16>,
                      %a2: memref<?x2048xf8E4M3FN>, %b2: memref<8x7168x2048xf8E4M3FN>,
                      %o2: memref<?x7168xbf16>) {
  gg.grouped_matmul contiguous a(%a : memref<?x7168xf8E4M3FN>)
      b(%b : memref<8x4096x7168xf8E4M3FN>) groups(%off : memref<9xi32>)
      out(%o : memref<?x4096xbf16>)
      {expected_m = 1024 : i64, config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul contiguous a(%a : memref<?x7168xf8E4M3FN>)
      b(%b : memref<8x4096x7168xf8E4M3FN>) groups(%off : memref<9xi32>)
      out(%o : memref<?x4096xbf16>)
      {expected_m = 512 : i64, config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul contiguous a(%a : memref<?x7168xf8E4M3FN>)
      b(%b : memref<8x4096x7168xf8E4M3FN>) groups(%off : memref<9xi32>)
      out(%o : memref<?x4096xbf16>)
      {expected_m = 2048 : i64, config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul contiguous a(%a16 : memref<?x7168xbf16>)
      b(%b16 : memref<8x4096x7168xbf16>) groups(%off : memref<9xi32>)
      out(%o : memref<?x4096xbf16>)
      {expected_m = 1024 : i64, config = #gg.config<block = [128, 128, 64], stages = 6, cluster = [1, 1], sms = 132>}
  gg.grouped_matmul contiguous a(%a2 : memref<?x2048xf8E4M3FN>)
      b(%b2 : memref<8x7168x2048xf8E4M3FN>) groups(%off : memref<9xi32>)
      out(%o2 : memref<?x7168xbf16>)
      {expected_m = 1024 : i64, config = #gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>}
  return
}
