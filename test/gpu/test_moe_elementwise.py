"""SwiGLU and the combine as ggc's PTX kernels (ggc.moe.elementwise)
against torch: within one bf16 rounding of the f32 result (the kernels
round once, torch's SwiGLU twice), on fresh random rows including extreme
gates and NaN, every row written (outputs come from new_empty and are
checked whole), row counts 0, 1 and off every block, widths of one vector
up to 7,176 columns; unaligned inputs are declined."""

import os
import sys

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "python"))
from ggc.moe import elementwise  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
BF16 = torch.bfloat16


def within_one_rounding(got, want_f32):
    """|got - want| within half a bf16 ulp of want plus the kernel's ex2/rcp
    approximation (2 ulp of f32): one ulp of bf16 covers both."""
    got, want = got.float(), want_f32.float()
    both_nan = got.isnan() & want.isnan()
    close = (got - want).abs() <= want.abs() * 2.0 ** -7 + 1e-30
    return bool((both_nan | close).all())


@pytest.mark.parametrize("rows", [0, 1, 3, 257, 4099])
@pytest.mark.parametrize("inter", [8, 768, 2056])
def test_swiglu(rows, inter):
    gen = torch.Generator(device="cuda").manual_seed(rows * 7 + inter)
    h = (torch.randn(rows, 2 * inter, device="cuda", generator=gen) * 4).to(BF16)
    if rows * inter > 8:
        h[0, 0], h[0, 1], h[0, 2], h[0, 3] = 90.0, -90.0, 0.0, float("nan")
    got = elementwise.swiglu(h)
    gate, up = h.float().chunk(2, dim=-1)
    want = torch.nn.functional.silu(gate.double()) * up.double()
    assert got.shape == (rows, inter) and got.dtype == BF16
    assert within_one_rounding(got, want)


@pytest.mark.parametrize("tokens", [0, 1, 5, 300])
@pytest.mark.parametrize("top_k", [1, 2, 8])
@pytest.mark.parametrize("hidden", [8, 2048, 7176])
def test_combine(tokens, top_k, hidden):
    gen = torch.Generator(device="cuda").manual_seed(tokens + top_k + hidden)
    y = torch.randn(tokens * top_k, hidden, device="cuda", generator=gen).to(BF16)
    position = torch.randperm(tokens * top_k, device="cuda", generator=gen)
    got = elementwise.combine(y, position, top_k)
    want = y.double().index_select(0, position).view(tokens, top_k, hidden).sum(dim=1)
    assert got.shape == (tokens, hidden) and got.dtype == BF16
    assert within_one_rounding(got, want)


def test_declines_what_it_cannot_take():
    h = torch.randn(4, 33, device="cuda").to(BF16)
    assert elementwise.swiglu(h[:, 1:]) is None  # not contiguous
    base = torch.randn(5 * 16 + 4, device="cuda").to(BF16)
    assert elementwise.swiglu(base[4:].view(5, 16)) is None  # 8 bytes past alignment
    assert elementwise.swiglu(torch.randn(4, 16, device="cuda")) is None  # f32
    y = torch.randn(6, 16, device="cuda").to(BF16)
    assert elementwise.combine(y, torch.arange(6, device="cuda", dtype=torch.int32), 2) is None
    assert elementwise.combine(y[:, :12].contiguous(), torch.arange(6, device="cuda"), 2) is None
