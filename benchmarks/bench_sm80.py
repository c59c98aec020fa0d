"""The sm_80 lowering (cp.async, ldmatrix, mma.sync) against the tensor
cores' mma.sync peak on the card in hand, measured in the same run.

The peak is a micro-benchmark of our own: a kernel of independent chains
of `mma.sync.m16n8k16` bf16 on registers (no memory traffic), one CTA of
8 warps per SM four times over, written as PTX for sm_80 and loaded
through the driver API. ggc's kernels for sm_80 are PTX the driver
assembles for the device, so a Hopper card runs them too (there, the
sm_90a kernels are the fast path: they are timed beside them).

    python3 benchmarks/bench_sm80.py [--json FILE]
"""

import argparse
import ctypes
import json
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "python"))
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import ggc  # noqa: E402
from ggc import ir  # noqa: E402
from bench_grouped_gemm import ragged_groups, time_interleaved  # noqa: E402

CHAINS = 8  # independent accumulators per warp: hides mma.sync's latency
WARPS = 8


# The instruction each micro-benchmark repeats, and its K.
MMA = {"bf16": ("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32", 16, "sm_80"),
       "e4m3": ("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32", 32, "sm_89"),
       "tf32": ("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32", 8, "sm_80")}


def store_sum(accumulators: int) -> str:
    """PTX that adds %c1.. into %c0 and stores it at out[global thread]
    (so that no product is dead code), then returns."""
    sums = "\n".join(f"    add.f32 %c0, %c0, %c{i};" for i in range(1, accumulators))
    return f"""{sums}
    ld.param.u64 %o, [out];
    mov.u32 %t, %tid.x; mov.u32 %blk, %ctaid.x; mov.u32 %dim, %ntid.x;
    mad.lo.u32 %t, %blk, %dim, %t;
    mul.wide.u32 %off, %t, 4;
    add.u64 %o, %o, %off;
    st.global.f32 [%o], %c0;
    ret;
}}"""


def random_operands(registers: list[str]) -> str:
    """PTX that fills each register with two bf16 of random mantissa and sign
    in [0.5, 1), from a hash of the thread and the register's number, so
    that the multipliers toggle as on real data."""
    lines = ["    mov.u32 %h, %tid.x;"]
    for i, reg in enumerate(registers):
        lines += [f"    mad.lo.u32 {reg}, %h, -1640531535, {0x85EBCA6B * (i + 1) & 0x7FFFFFFF};",
                  f"    shr.u32 %hs, {reg}, 15;", f"    xor.b32 {reg}, {reg}, %hs;",
                  f"    mul.lo.u32 {reg}, {reg}, 739982445;",
                  f"    shr.u32 %hs, {reg}, 12;", f"    xor.b32 {reg}, {reg}, %hs;",
                  f"    and.b32 {reg}, {reg}, -2139128193;",  # 0x807F807F: sign, mantissa
                  f"    or.b32 {reg}, {reg}, 1056980736;"]  # 0x3F003F00: exponent of 0.5
    return "\n".join(lines)


def peak_ptx(chains: int, kind: str = "bf16", operands: str = "constant") -> str:
    """The kernel: `iters` rounds of `chains` mma.sync per warp, whose sum
    each thread stores (so that none is dead code). `operands`: "constant"
    (every chain multiplies the same fixed fragments) or "random" (bf16
    only: each chain its own B fragment of random values, two A fragments
    in turn), which draws the power that real data does."""
    instruction, _, target = MMA[kind]
    acc = lambda c: "{" + ", ".join(f"%c{4 * c + i}" for i in range(4)) + "}"  # noqa: E731
    rand = operands == "random"
    assert not rand or kind == "bf16", "random operands are bf16's"
    a = lambda c: "{" + ", ".join(f"%a{4 * (c % 2 if rand else 0) + i}" for i in range(4)) + "}"  # noqa: E731
    b = lambda c: f"{{%b{2 * c if rand else 0}, %b{2 * c + 1 if rand else 1}}}"  # noqa: E731
    body = "\n".join(f"    {instruction} {acc(c)}, {a(c)}, {b(c)}, {acc(c)};"
                      for c in range(chains))
    if rand:
        init = random_operands([f"%a{i}" for i in range(8)] + [f"%b{i}" for i in range(2 * chains)])
    else:
        init = """    mov.b32 %a0, 0x3c003c00; mov.b32 %a1, 0x3c003c01; mov.b32 %a2, 0x3c003c02;
    mov.b32 %a3, 0x3c003c03; mov.b32 %b0, 0x3c003c04; mov.b32 %b1, 0x3c003c05;"""
    return f""".version 8.4
.target {target}
.address_size 64
.visible .entry mma_peak(.param .u64 out, .param .u32 iters)
{{
    .reg .b32 %a<8>, %b<{2 * chains}>, %i, %n, %t, %blk, %dim, %h, %hs;
    .reg .f32 %c<{4 * chains}>;
    .reg .pred %p;
    .reg .u64 %o, %off;
{init}
{chr(10).join(f"    mov.f32 %c{i}, 0f00000000;" for i in range(4 * chains))}
    ld.param.u32 %n, [iters];
    mov.u32 %i, 0;
LOOP:
{body}
    add.u32 %i, %i, 1;
    setp.lt.u32 %p, %i, %n;
    @%p bra LOOP;
{store_sum(4 * chains)}
"""


class DriverKernel:
    """Entry `name` of a PTX module, loaded with the driver API on torch's
    context (the driver assembles it for the card in hand)."""

    def __init__(self, ptx: str, name: str = "k", shared_bytes: int = 0):
        torch.cuda.init()
        torch.empty(1, device="cuda")  # makes torch's context current
        self.cuda = ctypes.CDLL("libcuda.so.1")
        self.module, self.function = ctypes.c_void_p(), ctypes.c_void_p()
        self._check(self.cuda.cuModuleLoadData(ctypes.byref(self.module),
                                               ptx.encode() + b"\0"), "load")
        self._check(self.cuda.cuModuleGetFunction(ctypes.byref(self.function), self.module,
                                                  name.encode()), "function")
        self.shared_bytes = shared_bytes
        if shared_bytes > 48 * 1024:  # CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
            self._check(self.cuda.cuFuncSetAttribute(self.function, 8, shared_bytes), "smem")
            # ..._PREFERRED_SHARED_MEMORY_CARVEOUT: all of L1 as shared memory, so
            # that a kernel sized for two CTAs an SM gets them.
            self._check(self.cuda.cuFuncSetAttribute(self.function, 9, 100), "carveout")
        self.sms = torch.cuda.get_device_properties(0).multi_processor_count

    def ctas_per_sm(self, threads):
        """CTAs of `threads` threads (and the kernel's shared memory) an SM holds."""
        count = ctypes.c_int()
        self._check(self.cuda.cuOccupancyMaxActiveBlocksPerMultiprocessor(
            ctypes.byref(count), self.function, threads, self.shared_bytes), "occupancy")
        return count.value

    def _check(self, rc, what):
        if rc != 0:
            raise RuntimeError(f"CUDA driver error {rc} in {what}")

    def launch(self, ctas, threads, *args):
        """`args`: ctypes values, in the entry's parameter order."""
        params = (ctypes.c_void_p * len(args))(
            *[ctypes.cast(ctypes.byref(a), ctypes.c_void_p) for a in args])
        stream = torch.cuda.current_stream().cuda_stream
        self._check(self.cuda.cuLaunchKernel(self.function, ctas, 1, 1, threads, 1, 1,
                                             self.shared_bytes, ctypes.c_void_p(stream),
                                             params, None), "launch")


class PeakKernel(DriverKernel):
    """The micro-benchmark: `ctas_per_sm` (4) CTAs of WARPS warps per SM."""

    def __init__(self, chains=CHAINS, kind="bf16", operands="constant", ctas_per_sm=4):
        super().__init__(peak_ptx(chains, kind, operands), "mma_peak")
        self.k = MMA[kind][1]
        self.ctas = ctas_per_sm * self.sms
        self.out = torch.empty(self.ctas * WARPS * 32, device="cuda")
        self.chains = chains

    def launch(self, iters):
        super().launch(self.ctas, WARPS * 32, ctypes.c_uint64(self.out.data_ptr()),
                       ctypes.c_uint32(iters))

    def flops(self, iters):
        return 2.0 * 16 * 8 * self.k * self.chains * iters * WARPS * self.ctas


def measure_peak(iters=4096, kind="bf16", operands="constant"):
    peak = PeakKernel(kind=kind, operands=operands)
    t = time_interleaved({"peak": lambda: peak.launch(iters)})["peak"]
    return peak.flops(iters) / (t * 1e-6), t


def variants(spec):
    """ggc's kernels of one op: for sm_80 as planned for the card in hand
    (its shared memory: 128x256 tiles of 64x64 warps where four stages
    fit), as planned for an A100's 163 KiB where that differs (128x128,
    5 stages), and for sm_90a."""
    text = ir.grouped_matmul("k", **spec)
    kernels = {"sm_80": ggc.Kernel(text, target="sm_80")}
    here = ggc.compile_ir(text, emit="gg-config", arch="sm_80",
                          shared_memory_bytes=ggc.compiler.device_shared_memory_bytes())
    a100 = ggc.compile_ir(text, emit="gg-config", arch="sm_80").plans[0]["attributes"]
    if here.plans[0]["attributes"] != a100:
        kernels["sm_80 A100's plan"] = ggc.Kernel(ir.grouped_matmul(
            "k", config=a100["config"], kernel_plan=a100["kernel_plan"], **spec), target="sm_80")
    kernels["sm_90a"] = ggc.Kernel(text, target="sm_90a")
    return kernels


def check_and_time(kernels, args, out, ref, rows=None):
    """Each kernel run once on a NaN-poisoned `out` and compared with the
    fp64 `ref` (on its first `rows` rows per group when given), and the
    callables that time them: their errors and the callables."""
    errors = {}
    for label, kern in kernels.items():
        out.fill_(float("nan"))
        kern(*args, out)
        got = out if rows is None else out[:, :rows]
        errors[label] = ((got.double() - ref).norm() / ref.norm()).item()
    fns = {f"ggc {label}": (lambda kern=kern: kern(*args, out))
           for label, kern in kernels.items()}
    return errors, fns


def contiguous_inputs(t, g, n, k, seed=0, equal=False):
    """A contiguous bf16 problem: ragged groups' ends and offsets (equal
    groups of t / g rows with `equal`), A, B and an output."""
    if equal:
        ends = torch.arange(1, g + 1, device="cuda", dtype=torch.int32) * (t // g)
        offsets = torch.cat([torch.zeros(1, dtype=torch.int32, device="cuda"), ends])
    else:
        sizes, ends, offsets = ragged_groups(t, g, seed)
    a = torch.randn(t, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(g, n, k, device="cuda").to(torch.bfloat16)
    out = torch.empty(t, n, device="cuda", dtype=torch.bfloat16)
    return ends, offsets, a, b, out


def contiguous_case(t, g, n, k, seed=0, equal=False):
    ends, offsets, a, b, out = contiguous_inputs(t, g, n, k, seed, equal)
    kernels = variants(dict(layout="contiguous", num_groups=g, n=n, k=k))
    ref = torch._grouped_mm(a, b.transpose(1, 2), offs=ends).double()
    errors, fns = check_and_time(kernels, (a, b, offsets), out, ref)
    fns["torch._grouped_mm"] = lambda: torch._grouped_mm(a, b.transpose(1, 2), offs=ends)
    label = f"contiguous bf16 T={t} G={g}{' equal' if equal else ''} N={n} K={k}"
    return label, fns, 2.0 * t * n * k, errors


def masked_case(g, m, n, k, rows):
    a = torch.randn(g, m, k, device="cuda").to(torch.bfloat16)
    b = torch.randn(g, n, k, device="cuda").to(torch.bfloat16)
    counts = torch.full((g,), rows, dtype=torch.int32, device="cuda")
    out = torch.empty(g, m, n, device="cuda", dtype=torch.bfloat16)
    kernels = variants(dict(layout="masked", num_groups=g, m=m, n=n, k=k, expected_m=rows))
    ref = torch.bmm(a[:, :rows].double(), b.double().transpose(1, 2))
    errors, fns = check_and_time(kernels, (a, b, counts), out, ref, rows)
    return f"masked bf16 G={g} M={m} rows={rows} N={n} K={k}", fns, 2.0 * g * rows * n * k, errors


def fp8_masked_case(g, m, n, k, rows):
    """DeepGEMM's masked FP8 layout (1x128 M-major scales of A, 128x128 of
    B): sm_89's mma.sync m16n8k32 path against sm_90a's."""
    a = torch.randn(g, m, k, device="cuda").to(torch.float8_e4m3fn)
    b = torch.randn(g, n, k, device="cuda").to(torch.float8_e4m3fn)
    sa = torch.rand(g, -(-k // 128), m, device="cuda") + 0.5
    sb = torch.rand(g, -(-n // 128), -(-k // 128), device="cuda") + 0.5
    counts = torch.full((g,), rows, dtype=torch.int32, device="cuda")
    out = torch.empty(g, m, n, device="cuda", dtype=torch.bfloat16)
    spec = dict(layout="masked", num_groups=g, m=m, n=n, k=k, expected_m=rows,
                dtype="f8E4M3FN", a_scale="block_mn", b_scale="block")
    kernels = {target: ggc.Kernel(ir.grouped_matmul("k", **spec), target=target)
               for target in ("sm_89", "sm_90a")}
    a_deq = a.double() * sa.repeat_interleave(128, 1)[:, :k].transpose(1, 2).double()
    b_deq = b.double() * sb.repeat_interleave(128, 1)[:, :n].repeat_interleave(128, 2)[
        :, :, :k].double()
    ref = torch.bmm(a_deq[:, :rows], b_deq.transpose(1, 2))
    errors, fns = check_and_time(kernels, (a, b, counts, sa, sb), out, ref, rows)
    return (f"masked fp8 1x128/128x128 G={g} M={m} rows={rows} N={n} K={k}", fns,
            2.0 * g * rows * n * k, errors)


def fp32_case(t, g, n, k, seed=3):
    """f32 operands: 3xTF32 (f32 accuracy) on the sm_80 path and on sm_90a
    (where it is mma.sync too), TF32 by wgmma, and torch's f32 loop."""
    sizes, ends, offsets = ragged_groups(t, g, seed)
    a = torch.randn(t, k, device="cuda")
    b = torch.randn(g, n, k, device="cuda")
    out = torch.empty(t, n, device="cuda")
    spec = dict(layout="contiguous", num_groups=g, n=n, k=k, dtype="f32", out_dtype="f32")
    kernels = {"sm_80 fp32": ggc.Kernel(ir.grouped_matmul("k", **spec), target="sm_80"),
               "sm_90a fp32": ggc.Kernel(ir.grouped_matmul("k", **spec), target="sm_90a"),
               "sm_90a tf32": ggc.Kernel(ir.grouped_matmul("k", tf32=True, **spec),
                                         target="sm_90a")}
    bounds = [0] + ends.tolist()
    ref = torch.cat([a[s:e].double() @ b[i].double().T
                     for i, (s, e) in enumerate(zip(bounds, bounds[1:]))])
    errors, fns = check_and_time(kernels, (a, b, offsets), out, ref)

    def loop():
        for i, (s, e) in enumerate(zip(bounds, bounds[1:])):
            if e > s:
                torch.matmul(a[s:e], b[i].T, out=out[s:e])
    fns["torch f32 per-group loop"] = loop
    return f"contiguous f32 T={t} G={g} N={n} K={k}", fns, 2.0 * t * n * k, errors


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", help="write the results here")
    args = parser.parse_args()
    name = torch.cuda.get_device_name()
    peak, peak_us = measure_peak()
    print(f"{name}: mma.sync m16n8k16 bf16 peak {peak / 1e12:.1f} TFLOPS ({peak_us:.1f} us)")
    results = {"device": name, "mma_sync_peak_tflops": peak / 1e12, "cases": []}
    # Equal groups of 11 whole 128-row tiles: 2,112 tiles of 128x128
    # (1,056 of 128x256) fill 16 (8) waves of 132 CTAs, so neither padded
    # rows nor a part-filled last wave stand between the kernel and the peak.
    cases = [contiguous_case(8448, 6, 4096, 4096, equal=True),
             contiguous_case(8192, 8, 4096, 4096), contiguous_case(16384, 32, 4096, 2048, seed=1),
             contiguous_case(4096, 64, 2048, 7168, seed=2), masked_case(16, 128, 4096, 7168, 128),
             masked_case(16, 128, 4096, 7168, 24)]
    fp8_peak = measure_peak(kind="e4m3")[0]
    print(f"{name}: mma.sync m16n8k32 e4m3 peak {fp8_peak / 1e12:.1f} TFLOPS")
    results["mma_sync_e4m3_peak_tflops"] = fp8_peak / 1e12
    cases.append(fp8_masked_case(16, 128, 4096, 7168, 128))
    cases.append(fp32_case(8192, 8, 4096, 4096))
    for label, fns, flops, errors in cases:
        kind = "e4m3" if "fp8" in label else "tf32" if "f32" in label else "bf16"
        # The peak interleaved with the kernels (the same clocks and power)
        # and alone right after them: the clocks drift.
        peak_kernel, peak_iters = PeakKernel(kind=kind), 4096
        fns["mma.sync peak"] = lambda: peak_kernel.launch(peak_iters)
        times = time_interleaved(fns)
        interleaved = peak_kernel.flops(peak_iters) / (times.pop("mma.sync peak") * 1e-6)
        alone = measure_peak(kind=kind)[0]
        if "f32" in label:  # 3xTF32: three tf32 products per multiply
            interleaved, alone = interleaved / 3, alone / 3
        row = {"case": label, "errors": errors, "us": times,
               "tflops": {k: flops / (t * 1e-6) / 1e12 for k, t in times.items()},
               "peak_tflops": alone / 1e12, "peak_interleaved_tflops": interleaved / 1e12}
        best = max(v for k, v in row["tflops"].items() if "sm_8" in k) * 1e12
        row["sm_80 of mma.sync peak"] = best / alone
        row["sm_80 of mma.sync peak interleaved"] = best / interleaved
        results["cases"].append(row)
        print(f"{label}: " + ", ".join(f"{k} {t:.1f} us ({row['tflops'][k]:.0f} TFLOPS)"
                                       for k, t in times.items())
              + f"; best sm_80 kernel {100 * best / alone:.1f}% of the mma.sync peak alone "
              f"({alone / 1e12:.0f}), {100 * best / interleaved:.1f}% of it interleaved "
              f"({interleaved / 1e12:.0f}); rel err " +
              ", ".join(f"{k} {e:.1e}" for k, e in errors.items()))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
