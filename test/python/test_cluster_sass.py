"""benchmarks/probes/cluster_sass.py's reading of cuobjdump's SASS, on a
small made-up listing: instructions keep their predicates and lose their
addresses and encodings, opcodes are counted past a predicate and
without modifiers (LDL.LU is a spill's reload), and every
local-memory instruction is shown with the instructions around it."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "probes"))
import cluster_sass  # noqa: E402

LISTING = """
        Function : k
        /*0000*/                   MOV R1, c[0x0][0x28] ;          /* 0x00000a00ff017b82 */
                                                                   /* 0x000fe20000000f00 */
        /*0010*/                   STL [R1], R4 ;                  /* 0x0000000401007387 */
        /*0020*/              @!P0 BRA 0x80 ;                      /* 0x000000000000a947 */
        /*0030*/                   LDL.LU R4, [R1] ;               /* 0x0000000001047983 */
        /*0040*/                   EXIT ;                          /* 0x000000000000794d */
"""


def test_parse_keeps_predicates_and_drops_addresses_and_encodings():
    lines = cluster_sass.parse_sass(LISTING)
    assert lines == ["MOV R1, c[0x0][0x28]", "STL [R1], R4", "@!P0 BRA 0x80",
                     "LDL.LU R4, [R1]", "EXIT"]
    assert [cluster_sass.opcode(line) for line in lines] == ["MOV", "STL", "BRA", "LDL",
                                                             "EXIT"]


def test_report_lists_differing_opcodes_and_each_spill_in_context(capsys):
    alone = cluster_sass.parse_sass(LISTING.replace("STL", "NOP").replace("LDL.LU R4, [R1]",
                                                                          "NOP"))
    cluster_sass.report_sass({"alone": alone, "cluster": cluster_sass.parse_sass(LISTING)})
    out = capsys.readouterr().out
    assert "STL" in out.split("alone: ")[0] and "0 / 1" in out
    assert "MOV" not in out.split("alone: ")[0].split("differ")[1]
    assert "alone: 5 instructions, 0 local-memory ones" in out
    assert "cluster: 5 instructions, 2 local-memory ones" in out
    assert "> STL [R1], R4" in out and "> LDL.LU R4, [R1]" in out
