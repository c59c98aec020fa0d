"""Progress bars (tqdm) for ggc's slow steps: a kernel's compile or an
autotune search that runs past a second, and a warm-up as a whole.

Shown on a terminal (stderr a TTY) or when asked: `progress=True` where
a call takes it, or GGC_PROGRESS=1 (GGC_PROGRESS=0: never); so logs and
CI stay free of them. tqdm is a dependency of ggc; where it cannot be
imported (a source checkout on a bare Python) no bar is shown.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import sys
import threading
from typing import Iterator, Optional

# A step that ends sooner shows no bar: most compiles are cache hits.
DELAY_S = 1.0
# How often the bar of a step that reports no progress (a compile) redraws
# its elapsed time.
_TICK_S = 0.25

# Set where an outer bar already counts the work (a warm-up, an autotune
# search): the compiles inside it show none of their own.
_quiet = contextvars.ContextVar("ggc_progress_quiet", default=False)


def wanted(progress: Optional[bool] = None) -> bool:
    """Whether to show a bar: never inside an outer one; else `progress`
    when given; else GGC_PROGRESS when set; else whether stderr is a TTY."""
    if _quiet.get():
        return False
    if progress is not None:
        return bool(progress)
    env = os.environ.get("GGC_PROGRESS", "").strip().lower()
    if env:
        return env not in ("0", "off", "false", "no")
    isatty = getattr(sys.stderr, "isatty", None)
    return bool(isatty and isatty())


def _tqdm():
    try:
        from tqdm import tqdm
    except ImportError:  # a dependency, but a source checkout may lack it: no bar
        return None
    return tqdm


class _NoBar:
    """What bar() gives when no bar is shown: the same calls, doing nothing."""

    def update(self, n: int = 1) -> None:
        pass

    def set_postfix_str(self, text: str, refresh: bool = True) -> None:
        pass

    def close(self) -> None:
        pass

    def __enter__(self):
        return self

    def __exit__(self, *exc) -> None:
        pass


def bar(total: int, desc: str, progress: Optional[bool] = None, unit: str = "kernel"):
    """A tqdm bar over `total` steps that appears once DELAY_S has passed
    (a context manager; update(n) per step), or a _NoBar."""
    tqdm = _tqdm() if wanted(progress) else None
    if tqdm is None:
        return _NoBar()
    return tqdm(total=total, desc=desc, unit=unit, delay=DELAY_S, file=sys.stderr)


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """No bar inside: the caller's own bar counts this work."""
    token = _quiet.set(True)
    try:
        yield
    finally:
        _quiet.reset(token)


@contextlib.contextmanager
def waiting(desc: str, progress: Optional[bool] = None) -> Iterator[None]:
    """A bar of elapsed time for one step that cannot say how far it is (a
    compile: one call into the compiler, which releases the GIL), drawn by
    a thread once the step has run DELAY_S, removed when it ends."""
    tqdm = _tqdm() if wanted(progress) else None
    if tqdm is None:
        yield
        return
    done = threading.Event()
    thread = threading.Thread(target=_tick, args=(tqdm, desc, done, sys.stderr),
                              daemon=True, name="ggc-progress")
    thread.start()
    try:
        yield
    finally:
        done.set()
        thread.join()


def _tick(tqdm, desc: str, done: threading.Event, file) -> None:
    if done.wait(DELAY_S):
        return
    with tqdm(total=None, desc=desc, bar_format="{desc}: {elapsed}", leave=False,
              file=file) as shown:
        while not done.wait(_TICK_S):
            shown.refresh()
