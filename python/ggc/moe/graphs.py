"""Decode-sized eager layer calls replayed from cached CUDA graphs.

An eager fused_moe call is a few torch calls and 5 ggc launches; at
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

import contextlib
import os
import threading
import warnings
from collections import OrderedDict
from typing import Callable, List, Optional, Sequence, Tuple

import torch

from ..torch_ops import tracing

# A layer of at most this many tokens replays from a graph by default
# ($GGC_MOE_GRAPH_TOKENS; 0 turns graphs off): beyond it the kernels run
# longer than the eager host path and the launches overlap them anyway.
DEFAULT_MAX_TOKENS = 64
# Graphs kept per process by default ($GGC_MOE_GRAPHS), least recently used
# dropped first. Each has its own memory pool for the layer's intermediates
# (a few MB at decode sizes). A model calls each layer with its own weights,
# so it wants layers x batch sizes; with fewer, a round-robin over its
# layers drops every graph before its second call, and the calls stay eager.
DEFAULT_MAX_GRAPHS = 64


def _env_int(name: str, default: int, what: str) -> int:
    value = os.environ.get(name)
    if value is None:
        return default
    try:
        return max(0, int(value))
    except ValueError:
        raise ValueError(f"{name} must be an int ({what}), got {value!r}") from None


def max_tokens() -> int:
    return _env_int("GGC_MOE_GRAPH_TOKENS", DEFAULT_MAX_TOKENS, "tokens; 0 turns graphs off")


def max_graphs() -> int:
    return _env_int("GGC_MOE_GRAPHS", DEFAULT_MAX_GRAPHS, "graphs kept")


def check_argument(graph) -> None:
    """fused_moe's `graph`, checked on every path (the FP8 compute path and
    CPU tensors never replay, but a bad value is still an error)."""
    if graph is not None and not isinstance(graph, bool):
        raise TypeError(f"graph must be None, True or False, got {graph!r}")


def wanted(graph: Optional[bool], tokens: int, x: torch.Tensor, grad: bool,
           validating: bool) -> bool:
    """Whether this call replays from a graph: `graph` (check_argument's)
    True or None (then only for at most max_tokens() tokens), on CUDA, in
    eager mode, with nothing to differentiate, no host-side id check, and
    not inside another capture, a trace or a dispatch mode."""
    if graph is False or not x.is_cuda or grad or validating:
        return False
    if graph is None and tokens > max_tokens():
        return False
    return not tracing() and not torch.cuda.is_current_stream_capturing()


class _Entry:
    """One captured layer: its static inputs and output, and the stream
    of the last call that used them."""

    def __init__(self):
        self.lock = threading.Lock()
        self.graph: Optional[torch.cuda.CUDAGraph] = None
        self.inputs: Sequence[torch.Tensor] = ()
        self.out: Optional[torch.Tensor] = None
        self.stream: Optional[torch.cuda.Stream] = None  # of the last call
        self.stream_key: Optional[tuple] = None  # its _cuda_getCurrentStream()
        self.failed = False  # the capture raised: this signature stays eager


_ENTRIES: "OrderedDict[tuple, _Entry]" = OrderedDict()
_ENTRIES_LOCK = threading.Lock()
# Dropped entries whose last replay may still run: (event after it, entry),
# kept until the event has passed, so that no memory of theirs is reused
# while a stream still reads it.
_RETIRING: List[Tuple[torch.cuda.Event, _Entry]] = []
# One capture at a time in the process (CUDA's capture of one thread must
# not see another's work, and torch's default capture stream is shared).
_CAPTURE_LOCK = threading.Lock()


def replay(key: tuple, inputs: Sequence[torch.Tensor],
           forward: Callable[..., torch.Tensor]) -> torch.Tensor:
    """forward(*inputs) (a tensor or a tuple of tensors), eagerly on a
    signature's first call, captured on its second, replayed from then
    on. `key` names everything but the inputs' values that forward
    reads."""
    with _ENTRIES_LOCK:
        entry = _ENTRIES.get(key)
        first = entry is None
        if first:
            _ENTRIES[key] = _Entry()
            while len(_ENTRIES) > max_graphs():
                _retire(_ENTRIES.popitem(last=False)[1])
        else:
            _ENTRIES.move_to_end(key)
        while _RETIRING and _RETIRING[0][0].query():
            _RETIRING.pop(0)
    if first or entry.failed:
        return forward(*inputs)
    with entry.lock:
        if entry.failed or (entry.graph is None and not _capture(entry, inputs, forward)):
            return forward(*inputs)
        device = inputs[0].device
        with _on_device(device):
            return _replay(entry, inputs, device)


def _replay(entry: _Entry, inputs, device: torch.device) -> torch.Tensor:
    # The stream's (id, device, type), without making a Stream object.
    current = torch._C._cuda_getCurrentStream(device.index)
    if current != entry.stream_key:
        # The last call's stream may still be reading the static buffers:
        # this stream waits for its work queued so far, and the allocator
        # learns that it uses them.
        stream = torch.cuda.current_stream(device)
        stream.wait_stream(entry.stream)
        for t in (*entry.inputs, *_tensors(entry.out)):
            t.record_stream(stream)
        entry.stream, entry.stream_key = stream, current
    torch._foreach_copy_(entry.inputs, list(inputs))
    entry.graph.replay()
    if isinstance(entry.out, torch.Tensor):
        return entry.out.clone()
    return tuple(t.clone() for t in entry.out)


def _tensors(out) -> tuple:
    """A forward's output: one tensor or a tuple of them."""
    return (out,) if isinstance(out, torch.Tensor) else tuple(out)


def _on_device(device: torch.device):
    """The device's context where it is not the current one (graph replays
    and captures use the current device's streams)."""
    if torch._C._cuda_getDevice() == device.index:
        return contextlib.nullcontext()
    return torch.cuda.device(device)


def _retire(entry: _Entry) -> None:
    if entry.stream is not None:
        event = torch.cuda.Event()
        event.record(entry.stream)
        _RETIRING.append((event, entry))


def _capture(entry: _Entry, inputs, forward) -> bool:
    """Captures forward on static inputs, on a stream of the inputs' device;
    False (with a warning, and the signature left eager) where the capture
    fails."""
    device = inputs[0].device
    with _CAPTURE_LOCK, _on_device(device):
        caller = torch.cuda.current_stream(device)
        # Static buffers outside inference mode, so that a later call made
        # outside it may still copy into them.
        with torch.inference_mode(False), torch.no_grad():
            static = [torch.empty_like(t) for t in inputs]
        graph = torch.cuda.CUDAGraph()
        capture_stream = torch.cuda.Stream(device)
        capture_stream.wait_stream(caller)
        try:
            # thread_local: another host thread's CUDA calls meanwhile are
            # not this capture's business.
            with torch.cuda.graph(graph, stream=capture_stream,
                                  capture_error_mode="thread_local"):
                out = forward(*static)
        except Exception as error:  # noqa: BLE001 - reported, then eager
            torch.cuda.set_stream(caller)  # a failed capture may leave its stream current
            entry.failed = True
            warnings.warn(f"ggc.moe: capturing the layer in a CUDA graph failed ({error}); "
                          f"this signature runs eagerly from now on", RuntimeWarning)
            return False
        entry.inputs, entry.out, entry.graph = static, out, graph
        entry.stream = caller
        entry.stream_key = torch._C._cuda_getCurrentStream(device.index)
        return True


def clear() -> None:
    """Drops every cached graph; their memory goes back to torch's pool
    once the GPU has finished their last replays (this waits for it)."""
    with _ENTRIES_LOCK:
        if (_ENTRIES or _RETIRING) and torch.cuda.is_initialized():
            torch.cuda.synchronize()
        _ENTRIES.clear()
        _RETIRING.clear()


def cached() -> int:
    """How many signatures have a captured graph."""
    with _ENTRIES_LOCK:
        return sum(entry.graph is not None for entry in _ENTRIES.values())
