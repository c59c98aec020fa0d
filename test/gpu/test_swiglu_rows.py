"""gg.swiglu_rows' kernel (ggc.moe.swiglu_kernel) against fp64: within one
bf16 rounding of silu(gate) * up (the kernel rounds once; its ex2 and
reciprocal approximations are within 2 ulp of f32), on fresh random rows
including extreme gates and NaN, every row written (outputs come from
new_empty and are checked whole), row counts 0, 1 and off every block,
widths of one vector up to 2,056 columns; the bits of the gated FP8
quantisation's activation (the same silu); what it declines."""

import pytest

torch = pytest.importorskip("torch")

from ggc.moe import swiglu_kernel  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")
BF16 = torch.bfloat16


def within_one_rounding(got, want):
    got, want = got.double(), want.double()
    both_nan = got.isnan() & want.isnan()
    close = (got - want).abs() <= want.abs() * 2.0 ** -7 + 1e-30
    return bool((both_nan | close).all())


@pytest.mark.parametrize("rows", [0, 1, 3, 257, 4099])
@pytest.mark.parametrize("inter", [8, 768, 2056])
def test_swiglu_within_one_rounding_of_fp64(rows, inter):
    gen = torch.Generator(device="cuda").manual_seed(rows * 7 + inter)
    h = (torch.randn(rows, 2 * inter, device="cuda", generator=gen) * 4).to(BF16)
    if rows * inter > 8:
        h[0, 0], h[0, 1], h[0, 2], h[0, 3] = 90.0, -90.0, 0.0, float("nan")
    got = swiglu_kernel.swiglu(h)
    gate, up = h.double().chunk(2, dim=-1)
    want = torch.nn.functional.silu(gate) * up
    assert got.shape == (rows, inter) and got.dtype == BF16
    assert within_one_rounding(got, want)


def test_the_gated_quantisation_computes_the_same_activation():
    """quant_kernel's gated SwiGLU rounds the activation to bf16 before
    quantising: quantising swiglu_rows' output gives the same bytes."""
    from ggc.moe import quant_kernel
    h = (torch.randn(300, 2 * 768, device="cuda") * 3).to(BF16)
    fused = quant_kernel.rows_mn(h, gated=True)
    apart = quant_kernel.rows_mn(swiglu_kernel.swiglu(h))
    assert torch.equal(fused[0].view(torch.uint8), apart[0].view(torch.uint8))
    assert torch.equal(fused[1], apart[1])


def test_declines_what_it_cannot_take():
    h = torch.randn(4, 33, device="cuda").to(BF16)
    assert swiglu_kernel.swiglu(h[:, 1:]) is None  # not contiguous
    base = torch.randn(5 * 16 + 4, device="cuda").to(BF16)
    assert swiglu_kernel.swiglu(base[4:].view(5, 16)) is None  # 8 bytes past alignment
    assert swiglu_kernel.swiglu(torch.randn(4, 16, device="cuda")) is None  # f32
    assert swiglu_kernel.swiglu(torch.randn(4, 24, device="cuda").to(BF16)) is None  # I = 12
