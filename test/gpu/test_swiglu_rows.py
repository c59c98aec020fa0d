"""gg.swiglu_rows' kernel (ggc.moe.swiglu_kernel) against fp64: within one
bf16 rounding of silu(gate) * up (the kernel rounds once; its ex2 and
reciprocal approximations are within 2 ulp of f32), on fresh random rows
including extreme gates and NaN, every row written (outputs come from
new_empty and are checked whole), row counts 0, 1 and off every block,
widths of one vector up to 2,056 columns; the bits of the gated FP8
quantisation's activation (the same silu); what it declines. The same
for gg.swiglu_rows_backward's kernel against fp64's gradient, and
SwiGLU; and their routed forms (a routing weight a row: the routed rows,
their gradient with the weights') and RoutedSwiGLU, the autograd
function the layer trains with."""

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


def swiglu_grad_fp64(h, d):
    """The gradient of silu(gate) * up at h for d, by fp64 autograd."""
    h64 = h.double().requires_grad_()
    gate, up = h64.chunk(2, dim=-1)
    (torch.nn.functional.silu(gate) * up).backward(d.double())
    return h64.grad


@pytest.mark.parametrize("rows", [0, 1, 3, 257, 4099])
@pytest.mark.parametrize("inter", [8, 768, 2056])
def test_swiglu_backward_against_fp64(rows, inter):
    """gg.swiglu_rows_backward's kernel: every element within one bf16
    rounding of fp64's gradient (plus a floor of 1e-6 of the largest, for
    the gate's gradient where 1 + g(1 - s) cancels), every row written
    (torch.empty_like output checked whole), extreme gates included."""
    gen = torch.Generator(device="cuda").manual_seed(rows * 5 + inter)
    h = (torch.randn(rows, 2 * inter, device="cuda", generator=gen) * 4).to(BF16)
    d = torch.randn(rows, inter, device="cuda", generator=gen).to(BF16)
    if rows * inter > 8:
        h[0, 0], h[0, 1], h[0, 2] = 90.0, -90.0, 0.0
    got = swiglu_kernel.swiglu_backward(h, d)
    assert got is not None and got.shape == h.shape and got.dtype == BF16
    want = swiglu_grad_fp64(h, d)
    floor = 1e-6 * float(want.abs().max()) if want.numel() else 0.0
    assert bool(((got.double() - want).abs() <= want.abs() * 2.0 ** -7 + floor).all())


def test_swiglu_function_runs_the_kernels_both_ways():
    """SwiGLU.apply: forward the bits of swiglu(h), backward the bits of
    swiglu_backward(h, d); its torch path (the CPU's) within two bf16
    roundings of them."""
    gen = torch.Generator(device="cuda").manual_seed(3)
    h = (torch.randn(300, 1536, device="cuda", generator=gen) * 3).to(BF16)
    d = torch.randn(300, 768, device="cuda", generator=gen).to(BF16)
    leaf = h.clone().requires_grad_()
    out = swiglu_kernel.SwiGLU.apply(leaf)
    out.backward(d)
    assert torch.equal(out, swiglu_kernel.swiglu(h))
    assert torch.equal(leaf.grad, swiglu_kernel.swiglu_backward(h, d))
    cpu = h.cpu().requires_grad_()
    out_cpu = swiglu_kernel.SwiGLU.apply(cpu)
    out_cpu.backward(d.cpu())
    for a, b in ((out_cpu, out), (cpu.grad, leaf.grad)):
        b = b.cpu().double()
        floor = 1e-4 * float(b.abs().max())  # where 1 + g(1 - s) cancels
        assert bool(((a.double() - b).abs() <= b.abs() * 2.0 ** -6 + floor).all())


def test_swiglu_backward_declines_what_it_cannot_take():
    h = torch.randn(4, 64, device="cuda").to(BF16)
    d = torch.randn(4, 32, device="cuda").to(BF16)
    assert swiglu_kernel.swiglu_backward(h.float(), d) is None
    assert swiglu_kernel.swiglu_backward(h, d[:3]) is None
    assert swiglu_kernel.swiglu_backward(h.cpu(), d.cpu()) is None


def random_route(rows, gen):
    """Routing weights in (0, 1), with a zero and a negative where rows allow
    (a skipped route; a weight a caller's own rule made negative)."""
    route = torch.rand(rows, device="cuda", generator=gen)
    if rows >= 3:
        route[1], route[2] = 0.0, -0.75
    return route


@pytest.mark.parametrize("rows", [0, 1, 3, 257, 4099])
@pytest.mark.parametrize("inter", [8, 768, 2056])
def test_routed_swiglu_within_one_rounding_of_fp64(rows, inter):
    gen = torch.Generator(device="cuda").manual_seed(rows * 11 + inter)
    h = (torch.randn(rows, 2 * inter, device="cuda", generator=gen) * 4).to(BF16)
    route = random_route(rows, gen)
    got = swiglu_kernel.swiglu(h, route)
    gate, up = h.double().chunk(2, dim=-1)
    want = torch.nn.functional.silu(gate) * up * route.double().unsqueeze(1)
    assert got.shape == (rows, inter) and got.dtype == BF16
    assert within_one_rounding(got, want)


@pytest.mark.parametrize("rows", [0, 1, 3, 257, 4099])
@pytest.mark.parametrize("inter", [8, 768, 2056])
def test_routed_swiglu_backward_against_fp64(rows, inter):
    """The routed gradient: h's within one bf16 rounding of fp64's (and the
    floor where 1 + g(1 - s) cancels), the weights' within 1e-5 of the
    row's sum of |grad * activation| (f32 sums of approximate silu),
    every row of both written (empty outputs checked whole), the same
    bits on a second run."""
    gen = torch.Generator(device="cuda").manual_seed(rows * 13 + inter)
    h = (torch.randn(rows, 2 * inter, device="cuda", generator=gen) * 4).to(BF16)
    d = torch.randn(rows, inter, device="cuda", generator=gen).to(BF16)
    route = random_route(rows, gen)
    if rows * inter > 8:
        h[0, 0], h[0, 1], h[0, 2] = 90.0, -90.0, 0.0
    got = swiglu_kernel.routed_swiglu_backward(h, d, route)
    assert got is not None
    dh, droute = got
    assert dh.shape == h.shape and dh.dtype == BF16
    assert droute.shape == (rows,) and droute.dtype == torch.float32
    h64 = h.double().requires_grad_()
    r64 = route.double().requires_grad_()
    gate, up = h64.chunk(2, dim=-1)
    act = torch.nn.functional.silu(gate) * up
    (act * r64.unsqueeze(1)).backward(d.double())
    floor = 1e-6 * float(h64.grad.abs().max()) if rows else 0.0
    assert bool(((dh.double() - h64.grad).abs() <= h64.grad.abs() * 2.0 ** -7 + floor).all())
    magnitude = (d.double() * act.detach()).abs().sum(dim=-1)
    assert bool(((droute.double() - r64.grad).abs() <= magnitude * 1e-5 + 1e-30).all())
    again = swiglu_kernel.routed_swiglu_backward(h, d, route)
    assert torch.equal(again[0], dh) and torch.equal(again[1], droute)


def test_routed_swiglu_function_runs_the_kernels_both_ways():
    """RoutedSwiGLU.apply: forward the bits of swiglu(h, route), backward
    those of routed_swiglu_backward; its torch path (the CPU's) close to
    them."""
    gen = torch.Generator(device="cuda").manual_seed(4)
    h = (torch.randn(300, 1536, device="cuda", generator=gen) * 3).to(BF16)
    d = torch.randn(300, 768, device="cuda", generator=gen).to(BF16)
    route = random_route(300, gen)
    leaf, weights = h.clone().requires_grad_(), route.clone().requires_grad_()
    out = swiglu_kernel.RoutedSwiGLU.apply(leaf, weights)
    out.backward(d)
    dh, droute = swiglu_kernel.routed_swiglu_backward(h, d, route)
    assert torch.equal(out, swiglu_kernel.swiglu(h, route))
    assert torch.equal(leaf.grad, dh) and torch.equal(weights.grad, droute)
    cpu, cpu_route = h.cpu().requires_grad_(), route.cpu().requires_grad_()
    out_cpu = swiglu_kernel.RoutedSwiGLU.apply(cpu, cpu_route)
    out_cpu.backward(d.cpu())
    for a, b in ((out_cpu, out), (cpu.grad, leaf.grad)):
        b = b.cpu().double()
        floor = 1e-4 * float(b.abs().max())  # where 1 + g(1 - s) cancels
        assert bool(((a.double() - b).abs() <= b.abs() * 2.0 ** -6 + floor).all())
    scale = float((d.double() * out.double()).abs().sum(dim=-1).max()) + 1.0
    assert bool(((cpu_route.grad.double() - droute.cpu().double()).abs() <= 1e-3 * scale).all())


def test_routed_kernels_decline_what_they_cannot_take():
    h = torch.randn(4, 64, device="cuda").to(BF16)
    d = torch.randn(4, 32, device="cuda").to(BF16)
    route = torch.rand(4, device="cuda")
    assert swiglu_kernel.swiglu(h, route.double()) is None  # f64 weights
    assert swiglu_kernel.swiglu(h, route[:3]) is None  # a weight short
    assert swiglu_kernel.routed_swiglu_backward(h, d, route.cpu()) is None
    assert swiglu_kernel.routed_swiglu_backward(h, d, route.to(BF16)) is None


@pytest.mark.parametrize("rows", [0, 1, 3, 257, 1031])
@pytest.mark.parametrize("inter", [128, 384, 768, 2048])  # 128, 384: a last half-step
def test_quantized_routed_backward_matches_backward_then_quantize(rows, inter):
    """gg.swiglu_rows_backward with `quantized`: h's gradient and the
    weights' are routed_swiglu_backward's bits, and the e4m3 copy and its
    M-major scales are quant_kernel.rows_mn's of that gradient, bit for
    bit; every row of every output written (all come from torch.empty and
    are checked whole); I off a multiple of 128 declined."""
    from ggc.moe import quant_kernel
    gen = torch.Generator(device="cuda").manual_seed(rows * 17 + inter)
    h = (torch.randn(rows, 2 * inter, device="cuda", generator=gen) * 4).to(BF16)
    d = torch.randn(rows, inter, device="cuda", generator=gen).to(BF16)
    route = random_route(rows, gen)
    got = swiglu_kernel.quantized_routed_swiglu_backward(h, d, route)
    assert got is not None
    dh, droute, q, mn = got
    want_dh, want_droute = swiglu_kernel.routed_swiglu_backward(h, d, route)
    assert torch.equal(dh, want_dh)
    assert torch.equal(droute, want_droute)
    assert q.dtype == torch.float8_e4m3fn and q.shape == (rows, 2 * inter)
    assert mn.shape == (2 * inter // 128, (rows + 3) // 4 * 4)
    if rows:
        want_q, want_mn = quant_kernel.rows_mn(want_dh)
        assert torch.equal(q.view(torch.uint8), want_q.view(torch.uint8))
        assert torch.equal(mn[:, :rows], want_mn[:, :rows])
    narrow = h[:, :2 * 120].contiguous()
    assert swiglu_kernel.quantized_routed_swiglu_backward(
        narrow, d[:, :120].contiguous(), route) is None
