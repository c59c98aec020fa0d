"""Which dispatch keys a torch op's autograd kernel receives for a call on
CUDA tensors, and whether the ops' eager kernels count it as plain
(torch_ops._DIRECT): prints both for a call with and without a gradient."""

import torch

import ggc  # noqa: F401
from ggc import torch_ops

seen = []
original = torch_ops._keyset_of
torch_ops._keyset_of = lambda bits: (seen.append(bits), original(bits))[1]
x = torch.randn(64, 128, device="cuda").bfloat16()
w = torch.randn(2, 128, 128, device="cuda").bfloat16()
offsets = torch.tensor([0, 30, 64], dtype=torch.int32, device="cuda")
print("x keys:", torch._C._dispatch_keys(x))
print(torch._C._dispatch_dump("ggc::grouped_mm"))
print("tls local exclude/include:", torch._C._dispatch_tls_local_exclude_set(),
      torch._C._dispatch_tls_local_include_set())
for label, grad in (("no grad", False), ("needs grad", True)):
    seen.clear()
    xi = x.clone().requires_grad_(grad)
    y = torch.ops.ggc.grouped_mm(xi, w, offsets)
    for bits in seen:
        ks = original(bits)
        below = bits & torch_ops._AFTER_AUTOGRAD_BITS
        print(label, "keys:", ks, "below autograd:", original(below),
              "plain:", below in torch_ops._DIRECT, "grad_fn:", y.grad_fn)
print("direct sets:", [original(b) for b in torch_ops._DIRECT])
print(torch._C._dispatch_dump("ggc::grouped_mm"))
