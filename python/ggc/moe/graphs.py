"""Decode-sized eager layer calls replayed from cached CUDA graphs.

An eager fused_moe call is about 16 torch calls and 2 ggc launches; at
decode sizes their host time (5-10 us each) is longer than the kernels
they launch. After the second eager call with one signature, the layer is
captured once and every later call replays it: three copies into the
graph's static inputs, one replay, one copy of its static output (the
same kernels, so the same bits as the eager path).

The first call of a signature runs eagerly (it compiles the kernels and
warms every cache the capture must not touch); the second captures, so a
batch size seen once costs no capture. A graph is keyed by the call's
signature and the weights' addresses (a graph reads the weights where
they lay when it was captured: new weights at the same address and shape
are read as an eager call would read them).

Calls may come from several host threads and streams: an entry's lock
orders the host steps, and a call on another stream than the last one
makes its stream wait (on the device, no host sync) for the work queued
on the last one before it overwrites the static inputs.
"""

from __future__ import annotations

import os
import threading
import warnings
from collections import OrderedDict
from typing import Callable, Optional, Sequence

import torch

# A layer of at most this many tokens replays from a graph by default
# ($GGC_MOE_GRAPH_TOKENS; 0 turns graphs off): beyond it the kernels run
# longer than the eager host path and the launches overlap them anyway.
DEFAULT_MAX_TOKENS = 64
# Graphs kept per process (least recently used dropped first): each holds
# its own memory pool for the layer's intermediates.
MAX_GRAPHS = 16


def max_tokens() -> int:
    value = os.environ.get("GGC_MOE_GRAPH_TOKENS")
    if value is None:
        return DEFAULT_MAX_TOKENS
    try:
        return max(0, int(value))
    except ValueError:
        raise ValueError(f"GGC_MOE_GRAPH_TOKENS must be an int (tokens; 0 turns graphs "
                         f"off), got {value!r}") from None


def wanted(graph: Optional[bool], tokens: int, x: torch.Tensor, grad: bool,
           validating: bool) -> bool:
    """Whether this call replays from a graph: `graph` True or None (then
    only for at most max_tokens() tokens), on CUDA, in eager mode, with
    nothing to differentiate, no host-side id check, and not inside
    another capture, a trace or a dispatch mode."""
    if graph is not None and not isinstance(graph, bool):
        raise TypeError(f"graph must be None, True or False, got {graph!r}")
    if graph is False or not x.is_cuda or grad or validating:
        return False
    if graph is None and tokens > max_tokens():
        return False
    if torch.compiler.is_compiling() or torch._C._len_torch_dispatch_stack() > 0:
        return False
    return not torch.cuda.is_current_stream_capturing()


class _Entry:
    """One captured layer: its static inputs and output, and the stream
    of the last call that used them."""

    def __init__(self):
        self.lock = threading.Lock()
        self.graph: Optional[torch.cuda.CUDAGraph] = None
        self.inputs: Sequence[torch.Tensor] = ()
        self.out: Optional[torch.Tensor] = None
        self.stream: Optional[torch.cuda.Stream] = None  # of the last call
        self.failed = False  # the capture raised: this signature stays eager


_ENTRIES: "OrderedDict[tuple, _Entry]" = OrderedDict()
_ENTRIES_LOCK = threading.Lock()


def replay(key: tuple, inputs: Sequence[torch.Tensor],
           forward: Callable[..., torch.Tensor]) -> torch.Tensor:
    """forward(*inputs), eagerly on a signature's first call, captured on
    its second, replayed from then on. `key` names everything but the
    inputs' values that forward reads."""
    with _ENTRIES_LOCK:
        entry = _ENTRIES.get(key)
        if entry is None:
            _ENTRIES[key] = _Entry()
            if len(_ENTRIES) > MAX_GRAPHS:
                _ENTRIES.popitem(last=False)
            first = True
        else:
            _ENTRIES.move_to_end(key)
            first = False
    if first or entry.failed:
        return forward(*inputs)
    with entry.lock:
        if entry.graph is None and not _capture(entry, inputs, forward):
            return forward(*inputs)
        stream = torch.cuda.current_stream(inputs[0].device)
        if stream != entry.stream:
            # The last call's stream may still be reading the static
            # buffers: this stream waits for its work queued so far.
            stream.wait_stream(entry.stream)
            entry.stream = stream
        torch._foreach_copy_(entry.inputs, list(inputs))
        entry.graph.replay()
        return entry.out.clone()


def _capture(entry: _Entry, inputs, forward) -> bool:
    """Captures forward on static inputs; False (with a warning, and the
    signature left eager) where the capture fails."""
    # Static buffers outside inference mode, so that a later call made
    # outside it may still copy into them.
    with torch.inference_mode(False), torch.no_grad():
        static = [torch.empty_like(t) for t in inputs]
    graph = torch.cuda.CUDAGraph()
    try:
        # thread_local: another host thread's CUDA calls meanwhile are not
        # this capture's business.
        with torch.cuda.graph(graph, capture_error_mode="thread_local"):
            out = forward(*static)
    except Exception as error:  # noqa: BLE001 - reported, then eager
        entry.failed = True
        warnings.warn(f"ggc.moe: capturing the layer in a CUDA graph failed ({error}); "
                      f"this signature runs eagerly from now on", RuntimeWarning)
        return False
    entry.inputs, entry.out, entry.graph = static, out, graph
    entry.stream = torch.cuda.current_stream(inputs[0].device)
    return True


def clear() -> None:
    """Drops every cached graph (their memory goes back to torch's pool)."""
    with _ENTRIES_LOCK:
        _ENTRIES.clear()


def cached() -> int:
    """How many signatures have a captured graph."""
    with _ENTRIES_LOCK:
        return sum(entry.graph is not None for entry in _ENTRIES.values())
