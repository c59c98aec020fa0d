"""`@ggc.autotune`: pick the fastest tile configuration per input shape.

    @ggc.autotune(configs=[ggc.Config(BLOCK_N=128, STAGES=6),
                           ggc.Config(BLOCK_N=256, STAGES=4)],
                  key=["x", "w"])
    @ggc.jit
    def moe_up(x: gl.Rows, w: gl.Weights, ..., BLOCK_N: gl.constexpr = None,
               STAGES: gl.constexpr = None): ...

On the first call for a key (the shapes of the named tensor arguments, or
the values of named constexprs) every config is compiled and timed on the
call's own arguments; the winner is remembered in memory and on disk
($GGC_CACHE_DIR/autotune), so later calls and later processes skip the
search. Configs that fail to compile are skipped, and listed in `failures`.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import os
import statistics
import threading
from typing import Any, Callable, Dict, List, Optional, Sequence

from .cache import cache_dir, write_file_durably
from .jit import JITFunction


class Config:
    """Values of a kernel's constexpr tuning knobs."""

    def __init__(self, **knobs: Any):
        self.knobs = dict(knobs)

    def __repr__(self) -> str:
        return "Config(" + ", ".join(f"{k}={v}" for k, v in sorted(self.knobs.items())) + ")"


def cuda_event_timer(fn: Callable[[], None], warmup: int = 3, reps: int = 10) -> float:
    """Median microseconds of `fn`, timed with CUDA events (needs torch)."""
    import torch
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(reps):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) * 1e3)
    return statistics.median(times)


class Autotuner:
    def __init__(self, fn: JITFunction, configs: Sequence[Config], key: Sequence[str],
                 timer: Callable[[Callable[[], None]], float] = cuda_event_timer):
        if not isinstance(fn, JITFunction):
            raise TypeError("@ggc.autotune goes above @ggc.jit")
        if not configs:
            raise ValueError("autotune needs at least one Config")
        unknown = [k for c in configs for k in c.knobs if k not in fn.constexprs]
        if unknown:
            raise ValueError(f"configs set {sorted(set(unknown))}, which are not constexpr "
                             f"parameters of {fn.fn.__name__} ({fn.constexprs})")
        bad_keys = [k for k in key if k not in fn.signature.parameters]
        if bad_keys:
            raise ValueError(f"autotune key names {bad_keys}, which are not parameters of "
                             f"{fn.fn.__name__}")
        self.fn, self.configs, self.key, self.timer = fn, list(configs), list(key), timer
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
            with open(self._path, "rb") as f:
                saved = json.loads(f.read().decode("utf-8"))
        except (OSError, ValueError):
            return
        if not isinstance(saved, dict):
            return
        known = [c.knobs for c in self.configs]
        for key, knobs in saved.items():
            if isinstance(key, str) and isinstance(knobs, dict) and knobs in known:
                self.best[key] = self.configs[known.index(knobs)]

    def _save(self) -> None:
        if not self._path:
            return
        os.makedirs(os.path.dirname(self._path), exist_ok=True)
        tmp = f"{self._path}.{os.getpid()}.{threading.get_ident()}.tmp"
        data = json.dumps({k: c.knobs for k, c in self.best.items()}).encode()
        write_file_durably(tmp, data)
        os.replace(tmp, self._path)

    def _key_of(self, bound) -> str:
        parts = []
        for name in self.key:
            value = bound.arguments[name]
            shape = getattr(value, "shape", None)
            parts.append(f"{name}={list(shape) if shape is not None else value}")
        return ",".join(parts)

    def choose(self, *args, **kwargs) -> Config:
        """The best config for these arguments, searching on first use."""
        bound = self.fn.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        key = self._key_of(bound)
        best = self.best.get(key)
        if best is None:
            best = self._search(key, args, kwargs)
        return best

    def __call__(self, *args, **kwargs) -> None:
        best = self.choose(*args, **kwargs)
        self.fn(*args, **{**kwargs, **best.knobs})

    def _search(self, key: str, args, kwargs) -> Config:
        timings, failures = {}, []
        for config in self.configs:
            call = {**kwargs, **config.knobs}
            try:
                self.fn.compile(*args, **call)
            except Exception as e:  # noqa: BLE001 - recorded, the next config runs
                failures.append(f"{config}: {str(e).splitlines()[0]}")
                continue
            timings[repr(config)] = self.timer(lambda: self.fn(*args, **call))
        if not timings:
            raise RuntimeError(f"autotune: no config of {self.fn.fn.__name__} compiled for "
                               f"{key}:\n  " + "\n  ".join(failures))
        winner = min(self.configs, key=lambda c: timings.get(repr(c), float("inf")))
        self.best[key], self.timings[key], self.failures[key] = winner, timings, failures
        self._save()
        return winner

    @property
    def asm(self):
        return self.fn.asm


def _has_source(fn) -> bool:
    try:
        inspect.getsource(fn)
        return True
    except (OSError, TypeError):
        return False


def autotune(configs: Sequence[Config], key: Sequence[str],
             timer: Callable[[Callable[[], None]], float] = cuda_event_timer):
    """Decorator over a @ggc.jit kernel; see the module's docstring."""
    return lambda fn: Autotuner(fn, configs, key, timer)
