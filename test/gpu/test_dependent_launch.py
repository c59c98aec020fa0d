"""Dependent launches (ggk-await-prior-grid, the runtime's programmatic
stream serialization): chains of ggc kernels, each reading what the one
ahead of it wrote, launched back to back with nothing between them, give
the fp64 reference's answer and the same bits as plain launches; in a CUDA
graph too; and ggc.moe's layer (its small kernels and GEMMs) is the same
either way."""

import os
import sys

import pytest

torch = pytest.importorskip("torch")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python"))
import ggc  # noqa: E402
from ggc import ir, moe, ops  # noqa: E402
from ggc.moe import ptx as moe_ptx  # noqa: E402
from gpu_checks import offsets_of, rel_err  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

# Ragged groups over 4,096 rows: empty groups, 1-row groups, sizes off
# every tile boundary.
SIZES = [0, 1, 1500, 777, 0, 1, 1000, 817]
LINKS = 8


@pytest.fixture
def dependent_launches():
    before = ggc.dependent_launches()
    yield
    ggc.set_dependent_launches(before)


def chain_operands(seed):
    gen = torch.Generator(device="cuda").manual_seed(seed)
    rows, width = sum(SIZES), 512
    x = torch.randn(rows, width, device="cuda", generator=gen).to(torch.bfloat16)
    # Orthogonal-ish weights keep each link's output of unit scale.
    w = (torch.randn(len(SIZES), width, width, device="cuda", generator=gen)
         / width ** 0.5).to(torch.bfloat16)
    return x, w, offsets_of(SIZES)


def run_chain(x, w, offsets):
    """LINKS grouped GEMMs, link i reading link i-1's output, into buffers
    poisoned with NaN beforehand: launched back to back, so that a link
    that started reading before the one ahead ended would read NaN."""
    outs = [torch.full_like(x, float("nan")) for _ in range(LINKS)]
    torch.cuda.synchronize()
    source = x
    for out in outs:
        ops.grouped_gemm(source, w, offsets=offsets, out=out)
        source = out
    return outs


def reference_chain(x, w):
    link, start, refs = x.double(), 0, []
    for _ in range(LINKS):
        nxt, start = torch.empty_like(link), 0
        for g, size in enumerate(SIZES):
            nxt[start:start + size] = link[start:start + size] @ w[g].double().T
            start += size
        # Each link's input is the previous link's bf16 output.
        refs.append(nxt)
        link = nxt.to(torch.bfloat16).double()
    return refs


@pytest.mark.parametrize("seed", [1, 2])
def test_back_to_back_chain_matches_fp64_and_plain_launches(seed, dependent_launches):
    x, w, offsets = chain_operands(seed)
    ggc.set_dependent_launches(True)
    early = run_chain(x, w, offsets)
    torch.cuda.synchronize()
    ggc.set_dependent_launches(False)
    plain = run_chain(x, w, offsets)
    torch.cuda.synchronize()
    refs = reference_chain(x, w)
    for i, (a, b) in enumerate(zip(early, plain)):
        assert not torch.isnan(a).any(), f"link {i}: a row was never written"
        assert torch.equal(a, b), f"link {i} differs from plain launches"
    # The last link's error gathers every link's rounding.
    assert rel_err(early[-1], refs[-1]) < 3e-2
    assert rel_err(early[0], refs[0]) < 1e-2


def test_chain_in_a_cuda_graph_replays_new_input(dependent_launches):
    x, w, offsets = chain_operands(3)
    ggc.set_dependent_launches(True)
    run_chain(x, w, offsets)  # compiled and loaded outside the capture
    outs = [torch.full_like(x, float("nan")) for _ in range(LINKS)]
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        source = x
        for out in outs:
            ops.grouped_gemm(source, w, offsets=offsets, out=out)
            source = out
    fresh, _, _ = chain_operands(4)
    x.copy_(fresh)
    graph.replay()
    torch.cuda.synchronize()
    ggc.set_dependent_launches(False)
    eager = run_chain(fresh, w, offsets)
    torch.cuda.synchronize()
    assert torch.equal(outs[-1], eager[-1])
    assert rel_err(outs[-1], reference_chain(fresh, w)[-1]) < 3e-2


@pytest.mark.parametrize("fp8", [False, True], ids=["bf16", "fp8"])
def test_moe_layer_is_the_same_with_and_without(fp8, dependent_launches):
    """ggc.moe's layer: routing, permutation, quantisation (FP8), the
    GEMMs and the combine, each launched early or plainly."""
    gen = torch.Generator(device="cuda").manual_seed(5)
    tokens, hidden, inter, experts, top_k = 300, 1024, 512, 16, 4
    x = torch.randn(tokens, hidden, device="cuda", generator=gen).to(torch.bfloat16)
    w13 = (torch.randn(experts, 2 * inter, hidden, device="cuda", generator=gen)
           / hidden ** 0.5).to(torch.bfloat16)
    w2 = (torch.randn(experts, hidden, inter, device="cuda", generator=gen)
          / inter ** 0.5).to(torch.bfloat16)
    logits = torch.randn(tokens, experts, device="cuda", generator=gen)
    weights, ids = moe.route(logits, top_k)
    scales = {}
    if fp8:
        (w13, s13), (w2, s2) = moe.quantize_weights(w13), moe.quantize_weights(w2)
        scales = dict(w13_scale=s13, w2_scale=s2)
    results = []
    for enabled in (True, False):
        ggc.set_dependent_launches(enabled)
        results.append(moe.fused_moe(x, w13, w2, weights, ids, graph=False, **scales))
        torch.cuda.synchronize()
    assert torch.isfinite(results[0].float()).all()
    assert torch.equal(results[0], results[1])


def test_launchers_are_declared_dependent_where_the_kernels_wait():
    """The launch contract reaches the runtime's Kernel: a GEMM compiled
    for sm_90a and the MoE layer's small kernels are launched as dependent
    launches exactly where their code waits for the grid ahead."""
    hopper = torch.cuda.get_device_capability() >= (9, 0)
    kernel = ggc.Kernel(ir.grouped_matmul("dependent_probe", layout="contiguous",
                                          num_groups=2, n=128, k=64))
    a = torch.randn(100, 64, device="cuda").to(torch.bfloat16)
    b = torch.randn(2, 128, 64, device="cuda").to(torch.bfloat16)
    out = torch.full((100, 128), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel(a, b, offsets_of([37, 63]), out)
    torch.cuda.synchronize()
    assert torch.isfinite(out.float()).all()
    waits = "griddepcontrol.wait" in kernel.asm["ptx"]
    assert waits == hopper
    assert kernel._launcher.dependent_launch == waits
    gen = torch.Generator(device="cuda").manual_seed(9)
    x = torch.randn(40, 256, device="cuda", generator=gen).to(torch.bfloat16)
    w13 = torch.randn(8, 256, 256, device="cuda", generator=gen).to(torch.bfloat16)
    w2 = torch.randn(8, 256, 128, device="cuda", generator=gen).to(torch.bfloat16)
    weights, ids = moe.route(torch.randn(40, 8, device="cuda", generator=gen), 2)
    moe.fused_moe(x, w13, w2, weights, ids, graph=False)
    torch.cuda.synchronize()
    assert moe_ptx._KERNELS, "the layer launched no small kernel through ptx.launch"
    for name, launcher in moe_ptx._KERNELS.items():
        assert launcher.dependent_launch == hopper, name
