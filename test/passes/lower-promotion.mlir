// RUN: ggc-opt %s -split-input-file -ggk-lower-promotion | FileCheck %s --implicit-check-not=ggk.promote --implicit-check-not=ggk.decode_ue8m0

// Before: a K block's product promoted into a 64 x 16 accumulator by one
// block scale of B. After: A's scale of each row group times B's, then per
// element (row group, column block, column of the pair) fma(partial,
// factor, acc), row group 0 with the first factor and 1 with the second.
// CHECK-LABEL: func.func @block
// CHECK-SAME: (%[[ACC:.*]]: !ggk.acc<64x16xf32>, %[[PART:.*]]: !ggk.acc<64x16xf32>, %[[A0:.*]]: f32, %[[A1:.*]]: f32, %[[B0:.*]]: f32, %{{.*}}: i32)
// CHECK-NEXT: %[[F0:.*]] = arith.mulf %[[A0]], %[[B0]]
// CHECK-NEXT: %[[F1:.*]] = arith.mulf %[[A1]], %[[B0]]
// CHECK-NEXT: %[[X:.*]] = ggk.acc_get %[[PART]][0, 0, 0]
// CHECK-NEXT: %[[Y:.*]] = ggk.acc_get %[[ACC]][0, 0, 0]
// CHECK-NEXT: %[[S:.*]] = math.fma %[[X]], %[[F0]], %[[Y]]
// CHECK-NEXT: %[[ACC1:.*]] = ggk.acc_set %[[S]], %[[ACC]][0, 0, 0]
// CHECK-NEXT: %[[X1:.*]] = ggk.acc_get %[[PART]][1, 0, 0]
// CHECK-NEXT: %[[Y1:.*]] = ggk.acc_get %[[ACC1]][1, 0, 0]
// CHECK-NEXT: math.fma %[[X1]], %[[F1]], %[[Y1]]
// CHECK-COUNT-6: math.fma
// CHECK-NOT: math.fma
// CHECK: return
func.func @block(%acc: !ggk.acc<64x16xf32>, %part: !ggk.acc<64x16xf32>, %a0: f32, %a1: f32,
                 %b0: f32, %x: i32) -> !ggk.acc<64x16xf32> {
  %0 = ggk.promote %part into %acc rows(%a0, %a1) blocks(%b0) at(%x, %x, %x)
      {block_n = 128} : !ggk.acc<64x16xf32>
  func.return %0 : !ggk.acc<64x16xf32>
}

// -----

// Before: 256 columns over two 128x128 blocks of B. After: column blocks 0
// to 15 take the first block's factors, 16 to 31 the second's.
// CHECK-LABEL: func.func @two_blocks
// CHECK-SAME: %[[A0:[^:]*]]: f32, %{{.*}}: f32, %[[B0:[^:]*]]: f32, %[[B1:[^:]*]]: f32
// CHECK-NEXT: %[[F00:.*]] = arith.mulf %[[A0]], %[[B0]]
// CHECK-NEXT: %[[F01:.*]] = arith.mulf %[[A0]], %[[B1]]
// CHECK: %[[X15:.*]] = ggk.acc_get %{{.*}}[0, 15, 1]
// CHECK-NEXT: %[[Y15:.*]] = ggk.acc_get
// CHECK-NEXT: math.fma %[[X15]], %[[F00]], %[[Y15]]
// CHECK: %[[X16:.*]] = ggk.acc_get %{{.*}}[0, 16, 0]
// CHECK-NEXT: %[[Y16:.*]] = ggk.acc_get
// CHECK-NEXT: math.fma %[[X16]], %[[F01]], %[[Y16]]
func.func @two_blocks(%acc: !ggk.acc<64x256xf32>, %part: !ggk.acc<64x256xf32>, %a0: f32,
                      %a1: f32, %b0: f32, %b1: f32, %x: i32) -> !ggk.acc<64x256xf32> {
  %0 = ggk.promote %part into %acc rows(%a0, %a1) blocks(%b0, %b1) at(%x, %x, %x)
      {block_n = 256} : !ggk.acc<64x256xf32>
  func.return %0 : !ggk.acc<64x256xf32>
}

// -----

// Before: column_halves' 128 columns, the gate's 64 rows of B and the up's,
// with one 128x128 block scale of B each. After: column blocks 0 to 7 (the
// gate's half) take the first block's factors, 8 to 15 the second's.
// CHECK-LABEL: func.func @halves
// CHECK-SAME: %[[A0:[^:]*]]: f32, %{{.*}}: f32, %[[B0:[^:]*]]: f32, %[[B1:[^:]*]]: f32
// CHECK-NEXT: %[[F00:.*]] = arith.mulf %[[A0]], %[[B0]]
// CHECK-NEXT: %[[F01:.*]] = arith.mulf %[[A0]], %[[B1]]
// CHECK: %[[X7:.*]] = ggk.acc_get %{{.*}}[0, 7, 1]
// CHECK-NEXT: %[[Y7:.*]] = ggk.acc_get
// CHECK-NEXT: math.fma %[[X7]], %[[F00]], %[[Y7]]
// CHECK: %[[X8:.*]] = ggk.acc_get %{{.*}}[0, 8, 0]
// CHECK-NEXT: %[[Y8:.*]] = ggk.acc_get
// CHECK-NEXT: math.fma %[[X8]], %[[F01]], %[[Y8]]
func.func @halves(%acc: !ggk.acc<64x128xf32>, %part: !ggk.acc<64x128xf32>, %a0: f32,
                  %a1: f32, %b0: f32, %b1: f32, %x: i32) -> !ggk.acc<64x128xf32> {
  %0 = ggk.promote %part into %acc rows(%a0, %a1) blocks(%b0, %b1) at(%x, %x, %x)
      {block_n = 128, column_halves} : !ggk.acc<64x128xf32>
  func.return %0 : !ggk.acc<64x128xf32>
}

// -----

// Before: B's scales per column, in shared memory. After: the thread's
// two columns of each 8-column block (column + 8 c, + 1) load their scales
// as one 8-byte pair; each scale times A's of the row group.
// CHECK-LABEL: func.func @columns
// CHECK-SAME: %[[A0:[^:]*]]: f32, %{{.*}}: f32, %[[T:.*]]: !llvm.ptr<3>, %[[COL:.*]]: i32)
// CHECK: %[[C:.*]] = arith.addi %[[COL]], %c0_i32
// CHECK: %[[OFF:.*]] = arith.muli %{{.*}}, %c4_i64
// CHECK-NEXT: %[[P:.*]] = llvm.getelementptr %[[T]][%[[OFF]]]
// CHECK-NEXT: %[[PAIR:.*]] = llvm.load %[[P]] {alignment = 8 : i64} : !llvm.ptr<3> -> vector<2xf32>
// CHECK: %[[SB:.*]] = llvm.extractelement %[[PAIR]][%c0_i32{{.*}} : i32] : vector<2xf32>
// CHECK-NEXT: %[[X:.*]] = ggk.acc_get %{{.*}}[0, 0, 0]
// CHECK-NEXT: %[[Y:.*]] = ggk.acc_get %{{.*}}[0, 0, 0]
// CHECK-NEXT: %[[F:.*]] = arith.mulf %[[A0]], %[[SB]]
// CHECK-NEXT: math.fma %[[X]], %[[F]], %[[Y]]
// CHECK: llvm.extractelement %[[PAIR]][%c1_i32
// CHECK-COUNT-2: math.fma
// CHECK-NOT: math.fma
// CHECK-NOT: llvm.load
// CHECK: return
func.func @columns(%acc: !ggk.acc<64x8xf32>, %part: !ggk.acc<64x8xf32>, %a0: f32, %a1: f32,
                   %t: !llvm.ptr<3>, %col: i32) -> !ggk.acc<64x8xf32> {
  %0 = ggk.promote %part into %acc rows(%a0, %a1) columns(%t) at(%col, %col, %col)
      {block_n = 128} : !ggk.acc<64x8xf32>
  func.return %0 : !ggk.acc<64x8xf32>
}

// -----

// Before: 192 columns from n_block * 192 + column_base, which a boundary
// of B's 128-column blocks may cross at 64 or 128 columns in. After: the
// boundary's place (its distance from the first column, / 64) picks one of
// three copies of the FMAs: cases 1 and 2, or the default (no boundary
// inside: every column in the first block).
// CHECK-LABEL: func.func @straddle
// CHECK-SAME: %[[NB:[^:]*]]: i32, %[[CB:[^:]*]]: i32)
// CHECK: %[[N:.*]] = arith.muli %[[NB]], %c192_i32
// CHECK-NEXT: %[[FIRST:.*]] = arith.addi %[[N]], %[[CB]]
// CHECK: %[[BLOCK:.*]] = arith.divui %[[FIRST]], %c128_i32
// CHECK-NEXT: %[[NEXT:.*]] = arith.addi %[[BLOCK]], %c1_i32
// CHECK-NEXT: %[[END:.*]] = arith.muli %[[NEXT]], %c128_i32
// CHECK-NEXT: %[[BOUNDARY:.*]] = arith.subi %[[END]], %[[FIRST]]
// CHECK: %[[PLACE:.*]] = arith.divui %[[BOUNDARY]], %c64_i32
// CHECK-NEXT: %[[I:.*]] = arith.index_cast %[[PLACE]]
// CHECK-NEXT: scf.index_switch %[[I]] -> !ggk.acc<64x192xf32>
// CHECK-NEXT: case 1 {
// CHECK-COUNT-96: math.fma
// CHECK: case 2 {
// CHECK-COUNT-96: math.fma
// CHECK: default {
// CHECK-COUNT-96: math.fma
func.func @straddle(%acc: !ggk.acc<64x192xf32>, %part: !ggk.acc<64x192xf32>, %a0: f32, %a1: f32,
                    %b0: f32, %b1: f32, %nb: i32, %cb: i32) -> !ggk.acc<64x192xf32> {
  %0 = ggk.promote %part into %acc rows(%a0, %a1) blocks(%b0, %b1) at(%nb, %cb, %cb)
      {block_n = 192} : !ggk.acc<64x192xf32>
  func.return %0 : !ggk.acc<64x192xf32>
}

// -----

// Before: byte 2 of an MX word. After: its exponent e shifted into an f32's
// exponent bits, 2^-127 (0x00400000) where e = 0.
// CHECK-LABEL: func.func @decode
// CHECK-SAME: (%[[W:.*]]: i32, %[[BYTE:.*]]: i32)
// CHECK: %[[SHIFT:.*]] = arith.muli %[[BYTE]], %c8_i32
// CHECK-NEXT: %[[R:.*]] = arith.shrui %[[W]], %[[SHIFT]]
// CHECK-NEXT: %[[E:.*]] = arith.andi %[[R]], %c255_i32
// CHECK: %[[BITS:.*]] = arith.shli %[[E]], %c23_i32
// CHECK: %[[ZERO:.*]] = arith.cmpi eq, %[[E]], %c0_i32
// CHECK-NEXT: %[[SEL:.*]] = arith.select %[[ZERO]], %c4194304_i32, %[[BITS]]
// CHECK-NEXT: %[[F:.*]] = arith.bitcast %[[SEL]] : i32 to f32
// CHECK-NEXT: return %[[F]]
func.func @decode(%w: i32, %byte: i32) -> f32 {
  %0 = ggk.decode_ue8m0 %w[%byte]
  func.return %0 : f32
}

// -----

// Before: a thread's columns' scales read ahead (column_scale_reads =
// at_issue) and a promotion from them (per_column). After: one 8-byte
// load per 8-column block at (column + 8 c) * 4 where the read stood,
// and the promotion's FMAs take each column's own scale times A's, no
// load of their own.
// CHECK-LABEL: func.func @per_column
// CHECK-SAME: %[[A0:[^:]*]]: f32, %{{.*}}: f32, %[[T:.*]]: !llvm.ptr<3>, %[[COL:.*]]: i32)
// CHECK: %[[C0:.*]] = arith.addi %[[COL]], %c0_i32
// CHECK: llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> vector<2xf32>
// CHECK: %[[C1:.*]] = arith.addi %[[COL]], %c8_i32
// CHECK: %[[PAIR1:.*]] = llvm.load %{{.*}} {alignment = 8 : i64} : !llvm.ptr<3> -> vector<2xf32>
// CHECK: %[[S2:.*]] = llvm.extractelement %[[PAIR1]][%c0_i32
// CHECK-NOT: llvm.load
// CHECK: %[[F:.*]] = arith.mulf %[[A0]], %[[S2]]
// CHECK: math.fma %{{.*}}, %[[F]], %{{.*}}
// CHECK-NOT: llvm.load
// CHECK: return
func.func @per_column(%acc: !ggk.acc<64x16xf32>, %part: !ggk.acc<64x16xf32>, %a0: f32, %a1: f32,
                      %t: !llvm.ptr<3>, %col: i32) -> !ggk.acc<64x16xf32> {
  %c:4 = ggk.load_column_scales %t at(%col) {columns = 16} : f32, f32, f32, f32
  %0 = ggk.promote %part into %acc rows(%a0, %a1) blocks(%c#2, %c#3, %c#0, %c#1) at(%col, %col, %col)
      {block_n = 16, per_column} : !ggk.acc<64x16xf32>
  func.return %0 : !ggk.acc<64x16xf32>
}
