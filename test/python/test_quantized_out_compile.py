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


def test_fp8_swiglu_has_no_tile_yet():
    with pytest.raises(ggc.CompilationError, match="has no tile for out_scale with f8 operands "
                                               "and column_halves"):
        ggc.compile_ir(source(dtype="f8E4M3FN", a_scale="block_mn", b_scale="block",
                              n=1024, k=1024, column_pairs=False, column_halves=True),
                       emit="gg-config", arch="sm_90a")


@pytest.mark.parametrize("kw, message", [
    (dict(layout="masked"), "out_scale takes layout 'contiguous', got 'masked'"),
    (dict(out_dtype="bf16"), "out_dtype must be 'f8E4M3FN', got 'bf16'"),
])
def test_the_builder_names_what_it_needs(kw, message):
    with pytest.raises(ValueError, match=message):
        source(**kw)
