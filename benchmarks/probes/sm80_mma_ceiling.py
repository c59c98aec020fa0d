"""Ceilings of mma.sync on the card in hand: chains on registers, and loops
of ldmatrix + mma.sync shaped like the sm_80 kernel's consumer warps (per K
step, one ldmatrix.x4 per m16 block of A and per 16 columns of B, then the
m16n8k16 products), from shared memory without bank conflicts and without
loads from global memory, at the kernel's occupancy and others.

    python3 benchmarks/probes/sm80_mma_ceiling.py
"""
import ctypes
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench_grouped_gemm import time_interleaved  # noqa: E402
from bench_sm80 import DriverKernel, store_sum  # noqa: E402

def ptx_kernel(warps, blocks, n8, steps_per_iter, use_ldsm, copy_warps=0, copy_kb=32):
    acc = lambda i, j: "{" + ", ".join(f"%c{4*(i*n8+j)+r}" for r in range(4)) + "}"
    lines = []
    for s in range(steps_per_iter):
        if use_ldsm:
            for i in range(blocks):
                lines.append(f"    ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%a{4*i}, %a{4*i+1}, %a{4*i+2}, %a{4*i+3}}}, [%sa+{(s*16+i)*512 % 16384}];")
            for j in range(0, n8, 2):
                lines.append(f"    ldmatrix.sync.aligned.m8n8.x4.shared.b16 {{%b{2*j}, %b{2*j+1}, %b{2*j+2}, %b{2*j+3}}}, [%sa+{(s*16+8+j)*512 % 16384}];")
        for i in range(blocks):
            for j in range(n8):
                lines.append(f"    mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {acc(i,j)}, "
                             f"{{%a{4*i}, %a{4*i+1}, %a{4*i+2}, %a{4*i+3}}}, {{%b{2*j}, %b{2*j+1}}}, {acc(i,j)};")
    nacc = 4 * blocks * n8
    inits = "\n".join(f"    mov.f32 %c{i}, 0f00000000;" for i in range(nacc))
    ainit = "\n".join(f"    mov.b32 %a{i}, 0x3c003c0{i%8};" for i in range(4*blocks))
    binit = "\n".join(f"    mov.b32 %b{i}, 0x3c003c0{i%8};" for i in range(2*n8))
    return f""".version 8.4
.target sm_80
.address_size 64
.visible .entry k(.param .u64 out, .param .u32 iters, .param .u64 src, .param .u64 span)
.maxntid {32*(warps + copy_warps)}, 1, 1
{{
    .reg .b32 %a<{4*blocks}>, %b<{2*n8}>, %i, %n, %t, %blk, %dim, %lane, %sa, %ct, %cd;
    .reg .f32 %c<{nacc}>;
    .reg .pred %p;
    .reg .u64 %o, %off, %cs, %cspan, %cb, %co;
    .shared .align 1024 .b8 buf[16384];
    .shared .align 1024 .b8 ring[16384];
{ainit}
{binit}
{inits}
    mov.u32 %t, %tid.x;
    and.b32 %lane, %t, 31;
    mov.u32 %sa, buf;
    mad.lo.u32 %sa, %lane, 16, %sa;
    ld.param.u32 %n, [iters];
    mov.u32 %i, 0;
{copy_loop(warps, copy_warps, copy_kb)}
LOOP:
{chr(10).join(lines)}
    add.u32 %i, %i, 1;
    setp.lt.u32 %p, %i, %n;
    @%p bra LOOP;
{store_sum(nacc)}
"""


def copy_loop(warps, copy_warps, copy_kb):
    """Warps `warps ..` stream `copy_kb` KB a loop iteration from global
    memory by cp.async (one group in flight) into 16 KB of shared memory
    (what lands there is never read), as the kernel's producer fills a
    stage per K block, then exit; the others go on to LOOP."""
    if not copy_warps:
        return ""
    threads = 32 * copy_warps
    per_thread = copy_kb * 1024 // 16 // threads
    copies = "\n".join(f"    cp.async.cg.shared.global [%cd+{j * threads * 16 % 16384}], "
                       f"[%cs+{j * threads * 16}], 16;" for j in range(per_thread))
    return f"""    setp.lt.u32 %p, %t, {32 * warps};
    @%p bra LOOP;
    sub.u32 %ct, %t, {32 * warps};
    ld.param.u64 %cb, [src]; ld.param.u64 %cspan, [span];
    mov.u32 %blk, %ctaid.x;
    mul.wide.u32 %co, %blk, {copy_kb * 1024 * 7};
    mov.u32 %sa, ring;
    mad.lo.u32 %cd, %ct, 16, %sa;
COPY:
    rem.u64 %cs, %co, %cspan;
    add.u64 %cs, %cs, %cb;
    mul.wide.u32 %off, %ct, 16;
    add.u64 %cs, %cs, %off;
{copies}
    cp.async.commit_group;
    cp.async.wait_group 1;
    add.u64 %co, %co, {copy_kb * 1024};
    add.u32 %i, %i, 1;
    setp.lt.u32 %p, %i, %n;
    @%p bra COPY;
    cp.async.wait_all;
    ret;"""


class K(DriverKernel):
    """One case: `warps` MMA warps (`blocks` m16 blocks by `n8` 8-column
    blocks each) and `copy_warps` copying warps per CTA, `ctas_per_sm` CTAs
    per SM."""

    def __init__(self, warps, blocks, n8, ctas_per_sm, use_ldsm, steps=4, copy_warps=0,
                 copy_kb=32):
        super().__init__(ptx_kernel(warps, blocks, n8, steps, use_ldsm, copy_warps, copy_kb))
        self.ctas = ctas_per_sm * self.sms
        self.warps, self.blocks, self.n8, self.steps = warps, blocks, n8, steps
        self.threads = 32 * (warps + copy_warps)
        self.out = torch.empty(self.ctas * self.threads, device="cuda")
        self.src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda") if copy_warps else None

    def launch(self, iters=2048):
        super().launch(self.ctas, self.threads, ctypes.c_uint64(self.out.data_ptr()),
                       ctypes.c_uint32(iters),
                       ctypes.c_uint64(self.src.data_ptr() if self.src is not None else 0),
                       ctypes.c_uint64(1 << 30))

    def flops(self, iters=2048):
        return 2.0 * 16 * 8 * 16 * self.blocks * self.n8 * self.steps * iters * self.warps * self.ctas


def main():
    torch.empty(1, device="cuda")
    cases = {
      "regs 8w x4cta 2x8": (8, 2, 8, 4, False),
      "regs 8w x1cta 2x8": (8, 2, 8, 1, False),
      "regs 4w x1cta 4x8": (4, 4, 8, 1, False),
      "ldsm 8w x1cta 2x8 (sm_80 plan: 32x64 warps)": (8, 2, 8, 1, True),
      "ldsm 8w x2cta 2x8": (8, 2, 8, 2, True),
      "ldsm 4w x1cta 4x8 (64x64)": (4, 4, 8, 1, True),
      "ldsm 8w x1cta 4x8 (64x64)": (8, 4, 8, 1, True),
      "ldsm 8w x1cta 1x16 (wc1)": (8, 1, 16, 1, True),
      "ldsm 12w x1cta 2x8": (12, 2, 8, 1, True),
      "ldsm 16w x1cta 2x8": (16, 2, 8, 1, True),
      # The kernel's shape with its producer's traffic: 4 more warps that
      # stream 32 KB a K block by cp.async from a 1 GB buffer.
      "ldsm 8w x1cta 2x8 + cp.async 32 KB/iter": (8, 2, 8, 1, True, 4, 4),
      "ldsm 8w x1cta 2x8 + cp.async 16 KB/iter": (8, 2, 8, 1, True, 4, 4, 16),
      # Wider warp tiles with their tiles' traffic: 128x192 (64x48 warps,
      # 40 KB a K block) and 128x256 (64x64 warps, 48 KB).
      "ldsm 8w x1cta 4x6 (64x48)": (8, 4, 6, 1, True),
      "ldsm 8w x1cta 4x6 + cp.async 40 KB/iter": (8, 4, 6, 1, True, 4, 4, 40),
      "ldsm 8w x1cta 4x8 + cp.async 48 KB/iter": (8, 4, 8, 1, True, 4, 4, 48),
    }
    ks = {name: K(*args) for name, args in cases.items()}
    times = time_interleaved({name: k.launch for name, k in ks.items()})
    for name, t in times.items():
        print(f"{name:36s} {ks[name].flops()/(t*1e-6)/1e12:6.0f} TFLOPS")


if __name__ == "__main__":
    main()
