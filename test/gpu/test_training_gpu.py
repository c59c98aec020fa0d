"""ggc.training's FP8 recipe and MoE(compute_dtype=FP8) on the GPU's
kernels: the checks of test/python/test_training.py (fp64 of the exact
product within FP8's error, fp64 of the quantised operands within the
bf16 output's rounding, empty groups' weight gradients zero, the layer's
gradients within FP8's error of the BF16 layer's), on CUDA tensors."""

import os
import sys

import pytest

torch = pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
import test_training as checks  # noqa: E402
from ggc.moe import quant_kernel  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.mark.parametrize("wgrad_dtype", [torch.bfloat16, checks.FP8])
@pytest.mark.parametrize("sizes", checks.RAGGED + [[0, 700, 1, 129, 2048, 0, 63, 1000]])
@pytest.mark.parametrize("n, k", [(256, 384), (512, 1024), (208, 2880)])
def test_recipe_against_fp64(sizes, n, k, wgrad_dtype):
    checks.check_recipe(sizes, n, k, "cuda", seed=sum(sizes) + n, wgrad_dtype=wgrad_dtype)


def test_rows_take_ggc_quantisation_kernel():
    x = torch.randn(300, 512, device="cuda").bfloat16()
    assert quant_kernel.usable(x)
    q, scales = checks.training.quantized_rows(x)
    assert scales.stride() == (1, 300)  # the kernel's M-major layout, as a [R, C/128] view


def test_layer_trains_in_fp8():
    checks.check_layer("cuda", hidden=512, intermediate=256, experts=8, top_k=2, tokens=300)


def test_layer_trains_in_fp8_with_partial_scale_blocks():
    """gpt-oss's H = I = 2,880 (22.5 scale blocks): refused before."""
    checks.check_layer("cuda", hidden=2880, intermediate=2880, experts=4, top_k=2, tokens=300)


@pytest.mark.parametrize("g, n, k", [(1, 128, 128), (3, 256, 384), (5, 1536, 2048),
                                     (2, 208, 2880), (1, 48, 16)])  # partial blocks
def test_weight_blocks_kernel_matches_torch(g, n, k):
    """gg.quantize_blocks' kernel gives the torch path's bytes and scales,
    and its transposed copy holds the same bytes transposed (a zero block:
    the floor's scale; an outlier in one block)."""
    gen = torch.Generator(device="cuda").manual_seed(g * n + k)
    w = (torch.randn(g, n, k, device="cuda", generator=gen) * 0.05).bfloat16()
    w[0, :128, :128] = 0
    w[-1, -1, -1] = 300.0
    made = checks.training._kernel_weights(w, transposed=True)
    assert made is not None
    want = checks.training._torch_weights(w, transposed=True)
    for got, ref in ((made.q, want.q), (made.qt, want.qt)):
        assert got.shape == ref.shape
        assert torch.equal(got.view(torch.uint8), ref.view(torch.uint8))
    assert torch.equal(made.scales, want.scales)
    assert torch.equal(made.scales_t, want.scales_t)
    plain = checks.training._kernel_weights(w, transposed=False)
    assert plain.qt is None and torch.equal(plain.q.view(torch.uint8), want.q.view(torch.uint8))


@pytest.mark.parametrize("sizes, c", [([0, 1, 130, 67, 0, 255], 48), ([300, 0, 1, 1], 2880),
                                      ([0, 700, 1, 129, 2048, 0, 63, 1000], 1536),
                                      ([128] * 6, 256), ([], 128), ([5, 0], 16),
                                      # 2,072 blocks: CTAs take several, the cursor moves on
                                      ([1000, 37, 2048, 0, 1011], 7168)])
def test_group_tokens_kernel_matches_torch(sizes, c):
    """gg.quantize_group_tokens' kernel gives the torch path's bytes,
    scales and padded offsets over the whole of its outputs (poisoned
    first: the zeros past the last group are written too); a column of
    zeros takes the floor's scale, an outlier one column's."""
    gen = torch.Generator(device="cuda").manual_seed(sum(sizes) + c)
    t = sum(sizes)
    x = (torch.randn(t, c, device="cuda", generator=gen) * 2).bfloat16()
    if t:
        x[:, 0] = 0
        x[t // 2, -1] = 300.0
    offsets = torch.tensor([0] + sizes, device="cuda").cumsum(0).to(torch.int32)
    capacity = max(128, -(-t // 128) * 128 + 128 * len(sizes))
    out = (torch.full((c, capacity), 0x7F, dtype=torch.uint8, device="cuda").view(checks.FP8),
           torch.full((capacity // 128, c), float("nan"), device="cuda"),
           torch.full_like(offsets, -7))
    made = quant_kernel.group_tokens(x, offsets, capacity, out=out)
    assert made is not None and made[0] is out[0]
    q, scales, padded = made
    want_q, want_scales, want_padded = checks.training._torch_group_tokens(x, offsets, capacity)
    assert torch.equal(padded, want_padded)
    assert torch.equal(q.view(torch.uint8), want_q.view(torch.uint8))
    assert torch.equal(scales.t(), want_scales)


def test_group_tokens_take_bad_offsets_as_the_torch_path_does():
    """Offsets past T, decreasing or negative: quantized_tokens clamps them
    to [0, T] and makes them non-decreasing before the kernel (groups
    [0, 150), [150, 150), [150, 200), [200, 200)); the kernel's call gives
    the torch path's bytes, scales and padded offsets over those bounds,
    the padding inside its columns."""
    x = torch.randn(200, 64, device="cuda").bfloat16()
    offsets = torch.tensor([-5, 150, 90, 260, 1000], device="cuda")
    q, scales, padded = checks.training.quantized_tokens(x, offsets)
    bounds = torch.tensor([0, 150, 150, 200, 200], dtype=torch.int32, device="cuda")
    want_q, want_scales, want_padded = checks.training._torch_group_tokens(x, bounds, q.shape[1])
    assert padded.tolist() == want_padded.tolist() == [0, 256, 256, 384, 384]
    assert torch.equal(q.view(torch.uint8), want_q.view(torch.uint8))
    assert torch.equal(scales, want_scales)


def test_compiled_layer_is_close_to_eager():
    """Traced, the layer's quantisations, SwiGLU and combine are torch ops
    (eagerly ggc's kernels, whose SwiGLU's sigmoid is ex2-based): close,
    not equal."""
    checks.check_compiled_layer("cuda", 2e-2)


@pytest.mark.parametrize("wants", checks.WANTS)
@pytest.mark.parametrize("inter", [128, 384])  # 384: an odd number of 128-column blocks
def test_fused_swiglu_experts_match_the_chained_recipe(wants, inter):
    """On the GPU's kernels (the fused ones against the chain's): the same
    bits forward and for each input's gradient."""
    checks.check_fused_experts(wants, "cuda", inter=inter, tokens=300)


def test_fused_swiglu_experts_with_gathered_scales():
    """The tokens' scales quantised once and gathered (the layer's choice
    from GATHERED_SCALE_ROWS sorted rows), forward and backward: the
    chain's bits as with scattered scales."""
    checks.check_fused_experts((True, True, True, True), "cuda", gathered_scales=True,
                               tokens=300)


def test_layer_hands_the_fused_experts_its_topk_weights(monkeypatch):
    """On the GPU the routes are sorted by gg.sort_routes' kernel, whose
    sorted weights come without an autograd node: the FP8 layer hands
    fp8_experts its topk_weights (SORTED_WEIGHTS_IN_EXPERTS), with the
    same output and gradients, bit for bit, as through
    permute._SortedWeights' node."""
    from ggc.moe import MoE, fp8_experts
    from ggc.moe import layer as moe_layer
    handed = []
    original = fp8_experts.swiglu_experts
    monkeypatch.setattr(fp8_experts, "swiglu_experts",
                        lambda *a: handed.append(a[4] is not None) or original(*a))
    torch.manual_seed(3)
    layer = MoE(256, 128, 8, 2, compute_dtype=checks.FP8, device="cuda")
    results = checks.steps_by_switch(monkeypatch, moe_layer, "SORTED_WEIGHTS_IN_EXPERTS",
                                     layer, 300, "cuda")
    assert handed == [True, False]
    for got, want in zip(*results):
        assert torch.equal(got, want)
