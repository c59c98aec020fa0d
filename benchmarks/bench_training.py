"""Training's grouped GEMMs: ggc against torch's autograd and DeepGEMM's
weight-gradient kernel, in one run (#40).

    python3 benchmarks/bench_training.py [--cases SUBSTRING] [--json OUT.json]

1. BF16, one grouped projection y[rows of g] = x[rows of g] @ w[g]^T:
   forward + backward under autograd (`torch.autograd.grad` of y against
   a fixed dy, so neither side pays for accumulating into .grad), ggc's
   `torch.ops.ggc.grouped_mm` against `torch._grouped_mm`, and each of its
   three GEMMs alone (forward, input gradient, weight gradient) to show
   which one lags. Real MoE training shapes, balanced and skewed loads,
   empty groups; every gradient of ggc and torch checked against fp64 on
   a slice of the rows (the groups of the first 4 experts).
2. FP8 weight gradient (1x128 scales over the tokens, f32 out += dY^T X),
   on DeepGEMM's own sm90 test shapes: ggc's `ops.grouped_gemm(k_offsets=,
   accumulate=True)` against `deep_gemm.k_grouped_fp8_gemm_nt_contiguous`
   (its `d = c + a^T b` with c = d), each fed its own layout of the same
   quantised values. Skipped, with the reason, without DeepGEMM.

Times are medians of interleaved batches (bench_grouped_gemm's
time_interleaved, CUDA events); speedup is torch's (or DeepGEMM's) time
over ggc's. The card's ceilings are measured in the run
(bench_peers.ceilings: dense bf16 and FP8 matmul rates), and each line
says how much of its ceiling ggc reaches and how much #40's target (1.15x
torch's fwd+bwd, 1.1x DeepGEMM's weight gradient) asks for: above 100%,
no kernel on the card could reach it.
"""

import argparse
import json
import os
import random
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
from ggc import ops, torch_ops  # noqa: E402
from bench_grouped_gemm import ragged_groups, time_interleaved  # noqa: E402
from bench_peers import DG, DG_WHY, ceilings, rel_err  # noqa: E402

# #40's targets: ggc's time at most the peer's over these.
BF16_TARGET = 1.15
FP8_WGRAD_TARGET = 1.1


def ceiling_shares(ours_us, peer_us, flops, ceiling_tflops, target):
    """(ggc's share of the ceiling, the share `target` times the peer asks
    for), in percent."""
    def share(us):
        return 100.0 * flops / (us * 1e6) / ceiling_tflops
    return share(ours_us), share(peer_us / target)


# ---------------------------------------------------------------------------
# 1. BF16 forward + backward
# ---------------------------------------------------------------------------

# (label, tokens T (rows of x), groups G, N, K, loads): N is the projection's
# output width, K its input width.
BF16_CASES = [
    ("issue uniform T16384 G32 N3072 K8192", 16384, 32, 3072, 8192, "uniform"),
    ("issue sparse T32768 G128 N1536 K2048", 32768, 128, 1536, 2048, "skewed"),
    ("DeepSeek-V3 up T16384 G32 N4096 K7168", 16384, 32, 4096, 7168, "skewed"),
    ("DeepSeek-V3 down T16384 G32 N7168 K2048", 16384, 32, 7168, 2048, "skewed"),
    ("Qwen3-30B up T32768 G128 N1536 K2048", 32768, 128, 1536, 2048, "uniform"),
    ("Qwen3-30B down T32768 G128 N2048 K768", 32768, 128, 2048, 768, "skewed"),
    ("Mixtral-8x7B up T8192 G8 N28672 K4096", 8192, 8, 28672, 4096, "skewed"),
    ("Mixtral-8x7B down T8192 G8 N4096 K14336", 8192, 8, 4096, 14336, "uniform"),
]


def group_sizes(t, g, loads, seed):
    if loads == "uniform":
        sizes = [t // g] * g
        sizes[-1] += t - sum(sizes)
    else:
        sizes = ragged_groups(t, g, seed)[0]
        # Two empty experts, their tokens given to the busiest one.
        busiest = max(range(g), key=sizes.__getitem__)
        for e in (1, g // 2):
            if e != busiest:
                sizes[busiest] += sizes[e]
                sizes[e] = 0
    return sizes


def projection_problem(t, g, n, k, loads, seed):
    """(sizes, torch's group ends, ggc's offsets, x, w, dy) of one grouped
    projection on the GPU, x and w requiring gradients."""
    sizes = group_sizes(t, g, loads, seed)
    ends = torch.tensor(sizes, device="cuda").cumsum(0).to(torch.int32)
    offsets = torch.cat([torch.zeros(1, dtype=torch.int32, device="cuda"), ends])
    x = torch.randn(t, k, device="cuda", dtype=torch.bfloat16, requires_grad=True)
    w = (torch.randn(g, n, k, device="cuda") / k ** 0.5).bfloat16().requires_grad_()
    dy = torch.randn(t, n, device="cuda", dtype=torch.bfloat16)
    return sizes, ends, offsets, x, w, dy


def bf16_case(label, t, g, n, k, loads, ceiling, seed=0):
    sizes, ends, offsets, x, w, dy = projection_problem(t, g, n, k, loads, seed)
    x_, w_, dy_ = x.detach(), w.detach(), dy

    def ggc_step():
        y = torch_ops.grouped_mm(x, w, offsets)
        return torch.autograd.grad(y, (x, w), dy)

    def torch_step():
        y = torch._grouped_mm(x, w.transpose(-2, -1), offs=ends)
        return torch.autograd.grad(y, (x, w), dy)

    def ggc_f32_wgrad():  # the backward before #40: an f32 gradient, then a cast
        y = torch_ops.grouped_mm(x_, w_, offsets)
        dx = torch_ops.grouped_mm_grad_x(dy_, w_, offsets)
        dw = ops.grouped_gemm(dy_, x_, k_offsets=offsets, out_dtype=torch.float32)
        return y, dx, dw.to(w_.dtype)

    fns = {
        "ggc fwd+bwd": ggc_step,
        "ggc fwd+bwd, f32 wgrad + cast (before)": ggc_f32_wgrad,
        "torch fwd+bwd": torch_step,
        "ggc fwd": lambda: torch_ops.grouped_mm(x_, w_, offsets),
        "torch fwd": lambda: torch._grouped_mm(x_, w_.transpose(-2, -1), offs=ends),
        "ggc dgrad": lambda: torch_ops.grouped_mm_grad_x(dy_, w_, offsets),
        "torch dgrad": lambda: torch._grouped_mm(dy_, w_, offs=ends),
        "ggc wgrad": lambda: torch_ops.grouped_mm_grad_w(dy_, x_, offsets),
        "torch wgrad": lambda: torch._grouped_mm(dy_.t(), x_, offs=ends),
    }
    errors = check_gradients(ggc_step(), torch_step(), x_, w_, dy, sizes)
    times = time_interleaved(fns)
    flops = 2.0 * t * n * k
    row = {"case": label, "sizes": sizes, "us": times, "errors": errors}
    for part, mult in (("fwd+bwd", 3), ("fwd", 1), ("dgrad", 1), ("wgrad", 1)):
        ours, theirs = times[f"ggc {part}"], times[f"torch {part}"]
        row[f"speedup {part}"] = theirs / ours
        print(f"{label:44} {part:8} ggc {ours:9.1f} us {mult * flops / ours / 1e6:6.0f} TFLOPS"
              f" | torch {theirs:9.1f} us | ggc {theirs / ours:.3f}x", flush=True)
    before = times["ggc fwd+bwd, f32 wgrad + cast (before)"]
    row["before_us"] = before
    ours, asked = ceiling_shares(times["ggc fwd+bwd"], times["torch fwd+bwd"], 3 * flops,
                                 ceiling["bf16_tflops"], BF16_TARGET)
    row.update(ceiling_pct=ours, target_asks_pct=asked)
    print(f"{'':44} fwd+bwd: ggc at {ours:.0f}% of the measured bf16 ceiling; "
          f"{BF16_TARGET}x torch asks {asked:.0f}%", flush=True)
    print(f"{'':44} without autograd, f32 wgrad + cast (the backward before): {before:.1f} us; "
          f"torch {times['torch fwd+bwd'] / before:.3f}x of it", flush=True)
    print(f"{'':44} fp64 check (first 4 groups): " +
          ", ".join(f"{k} {v:.1e}" for k, v in errors.items()), flush=True)
    return row


def check_gradients(ours, theirs, x, w, dy, sizes, groups=4):
    """Relative errors of dx and dw, ggc's and torch's, against fp64 over
    the rows of the first `groups` groups (the whole problem in fp64 would
    take longer than the timing)."""
    rows = sum(sizes[:groups])
    xs, dys = x[:rows].double(), dy[:rows].double()
    dx_ref = torch.empty(rows, x.shape[1], dtype=torch.float64, device="cuda")
    dw_ref = torch.zeros(groups, *w.shape[1:], dtype=torch.float64, device="cuda")
    start = 0
    for gi in range(groups):
        s = slice(start, start + sizes[gi])
        dx_ref[s] = dys[s] @ w[gi].double()
        dw_ref[gi] = dys[s].T @ xs[s]
        start += sizes[gi]
    errors = {}
    for name, (dx, dw) in (("ggc", ours), ("torch", theirs)):
        errors[f"{name} dx"] = rel_err(dx[:rows], dx_ref)
        errors[f"{name} dw"] = rel_err(dw[:groups], dw_ref)
    return errors


# ---------------------------------------------------------------------------
# 2. FP8 weight gradient against DeepGEMM
# ---------------------------------------------------------------------------

# DeepGEMM's sm90 k-grouped test shapes: (G, M, N, expected tokens per group).
FP8_WGRAD_CASES = [(4, 4096, 7168, 8192), (4, 7168, 2048, 8192), (8, 4096, 7168, 4096),
                   (8, 7168, 2048, 4096), (16, 4096, 7168, 2048), (16, 7168, 2048, 2048)]


def quantise_per_128_tokens(x):
    """x [K, C] bf16 (K a multiple of 128) as f8 with one f32 scale per
    channel and 128 tokens: (f8 [K, C], scales [K/128, C])."""
    k, c = x.shape
    blocks = x.float().view(k // 128, 128, c)
    scale = blocks.abs().amax(1).clamp_min(1e-4) / 448.0
    q = (blocks / scale[:, None, :]).to(torch.float8_e4m3fn).view(k, c)
    return q, scale


def deepgemm_wgrad(dy_q, dy_s, x_q, x_s, offsets, ks, d):
    """DeepGEMM's k_grouped_fp8_gemm_nt_contiguous adding dY^T X to d in
    place (c = d), fed its layout of the same values: each group's [M, K_g]
    block K-major, one after another, and the scales MN-major."""
    def per_group_k_major(q):
        return torch.cat([q[s:e].t().flatten() for s, e in
                          zip(offsets[:-1].tolist(), offsets[1:].tolist())])
    a_dg, b_dg = (per_group_k_major(dy_q), dy_s.t()), (per_group_k_major(x_q), x_s.t())
    layout = torch.tensor(ks, device="cuda", dtype=torch.int32)
    return lambda: DG.k_grouped_fp8_gemm_nt_contiguous(a_dg, b_dg, d, ks, layout, d,
                                                       recipe=(1, 1, 128))


def fp8_wgrad_case(g, m, n, per_group, ceiling, seed=0):
    rng = random.Random(seed)
    ks = [max(1, int(per_group * rng.uniform(0.7, 1.3))) for _ in range(g)]
    ks = [-(-k // 128) * 128 for k in ks]  # DeepGEMM's sm90 alignment
    total = sum(ks)
    label = f"FP8 wgrad G{g} M{m} N{n} tokens {total}"
    dy_q, dy_s = quantise_per_128_tokens(torch.randn(total, m, device="cuda").bfloat16())
    x_q, x_s = quantise_per_128_tokens(torch.randn(total, n, device="cuda").bfloat16())
    offsets = torch.tensor([0] + ks, device="cuda").cumsum(0).to(torch.int32)
    c = torch.randn(g, m, n, device="cuda") * 32
    # ggc: K-major [M, tokens] and [N, tokens], scales [M, KB] viewed M-major.
    a_ggc, b_ggc = dy_q.t().contiguous(), x_q.t().contiguous()
    sa_ggc, sb_ggc = dy_s.t(), x_s.t()  # both MN-major, as DeepGEMM takes them
    d_ggc = c.clone()
    # ggc as a caller writes it: without expected_m the call takes the
    # tokens' mean over the groups, and wide tiles for long groups; beside
    # it the tiles short groups take (expected_m=512), to show what they
    # give.
    fns = {"ggc": lambda: ops.grouped_gemm(a_ggc, b_ggc, k_offsets=offsets, k_major=True,
                                           a_scale=sa_ggc, b_scale=sb_ggc, out=d_ggc,
                                           accumulate=True),
           "ggc, short-group tiles": lambda: ops.grouped_gemm(
               a_ggc, b_ggc, k_offsets=offsets, k_major=True, a_scale=sa_ggc,
               b_scale=sb_ggc, out=d_ggc, accumulate=True, expected_m=512)}
    d_dg = c.clone()
    why = DG_WHY
    if DG is not None:
        deepgemm = deepgemm_wgrad(dy_q, dy_s, x_q, x_s, offsets, ks, d_dg)
        try:
            deepgemm()
            fns["deep_gemm"] = deepgemm
        except Exception as e:  # noqa: BLE001 - the refusal is reported
            why = f"{type(e).__name__}: {str(e).splitlines()[0][:120]}"
    # One call each from c, against fp64 of the quantised values.
    d_ggc.copy_(c)
    d_dg.copy_(c)
    for name, fn in fns.items():
        if name != "ggc, short-group tiles":  # the same sum into d_ggc
            fn()
    torch.cuda.synchronize()
    errors = {}
    sample = range(min(g, 2))  # two groups in fp64
    for name, d in (("ggc", d_ggc), ("deep_gemm", d_dg)):
        if name not in fns:
            continue
        worst = 0.0
        for gi in sample:
            s, e = ks[:gi], sum(ks[:gi + 1])
            s = sum(s)
            a = dy_q[s:e].double() * dy_s[s // 128:e // 128].double().repeat_interleave(128, 0)
            b = x_q[s:e].double() * x_s[s // 128:e // 128].double().repeat_interleave(128, 0)
            worst = max(worst, rel_err(d[gi], c[gi].double() + a.T @ b))
        errors[name] = worst
    times = time_interleaved(fns)
    flops = 2.0 * m * n * total
    row = {"case": label, "ks": ks, "us": times, "errors": errors}
    line = f"{label:44} ggc {times['ggc']:9.1f} us {flops / times['ggc'] / 1e6:6.0f} TFLOPS"
    if "deep_gemm" in times:
        row["speedup"] = times["deep_gemm"] / times["ggc"]
        ours, asked = ceiling_shares(times["ggc"], times["deep_gemm"], flops,
                                     ceiling["fp8_tflops"], FP8_WGRAD_TARGET)
        row.update(ceiling_pct=ours, target_asks_pct=asked)
        line += (f" | deep_gemm {times['deep_gemm']:9.1f} us "
                 f"{flops / times['deep_gemm'] / 1e6:6.0f} TFLOPS | ggc {row['speedup']:.3f}x"
                 f" | ggc {ours:.0f}% of the fp8 ceiling, {FP8_WGRAD_TARGET}x asks {asked:.0f}%")
    else:
        line += f" | deep_gemm skipped: {why}"
    line += f" | short-group tiles {times['ggc, short-group tiles']:9.1f} us"
    print(line, flush=True)
    print(f"{'':44} fp64 check (2 groups): " +
          ", ".join(f"{k} {v:.1e}" for k, v in errors.items()), flush=True)
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="", help="only cases whose name contains this")
    parser.add_argument("--json", help="write every number here")
    args = parser.parse_args()
    torch.manual_seed(0)
    ceiling = ceilings()
    print(f"{torch.cuda.get_device_name()}: measured ceilings bf16 {ceiling['bf16_tflops']:.0f}"
          f" TFLOPS, fp8 {ceiling['fp8_tflops']:.0f} TFLOPS", flush=True)
    rows = []
    jobs = [(label, lambda c=case: bf16_case(*c, ceiling)) for case in BF16_CASES
            for label in [case[0]]]
    jobs += [(f"FP8 wgrad G{c[0]} M{c[1]} N{c[2]}", lambda c=c: fp8_wgrad_case(*c, ceiling))
             for c in FP8_WGRAD_CASES]
    for label, run in jobs:
        if args.cases not in label:
            continue
        rows.append(run())
        torch.cuda.empty_cache()
        if args.json:  # after each case: a run cut short keeps what it measured
            with open(args.json, "w") as f:
                json.dump({"device": torch.cuda.get_device_name(), "ceiling": ceiling,
                           "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
