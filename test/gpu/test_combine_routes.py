"""gg.combine_routes' kernel (ggc.moe.combine_kernel): the bits of torch's
f32 sum over the slots in slot order (the layer's torch path), on ragged
routings, top_k 1 to 8, int32 and int64 positions, positions off the
input (adding zero), NaN and extreme values, and no tokens."""

import os
import sys

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "python"))
from ggc.moe import combine_kernel  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def routed(tokens, top_k, hidden, seed):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    rows = tokens * top_k
    y = (torch.randn(rows, hidden, device="cuda", generator=gen) * 4).to(torch.bfloat16)
    if rows > 2:
        y[0, 0] = float("nan")
        y[1, :8] = 3e38
    position = torch.randperm(rows, device="cuda", generator=gen)
    return y, position


def torch_sum(y, position, top_k):
    picked = y.index_select(0, position.long()).float()
    return picked.view(-1, top_k, y.shape[1]).sum(dim=1).to(torch.bfloat16)


@pytest.mark.parametrize("tokens", [1, 3, 130, 1024])
@pytest.mark.parametrize("top_k", [1, 2, 8])
@pytest.mark.parametrize("hidden", [8, 200, 2048])
def test_matches_torchs_f32_sum_in_slot_order(tokens, top_k, hidden):
    y, position = routed(tokens, top_k, hidden, tokens + 7 * top_k + hidden)
    got = combine_kernel.combine(y, position, top_k)
    want = torch_sum(y, position, top_k)
    assert torch.equal(got.isnan(), want.isnan())
    assert torch.equal(got.nan_to_num(), want.nan_to_num())
    for p in (position.to(torch.int32),):
        assert torch.equal(combine_kernel.combine(y, p, top_k).nan_to_num(), got.nan_to_num())


def test_positions_off_the_input_add_zero():
    y, position = routed(16, 4, 64, 5)
    position[3] = y.shape[0]
    position[9] = -1
    got = combine_kernel.combine(y, position, 4)
    valid = (position >= 0) & (position < y.shape[0])
    picked = y.index_select(0, position.clamp(0, y.shape[0] - 1)).float()
    rows = torch.where(valid[:, None], picked, 0.0)  # not a product: NaN * 0 is NaN
    want = rows.view(16, 4, 64).sum(dim=1).to(torch.bfloat16)
    assert torch.equal(got.nan_to_num(), want.nan_to_num())


def test_no_tokens_and_what_it_declines():
    y = torch.zeros(0, 64, dtype=torch.bfloat16, device="cuda")
    assert combine_kernel.combine(y, torch.zeros(0, dtype=torch.int64, device="cuda"),
                                  2).shape == (0, 64)
    assert combine_kernel.combine(torch.zeros(4, 12, dtype=torch.bfloat16, device="cuda"),
                                  torch.zeros(4, dtype=torch.int64, device="cuda"), 2) is None
    assert combine_kernel.combine(torch.zeros(4, 16, device="cuda"),
                                  torch.zeros(4, dtype=torch.int64, device="cuda"), 2) is None
