"""ggc launches inside CUDA graphs.

Every layout (contiguous, masked, padded_contiguous, k_grouped; bf16 and
FP8 with block scales) is compiled and launched once outside the capture,
captured with torch.cuda.graph, then replayed with new data and NEW group
offsets/counts written in place into the captured tensors (same M): the
launch contract makes the grid depend on the shapes only, never on the
group sizes, so one graph serves every batch. Each replay must equal an
eager launch of the same kernel bit for bit and match fp64; rows no group
owns keep their NaN poison.

A first call (never compiled, never loaded) inside a capture runs in a
subprocess, so that whatever it does cannot take the test process down;
the test records what happened (works, or which error) and asserts only
that nothing crashed and nothing came out wrong.
"""

import functools
import json
import math
import os
import random
import subprocess
import sys

import pytest

torch = pytest.importorskip("torch")

import ggc  # noqa: E402
from ggc import ir, ops  # noqa: E402
from stress_run import worst_row_error  # noqa: E402

pytestmark = [
    pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU"),
    pytest.mark.skipif(os.environ.get("GGC_VALIDATE", "") not in ("", "0", "off"),
                       reason="GGC_VALIDATE reads group metadata back to the host, which "
                              "a capture forbids")]

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
ROUNDS = 4


@functools.lru_cache(maxsize=None)
def kernel(**spec):
    return ggc.Kernel(ir.grouped_matmul("graph", **spec))


def ragged(rng, groups, total, align=1):
    """Group sizes (0, 1, tile boundaries and off them) that fit in
    `total` rows once each is rounded up to `align`."""
    while True:
        sizes = [rng.choice((0, 1, 7, 63, 64, 65, 127, 128, 129, 255, 300)) for _ in range(groups)]
        if sum(-(-s // align) * align for s in sizes) <= total:
            return sizes


def fill(t, gen, scale=0.25):
    """New random values into a captured tensor, in place."""
    t.copy_((torch.randn(t.shape, generator=gen, device="cuda") * scale).to(t.dtype))


def owned_rows_ref(rows, n, parts):
    """fp64 [rows, n], NaN except the (row indices, values) parts."""
    ref = torch.full((rows, n), math.nan, dtype=torch.float64, device="cuda")
    for index, value in parts:
        ref[index] = value
    return ref


class Case:
    """Captured tensors of one layout; `args` are the kernel's, out last."""
    tol = 1e-2

    def launch(self, out=None):
        self.run(*self.args[:-1], self.args[-1] if out is None else out)

    def fresh_out(self):
        return torch.full_like(self.args[-1], math.nan)


class Contiguous(Case):
    G, M, N, K = 6, 700, 200, 136

    def __init__(self, fp8=False):
        if fp8:  # f8 rows need K a multiple of 16; 400 ends inside a scale block
            self.N, self.K = 328, 400
        G, M, N, K = self.G, self.M, self.N, self.K
        self.fp8 = fp8
        if fp8:
            self.run = kernel(layout="contiguous", num_groups=G, n=N, k=K, dtype="f8E4M3FN",
                              out_dtype="f32", a_scale="block_mn", b_scale="block")
            self.tol, kb = 2e-3, -(-K // 128)
            self.scales = [torch.empty(kb, (M + 3) // 4 * 4, device="cuda"),
                           torch.empty(G, -(-N // 128), kb, device="cuda")]
        else:
            self.run, self.scales = kernel(layout="contiguous", num_groups=G, n=N, k=K), []
        dtype = torch.float8_e4m3fn if fp8 else torch.bfloat16
        self.a = torch.empty(M, K, dtype=dtype, device="cuda")
        self.b = torch.empty(G, N, K, dtype=dtype, device="cuda")
        self.offsets = torch.zeros(G + 1, dtype=torch.int32, device="cuda")
        out = torch.empty(M, N, dtype=torch.float32 if fp8 else torch.bfloat16, device="cuda")
        self.args = [self.a, self.b, self.offsets] + self.scales + [out]

    def refill(self, gen, rng):
        self.sizes = ragged(rng, self.G, self.M)
        self.offsets.copy_(torch.tensor([0] + self.sizes).cumsum(0))
        fill(self.a, gen, 2 if self.fp8 else 0.25)
        fill(self.b, gen, 2 if self.fp8 else 0.25)
        for s in self.scales:
            s.copy_(torch.rand(s.shape, generator=gen, device="cuda") + 0.5)

    def reference(self):
        a, b = self.a.double(), self.b.double()
        if self.fp8:
            sa, sb = self.scales
            a = a * sa[:, :self.M].T.double().repeat_interleave(128, 1)[:, :self.K]
            b = b * sb.double().repeat_interleave(128, 1)[:, :self.N].repeat_interleave(
                128, 2)[:, :, :self.K]
        bounds = [0] + torch.tensor(self.sizes).cumsum(0).tolist()
        return owned_rows_ref(self.M, self.N, [
            (slice(s, e), a[s:e] @ b[g].T) for g, (s, e) in enumerate(zip(bounds, bounds[1:]))])


class Masked(Case):
    G, M, N, K = 4, 256, 200, 136

    def __init__(self):
        G, M, N, K = self.G, self.M, self.N, self.K
        self.run = kernel(layout="masked", num_groups=G, n=N, k=K, m=M)
        self.counts = torch.zeros(G, dtype=torch.int32, device="cuda")
        self.args = [torch.empty(G, M, K, dtype=torch.bfloat16, device="cuda"),
                     torch.empty(G, N, K, dtype=torch.bfloat16, device="cuda"), self.counts,
                     torch.empty(G, M, N, dtype=torch.bfloat16, device="cuda")]

    def refill(self, gen, rng):
        self.sizes = [min(s, self.M) for s in ragged(rng, self.G, self.G * self.M)]
        self.counts.copy_(torch.tensor(self.sizes))
        fill(self.args[0], gen)
        fill(self.args[1], gen)

    def reference(self):
        a, b = self.args[0].double(), self.args[1].double()
        ref = torch.full((self.G, self.M, self.N), math.nan, dtype=torch.float64, device="cuda")
        for g, c in enumerate(self.sizes):
            ref[g, :c] = a[g, :c] @ b[g].T
        return ref


class Padded(Case):
    G, M, N, K = 4, 1024, 200, 136

    def __init__(self):
        G, M, N, K = self.G, self.M, self.N, self.K
        self.run = kernel(layout="padded_contiguous", num_groups=G, n=N, k=K)
        self.tags = torch.full((M,), -1, dtype=torch.int32, device="cuda")
        self.args = [torch.empty(M, K, dtype=torch.bfloat16, device="cuda"),
                     torch.empty(G, N, K, dtype=torch.bfloat16, device="cuda"), self.tags,
                     torch.empty(M, N, dtype=torch.bfloat16, device="cuda")]

    def refill(self, gen, rng):
        sizes = ragged(rng, self.G, self.M, align=128)
        tags = sum(([g] * s + [-1] * (-s % 128) for g, s in enumerate(sizes)), [])
        self.host_tags = torch.tensor(tags + [-1] * (self.M - len(tags)))
        self.tags.copy_(self.host_tags)
        fill(self.args[0], gen)
        fill(self.args[1], gen)

    def reference(self):
        a, b = self.args[0].double(), self.args[1].double()
        tags = self.host_tags.cuda()
        return owned_rows_ref(self.M, self.N, [(tags == g, a[tags == g] @ b[g].T)
                                               for g in range(self.G)])


class KGrouped(Case):
    G, TOKENS, M, N = 5, 1040, 200, 136
    tol = 1e-3

    def __init__(self):
        G, M, N = self.G, self.M, self.N
        self.run = kernel(layout="k_grouped", num_groups=G, n=N, k=None, m=M, b_layout="kn",
                          out_dtype="f32")
        self.offsets = torch.zeros(G + 1, dtype=torch.int32, device="cuda")
        self.args = [torch.empty(self.TOKENS, M, dtype=torch.bfloat16, device="cuda"),
                     torch.empty(self.TOKENS, N, dtype=torch.bfloat16, device="cuda"),
                     self.offsets, torch.empty(G, M, N, device="cuda")]

    def refill(self, gen, rng):
        sizes = ragged(rng, self.G - 1, self.TOKENS)
        self.sizes = sizes + [self.TOKENS - sum(sizes)]  # every token in some group
        self.offsets.copy_(torch.tensor([0] + self.sizes).cumsum(0))
        fill(self.args[0], gen)
        fill(self.args[1], gen)

    def reference(self):
        dy, x = self.args[0].double(), self.args[1].double()
        bounds = [0] + torch.tensor(self.sizes).cumsum(0).tolist()
        return torch.stack([dy[s:e].T @ x[s:e] for s, e in zip(bounds, bounds[1:])])


class MaskedFp8Ops(Masked):
    """DeepGEMM's masked drop-in (ggc.ops) with block scales, captured."""
    N, K = 328, 384
    tol = 2e-3

    def __init__(self):
        G, M, N, K = self.G, self.M, self.N, self.K
        kb = K // 128
        f8 = torch.float8_e4m3fn
        self.counts = torch.zeros(G, dtype=torch.int32, device="cuda")
        self.x, self.w = (torch.empty(G, M, K, dtype=f8, device="cuda"),
                          torch.empty(G, N, K, dtype=f8, device="cuda"))
        self.sx_storage = torch.empty(G, kb, M, device="cuda")  # M-major, DeepGEMM's view
        self.sw = torch.empty(G, -(-N // 128), kb, device="cuda")
        self.args = [self.x, self.w, self.counts,
                     torch.empty(G, M, N, dtype=torch.float32, device="cuda")]

    def run(self, x, w, counts, out):
        ops.grouped_gemm(x, w, masked_m=counts, a_scale=self.sx_storage.transpose(1, 2),
                         b_scale=self.sw, out=out, expected_m=97)

    def refill(self, gen, rng):
        super().refill(gen, rng)
        fill(self.x, gen, 2)
        fill(self.w, gen, 2)
        for s in (self.sx_storage, self.sw):
            s.copy_(torch.rand(s.shape, generator=gen, device="cuda") + 0.5)

    def reference(self):
        x = self.x.double() * self.sx_storage.transpose(1, 2).double().repeat_interleave(128, 2)
        w = self.w.double() * self.sw.double().repeat_interleave(128, 1)[:, :self.N] \
            .repeat_interleave(128, 2)
        ref = torch.full((self.G, self.M, self.N), math.nan, dtype=torch.float64, device="cuda")
        for g, c in enumerate(self.sizes):
            ref[g, :c] = x[g, :c] @ w[g].T
        return ref


def bits(t):
    return t.view({2: torch.int16, 4: torch.int32}[t.element_size()])


def check(case, out):
    err = worst_row_error(out, case.reference())
    assert err < case.tol, f"worst row rel err {err:.2e}"


@pytest.mark.parametrize("make", [Contiguous, Masked, Padded, KGrouped,
                                  lambda: Contiguous(fp8=True), MaskedFp8Ops],
                         ids=["contiguous", "masked", "padded", "k_grouped",
                              "contiguous_fp8_block", "masked_fp8_block_ops"])
def test_graph_replays_new_groups_in_place(make):
    case, gen, rng = make(), torch.Generator(device="cuda").manual_seed(0), random.Random(0)
    case.refill(gen, rng)
    case.args[-1].fill_(math.nan)
    case.launch()  # compile, load and launch once outside the capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        case.launch()
    for _ in range(ROUNDS):
        case.refill(gen, rng)  # new data and new group sizes, same tensors
        case.args[-1].fill_(math.nan)
        graph.replay()
        eager = case.fresh_out()
        case.launch(eager)
        torch.cuda.synchronize()
        assert torch.equal(bits(case.args[-1]), bits(eager)), "replay differs from eager"
        check(case, case.args[-1])


FIRST_CALL = r"""
import json, math, sys, torch, ggc, ggc.language as gl
from ggc import ir, ops

how = sys.argv[1]
G, N, K = 4, 264, 136
sizes = [0, 5, 130, 64]
x = (torch.randn(sum(sizes) + 3, K, device="cuda") / 4).bfloat16()
w = (torch.randn(G, N, K, device="cuda") / 4).bfloat16()
offs = torch.tensor([0] + sizes, device="cuda").cumsum(0).int()

@ggc.jit
def first_call_in_capture(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, y: gl.Out):
    gl.store(y, gl.silu(gl.grouped_dot(x, w, offs)))

if how == "kernel":  # compiled before the capture, first launched inside it
    kern = ggc.Kernel(ir.grouped_matmul("first_launch_in_capture", layout="contiguous",
                                        num_groups=G, n=N, k=K, epilogue=(
        "%y = gg.silu %acc : f32\ngg.yield %y : f32")))
    run = lambda out: kern(x, w, offs, out)
elif how == "ops":  # ggc.ops at a shape nothing compiled: trace, compile, load
    run = lambda out: ops.grouped_gemm(x, w, offsets=offs, out=out)
else:  # a @ggc.jit kernel never called: trace, compile, load
    run = lambda out: first_call_in_capture(x, w, offs, out)
act = (lambda t: t) if how == "ops" else torch.nn.functional.silu

def error(out):
    ref = torch.cat([act(x[s:e].double() @ w[g].double().T) for g, (s, e) in
                     enumerate(zip(offs[:-1].tolist(), offs[1:].tolist()))])
    rows = ref.shape[0]
    err = ((out[:rows].double() - ref).norm() / ref.norm()).item()
    return err if math.isfinite(err) else float("inf"), bool(torch.isnan(out[rows:]).all())

out = torch.full((x.shape[0], N), math.nan, device="cuda", dtype=torch.bfloat16)
result, graph = {"how": how}, torch.cuda.CUDAGraph()
try:
    with torch.cuda.graph(graph):
        run(out)
    result["capture"] = "works"
except Exception as e:
    result["capture"], result["error"] = "raised", f"{type(e).__name__}: {e}"[:1500]
torch.cuda.synchronize()
if result["capture"] == "works":
    out.fill_(math.nan)
    graph.replay()
    torch.cuda.synchronize()
    result["replay_err"], result["replay_untouched"] = error(out)
again = torch.full_like(out, math.nan)  # whatever happened, eager still runs right
run(again)
torch.cuda.synchronize()
result["eager_err"], result["eager_untouched"] = error(again)
print("RESULT " + json.dumps(result))
"""


@pytest.mark.parametrize("how", ["jit", "ops", "kernel"])
def test_first_call_inside_a_capture(how, tmp_path, capsys):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"),
               GGC_CACHE_DIR=str(tmp_path / "cache"))
    proc = subprocess.run([sys.executable, "-c", FIRST_CALL, how], env=env, cwd=ROOT,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"crashed (rc {proc.returncode}):\n{proc.stderr[-3000:]}"
    line = next(t for t in proc.stdout.splitlines() if t.startswith("RESULT "))
    result = json.loads(line[len("RESULT "):])
    with capsys.disabled():  # the behaviour is what this test records
        print(f"\nfirst call inside a CUDA graph capture ({how}): {json.dumps(result)}")
    if result["capture"] == "works":
        assert result["replay_err"] < 1e-2 and result["replay_untouched"], result
    else:
        assert result["error"].strip(), "the capture failed without saying why"
    assert result["eager_err"] < 1e-2 and result["eager_untouched"], result
