"""ggc.vllm.fused_experts on the CPU (reference kernels, as test_moe.py):
vLLM's argument meanings against the fp64 layer. test/gpu/test_vllm_gpu.py
compares it with vLLM's own Triton path on the GPU."""

import re

import pytest

torch = pytest.importorskip("torch")

from ggc import moe, vllm  # noqa: E402
from moe_reference import (dequantized_weights, layer_inputs, reference_moe, rel_err,  # noqa: E402
                           use_reference_kernels)

T, H, I, E, K = 23, 256, 128, 6, 2


@pytest.fixture(autouse=True)
def reference_kernels(tmp_path, monkeypatch):
    use_reference_kernels(monkeypatch, tmp_path / "cache")


def as64(*tensors):
    return [t.double() for t in tensors]


@pytest.mark.parametrize("vllm_name,ggc_name", sorted(vllm.ACTIVATIONS.items()))
def test_activation_names_mean_what_they_mean_in_vllm(vllm_name, ggc_name):
    gated = not vllm_name.endswith("_no_mul")
    x, w1, w2, weights, ids = layer_inputs(T, H, I, E, K, seed=1, gated=gated, empty=(2,))
    out = vllm.fused_experts(x, w1, w2, weights, ids, activation=vllm_name)
    assert rel_err(out, reference_moe(*as64(x, w1, w2, weights), ids, ggc_name)) < 1e-2


def test_silu_is_the_gated_silu():
    x, w1, w2, weights, ids = layer_inputs(T, H, I, E, K, seed=2)
    out = vllm.fused_experts(x, w1, w2, weights, ids)  # vLLM's default "silu"
    assert torch.equal(out, moe.fused_moe(x, w1, w2, weights, ids, "swiglu"))


def test_inplace_writes_hidden_states():
    x, w1, w2, weights, ids = layer_inputs(T, H, I, E, K, seed=3)
    expected = vllm.fused_experts(x, w1, w2, weights, ids)
    out = vllm.fused_experts(x, w1, w2, weights, ids, inplace=True)
    assert out is x and torch.equal(x, expected)


def test_router_weight_on_input():
    x, w1, w2, weights, ids = layer_inputs(T, H, I, E, 1, seed=4)
    weights = weights * 3  # far from 1, so where it applies shows
    out = vllm.fused_experts(x, w1, w2, weights, ids, apply_router_weight_on_input=True)
    # silu(w * gate) * (w * up), then no weight on the output.
    scaled = x.double() * weights.double()
    ref = reference_moe(scaled, *as64(w1, w2), torch.ones(T, 1, dtype=torch.float64), ids)
    assert rel_err(out, ref) < 1e-2
    assert rel_err(out, reference_moe(*as64(x, w1, w2, weights), ids)) > 0.1
    x2, w1, w2, weights2, ids2 = layer_inputs(T, H, I, E, 2, seed=4)
    with pytest.raises(ValueError, match=r"top-1 routing .* \[T, 1\]"):
        vllm.fused_experts(x2, w1, w2, weights2, ids2, apply_router_weight_on_input=True)


def test_router_weight_on_input_refuses_w1_bias():
    """vLLM weighs x @ w1.T + w1_bias; scaling x alone would leave the bias
    unweighted, a wrong answer, so the pair is refused by name."""
    x, w1, w2, weights, ids = layer_inputs(T, H, I, E, 1, seed=5)
    bias = torch.randn(E, w1.shape[1]).to(x.dtype)
    with pytest.raises(NotImplementedError, match="apply_router_weight_on_input=True with "
                                                  "w1_bias"):
        vllm.fused_experts(x, w1, w2, weights, ids, apply_router_weight_on_input=True,
                           w1_bias=bias)


def test_expert_map_and_global_num_experts():
    x, w1, w2, weights, ids = layer_inputs(T, H, I, E, K, seed=5, empty=(0,))
    held = [1, 4, 5]
    expert_map = torch.full((E,), -1, dtype=torch.int32)
    expert_map[held] = torch.arange(3, dtype=torch.int32)
    pick = torch.tensor(held)
    with torch.no_grad():
        out = vllm.fused_experts(x, w1[pick].contiguous(), w2[pick].contiguous(), weights, ids,
                                 global_num_experts=E, expert_map=expert_map)
    ref = reference_moe(*as64(x, w1[pick], w2[pick], weights), ids, expert_map=expert_map)
    assert rel_err(out, ref) < 1e-2
    with pytest.raises(ValueError, match=r"global_num_experts = 7 must equal expert_map's "
                                         r"length = 6"):
        vllm.fused_experts(x, w1[pick].contiguous(), w2[pick].contiguous(), weights, ids,
                           global_num_experts=7, expert_map=expert_map)
    with pytest.raises(ValueError, match=r"global_num_experts = 5 must equal w1.shape\[0\]"):
        vllm.fused_experts(x, w1, w2, weights, ids, global_num_experts=5)


@pytest.mark.parametrize("per_tensor", [False, True])
def test_fp8_scale_layouts(per_tensor):
    x, w1, w2, weights, ids = layer_inputs(T, H, I, E, K, seed=6)
    if per_tensor:
        s1 = w1.float().abs().amax(dim=(1, 2)) / 448
        s2 = w2.float().abs().amax(dim=(1, 2)).view(E, 1, 1) / 448  # both of vLLM's forms
        q1 = (w1.float() / s1.view(E, 1, 1)).to(torch.float8_e4m3fn)
        q2 = (w2.float() / s2).to(torch.float8_e4m3fn)
        d1, d2 = q1.double() * s1.double().view(E, 1, 1), q2.double() * s2.double()
        block = None
    else:
        (q1, s1), (q2, s2) = moe.quantize_weights(w1), moe.quantize_weights(w2)
        d1, d2 = dequantized_weights(q1, s1), dequantized_weights(q2, s2)
        block = [128, 128]
    out = vllm.fused_experts(x, q1, q2, weights, ids, use_fp8_w8a8=True, w1_scale=s1,
                             w2_scale=s2, block_shape=block)
    err = rel_err(out, reference_moe(x.double(), d1, d2, weights.double(), ids))
    assert err < 6e-2, err  # the activations' e4m3 rounding (test_moe.py)


def test_unsupported_arguments_are_named():
    x, w1, w2, weights, ids = layer_inputs(4, H, I, E, K, seed=7)
    for flag in ("use_int8_w8a8", "use_int8_w8a16", "use_int4_w4a16", "use_mxfp4_w4a4",
                 "per_channel_quant"):
        with pytest.raises(NotImplementedError, match=flag):
            vllm.fused_experts(x, w1, w2, weights, ids, **{flag: True})
    for name in ("w1_zp", "a1_scale", "a2_scale"):
        with pytest.raises(NotImplementedError, match=name):
            vllm.fused_experts(x, w1, w2, weights, ids, **{name: torch.ones(1)})
    with pytest.raises(ValueError, match="activation must be one of vLLM's"):
        vllm.fused_experts(x, w1, w2, weights, ids, activation="swiglu")
    with pytest.raises(TypeError, match="hidden_states must be a bfloat16"):
        vllm.fused_experts(x.half(), w1, w2, weights, ids)
    with pytest.raises(NotImplementedError, match=r"block_shape must be \[128, 128\]"):
        vllm.fused_experts(x, w1, w2, weights, ids, use_fp8_w8a8=True,
                           w1_scale=torch.ones(E), w2_scale=torch.ones(E), block_shape=[64, 64])
    with pytest.raises(ValueError, match="use_fp8_w8a8 is False"):
        vllm.fused_experts(x, w1, w2, weights, ids, w1_scale=torch.ones(E))
    # No experts at all (was a ZeroDivisionError), and an expert_map that is
    # a list (was "must equal expert_map's length = None").
    with pytest.raises(ValueError, match=r"^w1 holds no experts \(w1.shape\[0\] = 0\)"):
        vllm.fused_experts(x, w1[:0], w2[:0], weights, ids)
    with pytest.raises(TypeError, match=r"^expert_map must be an int32 tensor .* got list$"):
        vllm.fused_experts(x, w1, w2, weights, ids, global_num_experts=E,
                           expert_map=list(range(E)))


def test_fused_topk_is_softmax_top_k():
    x, _, _, _, _ = layer_inputs(T, H, I, E, K, seed=8)
    logits = torch.randn(T, E)
    weights, ids = vllm.fused_topk(x, logits, 2, renormalize=False)
    top = torch.softmax(logits, dim=-1).topk(2)
    assert torch.equal(ids.long(), top.indices) and torch.allclose(weights, top.values)
    with pytest.raises(ValueError, match="one row per token"):
        vllm.fused_topk(x, logits[:3], 2, True)


def test_grouped_topk_is_deepseeks_routing():
    """vLLM's grouped_topk: DeepSeek-V3's sigmoid scores, correction bias,
    kept groups and scaling, as ggc.moe.route computes them (and as
    written out here with torch); its bad arguments named."""
    x, _, _, _, _ = layer_inputs(T, H, I, 16, K, seed=9)
    logits, bias = torch.randn(T, 16), torch.randn(16) * 0.1
    weights, ids = vllm.grouped_topk(x, logits, 3, True, num_expert_group=4, topk_group=2,
                                     scoring_func="sigmoid", routed_scaling_factor=2.5,
                                     e_score_correction_bias=bias)
    scores = logits.sigmoid()
    choice = scores + bias
    ranks = choice.view(T, 4, 4).topk(2, dim=-1).values.sum(-1)
    kept = torch.zeros(T, 4, dtype=torch.bool).scatter_(1, ranks.topk(2, dim=-1).indices, True)
    allowed = kept.repeat_interleave(4, dim=1)
    want_ids = choice.masked_fill(~allowed, float("-inf")).topk(3, dim=-1).indices
    want = scores.gather(1, want_ids)
    want = want / want.sum(dim=-1, keepdim=True) * 2.5
    assert ids.dtype == torch.int32 and torch.equal(ids.long(), want_ids)
    assert torch.allclose(weights, want)
    with pytest.raises(NotImplementedError, match="scoring_func='sqrtsoftplus'"):
        vllm.grouped_topk(x, logits, 3, True, 4, 2, scoring_func="sqrtsoftplus")
    with pytest.raises(ValueError, match="num_expert_group must be a positive int, got 0"):
        vllm.grouped_topk(x, logits, 3, True)
    with pytest.raises(ValueError, match="one row per token"):
        vllm.grouped_topk(x, logits[:3], 3, True, 4, 2)


def test_errors_name_vllms_arguments():
    """What ggc.moe refuses is reported in the caller's terms: w1, w1_bias
    and hidden_states, not ggc's w13, w13_bias and x."""
    x, w1, w2, weights, ids = layer_inputs(4, H, I, E, K, seed=8)
    with pytest.raises(ValueError) as bad_w1:
        vllm.fused_experts(x, w1[:, :, :-8].contiguous(), w2, weights, ids)
    message = str(bad_w1.value)
    assert "w1 must be" in message and "hidden_states.shape[1]" in message
    assert "w13" not in message and not re.search(r"\bx\b", message)
    with pytest.raises(ValueError, match=r"\bw1_bias\b") as bad_bias:
        vllm.fused_experts(x, w1, w2, weights, ids, w1_bias=torch.zeros(E, 3))
    assert "w13" not in str(bad_bias.value)
