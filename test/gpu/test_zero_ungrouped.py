"""gg's `zero_ungrouped` on the GPU: the rows of a contiguous `out` outside
every group (before offsets[0] and from offsets[G] on) come out as zeros,
written by the kernel itself, and the groups' rows as the product. Fresh
random inputs, NaN-poisoned outputs, fp64 references, ragged groups (empty,
one row, off every tile boundary); BF16 and FP8 (block scales, whose
pipelined kernels defer each tile's epilogue), wide tiles, clusters, B in
either layout, the sm_80 lowering, and the training ops that use it."""

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402
from ggc import ir, ops  # noqa: E402
from gpu_checks import offsets_of, rel_err  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

SIZES = [0, 1, 130, 0, 257, 63]
LEAD, TAIL = 37, 300  # rows before the first group and past the last


def rows_and_offsets(sizes, lead, tail):
    offsets = offsets_of(sizes) + lead
    return lead + sum(sizes) + tail, offsets


def check_rows(out, offsets, ref_of_group, bound):
    """Zeros (not NaN, not what was there) outside every group; each
    group's rows within `bound` of fp64."""
    bounds = offsets.tolist()
    assert torch.count_nonzero(out[:bounds[0]].float().nan_to_num(1.0)) == 0, "leading rows"
    assert torch.count_nonzero(out[bounds[-1]:].float().nan_to_num(1.0)) == 0, "trailing rows"
    for g, (s, e) in enumerate(zip(bounds, bounds[1:])):
        if e > s:
            assert not out[s:e].isnan().any(), f"group {g}: rows left unwritten"
            assert rel_err(out[s:e], ref_of_group(g, s, e)) < bound, f"group {g}"


CONFIGS = [None,
           "#gg.config<block = [128, 256, 64], stages = 3, cluster = [1, 1], sms = 132>",
           "#gg.config<block = [128, 128, 64], stages = 4, cluster = [2, 1], sms = 132>",
           "#gg.config<block = [64, 64, 64], stages = 4, cluster = [1, 1], sms = 132>"]


@pytest.mark.parametrize("config", CONFIGS)
@pytest.mark.parametrize("b_layout", ["nk", "kn"])
def test_bf16_rows_outside_every_group_are_zeros(config, b_layout, offsets_dtype="i32",
                                                 group_reads=None):
    n, k = 320, 200
    t, offsets = rows_and_offsets(SIZES, LEAD, TAIL)
    if offsets_dtype == "i64":
        offsets = offsets.long()
    kernel = ggc.Kernel(ir.grouped_matmul("zero_ungrouped", layout="contiguous",
                                          num_groups=len(SIZES), n=n, k=k, b_layout=b_layout,
                                          config=config, zero_ungrouped=True,
                                          offsets_dtype=offsets_dtype,
                                          group_reads=group_reads))
    assert "zero_ungrouped" in kernel.asm["gg"]
    a = torch.randn(t, k, device="cuda").bfloat16()
    b = torch.randn(len(SIZES), n, k, device="cuda").bfloat16()
    b_arg = b if b_layout == "nk" else b.transpose(1, 2).contiguous()
    out = torch.full((t, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel(a, b_arg, offsets, out)
    torch.cuda.synchronize()
    check_rows(out, offsets, lambda g, s, e: a[s:e].double() @ b[g].double().T, 8e-3)


def test_fp8_block_scales_rows_outside_every_group_are_zeros():
    """Block-scaled FP8: promotion inside the K loop, the epilogue of one
    tile deferred beside the next tile's first K block; the tiles with no K
    block take the idle path and store zeros."""
    n, k = 384, 320
    t, offsets = rows_and_offsets(SIZES, LEAD, TAIL)
    g, kb = len(SIZES), -(-k // 128)
    kernel = ggc.Kernel(ir.grouped_matmul("zero_ungrouped_fp8", layout="contiguous",
                                          num_groups=g, n=n, k=k, dtype="f8E4M3FN",
                                          a_scale="block_mn", b_scale="block",
                                          zero_ungrouped=True))
    a = (torch.randn(t, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    b = (torch.randn(g, n, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    a_scale = torch.rand(kb, (t + 3) // 4 * 4, device="cuda") + 0.5
    b_scale = torch.rand(g, -(-n // 128), kb, device="cuda") + 0.5
    out = torch.full((t, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel(a, b, offsets, a_scale, b_scale, out)
    torch.cuda.synchronize()
    a_deq = a.double() * a_scale[:, :t].T.double().repeat_interleave(128, 1)[:, :k]

    def ref(gi, s, e):
        b_deq = b[gi].double() * b_scale[gi].double().repeat_interleave(
            128, 0)[:n].repeat_interleave(128, 1)[:, :k]
        return a_deq[s:e] @ b_deq.T
    check_rows(out, offsets, ref, 8e-3)


@pytest.mark.parametrize("a_kind, b_kind", [("channel", "channel"), ("tensor", "tensor")])
def test_fp8_epilogue_scales_outside_every_group_do_not_reach_the_zeros(a_kind, b_kind):
    """Per-token and per-tensor scales multiply the sum in the epilogue: a
    caller's scales of rows outside every group need not hold a number
    (Inf here), and the zeros stay zeros."""
    n, k = 256, 192
    t, offsets = rows_and_offsets(SIZES, LEAD, TAIL)
    g = len(SIZES)
    kernel = ggc.Kernel(ir.grouped_matmul("zero_ungrouped_scaled", layout="contiguous",
                                          num_groups=g, n=n, k=k, dtype="f8E4M3FN",
                                          a_scale=a_kind, b_scale=b_kind,
                                          zero_ungrouped=True))
    a = (torch.randn(t, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    b = (torch.randn(g, n, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    a_scale = torch.rand(t if a_kind == "channel" else g, device="cuda") + 0.5
    b_scale = torch.rand((g, n) if b_kind == "channel" else (g,), device="cuda") + 0.5
    bounds = offsets.tolist()
    if a_kind == "channel":
        a_scale[:bounds[0]] = float("inf")
        a_scale[bounds[-1]:] = float("inf")
    out = torch.full((t, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel(a, b, offsets, a_scale, b_scale, out)
    torch.cuda.synchronize()

    def ref(gi, s, e):
        rows = a_scale[s:e] if a_kind == "channel" else a_scale[gi].expand(e - s)
        cols = b_scale[gi] if b_kind == "channel" else b_scale[gi].expand(n)
        return (a[s:e].double() @ b[gi].double().T) * rows.double()[:, None] * \
            cols.double()[None, :]
    check_rows(out, offsets, ref, 8e-3)


def test_i64_offsets():
    test_bf16_rows_outside_every_group_are_zeros(None, "nk", offsets_dtype="i64")


@pytest.mark.parametrize("offsets_dtype", ["i32", "i64"])
def test_offsets_read_from_a_group_table(offsets_dtype):
    """group_reads = shared: the walk over groups -1 to G reads the offsets
    from the table the CTA fills at entry (G + 1 of them)."""
    test_bf16_rows_outside_every_group_are_zeros(None, "nk", offsets_dtype=offsets_dtype,
                                                 group_reads="shared")


def test_sm80_group_table():
    ggc.set_target("sm_80")
    try:
        test_bf16_rows_outside_every_group_are_zeros(None, "nk", group_reads="shared")
    finally:
        ggc.set_target(None)


def test_sm80_lowering():
    ggc.set_target("sm_80")
    try:
        test_bf16_rows_outside_every_group_are_zeros(None, "nk")
    finally:
        ggc.set_target(None)


def test_every_row_in_a_group_and_no_group_at_all():
    """Groups that cover every row leave nothing to clear; all groups empty
    (offsets all equal) make every row a zero."""
    n, k = 128, 64
    for sizes, lead, tail in (([50, 78], 0, 0), ([0, 0, 0], 10, 90)):
        t, offsets = rows_and_offsets(sizes, lead, tail)
        a = torch.randn(t, k, device="cuda").bfloat16()
        b = torch.randn(len(sizes), n, k, device="cuda").bfloat16()
        out = torch.full((t, n), float("nan"), device="cuda", dtype=torch.bfloat16)
        ops.grouped_gemm(a, b, offsets=offsets, out=out, zero_ungrouped=True)
        torch.cuda.synchronize()
        check_rows(out, offsets, lambda g, s, e: a[s:e].double() @ b[g].double().T, 8e-3)


def test_input_gradients_of_rows_outside_every_group_are_zeros():
    """torch.ops.ggc.grouped_mm's backward and ggc.ops' (both zero_ungrouped
    now, with no zero fill of their own): x's rows past the last group get
    a zero gradient whatever the allocator hands out."""
    sizes, n, k, tail = [0, 37, 130, 1], 256, 384, 45
    t, offsets = rows_and_offsets(sizes, 0, tail)
    w = (torch.randn(len(sizes), n, k, device="cuda") / k ** 0.5).bfloat16().requires_grad_()
    for run in (lambda x: torch.ops.ggc.grouped_mm(x, w, offsets),
                lambda x: ops.grouped_gemm(x, w, offsets=offsets)):
        for _ in range(2):  # the second call takes the op's kept launch
            torch.empty(t * k * 4, device="cuda").fill_(float("nan"))  # poison the pool
            x = torch.randn(t, k, device="cuda").bfloat16().requires_grad_()
            dy = torch.randn(t, n, device="cuda").bfloat16()
            run(x).backward(dy)
            torch.cuda.synchronize()
            assert torch.count_nonzero(x.grad[-tail:].float().nan_to_num(1.0)) == 0
            start = 0
            for g, size in enumerate(sizes):
                if size:
                    ref = dy[start:start + size].double() @ w[g].detach().double()
                    assert rel_err(x.grad[start:start + size], ref) < 8e-3
                start += size
