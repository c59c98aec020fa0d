"""gg.grouped_matmul's out_scale (the output quantised to FP8 e4m3 in 1x128
blocks in the epilogue) without a GPU: the source states it after out, the
launch contract has its M-major scales written by the kernel, the kernels
store per thread, and what cannot be built is refused by name.
(test/gpu/test_quantized_out.py checks the kernels on a GPU.)"""

import pytest

import ggc
from ggc import ir


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path / "cache"))


SWIGLU = "%s = gg.silu %acc0 : f32\n%r = arith.mulf %s, %acc1 : f32\ngg.yield %r : f32"


def source(**kw):
    spec = dict(layout="contiguous", num_groups=4, n=640, k=256, dtype="bf16",
                out_dtype="f8E4M3FN", out_scale=True, column_pairs=True, epilogue=SWIGLU)
    spec.update(kw)
    return ir.grouped_matmul("gated", **spec)


def test_the_source_states_the_scales_after_out():
    text = source()
    assert ("out(%out : memref<?x320xf8E4M3FN>) out_scale(%out_scale : memref<3x?xf32>)"
            in text)
    assert text.index("%out: memref") < text.index("%out_scale: memref<3x?xf32>")


@pytest.mark.parametrize("arch", ["sm_90a", "sm_89"])
def test_the_contract_has_m_major_scales_written_by_the_kernel(arch):
    out = ggc.compile_ir(source(), emit="ptx", arch=arch)
    assert out.plans[0]["store_pool"] == []
    scales = out.kernel_info[0]["args"][-1]
    assert scales["shape"] == [3, "align4(M)"] and scales["dtype"] == "f32"
    assert scales["written"] and out.kernel_info[0]["args"][-2]["written"]
    ptx = out.asm["ptx"]
    assert "cvt.rn.satfinite.e4m3x2.f32" in ptx and "shfl.sync.bfly" in ptx


def test_fp8_operands_keep_whole_blocks_a_warpgroup():
    # DeepGEMM's 192-column tile would split a block: 128 columns instead.
    out = ggc.compile_ir(source(dtype="f8E4M3FN", a_scale="block_mn", b_scale="block",
                                n=4608, k=2048, expected_m=1024, column_pairs=False,
                                epilogue=None), emit="gg-config", arch="sm_90a")
    assert out.plans[0]["config"]["block"] == [128, 128, 128]


def test_sm80_has_no_fp8_conversion():
    with pytest.raises(ggc.CompilationError, match="takes a target that converts to FP8"):
        ggc.compile_ir(source(), emit="ptx", arch="sm_80")


@pytest.mark.parametrize("combine", ["column_pairs", "column_halves"])
def test_fp8_swiglu_splits_each_block_between_two_warpgroups(combine):
    # A warpgroup's two f8 accumulators hold 64 outputs: two warpgroups
    # side by side hold a block, and exchange its rows' amax in shared
    # memory (a barrier among the consumers, a row_amax buffer).
    fp8 = dict(dtype="f8E4M3FN", a_scale="block_mn", b_scale="block", n=1024, k=1024,
               column_pairs=False)
    fp8[combine] = True
    out = ggc.compile_ir(source(**fp8), emit="ptx", arch="sm_90a")
    config = out.plans[0]["config"]
    assert config["block"] == [64, 256, 128] and config["split_n"] == 2
    assert "row_amax" in out.asm["ggk"] and "bar.sync" in out.asm["ptx"]
    # Each warpgroup's share of the gate rows, then of the up rows.
    if combine == "column_halves":
        assert "half_shares = 2" in out.asm["ggk"]


def test_fp8_swiglu_needs_whole_blocks_a_tile():
    with pytest.raises(ggc.CompilationError, match=r"has no tile for out_scale with f8 operands "
                                                   r"and column_pairs where N \(640\) is not a "
                                                   r"multiple of 256"):
        ggc.compile_ir(source(dtype="f8E4M3FN", a_scale="block_mn", b_scale="block",
                              k=1024), emit="gg-config", arch="sm_90a")


@pytest.mark.parametrize("kw, message", [
    (dict(layout="masked"), "out_scale takes layout 'contiguous', got 'masked'"),
    (dict(out_dtype="bf16"), "out_dtype must be 'f8E4M3FN', got 'bf16'"),
])
def test_the_builder_names_what_it_needs(kw, message):
    with pytest.raises(ValueError, match=message):
        source(**kw)


def make_gated():
    import ggc.language as gl

    @ggc.jit
    def gated(x: gl.Rows, w: gl.Weights, offsets: gl.Offsets, h: gl.Out, h_scale: gl.OutScale):
        gate, up = gl.column_pairs(gl.grouped_dot(x, w, offsets))
        gl.store(h, gl.silu(gate) * up, scale=h_scale)
    return gated


def test_the_dsl_states_out_scale_and_the_reference_quantises():
    import torch
    from ggc.moe.quant import quantize_rows
    torch.manual_seed(0)
    m, k, i = 10, 64, 192
    x = torch.randn(m + 2, k).bfloat16()
    w = torch.randn(3, 2 * i, k).bfloat16()
    offsets = torch.tensor([0, 3, 3, 10], dtype=torch.int32)
    h = torch.full((m + 2, i), 0x7F, dtype=torch.uint8).view(torch.float8_e4m3fn)
    h_scale = torch.full((2, (m + 2 + 3) // 4 * 4), float("nan"))
    gated = make_gated()
    assert "out_scale(%h_scale : memref<2x?xf32>)" in gated.trace(x, w, offsets, h, h_scale)
    gated(x, w, offsets, h, h_scale)
    for g, rows in ((0, slice(0, 3)), (2, slice(3, 10))):
        prod = x[rows].float() @ w[g].float().T
        want_q, want_s = quantize_rows(torch.nn.functional.silu(prod[:, 0::2]) * prod[:, 1::2])
        assert torch.equal(h[rows].view(torch.uint8), want_q.view(torch.uint8))
        assert torch.allclose(h_scale[:, rows], want_s.t())
    assert (h[10:].view(torch.uint8) == 0x7F).all() and h_scale[:, 10:].isnan().all()


def test_the_dsl_names_what_scale_needs():
    import ggc.language as gl

    @ggc.jit
    def wrong(x: gl.Rows, w: gl.Weights, offsets: gl.Offsets, h: gl.Out, s: gl.RowVector):
        gl.store(h, gl.grouped_dot(x, w, offsets), scale=s)
    import torch
    with pytest.raises(gl.CompileError, match="'scale' must be a parameter annotated OutScale"):
        wrong.trace(torch.zeros(4, 64).bfloat16(), torch.zeros(1, 128, 64).bfloat16(),
                    torch.tensor([0, 4], dtype=torch.int32),
                    torch.zeros(4, 128).to(torch.float8_e4m3fn), torch.zeros(4))


def test_the_torch_op_declares_the_scales_written():
    """Under torch.compile the kernel's custom op says it writes out and
    its scales (mutates_args; opcheck cannot compare f8 tensors): a
    compiled call that fills both as the eager one does."""
    import torch
    from ggc import torch_ops
    gated = make_gated()
    torch.manual_seed(0)
    x, w = torch.randn(12, 64).bfloat16(), torch.randn(3, 384, 64).bfloat16()
    offsets = torch.tensor([0, 3, 3, 10], dtype=torch.int32)

    def fresh():
        return (torch.zeros(12, 192).to(torch.float8_e4m3fn), torch.zeros(2, 12))
    schema = str(torch_ops.jit_op(gated).default._schema)
    assert "Tensor(a!) h" in schema and "Tensor(b!) h_scale" in schema, schema

    def step(h, h_scale):
        gated(x, w, offsets, h, h_scale)
        return h_scale.sum()
    eager = fresh()
    step(*eager)
    compiled = fresh()
    total = torch.compile(step, backend="aot_eager", fullgraph=True)(*compiled)
    assert torch.equal(compiled[0].view(torch.uint8), eager[0].view(torch.uint8))
    assert torch.equal(compiled[1], eager[1]) and total == eager[1].sum()


def test_the_moe_fp8_swiglu_kernel_quantises_what_the_two_steps_do():
    """ggc.moe.kernels.moe_up_swiglu_fp8 (the FP8 layer's up projection
    with SwiGLU and the quantisation in its epilogue) on the reference
    backend: its e4m3 rows and scales are the dequantised product's
    SwiGLU quantised by gg.quantize_rows' rule; rows past the groups and
    the scales' padding untouched; its source states the fused tile's
    operands."""
    import torch
    from ggc.moe import kernels
    from ggc.moe.quant import dequantize_weights, mn_major, quantize_rows, quantize_weights
    torch.manual_seed(0)
    m, h, i = 10, 256, 128
    x = torch.randn(m + 2, h).bfloat16()
    w13 = (torch.randn(3, 2 * i, h) / 16).bfloat16()
    xq, xs = quantize_rows(x)
    q13, s13 = quantize_weights(w13)
    offsets = torch.tensor([0, 3, 3, m], dtype=torch.int32)
    a = torch.full((m + 2, i), 0x7F, dtype=torch.uint8).view(torch.float8_e4m3fn)
    scales = torch.full((1, (m + 2 + 3) // 4 * 4), float("nan"))
    text = kernels.moe_up_swiglu_fp8.trace(xq, q13, offsets, mn_major(xs), s13, a, scales)
    assert "{column_halves" in text and "out_scale(%a_scale" in text
    kernels.moe_up_swiglu_fp8(xq, q13, offsets, mn_major(xs), s13, a, scales)
    xd = xq.float() * xs.repeat_interleave(128, dim=1)[:, :h]
    wd = dequantize_weights(q13, s13)
    for g, rows in ((0, slice(0, 3)), (2, slice(3, m))):
        prod = xd[rows] @ wd[g].float().T
        want_q, want_s = quantize_rows(torch.nn.functional.silu(prod[:, :i]) * prod[:, i:])
        assert torch.allclose(scales[:, rows], want_s.t(), rtol=1e-5)
        steps = (a[rows].float() / want_q.float()).sub(1).abs()
        assert (steps[want_q.float().abs() > 16] < 0.13).all()
    assert (a[m:].view(torch.uint8) == 0x7F).all() and scales[:, m:].isnan().all()
