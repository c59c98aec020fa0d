"""bench_grouped_gemm's config strings: what each option hands the kernel
builder (CPU: the builder is recorded, nothing compiles)."""

import os
import sys

import pytest

pytest.importorskip("torch")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import bench_grouped_gemm as bench  # noqa: E402


def built(configs, hint):
    calls = []

    def make_kernel(config, **opts):
        calls.append((config, opts))
        return object()
    labels = list(bench.ggc_variants(lambda kernel: kernel, make_kernel, configs, hint))
    return labels, calls


def test_zero_tile_keeps_the_chosen_config_and_auto_takes_the_shapes_hint():
    labels, calls = built([(0, 0, 0, 0, "emauto")], hint=1024)
    assert labels == ["ggc", "ggc chosen emauto"]
    assert calls[1][0] is None and calls[1][1]["expected_m"] == 1024
    assert "expected_m" not in calls[0][1]  # the plain row passes no hint


def test_a_given_hint_and_tile_order_reach_the_builder():
    _, calls = built([(128, 128, 128, 5, "nf", "em512")], hint=1024)
    config, opts = calls[1]
    assert "block = [128, 128, 128], stages = 5" in config
    assert opts["expected_m"] == 512 and opts["tile_order"] == "n_fastest"


def test_the_fp8_contiguous_shapes_parse():
    assert bench.shapes_of("8192,8,7168,2048;16,2,128,256") == [(8192, 8, 7168, 2048),
                                                               (16, 2, 128, 256)]


@pytest.mark.parametrize("options, promotion", [
    (("constant",), "serial"), (("constant", "pipelined"), "pipelined"),
    (("pipelined",), "pipelined")])
def test_constant_stages_keep_the_named_promotion(options, promotion):
    _, calls = built([(128, 128, 128, 0, *options)], hint=1024)
    plan = calls[1][1]["kernel_plan"]
    assert f"promotion = {promotion}" in plan
    assert ("ring_stages = constant" in plan) == ("constant" in options)


def test_group_sizes_are_the_benchmarks_dirichlet_draw_or_equal_for_a_negative_seed():
    # The draw the records name (seed 0, T8192 G8): changing it would move
    # every recorded ragged shape's groups.
    assert bench.group_sizes(8192, 8, 0) == [699, 264, 2586, 2095, 1193, 461, 770, 124]
    assert bench.group_sizes(8192, 8, 1) != bench.group_sizes(8192, 8, 0)
    assert bench.group_sizes(8192, 8, -1) == [1024] * 8
    assert bench.group_sizes(10, 4, -1) == [2, 2, 2, 4]  # the remainder in the last
