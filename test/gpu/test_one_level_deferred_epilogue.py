"""One-level (bf16) kernels whose plan defers each tile's epilogue beside
the next tile's first wgmma (`epilogue_blocks = 1`) on the GPU, against
fp64 and against the same tiles with the epilogue at each tile's end: the
weight gradient (k_grouped, token-major and K-major operands) with empty,
one-token and ragged groups, and the contiguous forward with groups that
end inside a tile and rows that no group covers."""

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402
from ggc import ir  # noqa: E402
from gpu_checks import offsets_of, rel_err  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

CONFIG = "#gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], sms = 132>"


def plan(epilogue_blocks):
    return ("#gg.kernel_plan<promotion = serial, scales = none, registers = [40, 232], "
            f"staging = swizzled, epilogue_blocks = {epilogue_blocks}>")


@pytest.mark.parametrize("b_layout", ["kn", "nk"])
def test_weight_gradient_with_the_epilogue_deferred(b_layout):
    k_sizes = [304, 0, 1, 70, 1000, 129, 0]  # K-major rows of whole 16-byte units: 1,504
    g, m, n = len(k_sizes), 200, 392  # M and N end inside a tile
    dy = torch.randn(sum(k_sizes), m, device="cuda").bfloat16()
    x = torch.randn(sum(k_sizes), n, device="cuda").bfloat16()
    a, b = (dy, x) if b_layout == "kn" else (dy.T.contiguous(), x.T.contiguous())
    outs = []
    for blocks in (1, 0):
        kern = ggc.Kernel(ir.grouped_matmul(
            "k", layout="k_grouped", num_groups=g, n=n, k=None, m=m, b_layout=b_layout,
            dtype="bf16", out_dtype="bf16", config=CONFIG, kernel_plan=plan(blocks)))
        dw = torch.full((g, m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        kern(a, b, offsets_of(k_sizes), dw)
        torch.cuda.synchronize()
        outs.append(dw)
    deferred, at_end = outs
    start = 0
    for gi, size in enumerate(k_sizes):
        if size:
            ref = dy[start:start + size].double().T @ x[start:start + size].double()
            assert rel_err(deferred[gi], ref) < 8e-3, f"group {gi}"
        else:
            assert (deferred[gi] == 0).all(), f"group {gi} has no tokens: dW must be zero"
        start += size
    assert torch.equal(deferred, at_end)  # the same products, stored later


def test_forward_with_the_epilogue_deferred():
    sizes = [0, 1, 127, 129, 300, 0, 64]
    g, n, k = len(sizes), 392, 256
    rows = sum(sizes) + 5  # rows past the last group: never written
    a = torch.randn(rows, k, device="cuda").bfloat16()
    w = torch.randn(g, n, k, device="cuda").bfloat16()
    kern = ggc.Kernel(ir.grouped_matmul(
        "k", layout="contiguous", num_groups=g, n=n, k=k, dtype="bf16", out_dtype="bf16",
        config=CONFIG, kernel_plan=plan(1)))
    out = torch.full((rows, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    kern(a, w, offsets_of(sizes), out)
    torch.cuda.synchronize()
    start = 0
    for gi, size in enumerate(sizes):
        if size:
            ref = a[start:start + size].double() @ w[gi].double().T
            assert rel_err(out[start:start + size], ref) < 8e-3, f"group {gi}"
        start += size
    assert out[start:].isnan().all()  # no row outside a group touched
