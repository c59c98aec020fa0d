"""benchmarks/bench_peers.py's picture, without a GPU: one bar per case
with a speedup, as long as the speedup, coloured by whether ggc is ahead."""

import os
import re
import sys

import pytest

pytest.importorskip("torch")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import bench_peers  # noqa: E402


def test_svg_draws_one_bar_per_measured_case(tmp_path):
    rows = [{"case": "a", "speedup_vs_best": 1.2, "best_peer": "deep_gemm"},
            {"case": "b", "speedup_vs_best": 0.8, "best_peer": "torch._grouped_mm"},
            {"case": "no peer ran", "speedup_vs_best": None, "best_peer": None}]
    path = tmp_path / "s.svg"
    bench_peers.svg(rows, str(path))
    text = path.read_text()
    bars = re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)" height="\d+" '
                      r'fill="(#[0-9a-f]+)"/>', text)
    assert len(bars) == 2
    (w_ahead, c_ahead), (w_behind, c_behind) = bars
    assert float(w_ahead) / float(w_behind) == pytest.approx(1.2 / 0.8, rel=1e-2)
    assert c_ahead != c_behind
    assert "1.20x (deep_gemm)" in text and "0.80x (torch._grouped_mm)" in text
    assert "no peer ran" not in text


def test_case_names_are_unique_and_say_their_dtype():
    names = [name for name, _, _ in bench_peers.CASES]
    assert len(names) == len(set(names))
    for name, dtype, _ in bench_peers.CASES:
        assert dtype in ("fp8", "bf16") and dtype in name, name
