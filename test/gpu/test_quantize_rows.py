"""gg.quantize_rows' kernel (ggc.moe.quant_kernel) against the torch path
it replaces: quant.quantize_rows' e4m3 bytes and scales bit for bit, in
quant.mn_major's M-major layout; gathered through a row list (repeated
rows, rows off the input: zeros); scattered through a position list
(each row to its copies' rows; indices off out skipped); SwiGLU over the column halves within
one bf16 rounding of the torch SwiGLU; ragged row counts, odd block
counts, partial last blocks (K off 128), zero blocks and outliers."""

import os
import sys

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "python"))
from ggc.moe import quant, quant_kernel  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def torch_path(x):
    q, scale = quant.quantize_rows(x)
    return q, quant.mn_major(scale)


def check_equal(got, want, m):
    q, mn = got
    wq, wmn = want
    assert q.dtype == quant.FP8 and q.shape == wq.shape
    assert torch.equal(q.view(torch.uint8), wq.view(torch.uint8))
    assert mn.shape == wmn.shape
    assert torch.equal(mn[:, :m], wmn[:, :m])


def rows_of(m, k, seed):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(m, k, device="cuda", generator=gen) * 3
    if m > 2:
        x[1, :128] = 0  # a zero block: the floor's scale
        x[2, 5] = 1e4  # an outlier in one block
    if m > 3 and k % 128:
        x[3, k - k % 128:] = 0  # a zero partial block
    return x.to(torch.bfloat16)


@pytest.mark.parametrize("m", [1, 5, 64, 257, 1000])
@pytest.mark.parametrize("k", [128, 640, 2048, 7168, 200, 2880, 40])  # 200, 2880, 40: a partial block
def test_matches_quantize_rows(m, k):
    x = rows_of(m, k, m + k)
    assert quant_kernel.usable(x)
    check_equal(quant_kernel.rows_mn(x), torch_path(x), m)


@pytest.mark.parametrize("m", [1, 33, 1000])
@pytest.mark.parametrize("k", [512, 2880])
def test_gathered_rows(m, k):
    x = rows_of(300, k, m)
    gen = torch.Generator(device="cuda").manual_seed(m)
    rows = torch.randint(0, 300, (m,), device="cuda", generator=gen, dtype=torch.int32)
    if m > 3:
        rows[0] = rows[1]  # a repeated row
        rows[2] = 300  # off the input: a zero row
        rows[3] = -1
    got = quant_kernel.rows_mn(x, rows=rows)
    valid = (rows >= 0) & (rows < 300)
    picked = x.index_select(0, rows.clamp(0, 299).long())
    # +0 off the input (a product with 0 would keep a negative value's sign).
    picked = torch.where(valid[:, None], picked, torch.zeros((), dtype=x.dtype, device="cuda"))
    check_equal(got, torch_path(picked), m)


@pytest.mark.parametrize("r,copies", [(1, 1), (37, 2), (300, 8), (5, 3)])
@pytest.mark.parametrize("k", [512, 2880, 40])
@pytest.mark.parametrize("index", [torch.int64, torch.int32])
def test_scattered_rows(r, copies, k, index):
    """positions a permutation (the MoE layer's route positions): every
    out row is its input row quantised, as the gathered copy through the
    inverse list gives it."""
    x = rows_of(r, k, r + copies + k)
    gen = torch.Generator(device="cuda").manual_seed(r * copies)
    positions = torch.randperm(r * copies, device="cuda", generator=gen).to(index)
    got = quant_kernel.rows_mn(x, positions=positions)
    source = torch.empty_like(positions, dtype=torch.int64)
    source[positions.long()] = torch.arange(r * copies, device="cuda")
    want = torch_path(x.index_select(0, source // copies))
    check_equal(got, want, r * copies)
    # The input rows' scales written once and gathered: the same bits.
    sources = (source // copies).to(index)
    check_equal(quant_kernel.rows_mn(x, positions=positions, sources=sources), want, r * copies)


def test_scatter_skips_indices_off_out():
    """Indices off out (negative, or past its rows) are skipped: the call
    completes and the rows the valid ones name are right (benchmarks/
    sanitize.sh's memcheck would see a write out of bounds)."""
    r, copies, k = 64, 4, 256
    x = rows_of(r, k, 7)
    positions = torch.randperm(r * copies, device="cuda")
    positions[5] = -1
    positions[9] = r * copies
    want_q, want_mn = torch_path(x)
    named = torch.ones(r * copies, dtype=torch.bool, device="cuda")
    named[[5, 9]] = False
    p, row = positions[named], torch.arange(r * copies, device="cuda")[named] // copies
    inverse = torch.zeros(r * copies, dtype=torch.int64, device="cuda")
    inverse[p] = row
    for got in (quant_kernel.rows_mn(x, positions=positions),
                quant_kernel.rows_mn(x, positions=positions, sources=inverse)):
        q, mn = got
        assert torch.equal(q[p].view(torch.uint8), want_q[row].view(torch.uint8))
        assert torch.equal(mn[:, p], want_mn[:, row])


def test_scatter_refuses_bad_positions():
    x = rows_of(10, 128, 1)
    with pytest.raises(ValueError, match="whole number of rows for each of x's 10 rows, got 25"):
        quant_kernel.rows_mn(x, positions=torch.arange(25, device="cuda"))
    with pytest.raises(ValueError, match="positions must be 1-D int32 or int64"):
        quant_kernel.rows_mn(x, positions=torch.arange(20, device="cuda").float())
    with pytest.raises(ValueError, match="sources must name one input row for each of the 20"):
        quant_kernel.rows_mn(x, positions=torch.arange(20, device="cuda"),
                             sources=torch.arange(10, device="cuda"))
    with pytest.raises(ValueError, match="sources must be 1-D int32 or int64, got torch.float32"):
        quant_kernel.rows_mn(x, positions=torch.arange(20, device="cuda"),
                             sources=torch.zeros(20, device="cuda"))
    with pytest.raises(ValueError, match="positions must be on x's device cuda:0, got cpu"):
        quant_kernel.rows_mn(x, positions=torch.arange(20))
    with pytest.raises(ValueError, match="at most 64 rows for each of x's 10 rows .* got 65"):
        quant_kernel.rows_mn(x, positions=torch.arange(650, device="cuda"))
    with pytest.raises(ValueError, match="sources only with positions"):
        quant_kernel.rows_mn(x, sources=torch.arange(10, device="cuda"))
    with pytest.raises(ValueError, match="rows \\(a gather\\) or positions"):
        quant_kernel.rows_mn(x, rows=torch.arange(20, device="cuda"),
                             positions=torch.arange(20, device="cuda"))


@pytest.mark.parametrize("m", [1, 77, 512])
@pytest.mark.parametrize("k", [256, 768, 208, 2880])
def test_gated_swiglu(m, k):
    h = rows_of(m, 2 * k, 3 * m + k)
    assert quant_kernel.usable(h, gated=True)
    q, mn = quant_kernel.rows_mn(h, gated=True)
    gate, up = h.float()[:, :k], h.float()[:, k:]
    act = (torch.nn.functional.silu(gate) * up).to(torch.bfloat16)
    wq, wmn = torch_path(act)
    # SwiGLU's approximate exp and reciprocal move a product by at most one
    # bf16 rounding; the scales and the dequantised values follow.
    assert torch.allclose(mn[:, :m], wmn[:, :m], rtol=1e-2, atol=0)
    deq = q.float() * mn[:, :m].t().repeat_interleave(128, dim=1)[:, :k]
    want = wq.float() * wmn[:, :m].t().repeat_interleave(128, dim=1)[:, :k]
    err = ((deq - want).norm() / want.norm()).item()
    assert err < 2e-2, err
    ref = act.float()
    assert ((deq - ref).norm() / ref.norm()).item() < 4e-2


def test_declines_what_it_cannot_take():
    x = torch.zeros(4, 196, dtype=torch.bfloat16, device="cuda")
    assert not quant_kernel.usable(x)  # K not a multiple of 8
    assert not quant_kernel.usable(x.float())
    assert not quant_kernel.usable(torch.zeros(4, 392, dtype=torch.bfloat16, device="cuda"),
                                   gated=True)  # 196 columns out
    big = torch.zeros(5, 128, dtype=torch.bfloat16, device="cuda")
    assert quant_kernel.rows_mn(big.view(-1)[4:4 + 512].view(4, 128)) is None  # unaligned


@pytest.mark.parametrize("m", [0, 1, 77, 513])
@pytest.mark.parametrize("k", [128, 768, 208, 1440])  # 208, 1440: a partial last block
def test_routed_swiglu_matches_swiglu_then_quantize(m, k):
    """gg.quantize_rows with `route` and `activation`: the bf16 activation
    is swiglu_kernel.swiglu(h, route)'s bits, and its e4m3 values and
    scales are rows_mn's of that activation, bit for bit (weights in
    (0, 1) with a zero and a negative one); every row written (the
    outputs come from torch.empty and are checked whole)."""
    from ggc.moe import swiglu_kernel
    h = rows_of(m, 2 * k, 5 * m + k)
    gen = torch.Generator(device="cuda").manual_seed(m + k)
    route = torch.rand(m, device="cuda", generator=gen)
    if m > 3:
        route[1], route[3] = 0.0, -0.5
    act, q, mn = quant_kernel.routed_swiglu(h, route)
    want_act = swiglu_kernel.swiglu(h, route)
    assert act.dtype == torch.bfloat16 and act.shape == (m, k)
    assert torch.equal(act, want_act)
    if m:
        check_equal((q, mn), quant_kernel.rows_mn(want_act), m)
    assert quant_kernel.routed_swiglu(h, route.double()) is None
    assert quant_kernel.routed_swiglu(h, route[: m // 2] if m > 1 else route[:0]) is None \
        or m == 0
