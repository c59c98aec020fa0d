"""@ggc.jit from 8 threads at once, without a GPU: each thread traces and
compiles its own kernels (different epilogues, one shared function with a
constexpr per thread) over and over, and must get exactly the IR a single
thread gets. A trace shared between threads would mix their epilogues.
(test/gpu/test_concurrency.py launches the same way on the GPU.)"""

import sys
import threading

import pytest

import ggc
import ggc.language as gl
from ggc import spec

THREADS = 8
ROUNDS = 60


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path / "cache"))


@pytest.fixture(autouse=True)
def frequent_thread_switches():
    """Switch threads every microsecond, not every 5 ms: traces take well
    under a millisecond, so only then do they interleave often."""
    before = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    yield
    sys.setswitchinterval(before)


def _kernel(name, body):
    def kernel(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, route: gl.RowVector, y: gl.Out):
        gl.store(y, body(gl.grouped_dot(x, w, offs), route))
    kernel.__name__ = kernel.__qualname__ = f"traced_{name}"
    return ggc.jit(kernel)


KERNELS = [
    _kernel("silu", lambda acc, r: gl.silu(acc) * r),
    _kernel("sigmoid", lambda acc, r: gl.sigmoid(acc + r)),
    _kernel("relu", lambda acc, r: gl.maximum(acc * r, 0.0)),
    _kernel("abs", lambda acc, r: -gl.abs(acc) / r),
    _kernel("affine", lambda acc, r: acc * 0.5 + r),
    _kernel("min", lambda acc, r: gl.minimum(acc, r)),
    _kernel("gid", lambda acc, r: acc + gl.group_id() * r),
    _kernel("chain", lambda acc, r: gl.exp(gl.minimum(acc, 1.0)) * gl.sqrt(r)),
]


@ggc.jit
def traced_scaled(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, y: gl.Out,
                  ALPHA: gl.constexpr = 1.0):
    gl.store(y, gl.grouped_dot(x, w, offs) * ALPHA)


def args(n, k=128, g=4, route=True):
    a = [spec([None, k], "bf16"), spec([g, n, k], "bf16"), spec([g + 1], "i32")]
    return a + ([spec([None], "f32")] if route else []) + [spec([None, n], "bf16")]


def run_threads(work):
    barrier = threading.Barrier(THREADS)
    results, errors = [None] * THREADS, []

    def body(t):
        try:
            barrier.wait()
            results[t] = work(t)
        except BaseException as e:  # noqa: BLE001 - re-raised below
            errors.append((t, e))
            barrier.abort()

    threads = [threading.Thread(target=body, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        t, e = errors[0]
        raise AssertionError(f"thread {t}: {type(e).__name__}: {e}") from e
    return results


def test_threads_trace_their_own_epilogues():
    expected = [[fn.trace(*args(64 + 8 * r)) for r in range(ROUNDS)] for fn in KERNELS]

    def work(t):
        fn = KERNELS[t]
        return [fn.trace(*args(64 + 8 * r)) for r in range(ROUNDS)]
    assert run_threads(work) == expected


def test_threads_trace_one_function_with_their_own_constexpr():
    def alpha(t, r):
        return t + THREADS * r + 0.25

    expected = [[traced_scaled.trace(*args(128, route=False), ALPHA=alpha(t, r))
                 for r in range(ROUNDS)] for t in range(THREADS)]

    def work(t):
        return [traced_scaled.trace(*args(128, route=False), ALPHA=alpha(t, r))
                for r in range(ROUNDS)]
    got = run_threads(work)
    assert got == expected
    assert all(repr(alpha(t, 0)) in got[t][0] for t in range(THREADS))


def test_threads_compile_their_own_kernels():
    """First compiles in every thread at once (odd multiples of 8 for N, so
    nothing else compiled them): the kernel each gets is built from its own
    trace."""
    def n_of(t):
        return 8 * (2 * (30 + t) + 1)

    def work(t):
        kernel = KERNELS[t].compile(*args(n_of(t)))
        return kernel.asm["gg"], kernel.cache_hit
    got = run_threads(work)
    for t, (gg, hit) in enumerate(got):
        assert hit is None, f"thread {t}: expected a first compile, got a {hit} cache hit"
        alone = ggc.compile_ir(KERNELS[t].trace(*args(n_of(t))), emit="gg").asm["gg"]
        assert gg == alone, f"thread {t} got another thread's kernel"
