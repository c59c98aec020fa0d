"""Operands, fp64 checks and the report shared by the probes that time
variants of ggc's kernels (`serial_overlap.py`, `store_issuers.py`,
`wgrad_once.py`): the FP8 weight gradient (dY and X quantised with 1x128
scales over the tokens, groups of DeepGEMM's 128-token alignment) and
contiguous forward projections (FP8 with 1x128 / 128x128 block scales, or
BF16; ragged groups)."""
import os
import sys
from dataclasses import dataclass

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
from bench_grouped_gemm import ragged_groups, time_interleaved  # noqa: E402
from bench_training import (BF16_CASES, DG, deepgemm_wgrad, projection_problem,  # noqa: E402
                            quantise_per_128_tokens)


def rel_err(out, ref):
    out = out.double()
    assert torch.isfinite(out).all(), "non-finite outputs"
    return ((out - ref).norm() / ref.norm()).item()


def report(name, times, errors, flops):
    """One line a variant: us, TFLOPS, speed against the first, error."""
    if name:
        print(name, flush=True)
    first = next(iter(times))
    for label, us in times.items():
        print(f"    {label:24} {us:9.1f} us {flops / us / 1e6:6.0f} TFLOPS "
              f"{times[first] / us:6.3f}x of {first}  err {errors.get(label, float('nan')):.1e}",
              flush=True)


@dataclass
class Projection:
    """One of bench_training's BF16 projections on the GPU (x and w
    detached): y = x @ w[g]^T over T tokens in G groups, N x K weights."""
    label: str
    t: int
    g: int
    n: int
    k: int
    sizes: list
    ends: torch.Tensor     # torch._grouped_mm's offs
    offsets: torch.Tensor  # ggc's [G+1]
    x: torch.Tensor
    w: torch.Tensor
    dy: torch.Tensor

    def input_gradient_reference(self):
        """dy @ w[g] in fp64 over the first two groups' rows."""
        first, rows = self.sizes[0], self.sizes[0] + self.sizes[1]
        return torch.cat([self.dy[:first].double() @ self.w[0].double(),
                          self.dy[first:rows].double() @ self.w[1].double()])


def bf16_projections(cases=""):
    """bench_training's BF16 projections whose name contains `cases`, one
    at a time, after printing the card's name."""
    print(torch.cuda.get_device_name(), flush=True)
    for label, t, g, n, k, loads in BF16_CASES:
        if cases in label:
            sizes, ends, offsets, x, w, dy = projection_problem(t, g, n, k, loads, 0)
            yield Projection(label, t, g, n, k, sizes, ends, offsets, x.detach(),
                             w.detach(), dy)


@dataclass
class WeightGradient:
    ks: list            # tokens a group, multiples of 128
    dy_q: torch.Tensor  # [tokens, M] e4m3, with dy_s [tokens / 128, M]
    dy_s: torch.Tensor
    x_q: torch.Tensor   # [tokens, N] e4m3, with x_s [tokens / 128, N]
    x_s: torch.Tensor
    offsets: torch.Tensor

    @property
    def total(self):
        return sum(self.ks)

    def k_major(self):
        """ggc's operands: dY^T [M, tokens] and X^T [N, tokens], K-major."""
        return self.dy_q.t().contiguous(), self.x_q.t().contiguous()

    def worst_error(self, out, c=None):
        """The larger relative error of `out`'s first two groups against
        fp64 of the dequantised operands (plus `c`, what `out` held)."""
        worst, start = 0.0, 0
        for gi in range(2):
            end = start + self.ks[gi]
            a = self.dy_q[start:end].double() * self.dy_s[start // 128:end // 128].double(
            ).repeat_interleave(128, 0)
            b = self.x_q[start:end].double() * self.x_s[start // 128:end // 128].double(
            ).repeat_interleave(128, 0)
            ref = a.T @ b + (c[gi].double() if c is not None else 0)
            worst = max(worst, rel_err(out[gi], ref))
            start = end
        return worst

    def time_kernels(self, kernels, c, out_dtype="f32"):
        """({label: us}, {label: error}) of `kernels` ({label: ggc.Kernel}
        on ggc's operands), each adding to a copy of `c` (f32) or writing a
        NaN-filled bf16 output, beside DeepGEMM's kernel (f32, where it is
        importable): checked against fp64 once, then timed interleaved."""
        a, b = self.k_major()
        accumulate = out_dtype == "f32"
        fns, outs = {}, {}
        for label, kern in kernels.items():
            out = c.clone() if accumulate else torch.full(
                c.shape, float("nan"), device="cuda", dtype=torch.bfloat16)
            fns[label] = lambda kern=kern, out=out: kern(a, b, self.offsets, self.dy_s,
                                                         self.x_s, out)
            outs[label] = out
        if DG is not None and accumulate:
            outs["deep_gemm"] = c.clone()
            fns["deep_gemm"] = deepgemm_wgrad(self.dy_q, self.dy_s, self.x_q, self.x_s,
                                              self.offsets, self.ks, outs["deep_gemm"])
        for fn in fns.values():
            fn()
        torch.cuda.synchronize()
        errors = {label: self.worst_error(out, c if accumulate else None)
                  for label, out in outs.items()}
        return time_interleaved(fns), errors


def weight_gradient(g, m, n, per_group, uniform=False):
    """G groups of about `per_group` tokens (0.7-1.3x, seeded by the shape;
    exactly, with `uniform`), rounded up to 128."""
    gen = torch.Generator().manual_seed(g * 7 + m)
    ks = [per_group if uniform else
          int(per_group * (0.7 + 0.6 * torch.rand(1, generator=gen).item()))
          for _ in range(g)]
    ks = [-(-k // 128) * 128 for k in ks]
    total = sum(ks)
    dy_q, dy_s = quantise_per_128_tokens(torch.randn(total, m, device="cuda").bfloat16())
    x_q, x_s = quantise_per_128_tokens(torch.randn(total, n, device="cuda").bfloat16())
    offsets = torch.tensor([0] + ks, device="cuda").cumsum(0).to(torch.int32)
    return WeightGradient(ks, dy_q, dy_s, x_q, x_s, offsets)


def fp8_wgrad_kernel(g, m, n, block_n, stages, cluster=1, out_dtype="f32", **spec):
    """ggc's FP8 weight gradient (k_grouped, K-major operands, 1x128
    MN-major scales over the tokens; f32 added to `out`, or bf16 written)
    on 128 x block_n tiles of `stages` stages, in clusters of `cluster`
    along M; `spec`: ir.grouped_matmul's other arguments (kernel_plan,
    store_slice, schedule)."""
    import ggc
    from ggc import ir
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    return ggc.Kernel(ir.grouped_matmul(
        "k", layout="k_grouped", num_groups=g, n=n, k=None, m=m, b_layout="nk",
        dtype="f8E4M3FN", out_dtype=out_dtype, a_scale="block_mn",
        b_scale="block1x128_mn", accumulate=out_dtype == "f32",
        config=f"#gg.config<block = [128, {block_n}, 128], stages = {stages}, "
               f"cluster = [{cluster}, 1], sms = {sms}>", **spec))


def on_deepgemm_wgrad_shapes(kernels_for, out_dtype="f32"):
    """Times `kernels_for(g, m, n)` ({label: ggc.Kernel} of the FP8 weight
    gradient, f32 added to `out`, or a bf16 `out` written) on DeepGEMM's
    six sm90 k-grouped shapes (G 4, 8, 16; M x N 4,096 x 7,168 and
    7,168 x 2,048; about 33k-37k tokens) beside DeepGEMM's kernel (f32
    only), and reports each shape."""
    print(torch.cuda.get_device_name(), flush=True)
    for g in (4, 8, 16):
        for m, n in ((4096, 7168), (7168, 2048)):
            w = weight_gradient(g, m, n, 8192 * 4 // g)
            times, errors = w.time_kernels(kernels_for(g, m, n),
                                           torch.randn(g, m, n, device="cuda") * 32,
                                           out_dtype)
            report(f"FP8 wgrad G{g} M{m} N{n} tokens {w.total}", times, errors,
                   2.0 * m * n * w.total)


@dataclass
class Contiguous:
    args: tuple          # the kernel's operands before `out`
    spec: dict           # ir.grouped_matmul's dtype and scale arguments
    offsets: torch.Tensor
    a_deq: torch.Tensor  # A in fp64, dequantised
    b_deq: object        # group -> B[g] in fp64, dequantised

    def worst_error(self, out):
        """The larger relative error of the first and last groups' rows."""
        bounds, worst = self.offsets.tolist(), 0.0
        for gi in (0, len(bounds) - 2):
            s, e = bounds[gi], bounds[gi + 1]
            if s < e:
                worst = max(worst, rel_err(out[s:e], self.a_deq[s:e] @ self.b_deq(gi).T))
        return worst

    def time_kernels(self, kernels, n):
        """({label: us}, {label: error}) of `kernels` ({label: ggc.Kernel}),
        each into a NaN-filled [T, n] bf16 output: checked against fp64
        once, then timed interleaved."""
        fns, outs = {}, {}
        for label, kern in kernels.items():
            out = torch.full((self.a_deq.shape[0], n), float("nan"), device="cuda",
                             dtype=torch.bfloat16)
            fns[label] = lambda kern=kern, out=out: kern(*self.args, out)
            outs[label] = out
        for fn in fns.values():
            fn()
        torch.cuda.synchronize()
        errors = {label: self.worst_error(out) for label, out in outs.items()}
        return time_interleaved(fns), errors


def contiguous(t, g, n, k, fp8):
    """T ragged rows (Dirichlet shares, seed 0) of G groups, N x K weights."""
    _, _, offsets = ragged_groups(t, g, 0)
    if not fp8:
        a = torch.randn(t, k, device="cuda", dtype=torch.bfloat16)
        b = torch.randn(g, n, k, device="cuda", dtype=torch.bfloat16)
        return Contiguous((a, b, offsets), {}, offsets, a.double(), lambda gi: b[gi].double())
    kb = -(-k // 128)
    a = (torch.randn(t, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    b = (torch.randn(g, n, k, device="cuda") * 2).to(torch.float8_e4m3fn)
    a_scale = torch.rand(kb, (t + 3) // 4 * 4, device="cuda") + 0.5
    b_scale = torch.rand(g, -(-n // 128), kb, device="cuda") + 0.5
    a_deq = a.double() * a_scale[:, :t].T.double().repeat_interleave(128, 1)[:, :k]

    def b_deq(gi):
        return b[gi].double() * b_scale[gi].double().repeat_interleave(
            128, 0)[:n].repeat_interleave(128, 1)[:, :k]
    return Contiguous((a, b, offsets, a_scale, b_scale),
                      dict(dtype="f8E4M3FN", a_scale="block_mn", b_scale="block"),
                      offsets, a_deq, b_deq)
