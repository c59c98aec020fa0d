"""benchmarks/probes/instruction_mix.py on two small made-up Nsight Compute
source exports: the executed counts are totalled by opcode (predicates and
dotted suffixes dropped), the largest differences come first, and the most
executed instructions are listed by offset."""

import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "probes"))
import instruction_mix  # noqa: E402

HEADER = '"Address","Source","Warp Stall Sampling (All Samples)","Instructions Executed"'


def export(path, kernels):
    lines = []
    for name, rows in kernels:
        lines += [f'"Kernel Name","{name}",', HEADER]
        lines += [",".join(f'"{v}"' for v in row) for row in rows]
    path.write_text("\n".join(lines) + "\n")
    return str(path)


OURS = [("0x100", "IADD3 R1, R1, 0x1, RZ", 0, 700),
        ("0x110", "@!P0 IADD3.X R2, R2, RZ, RZ, P1", 0, 700),
        ("0x120", "FFMA R3, R4, R5, R3", 0, 960),
        ("0x130", "@P1 BRA 0x100", 0, 60)]
THEIRS = [("0x200", "IADD3 R1, R1, 0x1, RZ", 0, 100),
          ("0x210", "FFMA R3, R4, R5, R3", 0, 960),
          ("0x220", "BRA 0x200", 0, 60)]


def test_opcodes_drop_predicates_and_suffixes():
    assert instruction_mix.opcode("@!P0 IADD3.X R2, R2, RZ") == "IADD3"
    assert instruction_mix.opcode("@UP1 WARPGROUP.DEPBAR.LE gsb0, 0x0") == "WARPGROUP"
    assert instruction_mix.opcode("  ") == "?"


def test_two_exports_compare_by_opcode_largest_difference_first(tmp_path, capsys):
    ours = export(tmp_path / "a.csv", [("helper", [("0x0", "EXIT", 0, 5)]), ("ggc", OURS)])
    theirs = export(tmp_path / "b.csv", [("deep_gemm", THEIRS)])
    instruction_mix.main([ours, theirs, "--top", "2", "--hot", "2"])
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "A: ggc" and out[1] == "B: deep_gemm"  # the largest kernels
    rows = {line.split()[0]: line.split()[1:] for line in out[3:6]}
    assert rows["executed"][:3] == ["2,420", "1,120", "+1,300"]
    # IADD3 and IADD3.X together (1,400 against 100) lead; FFMA does not differ.
    assert list(rows)[1:] == ["IADD3", "BRA"]
    assert rows["IADD3"] == ["1,400", "100", "+1,300"]
    hot = out[out.index("A's most executed instructions:") + 1:][:2]
    assert [line.split()[0] for line in hot] == ["0", "20"]  # from the first, ascending
