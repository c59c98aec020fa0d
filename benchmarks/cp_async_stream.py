"""cp.async streaming throughput per SM on the card in hand: `threads`
threads of one CTA per SM copy 16-byte pieces of a buffer into a ring of
`stages` stages of `stage_kb` KB, at most stages-1 groups in flight
(cp.async.wait_group), nothing else running: what the sm_80 kernels'
producer could get at best.

    python3 benchmarks/cp_async_stream.py
"""
import ctypes

import torch

def ptx(threads, stages, stage_kb, iters_per_cta):
    per_thread = stage_kb * 1024 // 16 // threads
    copies = "\n".join(
        f"    cp.async.cg.shared.global [%dst+{j*threads*16}], [%src+{j*threads*16}], 16;"
        for j in range(per_thread))
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
    cvt.u64.u32 %o, %i;
    mul.lo.u64 %o, %o, {stage_kb*1024};
    add.u64 %o, %o, %blk64;
    rem.u64 %o, %o, %span;
    add.u64 %src, %b, %o;
    mad.lo.u64 %src, %t64, 16, %src;
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

class K:
    def __init__(self, threads, stages, stage_kb, ctas_per_sm=1):
        self.cuda = ctypes.CDLL("libcuda.so.1")
        self.m, self.f = ctypes.c_void_p(), ctypes.c_void_p()
        assert self.cuda.cuModuleLoadData(ctypes.byref(self.m), ptx(threads, stages, stage_kb, 0).encode() + b"\0") == 0
        assert self.cuda.cuModuleGetFunction(ctypes.byref(self.f), self.m, b"k") == 0
        self.smem = stages * stage_kb * 1024
        assert self.cuda.cuFuncSetAttribute(self.f, 8, self.smem) == 0  # MAX_DYNAMIC_SHARED_SIZE_BYTES
        self.sms = torch.cuda.get_device_properties(0).multi_processor_count
        self.ctas, self.threads, self.stage_kb = ctas_per_sm * self.sms, threads, stage_kb
    def launch(self, buf, span, iters):
        b = ctypes.c_uint64(buf.data_ptr()); sp = ctypes.c_uint64(span); n = ctypes.c_uint32(iters)
        params = (ctypes.c_void_p * 3)(*[ctypes.cast(ctypes.byref(x), ctypes.c_void_p) for x in (b, sp, n)])
        s = torch.cuda.current_stream().cuda_stream
        rc = self.cuda.cuLaunchKernel(self.f, self.ctas, 1, 1, self.threads, 1, 1, self.smem, ctypes.c_void_p(s), params, None)
        assert rc == 0, rc

def median_us(f, reps=15):
    ts = []
    for _ in range(reps):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record(); f(); b.record(); b.synchronize(); ts.append(a.elapsed_time(b) * 1e3)
    return sorted(ts)[len(ts) // 2]

def main():
    torch.empty(1, device="cuda")
    big = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    for span_mb in (16, 1024):
        for threads, stages, kb, cps in [(128, 5, 32, 1), (128, 4, 32, 1), (128, 3, 32, 1), (256, 5, 32, 1),
                                        (128, 8, 16, 1), (32, 5, 32, 1),
                                        (384, 5, 32, 1)]:
            k = K(threads, stages, kb, cps)
            iters = 400
            span = span_mb << 20
            t = median_us(lambda: k.launch(big, span, iters))
            bytes_ = k.ctas * iters * kb * 1024
            print(f"span {span_mb:5d} MB threads {threads:3d} stages {stages} stage {kb} KB: "
                  f"{bytes_/(t*1e-6)/1e12:6.2f} TB/s total, {bytes_/(t*1e-6)/k.ctas/1e9:6.1f} GB/s per SM")


if __name__ == "__main__":
    main()
