"""out += the product (`accumulate=True`) on the GPU, against fp64: weight
gradients accumulated over micro-batches (k_grouped, f32 and bf16, f8 with
1x128 scales) and row layouts, with empty and one-token groups; what no
group covers is left as it was, and the sum has the same bits every run."""

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402
from ggc import ir, ops  # noqa: E402
from gpu_checks import offsets_of, rel_err  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.mark.parametrize("out_dtype", [torch.float32, torch.bfloat16])
@pytest.mark.parametrize("b_layout", ["kn", "nk"])
def test_weight_gradient_accumulates(out_dtype, b_layout):
    k_sizes = [0, 1, 70, 129, 304]  # 504 tokens: K-major rows of 16-byte multiples
    g, m, n = len(k_sizes), 136, 200
    dy = torch.randn(sum(k_sizes), m, device="cuda").bfloat16()
    x = torch.randn(sum(k_sizes), n, device="cuda").bfloat16()
    a, b = (dy, x) if b_layout == "kn" else (dy.T.contiguous(), x.T.contiguous())
    before = torch.randn(g, m, n, device="cuda").to(out_dtype) * 4
    dw = before.clone()
    got = ops.grouped_gemm(a, b, k_offsets=offsets_of(k_sizes), k_major=b_layout == "nk",
                           out=dw, accumulate=True)
    torch.cuda.synchronize()
    assert got is dw
    assert torch.equal(dw[0], before[0])  # no tokens: nothing added
    start = 0
    tol = 1e-5 if out_dtype == torch.float32 else 8e-3
    for gi, size in enumerate(k_sizes):
        if size:
            ref = before[gi].double() + dy[start:start + size].double().T @ \
                x[start:start + size].double()
            assert rel_err(dw[gi], ref) < tol, f"group {gi}"
        start += size
    again = before.clone()
    ops.grouped_gemm(a, b, k_offsets=offsets_of(k_sizes), k_major=b_layout == "nk",
                     out=again, accumulate=True)
    assert torch.equal(again, dw)  # the same bits on every run


def test_micro_batches_sum_to_the_whole_batch():
    """Two micro-batches accumulated into one f32 gradient equal the
    gradient of both at once, within f32 rounding."""
    sizes = [[40, 0, 90], [3, 64, 0]]
    m, n = 128, 64
    grad = torch.zeros(3, m, n, device="cuda")
    whole = torch.zeros(3, m, n, device="cuda", dtype=torch.float64)
    for batch in sizes:
        dy = torch.randn(sum(batch), m, device="cuda").bfloat16()
        x = torch.randn(sum(batch), n, device="cuda").bfloat16()
        ops.grouped_gemm(dy, x, k_offsets=offsets_of(batch), out=grad, accumulate=True)
        start = 0
        for gi, size in enumerate(batch):
            whole[gi] += dy[start:start + size].double().T @ x[start:start + size].double()
            start += size
    torch.cuda.synchronize()
    assert rel_err(grad, whole) < 1e-5


def fp8_operands(m, n, k):
    """dY^T [M, K] and X^T [N, K] in e4m3 (K-major over the tokens), and the
    count of K's 128-token scale blocks."""
    return ((torch.randn(m, k, device="cuda") * 2).to(torch.float8_e4m3fn),
            (torch.randn(n, k, device="cuda") * 2).to(torch.float8_e4m3fn), -(-k // 128))


def dequantised(x, scale, k):
    """x [rows, K] times its 1x128 scales ([rows, K blocks]) in fp64."""
    return x.double() * scale.double().repeat_interleave(128, dim=1)[:, :k]


@pytest.mark.parametrize("k_sizes, m, n, expected_m", [
    ([0, 70, 129, 1], 64, 136, None),
    # expected_m of 2,048 tokens a group: gg-select-config's long-group tile
    # (128x144, four stages, B's column scales read at the wgmma's issue);
    # M = 200 and N = 392 end inside a tile
    ([2100, 0, 1, 299], 200, 392, 2048),
])
def test_fp8_weight_gradient_with_block_scales_accumulates(k_sizes, m, n, expected_m):
    # K-major rows of whole 16-byte units (TMA's strides): tokens past the
    # last group pad them
    g, k = len(k_sizes), -(-sum(k_sizes) // 16) * 16
    dy_t, x_t, kb = fp8_operands(m, n, k)
    sa = torch.rand(kb, m, device="cuda") + 0.5
    sb = torch.rand(n, kb, device="cuda") + 0.5
    before = torch.randn(g, m, n, device="cuda") * 16
    dw = before.clone()
    ops.grouped_gemm(dy_t, x_t, k_offsets=offsets_of(k_sizes), k_major=True,
                     a_scale=sa.T, b_scale=sb, out=dw, accumulate=True, expected_m=expected_m)
    torch.cuda.synchronize()
    a_deq, b_deq = dequantised(dy_t, sa.T, k), dequantised(x_t, sb, k)
    start = 0
    for gi, size in enumerate(k_sizes):
        if size:
            ref = before[gi].double() + a_deq[:, start:start + size] @ \
                b_deq[:, start:start + size].T
            assert rel_err(dw[gi], ref) < 2e-3, f"group {gi}"
        else:
            assert torch.equal(dw[gi], before[gi]), f"group {gi} has no tokens"
        start += size


def check_wide_weight_gradient(out_dtype, block_n, stages, accumulate=None, **spec):
    """The FP8 weight gradient on 128 x block_n tiles of `stages` stages
    (`spec`: ir.grouped_matmul's kernel_plan or store_slice), f32 added to
    `out` (or, with accumulate=False, stored) or bf16 into a NaN-filled
    one, against fp64: M = 200 and N = 392
    end inside a tile (boxes of 64 and 8 rows; N's last chunk clipped),
    groups of 0, 1, 2,100 and 299 tokens (2,400 in all: K-major rows of
    whole 16-byte units)."""
    k_sizes = [2100, 0, 1, 299]
    g, m, n, k = len(k_sizes), 200, 392, sum(k_sizes)
    if accumulate is None:
        accumulate = out_dtype == "f32"
    kern = ggc.Kernel(ir.grouped_matmul(
        "k", layout="k_grouped", num_groups=g, n=n, k=None, m=m, b_layout="nk",
        dtype="f8E4M3FN", out_dtype=out_dtype, a_scale="block_mn", b_scale="block1x128_mn",
        accumulate=accumulate,
        config=f"#gg.config<block = [128, {block_n}, 128], stages = {stages}, "
               "cluster = [1, 1], sms = 132>", **spec))
    dy_t, x_t, kb = fp8_operands(m, n, k)
    sa = torch.rand(kb, m, device="cuda") + 0.5
    sb = torch.rand(kb, n, device="cuda") + 0.5
    before = torch.randn(g, m, n, device="cuda") * 16
    dw = before.clone() if accumulate else torch.full(
        (g, m, n), float("nan"), device="cuda", dtype=getattr(torch, {
            "f32": "float32", "bf16": "bfloat16"}[out_dtype]))
    kern(dy_t, x_t, offsets_of(k_sizes), sa, sb, dw)
    torch.cuda.synchronize()
    a_deq, b_deq = dequantised(dy_t, sa.T, k), dequantised(x_t, sb.T, k)
    start = 0
    for gi, size in enumerate(k_sizes):
        ref = a_deq[:, start:start + size] @ b_deq[:, start:start + size].T
        if accumulate:
            assert rel_err(dw[gi], ref + before[gi].double()) < 2e-3, f"group {gi}"
        elif size:
            assert rel_err(dw[gi], ref) < 4e-3, f"group {gi}"
        else:
            assert (dw[gi] == 0).all(), f"group {gi} has no tokens: dW must be zero"
        start += size


@pytest.mark.parametrize("reads", ["at_promotion", "at_issue"])
@pytest.mark.parametrize("epilogue_blocks", [0, 1])
@pytest.mark.parametrize("staging", ["dense", "swizzled_64"])
@pytest.mark.parametrize("out_dtype", ["f32", "bf16"])
def test_fp8_weight_gradient_on_wide_tiles(out_dtype, staging, epilogue_blocks, reads):
    """The long-group weight gradient's 128x144 tiles with four stages
    (f32, added by TMA's reduce-add) and 128x160 (bf16), the staged tile
    dense or in 64-byte swizzled chunks, each tile's epilogue at its end or
    beside the next tile's first wgmma, and B's column scales read at the
    promotion or at the wgmma's issue (the stage given back before the
    promotion; the consumers then keep 240 registers, as gg-plan-kernel
    gives them)."""
    block_n, stages = (144, 4) if out_dtype == "f32" else (160, 4)
    registers = "[24, 240]" if reads == "at_issue" else "[40, 232]"
    check_wide_weight_gradient(
        out_dtype, block_n, stages,
        kernel_plan="#gg.kernel_plan<promotion = serial, scales = stages, registers = "
                    f"{registers}, staging = {staging}, epilogue_blocks = {epilogue_blocks}, "
                    f"column_scale_reads = {reads}>")


@pytest.mark.parametrize("k_sizes", [[256, 0, 128, 640, 384], [512, 1, 255, 257]])
def test_fp8_bf16_weight_gradient_of_short_groups_takes_the_wide_tile(k_sizes):
    """ggc.training's FP8 weight gradient through ggc.ops: a bf16 gradient
    written, 256 or more tokens an expert on average, gets the wide serial
    tile (128x160, four stages; gg-select-config's step 3d) from the
    tokens' mean; M = 200 and N = 392 end inside a tile. Groups of whole
    128-token blocks (as quantized_tokens pads them) and groups that
    straddle blocks (K entries of the neighbours cleared) alike; every
    group written into a NaN-filled gradient, the empty one as zeros."""
    g, m, n = len(k_sizes), 200, 392
    k = -(-sum(k_sizes) // 16) * 16
    dy_t, x_t, kb = fp8_operands(m, n, k)
    sa = torch.rand(kb, m, device="cuda") + 0.5
    sb = torch.rand(kb, n, device="cuda") + 0.5
    dw = torch.full((g, m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    hint = ops.expected_group_tokens(sum(k_sizes), g)
    assert hint >= 256
    ops.grouped_gemm(dy_t, x_t, k_offsets=offsets_of(k_sizes), k_major=True, a_scale=sa.T,
                     b_scale=sb.T, out=dw, expected_m=hint)
    torch.cuda.synchronize()
    a_deq, b_deq = dequantised(dy_t, sa.T, k), dequantised(x_t, sb.T, k)
    start = 0
    for gi, size in enumerate(k_sizes):
        if size:
            ref = a_deq[:, start:start + size] @ b_deq[:, start:start + size].T
            assert rel_err(dw[gi], ref) < 4e-3, f"group {gi}"
        else:
            assert (dw[gi] == 0).all(), f"group {gi} has no tokens: dW must be zero"
        start += size


def test_fp8_weight_gradient_stored_in_f32_on_the_long_group_tile():
    """An f32 weight gradient stored rather than added, on the long-group
    tile with the plan gg-plan-kernel gives it (B's column scales read at
    the wgmma's issue, the staged tile in 64-byte swizzled chunks): every
    group written, the empty one as zeros."""
    check_wide_weight_gradient("f32", 144, 4, accumulate=False)


@pytest.mark.parametrize("block_n, stages", [(160, 5), (192, 4)])
def test_fp8_weight_gradient_staged_a_slice_at_a_time(block_n, stages):
    """store_slice = 32: the f32 tile staged and added to `out` 32 columns
    at a time through a ring of two buffers, which leaves 128x160 five
    stages and 128x192 four (N = 392: the last tile's third slice clipped
    at N, the rest past it)."""
    check_wide_weight_gradient("f32", block_n, stages, store_slice=32)


@pytest.mark.parametrize("out_dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("layout", ["contiguous", "masked"])
def test_row_layouts_accumulate_only_their_rows(layout, out_dtype):
    """bf16: per-thread read-add-write; f32: the TMA store pool's boxes
    reduce-added, a group's last tile in boxes of its valid rows only."""
    sizes = [0, 1, 127, 200]
    tol = 8e-3 if out_dtype == torch.bfloat16 else 1e-5
    g, n, k = len(sizes), 192, 256
    w = torch.randn(g, n, k, device="cuda").bfloat16() / 8
    if layout == "contiguous":
        rows = sum(sizes) + 37  # rows past the last group: no group's
        x = torch.randn(rows, k, device="cuda").bfloat16()
        before = torch.randn(rows, n, device="cuda").to(out_dtype)
        y = before.clone()
        ops.grouped_gemm(x, w, offsets=offsets_of(sizes), out=y, accumulate=True)
        torch.cuda.synchronize()
        start = 0
        for gi, size in enumerate(sizes):
            rows_g = slice(start, start + size)
            if size:
                ref = before[rows_g].double() + x[rows_g].double() @ w[gi].double().T
                assert rel_err(y[rows_g], ref) < tol, f"group {gi}"
            start += size
        assert torch.equal(y[start:], before[start:])
        return
    m_max = 256
    x = torch.randn(g, m_max, k, device="cuda").bfloat16()
    before = torch.randn(g, m_max, n, device="cuda").to(out_dtype)
    y = before.clone()
    masked = torch.tensor(sizes, dtype=torch.int32, device="cuda")
    ops.grouped_gemm(x, w, masked_m=masked, out=y, accumulate=True)
    torch.cuda.synchronize()
    for gi, size in enumerate(sizes):
        if size:
            ref = before[gi, :size].double() + x[gi, :size].double() @ w[gi].double().T
            assert rel_err(y[gi, :size], ref) < tol, f"group {gi}"
        assert torch.equal(y[gi, size:], before[gi, size:])
