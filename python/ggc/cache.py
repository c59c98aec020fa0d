"""Compiled kernels, cached in memory and on disk.

The key is the SHA-256 of the IR text, the compiler version, the target
arch, the SM count and the last stage: a second process with the same
kernel loads it from disk instead of compiling. The disk cache lives in
$GGC_CACHE_DIR (default ~/.cache/ggc); set GGC_CACHE_DIR=off to disable it.
$GGC_DUMP_DIR, when set, receives every stage of every kernel as files that
`ggc` can re-run (`<name>-<key>.gg.mlir` is the input).
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
import threading
from typing import Dict, Optional, Tuple

from .compiler import CompiledIR, compile_ir, version

_memory: Dict[str, CompiledIR] = {}
_lock = threading.Lock()
_EXTENSIONS = {"llvm": ".ll", "ptx": ".ptx", "cubin": ".cubin"}


def cache_dir() -> Optional[str]:
    path = os.environ.get("GGC_CACHE_DIR", os.path.join(os.path.expanduser("~"), ".cache",
                                                         "ggc"))
    return None if path in ("", "off", "0") else path


def key_of(ir: str, *, emit: str, arch: str, num_sms: int) -> str:
    h = hashlib.sha256()
    for part in (version(), arch, str(num_sms), emit, ir):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()


def _load(path: str) -> Optional[CompiledIR]:
    try:
        with open(os.path.join(path, "meta.json")) as f:
            meta = json.load(f)
        asm = {}
        for stage in meta["stages"]:
            mode = "rb" if stage == "cubin" else "r"
            with open(os.path.join(path, stage + _EXTENSIONS.get(stage, ".mlir")), mode) as f:
                asm[stage] = f.read()
        return CompiledIR(asm=asm, diagnostics=meta["diagnostics"], ir_after_all="",
                          kernel_info=meta["kernel_info"])
    except (OSError, ValueError, KeyError):
        return None  # missing or partly written: compile again


def _store(path: str, compiled: CompiledIR) -> None:
    # Write into a fresh folder and rename it into place, so that a reader
    # in another process never sees half an entry.
    parent = os.path.dirname(path)
    os.makedirs(parent, exist_ok=True)
    staging = tempfile.mkdtemp(dir=parent, prefix=".tmp-")
    for stage, text in compiled.asm.items():
        mode = "wb" if stage == "cubin" else "w"
        with open(os.path.join(staging, stage + _EXTENSIONS.get(stage, ".mlir")), mode) as f:
            f.write(text)
    with open(os.path.join(staging, "meta.json"), "w") as f:
        json.dump({"stages": list(compiled.asm), "diagnostics": compiled.diagnostics,
                   "kernel_info": compiled.kernel_info}, f)
    try:
        os.rename(staging, path)
    except OSError:  # another process stored it first
        import shutil
        shutil.rmtree(staging, ignore_errors=True)


def _dump(name: str, key: str, compiled: CompiledIR) -> None:
    folder = os.environ.get("GGC_DUMP_DIR")
    if not folder:
        return
    os.makedirs(folder, exist_ok=True)
    for stage, text in compiled.asm.items():
        path = os.path.join(folder, f"{name}-{key[:12]}.{stage}"
                                    f"{_EXTENSIONS.get(stage, '.mlir')}")
        with open(path, "wb" if stage == "cubin" else "w") as f:
            f.write(text)


def compile_cached(ir: str, *, emit: str, arch: str, num_sms: int,
                   source_name: str = "<ggc>") -> Tuple[CompiledIR, Optional[str]]:
    """Compiles `ir`, or finds it in the caches. Returns the result and where
    it came from: "memory", "disk" or None (compiled now)."""
    key = key_of(ir, emit=emit, arch=arch, num_sms=num_sms)
    with _lock:
        hit = _memory.get(key)
    if hit is not None:
        return hit, "memory"
    folder = cache_dir()
    path = os.path.join(folder, key) if folder else None
    compiled = _load(path) if path and os.path.isdir(path) else None
    source = "disk" if compiled is not None else None
    if compiled is None:
        compiled = compile_ir(ir, emit=emit, arch=arch, num_sms=num_sms,
                              source_name=source_name)
        if path:
            try:
                _store(path, compiled)
            except OSError:
                pass  # a read-only cache folder must not stop the compile
    name = compiled.kernel_info[0]["name"] if compiled.kernel_info else "kernel"
    _dump(name, key, compiled)
    with _lock:
        _memory[key] = compiled
    return compiled, source
