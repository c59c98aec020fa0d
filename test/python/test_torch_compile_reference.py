"""The custom ops' real paths on the CPU, each launch run by ggc's public
reference backend (ggc.reference): full torch.library.opcheck (real runs
against the fakes, eager against compiled, gradients), grouped_gemm's
backward against fp64, and compiled results against eager ones.

Everything up to the launch is ggc's own: the ops' bodies, ggc.ops' host
path, the jit kernels' tracing and checking, the autograd formulas. The
stand-in these tests ran before the public backend existed
(`grouped_gemm_reference`) is kept as a second, independent reading of
the unscaled kernels; the GPU suite (test/gpu/test_torch_compile_gpu.py)
runs the real kernels.
"""

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402
import ggc.language as gl  # noqa: E402
from ggc import ops, torch_ops  # noqa: E402

BF16, I32 = torch.bfloat16, torch.int32
SIZES = [33, 0, 200, 1, 130]


@pytest.fixture(autouse=True)
def reference_kernels(tmp_path, monkeypatch):
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path / "cache"))
    torch._dynamo.reset()


def mm(x, w):
    return x.float() @ w.float()


def groups_of(offsets):
    bounds = offsets.tolist()
    return [slice(bounds[g], bounds[g + 1]) for g in range(len(bounds) - 1)]


def grouped_gemm_reference(name, a, b, groups, out, accumulate=False):
    """What ggc.ops' unscaled kernels compute (grouped_gemm_<layout>_<b>);
    `accumulate` (the ACCUMULATE constexpr) adds to out in f32."""
    layout, b_layout = name[len("grouped_gemm_"):].rsplit("_", 1)
    weight = (lambda g: b[g].T) if b_layout == "nk" else (lambda g: b[g])

    def store(where, product):
        out[where] = (product + out[where].float() if accumulate else product).to(out.dtype)
    if layout == "contiguous":
        for g, rows in enumerate(groups_of(groups)):
            store(rows, mm(a[rows], weight(g)))
    elif layout == "masked":
        for g, count in enumerate(groups.tolist()):
            store((g, slice(0, count)), mm(a[g, :count], weight(g)))
    elif layout == "k_grouped":  # token-major ("kn") or K-major ("nk") operands
        for g, tokens in enumerate(groups_of(groups)):
            store(g, mm(a[tokens].T, b[tokens]) if b_layout == "kn"
                  else mm(a[:, tokens], b[:, tokens].T))
    else:
        raise NotImplementedError(name)


@ggc.jit
def routed(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, route: gl.RowVector, y: gl.Out):
    gl.store(y, gl.grouped_dot(x, w, offs) * route)


def offsets_of(sizes):
    return torch.tensor([0] + list(torch.tensor(sizes).cumsum(0)), dtype=I32)


def randn(*shape, dtype=BF16, scale=1.0):
    return (torch.randn(*shape) * scale).to(dtype)


OPCHECKS = {  # op, args, kwargs; groups cover every row, so whole outputs compare
    "contiguous_grad": ("grouped_gemm", lambda: (
        (randn(364, 256).requires_grad_(), randn(5, 192, 256, scale=0.1).requires_grad_()),
        dict(offsets=offsets_of(SIZES)))),
    "offs_kn_grad": ("grouped_gemm", lambda: (
        (randn(364, 256).requires_grad_(), randn(5, 256, 192, scale=0.1).requires_grad_()),
        dict(offs=offsets_of(SIZES)[1:], b_layout="kn"))),
    "masked": ("grouped_gemm", lambda: (
        (randn(4, 64, 256), randn(4, 192, 256)), dict(masked_m=torch.full((4,), 64, dtype=I32)))),
    "k_grouped": ("grouped_gemm", lambda: (
        (randn(364, 64), randn(364, 96)), dict(k_offsets=offsets_of(SIZES)))),
    "out": ("grouped_gemm_out", lambda: (
        (randn(364, 256), randn(5, 192, 256), torch.zeros(364, 192, dtype=BF16)),
        dict(offsets=offsets_of(SIZES)))),
    "grouped_mm": ("grouped_mm", lambda: (
        (randn(364, 256).requires_grad_(), randn(5, 192, 256).requires_grad_(),
         offsets_of(SIZES)), {})),
}


@pytest.mark.parametrize("case", sorted(OPCHECKS))
def test_full_opcheck(case):
    name, make = OPCHECKS[case]
    args, kwargs = make()
    result = torch.library.opcheck(getattr(torch.ops.ggc, name).default, args, kwargs)
    assert set(result.values()) == {"SUCCESS"}, result


def test_full_opcheck_of_a_jit_kernel():
    op = torch_ops.jit_op(routed)
    args = (randn(364, 256), randn(5, 192, 256), offsets_of(SIZES), torch.rand(364),
            torch.zeros(364, 192, dtype=BF16), None)
    result = torch.library.opcheck(op.default, args)
    assert set(result.values()) == {"SUCCESS"}, result


@pytest.mark.parametrize("b_layout", ["nk", "kn"])
@pytest.mark.parametrize("convention", ["offsets", "offs"])
def test_backward_against_fp64(b_layout, convention):
    """With torch's offs the last rows belong to no group: zero gradient."""
    tail = 7 if convention == "offs" else 0
    m, g, n, k = sum(SIZES) + tail, len(SIZES), 192, 256
    a = randn(m, k).requires_grad_()
    b = randn(g, *((n, k) if b_layout == "nk" else (k, n)), scale=0.1).requires_grad_()
    offsets = offsets_of(SIZES)
    groups = dict(offsets=offsets) if convention == "offsets" else dict(offs=offsets[1:])
    grad = randn(m, n)

    def forward(a, b):
        return ops.grouped_gemm(a, b, b_layout=b_layout, **groups)

    grad_a, grad_b = torch.autograd.grad(forward(a, b), (a, b), grad)
    ad, bd, gd = a.detach().double(), b.detach().double(), grad.double()
    for gi, rows in enumerate(groups_of(offsets)):
        weight = bd[gi] if b_layout == "nk" else bd[gi].T  # [N, K]
        want_b = gd[rows].T @ ad[rows]
        torch.testing.assert_close(grad_a[rows].double(), gd[rows] @ weight, rtol=2e-2,
                                   atol=2e-2)
        torch.testing.assert_close(grad_b[gi].double(),
                                   want_b if b_layout == "nk" else want_b.T,
                                   rtol=2e-2, atol=5e-2)
    assert (grad_a[sum(SIZES):] == 0).all()
    out = torch.compile(forward, backend="aot_eager", fullgraph=True)(a, b)
    compiled = torch.autograd.grad(out, (a, b), grad)
    assert torch.equal(compiled[0], grad_a) and torch.equal(compiled[1], grad_b)


@pytest.mark.parametrize("backend", ["eager", "aot_eager"])
def test_compiled_equals_eager(backend):
    def step(x, w, offsets, route):
        y = torch.zeros(x.shape[0], w.shape[1], dtype=BF16)
        routed(x, w, offsets, route, y)
        return ops.grouped_gemm(y, w.transpose(1, 2).contiguous(), offsets=offsets)

    inputs = (randn(364, 256), randn(5, 192, 256, scale=0.1), offsets_of(SIZES),
              torch.rand(364))
    compiled = torch.compile(step, backend=backend, fullgraph=True)(*inputs)
    assert torch.equal(compiled, step(*inputs))


def test_accumulate_adds_to_out_eagerly_and_compiled():
    """ops.grouped_gemm(accumulate=True) through torch.ops.ggc.grouped_gemm_out
    under torch.compile(fullgraph=True): out += the product, as eagerly."""
    from ggc import ops
    dy, x = randn(364, 64), randn(364, 48)
    offsets = offsets_of(SIZES)
    start = torch.randn(len(SIZES), 64, 48)

    def step(out):
        ops.grouped_gemm(dy, x, k_offsets=offsets, out=out, accumulate=True)
        return out
    eager = step(start.clone())
    compiled = torch.compile(step, fullgraph=True)(start.clone())
    want = start.clone()
    for g, tokens in enumerate(groups_of(offsets)):
        want[g] += mm(dy[tokens].T, x[tokens])
    assert torch.allclose(eager, want, rtol=1e-5, atol=1e-4)
    assert torch.equal(compiled, eager)


@pytest.mark.parametrize("layout, b_layout", [("contiguous", "nk"), ("contiguous", "kn"),
                                              ("masked", "nk"), ("k_grouped", "kn")])
def test_public_reference_reads_the_kernels_as_the_stand_in_did(layout, b_layout):
    """ggc.reference (from the traced kernel) and grouped_gemm_reference
    (written per kernel name): the same f32 products, the same bits; rows
    outside every group untouched by both."""
    offsets = offsets_of(SIZES)
    if layout == "contiguous":
        a, groups, out = randn(370, 64), dict(offsets=offsets), torch.full((370, 96), 7.0)
        b = randn(5, 96, 64) if b_layout == "nk" else randn(5, 64, 96)
        args = (a, b, offsets)
    elif layout == "masked":
        counts = torch.tensor([5, 0, 64, 17], dtype=I32)
        a, b, groups = randn(4, 64, 64), randn(4, 96, 64), dict(masked_m=counts)
        out, args = torch.full((4, 64, 96), 7.0), (a, b, counts)
    else:
        a, b, groups = randn(364, 48), randn(364, 40), dict(k_offsets=offsets)
        out, args = torch.full((5, 48, 40), 7.0), (a, b, offsets)
    got = ops.grouped_gemm(a, b, out=out.to(BF16), b_layout=b_layout, **groups)
    want = out.to(BF16)
    grouped_gemm_reference(f"grouped_gemm_{layout}_{b_layout}", *args, want)
    assert torch.equal(got, want)
