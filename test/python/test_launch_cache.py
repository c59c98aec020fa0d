"""The per-signature caches of the launch path (ggc.Kernel's launches,
@ggc.jit's and ggc.ops.grouped_gemm's plans) change no behaviour: a call
that differs from a cached one in anything a check reads still gets its
error, and a cached call launches at the new call's addresses.

CPU tensors stand in for CUDA ones on device 0 and the driver is a
recorder, as in benchmarks/host_time.py --stub."""

import os
import re
import sys

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import host_time  # noqa: E402

import ggc  # noqa: E402
import ggc.language as gl  # noqa: E402
from ggc import ops  # noqa: E402

JIT = sys.modules["ggc.jit"]
BF16, I32 = torch.bfloat16, torch.int32
G, M, N, K = 2, 64, 128, 128


@pytest.fixture
def launches(tmp_path, monkeypatch):
    """Every launch's addresses, in order."""
    seen = host_time.stub_for_test(monkeypatch, tmp_path / "cache")
    monkeypatch.setattr(routed, "_specialisations", {})
    monkeypatch.setattr(routed, "_plans", {})
    yield seen
    ggc.signature.forget_op_plans()


def operands(**changes):
    t = dict(a=torch.zeros(M, K, dtype=BF16), b=torch.zeros(G, N, K, dtype=BF16),
             offsets=torch.tensor([0, 30, M], dtype=I32), out=torch.empty(M, N, dtype=BF16))
    t.update(changes)
    return t


def call(t, **kw):
    return ops.grouped_gemm(t["a"], t["b"], offsets=t["offsets"], out=t["out"], **kw)


def misaligned(*shape, dtype=BF16):
    count = 1
    for d in shape:
        count *= d
    return torch.zeros(count + 1, dtype=dtype)[1:].view(*shape)


def test_a_cached_call_launches_at_the_new_addresses(launches):
    first, second = operands(), operands()
    call(first)
    call(second)
    assert len(ops._PLANS) == 1 and len(launches) == 2
    ptrs = [second[n].data_ptr() for n in ("a", "b", "offsets", "out")]
    assert launches[1] == ptrs


def outcome(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - compared below
        return type(e), str(e)
    return None


@pytest.mark.parametrize("change, message", [
    (dict(a=torch.zeros(M, K, dtype=torch.float16)), r"must have the same element type"),
    (dict(a=torch.zeros(K, M, dtype=BF16).T), r"argument 0 \(a\) must be contiguous"),
    (dict(b=torch.zeros(G, N, 64, dtype=BF16)), r"'a' must have shape \[\?, 64\]"),
    (dict(offsets=torch.tensor([0, M], dtype=I32)), r"'groups' must have shape \[3\]"),
    (dict(out=torch.empty(M, N + 8, dtype=BF16)), r"'out' must have shape \[\?, 128\]"),
    (dict(out=misaligned(M, N)), r"argument 3 \(out\) must be 16-byte aligned"),
    (dict(a=misaligned(M, K)), r"argument 0 \(a\) must be 16-byte aligned"),
    (dict(offsets=torch.tensor([0, 30, M], dtype=torch.float32)), r"."),
    (dict(out=torch.empty(M, N, dtype=BF16, device="meta")), None),
])
def test_a_call_unlike_a_cached_one_gets_what_it_got_uncached(launches, change, message):
    expected = outcome(lambda: call(operands(**change)))
    assert (expected is None) == (message is None)
    if message is not None:
        assert re.search(message, expected[1]), expected
    calls = len(launches)
    call(operands())
    call(operands())  # now from the plan
    assert len(ops._PLANS) == 1 and len(launches) == calls + 2
    assert outcome(lambda: call(operands(**change))) == expected
    assert len(launches) == calls + 2 + (expected is None and change.get("out") is None)


def test_validate_and_new_options_take_the_checked_path(launches, monkeypatch):
    call(operands())
    seen = []
    monkeypatch.setattr(ggc.groups, "check", lambda *a, **kw: seen.append(kw))
    call(operands(), validate=True)
    assert seen == [{"all_rows": False}]
    with pytest.raises(ValueError, match="b_layout must be 'nk' or 'kn'"):
        call(operands(), b_layout="mn")
    with pytest.raises(ValueError, match="grouped_gemm takes exactly one of"):
        ops.grouped_gemm(torch.zeros(M, K, dtype=BF16), torch.zeros(G, N, K, dtype=BF16))


def test_an_allocated_output_is_new_each_call(launches):
    t = operands()
    first = ops.grouped_gemm(t["a"], t["b"], offsets=t["offsets"])
    second = ops.grouped_gemm(t["a"], t["b"], offsets=t["offsets"])
    assert first.shape == second.shape == (M, N) and first.dtype == BF16
    assert launches[1][3] == second.data_ptr()


def test_inputs_that_need_a_gradient_are_never_cached_past_the_op(launches):
    t = operands(a=torch.zeros(M, K, dtype=BF16, requires_grad=True))
    with torch.no_grad():
        ops.grouped_gemm(t["a"], t["b"], offsets=t["offsets"])
        ops.grouped_gemm(t["a"], t["b"], offsets=t["offsets"])
    assert len(launches) == 2
    # With grad enabled the call must reach the custom op (its autograd).
    reached = []
    monkeypatch = pytest.MonkeyPatch()
    try:
        monkeypatch.setattr(ggc.torch_ops, "call_grouped_gemm",
                            lambda *a, **kw: reached.append(1))
        ops.grouped_gemm(t["a"], t["b"], offsets=t["offsets"])
    finally:
        monkeypatch.undo()
    assert reached == [1]


@ggc.jit
def routed(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, route: gl.RowVector, y: gl.Out):
    gl.store(y, gl.grouped_dot(x, w, offs) * route)


def test_jit_calls_of_a_cached_signature_still_check_the_rest(launches):
    t = operands()
    route = torch.ones(M)
    routed(t["a"], t["b"], t["offsets"], route, t["out"])
    routed(t["a"], t["b"], t["offsets"], route=route, y=t["out"])
    routed(t["a"], t["b"], t["offsets"], route, t["out"])
    assert len(launches) == 3 and len(routed._plans) == 2
    assert launches[2][3] == route.data_ptr()
    with pytest.raises(ValueError, match=r"3 \(rows\) dimension 0 must be M = 64"):
        routed(t["a"], t["b"], t["offsets"], torch.ones(M + 4), t["out"])
    with pytest.raises(ValueError, match=r"4 \(out\) must be 16-byte aligned"):
        routed(t["a"], t["b"], t["offsets"], route, misaligned(M, N))


def test_the_signature_cache_is_thread_safe(launches):
    import threading
    errors = []

    def worker():
        try:
            for _ in range(200):
                call(operands())
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert not errors and len(launches) == 800
