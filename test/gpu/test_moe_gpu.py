"""ggc.moe on the GPU: fused_moe (BF16 and FP8) against the layer in fp64
on fresh random inputs with ragged routing (experts with no token and with
one), no host synchronisation, CUDA-graph replay with new routing equal to
eager, torch.compile(fullgraph=True), gradients against fp64, and
bit-identical results run to run."""

import os
import sys

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "python"))
import ggc  # noqa: E402,F401
from ggc import moe  # noqa: E402
from moe_reference import (  # noqa: E402
    dequantized_weights, layer_inputs, reference_moe, rel_err,
    use_reference_kernels)

pytestmark = [
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
    pytest.mark.skipif(os.environ.get("GGC_VALIDATE", "") not in ("", "0", "off"),
                       reason="GGC_VALIDATE reads topk_ids back to the host, which the "
                              "no-sync and capture tests forbid")]

BF16 = torch.bfloat16
# (tokens, hidden, intermediate, experts, top_k): Mixtral-, Qwen3- and
# DeepSeek-like proportions at test sizes; decode (1 token) and a batch
# that leaves most of 64 experts with 0 or 1 token.
SHAPES = [(300, 1024, 512, 8, 2), (257, 512, 256, 32, 8), (1, 512, 256, 16, 4),
          (24, 768, 384, 64, 6)]


def layer(tokens, hidden, inter, experts, top_k, seed, gated=True):
    empty = (0, experts - 1) if experts > top_k + 2 else ()
    single = (1,) if experts > top_k + 3 and tokens > 1 else ()
    inputs = layer_inputs(tokens, hidden, inter, experts, top_k, seed, gated, empty, single)
    return [t.cuda() for t in inputs]


def fp8_weights(w13, w2):
    (q13, s13), (q2, s2) = moe.quantize_weights(w13), moe.quantize_weights(w2)
    return q13, q2, dict(w13_scale=s13, w2_scale=s2)


def as64(*tensors):
    return [t.double() for t in tensors]


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("activation", ["swiglu", "silu"])
def test_bf16_layer_matches_fp64(shape, activation):
    x, w13, w2, weights, ids = layer(*shape, seed=sum(shape), gated=activation == "swiglu")
    out = moe.fused_moe(x, w13, w2, weights, ids, activation)
    ref = reference_moe(*as64(x, w13, w2, weights), ids, activation)
    assert rel_err(out, ref) < 1e-2


# H and I off 128 (gpt-oss's 2,880): the last 1x128 and 128x128 scale
# blocks are partial.
PARTIAL_BLOCKS = [(200, 320, 144, 8, 2), (64, 2880, 2880, 4, 2)]


@pytest.mark.parametrize("shape", SHAPES + PARTIAL_BLOCKS,
                         ids=lambda s: "x".join(map(str, s)))
def test_fp8_layer_matches_fp64_and_the_reference_pipeline(shape, monkeypatch, tmp_path):
    """Against fp64 (the quantisation of x and the activation: ~3%), and,
    tighter, against the same host path with each kernel replaced by a
    torch reference of it (the kernels' own error: a scale read from the
    wrong block would show here)."""
    x, w13, w2, weights, ids = layer(*shape, seed=sum(shape) + 1)
    q13, q2, scales = fp8_weights(w13, w2)
    out = moe.fused_moe(x, q13, q2, weights, ids, **scales)
    ref = reference_moe(x.double(), dequantized_weights(q13, scales["w13_scale"]),
                        dequantized_weights(q2, scales["w2_scale"]), weights.double(), ids)
    assert rel_err(out, ref) < 6e-2
    use_reference_kernels(monkeypatch, tmp_path)
    pipeline = moe.fused_moe(x, q13, q2, weights, ids, **scales)
    assert rel_err(out, pipeline.double()) < 1e-2


@pytest.mark.parametrize("shape", SHAPES[:2] + [(64, 2880, 256, 4, 2)],
                         ids=lambda s: "x".join(map(str, s)))
def test_fp8_layer_with_swiglu_quantised_in_the_up_projection(shape, monkeypatch):
    """layer.FP8_SWIGLU_IN_EPILOGUE (at any hint here): the up
    projection's epilogue computes SwiGLU and quantises it
    (kernels.fp8_gated_up; I a multiple of 128, H off 128 too): against
    fp64 within FP8's error, and within the activation's rounding of the
    two-kernel path (which rounds h to bf16 before SwiGLU)."""
    from ggc.moe import kernels, layer as moe_layer
    x, w13, w2, weights, ids = layer(*shape, seed=sum(shape) + 4)
    q13, q2, scales = fp8_weights(w13, w2)
    monkeypatch.setattr(moe_layer, "FP8_SWIGLU_IN_EPILOGUE", False)
    apart = moe.fused_moe(x, q13, q2, weights, ids, **scales)
    calls, real = [], kernels.fp8_gated_up
    def spied(*args):
        made = real(*args)
        calls.append(made is not None)
        return made
    monkeypatch.setattr(moe_layer, "fp8_gated_up", spied)
    monkeypatch.setattr(moe_layer, "FP8_SWIGLU_IN_EPILOGUE", True)
    monkeypatch.setattr(moe_layer, "FP8_SWIGLU_EPILOGUE_ROWS", (1, 4096))
    fused = moe.fused_moe(x, q13, q2, weights, ids, **scales)
    assert calls == [True], "the fused up projection did not run"
    ref = reference_moe(x.double(), dequantized_weights(q13, scales["w13_scale"]),
                        dequantized_weights(q2, scales["w2_scale"]), weights.double(), ids)
    assert rel_err(fused, ref) < 6e-2
    assert rel_err(fused, apart.double()) < 3e-2


@pytest.mark.parametrize("shape", [SHAPES[1], PARTIAL_BLOCKS[0]],
                         ids=lambda s: "x".join(map(str, s)))
def test_fp8_layer_gathers_the_tokens_scales_bit_for_bit(shape, monkeypatch):
    """From layer.GATHERED_SCALE_ROWS sorted rows the token quantisation
    writes each token's scales once and gathers them: the same output,
    bit for bit, as storing every sorted row's scales."""
    from ggc.moe import layer as moe_layer, quant_kernel
    x, w13, w2, weights, ids = layer(*shape, seed=sum(shape) + 3)
    q13, q2, scales = fp8_weights(w13, w2)
    calls, real = [], quant_kernel.rows_mn
    def spied(x, rows=None, gated=False, steps=None, positions=None, sources=None):
        made = real(x, rows, gated, steps, positions, sources)
        if positions is not None:
            calls.append((sources is not None, made is not None))
        return made
    monkeypatch.setattr(quant_kernel, "rows_mn", spied)
    monkeypatch.setattr(moe_layer, "GATHERED_SCALE_ROWS", 1 << 62)
    stored = moe.fused_moe(x, q13, q2, weights, ids, **scales)
    monkeypatch.setattr(moe_layer, "GATHERED_SCALE_ROWS", 1)
    gathered = moe.fused_moe(x, q13, q2, weights, ids, **scales)
    assert calls == [(False, True), (True, True)]  # both kernels ran
    assert torch.equal(stored, gathered)


@pytest.mark.parametrize("shape", [SHAPES[0], PARTIAL_BLOCKS[1]],
                         ids=lambda s: "x".join(map(str, s)))
def test_fp8_layer_with_an_activation_apart(shape, monkeypatch):
    """A plain activation (silu: not computed with the quantisation) runs
    apart and gg.quantize_rows' kernel quantises its output: against fp64
    within FP8's error."""
    from ggc.moe import quant_kernel
    x, w13, w2, weights, ids = layer(*shape, seed=sum(shape) + 2, gated=False)
    q13, q2, scales = fp8_weights(w13, w2)
    plain_calls, real = [], quant_kernel.rows_mn
    def counted(x, rows=None, gated=False, steps=None, positions=None, sources=None):
        plain_calls.append(rows is None and positions is None and not gated)
        return real(x, rows, gated, steps, positions, sources)
    monkeypatch.setattr(quant_kernel, "rows_mn", counted)
    out = moe.fused_moe(x, q13, q2, weights, ids, "silu", **scales)
    assert any(plain_calls), "the activation was not quantised by gg.quantize_rows' kernel"
    ref = reference_moe(x.double(), dequantized_weights(q13, scales["w13_scale"]),
                        dequantized_weights(q2, scales["w2_scale"]), weights.double(), ids,
                        "silu")
    assert rel_err(out, ref) < 6e-2


def test_no_host_synchronisation():
    """torch's sync debug mode raises on any op that waits for the GPU."""
    x, w13, w2, weights, ids = layer(*SHAPES[1], seed=3)
    q13, q2, scales = fp8_weights(w13, w2)
    moe.fused_moe(x, w13, w2, weights, ids)  # compiled and loaded outside the check
    moe.fused_moe(x, q13, q2, weights, ids, **scales)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        moe.fused_moe(x, w13, w2, weights, ids)
        moe.fused_moe(x, q13, q2, weights, ids, **scales)
    finally:
        torch.cuda.set_sync_debug_mode("default")


@pytest.mark.parametrize("fp8", [False, True], ids=["bf16", "fp8"])
def test_cuda_graph_replays_new_routing(fp8):
    """One capture, replayed with new tokens and new routing (different
    experts empty each time) written into its inputs: every replay equals
    an eager call bit for bit."""
    shape = (200, 512, 256, 16, 4)
    x, w13, w2, weights, ids = layer(*shape, seed=4)
    extra = {}
    if fp8:
        w13, w2, extra = fp8_weights(w13, w2)
    call = lambda: moe.fused_moe(x, w13, w2, weights, ids, **extra)  # noqa: E731
    call()
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        out = call()
    for seed in range(5, 9):
        new_x, _, _, new_weights, new_ids = layer(*shape, seed=seed)
        if seed % 2:  # another pair of experts left empty
            new_ids = (new_ids + seed) % shape[3]
        x.copy_(new_x), weights.copy_(new_weights), ids.copy_(new_ids)
        graph.replay()
        eager = call()
        torch.cuda.synchronize()
        assert torch.equal(out, eager), seed


def test_compiled_fullgraph():
    x, w13, w2, weights, ids = layer(*SHAPES[0], seed=9)
    step = lambda x, weights, ids: moe.fused_moe(x, w13, w2, weights, ids)  # noqa: E731
    eager = step(x, weights, ids)
    ref = reference_moe(*as64(x, w13, w2, weights), ids)
    aot = torch.compile(step, backend="aot_eager", fullgraph=True)(x, weights, ids)
    torch._dynamo.reset()
    inductor = torch.compile(step, fullgraph=True)(x, weights, ids)
    # Traced, the permutation, SwiGLU and combine are torch ops (eagerly
    # ggc's kernels, whose SwiGLU rounds once, as inductor's fused one does):
    # close, not equal.
    for compiled in (aot, inductor):
        assert rel_err(compiled, ref) < 1e-2 and rel_err(compiled, eager.double()) < 1e-2


def leaves(*tensors):
    return [t.detach().clone().requires_grad_() for t in tensors]


@pytest.mark.parametrize("compiled", [False, True], ids=["eager", "compiled"])
def test_gradients_match_fp64(compiled):
    x, w13, w2, weights, ids = layer(*SHAPES[1], seed=10)
    grad = torch.randn_like(x)
    ours = leaves(x, w13, w2, weights)
    fn = moe.fused_moe
    if compiled:
        torch._dynamo.reset()
        fn = torch.compile(moe.fused_moe, fullgraph=True)
    got = torch.autograd.grad(fn(*ours, ids), ours, grad)
    exact = leaves(*as64(x, w13, w2, weights))
    want = torch.autograd.grad(reference_moe(*exact, ids), exact, grad.double())
    for name, g, w in zip(("x", "w13", "w2", "topk_weights"), got, want):
        assert rel_err(g, w) < 2e-2, name
    assert (got[1][0] == 0).all() and (got[2][0] == 0).all()  # expert 0 had no token


@pytest.mark.parametrize("fp8", [False, True], ids=["bf16", "fp8"])
def test_two_runs_are_bit_identical(fp8):
    x, w13, w2, weights, ids = layer(4096, 1024, 512, 64, 8, seed=11)
    extra = {}
    if fp8:
        w13, w2, extra = fp8_weights(w13, w2)
    first = moe.fused_moe(x, w13, w2, weights, ids, **extra)
    second = moe.fused_moe(x.clone(), w13, w2, weights.clone(), ids.clone(), **extra)
    assert torch.equal(first, second)
    if not fp8:
        grads = []
        for _ in range(2):
            inputs = leaves(x, weights)
            out = moe.fused_moe(inputs[0], w13, w2, inputs[1], ids)
            grads.append(torch.autograd.grad(out, inputs, torch.ones_like(out)))
        assert all(torch.equal(a, b) for a, b in zip(*grads))


def test_module_bf16_and_fp8():
    torch.manual_seed(12)
    layer_ = moe.MoE(512, 256, 16, 4, scoring="sigmoid", n_group=4, topk_group=2,
                     correction_bias=True, scaling_factor=2.5, device="cuda")
    x = torch.randn(3, 50, 512, device="cuda").to(BF16)
    out = layer_(x)
    tokens = x.reshape(-1, 512)
    weights, ids = moe.route(layer_.gate(tokens), 4, scoring="sigmoid", n_group=4,
                             topk_group=2, correction_bias=layer_.correction_bias,
                             scaling_factor=2.5)
    ref = reference_moe(*as64(tokens, layer_.w13.detach(), layer_.w2.detach(), weights), ids)
    assert rel_err(out.reshape(-1, 512), ref) < 1e-2
    compiled = torch.compile(layer_, fullgraph=True)
    assert rel_err(compiled(x).reshape(-1, 512), ref) < 1e-2
    layer_.quantize_fp8()
    with torch.no_grad():
        fp8 = layer_(x)
    ref = reference_moe(tokens.double(), dequantized_weights(layer_.w13, layer_.w13_scale),
                        dequantized_weights(layer_.w2, layer_.w2_scale), weights.double(), ids)
    assert rel_err(fp8.reshape(-1, 512), ref) < 6e-2


def test_fp8_layer_with_no_tokens():
    """An empty batch (a rank with no tokens in expert parallelism) through
    the FP8 layer: its empty M-major activation scales once failed the
    launch's stride check."""
    torch.manual_seed(3)
    layer_ = moe.MoE(256, 128, 8, 2, device="cuda").quantize_fp8()
    with torch.no_grad():
        for graph in (False, True):
            out = layer_.forward(torch.empty(0, 256, device="cuda", dtype=BF16))
            assert out.shape == (0, 256), graph


def test_bf16_layer_with_swiglu_in_the_up_projection(monkeypatch):
    """Experts expecting 150 rows (over 64) take the up projection with
    SwiGLU in its epilogue (ggc.moe.kernels.gated_up), reading the 600
    tokens through the 1,200 routes' source list (a_rows): against fp64,
    with empty and one-token experts, and the unfused layer's error."""
    from ggc.moe import kernels
    shape = (600, 1024, 512, 8, 2)
    x, w13, w2, weights, ids = layer(*shape, seed=11)
    calls = []
    _, targets = kernels._GATED_UP["swiglu"]
    kernel = kernels._GATED_UP_GATHERED["swiglu"]

    def recording(*args, **kw):
        calls.append((tuple(args[0].shape), tuple(args[1].shape)))
        return kernel(*args, **kw)
    monkeypatch.setitem(kernels._GATED_UP_GATHERED, "swiglu", recording)
    want = reference_moe(*[t.double() for t in (x, w13, w2, weights)], ids)
    with torch.no_grad():
        out = moe.fused_moe(x, w13, w2, weights, ids, graph=False)
    fused = ggc.get_target() in targets
    assert calls == ([((600, 1024), (1200,))] if fused else []), calls
    assert rel_err(out, want) < 1e-2


@pytest.mark.parametrize("compute_dtype", [None, torch.float8_e4m3fn], ids=["bf16", "fp8"])
def test_training_sorts_by_the_kernel_as_torch_does(compute_dtype, monkeypatch):
    """Training takes gg.sort_routes' kernels (layer.KERNEL_SORT_IN_TRAINING)
    and the sorted weights' gradient from permute._SortedWeights: the
    output and every gradient (x, w13, w2, topk_weights) are the bits of
    torch's sort path, on ragged routing with empty and one-token
    experts, bf16 topk_weights included."""
    from ggc.moe import layer as layer_module
    x, w13, w2, weights, ids = layer(*SHAPES[1], seed=12)
    for topk_weights in (weights, weights.to(BF16)):
        results = []
        for kernel_sort in (True, False):
            monkeypatch.setattr(layer_module, "KERNEL_SORT_IN_TRAINING", kernel_sort)
            inputs = leaves(x, w13, w2, topk_weights)
            out = moe.fused_moe(*inputs, ids, compute_dtype=compute_dtype)
            grad = torch.randn(out.shape, device=out.device, dtype=out.dtype,
                               generator=torch.Generator(device="cuda").manual_seed(4))
            results.append([out] + list(torch.autograd.grad(out, inputs, grad)))
        for name, got, want in zip(("out", "x", "w13", "w2", "topk_weights"), *results):
            assert got.dtype == want.dtype and torch.equal(got, want), name
        assert results[0][4].abs().sum() > 0


def test_fp8_training_experts_fused_match_the_chained_path(monkeypatch):
    """The FP8 layer's SwiGLU experts as one autograd function whose
    kernels also quantise what they write (layer.FUSED_FP8_EXPERTS,
    ggc.moe.fp8_experts): the output and every gradient the bits of
    fp8_grouped_mm, RoutedSwiGLU and fp8_grouped_mm chained, on ragged
    routing with empty and one-token experts; and within FP8's error of
    fp64."""
    from ggc import training
    from ggc.moe import layer as layer_module
    x, w13, w2, weights, ids = layer(*SHAPES[1], seed=13)
    results = []
    for fused in (True, False):
        monkeypatch.setattr(layer_module, "FUSED_FP8_EXPERTS", fused)
        training.release_quantized_weights()
        inputs = leaves(x, w13, w2, weights)
        out = moe.fused_moe(*inputs, ids, compute_dtype=torch.float8_e4m3fn)
        grad = torch.randn(out.shape, device=out.device, dtype=out.dtype,
                           generator=torch.Generator(device="cuda").manual_seed(6))
        results.append([out] + list(torch.autograd.grad(out, inputs, grad)))
    for name, got, want in zip(("out", "x", "w13", "w2", "topk_weights"), *results):
        assert got.dtype == want.dtype and torch.equal(got, want), name
    exact = leaves(*as64(x, w13, w2, weights))
    want = reference_moe(*exact, ids)
    want_grads = torch.autograd.grad(want, exact, grad.double())
    # Two FP8 GEMMs in a row (test_training.check_layer: about 6% from BF16).
    assert rel_err(results[0][0], want) < 0.1
    for name, g, w in zip(("x", "w13", "w2", "topk_weights"), results[0][1:], want_grads):
        assert rel_err(g, w) < 0.1, name
