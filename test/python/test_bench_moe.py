"""benchmarks/bench_moe.py's target table, without a GPU: per shape and T,
the best of the peers (not ggc's other variants), ggc against it, and the
time a target speedup asks for as a share of the measured floor, which
says when no kernel on the card could reach it."""

import os
import re
import sys

import pytest

pytest.importorskip("torch")
sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import bench_moe  # noqa: E402


def row(impl, eager, graph=None, mem=100.0, math=50.0, shape="qwen3", tokens=1024):
    return {"shape": shape, "tokens": tokens, "impl": impl, "eager_us": eager,
            "graph_us": graph, "floor_mem_us": mem, "floor_math_us": math}


def test_target_table_takes_the_best_peer_and_the_floor(capsys):
    rows = [row("torch._grouped_mm", 400.0, 390.0), row("vLLM triton", 300.0, 260.0),
            row("ggc", 250.0, 200.0), row("ggc fp8", 90.0, 80.0),
            row("ggc", 500.0, mem=10.0, math=450.0, tokens=4096),
            row("torch._grouped_mm", 650.0, mem=10.0, math=450.0, tokens=4096)]
    bench_moe.target_table(rows, 1.3)
    lines = [l for l in capsys.readouterr().out.splitlines() if l.startswith("| qwen3")]
    assert len(lines) == 2
    cells = [c.strip() for c in lines[0].strip("|").split("|")]
    # vLLM's replay (260) is the best peer; ggc fp8 (80) is not a peer.
    assert cells[2:6] == ["vLLM triton", "260.0", "200.0", "1.300x"]
    assert float(cells[6]) == pytest.approx(200.0)  # 260 / 1.3
    assert cells[7] == "50%"  # floor 100 us over the 200 us asked for
    cells = [c.strip() for c in lines[1].strip("|").split("|")]
    assert cells[2] == "torch._grouped_mm" and cells[7] == "90%"  # math floor 450 / 500


def test_target_table_says_when_the_target_is_past_the_floor(capsys):
    rows = [row("torch._grouped_mm", 120.0, mem=100.0), row("ggc", 110.0, mem=100.0)]
    bench_moe.target_table(rows, 1.3)
    line = next(l for l in capsys.readouterr().out.splitlines() if l.startswith("| qwen3"))
    share = int(re.search(r"\| (\d+)% \| n/a \|$", line).group(1))
    assert share == round(100 * 100.0 / (120.0 / 1.3)) and share > 100


def test_target_table_sets_ggcs_kernels_alone_against_the_best_peer(capsys):
    rows = [row("vLLM triton", 300.0, 260.0), dict(row("ggc", 250.0, 210.0), kernels_us=200.0)]
    bench_moe.target_table(rows, 1.3)
    line = next(l for l in capsys.readouterr().out.splitlines() if l.startswith("| qwen3"))
    cells = [c.strip() for c in line.strip("|").split("|")]
    assert cells[5] == "1.238x"  # the replays: 260 / 210
    assert cells[8] == "1.300x"  # the kernels alone: 260 / 200


def test_print_table_gives_each_layer_its_share_of_the_floor(capsys):
    rows = [dict(row("torch._grouped_mm", 400.0), host_us=None, rel_err_vs_loop=1e-3),
            dict(row("ggc", 250.0, 200.0), host_us=12.0, rel_err_vs_loop=2e-3)]
    bench_moe.print_table(rows)
    ggc = next(l for l in capsys.readouterr().out.splitlines() if "| ggc |" in l)
    assert "| 50% |" in ggc and "| 2.00x |" in ggc


def test_the_copied_rows_variant_runs_and_copies(monkeypatch):
    """moe_layers.ggc_bf16_copied_rows stands in for gathers_rows with the
    layer's arguments (a stand-in of the wrong arity turned the variant
    into a note and dropped it from the table): the same values as the
    layer, with no gathered kernel launched."""
    import moe_layers
    from ggc import moe
    from moe_reference import record_launches
    from test_moe import layer
    launched = record_launches(monkeypatch)
    x, w13, w2, weights, ids = layer(tokens=300, experts=4, top_k=2, seed=9)
    import torch
    with torch.no_grad():
        copied = moe_layers.ggc_bf16_copied_rows(w13, w2)(x, weights, ids)
        assert launched and not any(name.endswith("_gathered") for name in launched), launched
        assert torch.equal(copied, moe.fused_moe(x, w13, w2, weights, ids))


def test_l2_flush_names_the_modes_it_takes():
    with pytest.raises(ValueError, match=r"flush must be one of \('write', 'read'\), got 'clean'"):
        bench_moe.l2_flush("clean")


def test_kernel_sums_land_on_the_replayed_rows_only(monkeypatch):
    """add_kernel_sums captures each layer that was replayed, sums its
    kernels' times and leaves rows without a replay alone."""
    import types
    calls = []
    monkeypatch.setattr(bench_moe, "weights_for", lambda *a, **k: (None, None))
    monkeypatch.setattr(bench_moe, "inputs", lambda *a, **k: (None, None, None))
    monkeypatch.setattr(bench_moe, "layers", lambda *a: {"per-expert loop": lambda *x: None,
                                                         "ggc": lambda *x: None})
    monkeypatch.setattr(bench_moe, "captured", lambda fn: (calls.append(fn) or "replay", None,
                                                           object()))
    monkeypatch.setattr(bench_moe.torch.cuda, "empty_cache", lambda: None)
    fake = types.ModuleType("profile_moe")
    fake.kernel_times = lambda replay, n: [("up", 30.0, 1), ("down", 12.5, 1)]
    monkeypatch.setitem(sys.modules, "profile_moe", fake)
    rows = [dict(row("per-expert loop", 900.0), graph_us=None),
            row("ggc", 250.0, 200.0), row("ggc", 250.0, 200.0, tokens=4096)]
    bench_moe.add_kernel_sums(None, ["qwen3"], [1024], rows)
    assert "kernels_us" not in rows[0] and "kernels_us" not in rows[2]
    assert rows[1]["kernels_us"] == pytest.approx(42.5)
    assert len(calls) == 1  # the loop, never replayed, is not captured
