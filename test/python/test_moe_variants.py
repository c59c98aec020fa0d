"""fused_moe's model variants on the CPU (reference kernels, as
test_moe.py): the activations of recent models, expert biases (gpt-oss)
and expert_map (vLLM's experts held by this rank), against fp64."""

import pytest

torch = pytest.importorskip("torch")

from ggc import moe  # noqa: E402
from ggc.moe.activations import ACTIVATIONS, GATED  # noqa: E402
from moe_reference import layer_inputs, reference_moe, rel_err, use_reference_kernels  # noqa: E402

T, H, I, E, K = 29, 256, 128, 6, 2


@pytest.fixture(autouse=True)
def reference_kernels(tmp_path, monkeypatch):
    use_reference_kernels(monkeypatch, tmp_path / "cache")


def as64(*tensors):
    return [None if t is None else t.double() for t in tensors]


@pytest.mark.parametrize("activation", ["geglu_erf", "swigluoai", "gelu_erf", "relu2"])
def test_new_activations_match_fp64(activation):
    x, w13, w2, weights, ids = layer_inputs(T, H, I, E, K, seed=3, gated=activation in GATED,
                                            empty=(0,), single=(1,))
    if activation == "swigluoai":
        w13 = w13 * 4  # gates past the clamp at 7, so the clamp is exercised
        assert (x.float() @ w13[2].float().T).abs().max() > 7
    out = moe.fused_moe(x, w13, w2, weights, ids, activation)
    assert rel_err(out, reference_moe(*as64(x, w13, w2, weights), ids, activation)) < 1e-2


def test_activation_names_are_checked():
    x, w13, w2, weights, ids = layer_inputs(4, H, I, E, K, seed=0)
    with pytest.raises(ValueError, match=r"activation must be one of .*swigluoai"):
        moe.fused_moe(x, w13, w2, weights, ids, "silu_and_mul")
    assert set(GATED) < set(ACTIVATIONS)


def biases(seed, experts=E, up_rows=2 * I, hidden=H, dtype=torch.bfloat16):
    gen = torch.Generator().manual_seed(seed)
    return (torch.randn(experts, up_rows, generator=gen).to(dtype),
            torch.randn(experts, hidden, generator=gen).to(dtype))


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
def test_expert_biases_match_fp64(dtype):
    x, w13, w2, weights, ids = layer_inputs(T, H, I, E, K, seed=4, empty=(0,), single=(1,))
    b13, b2 = biases(5, dtype=dtype)
    out = moe.fused_moe(x, w13, w2, weights, ids, "swigluoai", w13_bias=b13, w2_bias=b2)
    ref = reference_moe(*as64(x, w13, w2, weights), ids, "swigluoai", *as64(b13, b2))
    assert rel_err(out, ref) < 1e-2
    # Each bias does something: without it the result is far off.
    alone = moe.fused_moe(x, w13, w2, weights, ids, "swigluoai", w13_bias=b13)
    assert rel_err(alone, ref) > 0.1


def test_bias_gradients_match_fp64():
    x, w13, w2, weights, ids = layer_inputs(T, H, I, E, K, seed=6)
    b13, b2 = biases(7)
    leaves = [t.detach().clone().requires_grad_() for t in (x, w13, w2, b13, b2)]
    out = moe.fused_moe(leaves[0], leaves[1], leaves[2], weights, ids, "swigluoai",
                        w13_bias=leaves[3], w2_bias=leaves[4])
    out.float().square().sum().backward()
    leaves64 = [t.detach().double().requires_grad_() for t in leaves]
    ref = reference_moe(leaves64[0], leaves64[1], leaves64[2], weights.double(), ids,
                        "swigluoai", leaves64[3], leaves64[4])
    ref.square().sum().backward()
    for name, got, want in zip(("x", "w13", "w2", "w13_bias", "w2_bias"), leaves, leaves64):
        assert rel_err(got.grad, want.grad) < 3e-2, name


def test_bias_shapes_are_checked():
    x, w13, w2, weights, ids = layer_inputs(4, H, I, E, K, seed=0)
    b13, b2 = biases(0)
    with pytest.raises(ValueError, match=r"w13_bias must be \[E, N\] = \[6, 256\]"):
        moe.fused_moe(x, w13, w2, weights, ids, w13_bias=b13[:, :-1])
    with pytest.raises(ValueError, match=r"w2_bias must be \[E, H\]"):
        moe.fused_moe(x, w13, w2, weights, ids, w2_bias=b2.t())
    with pytest.raises(TypeError, match="w2_bias must be bfloat16 or float32"):
        moe.fused_moe(x, w13, w2, weights, ids, w2_bias=b2.half())


def split_maps(global_experts, ranks):
    """Each rank's expert_map (contiguous blocks) and its experts' ids."""
    maps, owned = [], []
    for r in range(ranks):
        mine = list(range(r, global_experts, ranks))  # strided: not the identity
        m = torch.full((global_experts,), -1, dtype=torch.int32)
        m[mine] = torch.arange(len(mine), dtype=torch.int32)
        maps.append(m)
        owned.append(mine)
    return maps, owned


@pytest.mark.parametrize("fp8", [False, True])
def test_expert_map_splits_the_layer_over_ranks(fp8):
    x, w13, w2, weights, ids = layer_inputs(T, H, I, E, K, seed=8, empty=(0,), single=(1,))
    full_w13, full_w2 = w13, w2
    kwargs = {}
    if fp8:
        full_w13, s13 = moe.quantize_weights(w13)
        full_w2, s2 = moe.quantize_weights(w2)
    maps, owned = split_maps(E, 3)
    with torch.no_grad():
        whole = moe.fused_moe(x, full_w13, full_w2, weights, ids,
                              **({} if not fp8 else dict(w13_scale=s13, w2_scale=s2)))
        parts = []
        for m, mine in zip(maps, owned):
            pick = torch.tensor(mine)
            if fp8:
                kwargs = dict(w13_scale=s13[pick], w2_scale=s2[pick])
            parts.append(moe.fused_moe(x, full_w13[pick].contiguous(),
                                       full_w2[pick].contiguous(), weights, ids,
                                       expert_map=m, validate=True, **kwargs))
    # The ranks' partial sums add up to the whole layer (each bf16-rounded once).
    total = sum(p.double() for p in parts)
    assert rel_err(total, whole.double()) < 1e-2
    # A token none of whose experts a rank holds gets an exact zero there.
    for m, part in zip(maps, parts):
        none_here = (m.long()[ids.long()] < 0).all(dim=1)
        assert none_here.any()
        assert torch.equal(part[none_here], torch.zeros_like(part[none_here]))


def test_expert_map_errors():
    x, w13, w2, weights, ids = layer_inputs(8, H, I, E, K, seed=9)
    maps, owned = split_maps(E, 2)
    local13, local2 = w13[:3].contiguous(), w2[:3].contiguous()
    with pytest.raises(ValueError, match=r"expert_map must be \[global E\]"):
        moe.fused_moe(x, local13, local2, weights, ids, expert_map=maps[0][:2])
    with pytest.raises(TypeError, match="expert_map must be int32 or int64"):
        moe.fused_moe(x, local13, local2, weights, ids, expert_map=maps[0].float())
    bad = maps[0].clone()
    bad[4] = 3  # local experts are 0..2
    with pytest.raises(ValueError, match=r"expert_map\[4\] = 3 is neither -1"):
        moe.fused_moe(x, local13, local2, weights, ids, expert_map=bad, validate=True)
    twice = maps[0].clone()
    held = (twice >= 0).nonzero().flatten().tolist()
    twice[held[1]] = twice[held[0]]
    with pytest.raises(ValueError, match=rf"expert_map\[{held[0]}\] and expert_map\[{held[1]}\] "
                                         rf"are both local expert {int(twice[held[0]])}"):
        moe.fused_moe(x, local13, local2, weights, ids, expert_map=twice, validate=True)
    ids_out = ids.clone()
    ids_out[5, 1] = E
    with pytest.raises(ValueError, match=r"topk_ids\[5, 1\] = 6 is not an expert"):
        moe.fused_moe(x, local13, local2, weights, ids_out, expert_map=maps[0], validate=True)
    # Unvalidated, the bad global id poisons its token alone.
    with torch.no_grad():
        out = moe.fused_moe(x, local13, local2, weights, ids_out, expert_map=maps[0],
                            validate=False)
    assert torch.isnan(out[5]).all() and torch.isfinite(torch.cat([out[:5], out[6:]])).all()
    with pytest.raises(ValueError, match="expert_map is inference only"):
        moe.fused_moe(x.requires_grad_(), local13, local2, weights, ids, expert_map=maps[0])
