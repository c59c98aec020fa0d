"""ggc.training.fp8_grouped_mm (DeepSeek-V3's FP8 recipe) and the MoE
layers' compute_dtype=FP8, on ggc's reference backend (CPU). The same
checks run on the GPU's kernels in test/gpu/test_training_gpu.py.

Each check compares with fp64 twice: with the exact product (within FP8's
error: a few percent) and with the product of the operands as quantised
(within the bf16 output's rounding), which catches a scale read from the
wrong block or a transposed operand that the loose bound would not."""

import itertools
import os
import sys

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "python"))
from ggc import training  # noqa: E402
from ggc.moe import MoE  # noqa: E402

FP8 = torch.float8_e4m3fn
# Two e4m3 operands (3 mantissa bits each: about 3.6% rms relative
# rounding between them), measured 3.6-3.7% on random normals.
FP8_BOUND = 0.05
# The same product of the quantised operands, summed in f32 and rounded
# once to bf16.
QUANTISED_BOUND = 1e-2


def rel_err(got, want):
    got, want = got.double(), want.double()
    return ((got - want).norm() / want.norm().clamp_min(1e-30)).item()


def offsets_of(sizes, device):
    ends = torch.tensor([0] + sizes).cumsum(0)
    return ends.to(torch.int32).to(device)


def dequantized(q, scales, block_rows):
    """q [R, C] e4m3 with f32 scales [R / block_rows, C / 128] (scales may
    be a strided view) as fp64."""
    full = scales.double().repeat_interleave(block_rows, 0).repeat_interleave(128, 1)
    return q.double() * full[:q.shape[0], :q.shape[1]]


def problem(sizes, n, k, device, seed):
    gen = torch.Generator().manual_seed(seed)
    t = sum(sizes)
    x = torch.randn(t, k, generator=gen).bfloat16().to(device).requires_grad_()
    w = (torch.randn(len(sizes), n, k, generator=gen) / k ** 0.5).bfloat16().to(device)
    dy = torch.randn(t, n, generator=gen).bfloat16().to(device)
    return x, w.requires_grad_(), dy, offsets_of(sizes, device)


def fp64_products(x, w, dy, offsets):
    """(y, dx, dw) of one grouped projection in fp64, for fp64 operands x
    [T, K], w [G, N, K], dy [T, N] (rows past offsets[G]: zeros)."""
    bounds = offsets.tolist()
    y = x.new_zeros(x.shape[0], w.shape[1])
    dx, dw = torch.zeros_like(x), torch.zeros_like(w)
    for g in range(w.shape[0]):
        lo, hi = bounds[g], bounds[g + 1]
        y[lo:hi] = x[lo:hi] @ w[g].t()
        dx[lo:hi] = dy[lo:hi] @ w[g]
        dw[g] = dy[lo:hi].t() @ x[lo:hi]
    return y, dx, dw


def quantised_reference(x, w, dy, offsets, fp8_wgrad):
    """(y, dx, dw) in fp64 from the operands as the recipe quantises them
    (dw from the bf16 ones unless `fp8_wgrad`)."""
    xq, xs = training.quantized_rows(x.detach())
    made = training.quantized_weights(w, transposed=True)
    dyq, dys = training.quantized_rows(dy)
    w64 = torch.stack([dequantized(made.q[g], made.scales[g], 128)
                       for g in range(w.shape[0])])
    wt64 = torch.stack([dequantized(made.qt[g], made.scales_t[g], 128)
                        for g in range(w.shape[0])])
    assert torch.equal(w64.transpose(1, 2), wt64)  # the transposed copy: the same values
    y, dx, _ = fp64_products(dequantized(xq, xs, 1), w64, dequantized(dyq, dys, 1), offsets)
    if fp8_wgrad:  # the tokens' blocks, transposed back ([C, P] -> [T, C])
        x_w, dy_w = (unpadded_tokens(training.quantized_tokens(t, offsets), offsets)
                     for t in (x.detach(), dy))
    else:
        x_w, dy_w = x.detach().double(), dy.double()
    _, _, dw = fp64_products(x_w, w64, dy_w, offsets)
    return y, dx, dw


def unpadded_tokens(quantized, offsets):
    """quantized_tokens' (q [C, P], scales, padded offsets) dequantised in
    fp64 and put back as [T, C]: group g's tokens from its padded span."""
    q, scales, padded = quantized
    values = dequantized(q, scales, 1)
    return torch.cat([values[:, p:p + hi - lo] for lo, hi, p in
                      zip(offsets[:-1].tolist(), offsets[1:].tolist(), padded.tolist())],
                     dim=1).t()


def check_recipe(sizes, n, k, device, seed=0, wgrad_dtype=torch.bfloat16):
    x, w, dy, offsets = problem(sizes, n, k, device, seed)
    y = training.fp8_grouped_mm(x, w, offsets, wgrad_dtype=wgrad_dtype)
    y.backward(dy)
    assert y.dtype == torch.bfloat16 and x.grad.dtype == torch.bfloat16
    assert w.grad.dtype == w.dtype and w.grad.shape == w.shape
    exact = fp64_products(x.detach().double(), w.detach().double(), dy.double(), offsets)
    quantised = quantised_reference(x, w, dy, offsets, wgrad_dtype == FP8)
    for name, got, want, near in zip(("y", "dx", "dw"), (y, x.grad, w.grad), exact, quantised):
        assert rel_err(got, want) < FP8_BOUND, name
        assert rel_err(got, near) < QUANTISED_BOUND, name
    for g, size in enumerate(sizes):
        if size == 0:  # an empty group's weight gradient is zeros, written
            assert torch.count_nonzero(w.grad[g]) == 0
    return x, w


# Ragged: an empty group, a 1-row group, sizes off every tile boundary,
# a token count off 128 (the token blocks' padding).
RAGGED = [[0, 1, 130, 67, 0, 255], [300, 0, 1, 1]]


@pytest.mark.parametrize("sizes", RAGGED + [[], [128, 128]])
def test_quantized_tokens_pad_each_group_to_whole_blocks(sizes):
    """Group g's tokens start at padded[g], a multiple of 128 past the
    previous group's blocks; each block is quantize_rows' of its column's
    128 tokens of that group alone (zeros after them), and every column
    past the last group is zero."""
    gen = torch.Generator().manual_seed(len(sizes))
    t, c = sum(sizes), 48
    x = (torch.randn(t, c, generator=gen) * 3).bfloat16()
    offsets = torch.tensor([0] + sizes).cumsum(0).to(torch.int32)
    q, scales, padded = training.quantized_tokens(x, offsets)
    want_padded = [0]
    for size in sizes:
        want_padded.append(want_padded[-1] + -(-size // 128) * 128)
    assert padded.dtype == torch.int32 and padded.tolist() == want_padded
    assert q.shape == (c, max(128, -(-t // 128) * 128 + 128 * len(sizes)))
    assert scales.shape == (c, q.shape[1] // 128)
    for g, size in enumerate(sizes):
        lo, start = int(offsets[g]), want_padded[g]
        span = x.new_zeros(c, want_padded[g + 1] - start)
        span[:, :size] = x[lo:lo + size].t()
        if size:
            want_q, want_s = training.quantize_rows(span)
            assert torch.equal(q[:, start:start + span.shape[1]].view(torch.uint8),
                               want_q.view(torch.uint8))
            assert torch.equal(scales[:, start // 128:(start + span.shape[1]) // 128], want_s)
    assert torch.count_nonzero(q[:, want_padded[-1]:].view(torch.uint8)) == 0


@pytest.mark.parametrize("bounds, groups", [
    ([0, 1000, 0, 1000], [(0, 1000), (1000, 1000), (1000, 1000)]),   # decreasing
    ([-5, 150, 90, 260, 1000], [(0, 150), (150, 150), (150, 200), (200, 200)]),
    ([0], []),
])
def test_quantized_tokens_clamp_offsets_and_stay_inside_their_columns(bounds, groups):
    """Offsets clamped to [0, T] and made non-decreasing (each the largest
    so far): the groups never overlap, so the padded offsets stay within
    the P columns the weight gradient reads (decreasing offsets once
    padded past them)."""
    t = 1000 if len(bounds) == 4 else (200 if len(bounds) == 5 else 7)
    x = torch.randn(t, 32).bfloat16()
    q, scales, padded = training.quantized_tokens(x, torch.tensor(bounds, dtype=torch.int64))
    starts = [0]
    for lo, hi in groups:
        starts.append(starts[-1] + -(-(hi - lo) // 128) * 128)
    assert padded.tolist() == starts and starts[-1] <= q.shape[1]
    for (lo, hi), start in zip(groups, starts):
        if hi > lo:
            want_q, _ = training.quantize_rows(torch.cat(
                [x[lo:hi].t(), x.new_zeros(32, -(-(hi - lo) // 128) * 128 - (hi - lo))], 1))
            assert torch.equal(q[:, start:start + want_q.shape[1]].view(torch.uint8),
                               want_q.view(torch.uint8))


@pytest.mark.parametrize("x, offsets, error, match", [
    (torch.zeros(4, 32, dtype=torch.bfloat16), torch.zeros(0, dtype=torch.int32), ValueError,
     r"offsets must be \[G\+1\] with G >= 0, got shape \[0\]"),
    (torch.zeros(4, 32, dtype=torch.bfloat16), torch.zeros(2, 2, dtype=torch.int32), ValueError,
     r"offsets must be \[G\+1\]"),
    (torch.zeros(4, 32, dtype=torch.bfloat16), torch.zeros(2), TypeError,
     "offsets must be int32 or int64, got torch.float32"),
    (torch.zeros(4, 2, 16, dtype=torch.bfloat16), torch.zeros(2, dtype=torch.int32), ValueError,
     r"takes x \[T, C\], got shape \[4, 2, 16\]"),
    ([[0.0]], torch.zeros(2, dtype=torch.int32), TypeError, "x must be a torch.Tensor, got list"),
])
def test_quantized_tokens_bad_arguments(x, offsets, error, match):
    with pytest.raises(error, match=match):
        training.quantized_tokens(x, offsets)


@pytest.mark.parametrize("wgrad_dtype", [torch.bfloat16, FP8])
@pytest.mark.parametrize("sizes", RAGGED)
def test_recipe_against_fp64(sizes, wgrad_dtype):
    check_recipe(sizes, 256, 384, "cpu", wgrad_dtype=wgrad_dtype)


@pytest.mark.parametrize("path", ["torch.ops.ggc.grouped_mm", "ggc.ops.grouped_gemm",
                                  "training.fp8_grouped_mm"])
def test_rows_outside_every_group_get_a_zero_input_gradient(path):
    """x's rows past the last group took no part in the product: each
    autograd path gives them a zero gradient, whatever the memory held (the
    kernels write only the groups' rows), and the groups' rows the fp64
    one."""
    import ggc
    sizes, n, k = [0, 37, 130, 1], 256, 384
    x, w, dy, offsets = problem(sizes, n, k, "cpu", seed=3)
    tail = 45
    x = torch.cat([x.detach(), torch.randn(tail, k).bfloat16()]).requires_grad_()
    run = {"torch.ops.ggc.grouped_mm": lambda: torch.ops.ggc.grouped_mm(x, w, offsets),
           "ggc.ops.grouped_gemm": lambda: ggc.ops.grouped_gemm(x, w, offsets=offsets),
           "training.fp8_grouped_mm": lambda: training.fp8_grouped_mm(x, w, offsets)}[path]
    for _ in range(2):  # the second call takes the op's kept launch
        x.grad = None
        y = run()
        y.backward(torch.cat([dy, torch.randn(tail, n).bfloat16()]))
        assert torch.count_nonzero(x.grad[-tail:]) == 0, "rows outside every group"
        rows = sum(sizes)
        _, dx, _ = fp64_products(x.detach()[:rows].double(), w.detach().double(),
                                 dy.double(), offsets)
        bound = FP8_BOUND if path.startswith("training") else QUANTISED_BOUND
        assert rel_err(x.grad[:rows], dx) < bound


@pytest.mark.parametrize("wgrad_dtype", [torch.bfloat16, FP8])
def test_recipe_with_partial_scale_blocks(wgrad_dtype):
    """N = 208 and K = 144 end inside a 128-wide block (gpt-oss's 2,880
    does): the last 1x128 and 128x128 scales cover fewer values."""
    check_recipe(RAGGED[0], 208, 144, "cpu", wgrad_dtype=wgrad_dtype)


def test_weights_quantised_once_per_version():
    x, w, dy, offsets = problem([40, 90], 128, 256, "cpu", 1)
    first = training.quantized_weights(w, transposed=True)
    assert training.quantized_weights(w, transposed=True) is first
    assert training.quantized_weights(w, transposed=False) is first
    with torch.no_grad():
        w.mul_(2.0)  # an optimiser's in-place step
    again = training.quantized_weights(w, transposed=True)
    assert again is not first
    training.release_quantized_weights()
    assert training.quantized_weights(w, transposed=True) is not again
    assert torch.equal(again.q.view(torch.uint8), first.q.view(torch.uint8))
    assert torch.allclose(again.scales, 2 * first.scales)


def test_no_grad_makes_none_of_the_backwards_operands(monkeypatch):
    """Under torch.no_grad parameters still require grad, but nothing is
    differentiated: no transposed weights, no quantised tokens (both were
    made and dropped)."""
    x, w, _, offsets = problem([40, 90], 128, 256, "cpu", 1)
    x.requires_grad_()
    w.requires_grad_()
    made = []
    real_weights, real_tokens = training.quantized_weights, training._group_tokens
    monkeypatch.setattr(training, "quantized_weights",
                        lambda w, transposed: made.append(("w", transposed)) or
                        real_weights(w, transposed))
    monkeypatch.setattr(training, "_group_tokens",
                        lambda *a: made.append(("tokens",)) or real_tokens(*a))
    training.release_quantized_weights()
    with torch.no_grad():
        y = training.fp8_grouped_mm(x, w, offsets, wgrad_dtype=torch.float8_e4m3fn)
    assert made == [("w", False)] and not y.requires_grad
    made.clear()
    training.fp8_grouped_mm(x, w, offsets, wgrad_dtype=torch.float8_e4m3fn)
    assert made == [("w", True), ("tokens",)]


def test_inference_weights_are_quantised_on_every_call():
    """An inference tensor keeps no version to key the cache by (reading
    it raised torch's error, which named nothing)."""
    with torch.inference_mode():
        _, w, _, _ = problem([40, 90], 128, 256, "cpu", 1)
        first = training.quantized_weights(w, transposed=False)
        again = training.quantized_weights(w, transposed=False)
    assert again is not first
    assert torch.equal(again.q.view(torch.uint8), first.q.view(torch.uint8))


@pytest.mark.parametrize("args, error, match", [
    (dict(x_dtype=torch.float32), TypeError, "bf16 x and w"),
    (dict(k=200), ValueError, "K a multiple of 16"),
    (dict(n=100), ValueError, "N a multiple of 16"),
    (dict(groups=3), ValueError, r"offsets must be \[G\+1\] = \[4\], got \[3\]"),
    (dict(offsets_dtype=torch.float32), TypeError, "int32 or int64"),
    (dict(wgrad_dtype=torch.float16), TypeError, "wgrad_dtype must be torch.bfloat16 or"),
    (dict(groups=0), ValueError, r"G, N and K at least 1, got \[0, 128, 256\]"),
])
def test_bad_arguments(args, error, match):
    k, n = args.get("k", 256), args.get("n", 128)
    x = torch.randn(10, k).to(args.get("x_dtype", torch.bfloat16))
    w = torch.randn(args.get("groups", 2), n, k).bfloat16()
    offsets = torch.tensor([0, 4, 10]).to(args.get("offsets_dtype", torch.int32))
    with pytest.raises(error, match=match):
        training.fp8_grouped_mm(x, w, offsets,
                                wgrad_dtype=args.get("wgrad_dtype", torch.bfloat16))


def check_layer(device, hidden=256, intermediate=128, experts=4, top_k=2, tokens=37):
    """MoE(compute_dtype=FP8) trains: its output and every gradient within
    FP8's error of the BF16 layer's on the same weights."""
    torch.manual_seed(0)
    bf16 = MoE(hidden, intermediate, experts, top_k, device=device)
    fp8 = MoE(hidden, intermediate, experts, top_k, device=device, compute_dtype=FP8)
    fp8.load_state_dict(bf16.state_dict())
    x = torch.randn(tokens, hidden, device=device).bfloat16()
    grad = torch.randn(tokens, hidden, device=device).bfloat16()
    outs = []
    for layer in (bf16, fp8):
        xi = x.clone().requires_grad_()
        y = layer(xi)
        y.backward(grad)
        outs.append((y, xi.grad, layer.w13.grad, layer.w2.grad, layer.gate.weight.grad))
    for name, got, want in zip(("y", "dx", "dw13", "dw2", "dgate"), outs[1], outs[0]):
        # Two FP8 GEMMs in a row against BF16's: measured about 6.3%.
        assert 1e-3 < rel_err(got, want) < 0.1, name


def test_layer_trains_in_fp8():
    check_layer("cpu")


def test_layer_trains_in_fp8_with_fp8_weight_gradients(monkeypatch):
    """ggc.moe.layer.FP8_WEIGHT_GRADIENT_ROWS at or below the rows an expert
    gets: the layer's weight gradients run in FP8, within FP8's error too."""
    from ggc.moe import layer as moe_layer
    monkeypatch.setattr(moe_layer, "FP8_WEIGHT_GRADIENT_ROWS", 1)
    calls = []
    original = training.fp8_grouped_mm
    monkeypatch.setattr(training, "fp8_grouped_mm",
                        lambda *a, **k: calls.append(k["wgrad_dtype"]) or original(*a, **k))
    check_layer("cpu")
    assert calls == [FP8, FP8]


def test_layer_trains_in_fp8_with_partial_scale_blocks():
    """H and I off 128 (gpt-oss's 2,880): the layer trains as with whole
    blocks."""
    check_layer("cpu", hidden=144, intermediate=208)


def test_layer_compute_dtype_errors():
    with pytest.raises(TypeError, match="None .* or torch.float8_e4m3fn"):
        MoE(256, 128, 4, 2, compute_dtype=torch.float16)
    with pytest.raises(ValueError, match="intermediate_size = 100 a multiple of 16"):
        MoE(256, 100, 4, 2, compute_dtype=FP8)
    layer = MoE(256, 128, 4, 2, compute_dtype=FP8)
    assert "compute_dtype=torch.float8_e4m3fn" in repr(layer)
    layer.quantize_fp8()  # FP8 weights for inference: the GEMMs are FP8 on them
    assert layer.compute_dtype is None


def test_fused_moe_refuses_fp8_weights_with_compute_dtype():
    from ggc.moe import fused_moe
    from ggc.moe.quant import quantize_weights
    w13, s13 = quantize_weights(torch.randn(4, 256, 256))
    w2, s2 = quantize_weights(torch.randn(4, 256, 128))
    x = torch.randn(3, 256).bfloat16()
    ids = torch.zeros(3, 1, dtype=torch.int32)
    with pytest.raises(ValueError, match="FP8 already"):
        fused_moe(x, w13, w2, torch.ones(3, 1), ids, w13_scale=s13, w2_scale=s2,
                  compute_dtype=FP8)
    # The message names what was passed (it named float8_e4m3fn for any).
    with pytest.raises(ValueError, match=r"compute_dtype=torch.bfloat16: these weights are "
                                         r"FP8 already"):
        fused_moe(x, w13, w2, torch.ones(3, 1), ids, w13_scale=s13, w2_scale=s2,
                  compute_dtype=torch.bfloat16)


@pytest.mark.parametrize("wgrad_dtype", [torch.bfloat16, FP8])
def test_compiled_fullgraph_equals_eager(wgrad_dtype):
    """fp8_grouped_mm under torch.compile(fullgraph=True): no graph break
    (the FP8 weight gradient's token padding included: no host sync), the
    eager call's output and gradients."""
    x, w, dy, offsets = problem([100, 0, 200], 128, 256, "cpu", 3)
    compiled = torch.compile(training.fp8_grouped_mm, fullgraph=True, backend="aot_eager")
    grads = []
    for fn in (training.fp8_grouped_mm, compiled):
        xi, wi = x.detach().clone().requires_grad_(), w.detach().clone().requires_grad_()
        y = fn(xi, wi, offsets, wgrad_dtype=wgrad_dtype)
        y.backward(dy)
        grads.append((y, xi.grad, wi.grad))
    for eager, traced in zip(*grads):
        assert torch.equal(eager, traced)


def test_strided_x_gives_the_contiguous_result():
    """A transposed view for x (strides (1, T)): the same output and
    gradients as its contiguous copy."""
    x, w, dy, offsets = problem([50, 0, 77], 128, 256, "cpu", 4)
    strided = x.detach().t().contiguous().t().requires_grad_()
    assert not strided.is_contiguous()
    results = []
    for xi in (x, strided):
        wi = w.detach().clone().requires_grad_()
        y = training.fp8_grouped_mm(xi, wi, offsets)
        y.backward(dy)
        results.append((y, xi.grad, wi.grad))
    for a, b in zip(*results):
        assert torch.equal(a, b)


def check_compiled_layer(device, tolerance):
    """MoE(compute_dtype=FP8) under torch.compile(fullgraph=True), after an
    eager call has kept its quantised weights: no graph break, and its
    output and gradients against the eager layer's (within `tolerance`;
    0: the same bits)."""
    torch.manual_seed(0)
    layer = MoE(256, 128, 4, 2, device=device, compute_dtype=FP8)
    compiled = torch.compile(layer, fullgraph=True, backend="aot_eager")
    x = torch.randn(37, 256, device=device).bfloat16()
    grad = torch.randn(37, 256, device=device).bfloat16()
    results = []
    for fn in (layer, compiled):
        xi = x.clone().requires_grad_()
        y = fn(xi)
        y.backward(grad)
        results.append([y, xi.grad] + [p.grad.clone() for p in layer.parameters()])
        layer.zero_grad(set_to_none=True)
    for eager, traced in zip(*results):
        if tolerance == 0:
            assert torch.equal(eager, traced)
        else:
            assert rel_err(traced, eager) < tolerance


def test_compiled_layer_equals_eager():
    check_compiled_layer("cpu", 0)


WANTS = [(True, True, True, True), (True, False, False, False), (False, False, True, False),
         (False, True, False, True)]


def check_fused_experts(wants, device, inter=128, gathered_scales=False, tokens=30):
    """ggc.moe.fp8_experts.swiglu_experts (the FP8 layer's gather, SwiGLU
    experts and combine as one autograd function) gives the bits of the
    gather, fp8_grouped_mm, RoutedSwiGLU, fp8_grouped_mm and the combine
    chained, forward and for each input's gradient, whichever inputs want
    one (expert 0 left empty)."""
    from ggc.moe import fp8_experts, swiglu_kernel
    from ggc.moe.permute import _CombineRows, _GatherRows, sort_routes
    gen = torch.Generator().manual_seed(sum(wants) + inter)
    hidden, experts, top_k = 256, 4, 2
    ids = torch.randint(1, experts, (tokens, top_k), generator=gen).to(device)
    offsets, order, source, position, _ = sort_routes(ids, experts)
    x = torch.randn(tokens, hidden, generator=gen).bfloat16().to(device)
    w13 = (torch.randn(experts, 2 * inter, hidden, generator=gen) * 0.05).bfloat16().to(device)
    w2 = (torch.randn(experts, hidden, inter, generator=gen) * 0.05).bfloat16().to(device)
    route = torch.rand(tokens * top_k, generator=gen).to(device)
    dy = torch.randn(tokens, hidden, generator=gen).bfloat16().to(device)
    results = []
    for fused in (True, False):
        training.release_quantized_weights()
        inputs = [t.clone().requires_grad_(w) for t, w in zip((x, w13, w2, route), wants)]
        if fused:
            routes = fp8_experts.Routes(offsets, source, position, inputs[3], top_k,
                                        gathered_scales)
            y = fp8_experts.swiglu_experts(inputs[0], inputs[1], inputs[2], routes)
        else:
            rows = _GatherRows.apply(inputs[0], source, position, top_k)
            h = training.fp8_grouped_mm(rows, inputs[1], offsets)
            y = training.fp8_grouped_mm(swiglu_kernel.RoutedSwiGLU.apply(h, inputs[3]),
                                        inputs[2], offsets)
            y = _CombineRows.apply(y, source, position, top_k)
        wanted = [t for t in inputs if t.requires_grad]
        results.append([y] + list(torch.autograd.grad(y, wanted, dy)))
    assert offsets[1] == 0
    for got, want in zip(*results):
        assert got.dtype == want.dtype and torch.equal(got, want)


@pytest.mark.parametrize("wants", WANTS)
def test_fused_swiglu_experts_match_the_chained_recipe(wants):
    check_fused_experts(wants, "cpu")


def test_fused_swiglu_experts_keep_nothing_without_grad_mode(monkeypatch):
    """Under torch.no_grad (an FP8 layer in eval, its weights Parameters
    that require grad) swiglu_experts quantises no transposed weights and
    saves no graph: inference does no backward-only work."""
    from ggc.moe import fp8_experts
    from ggc.moe.permute import sort_routes
    asked = []
    original = training.quantized_weights
    monkeypatch.setattr(training, "quantized_weights",
                        lambda w, transposed: asked.append(transposed) or original(w, transposed))
    ids = torch.randint(0, 4, (6, 2))
    offsets, _, source, position, _ = sort_routes(ids, 4)
    x = torch.randn(6, 128).bfloat16()
    w13 = torch.nn.Parameter(torch.randn(4, 256, 128).bfloat16())
    w2 = torch.nn.Parameter(torch.randn(4, 128, 128).bfloat16())
    routes = fp8_experts.Routes(offsets, source, position, torch.rand(12), 2, False)
    with torch.no_grad():
        out = fp8_experts.swiglu_experts(x, w13, w2, routes)
    assert asked == [False, False] and out.grad_fn is None
    assert out.shape == (6, 128) and torch.isfinite(out.float()).all()


def test_fused_swiglu_experts_keep_the_tokens_not_their_sorted_rows():
    """For the up projection's weight gradient the function keeps x's T
    rows and gathers the T * top_k sorted rows in its backward: no tensor
    of [T * top_k, H] bf16 rows is held between forward and backward."""
    from ggc.moe import fp8_experts
    from ggc.moe.permute import sort_routes
    tokens, hidden, top_k = 6, 384, 4  # H apart from 2I and I (h, act)
    ids = torch.randint(0, 4, (tokens, top_k))
    offsets, _, source, position, _ = sort_routes(ids, 4)
    x = torch.randn(tokens, hidden).bfloat16().requires_grad_()
    w13 = torch.randn(4, 256, hidden).bfloat16().requires_grad_()
    w2 = torch.randn(4, hidden, 128).bfloat16().requires_grad_()
    routes = fp8_experts.Routes(offsets, source, position, torch.rand(tokens * top_k), top_k,
                                False)
    saved = []
    with torch.autograd.graph.saved_tensors_hooks(lambda t: saved.append(t) or t, lambda t: t):
        out = fp8_experts.swiglu_experts(x, w13, w2, routes)
    bf16_rows = [tuple(t.shape) for t in saved if t.dtype == torch.bfloat16 and t.dim() == 2]
    assert (tokens, hidden) in bf16_rows and (tokens * top_k, hidden) not in bf16_rows
    (d_w13,) = torch.autograd.grad(out, [w13], torch.randn(tokens, hidden).bfloat16())
    assert torch.isfinite(d_w13.float()).all() and d_w13.abs().sum() > 0


def test_fused_swiglu_experts_name_what_does_not_fit():
    """swiglu_experts' checks: each error names the argument and what it
    expected, before anything runs."""
    from ggc.moe import fp8_experts
    from ggc.moe.permute import sort_routes
    ids = torch.randint(0, 4, (6, 2))
    offsets, _, source, position, _ = sort_routes(ids, 4)
    x = torch.randn(6, 128).bfloat16()
    w13, w2 = torch.randn(4, 256, 128).bfloat16(), torch.randn(4, 128, 128).bfloat16()
    routes = fp8_experts.Routes(offsets, source, position, torch.rand(12), 2, False)
    cases = [((x, w13[:, :, :64], w2, routes), ValueError, "w13 must be"),
             ((x, w13, w2.float(), routes), TypeError, "w2 must be bf16"),
             ((x, w13, w2, routes._replace(offsets=offsets.long())), ValueError,
              "routes.offsets must be int32"),
             ((x, w13, w2, routes._replace(position=position[:5])), ValueError,
              "routes.position must hold T \\* top_k = 12"),
             ((x, w13, w2, routes._replace(route=torch.rand(12).double())), TypeError,
              "routes.route must be f32"),
             ((x[0], w13, w2, routes), ValueError, "takes x \\[T, H\\]")]
    for args, error, message in cases:
        with pytest.raises(error, match=message):
            fp8_experts.swiglu_experts(*args)


def test_layer_takes_the_fused_fp8_experts_as_the_chain(monkeypatch):
    """MoE(compute_dtype=FP8)'s SwiGLU layer through ggc.moe.fp8_experts
    (forced here, where its kernels are not: the torch fallbacks inside)
    gives the chained path's output and gradients, bit for bit, and the
    layer calls it once a step."""
    from ggc.moe import fp8_experts
    from ggc.moe import layer as moe_layer
    calls = []
    original = fp8_experts.swiglu_experts
    monkeypatch.setattr(fp8_experts, "usable", lambda x, w13: True)
    monkeypatch.setattr(fp8_experts, "swiglu_experts",
                        lambda *a: calls.append(a[3].top_k) or original(*a))
    torch.manual_seed(1)
    layer = MoE(256, 128, 4, 2, compute_dtype=FP8)
    results = steps_by_switch(monkeypatch, moe_layer, "FUSED_FP8_EXPERTS", layer, 37, "cpu")
    assert calls == [2]
    for got, want in zip(*results):
        assert torch.equal(got, want)


def steps_by_switch(monkeypatch, module, switch, layer, tokens, device):
    """[output, x's gradient, each parameter's] of one step of `layer`
    with module.switch True, then False, on the same random x and output
    gradient."""
    x = torch.randn(tokens, layer.hidden_size, device=device).bfloat16()
    grad = torch.randn(tokens, layer.hidden_size, device=device).bfloat16()
    results = []
    for value in (True, False):
        monkeypatch.setattr(module, switch, value)
        training.release_quantized_weights()
        xi = x.clone().requires_grad_()
        params = [xi] + list(layer.parameters())
        out = layer(xi)
        results.append([out] + list(torch.autograd.grad(out, params, grad)))
    return results


def test_fused_swiglu_experts_take_the_topk_weights_gradient():
    """swiglu_experts(..., topk_weights) differentiates the weights the
    sorted routes were gathered from in its own backward: the output and
    every gradient are those of permute._SortedWeights' node before it,
    bit for bit; a topk_weights of the wrong shape is refused by name."""
    from ggc.moe import fp8_experts
    from ggc.moe.permute import _SortedWeights, sort_routes
    gen = torch.Generator().manual_seed(7)
    tokens, hidden, top_k = 9, 256, 2
    ids = torch.randint(0, 4, (tokens, top_k), generator=gen)
    offsets, order, source, position, _ = sort_routes(ids, 4)
    x = torch.randn(tokens, hidden, generator=gen).bfloat16()
    w13 = (torch.randn(4, 256, hidden, generator=gen) * 0.05).bfloat16()
    w2 = (torch.randn(4, hidden, 128, generator=gen) * 0.05).bfloat16()
    weights = torch.rand(tokens, top_k, generator=gen)
    dy = torch.randn(tokens, hidden, generator=gen).bfloat16()
    sorted_weights = weights.flatten().index_select(0, order)  # the sort kernel's route
    results = []
    for by_token in (True, False):
        inputs = [t.clone().requires_grad_() for t in (x, w13, w2, weights)]
        if by_token:
            routes = fp8_experts.Routes(offsets, source, position, sorted_weights, top_k, False)
            y = fp8_experts.swiglu_experts(*inputs[:3], routes, topk_weights=inputs[3])
        else:
            route = _SortedWeights.apply(inputs[3], sorted_weights, position)
            routes = fp8_experts.Routes(offsets, source, position, route, top_k, False)
            y = fp8_experts.swiglu_experts(*inputs[:3], routes)
        results.append([y] + list(torch.autograd.grad(y, inputs, dy)))
    for got, want in zip(*results):
        assert got.dtype == want.dtype and torch.equal(got, want)
    assert results[0][4].abs().sum() > 0
    with pytest.raises(ValueError, match=r"topk_weights must be floating point \[T, top_k\]"):
        fp8_experts.swiglu_experts(x, w13, w2, routes, topk_weights=weights[:, :1])
    with pytest.raises(ValueError, match="on x's device cpu, got .* on meta"):
        fp8_experts.swiglu_experts(x, w13, w2, routes, topk_weights=weights.to("meta"))
    with pytest.raises(ValueError, match="differentiate one of them, not both"):
        graphed = fp8_experts.Routes(offsets, source, position,
                                     sorted_weights.clone().requires_grad_(), top_k, False)
        fp8_experts.swiglu_experts(x, w13, w2, graphed, topk_weights=weights)


def test_layer_hands_the_fused_fp8_experts_its_topk_weights(monkeypatch):
    """With the kernels' sort (emulated here by torch, as gg.sort_routes'
    kernel writes it: the sorted weights without an autograd node), the
    FP8 layer hands fp8_experts its topk_weights (SORTED_WEIGHTS_IN_EXPERTS)
    and trains as with permute._SortedWeights' node: the same output and
    gradients, bit for bit."""
    from ggc.moe import fp8_experts, routes
    from ggc.moe import layer as moe_layer
    from ggc.moe.permute import sort_routes

    def kernel_sort(topk_ids, topk_weights, experts):
        offsets, order, source, position, invalid = sort_routes(topk_ids, experts)
        flat = topk_weights.reshape(-1).float().masked_fill(invalid, float("nan"))
        return offsets, order, source, position, flat.index_select(0, order)

    handed = []
    original = fp8_experts.swiglu_experts
    monkeypatch.setattr(fp8_experts, "usable", lambda x, w13: True)
    monkeypatch.setattr(routes, "usable", lambda ids, experts: True)
    monkeypatch.setattr(routes, "sort_routes", kernel_sort)
    monkeypatch.setattr(fp8_experts, "swiglu_experts",
                        lambda *a: handed.append(a[4] is not None) or original(*a))
    torch.manual_seed(2)
    layer = MoE(256, 128, 4, 2, compute_dtype=FP8)
    results = steps_by_switch(monkeypatch, moe_layer, "SORTED_WEIGHTS_IN_EXPERTS", layer, 21,
                              "cpu")
    assert handed == [True, False]
    for got, want in zip(*results):
        assert torch.equal(got, want)
    # The router's gradient comes through topk_weights' alone.
    names = ["out", "x"] + [name for name, _ in layer.named_parameters()]
    assert results[0][names.index("gate.weight")].abs().sum() > 0
