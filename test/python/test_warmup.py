"""Compiling ahead of serving (CPU): ggc.moe.warmup, `python -m ggc
precompile`, GGC_LOG's compile records and the progress bars.

The warm-up must compile exactly the kernels the layer's forward looks up:
the forward here is ggc.moe's own host path on CPU tensors with each
launch replaced by the lookup a launch makes (JITFunction._kernel), at
every token count from 1 to max_tokens."""

import io
import logging
import os
import random
import re
import subprocess
import sys

import pytest
import torch

import ggc
from ggc import cache, moe, progress
from ggc.moe import checks
from ggc.moe.precompile import (LayerShape, _rows, expected_m_hints, helper_kernels,
                                kernel_calls,
                                layer_shapes_of)
from ggc.moe.layer import expected_rows

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")
BF16 = torch.bfloat16
JIT = sys.modules["ggc.jit"]


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("GGC_PROGRESS", raising=False)


def count_compiles(monkeypatch) -> list:
    """The IR of every compile from now on (ggc.cache's calls of the compiler)."""
    compiled, real = [], cache.compile_ir

    def counting(ir, **kwargs):
        compiled.append(ir)
        return real(ir, **kwargs)
    monkeypatch.setattr(cache, "compile_ir", counting)
    return compiled


def lookups_of_the_forward(monkeypatch) -> set:
    """Runs ggc.moe's host path on CPU tensors, each launch replaced by the
    kernel lookup it makes; returns the set of looked-up specialisations."""
    monkeypatch.setenv("GGC_MOE_GRAPH_TOKENS", "0")
    if hasattr(checks, "require_cuda"):  # where the layer takes CUDA tensors only
        monkeypatch.setattr(checks, "require_cuda", lambda device: None)
    looked = set()

    def lookup(fn, tensors, consts, stream, validate):
        _, fn_spec = fn._trace(tensors, consts)
        looked.add(cache.specialisation(fn.__name__, fn_spec.args, consts))
        fn._kernel(tensors, consts)  # compiles if the warm-up missed it
    monkeypatch.setattr(JIT.JITFunction, "_run", lookup)
    return looked


def check_forwards_compile_nothing(layer, report, max_tokens, monkeypatch):
    warmed = {k.specialisation for k in report.kernels}
    assert len(warmed) == len(report.kernels)  # each kernel once
    compiles = count_compiles(monkeypatch)
    looked = lookups_of_the_forward(monkeypatch)
    with torch.no_grad():
        for tokens in range(1, max_tokens + 1):
            layer(torch.randn(tokens, layer.hidden_size).to(BF16))
    assert compiles == [], "a forward compiled a kernel the warm-up did not"
    assert looked == warmed, (sorted(looked - warmed), sorted(warmed - looked))


def names_and_hints(report):
    return [(k.kernel, int(re.search(r"EXPECTED_M=(\d+)", k.specialisation).group(1)))
            for k in report.kernels]


def test_bf16_swiglu_layer_compiles_each_hint_once_and_the_forwards_nothing(monkeypatch):
    """E = 4, top_k = 2, up to 64 tokens: rows 2..128, hints 1..32; on
    sm_90a SwiGLU goes into the up projection's epilogue above 16 rows an
    expert."""
    layer = moe.MoE(128, 128, 4, 2)
    report = moe.warmup(layer, 64, progress=False)
    assert names_and_hints(report) == [
        ("moe_up_gathered", 1), ("moe_down_routed", 1),
        ("moe_up_gathered", 2), ("moe_down_routed", 2),
        ("moe_up_gathered", 4), ("moe_down_routed", 4),
        ("moe_up_gathered", 8), ("moe_down_routed", 8),
        ("moe_up_gathered", 16), ("moe_down_routed", 16),
        ("moe_up_swiglu_gathered", 32), ("moe_down_routed", 32)]
    assert report.target == "sm_90a (132 SMs)"
    check_forwards_compile_nothing(layer, report, 64, monkeypatch)


def test_a_wide_up_projection_is_gathered_only_at_the_rows_that_pay(monkeypatch):
    """Past GATHER_MAX_N the up projection reads a sorted copy, except
    where experts expect GATHER_WIDE_ROWS rows: the warm-up compiles the
    gathered kernel for those hints only, and the forwards what it
    compiled."""
    from ggc.moe import kernels
    monkeypatch.setattr(kernels, "GATHER_MAX_N", 0)
    monkeypatch.setattr(kernels, "GATHER_WIDE_ROWS", (32, 64))
    layer = moe.MoE(128, 128, 4, 2)
    ggc.set_memory_gbps(3352)  # an H100's: the rule is for cards of narrow memory
    try:
        report = moe.warmup(layer, 160, progress=False)
        ups = [(name, hint) for name, hint in names_and_hints(report) if "up" in name]
        assert [hint for name, hint in ups if name.endswith("_gathered")] == [32, 64]
        assert all(not name.endswith("_gathered") for name, hint in ups
                   if hint not in (32, 64))
        check_forwards_compile_nothing(layer, report, 160, monkeypatch)
    finally:
        ggc.set_memory_gbps(None)


def test_fp8_layer_with_one_route_a_token(monkeypatch):
    """FP8 scaled GEMMs on a gathered copy; with top_k = 1 a single token
    is one row, whose activation scales are plain 1x128 blocks (not
    M-major): a kernel more."""
    layer = moe.MoE(128, 128, 2, 1).quantize_fp8()
    report = moe.warmup(layer, 8, progress=False)
    kinds = [re.search(r"A_KIND='(\w+)'", k.specialisation).group(1) for k in report.kernels
             if k.kernel == "grouped_gemm_contiguous_nk_scaled"]
    assert kinds == ["block_mn"] * 3 + ["block"]
    assert [k.kernel for k in report.kernels].count("moe_down_routed_fp8") == 3
    check_forwards_compile_nothing(layer, report, 8, monkeypatch)


def test_fp8_layer_with_partial_scale_blocks(monkeypatch):
    """H and I off 128 (gpt-oss's 2,880): the scales' last blocks are
    partial; the warm-up takes the layer as the forward does."""
    layer = moe.MoE(144, 208, 2, 2).quantize_fp8()
    report = moe.warmup(layer, 4, progress=False)
    check_forwards_compile_nothing(layer, report, 4, monkeypatch)


def test_shared_experts_biases_and_a_plain_activation(monkeypatch):
    """Shared experts count in E and in the routes a token; expert biases
    and a non-gated activation take the plain up projection."""
    layer = moe.MoE(128, 64, 3, 1, activation="gelu", shared_experts=1, expert_bias=True)
    report = moe.warmup(layer, 24, progress=False)
    assert [h for _, h in names_and_hints(report)] == [1, 1, 2, 2, 4, 4, 8, 8]
    check_forwards_compile_nothing(layer, report, 24, monkeypatch)


def test_expert_parallel_layer_on_one_rank(tmp_path, monkeypatch):
    """ExpertParallelMoE (gloo, one rank, in this process): its experts see
    the routes plus a dummy row."""
    import torch.distributed as dist
    dist.init_process_group("gloo", init_method=f"file://{tmp_path / 'init'}", rank=0,
                            world_size=1)
    try:
        layer = moe.ExpertParallelMoE(128, 128, 4, 2)
        report = moe.warmup(layer, 16, progress=False)
        assert [h for _, h in names_and_hints(report)] == [1, 1, 2, 2, 4, 4, 8, 8]
        check_forwards_compile_nothing(layer, report, 16, monkeypatch)
    finally:
        dist.destroy_process_group()


def test_a_second_warmup_and_compile_of_the_same_specs_hit_the_caches(monkeypatch):
    monkeypatch.setattr(cache, "_memory", {})  # compiled here, into this test's disk cache
    layer = moe.MoE(128, 128, 4, 2)
    first = moe.warmup(layer, 8, progress=False)
    assert {k.source for k in first.kernels} == {"compiled"}
    compiles = count_compiles(monkeypatch)
    again = moe.warmup(torch.nn.Sequential(layer, moe.MoE(128, 128, 4, 2)), 8, progress=False)
    assert [k.source for k in again.kernels] == ["memory"] * len(first.kernels)
    for call in kernel_calls([LayerShape(128, 128, 4, 2)], 8):
        call.fn.compile(**call.placeholders(), **dict(call.consts))
    assert compiles == []
    # A new process finds them on disk (its memory cache is empty).
    monkeypatch.setattr(cache, "_memory", {})
    from_disk = moe.warmup(LayerShape(128, 128, 4, 2), 8, progress=False, jobs=1)
    assert {k.source for k in from_disk.kernels} == {"disk"} and compiles == []


def test_hints_match_every_token_count():
    """The bisection finds the hints a loop over every row count finds."""
    rng = random.Random(0)
    for _ in range(200):
        shape = LayerShape(128, 128, rng.randint(1, 300), rng.randint(1, 9),
                           ranks=rng.choice([None, 1, 2, 8]))
        max_tokens = rng.randint(1, 600)
        first, last, step = _rows(shape, max_tokens)
        want = sorted({expected_rows(m, shape.experts) for m in range(first, last + 1, step)})
        assert expected_m_hints(shape, max_tokens) == want, (shape, max_tokens)
    # Millions of rows take no time: at most 13 hints.
    assert expected_m_hints(LayerShape(7168, 2048, 32, 8, ranks=64), 1 << 20) == [
        1 << i for i in range(13)]


def test_shapes_from_a_layers_arguments():
    """Shared experts join the routed ones; an expert-parallel layer's ranks
    hold E / W experts or one more (default placement), none compile nothing;
    its shared experts run on every rank as a one-GPU layer of S experts."""
    assert layer_shapes_of(256, 128, 6, 2, shared_experts=2) == [LayerShape(256, 128, 8, 4)]
    assert layer_shapes_of(256, 128, 10, 2, ranks=4) == [
        LayerShape(256, 128, 2, 2, ranks=4), LayerShape(256, 128, 3, 2, ranks=4)]
    assert layer_shapes_of(256, 128, 2, 2, ranks=4) == [LayerShape(256, 128, 1, 2, ranks=4)]
    assert layer_shapes_of(256, 128, 6, 2, shared_experts=2, expert_bias=True, ranks=2) == [
        LayerShape(256, 128, 3, 2, expert_bias=True, ranks=2),
        LayerShape(256, 128, 2, 2, expert_bias=True)]
    assert kernel_calls([LayerShape(256, 128, 0, 2, ranks=4)], 64) == []


def test_bad_arguments_are_errors_before_compiling():
    with pytest.raises(ValueError, match="max_tokens must be a positive int"):
        moe.warmup(LayerShape(128, 128, 4, 2), 0)
    with pytest.raises(ValueError, match="hidden = 100 must be a multiple of 16 for FP8"):
        moe.warmup(LayerShape(100, 128, 4, 2, fp8=True), 8)
    with pytest.raises(ValueError, match="no ggc.moe.MoE or ExpertParallelMoE layer"):
        moe.warmup(torch.nn.Linear(4, 4), 8)


# -- python -m ggc precompile ---------------------------------------------------------

def run_cli(*args, env=None):
    env = {**os.environ, "PYTHONPATH": os.path.join(ROOT, "python"), **(env or {})}
    return subprocess.run([sys.executable, "-m", "ggc", "precompile", *args], env=env,
                          capture_output=True, text=True, timeout=300)


def test_cli_help():
    done = run_cli("--help")
    assert done.returncode == 0
    for option in ("--max-tokens", "--experts", "--model", "--fp8", "--target", "--ranks"):
        assert option in done.stdout


def test_cli_compiles_a_tiny_layer_into_the_disk_cache(tmp_path, monkeypatch, capsys):
    layer = ["--experts", "4", "--top-k", "2", "--hidden", "128", "--intermediate", "128",
             "--max-tokens", "8"]
    first = run_cli(*layer, "--target", "sm_90a", env={"GGC_CACHE_DIR": str(tmp_path)})
    assert first.returncode == 0, first.stderr
    lines = first.stdout.splitlines()
    assert len(lines) == 7 and all(line.split()[0] == "compiled" for line in lines[:6])
    assert "moe_down_routed(a ?x128xbf16" in first.stdout and "EXPECTED_M=4" in first.stdout
    assert lines[-1].startswith("ggc: 6 kernels for sm_90a (132 SMs): 6 compiled")
    assert first.stderr == ""  # no bar, no log: not a terminal, nothing asked
    # Another process (this one, its memory cache empty) finds them on disk.
    from ggc.__main__ import main
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path))
    monkeypatch.setattr(cache, "_memory", {})
    assert main(["precompile", *layer]) == 0
    assert "0 compiled, 6 from the disk cache" in capsys.readouterr().out
    assert main(["precompile", *layer, "--fp8", "--hidden", "100"]) == 1
    assert "must be a multiple of 16" in capsys.readouterr().err


def test_cli_reads_a_hugging_face_config_without_weights(tmp_path, capsys):
    """A folder holding only config.json (DeepSeek-V3's shared experts join
    the routed ones)."""
    pytest.importorskip("transformers")
    import hf_models
    from ggc.__main__ import main
    hf_models.config("deepseek_v3").save_pretrained(tmp_path / "model")
    assert os.listdir(tmp_path / "model") == ["config.json"]
    assert main(["precompile", "--model", str(tmp_path / "model"), "--max-tokens", "2",
                 "--no-progress"]) == 0
    out = capsys.readouterr().out
    # E = 6 + 2 shared, 2 + 2 routes a token, H = 256, I = 128.
    assert "moe_down_routed(a ?x128xbf16, w 8x256x128xbf16" in out
    assert "ggc: 2 kernels for sm_90a" in out
    assert main(["precompile", "--model", str(tmp_path / "none"), "--max-tokens", "2"]) == 1


# -- GGC_LOG ----------------------------------------------------------------------------

@ggc.jit
def logged_kernel(x: ggc.language.Rows, w: ggc.language.Weights,
                  offsets: ggc.language.Offsets, y: ggc.language.Out,
                  EXPECTED_M: ggc.language.constexpr = None):
    ggc.language.store(y, ggc.language.grouped_dot(x, w, offsets, expected_m=EXPECTED_M) * 2.0)


def logged_specs(rows=None):
    return (ggc.spec([rows, 128], "bf16"), ggc.spec([2, 128, 128], "bf16"),
            ggc.spec([3], "i32"), ggc.spec([rows, 128], "bf16"))


def test_compile_and_cache_events_are_log_records(caplog, monkeypatch):
    caplog.set_level(logging.DEBUG, logger="ggc")
    logged_kernel.compile(*logged_specs(), EXPECTED_M=8)
    records = [r for r in caplog.records if r.name == "ggc"]
    assert [r.levelname for r in records] == ["INFO"]
    assert records[0].getMessage().startswith(
        "compiled logged_kernel(x ?x128xbf16, w 2x128x128xbf16, offsets 3xi32, y ?x128xbf16; "
        "EXPECTED_M=8) for sm_90a (132 SMs) in ")
    assert " ms (cache miss; to cubin, key " in records[0].getMessage()
    caplog.clear()
    logged_kernel.compile(*logged_specs(rows=5), EXPECTED_M=8)  # a new token count
    assert [(r.levelname, r.getMessage().split(" for ")[0]) for r in caplog.records] == [
        ("DEBUG", "memory cache hit: logged_kernel(x ?x128xbf16, w 2x128x128xbf16, "
                  "offsets 3xi32, y ?x128xbf16; EXPECTED_M=8)")]
    caplog.clear()
    monkeypatch.setattr(cache, "_memory", {})  # as a new process would
    logged_kernel.compile(*logged_specs(rows=6), EXPECTED_M=8)
    assert [r.levelname for r in caplog.records] == ["INFO"]
    assert caplog.records[0].getMessage().startswith("loaded logged_kernel(x ?x128xbf16")
    assert "from the disk cache in " in caplog.records[0].getMessage()


LOGGED_SCRIPT = """
import ggc, ggc.language as gl

@ggc.jit
def logged_kernel(x: gl.Rows, w: gl.Weights, offsets: gl.Offsets, y: gl.Out,
                  EXPECTED_M: gl.constexpr = None):
    gl.store(y, gl.grouped_dot(x, w, offsets, expected_m=EXPECTED_M) * 2.0)

logged_kernel.compile(ggc.spec([None, 128], "bf16"), ggc.spec([2, 128, 128], "bf16"),
                      ggc.spec([3], "i32"), ggc.spec([None, 128], "bf16"), EXPECTED_M=16)
"""


def test_ggc_log_compile_prints_to_stderr(tmp_path):
    """Without torch (import ggc does not import it): quick processes."""
    script = LOGGED_SCRIPT
    env = {**os.environ, "GGC_CACHE_DIR": str(tmp_path),
           "PYTHONPATH": os.path.join(ROOT, "python")}
    for value in ("compile", "1"):
        done = subprocess.run([sys.executable, "-c", script], env={**env, "GGC_LOG": value},
                              capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert "ggc INFO: " in done.stderr and "logged_kernel(x ?x128xbf16" in done.stderr
        assert ("EXPECTED_M=16) for sm_90a (132 SMs) in " in done.stderr if value == "compile"
                else "from the disk cache" in done.stderr)
    quiet = subprocess.run([sys.executable, "-c", script], env={**env, "GGC_LOG": ""},
                           capture_output=True, text=True, timeout=120)
    assert quiet.returncode == 0 and quiet.stderr == ""


# -- progress bars ----------------------------------------------------------------------

class Terminal(io.StringIO):
    def isatty(self):
        return True


def warm(progress_arg=None):
    moe.warmup(LayerShape(128, 64, 2, 2), 4, progress=progress_arg, jobs=1)


@pytest.fixture
def no_delay(monkeypatch):
    """Bars at once (a warm-up of cached kernels takes under DELAY_S)."""
    monkeypatch.setattr(progress, "DELAY_S", 0.0)


def test_warmup_bar_only_when_forced_or_on_a_terminal(no_delay, monkeypatch, capsys):
    warm()  # stderr is pytest's capture, not a terminal
    assert "ggc: warm-up" not in capsys.readouterr().err
    warm(progress_arg=True)
    assert "ggc: warm-up: 100%" in capsys.readouterr().err
    monkeypatch.setenv("GGC_PROGRESS", "1")
    warm()
    assert "ggc: warm-up: 100%" in capsys.readouterr().err
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    monkeypatch.delenv("GGC_PROGRESS")
    warm()
    assert "ggc: warm-up: 100%" in terminal.getvalue() and "6/6" in terminal.getvalue()
    for env, asked in (("0", None), (None, False)):  # a terminal, but told not to
        terminal.seek(0)
        terminal.truncate(0)
        if env is None:
            monkeypatch.delenv("GGC_PROGRESS")
        else:
            monkeypatch.setenv("GGC_PROGRESS", env)
        warm(progress_arg=asked)
        assert terminal.getvalue() == ""


def test_a_slow_compile_shows_a_bar_on_a_terminal_only(monkeypatch):
    monkeypatch.setattr(progress, "DELAY_S", 0.05)
    real = cache.compile_ir

    def slow(ir, **kwargs):
        import time
        time.sleep(0.5)
        return real(ir, **kwargs)
    monkeypatch.setattr(cache, "compile_ir", slow)
    terminal = Terminal()
    monkeypatch.setattr(sys, "stderr", terminal)
    logged_kernel.compile(*logged_specs(), EXPECTED_M=32)
    assert "ggc: compiling logged_kernel for sm_90a: " in terminal.getvalue()
    log = io.StringIO()  # not a terminal: nothing
    monkeypatch.setattr(sys, "stderr", log)
    logged_kernel.compile(*logged_specs(), EXPECTED_M=64)
    assert log.getvalue() == ""


def test_an_autotune_search_shows_a_bar_when_asked(no_delay, monkeypatch, capsys):
    """A search over specs with a stand-in timer runs without a GPU."""
    monkeypatch.setenv("GGC_PROGRESS", "1")
    configs = [ggc.Config(EXPECTED_M=m) for m in (128, 256)]
    tuned = ggc.autotune(configs=configs, timer=lambda fn: 1.0)(logged_kernel)
    assert tuned.choose(*logged_specs()) is configs[0]
    err = capsys.readouterr().err
    assert "ggc: tuning logged_kernel: 100%" in err and "2/2" in err
    assert "ggc: compiling" not in err  # inside the search's bar: none of their own


def test_warmup_compiles_the_sort_and_quantisation_kernels(monkeypatch):
    """The permutation's kernels (gg.sort_routes) for every one-GPU layer
    of at most MAX_EXPERTS experts, the combine's (gg.combine_routes), BF16
    SwiGLU's apart from the up projection (gg.swiglu_rows), and the FP8
    layer's quantisation kernels (gg.quantize_rows): x's gathered rows,
    SwiGLU's output (computed with it) and another activation's (computed
    apart): each once, into the memory the forward looks in."""
    from ggc.moe import combine_kernel, quant_kernel, routes, swiglu_kernel
    monkeypatch.setattr(routes, "_PTX", {})
    monkeypatch.setattr(quant_kernel, "_PTX", {})
    monkeypatch.setattr(combine_kernel, "_PTX", {})
    monkeypatch.setattr(swiglu_kernel, "_PTX", {})
    ggc.set_target("sm_90a")
    shapes = [LayerShape(256, 128, 8, 2, fp8=True), LayerShape(256, 128, 8, 2, fp8=True),
              LayerShape(256, 384, 8, 2, "silu", fp8=True), LayerShape(256, 128, 600, 2),
              LayerShape(256, 128, 8, 2, ranks=2), LayerShape(256, 1152, 8, 2, fp8=True)]
    report = moe.warmup(shapes, 4, progress=False)
    assert [k.kernel for k in report.helpers] == [
        "sort_routes e8 k2", "combine_routes h256 k2", "quantize_rows scattered k256 x2",
        "quantize_rows gated k128", "quantize_rows k384", "swiglu_rows i128",
        "quantize_rows gated k1152"]
    assert {k.source for k in report.helpers} == {"compiled"}
    assert "and 7 sort, quantisation, SwiGLU and combine kernels" in str(report)
    assert set(routes._PTX) == {(8, 2, "i32", "sm_90a")}
    assert set(combine_kernel._PTX) == {(256, 2, "i64", "sm_90a")}
    assert set(swiglu_kernel._PTX) == {(128, "sm_90a", "forward", False)}
    assert set(quant_kernel._PTX) == {
        (128, False, True, "sm_90a", 1, None, False),
        (256, False, False, "sm_90a", 1, ("i64", 2, False), False),
        (384, False, False, "sm_90a", 2, None, False),
        (1152, False, True, "sm_90a", 1, None, False)}
    # A second warm-up finds them in memory.
    again = moe.warmup(shapes[:1], 4, progress=False)
    assert {k.source for k in again.helpers} == {"memory"}


def test_the_scale_gathering_quantisation_only_where_the_rows_reach_it():
    """FP8 layers get the token quantisation that gathers its scales only
    when max_tokens * top_k reaches layer.GATHERED_SCALE_ROWS (or with no
    bound); the scattered one always."""
    from ggc.moe.layer import GATHERED_SCALE_ROWS
    shape = LayerShape(256, 128, 8, 2, fp8=True)
    plain = "quantize_rows scattered k256 x2"
    gathering = plain + " input scales"
    previous = ggc.get_target()
    ggc.set_target("sm_90a")  # a target that converts to e4m3
    try:
        def names(max_tokens):
            return {name for name, _ in helper_kernels([shape], max_tokens)
                    if name.startswith(plain)}
        assert names(GATHERED_SCALE_ROWS // 2 - 1) == {plain}
        assert names(GATHERED_SCALE_ROWS // 2) == {plain, gathering}
        assert names(None) == {plain, gathering}
    finally:
        ggc.set_target(previous)


def test_a_layers_router_kernel_is_warmed_where_route_takes_it(monkeypatch):
    """A layer's router becomes gg.select_experts' kernel (its routed
    experts and top_k, its logits' dtype, its routing), compiled by
    warmup: softmax renormalised or not, DeepSeek-V3's sigmoid with bias,
    groups and scaling; none with ROUTER_KERNEL off."""
    from ggc.moe import router_kernel, routing
    from ggc.moe.precompile import shape_of
    from ggc.moe.router_kernel import KernelRouting
    monkeypatch.setattr(router_kernel, "_PTX", {})
    ggc.set_target("sm_90a")
    qwen = moe.MoE(256, 128, 8, 2, device="meta")
    top1 = moe.MoE(256, 128, 16, 1, renormalize=False, router_dtype=torch.float32,
                   shared_experts=1, device="meta")
    deepseek = moe.MoE(256, 128, 16, 4, scoring="sigmoid", n_group=4, topk_group=2,
                       correction_bias=True, scaling_factor=2.5, device="meta")
    assert shape_of(qwen).router == (8, 2, "bf16", KernelRouting(True))
    assert shape_of(top1).router == (16, 1, "f32", KernelRouting(False))
    assert shape_of(deepseek).router == (16, 4, "bf16", KernelRouting(True, True, 4, 2, True, 2.5))
    report = moe.warmup(torch.nn.Sequential(qwen, deepseek), 4, progress=False)
    names = [k.kernel for k in report.helpers]
    assert "select_experts e8 k2 bf16_renorm" in names
    assert "select_experts e16 k4 bf16_renorm_sigmoid_g4x2_bias_s2p500000000e00" in names
    assert set(router_kernel._PTX) == {(8, 2, "bf16", KernelRouting(True), "sm_90a"),
                                       (16, 4, "bf16", KernelRouting(True, True, 4, 2, True, 2.5),
                                        "sm_90a")}
    # More experts than the kernel's 1,024: torch routes, warmup compiles none.
    assert shape_of(moe.MoE(64, 32, 2048, 2, device="meta")).router is None
    assert shape_of(moe.MoE(64, 32, 64, 33, device="meta")).router is None
    monkeypatch.setattr(routing, "ROUTER_KERNEL", False)
    assert shape_of(qwen).router is None


def test_fp8_swiglu_layer_quantises_in_the_up_projection_from_32_rows(monkeypatch):
    """E = 2, top_k = 2, I = 128, up to 64 tokens: hints 1..64; from 32
    rows an expert (layer.FP8_SWIGLU_EPILOGUE_ROWS) the up projection is
    moe_up_swiglu_fp8 (SwiGLU and its quantisation in the epilogue), below
    it the scaled GEMM; the forwards look up exactly what was warmed."""
    layer = moe.MoE(128, 128, 2, 2).quantize_fp8()
    report = moe.warmup(layer, 64, progress=False)
    ups = [(name, hint) for name, hint in names_and_hints(report) if "down" not in name]
    assert ups == [("grouped_gemm_contiguous_nk_scaled", h) for h in (1, 2, 4, 8, 16)] + [
        ("moe_up_swiglu_fp8", 32), ("moe_up_swiglu_fp8", 64)]
    check_forwards_compile_nothing(layer, report, 64, monkeypatch)
