"""Checks shared by the GPU tests: relative error against an fp64
reference, and G+1 offsets of group sizes on the GPU."""

import torch


def rel_err(out, ref):
    out = out.double()
    assert torch.isfinite(out).all()
    return ((out - ref).norm() / ref.norm()).item()


def offsets_of(sizes):
    return torch.tensor([0] + list(torch.tensor(sizes).cumsum(0)), dtype=torch.int32,
                        device="cuda")
