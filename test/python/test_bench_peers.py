"""benchmarks/bench_peers.py's pictures, without a GPU: one bar per case
with a speedup, as long as the speedup, coloured by whether ggc is ahead;
two per case for the shares of the roofline; both redrawn from a run's
JSON without measuring."""

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


def test_roofline_svg_draws_ggc_and_the_best_peer_per_case(tmp_path):
    rows = [{"case": "a", "best_peer": "deep_gemm", "floor_us": 80.0,
             "us": {"ggc": 100.0, "deep_gemm": 160.0}},
            {"case": "no peer ran", "best_peer": None, "floor_us": 1.0, "us": {"ggc": 2.0}}]
    path = tmp_path / "r.svg"
    bench_peers.roofline_svg(rows, str(path))
    text = path.read_text()
    widths = [float(w) for w in re.findall(r'<rect x="[\d.]+" y="[\d.]+" width="([\d.]+)"',
                                           text)]
    assert len(widths) == 2
    assert widths[0] / widths[1] == pytest.approx(80.0 / 50.0, rel=1e-2)
    assert "80% ggc" in text and "50% deep_gemm" in text
    assert "no peer ran" not in text


def test_pictures_redraw_from_a_runs_json(tmp_path, monkeypatch):
    import json
    rows = [{"case": "a", "best_peer": "deep_gemm", "speedup_vs_best": 0.5, "floor_us": 10.0,
             "us": {"ggc": 20.0, "deep_gemm": 10.0}}]
    (tmp_path / "run.json").write_text(json.dumps({"rows": rows}))
    monkeypatch.setattr(sys, "argv", ["bench_peers.py", "--from-json", str(tmp_path / "run.json"),
                                      "--svg", str(tmp_path / "s.svg"),
                                      "--roofline-svg", str(tmp_path / "r.svg")])
    monkeypatch.setattr(bench_peers, "ceilings", lambda: pytest.fail("measured on --from-json"))
    bench_peers.main()
    assert "0.50x (deep_gemm)" in (tmp_path / "s.svg").read_text()
    assert "100% deep_gemm" in (tmp_path / "r.svg").read_text()


def test_cases_match_in_any_case_and_none_is_an_error():
    labels = [c[0] for c in bench_peers.chosen_cases("FP8 CONTIGUOUS,deepseek-v3 up")]
    assert labels and all("fp8 contiguous" in l or "DeepSeek-V3 up" in l for l in labels)
    assert len(bench_peers.chosen_cases("")) == len(bench_peers.CASES)
    with pytest.raises(SystemExit, match="--cases 'nothing like it' matches no case"):
        bench_peers.chosen_cases("nothing like it")
