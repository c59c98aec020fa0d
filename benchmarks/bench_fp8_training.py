"""FP8 training (ggc.training's recipe) against BF16, in one run (#40).

    python3 benchmarks/bench_fp8_training.py [--cases SUBSTRING] [--tokens 4096,16384]
        [--json OUT.json]

1. One grouped projection, forward + backward under autograd
   (`torch.autograd.grad` of y against a fixed dy): `ggc.training.
   fp8_grouped_mm` against ggc's BF16 `torch.ops.ggc.grouped_mm` and
   `torch._grouped_mm`, on bench_training.py's shapes; the FP8 step with
   its weights quantised in the step (the first micro-batch after an
   optimiser step) and with them kept from an earlier call (the later
   micro-batches), its weight gradient BF16 (the default) or FP8; then
   each piece alone (the quantisations, the three
   FP8 GEMMs) to show where the time goes. The FP8 gradients are checked
   against fp64 on the first four groups.
2. A whole MoE layer's training step (router, routing, experts,
   combine; forward + backward of every parameter and the input):
   `MoE(compute_dtype=float8_e4m3fn)` against the same layer in BF16, on
   Qwen3-30B-A3B-, Mixtral-8x7B- and DeepSeek-V3-like sizes (#40's
   target: FP8 1.3x BF16 at T >= 4,096).

Medians of interleaved batches (bench_grouped_gemm's time_interleaved,
CUDA events).
"""

import argparse
import copy
import json
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)
from ggc import ops, torch_ops, training  # noqa: E402
from ggc.moe import MoE  # noqa: E402
from bench_grouped_gemm import time_interleaved  # noqa: E402
from bench_training import BF16_CASES, projection_problem, rel_err  # noqa: E402


def projection_case(label, t, g, n, k, loads, seed=0):
    sizes, ends, offsets, x, w, dy = projection_problem(t, g, n, k, loads, seed)
    x_ = x.detach()

    def fp8_step(fresh, wgrad_dtype=torch.bfloat16):
        if fresh:
            training.release_quantized_weights()
        y = training.fp8_grouped_mm(x, w, offsets, wgrad_dtype=wgrad_dtype)
        return torch.autograd.grad(y, (x, w), dy)

    xq, xs = training.quantized_rows(x_)
    made = training.quantized_weights(w, transposed=True)
    dyq, dys = training.quantized_rows(dy)
    xtq, xts, padded = training.quantized_tokens(x_, offsets)
    dytq, dyts, _ = training.quantized_tokens(dy, offsets)
    fns = {
        "fp8 fwd+bwd": lambda: fp8_step(True),
        "fp8 fwd+bwd, weights kept": lambda: fp8_step(False),
        "fp8 fwd+bwd, FP8 wgrad, weights kept": lambda: fp8_step(False, torch.float8_e4m3fn),
        "ggc bf16 fwd+bwd": lambda: torch.autograd.grad(torch_ops.grouped_mm(x, w, offsets),
                                                        (x, w), dy),
        "torch fwd+bwd": lambda: torch.autograd.grad(
            torch._grouped_mm(x, w.transpose(-2, -1), offs=ends), (x, w), dy),
        "quantise w (128x128, + transposed)": lambda: (
            training.release_quantized_weights(), training.quantized_weights(w, transposed=True)),
        "quantise x rows": lambda: training.quantized_rows(x_),
        "quantise x tokens (transposed)": lambda: training.quantized_tokens(x_, offsets),
        "quantise dy rows": lambda: training.quantized_rows(dy),
        "quantise dy tokens (transposed)": lambda: training.quantized_tokens(dy, offsets),
        "fp8 fwd GEMM": lambda: ops.grouped_gemm(xq, made.q, offsets=offsets, a_scale=xs,
                                                 b_scale=made.scales, validate=False),
        "fp8 dgrad GEMM": lambda: ops.grouped_gemm(dyq, made.qt, offsets=offsets, a_scale=dys,
                                                   b_scale=made.scales_t, validate=False),
        "fp8 wgrad GEMM": lambda: ops.grouped_gemm(dytq, xtq, k_offsets=padded, k_major=True,
                                                   a_scale=dyts, b_scale=xts,
                                                   out_dtype=torch.bfloat16, validate=False),
        "bf16 wgrad GEMM": lambda: torch_ops.grouped_mm_grad_w(dy, x_, offsets),
    }
    errors = check_fp8(fp8_step(True), x_, w.detach(), dy, sizes)
    errors.update({f"{k} (FP8 wgrad)": v for k, v in check_fp8(
        fp8_step(True, torch.float8_e4m3fn), x_, w.detach(), dy, sizes).items()})
    times = time_interleaved(fns, rounds=9)
    flops = 3 * 2.0 * t * n * k
    row = {"case": label, "sizes": sizes, "us": times, "errors": errors}
    fp8 = times["fp8 fwd+bwd"]
    for name, us in times.items():
        extra = ""
        if "fwd+bwd" in name:
            extra = f" {flops / us / 1e6:6.0f} TFLOPS | fp8 step {us / fp8:.3f}x its time"
        print(f"{label:44} {name:36} {us:9.1f} us{extra}", flush=True)
    row["fp8 vs ggc bf16"] = times["ggc bf16 fwd+bwd"] / fp8
    row["fp8 vs torch"] = times["torch fwd+bwd"] / fp8
    row["fp8 kept vs ggc bf16"] = times["ggc bf16 fwd+bwd"] / times["fp8 fwd+bwd, weights kept"]
    print(f"{'':44} FP8 step against ggc BF16 {row['fp8 vs ggc bf16']:.3f}x (weights kept "
          f"{row['fp8 kept vs ggc bf16']:.3f}x), against torch {row['fp8 vs torch']:.3f}x; "
          f"fp64 check (first 4 groups): " +
          ", ".join(f"{k} {v:.1e}" for k, v in errors.items()), flush=True)
    return row


def check_fp8(grads, x, w, dy, sizes, groups=4):
    """FP8 gradients' relative errors against fp64 over the first groups."""
    dx, dw = grads
    rows = sum(sizes[:groups])
    bounds = torch.tensor([0] + sizes[:groups]).cumsum(0).tolist()
    dx_ref = torch.zeros(rows, x.shape[1], dtype=torch.float64, device="cuda")
    dw_ref = torch.zeros(groups, *w.shape[1:], dtype=torch.float64, device="cuda")
    for g in range(groups):
        s = slice(bounds[g], bounds[g + 1])
        dx_ref[s] = dy[s].double() @ w[g].double()
        dw_ref[g] = dy[s].double().T @ x[s].double()
    return {"dx": rel_err(dx[:rows], dx_ref), "dw": rel_err(dw[:groups], dw_ref)}


# (label, experts E, top_k, hidden H, intermediate I)
LAYERS = [("Qwen3-30B-A3B-like", 128, 8, 2048, 768),
          ("Mixtral-8x7B-like", 8, 2, 4096, 14336),
          ("DeepSeek-V3-like", 256, 8, 7168, 2048)]


def layer_shape(name):
    """The LAYERS entry whose label starts with `name` (case aside:
    qwen3, mixtral, deepseek); SystemExit naming the choices otherwise."""
    for shape in LAYERS:
        if shape[0].lower().startswith(name.lower()):
            return shape
    raise SystemExit(f"layer {name!r}: expected one of "
                     f"{', '.join(s[0].split('-')[0].lower() for s in LAYERS)}")


def twin_layers(experts, top_k, hidden, intermediate, tokens):
    """(a BF16 MoE layer, the same layer with compute_dtype FP8, x, dy):
    the two share their parameters (DeepSeek-V3's are 22 GB)."""
    torch.manual_seed(0)
    bf16 = MoE(hidden, intermediate, experts, top_k, device="cuda")
    fp8 = copy.copy(bf16)
    fp8.compute_dtype = torch.float8_e4m3fn
    x = torch.randn(tokens, hidden, device="cuda").bfloat16().requires_grad_()
    dy = torch.randn(tokens, hidden, device="cuda").bfloat16()
    return bf16, fp8, x, dy


def layer_case(label, experts, top_k, hidden, intermediate, tokens):
    bf16, fp8, x, dy = twin_layers(experts, top_k, hidden, intermediate, tokens)

    def step(layer, fresh=False):
        if fresh:
            training.release_quantized_weights()
        return torch.autograd.grad(layer(x), [x] + list(layer.parameters()), dy)

    names = ["x"] + [n for n, _ in bf16.named_parameters()]
    errors = {name: chunked_rel_err(b, a) for name, a, b in
              zip(names, step(bf16), step(fp8, True))}
    times = time_interleaved({"bf16": lambda: step(bf16), "fp8": lambda: step(fp8, True),
                              "fp8, weights kept": lambda: step(fp8)}, rounds=7, per_batch=3)
    row = {"case": f"{label} T={tokens}", "us": times, "fp8 vs bf16 errors": errors,
           "speedup": times["bf16"] / times["fp8"],
           "speedup kept": times["bf16"] / times["fp8, weights kept"]}
    print(f"layer {label:20} T={tokens:6} bf16 {times['bf16']:9.1f} us | fp8 "
          f"{times['fp8']:9.1f} us {row['speedup']:.3f}x | weights kept "
          f"{times['fp8, weights kept']:9.1f} us {row['speedup kept']:.3f}x | fp8 against "
          f"bf16: " + ", ".join(f"{k} {v:.1e}" for k, v in errors.items()), flush=True)
    del bf16, fp8
    training.release_quantized_weights()
    return row


def chunked_rel_err(got, want, elements=1 << 26):
    """rel_err a slice of rows at a time (an expert's gradient in fp64
    would not fit beside the layer)."""
    rows = max(1, elements // max(1, want[0].numel()))
    num = den = 0.0
    for lo in range(0, want.shape[0], rows):
        a, b = got[lo:lo + rows].double(), want[lo:lo + rows].double()
        num += float((a - b).pow(2).sum())
        den += float(b.pow(2).sum())
    return (num / max(den, 1e-300)) ** 0.5


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", default="", help="only cases whose name contains this")
    parser.add_argument("--tokens", default="4096,16384", help="the layer step's token counts")
    parser.add_argument("--no-layers", action="store_true", help="the projections only")
    parser.add_argument("--json", help="write every number here")
    args = parser.parse_args()
    print(torch.cuda.get_device_name(), flush=True)
    jobs = [(case[0], lambda c=case: projection_case(*c)) for case in BF16_CASES]
    if not args.no_layers:
        jobs += [(f"layer {spec[0]} T={t}", lambda s=spec, t=t: layer_case(*s, t))
                 for spec in LAYERS for t in map(int, args.tokens.split(","))]
    rows = []
    for label, run in jobs:
        if args.cases not in label:
            continue
        rows.append(run())
        torch.cuda.empty_cache()
        if args.json:
            with open(args.json, "w") as f:
                json.dump({"device": torch.cuda.get_device_name(), "rows": rows}, f, indent=1)


if __name__ == "__main__":
    main()
