"""Scattered rows of out (gg.grouped_matmul's `out_rows`, gl.store's
`rows`): row r of the product, weighted by its route in the epilogue, goes
to row out_rows[r] of out, as a MoE layer puts each route's row back in
token-slot order without a permuting pass. Per-thread stores on every
target (the sm_80 path run on the Hopper card too).

Fresh random inputs each check, an fp64 reference by relative norm error,
ragged groups (empty, 1 row, off every tile boundary), indices that are
negative or past out's rows (nothing written), NaN-poisoned outputs whose
rows no index names must stay poisoned, and a guard row past out that must
stay untouched.
"""

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402
import ggc.language as gl  # noqa: E402
from ggc import ir  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

from gpu_checks import offsets_of, rel_err  # noqa: E402

SIZES = [0, 1, 130, 0, 257, 63, 129]


def destinations(m, rows, dropped):
    """Distinct rows of out for the product's m rows (where out has fewer
    rows than the product, min(m, rows) of them named, the others -1), with
    `dropped` more entries negative or past out's end."""
    dest = torch.full((m,), -1, dtype=torch.int32, device="cuda")
    named = min(m, rows)
    dest[torch.randperm(m, device="cuda")[:named]] = \
        torch.randperm(rows, device="cuda")[:named].to(torch.int32)
    where = torch.randperm(m, device="cuda")[:dropped]
    dest[where[::2]] = -1
    dest[where[1::2]] = rows + 3
    return dest


def check_scattered(out, product, dest):
    """Each destination row holds its product row; rows no index names
    (and the guard row past out) still hold NaN."""
    rows = out.shape[0]
    named = torch.zeros(rows, dtype=torch.bool, device=out.device)
    inside = (dest >= 0) & (dest < rows)
    named[dest[inside].long()] = True
    got = out[dest[inside].long()]
    assert rel_err(got, product[inside]) < 1e-2
    assert not got.isnan().any(), "a named row left unwritten"
    assert out[~named].isnan().all(), "a row no index names was written"


@pytest.mark.parametrize("target", ["sm_90a", "sm_80"])
@pytest.mark.parametrize("extra_rows", [40, -300])  # out taller, or shorter, than the product
def test_weighted_rows_go_where_the_list_says(target, extra_rows):
    g, n, k = len(SIZES), 200, 136
    m = sum(SIZES)
    kernel = ggc.Kernel(ir.grouped_matmul(
        "scatter", layout="contiguous", num_groups=g, n=n, k=k, out_rows=True,
        rows=["f32"], epilogue="%r = arith.mulf %acc, %r0 : f32\ngg.yield %r : f32"),
        target=target)
    a = torch.randn(m, k, device="cuda").bfloat16()
    b = torch.randn(g, n, k, device="cuda").bfloat16()
    route = torch.rand(m, device="cuda") + 0.5
    rows = m + extra_rows
    dest = destinations(m, rows, dropped=12)
    guarded = torch.full((rows + 1, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    out = guarded[:rows]
    kernel(a, b, offsets_of(SIZES).cuda(), route, out, dest)
    torch.cuda.synchronize()
    product = torch.empty(m, n, dtype=torch.float64, device="cuda")
    start = 0
    for gi, size in enumerate(SIZES):
        product[start:start + size] = a[start:start + size].double() @ b[gi].double().T
        start += size
    check_scattered(out, product * route.double()[:, None], dest)
    assert guarded[rows].isnan().all(), "the row past out was written"


def test_the_dsl_scatters_a_down_projection():
    """gl.store(y, acc * route, rows=dest): FP8 rows with block scales, as
    the FP8 layer's down projection reads them."""

    @ggc.jit
    def down(x: gl.Rows, w: gl.Weights, offsets: gl.Offsets, sx: gl.Scale, sw: gl.Scale,
             route: gl.RowVector, dest: gl.RowIndices, y: gl.Out):
        acc = gl.grouped_dot(x, w, offsets, a_scale=sx, b_scale=sw)
        gl.store(y, acc * route, rows=dest)

    g, n, k = len(SIZES), 256, 384
    m = sum(SIZES)
    x = (torch.randn(m, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    w = (torch.randn(g, n, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    kb = k // 128
    sx = torch.rand(kb, (m + 3) // 4 * 4, device="cuda") + 0.5
    sw = torch.rand(g, n // 128, kb, device="cuda") + 0.5
    route = torch.rand(m, device="cuda") + 0.5
    rows = m + 17
    dest = destinations(m, rows, dropped=6)
    y = torch.full((rows, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    down(x, w, offsets_of(SIZES).cuda(), sx, sw, route, dest, y)
    torch.cuda.synchronize()
    xd = x.double() * sx[:, :m].T.double().repeat_interleave(128, 1)
    wd = w.double() * sw.double().repeat_interleave(128, 1).repeat_interleave(128, 2)
    product = torch.empty(m, n, dtype=torch.float64, device="cuda")
    start = 0
    for gi, size in enumerate(SIZES):
        product[start:start + size] = xd[start:start + size] @ wd[gi].T
        start += size
    check_scattered(y, product * route.double()[:, None], dest)


def test_the_tutorial_layer_on_the_gpu():
    """docs/python.md's permute-free MoE layer (gathered up projection with
    SwiGLU, scattered and weighted down projection, a sum over slots) on
    CUDA tensors, against the fp64 layer; a second run gives the same bits."""
    import os
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "python"))
    import test_tutorial_moe as tutorial
    moe = tutorial.tutorial_namespace()["moe"]
    tokens, experts, top_k, hidden, inter = 300, 8, 2, 256, 128
    x = torch.randn(tokens, hidden, device="cuda").bfloat16()
    w13 = (torch.randn(experts, 2 * inter, hidden, device="cuda") / 8).bfloat16()
    w2 = (torch.randn(experts, hidden, inter, device="cuda") / 8).bfloat16()
    logits = torch.randn(tokens, experts, device="cuda")
    out = moe(x, w13, w2, logits, top_k)
    ref = tutorial.dense_layer(x.cpu(), w13.cpu(), w2.cpu(), logits.cpu(), top_k)
    assert rel_err(out.cpu(), ref) < 1e-2
    assert torch.equal(out, moe(x, w13, w2, logits, top_k))
