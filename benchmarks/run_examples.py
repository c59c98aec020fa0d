"""Runs every bundled example kernel (docs/examples) on the GPU against an
fp64 reference: fresh random inputs, NaN-poisoned outputs, relative norm
error per group, and a check that rows outside every group are untouched.
`make run` calls this on a machine with a GPU.
"""

import os
import sys

import torch

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path.insert(0, os.path.join(ROOT, "python"))
import ggc  # noqa: E402

EXAMPLES = os.path.join(ROOT, "docs", "examples")


def ragged(total, groups, seed):
    gen = torch.Generator().manual_seed(seed)
    cuts = torch.sort(torch.randint(0, total + 1, (groups - 1,), generator=gen)).values
    edges = torch.cat([torch.tensor([0]), cuts, torch.tensor([total])])
    return edges.to(torch.int32).cuda()


def f8(*shape):
    return (torch.randn(*shape, device="cuda") * 2).to(torch.float8_e4m3fn)


def bf16(*shape, scale=1.0):
    return (torch.randn(*shape, device="cuda") * scale).bfloat16()


def rel_err(out, ref):
    out = out.double()
    if not torch.isfinite(out).all():
        return float("inf")
    return ((out - ref).norm() / ref.norm().clamp_min(1e-30)).item()


def block_expand(scale, k, axis):
    return scale.double().repeat_interleave(128, dim=axis).narrow(axis, 0, k)


def check_contiguous_bf16_routing(kernel):
    m, g, n, k = 3000, 8, 4096, 7168
    x, w = bf16(m, k), bf16(g, n, k, scale=0.02)
    offsets, route = ragged(m, g, 1), torch.rand(m, device="cuda")
    y = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel(x, w, offsets, route, y)
    errs = []
    for gi in range(g):
        s, e = offsets[gi].item(), offsets[gi + 1].item()
        if e > s:
            ref = (x[s:e].double() @ w[gi].double().T) * route[s:e, None].double()
            errs.append(rel_err(y[s:e], ref))
    return max(errs), 1e-2, True


def check_masked_bf16_decode(kernel):
    g, m, n, k = 16, 128, 4096, 7168
    x, w = bf16(g, m, k), bf16(g, n, k, scale=0.02)
    counts = torch.randint(0, m + 1, (g,), dtype=torch.int32, device="cuda")
    y = torch.full((g, m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel(x, w, counts, y)
    errs, untouched = [], True
    for gi, c in enumerate(counts.tolist()):
        if c:
            errs.append(rel_err(y[gi, :c], x[gi, :c].double() @ w[gi].double().T))
        untouched &= bool(torch.isnan(y[gi, c:]).all())
    return max(errs), 1e-2, untouched


def check_masked_fp8_deepgemm(kernel):
    g, m, n, k = 4, 256, 4096, 7168
    x, w = f8(g, m, k), f8(g, n, k)
    sx = torch.rand(g, k // 128, m, device="cuda") + 0.5        # M-major
    sw = torch.rand(g, n // 128, k // 128, device="cuda") + 0.5
    counts = torch.tensor([256, 3, 0, 129], dtype=torch.int32, device="cuda")
    y = torch.full((g, m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel(x, sx, w, sw, counts, y)
    x_deq = x.double() * block_expand(sx.transpose(1, 2), k, 2)
    w_deq = w.double() * block_expand(block_expand(sw, n, 1), k, 2)
    errs, untouched = [], True
    for gi, c in enumerate(counts.tolist()):
        if c:
            errs.append(rel_err(y[gi, :c], x_deq[gi, :c] @ w_deq[gi].T))
        untouched &= bool(torch.isnan(y[gi, c:]).all())
    return max(errs), 2e-3, untouched


def check_padded_contiguous_fp8(kernel):
    g, n, k = 8, 4096, 7168
    sizes = [130, 0, 5, 256, 1, 64, 127, 300]
    tags = []
    for gi, s in enumerate(sizes):
        tags += [gi] * s + [-1] * (-(-s // 128) * 128 - s)
    m = len(tags)
    tags = torch.tensor(tags, dtype=torch.int32, device="cuda")
    x, w = f8(m, k), f8(g, n, k)
    sx = torch.rand(k // 128, (m + 3) // 4 * 4, device="cuda") + 0.5
    sw = torch.rand(g, n // 128, k // 128, device="cuda") + 0.5
    y = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel(x, sx, w, sw, tags, y)
    x_deq = x.double() * block_expand(sx[:, :m].T, k, 1)
    w_deq = w.double() * block_expand(block_expand(sw, n, 1), k, 2)
    errs = [rel_err(y[tags == gi], x_deq[tags == gi] @ w_deq[gi].T)
            for gi in range(g) if sizes[gi]]
    return max(errs), 2e-3, bool(torch.isnan(y[tags < 0]).all())


def check_k_grouped_wgrad_bf16(kernel):
    g, m, n, tokens = 8, 4096, 7168, 2000
    dy, x = bf16(tokens, m), bf16(tokens, n)
    offsets = ragged(tokens, g, 2).to(torch.int64)
    dw = torch.full((g, m, n), float("nan"), device="cuda")
    kernel(dy, x, offsets, dw)
    errs = []
    for gi in range(g):
        s, e = offsets[gi].item(), offsets[gi + 1].item()
        if e > s:
            errs.append(rel_err(dw[gi], dy[s:e].double().T @ x[s:e].double()))
        elif not (dw[gi] == 0).all():
            return float("inf"), 1e-2, True
    return max(errs), 1e-2, True


def check_contiguous_mxfp8(kernel):
    m, g, n, k, bk = 1000, 8, 4096, 2048, 32
    a, b = f8(m, k), f8(g, n, k)
    offsets = ragged(m, g, 3)
    ea = torch.randint(120, 135, ((m + 3 * g) // 4 * 4, k // bk), dtype=torch.uint8,
                       device="cuda")
    eb = torch.randint(120, 135, (g, n, k // bk), dtype=torch.uint8, device="cuda")
    out = torch.full((m, n), float("nan"), device="cuda", dtype=torch.bfloat16)
    kernel(a, ea.view(torch.int32), b, eb.view(torch.int32), offsets, out)
    expand = lambda e: torch.exp2(e.double() - 127).repeat_interleave(bk, dim=-1)  # noqa: E731
    errs = []
    for gi in range(g):
        s, e = offsets[gi].item(), offsets[gi + 1].item()
        if e > s:
            base = (s + 3 * gi) // 4 * 4
            a_deq = a[s:e].double() * expand(ea[base:base + e - s])
            ref = a_deq @ (b[gi].double() * expand(eb[gi])).T
            errs.append(rel_err(out[s:e], ref))
    return max(errs), 2e-3, True


CHECKS = {
    "contiguous_bf16_routing.mlir": check_contiguous_bf16_routing,
    "masked_bf16_decode.mlir": check_masked_bf16_decode,
    "masked_fp8_deepgemm.mlir": check_masked_fp8_deepgemm,
    "padded_contiguous_fp8.mlir": check_padded_contiguous_fp8,
    "k_grouped_wgrad_bf16.mlir": check_k_grouped_wgrad_bf16,
    "contiguous_mxfp8.mlir": check_contiguous_mxfp8,
}


def main() -> int:
    failed = 0
    for name in sorted(os.listdir(EXAMPLES)):
        check = CHECKS.get(name)
        if check is None:
            print(f"{name:32} no reference check (add one to benchmarks/run_examples.py)")
            failed += 1
            continue
        with open(os.path.join(EXAMPLES, name)) as f:
            kernel = ggc.Kernel(f.read(), source_name=name)
        torch.manual_seed(0)
        err, tolerance, untouched = check(kernel)
        torch.cuda.synchronize()
        ok = err < tolerance and untouched
        failed += not ok
        print(f"{name:32} max rel err {err:.2e} (bound {tolerance:.0e}), rows outside "
              f"groups {'untouched' if untouched else 'WRITTEN'}: {'ok' if ok else 'FAIL'}")
    print(f"{len(CHECKS) - failed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
