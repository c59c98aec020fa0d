"""The kernel plan's per-thread store width on the card in hand: each case
compiled with gg-plan-kernel's plan and with `store_columns` 2 and 8
(pairs, or quads storing 16 bytes a thread), checked against each other
and an fp64 reference on NaN-poisoned outputs, and timed interleaved
(bench_grouped_gemm.time_interleaved: medians of CUDA-event batches).

    python3 benchmarks/probes/store_columns_ab.py [--arch sm_90a] [--cases NAME,...]

The cases are the layouts whose sm_90a kernels store by thread (the store
pool does not take them): DeepGEMM's padded contiguous FP8 and a bf16 one.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "python"))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "test", "gpu"))

# name: (dtype, T, G, N, K); groups are Dirichlet-ragged, each padded to 128 rows.
CASES = {"padded_fp8_T8192_G8_N4096_K7168": ("f8E4M3FN", 8192, 8, 4096, 7168),
         "padded_bf16_T8192_G8_N4096_K4096": ("bf16", 8192, 8, 4096, 4096),
         "padded_fp8_T4096_G32_N7168_K2048": ("f8E4M3FN", 4096, 32, 7168, 2048)}


def padded_tags(t, g, align=128, seed=0):
    import torch
    torch.manual_seed(seed)
    shares = torch.distributions.Dirichlet(torch.ones(g)).sample()
    sizes = (shares * t).floor().long().tolist()
    sizes[-1] += t - sum(sizes)
    tags = []
    for gi, size in enumerate(sizes):
        tags += [gi] * size + [-1] * (-(-size // align) * align - size)
    return tags


def plans(spec, arch):
    import ggc
    from ggc import ir
    plan = ggc.compile_ir(ir.grouped_matmul("k", **spec), emit="gg-config",
                          arch=arch).plans[0]["attributes"]["kernel_plan"]
    base = plan.replace(", store_columns = 8", "")
    return {"planned": plan, "pairs": base, "quads": base[:-1] + ", store_columns = 8>"}


def run_case(name, arch):
    import torch
    import ggc
    from ggc import ir
    from bench_grouped_gemm import time_interleaved
    import test_fp8 as f8
    dtype, t, g, n, k = CASES[name]
    tags = padded_tags(t, g)
    m = len(tags)
    fp8 = dtype.startswith("f8")
    spec = dict(layout="padded_contiguous", num_groups=g, n=n, k=k, dtype=dtype)
    if fp8:
        spec.update(a_scale="block_mn", b_scale="block")
    else:
        spec.update(out_dtype="bf16")
    kernels = {label: ggc.Kernel(ir.grouped_matmul("k", kernel_plan=plan, **spec), target=arch)
               for label, plan in plans(spec, arch).items()}
    if fp8:
        a = f8.f8(m, k, dtype=dtype)
        b = f8.f8(g, n, k, dtype=dtype)
        sa, fa = f8.scales_a("block_mn", "padded_contiguous", g, m, k)
        sb, fb = f8.scales_b("block", g, n, k)
        a_deq, b_deq = a.double() * fa.double(), b.double() * fb.double()
    else:
        a = (torch.randn(m, k, device="cuda") / 4).to(torch.bfloat16)
        b = (torch.randn(g, n, k, device="cuda") / 4).to(torch.bfloat16)
        a_deq, b_deq = a.double(), b.double()
    m_indices = torch.tensor(tags, dtype=torch.int32, device="cuda")
    tags_t = m_indices.long()
    outs, calls = {}, {}
    for label, kern in kernels.items():
        out = torch.full((m, n), float("nan"), dtype=torch.bfloat16, device="cuda")
        args = (a, b, m_indices, sa, sb, out) if fp8 else (a, b, m_indices, out)
        kern(*args)
        torch.cuda.synchronize()
        assert torch.isnan(out[tags_t < 0]).all(), f"{label}: padding rows were written"
        errs = []
        for gi in range(g):
            sel = tags_t == gi
            if sel.any():
                ref = a_deq[sel] @ b_deq[gi].T
                errs.append(((out[sel].double() - ref).norm() / ref.norm()).item())
        tolerance = f8.TOLERANCE if fp8 else 1e-2
        assert max(errs) < tolerance, f"{label}: rel err {max(errs):.1e}"
        outs[label] = out
        calls[label] = (lambda kern=kern, args=args: kern(*args))
        print(f"{name} {label}: {kern.asm['ptx'].count('st.global.v4')} 16-byte stores in "
              f"the PTX, worst rel err {max(errs):.1e}", flush=True)
    same = torch.equal(outs["pairs"].nan_to_num(0), outs["quads"].nan_to_num(0))
    times = time_interleaved(calls)
    flops = 2 * t * n * k
    text = ", ".join(f"{label} {times[label]:.1f} us ({flops / times[label] / 1e6:.0f} TFLOPS)"
                     for label in kernels)
    print(f"{torch.cuda.get_device_name()} {name}: {text}; quads vs pairs "
          f"{times['pairs'] / times['quads']:.3f}x; bit-identical outputs: {same}", flush=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--arch", default="sm_90a")
    parser.add_argument("--cases", default=",".join(CASES))
    opts = parser.parse_args()
    for name in opts.cases.split(","):
        run_case(name, opts.arch)


if __name__ == "__main__":
    main()
