"""benchmarks/sass_loops.py on a small made-up cuobjdump listing: the
instructions are read with their predicates, a loop is a backward branch
holding an MMA (a forward branch and a loop without one are not), the
innermost comes first, and its uniform, FFMA and MMA counts are right."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import sass_loops  # noqa: E402

LISTING = """
        Function : k_kernel
        /*0000*/                   MOV R1, c[0x0][0x28] ;                /* 0x00000a0000017a02 */
                                                                         /* 0x000fe40000000f00 */
        /*0010*/                   UIADD3 UR4, UR4, 0x1, URZ ;           /* 0x0000000104047890 */
        /*0020*/                   IADD3 R2, R2, 0x1, RZ ;               /* 0x0000000102027810 */
        /*0030*/                   UMOV UR5, 0x40000040 ;                /* 0x4000004000057882 */
        /*0040*/                   QGMMA.64x192x32.F32.E4M3.E4M3 R24, gdesc[UR4], RZ, !UPT ;
        /*0050*/                   WARPGROUP.DEPBAR.LE gsb0, 0x0 ;
        /*0060*/                   FFMA R5, R24, R2, R5 ;
        /*0070*/              @!P0 BRA 0xa0 ;
        /*0080*/                   FFMA R6, R25, R2, R6 ;
        /*0090*/               @P1 BRA 0x20 ;
        /*00a0*/                   IADD3 R7, R7, 0x1, RZ ;
        /*00b0*/               @P2 BRA 0xa0 ;
        /*00c0*/               @P3 BRA 0x10 ;
        /*00d0*/                   HGMMA.64x64x16.F32.BF16 R24, gdesc[UR4], R24 ;
        /*00e0*/              @!UP0 BRA.U.ANY 0xd0 ;
        /*00f0*/                   EXIT ;
"""


def test_instructions_keep_predicates_and_addresses():
    insts = sass_loops.instructions(LISTING)
    assert insts[0] == (0x0, "MOV R1, c[0x0][0x28]")
    assert (0x70, "@!P0 BRA 0xa0") in insts
    assert len(insts) == 16


def test_mma_loops_innermost_first_with_counts():
    loops = sass_loops.mma_loops(sass_loops.instructions(LISTING))
    # 0xd0-0xe0 (a uniform-predicated BRA.U.ANY) holds an HGMMA, 0x20-0x90
    # and 0x10-0xc0 the QGMMA; 0xa0-0xb0 holds none.
    assert [(loop["start"], loop["end"]) for loop in loops] == \
        [(0xd0, 0xe0), (0x20, 0x90), (0x10, 0xc0)]
    loops = loops[1:]
    inner = loops[0]
    assert inner["instructions"] == 8
    assert inner["uniform"] == 1  # UMOV
    assert inner["ffma"] == 2
    assert inner["mma"] == 1
    assert loops[1]["uniform"] == 2  # and the outer loop's UIADD3


def test_describe_says_when_there_is_no_loop():
    assert sass_loops.describe(None) == "no MMA loop"
    assert sass_loops.describe({"instructions": 8, "uniform": 1, "ffma": 2, "mma": 2}) == \
        "8 instructions (1 uniform, 2 FFMA, 2 MMA; 4.0 an MMA)"
