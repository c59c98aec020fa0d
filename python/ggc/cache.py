"""Compiled kernels, cached in memory and on disk.

The key is the SHA-256 of the IR text, the compiler version, the target
arch, the SM count, the shared memory and DRAM bandwidth planned for
(memory_plan_class) and the last stage: a second process with the same
kernel loads it from disk instead of compiling. The disk cache lives in
$GGC_CACHE_DIR (default $XDG_CACHE_HOME/ggc, or ~/.cache/ggc without it);
set GGC_CACHE_DIR=off to disable it.
Each entry records the size and SHA-256 of its files and a checksum of its
launch data; an entry whose meta.json or launched stage (cubin, or PTX)
does not match (truncated, edited, malformed) is a miss: the kernel is
compiled again and the entry replaced. A hit reads those two files alone;
the other stages (the IR `kernel.asm` shows) are read and checked when
first asked for, and compiled again then if they do not match.
The disk cache holds at most $GGC_CACHE_MAX_MB megabytes (default 1024):
storing an entry past that evicts the least recently used ones (a hit
marks its entry used). `python -m ggc cache --info` / `--clear` shows or
empties it.
$GGC_DUMP_DIR, when set, receives every stage of every kernel as files that
`ggc` can re-run (`<name>-<key>.gg.mlir` is the input).
Every lookup is a record of the "ggc" logger (GGC_LOG=compile prints
them): a compile (INFO, with its milliseconds), a disk hit (INFO), a
memory hit (DEBUG); `recording()` collects them as CacheEvents. A compile
that runs past a second shows a progress bar on a terminal (ggc.progress).
"""

from __future__ import annotations

import contextlib
import contextvars
import hashlib
import json
import math
import logging
import os
import shutil
import stat
import tempfile
import threading
import time
from collections.abc import Mapping
from typing import Any, Dict, Iterator, List, NamedTuple, Optional, Sequence, Tuple, Union

from . import progress
from .compiler import (CompiledIR, compile_ir, describe_target, memory_plan_class, ptxas_identity,
                       version)

log = logging.getLogger("ggc")
_memory: Dict[str, CompiledIR] = {}
_lock = threading.Lock()
_EXTENSIONS = {"llvm": ".ll", "ptx": ".ptx", "cubin": ".cubin"}


def cache_dir() -> Optional[str]:
    """$GGC_CACHE_DIR, else ggc/ in the user's cache directory:
    $XDG_CACHE_HOME when it is an absolute path (the XDG base directory
    rule: a relative one is ignored), else ~/.cache. None when off."""
    path = os.environ.get("GGC_CACHE_DIR")
    if path is None:
        base = os.environ.get("XDG_CACHE_HOME", "")
        if not os.path.isabs(base):
            base = os.path.join(os.path.expanduser("~"), ".cache")
        path = os.path.join(base, "ggc")
    if path in ("", "off", "0"):
        return None
    # Absolute: an entry's stages are read lazily, after the process may
    # have changed its working directory.
    return os.path.abspath(path)


DEFAULT_MAX_MB = 1024


def max_bytes() -> int:
    """$GGC_CACHE_MAX_MB in bytes; a value that is not a finite number of
    megabytes >= 0 is a ValueError naming it (every compile_cached call
    checks it, a hit too, so that a bad setting shows at once)."""
    value = os.environ.get("GGC_CACHE_MAX_MB", str(DEFAULT_MAX_MB))
    try:
        megabytes = float(value)
    except ValueError:
        megabytes = float("nan")
    if not math.isfinite(megabytes) or megabytes < 0:
        raise ValueError(f"GGC_CACHE_MAX_MB must be a finite number of megabytes >= 0 "
                         f"(default {DEFAULT_MAX_MB}), got {value!r}")
    return int(megabytes * (1 << 20))


def entries(folder: str) -> List[Tuple[str, int, float]]:
    """(path, bytes, last use) of each finished entry of a cache folder."""
    found = []
    try:
        names = os.listdir(folder)
    except OSError:
        return found
    for name in names:
        path = os.path.join(folder, name)
        if name.startswith(".") or name == "autotune" or not os.path.isdir(path):
            continue
        try:
            size = sum(os.path.getsize(os.path.join(path, f)) for f in os.listdir(path))
            used = os.path.getmtime(os.path.join(path, "meta.json"))
        except OSError:
            continue  # being replaced or removed by another process
        found.append((path, size, used))
    return found


# A .tmp-*/.old-* folder untouched this long belongs to a process that
# stopped midway (a compile stores in seconds).
_LEFTOVER_SECONDS = 3600


def evict(folder: str, limit: int) -> int:
    """Removes what stopped writers left an hour ago or more, then least
    recently used entries until the folder holds at most `limit` bytes;
    returns how many entries were removed."""
    _remove_leftovers(folder, older_than=_LEFTOVER_SECONDS)
    found = sorted(entries(folder), key=lambda e: e[2])
    total = sum(size for _, size, _ in found)
    removed = 0
    for path, size, _ in found:
        if total <= limit:
            break
        _remove_entry(path)
        total -= size
        removed += 1
    return removed


def clear(folder: str) -> int:
    """Removes every entry, the autotune winners and what writers and
    removers left behind (.tmp-* staging and .old-* folders of a process
    that stopped midway; one still writing loses its entry, not its
    result); returns how many entries."""
    found = entries(folder)
    for path, _, _ in found:
        _remove_entry(path)
    shutil.rmtree(os.path.join(folder, "autotune"), ignore_errors=True)
    _remove_leftovers(folder, older_than=0)
    return len(found)


def _remove_leftovers(folder: str, older_than: float) -> None:
    """Removes the .tmp-* staging and .old-* folders last changed at least
    `older_than` seconds ago."""
    try:
        names = [n for n in os.listdir(folder) if n.startswith((".tmp-", ".old-"))]
    except OSError:
        return
    now = time.time()
    for name in names:
        path = os.path.join(folder, name)
        try:
            if now - os.path.getmtime(path) < older_than:
                continue
        except OSError:
            continue  # removed by another process meanwhile
        shutil.rmtree(path, ignore_errors=True)


def _remove_entry(path: str) -> None:
    # Renamed away first: a reader sees the whole entry or none.
    trash = tempfile.mkdtemp(dir=os.path.dirname(path), prefix=".old-")
    try:
        os.rename(path, os.path.join(trash, "entry"))
    except OSError:
        pass
    shutil.rmtree(trash, ignore_errors=True)


def _mark_used(path: str) -> None:
    try:
        os.utime(os.path.join(path, "meta.json"))
    except OSError:
        pass  # a read-only cache still serves hits


def key_of(ir: str, *, emit: str, arch: str, num_sms: int,
           shared_memory_bytes: int = 0, memory_gbps: int = 0) -> str:
    h = hashlib.sha256()
    # The bandwidth's plan class (an H200's is an unknown card's: no part,
    # the keys of before).
    planned = memory_plan_class(memory_gbps)
    bandwidth = (f"{planned} GB/s",) if planned else ()
    # Machine code also depends on the assembler (no part for PTX: the
    # keys of before).
    assembler = (ptxas_identity(),) if emit == "cubin" else ()
    for part in (version(), arch, str(num_sms), str(shared_memory_bytes), *bandwidth,
                 *assembler, emit, ir):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


# Every entry's meta.json names this format; an entry of another format
# is a miss (and is replaced).
_FORMAT = 2


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _meta_checksum(meta: dict) -> str:
    """The checksum of everything meta.json says but the checksum itself:
    launch data edited by hand (e.g. shared memory bytes) is a miss."""
    body = {k: v for k, v in meta.items() if k != "checksum"}
    return _digest(json.dumps(body, sort_keys=True).encode())


def _file_name(stage: str) -> str:
    return stage + _EXTENSIONS.get(stage, ".mlir")


def _valid_meta(meta: Any) -> bool:
    """meta.json in this format whose checksum matches and whose shape is
    the one _store gives it: the checksum is no secret, so an entry edited
    with a recomputed one must still hold what a hit hands out."""
    return (isinstance(meta, dict) and meta.get("format") == _FORMAT
            and meta.get("checksum") == _meta_checksum(meta) and _meta_shaped(meta))


def _meta_shaped(meta: dict) -> bool:
    def dicts(value) -> bool:
        return isinstance(value, list) and all(isinstance(v, dict) for v in value)

    stages, files = meta.get("stages"), meta.get("files")
    if not (isinstance(stages, list) and isinstance(files, dict)):
        return False
    for stage in stages:
        record = files.get(stage) if isinstance(stage, str) else None
        if not (isinstance(record, dict) and isinstance(record.get("bytes"), int)
                and isinstance(record.get("sha256"), str)):
            return False
    return (isinstance(meta.get("diagnostics"), str) and dicts(meta.get("kernel_info"))
            and dicts(meta.get("plans")))


def read_regular_file(path: str) -> bytes:
    """The bytes of `path`, which must be a regular file: a FIFO, a device
    or a symbolic link in the cache (never written by ggc) raises OSError
    instead of blocking a read forever or leading elsewhere."""
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.open(path, flags), "rb") as f:
        if not stat.S_ISREG(os.fstat(f.fileno()).st_mode):
            raise OSError(f"{path} is not a regular file")
        return f.read()


def _read_stage(path: str, meta: dict, stage: str) -> Optional[Union[str, bytes]]:
    """One stage of the entry at `path`, if its file is whole and unchanged
    since it was written; None otherwise."""
    try:
        data = read_regular_file(os.path.join(path, _file_name(stage)))
        record = meta["files"][stage]
        if len(data) != record["bytes"] or _digest(data) != record["sha256"]:
            return None
        return data if stage == "cubin" else data.decode("utf-8")
    except (OSError, ValueError, KeyError):
        return None


class _Stages(Mapping):
    """A disk hit's stages, in pipeline order: the one the launch needs read
    and checked at once, the others (a megabyte or two of IR for
    `kernel.asm`, which a launch never reads) when first asked for. A stage
    found missing or changed then is compiled again (`recompile`: the whole
    entry, stored anew), so reading one can compile, and raise what a
    compile raises."""

    def __init__(self, path: str, meta: dict, loaded: dict, recompile):
        self._path, self._meta, self._loaded, self._recompile = path, meta, loaded, recompile
        self._lock = threading.Lock()  # one recompile, whichever thread reads first

    def __getitem__(self, stage: str):
        found = self._loaded.get(stage)
        if found is not None:
            return found
        if stage not in self._meta["stages"]:
            raise KeyError(stage)
        with self._lock:
            found = self._loaded.get(stage)
            if found is None:
                found = _read_stage(self._path, self._meta, stage)
            if found is None:
                log.warning("cache entry %s: stage %s missing or changed since it was "
                            "stored: compiling it again", self._path, stage)
                for name, text in self._recompile().asm.items():
                    self._loaded.setdefault(name, text)
                found = self._loaded[stage]
            self._loaded[stage] = found
        return found

    def __contains__(self, stage) -> bool:  # without reading the stage
        return stage in self._meta["stages"]

    def __iter__(self) -> Iterator[str]:
        return iter(self._meta["stages"])

    def __len__(self) -> int:
        return len(self._meta["stages"])

    def __repr__(self) -> str:
        read = ", ".join(self._loaded)
        return f"<stages {list(self._meta['stages'])} of {self._path} (read: {read})>"


def _load(path: str, emit: str, recompile) -> Optional[CompiledIR]:
    """The entry at `path` if its meta.json and its `emit` stage are whole
    and unchanged since they were written; None (a miss, compiled again and
    repaired) otherwise. Its other stages are read when asked for (_Stages)."""
    try:
        meta = json.loads(read_regular_file(os.path.join(path, "meta.json")).decode("utf-8"))
        if not _valid_meta(meta) or emit not in meta["stages"]:
            return None
    # Missing, unreadable, not a regular file, cut, or nested past the JSON
    # parser's (or the checksum's) recursion.
    except (OSError, ValueError, RecursionError):
        return None
    launched = _read_stage(path, meta, emit)
    if launched is None:
        return None
    _mark_used(path)
    return CompiledIR(asm=_Stages(path, meta, {emit: launched}, recompile),
                      diagnostics=meta["diagnostics"], ir_after_all="",
                      kernel_info=meta["kernel_info"], plans=meta["plans"])


def write_file_durably(path: str, data: bytes) -> None:
    """Writes `data` to `path` and flushes it to the disk, so that a crash
    after a rename never leaves a named but empty or partial file."""
    with open(path, "wb") as f:
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def _fsync_folder(path: str) -> None:
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass  # some file systems cannot sync a folder; the files are synced
    finally:
        os.close(fd)


def _store(path: str, compiled: CompiledIR) -> None:
    # Write into a fresh folder and rename it into place, so that a reader
    # in another process never sees half an entry.
    parent = os.path.dirname(path)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(dir=parent, prefix=".tmp-")
    try:
        # mkdtemp makes the folder 0700; entries take the cache folder's
        # mode (made under the umask), so a shared cache stays readable.
        # (Reading the umask means setting it: not from a library thread.)
        os.chmod(staging, stat.S_IMODE(os.stat(parent).st_mode))
        files = {}
        for stage, text in compiled.asm.items():
            data = text if isinstance(text, bytes) else text.encode("utf-8")
            write_file_durably(os.path.join(staging, _file_name(stage)), data)
            files[stage] = {"bytes": len(data), "sha256": _digest(data)}
        meta = {"format": _FORMAT, "stages": list(compiled.asm), "files": files,
                "diagnostics": compiled.diagnostics, "kernel_info": compiled.kernel_info,
                "plans": compiled.plans}
        meta["checksum"] = _meta_checksum(meta)
        write_file_durably(os.path.join(staging, "meta.json"), json.dumps(meta).encode())
        _fsync_folder(staging)
        _replace_folder(staging, path)
        _fsync_folder(parent)
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _replace_folder(staging: str, path: str) -> None:
    """Renames `staging` to `path`. An entry already there was found broken
    (a good one is a hit and is never stored again): it is removed first,
    atomically, so readers see the old entry or the new one."""
    try:
        os.rename(staging, path)
        return
    except OSError:
        _remove_entry(path)
    try:
        os.rename(staging, path)
    except OSError:
        pass  # another process stored a fresh entry first: keep theirs


def _dump(name: str, key: str, compiled: CompiledIR) -> None:
    folder = os.environ.get("GGC_DUMP_DIR")
    if not folder:
        return
    os.makedirs(folder, exist_ok=True)
    for stage, text in compiled.asm.items():
        path = os.path.join(folder, f"{name}-{key[:12]}{_dump_suffix(stage)}")
        with open(path, "wb" if stage == "cubin" else "w") as f:
            f.write(text)


def _dump_suffix(stage: str) -> str:
    """.gg.mlir, .nvvm.mlir, ..., .ll, .ptx, .cubin: a stage with a file
    type of its own is named by it alone (as the driver's --dump-dir)."""
    extension = _EXTENSIONS.get(stage)
    return extension if extension else f".{stage}.mlir"


class CacheEvent(NamedTuple):
    """One compile_cached lookup, as its log record tells it."""
    subject: str            # the kernel and its specialisation (else the source name)
    target: str             # arch, SMs and shared memory: what else the key holds
    source: str | None      # "memory", "disk", or None: compiled now
    ms: float               # the lookup's milliseconds (the compile's, on a miss)


# What the current context compiles (a jit kernel's specialisation, named
# by ggc.jit), and the lists of CacheEvents being collected (recording()).
_subject: contextvars.ContextVar = contextvars.ContextVar("ggc_cache_subject", default=None)
_recorders: contextvars.ContextVar = contextvars.ContextVar("ggc_cache_recorders", default=())


@contextlib.contextmanager
def compiling(subject: str) -> Iterator[None]:
    """Names what compile_cached looks up in this context (its log records
    and CacheEvents say `subject` instead of the source name)."""
    token = _subject.set(subject)
    try:
        yield
    finally:
        _subject.reset(token)


@contextlib.contextmanager
def recording() -> Iterator[List[CacheEvent]]:
    """Collects a CacheEvent for every compile_cached call in this context
    (copies of it too: contextvars.copy_context() for a thread) into the
    list it yields."""
    events: List[CacheEvent] = []
    token = _recorders.set(_recorders.get() + (events,))
    try:
        yield events
    finally:
        _recorders.reset(token)


def specialisation(name: str, args: Sequence[Any], consts: Dict[str, Any]) -> str:
    """A jit kernel's specialisation as the log shows it: each argument's
    shape ("?" where it follows the token count) and element type, then
    the constexprs given: `moe_down_routed(a ?x128xbf16, ...; EXPECTED_M=32)`."""
    shown = ", ".join(f"{a.name} " + "x".join("?" if d is None else str(d) for d in a.shape)
                      + f"x{a.dtype}" for a in args)
    knobs = ", ".join(f"{k}={v!r}" for k, v in sorted(consts.items()) if v is not None)
    return f"{name}({shown}{'; ' + knobs if knobs else ''})"


def _report(compiled: CompiledIR, source_name: str, arch: str, num_sms: int,
            shared_memory_bytes: int, source: Optional[str], ms: float, where: str,
            memory_gbps: int = 0) -> None:
    """The lookup's log record and CacheEvent (nothing formatted where
    neither the logger nor a recording() wants them)."""
    recorders = _recorders.get()
    if not recorders and not log.isEnabledFor(logging.DEBUG if source == "memory"
                                              else logging.INFO):
        return
    names = ", ".join(k["name"] for k in compiled.kernel_info)
    subject = _subject.get() or (f"{names} ({source_name})" if names else source_name)
    target = describe_target(arch, num_sms, shared_memory_bytes, memory_gbps)
    if source is None:
        log.info("compiled %s for %s in %.0f ms (cache miss; %s)", subject, target, ms, where)
    elif source == "disk":
        log.info("loaded %s for %s from the disk cache in %.0f ms (%s)", subject, target, ms,
                 where)
    else:
        log.debug("memory cache hit: %s for %s", subject, target)
    event = CacheEvent(subject, target, source, ms)
    for events in recorders:
        events.append(event)  # list.append is atomic: threads may share a list


def _short_subject(source_name: str) -> str:
    """The kernel's name alone, for a progress bar."""
    return (_subject.get() or source_name).split("(")[0].strip() or "a kernel"


def compile_cached(ir: str, *, emit: str, arch: str, num_sms: int,
                   source_name: str = "<ggc>", shared_memory_bytes: int = 0,
                   memory_gbps: int = 0) -> Tuple[CompiledIR, Optional[str]]:
    """Compiles `ir`, or finds it in the caches. Returns the result and where
    it came from: "memory", "disk" or None (compiled now)."""
    started = time.perf_counter()
    max_bytes()  # a bad $GGC_CACHE_MAX_MB is an error on a hit too
    key = key_of(ir, emit=emit, arch=arch, num_sms=num_sms,
                 shared_memory_bytes=shared_memory_bytes, memory_gbps=memory_gbps)
    with _lock:
        hit = _memory.get(key)
    if hit is not None:
        _report(hit, source_name, arch, num_sms, shared_memory_bytes, "memory", 0.0, emit,
                memory_gbps)
        return hit, "memory"
    folder = cache_dir()
    path = os.path.join(folder, key) if folder else None
    exists = bool(path) and os.path.isdir(path)

    def compile_and_store() -> CompiledIR:
        # Also run long after the lookup (a lazily read stage found broken):
        # the cache folder and its limit as they are then.
        folder = cache_dir()
        path = os.path.join(folder, key) if folder else None
        limit = max_bytes()
        started = time.perf_counter()
        with progress.waiting(f"ggc: compiling {_short_subject(source_name)} for {arch}"):
            compiled = compile_ir(ir, emit=emit, arch=arch, num_sms=num_sms,
                                  source_name=source_name,
                                  shared_memory_bytes=shared_memory_bytes,
                                  memory_gbps=memory_gbps)
        _report(compiled, source_name, arch, num_sms, shared_memory_bytes, None,
                (time.perf_counter() - started) * 1e3, f"to {emit}, key {key[:12]}",
                memory_gbps)
        if path:
            try:
                _store(path, compiled)
                evicted = evict(folder, limit)
                if evicted:
                    log.info("evicted %d least recently used kernels from %s", evicted,
                             folder)
            except OSError as e:
                # A read-only cache folder must not stop the compile.
                log.warning("cannot store %s in the disk cache: %s", source_name, e)
        return compiled

    compiled = _load(path, emit, compile_and_store) if exists else None
    source = "disk" if compiled is not None else None
    if compiled is None:
        if exists:
            log.warning("cache entry %s is broken (cut, edited or malformed): compiling "
                        "it again", path)
        compiled = compile_and_store()
    else:
        _report(compiled, source_name, arch, num_sms, shared_memory_bytes, "disk",
                (time.perf_counter() - started) * 1e3, path, memory_gbps)
    name = compiled.kernel_info[0]["name"] if compiled.kernel_info else "kernel"
    _dump(name, key, compiled)
    with _lock:
        _memory[key] = compiled
    return compiled, source
