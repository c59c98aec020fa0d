"""benchmarks/probes/stall_profile.py on a small made-up Nsight Compute
source export: the largest kernel is read, an mbarrier wait is told from
other branches, the FP32 math is one kind, regions total, and a file that
is not such an export is refused by name."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks", "probes"))
import stall_profile  # noqa: E402

HEADER = ('"Address","Source","Warp Stall Sampling (All Samples)",'
          '"Instructions Executed","stall_long_sb","stall_barrier","stall_long_sb (Not Issued)"')


def export(tmp_path, kernels):
    lines = []
    for name, rows in kernels:
        lines += [f'"Kernel Name","{name}",', HEADER]
        lines += [",".join(f'"{v}"' for v in row) for row in rows]
    path = tmp_path / "k.csv"
    path.write_text("\n".join(lines) + "\n")
    return str(path)


MAIN = [("0x1000", "SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR8], R2", 1, 10, 0, 0, 0),
        ("0x1010", "@!P0  BRA 0x2000", 30, 10, 29, 0, 29),
        ("0x1020", "FFMA R1, R2, R3, R1", 10, 10, 0, 0, 0),
        ("0x1030", "FMUL R4, R2, R3", 5, 10, 0, 0, 0),
        ("0x1040", "@P1  BRA 0x1000", 4, 10, 0, 0, 0),
        ("0x1050", "WARPGROUP.DEPBAR.LE gsb0, 0x0", 50, 10, 0, 48, 0)]


def test_the_largest_kernel_is_summarised_by_kind_and_region(tmp_path, capsys):
    helper = [("0x10", "EXIT", 500, 1, 0, 0, 0)]
    path = export(tmp_path, [("helper", helper), ("main", MAIN)])
    stall_profile.main([path, "--top", "0.2", "--regions", "0:loop,50:wait"])
    out = capsys.readouterr().out
    assert out.startswith("main\n100 samples over 6 instructions")
    kinds = {line.split()[0] if "%" in line else None: line for line in out.splitlines()}
    assert "30.0%" in kinds["mbarrier"]  # the branch after the PHASECHK
    assert "15.0%" in kinds["FP32"]      # FFMA and FMUL together
    assert "4.0%" in kinds["BRA"]        # the loop's own branch is not a wait
    # Offsets from the kernel's first instruction; >= 20% of the samples only.
    listed = [line for line in out.splitlines() if " executed " in line]
    assert [line.split()[0] for line in listed] == ["10", "50"]
    assert "long_sb 29" in listed[0] and "barrier 48" in listed[1]
    assert "loop            50.0%" in out and "wait            50.0%" in out


def test_a_file_that_is_not_a_source_export_is_refused(tmp_path):
    path = tmp_path / "x.csv"
    path.write_text('"ID","Kernel"\n"0","k"\n')
    with pytest.raises(ValueError, match="not an ncu --page source --csv export"):
        stall_profile.kernels(str(path))
    path.write_text('"Kernel Name","k",\n"Address","Source"\n"0x0","EXIT"\n')
    with pytest.raises(ValueError, match="SourceCounters"):
        stall_profile.kernels(str(path))


@pytest.mark.parametrize("text", ["10:a,0:b", "0:a,0:b", "5:a"])
def test_regions_must_start_at_zero_and_ascend(text):
    with pytest.raises(ValueError, match="--regions"):
        stall_profile.parse_regions(text)
