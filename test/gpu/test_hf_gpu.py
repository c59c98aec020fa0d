"""ggc.moe.hf on the GPU: each family's transformers MoE block (a tiny
random config) against the swapped block on the same inputs, BF16 and
FP8 where the family ships FP8 weights; a short greedy generation of a
tiny random model with and without the swap."""

import copy
import os
import sys

import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("transformers")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))

from ggc.moe import hf  # noqa: E402
import hf_models  # noqa: E402
from hf_models import FAMILIES, H  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def rel(a, b):
    a, b = a.double(), b.double()
    assert torch.isfinite(a).all()
    return ((a - b).norm() / b.norm()).item()


@pytest.mark.parametrize("fp8", [False, True])
@pytest.mark.parametrize("family", FAMILIES)
def test_swapped_block_matches_transformers(family, fp8):
    if fp8 and family not in ("qwen3_moe", "deepseek_v3"):
        pytest.skip(f"{family} ships no FP8 (128x128 block) weights")
    model = hf_models.model(family, device="cuda", seed=11)
    for tokens in (1, 5, 133):  # decode, a ragged few, off every tile boundary
        x = torch.randn(1, tokens, H, device="cuda").bfloat16()
        for _, block in hf_models.moe_blocks(model, family):
            layer = hf.from_hf(block, model.config)
            if fp8:
                layer.quantize_fp8()
            with torch.no_grad():
                want = hf_models.block_output(block, x)
                got = layer(x)
            err = rel(got, want)
            # BF16: both sides' bf16 roundings. FP8: the weights' and the
            # activations' e4m3 roundings (3 mantissa bits) on top.
            assert (5e-3 < err < 1e-1) if fp8 else err < 2e-2, (tokens, err)


@pytest.mark.parametrize("family", FAMILIES)
def test_generation_gives_the_same_tokens(family):
    model = hf_models.model(family, device="cuda", seed=12)
    reference = copy.deepcopy(model)
    prompt = torch.randint(0, hf_models.VOCAB, (1, 6), device="cuda",
                           generator=torch.Generator(device="cuda").manual_seed(13))
    # Every step generates (no end-of-sequence stop), so the two compare
    # token for token.
    settings = dict(max_new_tokens=12, min_new_tokens=12, do_sample=False, pad_token_id=0)
    with torch.no_grad():
        want = reference.generate(prompt, **settings)
        assert hf.swap_moe_blocks(model) > 0
        got = model.generate(prompt, **settings)
    assert got.shape == want.shape
    if torch.equal(got, want):
        return
    # Allowed only where BF16 noise decides a near tie: at the first
    # difference the reference scores the two tokens within 2% of its
    # logits' spread.
    step = int((got != want).nonzero()[0, 1])
    with torch.no_grad():
        logits = reference(want[:, :step]).logits[0, -1].float()
    margin = (logits[want[0, step]] - logits[got[0, step]]).item()
    assert margin < 0.02 * logits.std().item(), (step, margin, logits.std().item())


@pytest.mark.parametrize("family", ["mixtral", "qwen3_moe"])
def test_swapped_model_trains_like_the_original(family):
    """A few AdamW steps of a swapped model on ggc's kernels, the router's
    auxiliary loss included (output_router_logits), follow the unswapped
    model's loss curve within bf16 noise (hf_models says how near)."""
    hf_models.assert_trains_like_the_original(family, "cuda", hf.swap_moe_blocks)
