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


def source(**spec):
    spec = dict(dict(layout="contiguous", num_groups=4, n=256, k=512, epilogue=SWIGLU), **spec)
    return ir.grouped_matmul("k", column_pairs=True, **spec)


def test_the_source_states_the_pairs():
    text = source()
    assert "{column_pairs}" in text
    assert "^bb0(%acc0: f32, %acc1: f32, %group: index)" in text
    assert "out(%out : memref<?x128xbf16>)" in text


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80", "sm_89"])
@pytest.mark.parametrize("layout", ["contiguous", "masked"])
def test_each_pair_is_one_output_stored_by_its_thread(arch, layout):
    kw = dict(m=128, expected_m=100) if layout == "masked" else {}
    out = ggc.compile_ir(source(layout=layout, **kw), emit="ptx", arch=arch)
    plan = out.plans[0]["attributes"]
    assert plan["store_pool"] == "array<i64>"  # no TMA store pool
    ggk = out.asm["ggk"]
    assert "column_pairs" in ggk and ": vector<1xbf16>" in ggk
    assert ": vector<2xbf16>" not in ggk
    assert out.kernel_info[0]["args"][-1]["shape"][-1] == 128  # N/2
    ptx = out.asm["ptx"]
    assert "st.global.b16" in ptx and "st.global.b32" not in ptx


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
