"""fused_moe's eager calls replayed from cached CUDA graphs (ggc.moe.graphs):
every replay equals an eager call bit for bit, on fresh inputs each call,
from several threads and streams at once, with weights changed in place;
its output is a tensor of its own; nothing is captured where a gradient,
a trace or an outer capture needs the eager path."""

import os
import sys
import threading

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "python"))
from ggc import moe  # noqa: E402
from ggc.moe import graphs  # noqa: E402
from moe_reference import layer_inputs, reference_moe, rel_err  # noqa: E402

pytestmark = [
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
    pytest.mark.skipif(os.environ.get("GGC_VALIDATE", "") not in ("", "0", "off"),
                       reason="GGC_VALIDATE reads topk_ids back: the layer stays eager")]

# (tokens, hidden, intermediate, experts, top_k): decode sizes, one token
# and a batch leaving experts empty and with one route.
SHAPES = [(1, 512, 256, 16, 4), (13, 768, 384, 32, 6), (64, 1024, 512, 8, 2)]


@pytest.fixture(autouse=True)
def fresh_graphs():
    graphs.clear()
    yield
    graphs.clear()


def inputs(shape, seed):
    tokens, _, _, experts, top_k = shape
    empty = (0, experts - 1) if experts > top_k + 2 else ()
    single = (1,) if experts > top_k + 3 and tokens > 1 else ()
    return [t.cuda() for t in layer_inputs(*shape, seed, True, empty, single)]


def fp8(w13, w2):
    (q13, s13), (q2, s2) = moe.quantize_weights(w13), moe.quantize_weights(w2)
    return q13, q2, dict(w13_scale=s13, w2_scale=s2)


@pytest.mark.parametrize("shape", SHAPES, ids=lambda s: "x".join(map(str, s)))
@pytest.mark.parametrize("precision", ["bf16", "fp8"])
def test_replays_equal_eager_calls(shape, precision):
    x, w13, w2, weights, ids = inputs(shape, seed=sum(shape))
    extra = {}
    if precision == "fp8":
        w13, w2, extra = fp8(w13, w2)
    outs = []
    for seed in range(4):  # eager, capture, then replays: new values each call
        x, _, _, weights, ids = inputs(shape, seed=100 + seed)
        got = moe.fused_moe(x, w13, w2, weights, ids, **extra)
        eager = moe.fused_moe(x, w13, w2, weights, ids, graph=False, **extra)
        assert torch.equal(got, eager), seed
        outs.append((got, got.clone()))
    assert graphs.cached() == 1
    # Each call's output is its own: later replays did not overwrite it.
    assert all(torch.equal(a, b) for a, b in outs)
    if precision == "bf16":
        ref = reference_moe(x.double(), w13.double(), w2.double(), weights.double(), ids)
        assert rel_err(outs[-1][0], ref) < 1e-2


def test_weights_changed_in_place_are_read():
    shape = SHAPES[1]
    x, w13, w2, weights, ids = inputs(shape, seed=7)
    for _ in range(2):
        moe.fused_moe(x, w13, w2, weights, ids)
    assert graphs.cached() == 1
    w2.mul_(-0.5)
    w13[3].copy_(torch.randn_like(w13[3]))
    got = moe.fused_moe(x, w13, w2, weights, ids)
    assert torch.equal(got, moe.fused_moe(x, w13, w2, weights, ids, graph=False))


def test_threads_and_streams():
    """Four threads, each on a stream of its own, replay one graph with
    inputs of their own; each result equals the eager call computed before."""
    shape = SHAPES[1]
    _, w13, w2, _, _ = inputs(shape, seed=8)
    cases = [inputs(shape, seed=200 + i) for i in range(16)]
    cases = [(x, weights, ids) for x, _, _, weights, ids in cases]
    want = [moe.fused_moe(x, w13, w2, w, ids, graph=False) for x, w, ids in cases]
    for _ in range(2):
        moe.fused_moe(cases[0][0], w13, w2, *cases[0][1:])
    assert graphs.cached() == 1
    got = [None] * len(cases)
    errors = []

    def work(first):
        try:
            stream = torch.cuda.Stream()
            with torch.cuda.stream(stream):
                for i in range(first, len(cases), 4):
                    x, w, ids = cases[i]
                    got[i] = moe.fused_moe(x, w13, w2, w, ids)
            stream.synchronize()
        except Exception as error:  # noqa: BLE001 - reported below
            errors.append(error)

    threads = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for i, (g, w) in enumerate(zip(got, want)):
        assert torch.equal(g, w), i


def test_eager_where_a_graph_cannot_serve():
    shape = SHAPES[0]
    x, w13, w2, weights, ids = inputs(shape, seed=9)
    # A gradient to take.
    leaf = x.detach().clone().requires_grad_()
    for _ in range(3):
        moe.fused_moe(leaf, w13, w2, weights, ids).float().sum().backward()
    # Over the token limit, unless asked for.
    big = inputs((65,) + shape[1:], seed=10)
    for _ in range(3):
        moe.fused_moe(*big)
    # graph=False.
    for _ in range(3):
        moe.fused_moe(x, w13, w2, weights, ids, graph=False)
    assert graphs.cached() == 0
    # Inside the caller's own capture: captured there, not cached here.
    moe.fused_moe(x, w13, w2, weights, ids, graph=False)
    torch.cuda.synchronize()
    outer = torch.cuda.CUDAGraph()
    with torch.cuda.graph(outer):
        out = moe.fused_moe(x, w13, w2, weights, ids)
    outer.replay()
    torch.cuda.synchronize()
    assert graphs.cached() == 0
    assert torch.equal(out, moe.fused_moe(x, w13, w2, weights, ids, graph=False))
    for _ in range(2):
        moe.fused_moe(*big, graph=True)
    assert graphs.cached() == 1


def test_no_host_synchronisation_once_captured():
    shape = SHAPES[2]
    x, w13, w2, weights, ids = inputs(shape, seed=11)
    for _ in range(2):
        moe.fused_moe(x, w13, w2, weights, ids)
    torch.cuda.synchronize()
    torch.cuda.set_sync_debug_mode("error")
    try:
        moe.fused_moe(x, w13, w2, weights, ids)
    finally:
        torch.cuda.set_sync_debug_mode("default")


def test_more_layers_than_graphs_kept(monkeypatch):
    """Three layers called in turn with two graphs kept: each drop waits
    for the GPU through an event, results stay right; with room for three,
    all three are captured."""
    shape = SHAPES[0]
    layers = [inputs(shape, seed=30 + i)[1:3] for i in range(3)]
    x, _, _, weights, ids = inputs(shape, seed=33)
    want = [moe.fused_moe(x, w13, w2, weights, ids, graph=False) for w13, w2 in layers]
    for limit, captured in (("2", 0), ("3", 3)):
        graphs.clear()
        monkeypatch.setenv("GGC_MOE_GRAPHS", limit)
        for _ in range(3):
            for (w13, w2), expected in zip(layers, want):
                assert torch.equal(moe.fused_moe(x, w13, w2, weights, ids), expected)
        assert graphs.cached() == captured


def test_a_failed_capture_leaves_the_signature_eager():
    """A forward that cannot be captured: a warning, the right result, the
    caller's stream current again, and no retry."""
    calls = []

    def forward(t):
        calls.append(torch.cuda.is_current_stream_capturing())
        if calls[-1]:
            raise RuntimeError("not capturable")
        return t * 2

    t = torch.randn(8, device="cuda")
    stream = torch.cuda.current_stream()
    assert torch.equal(graphs.replay(("failing",), (t,), forward), t * 2)
    with pytest.warns(RuntimeWarning, match="not capturable"):
        assert torch.equal(graphs.replay(("failing",), (t,), forward), t * 2)
    assert torch.cuda.current_stream() == stream
    assert torch.equal(graphs.replay(("failing",), (t,), forward), t * 2)
    assert calls == [False, True, False, False]
    assert graphs.cached() == 0
