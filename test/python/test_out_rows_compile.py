"""gg.grouped_matmul's out_rows (the product's rows scattered through a
list of row indices, gl.store's `rows`) without a GPU: the source and the
DSL state it, every target stores per thread and bounds the indices by
out's rows (the launch contract's R), the reference backend writes what the
kernels write, and what it cannot take is refused by name.
(test/gpu/test_out_rows.py checks the kernels on a GPU.)"""

import pytest

import ggc
import ggc.language as gl
from ggc import ir

torch = pytest.importorskip("torch")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path / "cache"))


def source(**kw):
    return ir.grouped_matmul("scatter", **dict(dict(
        layout="contiguous", num_groups=4, n=256, k=128, out_rows=True, rows=["f32"],
        epilogue="%r = arith.mulf %acc, %r0 : f32\ngg.yield %r : f32"), **kw))


def test_the_source_states_the_list_after_out():
    text = source()
    assert "out(%out : memref<?x256xbf16>) out_rows(%out_rows : memref<?xi32>)" in text
    assert text.index("%out: memref") < text.index("%out_rows: memref<?xi32>")


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80", "sm_89"])
def test_every_target_stores_per_thread_within_outs_rows(arch):
    out = ggc.compile_ir(source(), emit="ptx", arch=arch)
    assert out.plans[0]["store_pool"] == []
    info = out.kernel_info[0]
    assert info["args"][4]["shape"] == ["R", 256]  # out: the caller's rows
    assert info["args"][5]["shape"] == ["M"]       # the list: the product's
    params = [(p["kind"], p["operand"], p.get("dim")) for p in info["params"]]
    assert ("pointer", "out_rows", None) in params and ("size", "out", 0) in params
    # The host sizes the grid by the first size: the product's rows (M), not R.
    assert next(p for p in params if p[0] == "size") == ("size", "a", 0)
    assert "scatter(" in out.asm["ggk"] and " bound " in out.asm["ggk"]
    plain = ggc.compile_ir(source(out_rows=False), emit="ptx", arch=arch)
    assert "scatter(" not in plain.asm["ggk"]


def make_down():
    @ggc.jit
    def down(x: gl.Rows, w: gl.Weights, offsets: gl.Offsets, route: gl.RowVector,
             dest: gl.RowIndices, y: gl.Out):
        acc = gl.grouped_dot(x, w, offsets)
        gl.store(y, acc * route, rows=dest)
    return down


def test_the_reference_backend_writes_the_listed_rows_only():
    torch.manual_seed(0)
    m, k, n, rows = 10, 64, 32, 12
    x = torch.randn(m, k).bfloat16()
    w = torch.randn(3, n, k).bfloat16()
    offsets = torch.tensor([0, 3, 3, 10], dtype=torch.int32)
    route = torch.rand(m) + 0.5
    dest = torch.tensor([6, 0, -1, 2, 5, rows, 1, 3, 4, 11], dtype=torch.int32)
    y = torch.full((rows, n), float("nan")).bfloat16()
    make_down()(x, w, offsets, route, dest, y)
    group = [0] * 3 + [2] * 7
    named = set()
    for r in range(m):
        d = int(dest[r])
        if 0 <= d < rows:
            named.add(d)
            ref = (x[r].double() @ w[group[r]].double().T) * float(route[r])
            assert ((y[d].double() - ref).norm() / ref.norm()) < 1e-2
    for d in set(range(rows)) - named:
        assert y[d].isnan().all(), f"row {d}: no index names it, but it was written"


def test_the_dsl_refuses_what_it_cannot_take():
    @ggc.jit
    def masked(x: gl.MaskedRows, w: gl.Weights, counts: gl.MaskedCounts,
               dest: gl.RowIndices, y: gl.Out):
        gl.store(y, gl.grouped_dot(x, w, counts), rows=dest)

    @ggc.jit
    def added(x: gl.Rows, w: gl.Weights, offsets: gl.Offsets, dest: gl.RowIndices,
              y: gl.Out):
        gl.store(y, gl.grouped_dot(x, w, offsets), rows=dest, accumulate=True)

    @ggc.jit
    def untyped(x: gl.Rows, w: gl.Weights, offsets: gl.Offsets, dest: gl.RowVector,
                y: gl.Out):
        gl.store(y, gl.grouped_dot(x, w, offsets), rows=dest)

    w = torch.randn(2, 32, 64).bfloat16()
    with pytest.raises(gl.CompileError, match="rows scatter the rows of Rows"):
        masked(torch.randn(2, 8, 64).bfloat16(), w, torch.tensor([3, 8], dtype=torch.int32),
               torch.zeros(8, dtype=torch.int32), torch.empty(2, 8, 32).bfloat16())
    x, offsets = torch.randn(8, 64).bfloat16(), torch.tensor([0, 3, 8], dtype=torch.int32)
    with pytest.raises(gl.CompileError, match="takes no accumulate"):
        added(x, w, offsets, torch.zeros(8, dtype=torch.int32), torch.empty(8, 32))
    with pytest.raises(gl.CompileError, match="'rows' must be a parameter annotated RowIndices"):
        untyped(x, w, offsets, torch.zeros(8), torch.empty(8, 32).bfloat16())
