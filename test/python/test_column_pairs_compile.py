"""gg.grouped_matmul's column_pairs through the compiler, without a GPU:
the epilogue's two accumulators, an output of N/2 columns, per-thread
stores of one value a pair on both lowerings, and the verifier's errors.
(test/gpu/test_column_pairs.py checks the numbers on a GPU.)"""

import pytest

import ggc
from ggc import ir

SWIGLU = """%s = gg.silu %acc0 : f32
%r = arith.mulf %s, %acc1 : f32
gg.yield %r : f32"""


def source(column_halves=False, **spec):
    """The kernel's gg source: column_pairs, or column_halves."""
    spec = dict(dict(layout="contiguous", num_groups=4, n=256, k=512, epilogue=SWIGLU), **spec)
    return ir.grouped_matmul("k", column_pairs=not column_halves,
                             column_halves=column_halves, **spec)


def test_the_source_states_the_pairs():
    text = source()
    assert "{column_pairs}" in text
    assert "^bb0(%acc0: f32, %acc1: f32, %group: index)" in text
    assert "out(%out : memref<?x128xbf16>)" in text


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80", "sm_89"])
@pytest.mark.parametrize("layout", ["contiguous", "masked"])
def test_each_pair_is_one_output(arch, layout):
    """sm_90a stages a tile's BN/2 outputs for the TMA store pool (2-byte
    shared stores into a staged tile of BN/2 columns); the other targets store each one
    by its thread."""
    kw = dict(m=128, expected_m=100) if layout == "masked" else {}
    out = ggc.compile_ir(source(layout=layout, **kw), emit="ptx", arch=arch)
    plan = out.plans[0]["attributes"]
    ggk = out.asm["ggk"]
    assert "column_pairs" in ggk and ": vector<1xbf16>" in ggk
    assert ": vector<2xbf16>" not in ggk
    info = out.kernel_info[0]
    assert info["args"][-1]["shape"][-1] == 128  # N/2
    ptx = out.asm["ptx"]
    if arch == "sm_90a":
        assert plan["store_pool"].startswith("array<i64: 128, 64")
        block_m, block_n = out.plans[0]["config"]["block"][:2]
        assert f"tile_shape = array<i64: {block_m}, {block_n // 2}>" in ggk
        assert "st.shared.b16" in ptx and "st.global" not in ptx
    else:
        assert plan["store_pool"] == "array<i64>"
        assert "st.global.b16" in ptx and "st.global.b32" not in ptx


def test_padded_contiguous_pairs_take_the_pool_or_their_threads():
    """DeepGEMM's padded layout: each tile tests its rows' tags (a warp
    ballot) and stages its pairs for the pool, or stores each by its
    thread where the group's rows are not its leading ones."""
    out = ggc.compile_ir(source(layout="padded_contiguous"), emit="ptx", arch="sm_90a")
    assert out.plans[0]["attributes"]["store_pool"].startswith("array<i64: 128, 64")
    assert " tagged(" in out.asm["ggk"]
    ptx = out.asm["ptx"]
    assert "vote.sync.ballot.b32" in ptx
    assert "st.shared.b16" in ptx and "st.global.b16" in ptx


@pytest.mark.parametrize("spec, message", [
    (dict(epilogue=None), "column_pairs needs an epilogue"),
    (dict(n=255), "column_pairs needs an even N"),
    (dict(cols=[[256]], epilogue="gg.yield %acc0 : f32"), "column_pairs takes no 'cols' vectors"),
    (dict(epilogue="gg.yield %acc0 : f32", direct_stores=False, config=None,
          kernel_plan=None, layout="k_grouped", n=256, k=None, m=512, b_layout="kn",
          out_dtype="f32"),
     "column_pairs is for row layouts"),
])
def test_what_column_pairs_does_not_take_is_refused_by_name(spec, message):
    with pytest.raises(ggc.CompilationError, match=message):
        ggc.compile_ir(source(**spec), emit="gg-config")


# The DSL's gl.column_pairs: a SwiGLU up projection as one @ggc.jit kernel.
import ggc.language as gl  # noqa: E402
from ggc import spec  # noqa: E402


@ggc.jit
def swiglu_up(x: gl.Rows, w13: gl.Weights, m_indptr: gl.Offsets, route: gl.RowVector,
              h: gl.Out):
    gate, up = gl.column_pairs(gl.grouped_dot(x, w13, m_indptr))
    gl.store(h, gl.silu(gate) * up * route)


PAIR_ARGS = (spec([None, 512], "bf16"), spec([8, 256, 512], "bf16"), spec([9], "i32"),
             spec([None], "f32"), spec([None, 128], "bf16"))


def test_jit_column_pairs_traces_and_compiles(tmp_path, monkeypatch):
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path / "cache"))
    text = swiglu_up.trace(*PAIR_ARGS)
    assert "column_pairs" in text
    assert "^bb0(%acc0: f32, %acc1: f32, %r0: f32, %group: index)" in text
    assert "gg.silu %acc0" in text
    kernel = swiglu_up.compile(*PAIR_ARGS)
    assert "column_pairs" in kernel.asm["ggk"]
    # An output of N columns, not N/2, is the compiler's error, naming 'out'.
    wide = PAIR_ARGS[:4] + (spec([None, 256], "bf16"),)
    with pytest.raises(ggc.CompilationError, match="'h' must have shape|'out' must have shape"):
        swiglu_up.compile(*wide)


@ggc.jit
def uses_acc_after_pairs(x: gl.Rows, w: gl.Weights, m: gl.Offsets, h: gl.Out):
    acc = gl.grouped_dot(x, w, m)
    gate, up = gl.column_pairs(acc)
    gl.store(h, acc * up)


@ggc.jit
def pairs_of_a_product(x: gl.Rows, w: gl.Weights, m: gl.Offsets, h: gl.Out):
    acc = gl.grouped_dot(x, w, m)
    gl.store(h, gl.column_pairs(acc * 2.0)[0])


@ggc.jit
def acc_used_before(x: gl.Rows, w: gl.Weights, m: gl.Offsets, h: gl.Out):
    acc = gl.grouped_dot(x, w, m)
    acc * 0.5  # a use of acc before the pairs
    gate, up = gl.column_pairs(acc)
    gl.store(h, gate * up)


@ggc.jit
def column_vector_after(x: gl.Rows, w: gl.Weights, m: gl.Offsets, bias: gl.ColVector,
                        h: gl.Out):
    gate, up = gl.column_pairs(gl.grouped_dot(x, w, m))
    gl.store(h, gate * up + bias)


NO_ROWS = PAIR_ARGS[:3] + (PAIR_ARGS[4],)


@pytest.mark.parametrize("kernel, args, message", [
    (uses_acc_after_pairs, NO_ROWS, "uses its two values, not the accumulator"),
    (pairs_of_a_product, NO_ROWS, "takes the accumulator gl.grouped_dot returned"),
    (acc_used_before, NO_ROWS, "must come before any use of the accumulator"),
    (column_vector_after, PAIR_ARGS[:3] + (spec([8, 256], "f32"), PAIR_ARGS[4]),
     "ColVector 'bias' cannot follow gl.column_pairs"),
])
def test_jit_column_pairs_misuse_is_named_at_the_users_line(kernel, args, message):
    with pytest.raises(gl.CompileError, match=message):
        kernel.trace(*args)
