"""`@ggc.autotune`: pick the fastest tile configuration per input shape.

    @ggc.autotune(configs=[ggc.Config(BLOCK_N=128, STAGES=6),
                           ggc.Config(BLOCK_N=256, STAGES=4)],
                  key=["x", "w"])
    @ggc.jit
    def moe_up(x: gl.Rows, w: gl.Weights, ..., BLOCK_N: gl.constexpr = None,
               STAGES: gl.constexpr = None): ...

On the first call for a key every config is compiled and timed on the
call's own arguments (CUDA events, L2 flushed before each timed call); the
winner is remembered in memory and on disk ($GGC_CACHE_DIR/autotune, per
compiler version), so later calls and later processes skip the search.
Configs that fail to compile are skipped, and listed in `failures`.

The key holds every tensor argument's dtype, the GPU's name, and for each
name in `key` its shape (a tensor) or value (a constexpr), where the token
count, which changes from batch to batch, counts only by its power-of-two
bucket (M = 100, 101 and 128 share one search). `key_fn(*args, **kwargs)`
replaces the shapes and values with a key of your own. `verbose=True` (or
GGC_AUTOTUNE_VERBOSE=1) prints each config's time and the choice.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import logging
import os
import statistics
import sys
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence

from . import progress
from .cache import cache_dir, read_regular_file, write_file_durably
from .compiler import plan_settings, version
from .jit import JITFunction, _describe, spec

log = logging.getLogger("ggc.autotune")


class Config:
    """Values of a kernel's constexpr tuning knobs."""

    def __init__(self, **knobs: Any):
        self.knobs = dict(knobs)

    def __repr__(self) -> str:
        return "Config(" + ", ".join(f"{k}={v}" for k, v in sorted(self.knobs.items())) + ")"


def cuda_event_timer(fn: Callable[[], None], warmup: int = 3, reps: int = 10) -> float:
    """Median microseconds of `fn`, timed with CUDA events, with the L2
    cache flushed before each timed call (needs torch)."""
    import torch
    for _ in range(warmup):
        fn()
    flush = _l2_flush_buffer()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        flush.zero_()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)


_FLUSH_BUFFERS: Dict[int, Any] = {}


def _l2_flush_buffer():
    """Twice the current device's L2 cache, written to evict it."""
    import torch
    device = torch.cuda.current_device()
    if device not in _FLUSH_BUFFERS:
        l2 = getattr(torch.cuda.get_device_properties(device), "L2_cache_size", 0)
        _FLUSH_BUFFERS[device] = torch.empty(max(2 * l2, 64 << 20), dtype=torch.uint8,
                                             device=f"cuda:{device}")
    return _FLUSH_BUFFERS[device]


class Autotuner:
    def __init__(self, fn: JITFunction, configs: Sequence[Config], key: Sequence[str] = (),
                 timer: Callable[[Callable[[], None]], float] = cuda_event_timer,
                 key_fn: Optional[Callable[..., Any]] = None,
                 verbose: Optional[bool] = None):
        if not isinstance(fn, JITFunction):
            raise TypeError("@ggc.autotune goes above @ggc.jit")
        configs = list(configs)  # a generator would be spent by the checks below
        if not configs:
            raise ValueError("autotune needs at least one Config")
        strangers = [type(c).__name__ for c in configs if not isinstance(c, Config)]
        if strangers:
            raise TypeError(f"configs must be ggc.Config objects, got {strangers[:3]}")
        unknown = [k for c in configs for k in c.knobs if k not in fn.constexprs]
        if unknown:
            raise ValueError(f"configs set {sorted(set(unknown))}, which are not constexpr "
                             f"parameters of {fn.fn.__name__} ({fn.constexprs})")
        bad_keys = [k for k in key if k not in fn.signature.parameters]
        if bad_keys:
            raise ValueError(f"autotune key names {bad_keys}, which are not parameters of "
                             f"{fn.fn.__name__}")
        self.fn, self.configs, self.key, self.timer = fn, list(configs), list(key), timer
        self.key_fn = key_fn
        self.verbose = (os.environ.get("GGC_AUTOTUNE_VERBOSE", "") not in ("", "0")
                        if verbose is None else verbose)
        self._token_dims: Dict[Any, Dict[str, set]] = {}
        self._lock = threading.Lock()
        self.best: Dict[str, Config] = {}
        self.failures: Dict[str, List[str]] = {}
        self.timings: Dict[str, Dict[str, float]] = {}
        self._path = self._disk_path()
        self._load()

    def _disk_path(self) -> Optional[str]:
        folder = cache_dir()
        if folder is None:
            return None
        h = hashlib.sha256()
        h.update(inspect.getsource(self.fn.fn).encode() if _has_source(self.fn.fn)
                 else self.fn.fn.__name__.encode())
        h.update(repr(self.configs).encode())
        h.update(version().encode())
        return os.path.join(folder, "autotune", f"{self.fn.fn.__name__}-{h.hexdigest()[:16]}.json")

    def _load(self) -> None:
        """The winners saved by earlier processes. A file that is not what
        _save writes (cut, edited, of another shape, or naming a config
        not in this tuner's list) is ignored, and rewritten after the next
        search."""
        self.best = {}
        if not self._path:
            return
        try:
            saved = json.loads(read_regular_file(self._path).decode("utf-8"))
        except (OSError, ValueError):
            return
        if not isinstance(saved, dict):
            return
        known = [c.knobs for c in self.configs]
        for key, knobs in saved.items():
            if isinstance(key, str) and isinstance(knobs, dict) and knobs in known:
                self.best[key] = self.configs[known.index(knobs)]

    def _save(self) -> None:
        """Writes the winners for later processes; a cache folder that
        cannot take them (read-only, a file in its place) keeps them in
        memory only, as the kernel cache does."""
        if not self._path:
            return
        tmp = f"{self._path}.{os.getpid()}.{threading.get_ident()}.tmp"
        data = json.dumps({k: c.knobs for k, c in self.best.items()}).encode()
        try:
            os.makedirs(os.path.dirname(self._path), exist_ok=True)
            write_file_durably(tmp, data)
            os.replace(tmp, self._path)
        except OSError as e:
            log.warning("autotune winners not saved to %s: %s", self._path, e)

    def _key_of(self, args, kwargs) -> str:
        bound = self.fn.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        tensors = {n: bound.arguments[n] for n in self.fn.tensor_params}
        described = {n: _describe(n, v) for n, v in tensors.items()}
        # The compile settings too: a winner under one target or shared
        # memory budget may not compile, or not be the best, under another.
        parts = ["dtypes=" + ",".join(d for _, d in described.values()),
                 "device=" + _device_name(tensors.values()),
                 f"settings={plan_settings()!r}"]
        if self.key_fn is not None:
            return ";".join(parts + [f"user={self.key_fn(*args, **kwargs)!r}"])
        token_dims = self._token_dims_of(described, bound)
        for name in self.key:
            if name in described:
                shape = [_bucket(d) if d is not None and i in token_dims.get(name, ()) else d
                         for i, d in enumerate(described[name][0])]
                parts.append(f"{name}={shape}")
            else:
                parts.append(f"{name}={bound.arguments[name]!r}")
        return ";".join(parts)

    def _token_dims_of(self, described, bound) -> Dict[str, set]:
        """The dims of each tensor that follow the token count, read off the
        traced kernel once per signature (dtypes and ranks)."""
        consts = {n: bound.arguments[n] for n in self.fn.constexprs}
        signature = (tuple((d, len(s)) for s, d in described.values()),
                     tuple(sorted(consts.items())))
        if signature not in self._token_dims:
            specs = {n: spec(shape, dtype) for n, (shape, dtype) in described.items()}
            _, fn_spec = self.fn._trace(specs, consts)
            self._token_dims[signature] = {
                a.name: {i for i, d in enumerate(a.shape) if d is None} for a in fn_spec.args}
        return self._token_dims[signature]

    def choose(self, *args, **kwargs) -> Config:
        """The best config for these arguments, searching on first use."""
        key = self._key_of(args, kwargs)
        best = self.best.get(key)
        if best is None:
            with self._lock:
                best = self.best.get(key) or self._search(key, args, kwargs)
        return best

    def __call__(self, *args, stream: Optional[int] = None, validate=None, **kwargs) -> None:
        given = sorted(set(kwargs) & {k for c in self.configs for k in c.knobs})
        if given:  # the winner's value would replace the caller's without a word
            raise TypeError(f"{given} are tuned by @ggc.autotune over its configs: leave "
                            f"them out of the call, or out of the configs")
        best = self.choose(*args, **kwargs)
        self.fn(*args, stream=stream, validate=validate, **{**kwargs, **best.knobs})

    def _search(self, key: str, args, kwargs) -> Config:
        timings, failures = {}, []
        name = self.fn.fn.__name__
        # One bar over the configs (past a second, on a terminal); the
        # compiles inside it show none of their own.
        with progress.bar(len(self.configs), f"ggc: tuning {name}", unit="config") as bar, \
                progress.quiet():
            for i, config in enumerate(self.configs):
                self._try(config, args, kwargs, timings, failures, f"{name} [{key}] "
                          f"{i + 1}/{len(self.configs)} {config}")
                bar.update(1)
        if not timings:
            raise RuntimeError(f"autotune: no config of {name} compiled for "
                               f"{key}:\n  " + "\n  ".join(failures))
        winner = min(self.configs, key=lambda c: timings.get(repr(c), float("inf")))
        self._say(f"{name} [{key}] chose {winner} ({timings[repr(winner)]:.1f} us)")
        self.best[key], self.timings[key], self.failures[key] = winner, timings, failures
        self._save()
        return winner

    def _try(self, config: Config, args, kwargs, timings, failures, label: str) -> None:
        """Compiles and times one config into `timings`, or records why it
        does not compile in `failures`."""
        call = {**kwargs, **config.knobs}
        try:
            self.fn.compile(*args, **call)
        except Exception as e:  # noqa: BLE001 - recorded, the next config runs
            failures.append(f"{config}: {str(e).splitlines()[0]}")
            self._say(f"{label}: does not compile ({failures[-1]})")
            return
        timings[repr(config)] = self.timer(lambda: self.fn(*args, **call))
        self._say(f"{label}: {timings[repr(config)]:.1f} us")

    def _say(self, message: str) -> None:
        if self.verbose:
            print(f"ggc.autotune: {message}", file=sys.stderr, flush=True)

    @property
    def asm(self):
        return self.fn.asm


def _has_source(fn) -> bool:
    try:
        inspect.getsource(fn)
        return True
    except (OSError, TypeError):
        return False


def _bucket(size: int) -> int:
    """The power of two at or above `size` (0 stays 0)."""
    return 0 if size <= 0 else 1 << (size - 1).bit_length()


_DEVICE_NAMES: Dict[Any, str] = {}


def _device_name(tensors) -> str:
    """The GPU the arguments are on, by name: a winner on one GPU model is
    not the winner on another."""
    for t in tensors:
        device = getattr(t, "device", None)
        if getattr(device, "type", None) == "cuda":
            if device not in _DEVICE_NAMES:
                import torch
                _DEVICE_NAMES[device] = torch.cuda.get_device_name(device)
            return _DEVICE_NAMES[device]
    return "none"


def autotune(configs: Sequence[Config], key: Sequence[str] = (),
             timer: Callable[[Callable[[], None]], float] = cuda_event_timer,
             key_fn: Optional[Callable[..., Any]] = None, verbose: Optional[bool] = None):
    """Decorator over a @ggc.jit kernel; see the module's docstring."""
    return lambda fn: Autotuner(fn, configs, key, timer, key_fn=key_fn, verbose=verbose)
