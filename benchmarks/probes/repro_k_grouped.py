"""Runs one K-major k_grouped kernel (a debugging aid for compute-sanitizer)."""
import os
import sys

import torch

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "..", "python"))
from ggc import Kernel, ir  # noqa: E402

zero_tail = os.environ.get("GGC_REPRO_SIZES", "0,1,7,63,64,65,127,128,129,1112")
sizes = [int(x) for x in zero_tail.split(",")]
g, m, n = len(sizes), 200, 136
kern = Kernel(ir.grouped_matmul("k", layout="k_grouped", num_groups=g, n=n, k=None, m=m,
                                b_layout="nk", out_dtype="f32", dtype="bf16"))
total = sum(sizes)
a = torch.randn(m, total, device="cuda").bfloat16()
b = torch.randn(n, total, device="cuda").bfloat16()
offsets = torch.tensor([0] + list(torch.tensor(sizes).cumsum(0)), dtype=torch.int32,
                       device="cuda")
out = torch.zeros(g, m, n, device="cuda")
kern(a, b, offsets, out)
torch.cuda.synchronize()
ref = torch.stack([a[:, s:e].double() @ b[:, s:e].double().T for s, e in
                   zip(offsets[:-1].tolist(), offsets[1:].tolist())])
print("rel err", ((out.double() - ref).norm() / ref.norm()).item())
