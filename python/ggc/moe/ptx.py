"""Compiling ggc.moe's small kernels (the permutation, the quantisation,
SwiGLU, the combine: gg ops) and launching them through ggc's runtime: each kernel is loaded once, and each
launch shape (grid and integer arguments) becomes one launch record, so a
call costs the record's cuLaunchKernelEx and the addresses' conversion."""

from __future__ import annotations

import threading
from typing import Callable, Dict, Sequence, Tuple

import torch

from ..runtime import current_stream

_LOCK = threading.Lock()
_KERNELS: Dict[str, object] = {}
_RECORDS: Dict[tuple, object] = {}
_MAX_RECORDS = 1024


def launch(name: str, ptx: str, threads: int, grid: int, params: Sequence[Tuple[str, int]],
           tensors: Sequence[torch.Tensor], device: torch.device) -> None:
    """Launches `name` (in `ptx`, `threads` per CTA) on `grid` CTAs on the
    current stream of `device`. `params` are the kernel's parameters in
    order: ("pointer", i) takes tensors[i]'s address, ("i64", value) an
    integer. Every tensor must start 16-byte aligned (the runtime's rule)."""
    key = (name, device, grid, tuple(params))
    record = _RECORDS.get(key)
    if record is None:
        record = _record(key, ptx, threads)
    record.launch(tuple(t.data_ptr() for t in tensors), current_stream(device.index))


def compiled(cache: Dict[tuple, Tuple[str, str]], key: tuple, name: str,
             source: Callable[[str], str], arch: str, entry: str = "") -> Tuple[str, str]:
    """(name + entry, PTX) of the gg IR `source(name)` compiled by ggc for
    `arch`, once per `key` in `cache` (the name is the runtime's key for
    the loaded module, so it must tell the keys apart)."""
    found = cache.get(key)
    if found is None:
        from .. import compiler as ggc_compiler
        ptx_text = ggc_compiler.compile_ir(source(name), emit="ptx", arch=arch,
                                           source_name=name).asm["ptx"]
        with _LOCK:
            found = cache.setdefault(key, (name + entry, ptx_text))
    return found


def aligned(*tensors: torch.Tensor) -> bool:
    return all(t.data_ptr() % 16 == 0 for t in tensors)


def _waits_at_entry(ptx: str) -> bool:
    """Whether the kernel waits for the grid ahead of it. These kernels
    carry no launch contract (ggc_result_kernel_info's dependent_launch),
    so the code itself is asked: a kernel is launched early only if it
    holds the wait (ggk-await-prior-grid's, the only pass that emits it),
    which the target table alone (grid_dependencies) would not promise
    for a pipeline run with the pass off."""
    return "griddepcontrol.wait" in ptx


def _record(key, ptx, threads):
    name, device, grid, params = key
    from .._ggc import Kernel  # the extension: only where a launch happens
    with _LOCK:
        kernel = _KERNELS.get(name)
        if kernel is None:
            # ggc's kernels for sm_90a wait for the grid ahead of them at
            # entry (ggk-await-prior-grid), so they may launch before it ends.
            kernel = _KERNELS[name] = Kernel(ptx.encode(), name, 0, threads,
                                             dependent_launch=_waits_at_entry(ptx))
        args = [("pointer", 0) if kind == "pointer" else ("i64", value)
                for kind, value in params]
        sources = [value if kind == "pointer" else -1 for kind, value in params]
        record = kernel.record(grid, args, sources, device.index)
        if len(_RECORDS) >= _MAX_RECORDS:
            _RECORDS.clear()
        _RECORDS[key] = record
    return record
