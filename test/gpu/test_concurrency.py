"""Launches from 8 host threads at once, each on its own torch stream.

Every thread runs mixed kernels (ggc.ops.grouped_gemm in each layout, fp8
with scales, @ggc.jit kernels with different epilogues), first calls
included: each thread's sizes are its own (N an odd multiple of 8 no other
test uses) and the disk cache is a fresh folder, so tracing, compiling,
module loading and launching all happen in the threads, concurrently.
Each result must equal, bit for bit, the same kernel run single-threaded
afterwards on the same inputs, and match an fp64 reference; a thread whose
kernel was built from another thread's trace fails its own epilogue's
reference.
"""

import math
import random
import threading
from dataclasses import dataclass
from typing import Callable

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402
import ggc.language as gl  # noqa: E402
from ggc import ops  # noqa: E402
from stress_run import worst_row_error  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

THREADS = 8
G, K = 4, 256


@pytest.fixture(autouse=True)
def fresh_disk_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path / "cache"))


# Epilogues that differ only after the grouped_dot: a kernel traced from
# another thread's body gives another thread's numbers.
def _epilogue_kernel(name, body, reference):
    def kernel(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, y: gl.Out):
        gl.store(y, body(gl.grouped_dot(x, w, offs)))
    kernel.__name__ = kernel.__qualname__ = f"threaded_{name}"
    return ggc.jit(kernel), reference


EPILOGUES = [
    _epilogue_kernel("silu", gl.silu, lambda acc, g: torch.nn.functional.silu(acc)),
    _epilogue_kernel("sigmoid", gl.sigmoid, lambda acc, g: torch.sigmoid(acc)),
    _epilogue_kernel("relu", lambda acc: gl.maximum(acc, 0.0), lambda acc, g: acc.clamp_min(0)),
    _epilogue_kernel("neg_abs", lambda acc: -gl.abs(acc), lambda acc, g: -acc.abs()),
    _epilogue_kernel("affine", lambda acc: acc * 0.5 + 1.0, lambda acc, g: acc * 0.5 + 1.0),
    _epilogue_kernel("min", lambda acc: gl.minimum(acc, 0.25),
                     lambda acc, g: acc.clamp_max(0.25)),
    _epilogue_kernel("gid", lambda acc: acc + gl.group_id(), lambda acc, g: acc + g),
    _epilogue_kernel("square", lambda acc: acc * acc, lambda acc, g: acc * acc),
]


@ggc.jit
def threaded_scaled(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, y: gl.Out,
                    ALPHA: gl.constexpr = 1.0):
    gl.store(y, gl.grouped_dot(x, w, offs) * ALPHA)


@ggc.jit
def threaded_masked_bias(x: gl.MaskedRows, w: gl.Weights, counts: gl.MaskedCounts,
                         bias: gl.ColVector, y: gl.Out, BLOCK_N: gl.constexpr = None):
    gl.store(y, gl.grouped_dot(x, w, counts) + bias)


@dataclass
class Job:
    name: str
    run: Callable       # run(out): launch into out on the current stream
    shape: tuple
    dtype: torch.dtype
    reference: Callable  # fp64 of out's shape, NaN where no group owns the row
    tol: float

    def fresh(self):
        return torch.full(self.shape, float("nan"), dtype=self.dtype, device="cuda")


def sizes_for(seed, groups=G):
    rng = random.Random(seed)
    return [rng.choice((0, 1, 7, 63, 64, 65, 127, 128, 129, 200)) for _ in range(groups)]


def offsets_of(sizes):
    return torch.tensor([0] + sizes, device="cuda").cumsum(0).int()


def randn(gen, *shape, dtype=torch.bfloat16, scale=0.25):
    return (torch.randn(*shape, generator=gen, device="cuda") * scale).to(dtype)


def per_rows(a_deq, b_deq, sizes, rows, n, epilogue=lambda acc, g: acc):
    """fp64 reference of token-packed groups; NaN on rows past the groups."""
    ref = torch.full((rows, n), math.nan, dtype=torch.float64, device="cuda")
    start = 0
    for g, size in enumerate(sizes):
        ref[start:start + size] = epilogue(a_deq[start:start + size] @ b_deq[g].T, g)
        start += size
    return ref


def job_contiguous(gen, seed, n):
    sizes = sizes_for(seed)
    m = sum(sizes) + 5  # rows past the last group stay unwritten
    a, b, offs = randn(gen, m, K), randn(gen, G, n, K), offsets_of(sizes)
    return Job("ops contiguous bf16", lambda out: ops.grouped_gemm(a, b, offsets=offs, out=out),
               (m, n), torch.bfloat16,
               lambda: per_rows(a.double(), b.double(), sizes, m, n), 1e-2)


def job_masked_kn(gen, seed, n):
    counts, m_max = sizes_for(seed), 200
    a, b = randn(gen, G, m_max, K, dtype=torch.float16), randn(gen, G, K, n, dtype=torch.float16)
    masked = torch.tensor(counts, dtype=torch.int32, device="cuda")

    def reference():
        ref = torch.full((G, m_max, n), math.nan, dtype=torch.float64, device="cuda")
        for g, c in enumerate(counts):
            ref[g, :c] = a[g, :c].double() @ b[g].double()
        return ref
    return Job("ops masked f16 kn", lambda out: ops.grouped_gemm(
        a, b, masked_m=masked, b_layout="kn", out=out, out_dtype=torch.float16),
        (G, m_max, n), torch.float16, reference, 1e-2)


def job_padded_fp8(gen, seed, n):
    """DeepGEMM's contiguous layout with 1x128 (M-major view) and 128x128 scales."""
    sizes = sizes_for(seed)
    tags = torch.cat([torch.tensor([g] * s + [-1] * (-s % 128), dtype=torch.int32)
                      for g, s in enumerate(sizes)] + [torch.full((128,), -1, dtype=torch.int32)])
    m, kb, nb = tags.numel(), K // 128, -(-n // 128)
    x = randn(gen, m, K, dtype=torch.float8_e4m3fn, scale=2)
    w = randn(gen, G, n, K, dtype=torch.float8_e4m3fn, scale=2)
    sx = (torch.rand(kb, (m + 3) // 4 * 4, generator=gen, device="cuda") + 0.5).T[:m]
    sw = torch.rand(G, nb, kb, generator=gen, device="cuda") + 0.5
    tags = tags.cuda()

    def reference():
        x_deq = x.double() * sx.double().repeat_interleave(128, 1)
        w_deq = w.double() * sw.double().repeat_interleave(128, 1)[:, :n].repeat_interleave(128, 2)
        ref = torch.full((m, n), math.nan, dtype=torch.float64, device="cuda")
        for g in range(G):
            rows = (tags == g).nonzero().flatten()
            ref[rows] = x_deq[rows] @ w_deq[g].T
        return ref
    return Job("ops padded fp8 block", lambda out: ops.grouped_gemm(
        x, w, m_indices=tags, a_scale=sx, b_scale=sw, out=out), (m, n), torch.bfloat16,
        reference, 1e-2)


def job_k_grouped(gen, seed, n):
    k_sizes = sizes_for(seed)
    m = 136
    dy, x = randn(gen, sum(k_sizes), m), randn(gen, sum(k_sizes), n)
    offs = offsets_of(k_sizes)

    def reference():
        bounds = [0] + torch.tensor(k_sizes).cumsum(0).tolist()
        return torch.stack([dy[s:e].double().T @ x[s:e].double()
                            for s, e in zip(bounds[:-1], bounds[1:])])
    return Job("ops k_grouped bf16", lambda out: ops.grouped_gemm(dy, x, k_offsets=offs, out=out),
               (G, m, n), torch.float32, reference, 1e-3)


def job_fp8_tensor_scales(gen, seed, n):
    sizes = sizes_for(seed)
    m = sum(sizes) + G + 1  # never G rows: a [G] scale would be ambiguous
    a = randn(gen, m, K, dtype=torch.float8_e4m3fn, scale=2)
    b = randn(gen, G, n, K, dtype=torch.float8_e4m3fn, scale=2)
    sa, sb = (torch.rand(G, generator=gen, device="cuda") + 0.5 for _ in range(2))
    offs = offsets_of(sizes)
    return Job("ops contiguous fp8 tensor scales", lambda out: ops.grouped_gemm(
        a, b, offsets=offs, a_scale=sa, b_scale=sb, out=out, out_dtype=torch.float32),
        (m, n), torch.float32,
        lambda: per_rows(a.double(), b.double(), sizes, m, n,
                         lambda acc, g: acc * (sa[g] * sb[g]).double()), 2e-3)


def job_epilogue(gen, seed, n, which):
    fn, epilogue = EPILOGUES[which]
    sizes = sizes_for(seed)
    m = sum(sizes) + 3
    a, b, offs = randn(gen, m, K), randn(gen, G, n, K), offsets_of(sizes)
    return Job(f"jit {fn.__name__}", lambda out: fn(a, b, offs, out), (m, n), torch.bfloat16,
               lambda: per_rows(a.double(), b.double(), sizes, m, n, epilogue), 1e-2)


def job_scaled(gen, seed, n, alpha):
    sizes = sizes_for(seed)
    m = sum(sizes) + 1
    a, b, offs = randn(gen, m, K), randn(gen, G, n, K), offsets_of(sizes)
    return Job(f"jit ALPHA={alpha}", lambda out: threaded_scaled(a, b, offs, out, ALPHA=alpha),
               (m, n), torch.bfloat16,
               lambda: per_rows(a.double(), b.double(), sizes, m, n,
                                lambda acc, g: acc * alpha), 1e-2)


def job_masked_bias(gen, seed, n):
    counts, m_max = sizes_for(seed), 136
    a, b = randn(gen, G, m_max, K), randn(gen, G, n, K)
    bias = torch.randn(G, n, generator=gen, device="cuda")
    masked = torch.tensor(counts, dtype=torch.int32, device="cuda")

    def reference():
        ref = torch.full((G, m_max, n), math.nan, dtype=torch.float64, device="cuda")
        for g, c in enumerate(counts):
            ref[g, :min(c, m_max)] = (a[g, :c].double() @ b[g].double().T) + bias[g].double()
        return ref
    return Job("jit masked bias", lambda out: threaded_masked_bias(a, b, masked, bias, out,
                                                                   BLOCK_N=64),
               (G, m_max, n), torch.bfloat16, reference, 1e-2)


KINDS = [job_contiguous, job_masked_kn, job_padded_fp8, job_k_grouped, job_fp8_tensor_scales,
         job_masked_bias]


def unique_n(thread, kind):
    """An odd multiple of 8 per (thread, kind): never a size another test compiles."""
    return 8 * (2 * (20 + 10 * thread + kind) + 1)


def run_threads(work):
    """work(t) -> [(job, out)] run in THREADS threads, each inside its own
    stream, all released at once; returns every thread's results."""
    barrier = threading.Barrier(THREADS)
    results, errors = [None] * THREADS, []

    def body(t):
        try:
            stream = torch.cuda.Stream()
            barrier.wait()
            with torch.cuda.stream(stream):
                results[t] = work(t)
            stream.synchronize()
        except BaseException as e:  # noqa: BLE001 - re-raised in the main thread
            errors.append((t, e))
            barrier.abort()

    threads = [threading.Thread(target=body, args=(t,)) for t in range(THREADS)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if errors:
        t, e = errors[0]
        raise AssertionError(f"thread {t} failed: {type(e).__name__}: {e}") from e
    torch.cuda.synchronize()
    return [r for per_thread in results for r in per_thread]


def launch(job):
    out = job.fresh()
    job.run(out)
    return job, out


def bits(t):
    return t.view({1: torch.uint8, 2: torch.int16, 4: torch.int32}[t.element_size()])


def check_exact_and_close(results):
    """Each threaded result against a single-threaded rerun (bitwise) and
    fp64 (row by row; rows no group owns keep the poison)."""
    for job, out in results:
        again = job.fresh()
        job.run(again)
        torch.cuda.synchronize()
        assert torch.equal(bits(out), bits(again)), f"{job.name}: threaded run differs"
        err = worst_row_error(out, job.reference())
        assert err < job.tol, f"{job.name}: worst row rel err {err:.2e}"


def test_eight_threads_mixed_kernels_first_calls():
    def work(t):
        gen = torch.Generator(device="cuda").manual_seed(t)
        done = []
        for i in range(3):  # three layouts per thread, rotating, each a first call
            kind = (t + i) % len(KINDS)
            done.append(launch(KINDS[kind](gen, 100 * t + i, unique_n(t, kind))))
        # The thread's own epilogue at 12 batch sizes: a trace per new M.
        n = unique_n(t, len(KINDS))
        done += [launch(job_epilogue(gen, 1000 * t + i, n, t % len(EPILOGUES)))
                 for i in range(12)]
        return done
    check_exact_and_close(run_threads(work))


def test_one_jit_function_specialised_by_eight_threads_at_once():
    """One JITFunction, a new constexpr per call in every thread: each call
    traces and compiles concurrently with the others, and each result
    must carry its own ALPHA."""
    def work(t):
        gen = torch.Generator(device="cuda").manual_seed(50 + t)
        return [launch(job_scaled(gen, 10 * t + i, unique_n(t, 7), alpha=t + THREADS * i + 0.5))
                for i in range(3)]
    check_exact_and_close(run_threads(work))


def test_same_kernels_from_eight_threads_after_warm_up():
    """Warm kernels (compiled and loaded), launched from all threads at once
    many times: the launch path itself (argument checks, cached launch
    arguments, tensor maps) under contention."""
    warm = [job_contiguous, job_masked_bias]
    for kind, make in enumerate(warm):
        launch(make(torch.Generator(device="cuda").manual_seed(0), 0, unique_n(7, 8 + kind)))
    torch.cuda.synchronize()

    def work(t):
        gen = torch.Generator(device="cuda").manual_seed(200 + t)
        return [launch(warm[i % 2](gen, 31 * t + i, unique_n(7, 8 + i % 2))) for i in range(24)]
    check_exact_and_close(run_threads(work))
