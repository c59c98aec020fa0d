"""Group metadata: what the kernels assume of it, and the opt-in check.

Without the check, the kernels never read or write outside the tensors
they are given, whatever the metadata holds: each group's rows are clamped
to [0, M] (offsets), [0, M_max] (masked counts) or [0, K] (k_grouped), and
rows outside every group are never written, so they keep what the caller's
`out` held. Metadata that breaks the rules below still gives a result that
is wrong without a word (two groups writing the same rows race; a masked
count past M_max is cut to M_max), which the check turns into an error.

The check (`validate=True` on a call, or GGC_VALIDATE=1 for every call)
copies the metadata to the host on the launch stream and waits for it: a
host synchronisation per call, and not allowed inside a CUDA-graph capture.
"""

from __future__ import annotations

import os
import sys
import types
from typing import Any, List, Sequence

import numpy as np

from . import _ggc

VALIDATE_BY_DEFAULT = os.environ.get("GGC_VALIDATE", "") not in ("", "0", "off")


class _Module(types.ModuleType):
    """Setting VALIDATE_BY_DEFAULT drops the launches the torch ops' C++
    kernels keep (ggc.signature.forget_op_plans), which they ran
    unchecked: a kept launch decided by the old value runs no Python."""

    def __setattr__(self, name, value):
        super().__setattr__(name, value)
        if name == "VALIDATE_BY_DEFAULT":
            from . import signature
            signature.forget_op_plans()


sys.modules[__name__].__class__ = _Module

_NUMPY_TYPES = {"i32": np.int32, "i64": np.int64}


class GroupMetadataError(ValueError):
    """Group offsets, counts or row groups that break the layout's rules."""


def check(info: dict, roles: Sequence[str], tensors: List[Any], size: int, device: int,
          stream: int, all_rows: bool = False) -> None:
    """Raises GroupMetadataError naming the argument and the first bad
    entry. `size` is the run-time size (M, or k_grouped's K);
    `all_rows` asks that contiguous groups cover all M rows (for an
    output the caller never initialised)."""
    arg = next(p["arg"] for p in info["params"] if p["operand"] == "groups")
    values = _read(tensors[arg], device, stream)
    where = f"argument {arg} ({roles[arg]})"
    layout = info["layout"]
    if layout == "contiguous":
        _check_offsets(where, values, size, "M", all_rows)
    elif layout == "k_grouped":
        _check_offsets(where, values, size, "K", False)
    elif layout == "masked":  # M_max is static: A is [G, M_max, K]
        a = next(p["arg"] for p in info["params"] if p["operand"] == "a")
        _check_counts(where, values, tensors[a].shape[1])
    else:
        _check_row_groups(where, values, info["num_groups"], info["block_m"])


def _read(tensor: Any, device: int, stream: int) -> np.ndarray:
    dtype = _NUMPY_TYPES[tensor.dtype]
    count = int(np.prod(tensor.shape))
    if count == 0:
        return np.zeros(0, dtype)
    data = _ggc.copy_to_host(device, tensor.address, count * np.dtype(dtype).itemsize,
                             stream)
    return np.frombuffer(data, dtype=dtype).astype(np.int64)


def _first(mask: np.ndarray) -> int:
    return int(np.flatnonzero(mask)[0])


def _check_offsets(where: str, offsets: np.ndarray, size: int, name: str,
                   all_rows: bool) -> None:
    if offsets.size and offsets[0] < 0:
        raise GroupMetadataError(f"{where}: offsets[0] = {offsets[0]} is negative")
    falling = offsets[1:] < offsets[:-1]
    if falling.any():
        g = _first(falling)
        raise GroupMetadataError(
            f"{where}: offsets must not decrease, but offsets[{g + 1}] = "
            f"{offsets[g + 1]} < offsets[{g}] = {offsets[g]} (groups would overlap)")
    if offsets.size and offsets[-1] > size:
        raise GroupMetadataError(f"{where}: offsets[-1] = {offsets[-1]} is past {name} = "
                                 f"{size}")
    if all_rows and offsets.size and (offsets[0] != 0 or offsets[-1] != size):
        raise GroupMetadataError(
            f"{where}: the groups cover rows [{offsets[0]}, {offsets[-1]}) of {size}; the "
            f"rows outside them of an output ggc allocated would be left uninitialised "
            f"(pass `out` to keep your own values there)")


def _check_counts(where: str, counts: np.ndarray, m_max: int) -> None:
    bad = (counts < 0) | (counts > m_max)
    if bad.any():
        g = _first(bad)
        raise GroupMetadataError(f"{where}: masked_m[{g}] = {counts[g]} is outside "
                                 f"[0, M_max = {m_max}]")


def _check_row_groups(where: str, row_groups: np.ndarray, num_groups: int,
                      block_m: int) -> None:
    bad = (row_groups < -1) | (row_groups >= num_groups)
    if bad.any():
        r = _first(bad)
        raise GroupMetadataError(f"{where}: m_indices[{r}] = {row_groups[r]} is not a group "
                                 f"in [0, {num_groups}) or -1 (padding)")
    # A tile of block_m rows takes the group of its first row: every other
    # row of it must be that group or padding.
    tiles = -(-row_groups.size // block_m)
    padded = np.full(tiles * block_m, -1, np.int64)
    padded[:row_groups.size] = row_groups
    by_tile = padded.reshape(tiles, block_m)
    first = by_tile[:, :1]
    bad = (by_tile != first) & (by_tile != -1)
    if bad.any():
        t, r = np.argwhere(bad)[0]
        row = int(t * block_m + r)
        raise GroupMetadataError(
            f"{where}: m_indices[{row}] = {row_groups[row]} shares a {block_m}-row tile "
            f"with rows of group {first[t, 0]}; each group's rows must start on a "
            f"multiple of {block_m} (pad with -1)")
