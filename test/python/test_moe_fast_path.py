"""fused_moe's lean eager path against the plain one: checks once per
signature, no autograd.Function wrappers without gradients, fewer torch
calls in the permutation, quantisation and combine, cached aranges. Each
shortcut must give the same bits, the same errors and the same gradients
as the path it replaces (the torch code that path ran is restated here)."""

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402,F401
from ggc import moe  # noqa: E402
from ggc.moe import checks, kernels, quant, swiglu_kernel  # noqa: E402
from moe_reference import ragged_ids, record_launches, use_reference_kernels  # noqa: E402
from test_moe import BF16, E, H, T, layer, leaves  # noqa: E402


@pytest.fixture(autouse=True)
def reference_kernels(tmp_path, monkeypatch):
    use_reference_kernels(monkeypatch, tmp_path / "cache")


def plain_permute(topk_ids, num_experts):
    """The permutation as it was computed before the lean path."""
    flat = topk_ids.reshape(-1)
    m = flat.shape[0]
    valid = (flat >= 0) & (flat < num_experts)
    experts = flat.clamp(0, num_experts - 1)  # an invalid id on its nearest expert
    sorted_experts, order = torch.sort(experts, stable=True)
    bounds = torch.arange(num_experts + 1, dtype=sorted_experts.dtype)
    offsets = torch.searchsorted(sorted_experts, bounds, out_int32=True)
    position = torch.empty_like(order).scatter_(0, order, torch.arange(m))
    source = torch.div(order, topk_ids.shape[1], rounding_mode="floor")
    return offsets, offsets[1:] - offsets[:-1], order, source, position, valid


def plain_layer(x, w13, w2, weights, ids, fused_up=False, trained=False):
    """The BF16 layer through the autograd.Functions and the f32 combine;
    `fused_up`: the up projection and SwiGLU as the one kernel inference
    takes (ggc.moe.kernels.moe_up_swiglu: h never rounded to bf16);
    `trained`: the experts as training runs them: the routed rows
    route * silu(gate) * up rounded once (swiglu_kernel.RoutedSwiGLU),
    then the down projection without a routing weight."""
    flat = plain_permute(ids, w13.shape[0])
    perm = moe.Permutation(*flat)
    route = torch.where(perm.valid, weights.reshape(-1).float(),
                        torch.full_like(weights.reshape(-1).float(), float("nan")))
    route = route.index_select(0, perm.order)
    rows = moe.gather_rows(x, perm, ids.shape[1])
    if fused_up:
        act = torch.empty(rows.shape[0], w13.shape[1] // 2, dtype=BF16)
        kernels.moe_up_swiglu(rows, w13, perm.offsets, act)
    else:
        h = ggc.ops.grouped_gemm(rows, w13, offsets=perm.offsets, validate=False)
        act = None if trained else moe.activate(h, "swiglu")
    if trained:
        routed = swiglu_kernel.RoutedSwiGLU.apply(h, route)
        y = ggc.ops.grouped_gemm(routed, w2, offsets=perm.offsets, validate=False)
    else:
        y = torch.ops.ggc.moe_down(act, w2, perm.offsets, route, None, None)
    picked = y.index_select(0, perm.position).view(ids.shape[0], ids.shape[1], -1)
    return picked.sum(dim=1, dtype=torch.float32).to(BF16)


@pytest.mark.parametrize("top_k", [1, 2, 5])
@pytest.mark.parametrize("dtype", [torch.int32, torch.int64])
def test_permute_matches_the_plain_permutation(top_k, dtype):
    gen = torch.Generator().manual_seed(top_k)
    ids = ragged_ids(40, top_k, 8, gen, empty=(3,), single=(6,)).to(dtype)
    ids[5, 0], ids[7, top_k - 1] = 8, -3  # invalid: counted on experts 7 and 0
    got, want = moe.permute(ids, 8), plain_permute(ids, 8)
    for name, g, w in zip(moe.Permutation._fields, got, want):
        assert g.dtype == w.dtype and torch.equal(g, w), name
    assert got.source is not got.order  # a caller may write to either


@pytest.mark.parametrize("top_k", [1, 2, 3, E])
def test_fast_path_equals_the_plain_layer_bit_for_bit(top_k):
    x, w13, w2, weights, ids = layer(top_k=top_k, seed=top_k, empty=(), single=())
    # Experts expecting more than the decode tiles' rows (top_k = E: 37)
    # take SwiGLU in the up projection without gradients.
    fused_up = moe.layer.expected_rows(ids.numel(), E) > kernels.DECODE_TILE_ROWS
    with torch.no_grad():
        want = plain_layer(x, w13, w2, weights, ids, fused_up=fused_up)
        assert torch.equal(moe.fused_moe(x, w13, w2, weights, ids), want)
        assert torch.equal(moe.fused_moe(x, w13, w2, weights, ids), want)  # cached
    # With gradients the layer takes the autograd.Functions: the same bits.
    want = plain_layer(x, w13, w2, weights, ids, trained=True)
    assert torch.equal(moe.fused_moe(*leaves(x), w13, w2, weights, ids), want)


def test_gradients_after_a_cached_no_grad_call():
    x, w13, w2, weights, ids = layer(seed=6)
    with torch.inference_mode():  # the cached aranges are made here
        moe.fused_moe(x, w13, w2, weights, ids)
    with torch.no_grad():
        moe.fused_moe(x, w13, w2, weights, ids)
    grad = torch.randn(T, H).to(BF16)
    ours, plain = leaves(x, w13, w2, weights), leaves(x, w13, w2, weights)
    got = torch.autograd.grad(moe.fused_moe(*ours, ids), ours, grad)
    want = torch.autograd.grad(plain_layer(*plain, ids, trained=True), plain, grad)
    for name, g, w in zip(("x", "w13", "w2", "topk_weights"), got, want):
        assert torch.equal(g, w), name


def test_fp8_still_refuses_gradients_after_a_cached_call():
    x, w13, w2, weights, ids = layer(seed=7)
    q13, s13 = moe.quantize_weights(w13)
    q2, s2 = moe.quantize_weights(w2)
    moe.fused_moe(x, q13, q2, weights, ids, w13_scale=s13, w2_scale=s2)
    with pytest.raises(ValueError, match="FP8 fused_moe is inference only"):
        moe.fused_moe(x, q13, q2, weights.requires_grad_(), ids, w13_scale=s13,
                      w2_scale=s2)


def test_errors_after_a_cached_call_of_another_signature():
    x, w13, w2, weights, ids = layer(seed=8)
    moe.fused_moe(x, w13, w2, weights, ids)
    with pytest.raises(TypeError, match="x must be bfloat16"):
        moe.fused_moe(x.float(), w13, w2, weights, ids)
    with pytest.raises(ValueError, match="topk_weights must have topk_ids' shape"):
        moe.fused_moe(x, w13, w2, weights[:, :1], ids)
    with pytest.raises(ValueError, match="w13 must be contiguous"):
        moe.fused_moe(x, w13.transpose(1, 2).contiguous().transpose(1, 2), w2, weights, ids)
    with pytest.raises(ValueError, match="activation must be one of"):
        moe.fused_moe(x, w13, w2, weights, ids, "tanh")
    with pytest.raises(TypeError, match="topk_ids must be a torch.Tensor"):
        moe.fused_moe(x, w13, w2, weights, ids.tolist())
    moe.fused_moe(x, w13, w2, weights, ids)  # the cached signature still passes


def test_the_device_rule_runs_on_every_call(monkeypatch):
    x, w13, w2, weights, ids = layer(seed=9)
    moe.fused_moe(x, w13, w2, weights, ids)  # cached: CPU tensors pass the device rule

    def cuda_only(device):
        raise ValueError(f"x must be on a CUDA device, but is on {device}")
    monkeypatch.setattr(checks, "require_device", cuda_only)
    with pytest.raises(ValueError, match="must be on a CUDA device"):
        moe.fused_moe(x, w13, w2, weights, ids)


def plain_quantize_rows(x):
    """The rule quant.quantize_rows documents: each value times its block's
    448 / amax (an IEEE division a block), the scale amax times f32(1/448)
    (the kernels' multiply; torch on the CPU would divide)."""
    rows, k = x.shape
    blocks = x.float().view(rows, k // 128, 128)
    amax = blocks.abs().amax(dim=-1).clamp_min(1e-12)
    factor = torch.full_like(amax, 448.0) / amax
    return (blocks * factor.unsqueeze(-1)).to(quant.FP8).view(rows, k), amax * (1 / 448.0)


@pytest.mark.parametrize("seed", [0, 1, 2, 3])
def test_quantize_rows_matches_the_plain_formula(seed):
    gen = torch.Generator().manual_seed(seed)
    x = (torch.randn(9, 384, generator=gen) * torch.rand(9, 1, generator=gen) * 100).to(BF16)
    x[2] = 0  # all-zero blocks: the floor, not NaN
    x[4, 130] = float("nan")
    x[5, 7] = float("inf")
    q, scale = quant.quantize_rows(x)
    want_q, want_scale = plain_quantize_rows(x)
    assert torch.equal(scale.isnan(), want_scale.isnan())
    assert torch.equal(scale.nan_to_num(), want_scale.nan_to_num())
    assert torch.equal(q.view(torch.uint8), want_q.view(torch.uint8))


@pytest.mark.parametrize("m", [8, 9, 10, 11])
@pytest.mark.parametrize("gathered", [False, True])
def test_mn_major_matches_the_plain_layout(m, gathered):
    scale = torch.rand(12, 3)
    rows = torch.randint(0, 12, (m,)) if gathered else None
    picked = scale[:m] if rows is None else scale.index_select(0, rows)
    got = quant.mn_major(scale[:m] if rows is None else scale, rows)
    assert got.shape == (3, (m + 3) // 4 * 4) and got.stride() == (got.shape[1], 1)
    assert torch.equal(got[:, :m], picked.t())


def test_constant_aranges_are_never_written():
    x, w13, w2, weights, ids = layer(seed=10)
    with torch.no_grad():
        first = moe.fused_moe(x, w13, w2, weights, ids)
        for tensor in moe.permute.__globals__["_ARANGES"].values():
            assert torch.equal(tensor, torch.arange(tensor.shape[0], dtype=tensor.dtype))
        assert torch.equal(moe.fused_moe(x, w13, w2, weights, ids), first)


def test_constant_aranges_are_kept_once_cached(monkeypatch):
    """A cached arange is never dropped (a CUDA graph may read it); past
    the cap, new sizes come fresh and uncached."""
    import sys
    permute_module = sys.modules["ggc.moe.permute"]  # ggc.moe.permute is the function
    monkeypatch.setattr(permute_module, "_ARANGES", {})
    monkeypatch.setattr(permute_module, "_MAX_ARANGES", 3)
    kept = [permute_module.constant_arange(n, torch.int64, torch.device("cpu"))
            for n in (1, 2, 3)]
    fresh = permute_module.constant_arange(4, torch.int64, torch.device("cpu"))
    assert torch.equal(fresh, torch.arange(4))
    assert permute_module.constant_arange(4, torch.int64, torch.device("cpu")) is not fresh
    for n, tensor in zip((1, 2, 3), kept):
        assert permute_module.constant_arange(n, torch.int64, torch.device("cpu")) is tensor


@pytest.mark.parametrize("activation", ["swiglu", "swigluoai"])
def test_inference_takes_the_activation_in_the_up_projection(activation, monkeypatch):
    """Without gradients, where experts expect more than 64 rows, the up
    projection's epilogue computes a gated activation (one kernel, no h of
    2I columns); with gradients, for decode-sized experts, and for SwiGLU
    on a target without column_halves, the GEMM and the activation run
    apart. Without gradients the up projection reads the tokens through
    the routes' source list (the _gathered kernels), with them a gathered
    copy. Each way within bf16 error of the fp64 layer."""
    from moe_reference import reference_moe, rel_err
    launched = record_launches(monkeypatch)

    def layer_takes(fused, *args, **kw):
        launched.clear()
        out = moe.fused_moe(*args, activation, **kw)
        assert rel_err(out, reference_moe(*[t.double() for t in args[:4]], args[4],
                                          activation=activation)) < 1e-2
        gathered = not torch.is_grad_enabled() or not args[0].requires_grad
        suffix = "_gathered" if gathered else ""
        plain = "moe_up_gathered" if gathered else "grouped_gemm_contiguous_nk"
        assert (f"moe_up_{activation}{suffix}" in launched) == fused, launched
        assert (plain in launched) != fused, launched
        return out

    x, w13, w2, weights, ids = layer(tokens=300, experts=4, top_k=2, seed=9)  # 150 rows each
    with torch.no_grad():
        out = layer_takes(True, x, w13, w2, weights, ids)
        if activation == "swiglu":
            assert torch.equal(out, plain_layer(x, w13, w2, weights, ids, fused_up=True))
        layer_takes(False, *layer(seed=9))  # 12 rows an expert: decode tiles
    layer_takes(False, *leaves(x, w13), w2, weights, ids)
    ggc.set_target("sm_80")
    try:
        with torch.no_grad():
            layer_takes(activation == "swigluoai", x, w13, w2, weights, ids)
    finally:
        ggc.set_target(None)


@pytest.mark.parametrize("limit, dim", [("GATHER_MAX_N", 1), ("GATHER_MAX_H", 2)])
@pytest.mark.parametrize("rows_window, memory_gbps, gathers",
                         [((256, 512), 3352, False), ((128, 512), 3352, True),
                          ((128, 512), 0, False)])
def test_wide_up_projections_take_the_sorted_copy(limit, dim, rows_window, memory_gbps,
                                                  gathers, monkeypatch):
    """Past kernels.GATHER_MAX_N columns of w13, or past GATHER_MAX_H, the
    cp.async copies of A's rows cost the GEMM more than the sorted copy:
    the layer gathers the copy and runs the TMA kernel, with the same
    values; unless its experts expect GATHER_WIDE_ROWS rows (here 128) on
    a card of narrow memory (an H100's 3,352 GB/s; 0: unknown, an
    H200's plan)."""
    from moe_reference import reference_moe, rel_err
    from ggc.moe import kernels
    launched = record_launches(monkeypatch)
    x, w13, w2, weights, ids = layer(tokens=300, experts=4, top_k=2, seed=9)
    with torch.no_grad():
        gathered = moe.fused_moe(x, w13, w2, weights, ids)
        assert not any(name.startswith("grouped_gemm") for name in launched), launched
        launched.clear()
        monkeypatch.setattr(kernels, limit, w13.shape[dim] - 1)
        monkeypatch.setattr(kernels, "GATHER_WIDE_ROWS", rows_window)
        ggc.set_memory_gbps(memory_gbps)
        try:
            other = moe.fused_moe(x, w13, w2, weights, ids)
        finally:
            ggc.set_memory_gbps(None)
    ups = [name for name in launched if "up" in name or name.startswith("grouped_gemm")]
    assert len(ups) == 1 and ups[0].endswith("_gathered") == gathers, launched
    assert torch.equal(gathered, other)
    assert rel_err(other, reference_moe(*[t.double() for t in (x, w13, w2, weights)],
                                        ids)) < 1e-2
