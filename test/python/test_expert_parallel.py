"""ggc.moe's expert parallelism on CPU: 1 to 4 processes in a gloo group
(test/python/ep_workers.py runs the ranks), the local experts in torch
or ggc.moe's own host path with the CPU reference kernels."""

import os
import queue
import re
import subprocess
import sys
import time

import pytest

from ggc import moe

import ep_workers

TIMEOUT = 180  # seconds for a whole group: a hang fails the test, never the run


def run_group(world, scenario, tmp_path, backend="gloo"):
    """Each rank's result, by rank (a failure on any rank fails the test)."""
    import torch.multiprocessing as mp
    results = mp.get_context("spawn").Queue()
    procs = ep_workers.launch(world, scenario, results, str(tmp_path / "init"), backend)
    got = {}
    deadline = time.monotonic() + TIMEOUT
    try:
        while len(got) < world:
            try:
                rank, status, result = results.get(timeout=1)
                got[rank] = (status, result)
                if status != "ok":  # the others may wait on it: report it now
                    pytest.fail(f"{scenario} on {world} ranks: rank {rank}: {status}: "
                                f"{result}")
            except queue.Empty:
                died = {r: p.exitcode for r, p in enumerate(procs.processes)
                        if p.exitcode not in (None, 0)}
                if died or time.monotonic() > deadline:
                    pytest.fail(f"{scenario} on {world} ranks: only ranks {sorted(got)} "
                                f"reported; exit codes of those that died: {died} (else a "
                                f"hang past {TIMEOUT} s)")
    finally:
        for p in procs.processes:
            p.join(10)
            if p.is_alive():
                p.kill()
    for rank, (status, result) in got.items():
        assert status == "ok", f"rank {rank}: {status}: {result}"
    return [got[r][1] for r in range(world)]


@pytest.mark.parametrize("world", [1, 2, 4])
def test_matches_every_expert_on_one_rank(world, tmp_path):
    """Outputs and the gradients of x, topk_weights and each rank's expert
    weights equal the fp64 layer's (routing weights travel in f32, hence
    1e-6), under contiguous, uneven (a rank with none) and scattered
    placements; two calls give the same bits; chunked dispatch the same
    values."""
    for rank, report in enumerate(run_group(world, "forward_and_backward", tmp_path)):
        for case in report:
            assert case["same"], f"rank {rank}: two calls differ"
            for key in ("out", "chunked", "x", "weights", "w13", "w2"):
                assert case[key] < 1e-6, f"rank {rank} {key}: rel. error {case[key]}"
    assert run_group.__name__ and report is not None


def test_module_matches_the_single_gpu_layer(tmp_path):
    """ExpertParallelMoE.from_moe(layer) gives layer's values within BF16
    rounding (each rank's partial sum is rounded to bf16 before it goes
    back) in BF16 and FP8 with bf16 or fp8 rows on the wire, and its share
    of layer's weight gradients, on 3 ranks with ragged token counts (one
    rank with none)."""
    for rank, report in enumerate(run_group(3, "module_matches_single_layer", tmp_path)):
        for key in ("bf16", "w13_grad", "fp8_bf16", "fp8_fp8"):
            assert report[key] < 1e-2, f"rank {rank} {key}: {report}"


def test_module_trains_in_fp8(tmp_path):
    """from_moe of a layer with compute_dtype=FP8 keeps it, and gives the
    layer's FP8 values and its share of the weight gradients within the
    rounding of the ranks' bf16 partial sums (3 ranks, one without
    tokens)."""
    for rank, report in enumerate(run_group(3, "module_trains_in_fp8", tmp_path)):
        assert report["compute_dtype"] == "torch.float8_e4m3fn"
        for key in ("out", "w2_grad"):
            assert report[key] < 1e-2, f"rank {rank} {key}: {report}"


def test_module_spreads_shared_experts_and_biases(tmp_path):
    """from_moe of a layer with a router bias in f32, expert biases and a
    shared expert: the layer's values within BF16 rounding (and FP8's), its
    share of the routed experts' weight and bias gradients, and the shared
    expert's gradient from the rank's own tokens, on 3 ranks (one with no
    tokens)."""
    for rank, report in enumerate(run_group(3, "module_with_shared_experts_and_biases",
                                            tmp_path)):
        for key in ("bf16", "w13_grad", "w13_bias_grad", "w2_bias_grad", "shared_grad",
                    "fp8"):
            assert report[key] < 1e-2, f"rank {rank} {key}: {report}"


def test_out_of_range_id_poisons_only_its_token(tmp_path):
    assert run_group(2, "bad_ids", tmp_path) == [[2], [2]]


def test_bad_input_is_an_error_on_every_rank(tmp_path):
    reports = run_group(3, "error_cases", tmp_path)
    for rank, report in enumerate(reports):
        assert report.pop("after") is True, "the group must still work after the errors"
        for case, message in report.items():
            assert message.startswith(f"rank {rank}: "), f"{case}: {message}"
    expected_everywhere = {
        "missing rank": "puts expert 10 on rank 3, but the group has ranks 0..2",
        "expert twice": "names expert 2 on ranks 0 and 1",
    }
    for case, text in expected_everywhere.items():
        assert all(text in r[case] for r in reports), case
    # Placements that differ are named by expert, on every rank (not two
    # digests): rank 1 swapped experts 3 and 4 of the contiguous placement.
    assert all("the ranks were given different expert placements: expert 3 is on rank 0 "
               "for rank(s) [0, 2], rank 1 for rank(s) [1]; expert 4 is on rank 0 for "
               "rank(s) [1], rank 1 for rank(s) [0, 2]" in r["placement across ranks"]
               for r in reports), [r["placement across ranks"] for r in reports]
    assert "w13 holds 3 experts but the placement gives rank 1 4" in \
        reports[1]["weights off placement"]
    assert "wire must be one of" in reports[1]["wire"]
    for rank in (0, 2):
        for case in ("weights off placement", "wire", "ids shape"):
            assert "rank(s) [1] rejected their input" in reports[rank][case], case
        assert "rank 1 called the layer with x dtype torch.float32, this rank with " \
            "torch.float64" in reports[rank]["dtype across ranks"]
        assert "rank 1 called the layer with hidden size H 24" in \
            reports[rank]["hidden size across ranks"]
        assert "rank 1 called the layer with expert count E 12" in \
            reports[rank]["experts count across ranks"]
        assert "rank 1 called the layer with top_k 2, this rank with 3" in \
            reports[rank]["top_k across ranks"]
    assert "rank 0 called the layer with x dtype torch.float64, this rank with " \
        "torch.float32" in reports[1]["dtype across ranks"]


def test_module_arguments_are_checked_on_every_rank(tmp_path):
    reports = run_group(2, "module_errors", tmp_path)
    mine = reports[1]
    assert "puts expert 7 on rank 2, but the group has ranks 0..1" in mine["placement"]
    assert "wire must be one of ('bf16', 'fp8'), got 'int8'" in mine["wire"]
    assert "x must be a [..., H = 128] torch.bfloat16 tensor on cpu, got [3, 128] " \
        "torch.float32 on cpu" in mine["forward"]
    assert "rank 0 called the layer with hidden size H 128, this rank with 256" in \
        mine["hidden size"]
    assert mine["timeout"].startswith("rank 1: timeout must be a number of seconds > 0"), \
        mine["timeout"]
    theirs = reports[0]
    for case in ("placement", "wire", "forward", "timeout"):
        assert theirs[case].startswith("rank 0: rank(s) [1] rejected their input"), case
    assert "rank 1 called the layer with hidden size H 256" in theirs["hidden size"]
    assert [r["local experts"] for r in reports] == [[0, 1, 2, 3], [4, 5, 6, 7]]
    assert [r["after"] for r in reports] == [[3, 128], [3, 128]]


@pytest.mark.parametrize("world", [2, 3])
def test_sync_free_gives_the_same_values(world, tmp_path):
    for rank, report in enumerate(run_group(world, "sync_free", tmp_path)):
        assert "tokens T (sync_free)" in report.pop("ragged"), rank
        for case in report.values():
            assert case["same"] and case["err"] < 1e-12, (rank, case)
            assert case["nan_rows"] == ([3] if rank == 0 else []), (rank, case)


def test_weight_only_gradients_and_a_nan_row(tmp_path):
    reports = run_group(2, "edge_cases", tmp_path)
    for rank, report in enumerate(reports):
        assert report["backward"], rank  # backward ran on every rank (no hang)
        assert (report["grad"] is not None) == (rank == 0), (rank, report)
        # Every rank's tokens reach both ranks; only the NaN token is NaN.
        assert report["nan_rows"] == [4], (rank, report)


def test_placements():
    place = moe.ExpertPlacement.contiguous(10, 4)
    assert place.experts_of == ((0, 1, 2), (3, 4, 5), (6, 7), (8, 9))
    assert moe.ExpertPlacement.of([1, 0, 1], 3, 2).experts_of == ((1,), (0, 2))
    assert moe.ExpertPlacement.of([[2], [0, 1], []], 3, 3).local_experts(2) == ()
    rank_of, local_of = moe.ExpertPlacement.of([[2, 0], [1]], 3, 2).tables("cpu")
    assert rank_of.tolist() == [0, 1, 0] and local_of.tolist() == [1, 0, 0]
    assert place.digest() != moe.ExpertPlacement.contiguous(10, 5).digest()
    errors = {
        "names expert 3, outside [0, E = 3)": ([[0, 1], [2, 3]], 3, 2),
        "holds no rank for expert(s) [2]": ([[0], [1]], 3, 2),
        "names expert 1 twice on rank 0": ([[0, 1, 1], [2]], 3, 2),
        "names 3 ranks, but the group has 2": ([[0], [1], [2]], 3, 2),
        "must have E = 3 entries, got 2": ([0, 1], 3, 2),
        "puts expert 1 on rank -1": ([0, -1, 1], 3, 2),
    }
    for text, (spec, experts, world) in errors.items():
        with pytest.raises(ValueError, match=text.replace("[", r"\[").replace("(", r"\(")
                           .replace(")", r"\)")):
            moe.ExpertPlacement.of(spec, experts, world)
    with pytest.raises(TypeError, match="must list expert ids"):
        moe.ExpertPlacement.of([["a"], [0, 1, 2]], 3, 2)


def test_placements_take_integers_of_numpy_and_torch_and_nothing_else():
    """numpy and torch integers are ranks and ids; floats, bools and arrays
    of another shape are refused by name (a float tensor was truncated,
    numpy ints failed with "'numpy.int64' object is not iterable")."""
    import numpy as np
    import torch
    want = ((0, 1), (2, 3))
    for spec in (np.array([0, 0, 1, 1]), torch.tensor([0, 0, 1, 1]), [np.int64(0)] * 2 + [1, 1],
                 torch.tensor([[0, 1], [2, 3]]), [[np.int32(0), 1], [2, torch.tensor(3)]]):
        assert moe.ExpertPlacement.of(spec, 4, 2).experts_of == want, spec
    for spec, message in (
            (torch.tensor([0, 0.7, 1, 1]), r"must hold integers.* got float32 of shape \[4\]"),
            (np.zeros((2, 2, 1), dtype=np.int64), r"got int64 of shape \[2, 2, 1\]"),
            ([0.0, 0.0, 1.0, 1.0], r"each expert's rank \(\[E\] ints\).* got an entry 0.0"),
            ([[0.0, 1], [2, 3]], "must list expert ids"),
            ([True, False, True, False], "got an entry True")):
        with pytest.raises(TypeError, match=message):
            moe.ExpertPlacement.of(spec, 4, 2)


if __name__ == "__main__":
    sys.exit(pytest.main([__file__, "-q"]))


def test_a_peer_that_exits_is_an_expert_parallel_error(tmp_path):
    """A rank whose process ends instead of calling: the others' call
    raises ExpertParallelError saying so (it was gloo's raw "Connection
    closed by peer")."""
    import torch.multiprocessing as mp
    results = mp.get_context("spawn").Queue()
    procs = ep_workers.launch(2, "peer_exits", results, str(tmp_path / "init"))
    try:
        rank, status, message = results.get(timeout=TIMEOUT)
    finally:
        for p in procs.processes:
            p.join(10)
            if p.is_alive():
                p.kill()
    assert (rank, status) == (0, "ok"), message
    assert message.startswith("rank 0: the agreement with the other ranks failed ("), message
    assert "a rank exited or crashed during the call" in message


@pytest.mark.parametrize("world", [2, 3])
def test_a_rank_that_never_calls_is_named_after_the_timeout(world, tmp_path):
    """ExpertParallelMoE(..., timeout=2.0) on every rank; the last rank
    never calls it (it sleeps 5 s, then leaves): every other rank's call
    raises ExpertParallelError naming it, after 2 s (not gloo's 30 min).
    With 3 ranks, the first rank to give up must not turn the other's
    error into a crash report."""
    reports = run_group(world, "late_peer", tmp_path)
    assert reports[-1] == "slept"
    for rank, (message, seconds) in enumerate(reports[:-1]):
        assert message.startswith(
            f"rank {rank}: rank {world - 1} of {world} did not reach the expert-parallel "
            f"agreement within 2 s"), message
        assert "timeout= or $GGC_EP_TIMEOUT sets the limit" in message, message
        assert 2.0 <= seconds < 4.0, (rank, seconds)


def test_agreement_timeout_comes_from_the_keyword_then_the_environment(monkeypatch):
    from ggc.moe import dispatch
    monkeypatch.delenv("GGC_EP_TIMEOUT", raising=False)
    assert dispatch.agreement_timeout() == (300.0, None)
    monkeypatch.setenv("GGC_EP_TIMEOUT", "7.5")
    assert dispatch.agreement_timeout() == (7.5, None)
    assert dispatch.agreement_timeout(2) == (2.0, None)  # the keyword wins
    for text in ("0", "-1", "nan", "inf", "soon"):
        monkeypatch.setenv("GGC_EP_TIMEOUT", text)
        seconds, problem = dispatch.agreement_timeout()
        assert seconds == 300.0 and problem == (
            "$GGC_EP_TIMEOUT must be a number of seconds > 0 (the expert-parallel "
            f"agreement's limit), got {text!r}"), problem
    for value in (0, -3.0, True, "5", [2.0]):
        seconds, problem = dispatch.agreement_timeout(value)
        assert seconds == 300.0 and problem.startswith("timeout must be a number"), value


def test_torchrun_example_runs_on_cpus(tmp_path):
    """docs/launch/expert_parallel_torchrun.py under torchrun, 2 processes
    on CPUs (gloo: picked where CUDA is absent, else asked for): rank 0
    says what runs on CPUs, each rank its half of the 16 experts and an
    output within BF16 rounding of the whole layer's (torch's experts;
    no FP8 part); no deprecated torch API (its warnings are errors)."""
    import torch
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    paths = [os.path.join(root, "python")] + os.environ.get("PYTHONPATH", "").split(os.pathsep)
    env = dict(os.environ, PYTHONWARNINGS="error::FutureWarning,error::DeprecationWarning",
               PYTHONPATH=os.pathsep.join(p for p in paths if p))
    backend = ["--backend", "gloo"] if torch.cuda.is_available() else []
    done = subprocess.run(
        [sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2",
         os.path.join(root, "docs", "launch", "expert_parallel_torchrun.py")] + backend,
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=TIMEOUT)
    out = done.stdout
    assert done.returncode == 0, out + done.stderr
    assert "gloo on CPUs: ggc's reference backend runs the experts" in out, out
    assert sorted(re.findall(r"rank (\d)/2: experts (\d+)\.\.(\d+)", out)) == [
        ("0", "0", "7"), ("1", "8", "15")], out
    diffs = dict(re.findall(r"rank (\d): output \[2, 64, 256\], relative difference to the "
                            r"whole layer (\d\.\d\de[+-]\d\d)", out))
    assert sorted(diffs) == ["0", "1"], out
    assert all(0 < float(d) < 1e-2 for d in diffs.values()), diffs
    assert "FP8" not in out.replace("FP8 needs a GPU: skipped", ""), out
