"""benchmarks/bench_training.py's ceiling shares, without a GPU: how much of
the card's measured ceiling ggc reaches, and how much #40's target over
the peer asks for (above 100%: out of any kernel's reach)."""

import os
import sys

import pytest

pytest.importorskip("torch")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import bench_training  # noqa: E402


def test_ceiling_shares_of_ggc_and_of_the_target():
    # 1e12 FLOPs in 2,000 us is 500 TFLOPS: half of a 1,000 TFLOPS ceiling.
    # The peer at 2,300 us and a 1.15x target ask for 2,000 us: also 50%.
    ours, asked = bench_training.ceiling_shares(2000.0, 2300.0, 1e12, 1000.0, 1.15)
    assert ours == pytest.approx(50.0)
    assert asked == pytest.approx(50.0)


def test_a_target_past_the_ceiling_shows_above_100_percent():
    # The peer already at 90% of the ceiling: 1.15x of it asks for 103.5%.
    ours, asked = bench_training.ceiling_shares(1250.0, 1000.0 / 0.9, 1e12, 1000.0, 1.15)
    assert ours == pytest.approx(80.0)
    assert asked == pytest.approx(103.5)
    assert asked > 100.0
