"""benchmarks/compile_time.py's split of a cold compile by stage, without
a GPU: the timing report (ggc.compile_ir(..., timing=True)) read back
into each stage's making and printing, and summed into ggc's passes,
LLVM, NVPTX and ptxas, with nothing counted twice."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import compile_time  # noqa: E402

REPORT = """ggc timing, wall ms (a stage: making it, then printing it):
  parse and verify                                 0.50
  stage gg                                         0.00
    (print gg)                                     0.10
  stage gg-config                                  0.20
    gg-select-config                               0.05
    (print gg-config)                              0.05
  stage nvvm                                      40.00
    ggk-lower-tma                                  2.00
    (print nvvm)                                  20.00
  stage llvm                                     100.00
    canonicalize                                  10.00
  stage ptx                                       90.00
  stage cubin                                    200.00
  total                                          451.35
"""


def test_stage_times_reads_each_stage_and_its_printing():
    times = compile_time.stage_times(REPORT)
    assert list(times) == ["gg", "gg-config", "nvvm", "llvm", "ptx", "cubin"]
    assert times["nvvm"] == (40.0, 20.0) and times["llvm"] == (100.0, 0.0)


def test_groups_sum_the_stages_once():
    groups = compile_time.grouped_stage_times(REPORT)
    assert groups["ggc passes"] == pytest.approx(40.2)  # passes inside their stage
    assert (groups["llvm"], groups["nvptx"], groups["ptxas"]) == (100.0, 90.0, 200.0)
    assert groups["printing"] == pytest.approx(20.15)
    assert groups["total"] == pytest.approx(450.35)  # parsing is not a stage


def test_a_real_report_splits():
    ggc = pytest.importorskip("ggc")
    from ggc import ir
    source = ir.grouped_matmul("k", **compile_time.KERNELS[0][1])
    report = ggc.compile_ir(source, emit="nvvm", timing=True).timing
    times = compile_time.stage_times(report)
    assert list(times) == ["gg", "gg-config", "ggk", "nvvm"]
    groups = compile_time.grouped_stage_times(report)
    assert groups["ggc passes"] > 0 and groups["llvm"] == groups["ptxas"] == 0
