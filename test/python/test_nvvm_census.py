"""NVVM comes only from the target's conversions (#37): over every kernel
of benchmarks/ptx_corpus.py (the examples, the driver tests' inputs, the
stress specs with clusters, MX, k-grouped and padded layouts, the ops'
kernels), for every target, no pass before the conversions of
GGKTargetPasses.td writes an NVVM operation (benchmarks/nvvm_census.py)."""

import os
import sys

import pytest

import ggc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import nvvm_census  # noqa: E402


def test_the_census_reads_the_conversions_from_ods():
    conversions = nvvm_census.target_passes()
    assert {"LowerTma", "LowerThreads", "LowerRing", "LowerMmaSync"} <= conversions
    assert "LowerStorePool" not in conversions and "Multicast" not in conversions


def test_the_census_counts_what_a_pass_writes():
    # The IR after ggk-lower-tma holds its NVVM: counted for it, a conversion.
    source = next(iter(nvvm_census.sources()))[1]
    added = nvvm_census.census(source, "sm_90a")
    assert added["LowerTma"] > 0 and added["LowerThreads"] > 0


@pytest.mark.parametrize("arch", ggc.compiler.TARGETS)
def test_no_nvvm_before_the_conversions(arch):
    if arch == "sm_86":
        pytest.skip("sm_86 compiles what sm_80 does (no FP8): covered there")
    conversions = nvvm_census.target_passes()
    written, kernels = {}, 0
    for name, source in nvvm_census.sources():
        try:
            added = nvvm_census.census(source, arch)
        except ggc.CompilationError:
            continue  # refused by name for this target (ptx_corpus records why)
        kernels += 1
        for pass_name, count in added.items():
            if pass_name not in conversions and count:
                written.setdefault(pass_name, []).append(name)
    assert kernels > 40
    assert not written, f"NVVM before the conversions on {arch}: {written}"
