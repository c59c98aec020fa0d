"""gg.grouped_matmul's accumulate (out += the product) through the
compiler, without a GPU: the DSL states it, and each target's PTX either
has its threads read `out` where they write it, add in f32 and
rounds once, or reduce-adds the TMA store pool's boxes into an f32 `out`.
(test/gpu/test_accumulate.py checks the numbers on a GPU.)"""

import re

import pytest

import ggc
import ggc.language as gl
from ggc import ir

torch = pytest.importorskip("torch")


def wgrad_source(out_dtype="f32", **spec):
    return ir.grouped_matmul("wgrad", layout="k_grouped", num_groups=4, n=256, m=128, k=None,
                             dtype="bf16", out_dtype=out_dtype, b_layout="kn",
                             accumulate=True, **spec)


def test_the_source_states_accumulate():
    assert "{accumulate}" in wgrad_source()


def plain_source(out_dtype="f32"):
    return wgrad_source(out_dtype).replace("{accumulate}", "")


def global_accesses(ptx, op):
    return len(re.findall(rf"\b{op}\.global\.", ptx))


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80", "sm_89"])
@pytest.mark.parametrize("out_dtype", ["f32", "bf16"])
def test_each_output_is_added_once(arch, out_dtype):
    """Against the same kernel without accumulate: an f32 output keeps its
    store decision, and where that is the TMA store pool its boxes become
    reduce-adds (no load of `out`); otherwise (a bf16 output, targets
    without TMA) the threads store their pairs, one more global load per
    store (the pair each adds to)."""
    out = ggc.compile_ir(wgrad_source(out_dtype), emit="ptx", arch=arch)
    plain = ggc.compile_ir(plain_source(out_dtype), emit="ptx", arch=arch)
    attrs, plain_attrs = out.plans[0]["attributes"], plain.plans[0]["attributes"]
    ggk = out.asm["ggk"]
    assert "accumulate" in ggk and ": vector<2xf32>" in ggk
    ptx, before = out.asm["ptx"], plain.asm["ptx"]
    if out_dtype == "f32":
        assert attrs["store_pool"] == plain_attrs["store_pool"]
    else:
        assert attrs["store_pool"] == "array<i64>"
    if attrs["store_pool"] != "array<i64>":
        assert "cp.reduce.async.bulk.tensor" in ptx and ".add.tile" in ptx
        assert "cp.reduce.async.bulk.tensor" not in before
        assert global_accesses(ptx, "ld") == global_accesses(before, "ld")
        return
    assert "store_columns" not in attrs["kernel_plan"]  # the default, 2
    stores = global_accesses(ptx, "st")
    assert stores > 0
    if plain_attrs["kernel_plan"] == attrs["kernel_plan"]:
        assert stores == global_accesses(before, "st")
    assert global_accesses(ptx, "ld") - global_accesses(before, "ld") == stores
    if out_dtype == "bf16":  # rounded once, after the f32 sum
        assert "cvt.rn.bf16x2.f32" in ptx or "cvt.rn.bf16.f32" in ptx


def test_an_f32_wgrad_on_sm_90a_reduce_adds_through_the_pool():
    """The FP8 weight gradient's usual case: f32 out, 128-row tiles with
    room for the staged tile: the pool, with reduce-adds."""
    text = ir.grouped_matmul("wgrad", layout="k_grouped", num_groups=8, n=2048, m=4096,
                             k=None, dtype="f8E4M3FN", out_dtype="f32", b_layout="nk",
                             a_scale="block_mn", b_scale="block1x128_mn", accumulate=True)
    out = ggc.compile_ir(text, emit="ptx", arch="sm_90a")
    assert out.plans[0]["attributes"]["store_pool"].startswith("array<i64: 128, 64")
    assert "cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile" in out.asm["ptx"]


def test_without_accumulate_nothing_of_out_is_read():
    ggk = ggc.compile_ir(plain_source(), emit="ggk", arch="sm_90a").asm["ggk"]
    assert "accumulate" not in ggk and ": vector<2xf32>" in ggk


def test_an_explicit_store_pool_is_refused_for_a_16_bit_out():
    text = wgrad_source("bf16").replace("{accumulate}",
                                  "{accumulate, store_pool = array<i64: 128, 64, 32, 16, 8, 4, "
                                  "2, 1>}")
    with pytest.raises(ggc.CompilationError, match="accumulate into a 16-bit 'out' takes "
                                               "per-thread stores"):
        ggc.compile_ir(text, emit="ggk", arch="sm_90a")


@ggc.jit
def accumulate_kernel(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, y: gl.Out):
    gl.store(y, gl.grouped_dot(x, w, offs), accumulate=True)


def test_the_dsl_states_accumulate():
    src = accumulate_kernel.trace(ggc.spec([300, 128], "bf16"), ggc.spec([4, 256, 128], "bf16"),
                                  ggc.spec([5], "i32"), ggc.spec([300, 256], "f32"))
    assert "accumulate" in src


def test_the_dsl_refuses_a_non_bool():
    @ggc.jit
    def bad(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, y: gl.Out):
        gl.store(y, gl.grouped_dot(x, w, offs), accumulate="yes")
    with pytest.raises(gl.CompileError, match="gl.store's accumulate must be True or False"):
        bad.trace(ggc.spec([300, 128], "bf16"), ggc.spec([4, 256, 128], "bf16"),
                  ggc.spec([5], "i32"), ggc.spec([300, 256], "f32"))


def test_ops_needs_the_tensor_to_add_to():
    from ggc import ops
    offsets = torch.tensor([0, 100, 256], dtype=torch.int32)
    with pytest.raises(ValueError, match=r"accumulate=True adds the product to `out`: pass "
                                         r"out="):
        ops.grouped_gemm(torch.empty(256, 64), torch.empty(256, 32), k_offsets=offsets,
                         accumulate=True)
    with pytest.raises(ValueError, match="accumulate must be True or False"):
        ops.grouped_gemm(torch.empty(256, 64), torch.empty(256, 32), k_offsets=offsets,
                         out=torch.empty(2, 64, 32), accumulate=1)


@pytest.mark.parametrize("layout", ["contiguous", "masked"])
def test_an_f32_row_layout_reduce_adds_its_groups_rows(layout):
    """Row layouts keep the pool with an f32 output: a tile's valid rows go
    out as reduce-added boxes of the pool's heights (2-D maps, 3-D with the
    group for masked), so rows of no group are never added to."""
    kw = dict(m=256, expected_m=200) if layout == "masked" else {}
    text = ir.grouped_matmul("rows", layout=layout, num_groups=4, n=128, k=512,
                             dtype="bf16", out_dtype="f32", accumulate=True, **kw)
    out = ggc.compile_ir(text, emit="ptx", arch="sm_90a")
    assert out.plans[0]["attributes"]["store_pool"].startswith("array<i64: 128, 64")
    dims = "3d" if layout == "masked" else "2d"
    assert f"cp.reduce.async.bulk.tensor.{dims}.global.shared::cta.add.tile" in out.asm["ptx"]


def test_ops_refuses_accumulate_without_out_also_through_the_custom_op():
    """With inputs that need a gradient the call goes through torch's
    custom op: the same error, before it (not an unknown-argument one)."""
    from ggc import ops
    offsets = torch.tensor([0, 100, 256], dtype=torch.int32)
    with pytest.raises(ValueError, match=r"accumulate=True adds the product to `out`"):
        ops.grouped_gemm(torch.empty(256, 64, requires_grad=True), torch.empty(2, 32, 64),
                         offsets=offsets, accumulate=True)
