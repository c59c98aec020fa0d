"""gg's zero_ungrouped without a GPU: the DSL and ggc.ops state it, the
verifier and ggc.ops refuse what it cannot take by name, the schedule of
every target walks the rows outside the groups (ggk.foreach_tile carries
it), and the reference backend writes zeros there as the kernel does.
(test/gpu/test_zero_ungrouped.py checks the kernels on a GPU.)"""

import pytest

import ggc
import ggc.language as gl
from ggc import ir, ops

torch = pytest.importorskip("torch")

BF16, I32 = torch.bfloat16, torch.int32


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path / "cache"))


def source(**spec):
    return ir.grouped_matmul("zu", layout="contiguous", num_groups=3, n=128, k=64,
                             zero_ungrouped=True, **spec)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_the_schedule_walks_the_rows_outside_the_groups(arch):
    out = ggc.compile_ir(source(), emit="ptx", arch=arch)
    assert "zero_ungrouped" in out.asm["gg"]
    assert "zero_ungrouped" in out.asm["ggk"]  # ggk.foreach_tile's
    plain = ggc.compile_ir(source().replace("{zero_ungrouped}", ""), emit="ptx", arch=arch)
    assert "zero_ungrouped" not in plain.asm["ggk"]
    assert out.asm["ptx"] != plain.asm["ptx"]


def test_the_launch_contract_counts_the_two_spans():
    """The host's tile count (the grid, the 32-bit tile-index check) takes
    the spans before and after the groups as two more groups; other
    kernels' contracts do not name them."""
    info = ggc.compile_ir(source(), emit="nvvm").kernel_info[0]
    assert info["ungrouped_spans"] == 2
    plain = ggc.compile_ir(source().replace("{zero_ungrouped}", ""), emit="nvvm")
    assert "ungrouped_spans" not in plain.kernel_info[0]


def test_epilogue_scales_are_zero_on_the_tiles_outside_the_groups():
    """Per-token and per-tensor scales multiply the sum in the epilogue:
    with zero_ungrouped each passes through a select of 0.0 (taken on the
    tiles with no K block), so an Inf in a caller's scales of rows outside
    every group cannot make their zeros NaN; without it, no such select."""
    import re
    spec = dict(dtype="f8E4M3FN", a_scale="channel", b_scale="tensor")
    zero_select = r"arith\.select %\w+, %cst\w*, %\w+ : f32"
    scaled = ggc.compile_ir(source(**spec), emit="ggk").asm["ggk"]
    plain = ggc.compile_ir(source(**spec).replace("{zero_ungrouped}", ""), emit="ggk")
    assert "ggk.scale" in scaled and len(re.findall(zero_select, scaled)) >= 2
    assert not re.findall(zero_select, plain.asm["ggk"])


def test_validation_takes_rows_outside_the_groups():
    """validate=True on an `out` allocated by the call asks every row to be
    in a group, unless zero_ungrouped writes the others."""
    a, w = torch.randn(30, 64).to(BF16), torch.randn(3, 128, 64).to(BF16)
    groups = torch.tensor([4, 7, 7, 20], dtype=I32)
    with pytest.raises(Exception, match="row"):
        ops.grouped_gemm(a, w, offsets=groups, validate=True)
    out = ops.grouped_gemm(a, w, offsets=groups, validate=True, zero_ungrouped=True)
    assert (out[:4] == 0).all() and (out[20:] == 0).all()


@pytest.mark.parametrize("spec, message", [
    (dict(layout="masked", m=64), "it takes layout contiguous, got masked"),
    (dict(accumulate=True, out_dtype="f32"), "cannot go with accumulate"),
    (dict(a_rows=True), "cannot go with a_rows"),
])
def test_the_verifier_refuses_by_name(spec, message):
    spec = {"layout": "contiguous", "num_groups": 3, "n": 128, "k": 64, **spec}
    with pytest.raises(ggc.CompilationError, match=message):
        ggc.compile_ir(ir.grouped_matmul("zu", zero_ungrouped=True, **spec), emit="gg")


def test_an_epilogue_is_refused():
    @ggc.jit
    def scaled(a: gl.Rows, b: gl.Weights, offsets: gl.Offsets, out: gl.Out):
        gl.store(out, gl.grouped_dot(a, b, offsets) * 2.0, zero_ungrouped=True)
    a, b = torch.randn(8, 64).to(BF16), torch.randn(2, 128, 64).to(BF16)
    with pytest.raises(ggc.CompilationError, match="takes no epilogue region"):
        scaled(a, b, torch.tensor([0, 3, 5], dtype=I32), torch.empty(8, 128, dtype=BF16))


@pytest.mark.parametrize("kwargs, error, message", [
    (dict(zero_ungrouped=1), ValueError, "zero_ungrouped must be True or False"),
    (dict(zero_ungrouped=True, accumulate=True), ValueError, "take one"),
])
def test_ops_refuses_by_name(kwargs, error, message):
    a, b = torch.randn(8, 64).to(BF16), torch.randn(2, 128, 64).to(BF16)
    out = torch.zeros(8, 128, dtype=torch.float32 if kwargs.get("accumulate") else BF16)
    with pytest.raises(error, match=message):
        ops.grouped_gemm(a, b, offsets=torch.tensor([0, 3, 5], dtype=I32), out=out, **kwargs)


def test_ops_refuses_other_layouts():
    a, b = torch.randn(2, 8, 64).to(BF16), torch.randn(2, 128, 64).to(BF16)
    with pytest.raises(ValueError, match="it takes offsets="):
        ops.grouped_gemm(a, b, masked_m=torch.tensor([3, 5], dtype=I32), zero_ungrouped=True)


@pytest.mark.parametrize("offsets", [[4, 7, 7, 20], [0, 10, 30, 30], [-5, 3, 9, 99]])
def test_reference_backend_writes_zeros_outside_every_group(offsets):
    """Rows before offsets[0] and from offsets[G] on (clamped to the rows,
    as the kernel clamps them) are zeros; the groups' rows the product."""
    t, n, k = 30, 128, 64
    a, w = torch.randn(t, k).to(BF16), torch.randn(3, n, k).to(BF16)
    groups = torch.tensor(offsets, dtype=I32)
    out = torch.full((t, n), float("nan"), dtype=BF16)
    ops.grouped_gemm(a, w, offsets=groups, out=out, zero_ungrouped=True)
    bounds = [min(max(o, 0), t) for o in offsets]
    assert (out[:bounds[0]] == 0).all() and (out[bounds[-1]:] == 0).all()
    for g, (s, e) in enumerate(zip(bounds, bounds[1:])):
        e = max(s, e)
        want = a[s:e].double() @ w[g].double().T
        assert torch.allclose(out[s:e].double(), want, rtol=2e-2, atol=2e-2)
