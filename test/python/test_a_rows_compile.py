"""gg.grouped_matmul's a_rows (A's rows gathered through a list of row
indices) through the compiler and the launch checks, without a GPU: the
producer plan, the copies sm_90a makes beside B's TMA loads, the launch
contract's sizes (the list's M and A's own T), the reference backend, and
the errors for what it does not take. (test/gpu/test_a_rows.py checks the
numbers on a GPU.)"""

import re

import pytest

import ggc
from ggc import ir, spec
import ggc.language as gl

torch = pytest.importorskip("torch")


def source(**kw):
    return ir.grouped_matmul("gathered", **dict(dict(layout="contiguous", num_groups=8,
                                                     n=1024, k=512, a_rows=True), **kw))


def test_the_source_states_the_list():
    text = source()
    assert "a(%a : memref<?x512xbf16>) a_rows(%a_rows : memref<?xi32>) b(" in text
    assert text.index("%a_rows: memref<?xi32>") < text.index("%b: memref")


def test_sm90a_copies_a_on_every_producer_thread_and_b_by_tma():
    out = ggc.compile_ir(source(), emit="ptx", arch="sm_90a")
    assert "producer = all_threads" in out.asm["gg-config"]
    ggk = out.asm["ggk"]
    assert re.search(r"ggk\.load_tile_rows .* gather\(", ggk)
    ptx = out.asm["ptx"]
    # A by 16-byte cp.async pieces, each thread arriving on the stage's
    # barrier when they land; B by TMA; the consumers fence each stage for
    # wgmma's async proxy.
    assert "cp.async.cg.shared.global" in ptx or "cp.async.ca.shared.global" in ptx
    assert "cp.async.mbarrier.arrive.noinc" in ptx
    assert "cp.async.bulk.tensor" in ptx
    assert "fence.proxy.async" in ptx
    assert "wgmma.mma_async" in ptx
    # 128 copying threads and the leader's arming: 129 arrivals a stage.
    assert re.search(r"%c129_i32 = arith.constant 129 : i32\s+nvvm.mbarrier.init %\w+, "
                     r"%c129_i32", out.asm["nvvm"])


def test_the_launch_contract_names_both_sizes():
    out = ggc.compile_ir(source(), emit="ptx", arch="sm_90a")
    info = out.kernel_info[0]
    shapes = [arg["shape"] for arg in info["args"]]
    assert shapes[0] == ["T", 512] and shapes[1] == ["M"] and shapes[-1] == ["M", 1024]
    sizes = [(p["operand"], p["dim"]) for p in info["params"] if p["kind"] == "size"]
    assert sizes == [("a_rows", 0), ("a", 0)]  # M first: the grid follows it
    kinds = {(p["operand"], p["kind"]) for p in info["params"]}
    assert {("a", "pointer"), ("a_rows", "pointer"), ("b", "tensor_map")} <= kinds
    assert ("a", "tensor_map") not in kinds


@pytest.mark.parametrize("arch", ["sm_80", "sm_89"])
def test_targets_without_tma_copy_the_list_rows_like_any_tile(arch):
    out = ggc.compile_ir(source(), emit="ptx", arch=arch)
    assert "all_threads" not in out.asm["gg-config"]
    assert "cp.async.bulk.tensor" not in out.asm["ptx"]
    assert re.search(r"ggk\.load_tile_rows .* gather\(", out.asm["ggk"])
    assert "cp.async.mbarrier.arrive.noinc" in out.asm["ptx"]


@pytest.mark.parametrize("kw, message", [
    (dict(layout="masked", m=64), "a_rows takes layout 'contiguous'"),
])
def test_ir_builder_refuses_other_layouts(kw, message):
    with pytest.raises(ValueError, match=message):
        source(**kw)


def test_a_cluster_is_refused_by_name():
    config = "#gg.config<block = [128, 128, 64], stages = 4, cluster = [2, 1], sms = 132>"
    with pytest.raises(ggc.CompilationError, match="a_rows with a cluster"):
        ggc.compile_ir(source(config=config), emit="ptx", arch="sm_90a")


def kernel_for_checks():
    return ggc.Kernel(source(), target="sm_90a")


def fake(shape, dtype):
    return torch.empty(shape, dtype=dtype, device="meta")


def test_the_launch_check_takes_any_t_and_follows_m_from_the_list():
    kernel = kernel_for_checks()
    bf16, i32 = torch.bfloat16, torch.int32
    for tokens in (1, 37, 5000):
        described = [ggc.runtime.describe_fake(i, kernel._roles[i], t) for i, t in
                     enumerate((fake((tokens, 512), bf16), fake((300,), i32),
                                fake((8, 1024, 512), bf16), fake((9,), i32),
                                fake((300, 1024), bf16)))]
        _, size, _ = kernel.check_described(described)
        assert size == 300
    described = [ggc.runtime.describe_fake(i, kernel._roles[i], t) for i, t in
                 enumerate((fake((40, 512), bf16), fake((300,), i32),
                            fake((8, 1024, 512), bf16), fake((9,), i32),
                            fake((299, 1024), bf16)))]
    with pytest.raises(ValueError, match=r"dimension 0 must be M = 300"):
        kernel.check_described(described)


@ggc.jit
def up_gathered(x: gl.Rows, source: gl.RowIndices, w: gl.Weights, m_indptr: gl.Offsets,
                h: gl.Out):
    gl.store(h, gl.grouped_dot(x, w, m_indptr, a_rows=source))


@ggc.jit
def masked_gathered(x: gl.MaskedRows, source: gl.RowIndices, w: gl.Weights,
                    counts: gl.MaskedCounts, h: gl.Out):
    gl.store(h, gl.grouped_dot(x, w, counts, a_rows=source))


@ggc.jit
def rows_not_indices(x: gl.Rows, source: gl.RowVector, w: gl.Weights, m_indptr: gl.Offsets,
                     h: gl.Out):
    gl.store(h, gl.grouped_dot(x, w, m_indptr, a_rows=source))


ARGS = (spec([None, 256], "bf16"), spec([None], "i32"), spec([4, 128, 256], "bf16"),
        spec([5], "i32"), spec([None, 128], "bf16"))


def test_jit_traces_the_list():
    text = up_gathered.trace(*ARGS)
    assert "a_rows(%source : memref<?xi32>)" in text


@pytest.mark.parametrize("fn, message", [
    (masked_gathered, "a_rows gathers rows of Rows"),
    (rows_not_indices, "'a_rows' must be a parameter annotated RowIndices"),
])
def test_jit_refuses_what_a_rows_does_not_take(fn, message):
    args = ARGS if fn is not masked_gathered else (
        spec([4, 64, 256], "bf16"), spec([None], "i32"), spec([4, 128, 256], "bf16"),
        spec([4], "i32"), spec([4, 64, 128], "bf16"))
    if fn is rows_not_indices:
        args = (ARGS[0], spec([None], "f32")) + ARGS[2:]
    with pytest.raises(gl.CompileError, match=message):
        fn.trace(*args)


def test_reference_backend_gathers_and_zero_fills():
    """On CPU tensors the kernel runs on ggc.reference: the same rule for
    indices off A (zeros) as the GPU kernels."""
    torch.manual_seed(0)
    x = torch.randn(10, 256).bfloat16()
    w = torch.randn(4, 128, 256).bfloat16()
    offsets = torch.tensor([0, 3, 3, 9, 12], dtype=torch.int32)
    source = torch.tensor([4, 4, 0, 9, -1, 2, 10, 7, 1, 3, 3, 8], dtype=torch.int32)
    h = torch.full((12, 128), float("nan")).bfloat16()
    up_gathered(x, source, w, offsets, h)
    inside = (source >= 0) & (source < 10)
    rows = torch.zeros(12, 256, dtype=torch.float64)
    rows[inside] = x.double()[source[inside].long()]
    for g in range(4):
        lo, hi = offsets[g].item(), offsets[g + 1].item()
        ref = rows[lo:hi] @ w[g].double().T
        assert torch.allclose(h[lo:hi].double(), ref, rtol=2e-2, atol=2e-2)
    assert (h[4] == 0).all() and (h[6] == 0).all()


@ggc.jit
def up_gathered_fp8(x: gl.Rows, source: gl.RowIndices, w: gl.Weights, m_indptr: gl.Offsets,
                    x_scale: gl.Scale, w_scale: gl.Scale, h: gl.Out):
    gl.store(h, gl.grouped_dot(x, w, m_indptr, a_rows=source, a_scale=x_scale,
                               b_scale=w_scale, a_scale_kind="block_mn", b_scale_kind="block"))


FP8_ARGS = (spec([None, 256], "f8e4m3fn"), spec([None], "i32"),
            spec([4, 256, 256], "f8e4m3fn"), spec([5], "i32"), spec([2, None], "f32"),
            spec([4, 2, 2], "f32"), spec([None, 256], "bf16"))


@pytest.mark.parametrize("arch", ["sm_90a", "sm_89"])
def test_fp8_rows_by_the_list_take_their_scales_into_slots(arch):
    """FP8 with 1x128 scales of the product's rows: on sm_90a every producer
    thread copies A's rows, so the consumers copy the scales into their
    slots (no stage load could carry A's scale box)."""
    text = up_gathered_fp8.trace(*FP8_ARGS)
    assert "a_rows(%source : memref<?xi32>)" in text and "a_scale(%x_scale" in text
    out = ggc.compile_ir(text, emit="ptx", arch=arch)
    config = out.asm["gg-config"]
    assert "scales = slots" in config
    assert ("producer = all_threads" in config) == (arch == "sm_90a")
    assert ("wgmma.mma_async" in out.asm["ptx"]) == (arch == "sm_90a")
    assert "e4m3" in out.asm["ptx"]


def test_reference_backend_scales_the_product_rows():
    """On CPU: row p of the product is x[source[p]] times row p's scales
    (not the token's), zeros where the index lies off x."""
    from ggc.moe.quant import dequantize_weights, mn_major, quantize_rows, quantize_weights
    torch.manual_seed(1)
    tokens, k, n = 9, 256, 256
    x, x_scale = quantize_rows(torch.randn(tokens, k), "x")
    w, w_scale = quantize_weights(torch.randn(4, n, k), "w")
    offsets = torch.tensor([0, 2, 2, 7, 11], dtype=torch.int32)
    source = torch.tensor([4, 4, 0, 8, -1, 2, 9, 7, 1, 3, 3], dtype=torch.int32)
    rows_scale = mn_major(x_scale, source.clamp(0, tokens - 1).long())
    rows_scale[:, 1] *= 2  # product row 1's scales, not token 4's
    h = torch.full((11, n), float("nan")).bfloat16()
    up_gathered_fp8(x, source, w, offsets, rows_scale, w_scale, h)
    inside = (source >= 0) & (source < tokens)
    rows = torch.zeros(11, k, dtype=torch.float64)
    rows[inside] = x.double()[source[inside].long()]
    rows *= rows_scale[:, :11].t().double().repeat_interleave(128, dim=1)
    full = dequantize_weights(w, w_scale).double()
    for g in range(4):
        lo, hi = offsets[g].item(), offsets[g + 1].item()
        ref = rows[lo:hi] @ full[g].T
        assert torch.allclose(h[lo:hi].double(), ref, rtol=2e-2, atol=2e-2)
    assert (h[4] == 0).all() and (h[6] == 0).all()
