"""torch.compile over ggc's custom ops on the GPU: compiled results equal
eager ones bitwise for every layout, dtype and scale kind (backends eager,
aot_eager and inductor, fullgraph=True), torch.library.opcheck in full (real
runs against fakes, eager against compiled, gradients included), and
grouped_gemm's autograd against fp64 references."""

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402
import ggc.language as gl  # noqa: E402
from ggc import flashinfer, ops  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

BF16, F8, I32, F32 = torch.bfloat16, torch.float8_e4m3fn, torch.int32, torch.float32
SIZES = [33, 0, 200, 1, 130]  # ragged, with an empty group


def offsets_of(sizes, dtype=I32):
    return torch.tensor([0] + list(torch.tensor(sizes).cumsum(0)), dtype=dtype, device="cuda")


def randn(*shape, dtype=BF16, scale=1.0):
    return (torch.randn(*shape, device="cuda") * scale).to(dtype)


def positive(*shape):
    return torch.rand(*shape, device="cuda") + 0.5


def ue8m0_words(*shape):
    """Packed UE8M0 exponents (scales 2^-7 .. 2^7), four per int32."""
    return torch.randint(120, 135, (*shape[:-1], shape[-1] * 4), dtype=torch.uint8,
                         device="cuda").view(torch.int32)


@ggc.jit
def swiglu_routed(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, route: gl.RowVector,
                  y: gl.Out, BLOCK_N: gl.constexpr = None):
    gl.store(y, gl.silu(gl.grouped_dot(x, w, offs)) * route)


# Every case: a function of tensors that returns its result, and its inputs.
# Rows no group writes start as zeros (out= given), so whole results compare.
def contiguous_case():
    m, g = sum(SIZES), len(SIZES)
    return (lambda a, b, o: ops.grouped_gemm(a, b, offsets=o),
            (randn(m, 256), randn(g, 192, 256, scale=0.1), offsets_of(SIZES)))


def contiguous_kn_f16_case():
    m, g = sum(SIZES), len(SIZES)
    return (lambda a, b, o: ops.grouped_gemm(a, b, offsets=o, b_layout="kn",
                                             out_dtype=torch.float16),
            (randn(m, 256, dtype=torch.float16), randn(g, 256, 192, dtype=torch.float16,
                                                       scale=0.1),
             offsets_of(SIZES, torch.int64)))


def torch_offsets_case():
    m, g = sum(SIZES), len(SIZES)
    return (lambda a, b, offs: ops.grouped_gemm(a, b, offs=offs),
            (randn(m, 256), randn(g, 192, 256, scale=0.1), offsets_of(SIZES)[1:]))


def masked_case():
    return (lambda a, b, mm: ops.grouped_gemm(
                a, b, masked_m=mm, out=torch.zeros(4, 128, 192, dtype=BF16, device="cuda")),
            (randn(4, 128, 256), randn(4, 192, 256, scale=0.1),
             torch.tensor([128, 0, 77, 1], dtype=I32, device="cuda")))


def deepgemm_masked_case():
    g, m, n, k = 4, 128, 256, 512
    storage = positive(g, k // 128, m)  # DeepGEMM's M-major, TMA-aligned A scales

    def fn(x, sx_storage, w, sw, mm):
        out = torch.zeros(g, m, n, dtype=BF16, device="cuda")
        ops.m_grouped_gemm_fp8_fp8_bf16_nt_masked((x, sx_storage.transpose(1, 2)), (w, sw),
                                                  out, mm, 64)
        return out
    return fn, (randn(g, m, k, dtype=F8), storage, randn(g, n, k, dtype=F8),
                positive(g, n // 128, k // 128),
                torch.tensor([128, 0, 77, 1], dtype=I32, device="cuda"))


def deepgemm_contiguous_case():
    g, n, k = 3, 256, 384
    tags = torch.cat([torch.full((s,), i, dtype=I32) for i, s in enumerate([128, 0, 256])])
    tags[100:128] = -1  # padding rows of group 0
    m = tags.numel()

    def fn(x, sx, w, sw, tags):
        out = torch.zeros(m, n, dtype=BF16, device="cuda")
        ops.m_grouped_gemm_fp8_fp8_bf16_nt_contiguous((x, sx), (w, sw), out, tags)
        return out
    return fn, (randn(m, k, dtype=F8), positive(m, k // 128), randn(g, n, k, dtype=F8),
                positive(g, n // 128, k // 128), tags.cuda())


def fp8_block_contiguous_case():
    m, g, n, k = sum(SIZES), len(SIZES), 256, 384
    return (lambda a, b, sa, sb, o: ops.grouped_gemm(a, b, offsets=o, a_scale=sa, b_scale=sb),
            (randn(m, k, dtype=F8), randn(g, n, k, dtype=F8), positive(m, k // 128),
             positive(g, n // 128, k // 128), offsets_of(SIZES)))


def mxfp8_case():
    sizes = [0, 1, 3, 4, 5, 127, 130]
    g, n, k = len(sizes), 256, 512
    m = sum(sizes)
    return (lambda a, b, sa, sb, o: flashinfer.moe_gemm_mxfp8_nt_groupwise(
                a, b, sa, sb, o, out=torch.zeros(m, n, dtype=BF16, device="cuda")),
            (randn(m, k, dtype=F8), randn(g, n, k, dtype=F8),
             ue8m0_words((m + 3 * g) // 4 * 4, k // 512), ue8m0_words(g, n, k // 512),
             offsets_of(sizes)))


def k_grouped_case():
    return (lambda dy, x, o: ops.grouped_gemm(dy, x, k_offsets=o),
            (randn(sum(SIZES), 64), randn(sum(SIZES), 96), offsets_of(SIZES)))


def k_grouped_fp8_case():
    k = sum(SIZES) + 4  # a multiple of 16 for TMA; the last 4 tokens in no group
    kb = -(-k // 128)
    return (lambda dy_t, x_t, sa, sb, o: ops.grouped_gemm(dy_t, x_t, k_offsets=o, k_major=True,
                                                          a_scale=sa, b_scale=sb),
            (randn(64, k, dtype=F8), randn(136, k, dtype=F8), positive(64, kb),
             positive(136, kb), offsets_of(SIZES)))


def jit_case():
    m, g = sum(SIZES), len(SIZES)

    def fn(x, w, o, route):
        y = torch.zeros(m, 192, dtype=BF16, device="cuda")
        swiglu_routed(x, w, o, route, y, BLOCK_N=64)
        return y
    return fn, (randn(m, 256), randn(g, 192, 256, scale=0.1), offsets_of(SIZES),
                torch.rand(m, device="cuda"))


CASES = {f.__name__[:-5]: f for f in (
    contiguous_case, contiguous_kn_f16_case, torch_offsets_case, masked_case,
    deepgemm_masked_case, deepgemm_contiguous_case, fp8_block_contiguous_case, mxfp8_case,
    k_grouped_case, k_grouped_fp8_case, jit_case)}


@pytest.mark.parametrize("backend", ["eager", "aot_eager", "inductor"])
@pytest.mark.parametrize("case", sorted(CASES))
def test_compiled_equals_eager_bitwise(case, backend):
    torch._dynamo.reset()
    fn, inputs = CASES[case]()
    eager = fn(*inputs)
    compiled = torch.compile(fn, backend=backend, fullgraph=True)(*inputs)
    torch.cuda.synchronize()
    assert compiled.shape == eager.shape and compiled.dtype == eager.dtype
    assert torch.equal(compiled, eager)


def test_torch_offsets_equal_ggc_offsets():
    fn, (a, b, offs) = CASES["torch_offsets"]()
    assert torch.equal(fn(a, b, offs), ops.grouped_gemm(a, b, offsets=offsets_of(SIZES)))


OPCHECKS = {  # op: inputs; groups cover every row, so whole outputs compare
    "contiguous": ("grouped_gemm", lambda: (
        (randn(sum(SIZES), 256).requires_grad_(), randn(5, 192, 256, scale=0.1).requires_grad_()),
        dict(offsets=offsets_of(SIZES)))),
    "contiguous_offs_kn": ("grouped_gemm", lambda: (
        (randn(sum(SIZES), 256).requires_grad_(), randn(5, 256, 192, scale=0.1).requires_grad_()),
        dict(offs=offsets_of(SIZES)[1:], b_layout="kn"))),
    "masked_full": ("grouped_gemm", lambda: (
        (randn(4, 64, 256), randn(4, 192, 256, scale=0.1)),
        dict(masked_m=torch.full((4,), 64, dtype=I32, device="cuda")))),
    "fp8_block": ("grouped_gemm", lambda: (
        fp8_block_contiguous_case()[1][:2],
        dict(zip(("a_scale", "b_scale", "offsets"), fp8_block_contiguous_case()[1][2:])))),
    "k_grouped": ("grouped_gemm", lambda: (
        (randn(sum(SIZES), 64), randn(sum(SIZES), 96)), dict(k_offsets=offsets_of(SIZES)))),
    "out": ("grouped_gemm_out", lambda: (
        (randn(sum(SIZES), 256), randn(5, 192, 256, scale=0.1),
         torch.zeros(sum(SIZES), 192, dtype=BF16, device="cuda")),
        dict(offsets=offsets_of(SIZES)))),
    "grouped_mm": ("grouped_mm", lambda: (
        (randn(sum(SIZES), 256).requires_grad_(), randn(5, 192, 256, scale=0.1).requires_grad_(),
         offsets_of(SIZES)), {})),
}


@pytest.mark.parametrize("case", sorted(OPCHECKS))
def test_opcheck(case):
    name, make = OPCHECKS[case]
    args, kwargs = make()
    utils = ["test_schema", "test_autograd_registration", "test_faketensor",
             "test_aot_dispatch_dynamic"]
    if case == "fp8_block":  # test_schema compares inputs with allclose, which f8 lacks
        utils.remove("test_schema")
    result = torch.library.opcheck(getattr(torch.ops.ggc, name).default, args, kwargs,
                                   test_utils=utils)
    assert set(result.values()) == {"SUCCESS"}, result


def test_opcheck_jit_kernel():
    from ggc import torch_ops
    fn, (x, w, o, route) = jit_case()
    op = torch_ops.jit_op(swiglu_routed)
    y = torch.zeros(x.shape[0], 192, dtype=BF16, device="cuda")
    result = torch.library.opcheck(op.default, (x, w, o, route, y, "64", None))
    assert set(result.values()) == {"SUCCESS"}, result


def reference_grads(a, b, offsets, grad, b_layout):
    """fp64 gradients of out[rows of g] = a[rows] @ B_g^T (B_g = b[g], or
    b[g]^T for "kn"); rows outside every group get none."""
    ad, bd, gd = a.detach().double(), b.detach().double(), grad.double()
    grad_a, grad_b = torch.zeros_like(ad), torch.zeros_like(bd)
    bounds = offsets.tolist()
    for gi in range(len(bounds) - 1):
        rows = slice(bounds[gi], bounds[gi + 1])
        weight = bd[gi] if b_layout == "nk" else bd[gi].T  # [N, K]
        grad_a[rows] = gd[rows] @ weight
        grad_w = gd[rows].T @ ad[rows]  # [N, K]
        grad_b[gi] = grad_w if b_layout == "nk" else grad_w.T
    return grad_a, grad_b


def rel_err(out, ref):
    out = out.double()
    assert torch.isfinite(out).all()
    return ((out - ref).norm() / ref.norm().clamp_min(1e-30)).item()


@pytest.mark.parametrize("b_layout", ["nk", "kn"])
@pytest.mark.parametrize("convention", ["offsets", "offs"])
def test_autograd_against_fp64(b_layout, convention):
    """Gradients of ggc.ops.grouped_gemm, eager and compiled. With torch's
    offs, the last rows belong to no group: their gradient is zero."""
    sizes, tail = SIZES, 7 if convention == "offs" else 0
    m, g, n, k = sum(sizes) + tail, len(sizes), 192, 256
    a = randn(m, k).requires_grad_()
    b = randn(g, *((n, k) if b_layout == "nk" else (k, n)), scale=0.1).requires_grad_()
    offsets = offsets_of(sizes)
    groups = dict(offsets=offsets) if convention == "offsets" else dict(offs=offsets[1:])
    grad = randn(m, n)

    def forward(a, b):
        return ops.grouped_gemm(a, b, b_layout=b_layout, **groups)

    grad_a, grad_b = torch.autograd.grad(forward(a, b), (a, b), grad)
    ref_a, ref_b = reference_grads(a, b, offsets, grad, b_layout)
    used = [0, 2, 3, 4]
    assert rel_err(grad_a, ref_a) < 1e-2 and rel_err(grad_b[used], ref_b[used]) < 1e-2
    assert (grad_b[1] == 0).all()  # no tokens: zero gradient
    if tail:
        assert (grad_a[-tail:] == 0).all()
    torch._dynamo.reset()
    out = torch.compile(forward, backend="aot_eager", fullgraph=True)(a, b)
    compiled = torch.autograd.grad(out, (a, b), grad)  # AOT's backward graph
    assert torch.equal(compiled[0], grad_a) and torch.equal(compiled[1], grad_b)


def test_backward_of_other_layouts_says_so():
    a = randn(4, 64, 256).requires_grad_()
    out = ops.grouped_gemm(a, randn(4, 192, 256),
                           masked_m=torch.full((4,), 64, dtype=I32, device="cuda"))
    with pytest.raises(RuntimeError, match="ggc.grouped_gemm: no backward for this layout"):
        out.float().sum().backward()
