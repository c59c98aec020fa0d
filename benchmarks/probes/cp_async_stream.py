"""cp.async streaming throughput per SM on the card in hand: `threads`
threads of one CTA per SM copy 16-byte pieces of a buffer into a ring of
`stages` stages of `stage_kb` KB, at most stages-1 groups in flight
(cp.async.wait_group), nothing else running: what the sm_80 kernels'
producer could get at best. Two patterns: "linear" (each warp copies 512
contiguous bytes an instruction) and "rows" (the kernel's: a stage is 256
rows of 128 bytes, 8 KB apart, each warp copying 4 rows an instruction;
the next stage is the next 128 bytes of the same rows, for 64 stages, then
other rows).

    python3 benchmarks/probes/cp_async_stream.py
"""
import ctypes
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from bench_grouped_gemm import time_interleaved  # noqa: E402
from bench_sm80 import DriverKernel  # noqa: E402

PITCH, K_BLOCKS = 8192, 64  # "rows": K = 4096 bf16, 64-wide K blocks


def rows_source(threads, stage_kb, ctas):
    """PTX that points %src at this thread's first piece of stage %i in
    the "rows" pattern (%span bytes of rows of PITCH bytes)."""
    rows_per_stage = stage_kb * 1024 // 128
    return f"""    div.u32 %s, %i, {K_BLOCKS};
    mad.lo.u32 %s, %s, {ctas}, %blk;
    mul.lo.u32 %s, %s, {rows_per_stage};
    cvt.u32.u64 %st, %span;
    div.u32 %st, %st, {PITCH};
    rem.u32 %s, %s, %st;
    shr.u32 %st, %t, 3;
    add.u32 %s, %s, %st;
    mul.wide.u32 %o, %s, {PITCH};
    rem.u32 %st, %i, {K_BLOCKS};
    shl.b32 %st, %st, 7;
    and.b32 %s, %t, 7;
    mad.lo.u32 %st, %s, 16, %st;
    cvt.u64.u32 %t64, %st;
    add.u64 %o, %o, %t64;
    add.u64 %src, %b, %o;"""


def ptx(threads, stages, stage_kb, pattern="linear", ctas=132):
    per_thread = stage_kb * 1024 // 16 // threads
    step = threads * 16 if pattern == "linear" else threads // 8 * PITCH
    copies = "\n".join(
        f"    cp.async.cg.shared.global [%dst+{j*threads*16}], [%src+{j*step}], 16;"
        for j in range(per_thread))
    linear = f"""    cvt.u64.u32 %o, %i;
    mul.lo.u64 %o, %o, {stage_kb*1024};
    add.u64 %o, %o, %blk64;
    rem.u64 %o, %o, %span;
    add.u64 %src, %b, %o;
    mad.lo.u64 %src, %t64, 16, %src;"""
    source = linear if pattern == "linear" else rows_source(threads, stage_kb, ctas)
    return f""".version 8.4
.target sm_80
.address_size 64
.extern .shared .align 1024 .b8 ring[];
.visible .entry k(.param .u64 buf, .param .u64 span, .param .u32 iters)
.maxntid {threads}, 1, 1
{{
    .reg .b32 %t, %blk, %i, %n, %s, %sbase, %dst, %st;
    .reg .pred %p;
    .reg .u64 %b, %span, %src, %o, %t64, %blk64;
    ld.param.u64 %b, [buf]; ld.param.u64 %span, [span]; ld.param.u32 %n, [iters];
    mov.u32 %t, %tid.x; mov.u32 %blk, %ctaid.x;
    mov.u32 %sbase, ring;
    cvt.u64.u32 %t64, %t;
    mul.wide.u32 %blk64, %blk, {stage_kb*1024*7};
    mov.u32 %i, 0;
LOOP:
    rem.u32 %s, %i, {stages};
    mad.lo.u32 %dst, %s, {stage_kb*1024}, %sbase;
    mad.lo.u32 %dst, %t, 16, %dst;
{source}
{copies}
    cp.async.commit_group;
    cp.async.wait_group {stages-1};
    add.u32 %i, %i, 1;
    setp.lt.u32 %p, %i, %n;
    @%p bra LOOP;
    cp.async.wait_all;
    ret;
}}
"""

class K(DriverKernel):
    """One CTA of `threads` threads per SM streaming into `stages` stages."""

    def __init__(self, threads, stages, stage_kb, pattern="linear"):
        sms = torch.cuda.get_device_properties(0).multi_processor_count
        super().__init__(ptx(threads, stages, stage_kb, pattern, sms),
                         shared_bytes=stages * stage_kb * 1024)
        self.ctas, self.threads, self.stage_kb = self.sms, threads, stage_kb

    def launch(self, buf, span, iters):
        super().launch(self.ctas, self.threads, ctypes.c_uint64(buf.data_ptr()),
                       ctypes.c_uint64(span), ctypes.c_uint32(iters))


def main():
    torch.empty(1, device="cuda")
    big = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    iters = 400
    for span_mb in (16, 1024):
        kernels = {key: K(*key)
                   for key in [(128, 5, 32), (128, 4, 32), (128, 3, 32), (256, 5, 32),
                               (128, 8, 16), (32, 5, 32), (384, 5, 32),
                               (128, 5, 32, "rows"), (128, 3, 32, "rows"), (256, 5, 32, "rows")]}
        times = time_interleaved({key: (lambda k=k: k.launch(big, span_mb << 20, iters))
                                  for key, k in kernels.items()})
        for key, t in times.items():
            threads, stages, kb = key[:3]
            per_second = kernels[key].ctas * iters * kb * 1024 / (t * 1e-6)
            print(f"span {span_mb:5d} MB {key[3] if len(key) > 3 else 'linear':6s} "
                  f"threads {threads:3d} stages {stages} stage {kb} KB: "
                  f"{per_second / 1e12:6.2f} TB/s total, "
                  f"{per_second / kernels[key].ctas / 1e9:6.1f} GB/s per SM")


if __name__ == "__main__":
    main()
