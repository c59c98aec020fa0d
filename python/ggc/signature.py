"""A call's signature: what every cached launch is found by (ggc.ops, the
torch ops, the drop-ins, @ggc.jit, ggc.Kernel, ggc.moe's checks).

`of(args)` is a hashable key, equal for two calls exactly when each
argument is None in both, the same int, float, bool or str constant
(type and value), or a tensor of the same type, dtype, layout, shape,
strides, device, requires_grad and negative bit. Addresses are not in it: a cached launch reads
them from each call.

The C++ module ggc._signature (python/src/signature.cpp) packs torch
tensors' fields into one bytes object straight from the tensor, a few
times cheaper than Python's attribute reads; it is used when it was built
against the torch this process imported, and for arguments it covers
(plain strided tensors and Parameters, constants, None). Otherwise the key is
Python's tuple. The two kinds of key never compare equal, so one cache
may hold both.
"""

from __future__ import annotations

import os
import sys
from typing import Any, List, Optional, Sequence

_CONSTANTS = (int, float, bool, str)

_native = ()  # ggc._signature.signature, None without it; () until looked for
_native_addresses = None  # ggc._signature.addresses, set with _native
_native_empty = None  # ggc._signature.empty, set with _native
_native_module = None  # ggc._signature, where its build matches the imported torch


def _load_native():
    """ggc._signature's function, when built and the torch it was built
    against (version, commit and C++ ABI) is imported; None otherwise.
    Looked for once torch is imported."""
    global _native, _native_addresses, _native_empty, _native_module
    torch = sys.modules.get("torch")
    if torch is None:
        return None  # no torch tensors yet: looked for again on a later call
    try:
        from . import _signature
    except ImportError:
        _native = None
    else:
        same_build = (_signature.torch_version == torch.__version__
                      and _signature.torch_git_version == torch.version.git_version
                      and _signature.cxx11_abi == int(torch._C._GLIBCXX_USE_CXX11_ABI))
        _native = _signature.signature if same_build else None
        # (a module built before addresses() or empty() existed has none)
        _native_addresses = getattr(_signature, "addresses", None) if same_build else None
        _native_empty = getattr(_signature, "empty", None) if same_build else None
        _native_module = _signature if same_build else None
    return _native


def op_kernel_installer():
    """ggc._signature.install_op_kernel (the torch ops' C++ kernels:
    python/src/op_kernels.cpp), or None without a module built against
    the imported torch, or with GGC_PYTHON_OP_KERNELS=1 in the
    environment (an A/B of the two: the ops keep Python kernels)."""
    if os.environ.get("GGC_PYTHON_OP_KERNELS", "") not in ("", "0"):
        return None
    if _native == ():
        _load_native()
    return getattr(_native_module, "install_op_kernel", None)


def forget_op_plans() -> None:
    """Drops every launch the torch ops' C++ kernels keep: what decided
    them (ggc's target, SMs, shared memory, DRAM bandwidth or validation
    default) changed.
    Their next calls take the Python kernels, which keep them again."""
    forget = getattr(_native_module, "forget_op_plans", None)
    if forget is not None:
        forget()


def op_kernel_hits() -> int:
    """How many calls the torch ops' C++ kernels have launched without
    Python (0 without them)."""
    hits = getattr(_native_module, "op_kernel_hits", None)
    return 0 if hits is None else hits()


def of(args: Sequence[Any]) -> Optional[Any]:
    """The signature of `args` (a tuple or list); None when one argument is
    neither None, a constant nor a tensor-like object with dtype, shape,
    stride() and device (such a call takes the checked path every time)."""
    native = _native if _native != () else _load_native()
    if native is not None:
        key = native(args)
        if key is not None:
            return key
    return _python_signature(args)


def _python_signature(args: Sequence[Any]) -> Optional[tuple]:
    try:
        return tuple([None if a is None else (type(a), a) if type(a) in _CONSTANTS else
                      (type(a), a.dtype, a.layout, a.shape, a.stride(), a.device,
                       a.requires_grad, a.is_neg())
                      for a in args])
    except (AttributeError, TypeError, RuntimeError):  # RuntimeError: no strides
        return None


def addresses(values: Sequence[Any], positions: Sequence[int]) -> List[int]:
    """values[i].data_ptr() for each i of `positions`: what a cached launch
    passes (read in C++ where ggc._signature is in use)."""
    if _native_addresses is not None:
        found = _native_addresses(values, positions)
        if found is not None:
            return found
    return [values[i].data_ptr() for i in positions]


def empty(shape: tuple, like: Any) -> Any:
    """torch.empty(shape, dtype=like.dtype, device=like.device): a cached
    launch's output (made in C++ where ggc._signature is in use)."""
    if _native_empty is not None:
        made = _native_empty(shape, like)
        if made is not None:
            return made
    import torch
    return torch.empty(shape, dtype=like.dtype, device=like.device)
