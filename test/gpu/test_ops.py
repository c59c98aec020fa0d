"""The Python front end on the GPU: jit kernels, ready-made ops, DeepGEMM
drop-ins and the torch custom ops forward and backward, against fp64."""

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402
import ggc.language as gl  # noqa: E402
from ggc import ir, ops, torch_ops  # noqa: E402,F401

from gpu_checks import group_slices, offsets_of, rel_err  # noqa: E402,F401

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@ggc.jit
def swiglu_routed(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, route: gl.RowVector,
                  y: gl.Out, BLOCK_N: gl.constexpr = None):
    acc = gl.grouped_dot(x, w, offs)
    gl.store(y, gl.silu(acc) * route)


def test_jit_kernel_with_routing_epilogue():
    sizes = [0, 5, 300, 64]
    g, n, k = len(sizes), 192, 256
    x = torch.randn(sum(sizes), k, device="cuda").bfloat16()
    w = torch.randn(g, n, k, device="cuda").bfloat16() / 8
    route = torch.rand(sum(sizes), device="cuda")
    y = torch.full((sum(sizes), n), float("nan"), device="cuda", dtype=torch.bfloat16)
    swiglu_routed(x, w, offsets_of(sizes), route, y)
    torch.cuda.synchronize()
    start = 0
    for gi, size in enumerate(sizes):
        if size:
            acc = x[start:start + size].double() @ w[gi].double().T
            ref = torch.nn.functional.silu(acc) * route[start:start + size, None].double()
            assert rel_err(y[start:start + size], ref) < 1e-2
        start += size


def test_autotune_on_the_gpu_picks_and_runs_a_config(tmp_path, monkeypatch):
    # A private cache: a winner saved by an earlier run would skip the search.
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path))
    tuned = ggc.autotune(configs=[ggc.Config(BLOCK_N=64), ggc.Config(BLOCK_N=128)],
                         key=["x"])(swiglu_routed)
    sizes = [100, 28]
    x = torch.randn(128, 256, device="cuda").bfloat16()
    w = torch.randn(2, 192, 256, device="cuda").bfloat16() / 8
    route = torch.rand(128, device="cuda")
    y = torch.empty(128, 192, device="cuda", dtype=torch.bfloat16)
    tuned(x, w, offsets_of(sizes), route, y)
    torch.cuda.synchronize()
    (timings,) = tuned.timings.values()
    assert len(timings) == 2 and all(t > 0 for t in timings.values())
    ref = torch.nn.functional.silu(x[:100].double() @ w[0].double().T) * route[:100, None]
    assert rel_err(y[:100], ref) < 1e-2


@pytest.mark.parametrize("b_layout", ["nk", "kn"])
def test_grouped_gemm_contiguous_and_masked(b_layout):
    sizes = [7, 0, 129]
    g, n, k = 3, 128, 192
    a = torch.randn(sum(sizes), k, device="cuda").half()
    b = torch.randn(g, n, k, device="cuda").half() / 8
    b_arg = b if b_layout == "nk" else b.transpose(1, 2).contiguous()
    out = ops.grouped_gemm(a, b_arg, offsets=offsets_of(sizes), b_layout=b_layout,
                           out_dtype=torch.float16)
    torch.cuda.synchronize()
    start = 0
    for gi, size in enumerate(sizes):
        if size:
            ref = a[start:start + size].double() @ b[gi].double().T
            assert rel_err(out[start:start + size], ref) < 1e-2
        start += size
    am = torch.randn(g, 64, k, device="cuda").half()
    masked = ops.grouped_gemm(am, b_arg, masked_m=torch.tensor([64, 1, 0], device="cuda",
                                                               dtype=torch.int32),
                              b_layout=b_layout)
    torch.cuda.synchronize()
    assert rel_err(masked[0], am[0].double() @ b[0].double().T) < 1e-2
    assert rel_err(masked[1, :1], am[1, :1].double() @ b[1].double().T) < 1e-2


@pytest.mark.parametrize("n, expected_m", [(1088, None), (1088, 1024), (16384, 256)])
def test_contiguous_bf16_tile_rules_on_ragged_groups(n, expected_m):
    """gg-select-config's 16-bit contiguous tiles (test_kernel_plans
    checks the choices): N = 1,088 (a multiple of 64, not of 128) takes
    128-wide tiles whose last one is ragged; N = 16,384 at 256 rows a group
    takes 128x256. Every valid row right, every row outside the groups
    untouched."""
    sizes = [129, 0, 1, 300, 64, 77]
    g, k, spare = len(sizes), 1280, 5  # K > 1,024: not the short-K rule's 128x256
    a = torch.randn(sum(sizes) + spare, k, device="cuda").bfloat16()
    b = torch.randn(g, n, k, device="cuda").bfloat16() / 8
    out = torch.full((a.shape[0], n), float("nan"), device="cuda", dtype=torch.bfloat16)
    ops.grouped_gemm(a, b, offsets=offsets_of(sizes), out=out, expected_m=expected_m)
    torch.cuda.synchronize()
    for gi, rows in group_slices(sizes):
        assert rel_err(out[rows], a[rows].double() @ b[gi].double().T) < 1e-2
    assert torch.isnan(out[sum(sizes):]).all(), "a row outside every group was written"


def test_cached_launches_write_each_new_output():
    # A cached launch keeps each tensor-map slot's last few addresses (the
    # store pool's maps follow the output): rotating through more outputs
    # than it keeps, then back, each call writes its own output, whole, and
    # no other one.
    sizes = [5, 0, 130, 64]
    g, n, k = len(sizes), 256, 128
    a = torch.randn(sum(sizes), k, device="cuda").to(torch.bfloat16)
    b = (torch.randn(g, n, k, device="cuda") / 8).to(torch.bfloat16)
    offsets = offsets_of(sizes)
    refs, start = [], 0
    for gi, size in enumerate(sizes):
        refs.append(a[start:start + size].double() @ b[gi].double().T)
        start += size
    outs = [torch.full((sum(sizes), n), float("nan"), device="cuda",
                       dtype=torch.bfloat16) for _ in range(6)]
    for i in [0, 1, 0, 1, 2, 3, 4, 5, 0, 5, 1]:
        for out in outs:
            out.fill_(float("nan"))
        ops.grouped_gemm(a, b, offsets=offsets, out=outs[i])
        torch.cuda.synchronize()
        start = 0
        for gi, size in enumerate(sizes):
            if size:
                assert rel_err(outs[i][start:start + size], refs[gi]) < 1e-2
            start += size
        assert all(torch.isnan(out.float()).all() for j, out in enumerate(outs) if j != i)


def deepgemm_inputs(g, m, n, k, masked):
    """FP8 inputs as DeepGEMM's tests build them: per-token 1x128 scales of A
    in the M-major TMA-aligned view, 128x128 scales of B."""
    kb, nb = -(-k // 128), -(-n // 128)
    lead = (g,) if masked else ()
    x = (torch.randn(*lead, m, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    storage = torch.rand(*lead, kb, (m + 3) // 4 * 4, device="cuda") + 0.5
    sx = storage.transpose(-1, -2)[..., :m, :]  # [.., M, K/128], M-major
    w = (torch.randn(g, n, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    sw = torch.rand(g, nb, kb, device="cuda") + 0.5
    x_deq = x.double() * sx.double().repeat_interleave(128, dim=-1)[..., :k]
    w_deq = w.double() * sw.double().repeat_interleave(128, 1)[:, :n].repeat_interleave(
        128, 2)[:, :, :k]
    return x, sx, w, sw, x_deq, w_deq


def test_deepgemm_masked_drop_in():
    g, m, n, k = 4, 256, 512, 640
    x, sx, w, sw, x_deq, w_deq = deepgemm_inputs(g, m, n, k, masked=True)
    out = torch.full((g, m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    masked_m = torch.tensor([256, 3, 0, 130], dtype=torch.int32, device="cuda")
    ops.m_grouped_gemm_fp8_fp8_bf16_nt_masked((x, sx), (w, sw), out, masked_m, 97)
    torch.cuda.synchronize()
    for gi, count in enumerate(masked_m.tolist()):
        if count:
            assert rel_err(out[gi, :count], x_deq[gi, :count] @ w_deq[gi].T) < 2e-3
        assert torch.isnan(out[gi, count:]).all()


def test_deepgemm_contiguous_drop_in():
    g, n, k = 3, 256, 384
    sizes = [128, 0, 256]
    tags = torch.cat([torch.full((s,), i, dtype=torch.int32) for i, s in enumerate(sizes)])
    tags[100:128] = -1  # padding rows of group 0
    m = tags.numel()
    x, sx, w, sw, x_deq, w_deq = deepgemm_inputs(g, m, n, k, masked=False)
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    tags = tags.cuda()
    ops.m_grouped_gemm_fp8_fp8_bf16_nt_contiguous((x, sx), (w, sw), out, tags)
    torch.cuda.synchronize()
    assert torch.isnan(out[tags < 0]).all()
    for gi in (0, 2):
        sel = tags == gi
        assert rel_err(out[sel], x_deq[sel] @ w_deq[gi].T) < 2e-3


# Each op's forward of x [T, K] by weights [G, N, K] (y = x @ w[g]^T), or
# [G, K, N] with b_layout "kn" (y = x @ w[g]).
FORWARDS = {
    "grouped_mm": (lambda x, w, offsets: torch.ops.ggc.grouped_mm(x, w, offsets), "nk"),
    "ggc.ops nk": (lambda x, w, offsets: ops.grouped_gemm(x, w, offsets=offsets), "nk"),
    "ggc.ops kn": (lambda x, w, offsets: ops.grouped_gemm(x, w, offsets=offsets,
                                                          b_layout="kn"), "kn"),
}


@pytest.mark.parametrize("forward", FORWARDS)
@pytest.mark.parametrize("tail", [0, 9])
def test_torch_custom_op_forward_and_backward(tail, forward):
    """Twice with fresh inputs of one signature: the second call runs the
    kept launches (the C++ kernels' autograd node and gradient ops, where
    ggc._signature is built: grouped_mm's declared for the op, grouped_gemm's
    learnt for the call), and both match fp64. `tail` rows of x lie past
    the last group: their gradient is zero."""
    call, b_layout = FORWARDS[forward]
    sizes = [33, 0, 200, 1]
    g, n, k = len(sizes), 128, 256
    offsets = offsets_of(sizes)
    for round in range(2):
        hits = ggc.signature.op_kernel_hits()
        x = torch.randn(sum(sizes) + tail, k, device="cuda").bfloat16().requires_grad_()
        w_nk = torch.randn(g, n, k, device="cuda") / 8
        w = (w_nk if b_layout == "nk" else w_nk.transpose(1, 2).contiguous()).bfloat16()
        w.requires_grad_()
        y = call(x, w, offsets)
        grad_y = torch.randn_like(y)
        y.backward(grad_y)
        torch.cuda.synchronize()
        if round == 1 and ggc.signature.op_kernel_installer() is not None:
            assert ggc.signature.op_kernel_hits() == hits + 3  # forward, both gradients
            assert "KeptLaunchWithGradients" in y.grad_fn.name()
        xd, gd = x.detach().double(), grad_y.double()
        wd = w.detach().double() if b_layout == "nk" else w.detach().double().transpose(1, 2)
        w_grad = w.grad if b_layout == "nk" else w.grad.transpose(1, 2)
        start = 0
        ref_dx = torch.zeros_like(xd)
        ref_dw = torch.zeros_like(wd)
        for gi, size in enumerate(sizes):
            rows = slice(start, start + size)
            if size:
                assert rel_err(y[rows], xd[rows] @ wd[gi].T) < 1e-2
            ref_dx[rows] = gd[rows] @ wd[gi]
            ref_dw[gi] = gd[rows].T @ xd[rows]
            start += size
        assert rel_err(x.grad, ref_dx) < 1e-2
        assert (x.grad[sum(sizes):] == 0).all()
        assert rel_err(w_grad[[0, 2, 3]], ref_dw[[0, 2, 3]]) < 1e-2
        assert (w_grad[1] == 0).all()  # no tokens: zero gradient


def test_grouped_gemm_k_offsets_weight_gradient():
    k_sizes = [0, 70, 129]
    g, m, n = 3, 64, 96
    dy = torch.randn(sum(k_sizes), m, device="cuda").bfloat16()
    x = torch.randn(sum(k_sizes), n, device="cuda").bfloat16()
    dw = ops.grouped_gemm(dy, x, k_offsets=offsets_of(k_sizes))
    torch.cuda.synchronize()
    assert dw.shape == (g, m, n) and dw.dtype == torch.float32
    assert (dw[0] == 0).all()
    assert rel_err(dw[1], dy[:70].double().T @ x[:70].double()) < 1e-2
    assert rel_err(dw[2], dy[70:].double().T @ x[70:].double()) < 1e-2


@pytest.mark.parametrize("b_blocks", ["1x128", "128x128"])
def test_grouped_gemm_fp8_weight_gradient_with_block_scales(b_blocks):
    """K-major f8 operands with 1x128 scales over the concatenated tokens
    (A's given as a transposed view of [ceil(K/128), M], as a quantiser
    writing per-token-block scales M-major would); groups start mid-block."""
    k_sizes = [0, 70, 129, 1]
    g, m, n, k = len(k_sizes), 64, 136, 208  # K a multiple of 16 for TMA
    dy_t = (torch.randn(m, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    x_t = (torch.randn(n, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    kb = -(-k // 128)
    sa = torch.rand(kb, m, device="cuda") + 0.5  # stored M-major
    sb = torch.rand(n if b_blocks == "1x128" else -(-n // 128), kb, device="cuda") + 0.5
    dw = ops.grouped_gemm(dy_t, x_t, k_offsets=offsets_of(k_sizes), k_major=True,
                          a_scale=sa.T, b_scale=sb)
    torch.cuda.synchronize()
    a_deq = dy_t.double() * sa.T.double().repeat_interleave(128, dim=1)[:, :k]
    sb_rows = sb if b_blocks == "1x128" else sb.repeat_interleave(128, dim=0)[:n]
    b_deq = x_t.double() * sb_rows.double().repeat_interleave(128, dim=1)[:, :k]
    assert dw.shape == (g, m, n) and (dw[0] == 0).all()
    start = 0
    for gi, size in enumerate(k_sizes):
        if size:
            ref = a_deq[:, start:start + size] @ b_deq[:, start:start + size].T
            assert rel_err(dw[gi], ref) < 2e-3, f"group {gi}"
        start += size
    with pytest.raises(ValueError, match="needs K-major operands"):
        ops.grouped_gemm(dy_t.T, x_t.T, k_offsets=offsets_of(k_sizes))


def test_dlpack_arguments_run():
    class Wrapped:  # an array type known only through DLPack
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, **kwargs):
            return self.t.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    sizes = [3, 61]
    a = torch.randn(64, 128, device="cuda").bfloat16()
    b = torch.randn(2, 64, 128, device="cuda").bfloat16()
    out = torch.full((64, 64), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel = ggc.Kernel(ir.grouped_matmul("k", layout="contiguous", num_groups=2,
                                              n=64, k=128))
    kernel(Wrapped(a), Wrapped(b), Wrapped(offsets_of(sizes)), Wrapped(out))
    torch.cuda.synchronize()
    assert rel_err(out[:3], a[:3].double() @ b[0].double().T) < 1e-2
