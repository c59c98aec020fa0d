"""Checks shared by the GPU tests: relative error against an fp64
reference, G+1 offsets of group sizes on the GPU, and the compiler's
refusal of a kernel by target."""

import torch

# Under another target (GGC_TARGET=sm_80 runs the GPU suite through the
# sm_80 lowering on a Hopper card), a kernel that target's lowering
# refuses by name says "cannot be lowered for sm_80: ...": reported as
# not run, with the compiler's reason; any other error stays a failure.
REFUSED_BY_TARGET = "cannot be lowered for "


def refusal(error: BaseException):
    """The compiler's reason when `error` is a refusal by target, else None."""
    message = str(error)
    if REFUSED_BY_TARGET not in message:
        return None
    return message[message.index(REFUSED_BY_TARGET):].splitlines()[0]


def rel_err(out, ref):
    out = out.double()
    assert torch.isfinite(out).all()
    return ((out - ref).norm() / ref.norm()).item()


def offsets_of(sizes):
    return torch.tensor([0] + list(torch.tensor(sizes).cumsum(0)), dtype=torch.int32,
                        device="cuda")


def group_slices(sizes):
    """(group, slice of its rows) for each non-empty group of contiguous
    `sizes`, in order."""
    start = 0
    for group, size in enumerate(sizes):
        if size:
            yield group, slice(start, start + size)
        start += size
