"""gg.grouped_matmul's column_halves through the compiler, without a GPU:
B's tile as two TMA boxes of block N / 2 rows (the gate's and the up's),
two outputs a pair stored like any tile of block N / 2 columns, and the
errors for what it does not take. (test/gpu/test_column_halves.py checks
the numbers on a GPU.)"""

import re

import pytest

import ggc
from ggc import spec
import ggc.language as gl
from test_column_pairs_compile import source as pairs_source


def source(**kw):
    return pairs_source(column_halves=True, **dict(dict(n=1536), **kw))


def test_the_source_states_the_halves():
    text = source()
    assert "{column_halves}" in text
    assert "^bb0(%acc0: f32, %acc1: f32, %group: index)" in text
    assert "out(%out : memref<?x768xbf16>)" in text


@pytest.mark.parametrize("layout", ["contiguous", "masked"])
def test_b_comes_in_two_boxes_and_the_outputs_are_a_plain_tile(layout):
    kw = dict(m=128, expected_m=100) if layout == "masked" else {}
    out = ggc.compile_ir(source(layout=layout, **kw), emit="ptx", arch="sm_90a")
    block_m, block_n = out.plans[0]["config"]["block"][:2]
    ggk = out.asm["ggk"]
    assert "second_half_row = 768" in ggk
    # Two outputs a pair, staged as a tile of block N / 2 columns.
    assert ": vector<2xbf16>" in ggk and ": vector<1xbf16>" not in ggk
    assert f"tile_shape = array<i64: {block_m}, {block_n // 2}>" in ggk
    b_map = next(p for p in out.kernel_info[0]["params"]
                 if p.get("kind") == "tensor_map" and p.get("operand") == "b")
    assert b_map["box"][:2] == [64, block_n // 2]
    assert out.kernel_info[0]["args"][-1]["shape"][-1] == 768
    # Per stage one box of A and two of B.
    ptx = out.asm["ptx"]
    assert len(re.findall(r"cp\.async\.bulk\.tensor\.3d", ptx)) >= 2


@pytest.mark.parametrize("arch", ["sm_80", "sm_89"])
def test_targets_without_tma_refuse_it_by_name(arch):
    with pytest.raises(ggc.CompilationError, match="column_halves loads B's two halves by "
                                                   "TMA for wgmma"):
        ggc.compile_ir(source(), emit="ptx", arch=arch)


@pytest.mark.parametrize("kw, message", [
    (dict(epilogue=None), "column_halves needs an epilogue"),
    (dict(n=255), "column_halves needs an even N"),
    (dict(b_layout="kn"), "column_halves needs 'b' in layout nk"),
    (dict(config="#gg.config<block = [128, 128, 64], stages = 4, cluster = [2, 1], sms = 132>"),
     "column_halves with a cluster"),
])
def test_what_column_halves_does_not_take_is_refused_by_name(kw, message):
    with pytest.raises(ggc.CompilationError, match=message):
        ggc.compile_ir(source(**kw), emit="ptx", arch="sm_90a")


@ggc.jit
def halves_up(x: gl.Rows, w13: gl.Weights, m_indptr: gl.Offsets, h: gl.Out):
    gate, up = gl.column_halves(gl.grouped_dot(x, w13, m_indptr))
    gl.store(h, gl.silu(gate) * up)


@ggc.jit
def split_twice(x: gl.Rows, w: gl.Weights, m: gl.Offsets, h: gl.Out):
    acc = gl.grouped_dot(x, w, m)
    gl.column_pairs(acc)
    gate, up = gl.column_halves(acc)
    gl.store(h, gate * up)


ARGS = (spec([None, 512], "bf16"), spec([8, 512, 512], "bf16"), spec([9], "i32"),
        spec([None, 256], "bf16"))


def test_jit_column_halves_traces_and_compiles(tmp_path, monkeypatch):
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path / "cache"))
    text = halves_up.trace(*ARGS)
    assert "column_halves" in text and "column_pairs" not in text
    assert "gg.silu %acc0" in text
    if ggc.get_target() == "sm_90a":
        assert "second_half_row = 256" in halves_up.compile(*ARGS).asm["ggk"]


def test_jit_splits_the_accumulator_once():
    with pytest.raises(gl.CompileError, match="gl.column_halves after gl.column_pairs"):
        split_twice.trace(*ARGS)
