"""ggc.moe on the CPU: the real host code (routing, permutation, FP8
quantisation, the custom op's fakes and backward, torch.compile) with each
kernel launch replaced by a torch reference of the kernel
(moe_reference.py), against the whole layer in fp64.
test/gpu/test_moe_gpu.py runs the same on the real kernels."""

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402,F401
from ggc import moe  # noqa: E402
from moe_reference import (  # noqa: E402
    dequantized_weights, layer_inputs, ragged_ids, reference_moe, rel_err,
    use_reference_kernels)

BF16 = torch.bfloat16
T, H, I, E, K = 37, 256, 128, 6, 2


@pytest.fixture(autouse=True)
def reference_kernels(tmp_path, monkeypatch):
    use_reference_kernels(monkeypatch, tmp_path / "cache")


def layer(tokens=T, hidden=H, inter=I, experts=E, top_k=K, gated=True, seed=0,
          empty=(0,), single=(1,)):
    return layer_inputs(tokens, hidden, inter, experts, top_k, seed, gated, empty, single)


def as64(*tensors):
    return [t.double() for t in tensors]


@pytest.mark.parametrize("activation", ["swiglu", "geglu", "silu", "gelu", "relu"])
def test_bf16_layer_matches_fp64(activation):
    x, w13, w2, weights, ids = layer(gated=activation in ("swiglu", "geglu"))
    out = moe.fused_moe(x, w13, w2, weights, ids, activation)
    assert out.shape == (T, H) and out.dtype == BF16
    ref = reference_moe(*as64(x, w13, w2, weights), ids, activation)
    # bf16 roundings of h, the activation, y and out: a few 2^-9 relative.
    assert rel_err(out, ref) < 1e-2


def test_fp8_layer_matches_fp64():
    x, w13, w2, weights, ids = layer(seed=1)
    q13, s13 = moe.quantize_weights(w13)
    q2, s2 = moe.quantize_weights(w2)
    out = moe.fused_moe(x, q13, q2, weights, ids, w13_scale=s13, w2_scale=s2)
    ref = reference_moe(x.double(), dequantized_weights(q13, s13),
                        dequantized_weights(q2, s2), weights.double(), ids)
    err = rel_err(out, ref)
    # x and the activation quantised to e4m3 (3 mantissa bits: at most
    # 2^-4 relative per element, about 2^-4/sqrt(3) on average): ~3%.
    assert 5e-3 < err < 6e-2, err
    # x quantised beforehand (an expert-parallel dispatch's FP8 rows): the same bits.
    q, scale = moe.quantize_rows(x)
    again = moe.fused_moe(q, q13, q2, weights, ids, w13_scale=s13, w2_scale=s2, x_scale=scale)
    assert torch.equal(again, out)


def test_fp8_layer_with_partial_scale_blocks_matches_fp64():
    """H and I off 128 (gpt-oss's 2,880): the last 1x128 and 128x128 blocks
    are partial, their scales the valid values' own."""
    x, w13, w2, weights, ids = layer(hidden=320, inter=144, seed=5)
    q13, s13 = moe.quantize_weights(w13)
    q2, s2 = moe.quantize_weights(w2)
    assert s13.shape == (E, 3, 3) and s2.shape == (E, 3, 2)
    assert torch.equal(s13[:, 2, 2], w13[:, 256:, 256:].float().abs().amax(dim=(1, 2)) / 448)
    q, scale = moe.quantize_rows(x)
    assert q.shape == x.shape and scale.shape == (T, 3)
    # Times f32(1/448), as the kernels do (torch on the CPU divides).
    assert torch.equal(scale[:, 2], x[:, 256:].float().abs().amax(dim=1) * (1 / 448))
    out = moe.fused_moe(x, q13, q2, weights, ids, w13_scale=s13, w2_scale=s2)
    ref = reference_moe(x.double(), dequantized_weights(q13, s13),
                        dequantized_weights(q2, s2), weights.double(), ids)
    assert 5e-3 < rel_err(out, ref) < 6e-2


def test_quantize_weights_round_trip():
    w = torch.randn(3, 256, 384) * torch.logspace(-3, 2, 384)  # columns spanning 1e5
    q, scale = moe.quantize_weights(w)
    assert q.dtype == torch.float8_e4m3fn and scale.shape == (3, 2, 3)
    blocks = w.view(3, 2, 128, 3, 128)
    assert torch.equal(scale, blocks.abs().amax(dim=(2, 4)) / 448)
    # The f32 quotient rounded once to e4m3 (one pass: the same bits).
    once = (blocks / scale[:, :, None, :, None]).to(torch.float8_e4m3fn).view(3, 256, 384)
    assert torch.equal(q.view(torch.uint8), once.view(torch.uint8))
    back = moe.dequantize_weights(q, scale)
    # e4m3 keeps 3 mantissa bits: 2^-4 relative, to the block's largest value
    # for values near e4m3's smallest normal.
    bound = 2 ** -4 * w.abs() + 2 ** -9 * dequantized_weights(torch.ones_like(q), scale).float()
    assert ((back - w).abs() <= bound).all()


def test_quantize_weights_a_few_experts_at_a_time(monkeypatch):
    """Large layers are quantised a slice of experts at a time (bounded f32
    copies): the same bits as all at once, partial blocks included."""
    from ggc.moe import quant
    w = torch.randn(5, 200, 300, dtype=torch.bfloat16) * 3
    whole = moe.quantize_weights(w)
    per_expert = 2 * 3 * 128 * 128 * 4  # f32 bytes of one expert's padded blocks
    monkeypatch.setattr(quant, "_QUANTIZE_CHUNK_BYTES", 2 * per_expert)  # slices 2, 2, 1
    sliced = moe.quantize_weights(w)
    assert sliced[0].shape == (5, 200, 300) and sliced[1].shape == (5, 2, 3)
    assert torch.equal(sliced[0].view(torch.uint8), whole[0].view(torch.uint8))
    assert torch.equal(sliced[1], whole[1])


def test_permutation_of_ragged_routing():
    """Experts with 0 and 1 routes; every route once; each expert's rows in
    token order; offsets and position consistent."""
    gen = torch.Generator().manual_seed(2)
    ids = ragged_ids(50, 3, 8, gen, empty=(0, 5), single=(2, 7))
    perm = moe.permute(ids, 8)
    counts = [(ids == e).sum().item() for e in range(8)]
    assert counts[0] == counts[5] == 0 and counts[2] == counts[7] == 1
    assert perm.counts.tolist() == counts
    assert perm.offsets.dtype == torch.int32
    assert perm.offsets.tolist() == [0] + torch.tensor(counts).cumsum(0).tolist()
    flat = ids.reshape(-1).long()
    assert sorted(perm.order.tolist()) == list(range(150))
    sorted_experts = flat[perm.order]
    bounds = perm.offsets.tolist()
    for e in range(8):
        rows = slice(bounds[e], bounds[e + 1])
        assert (sorted_experts[rows] == e).all()
        tokens = perm.source[rows].tolist()
        assert tokens == sorted(tokens)  # stable: the same order on every run
    assert torch.equal(perm.source, perm.order // 3)
    assert torch.equal(perm.position[perm.order], torch.arange(150))
    assert perm.valid.all()


def test_out_of_range_ids_poison_their_tokens_or_raise():
    x, w13, w2, weights, ids = layer()
    good = moe.fused_moe(x, w13, w2, weights, ids)
    bad = ids.clone()
    bad[3, 1], bad[9, 0] = E, -1
    with pytest.raises(ValueError, match=r"topk_ids\[3, 1\] = 6 is not an expert.*\[0, E = 6\)"):
        moe.fused_moe(x, w13, w2, weights, bad, validate=True)
    out = moe.fused_moe(x, w13, w2, weights, bad, validate=False)
    poisoned = out.isnan().all(dim=1)
    assert poisoned.nonzero().flatten().tolist() == [3, 9]
    rest = ~poisoned
    assert torch.equal(out[rest], good[rest])


def test_no_tokens():
    x, w13, w2, weights, ids = layer(tokens=0, empty=(), single=())
    out = moe.fused_moe(x, w13, w2, weights, ids)
    assert out.shape == (0, H)


def test_result_is_bit_identical_across_thread_counts():
    """The combine's order is fixed by the shapes, not by how the work is
    split (here: torch's CPU thread count)."""
    inputs = layer(tokens=300, top_k=4, seed=3, empty=(), single=())
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        one = moe.fused_moe(*inputs)
        torch.set_num_threads(max(2, threads))
        many = moe.fused_moe(*inputs)
    finally:
        torch.set_num_threads(threads)
    assert torch.equal(one, many)


def leaves(*tensors):
    return [t.detach().clone().requires_grad_() for t in tensors]


def test_gradients_match_fp64():
    x, w13, w2, weights, ids = layer(seed=4)
    grad = torch.randn(T, H).to(BF16)
    ours = leaves(x, w13, w2, weights)
    out = moe.fused_moe(*ours[:3], ours[3], ids)
    got = torch.autograd.grad(out, ours, grad)
    exact = leaves(*as64(x, w13, w2, weights))
    want = torch.autograd.grad(reference_moe(*exact, ids), exact, grad.double())
    for name, g, w in zip(("x", "w13", "w2", "topk_weights"), got, want):
        assert g.dtype == (torch.float32 if name == "topk_weights" else BF16)
        assert rel_err(g, w) < 2e-2, name
    # Experts with no route get zero gradient, not what memory held.
    assert (got[1][0] == 0).all() and (got[2][0] == 0).all()


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_compiled_fullgraph_equals_eager_forward_and_backward(backend):
    x, w13, w2, weights, ids = layer(seed=5)
    grad = torch.randn(T, H).to(BF16)

    def step(x, w13, w2, weights):
        return moe.fused_moe(x, w13, w2, weights, ids)

    compiled = torch.compile(step, backend=backend, fullgraph=True)
    eager_in, compiled_in = leaves(x, w13, w2, weights), leaves(x, w13, w2, weights)
    eager_out, compiled_out = step(*eager_in), compiled(*compiled_in)
    assert torch.equal(compiled_out, eager_out)
    eager_grads = torch.autograd.grad(eager_out, eager_in, grad)
    compiled_grads = torch.autograd.grad(compiled_out, compiled_in, grad)
    for e, c in zip(eager_grads, compiled_grads):
        assert torch.equal(e, c)


def test_compiled_fp8_equals_eager():
    x, w13, w2, weights, ids = layer(seed=6)
    (q13, s13), (q2, s2) = moe.quantize_weights(w13), moe.quantize_weights(w2)

    def step(x, weights, ids):
        return moe.fused_moe(x, q13, q2, weights, ids, w13_scale=s13, w2_scale=s2)

    compiled = torch.compile(step, backend="aot_eager", fullgraph=True)
    assert torch.equal(compiled(x, weights, ids), step(x, weights, ids))


def test_module_routes_and_runs_the_experts():
    torch.manual_seed(7)
    layer_ = moe.MoE(H, I, E, K, scoring="softmax")
    x = torch.randn(2, 9, H).to(BF16)
    out = layer_(x)
    assert out.shape == x.shape and out.dtype == BF16
    tokens = x.reshape(-1, H)
    weights, ids = moe.route(layer_.gate(tokens), K)
    ref = reference_moe(*as64(tokens, layer_.w13.detach(), layer_.w2.detach(), weights), ids)
    assert rel_err(out.reshape(-1, H), ref) < 1e-2
    out.float().square().sum().backward()
    assert layer_.w13.grad is not None and layer_.gate.weight.grad.abs().sum() > 0
    layer_.quantize_fp8()
    assert layer_.w13.dtype == torch.float8_e4m3fn and "w13" not in dict(
        layer_.named_parameters())
    with torch.no_grad():
        fp8 = layer_(x)
    ref = reference_moe(tokens.double(), dequantized_weights(layer_.w13, layer_.w13_scale),
                        dequantized_weights(layer_.w2, layer_.w2_scale), weights.double(), ids)
    assert rel_err(fp8.reshape(-1, H), ref) < 6e-2


def test_quantize_rows_rounds_the_f32_product_once():
    """quantize_rows stores x * (448 / amax) (in f32) rounded to e4m3 in one
    pass, with the scale amax times f32(1/448) (the kernels' multiply): the
    same bits as multiplying and then
    casting, over values spanning the e4m3 range, partial blocks and an
    all-zero block (whose scale is the floor's)."""
    x = (torch.randn(37, 300) * torch.logspace(-4, 3, 300)).bfloat16()
    x[5, 128:256] = 0
    q, scale = moe.quantize_rows(x)
    padded = torch.nn.functional.pad(x, (0, 84)).view(37, 3, 128)
    amax = padded.float().abs().amax(dim=-1).clamp_min(1e-12)
    assert torch.equal(scale, amax * (1 / 448.0))
    factor = torch.full_like(amax, 448.0) / amax
    want = (padded * factor.unsqueeze(-1)).to(torch.float8_e4m3fn).view(37, 384)[:, :300]
    assert torch.equal(q.view(torch.uint8), want.view(torch.uint8))
    assert (q[5, 128:256].float() == 0).all()
