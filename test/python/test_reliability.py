"""Reliability on the host, without a GPU: thread-safe tracing, a disk cache
that verifies what it loads, sizes the kernel's integers can hold, group
metadata checks, and clear errors for bad arguments."""

import sys
import threading

import pytest

import ggc
import ggc.language as gl
from ggc import spec


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path / "cache"))


@ggc.jit
def silu_rows(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, route: gl.RowVector,
              y: gl.Out):
    gl.store(y, gl.silu(gl.grouped_dot(x, w, offs)) * route)


@ggc.jit
def shifted_cols(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, bias: gl.ColVector,
                 y: gl.Out):
    gl.store(y, gl.maximum(gl.grouped_dot(x, w, offs) + bias, 0.0) - 1.5)


def _args(epilogue_arg):
    return (spec([None, 256], "bf16"), spec([4, 128, 256], "bf16"), spec([5], "i32"),
            epilogue_arg, spec([None, 128], "bf16"))


def test_threads_tracing_different_kernels_each_get_their_own_ir(monkeypatch):
    # A tiny switch interval makes the threads interleave inside the traces.
    monkeypatch.setattr(sys, "getswitchinterval", sys.getswitchinterval)
    sys.setswitchinterval(1e-6)
    try:
        jobs = [(silu_rows, _args(spec([None], "f32"))),
                (shifted_cols, _args(spec([4, 128], "f32")))]
        expected = [fn.trace(*args) for fn, args in jobs]
        wrong, errors = [], []
        start = threading.Barrier(len(jobs))

        def run(index):
            fn, args = jobs[index]
            start.wait()
            for _ in range(300):
                try:
                    text = fn.trace(*args)
                except Exception as e:  # noqa: BLE001 - counted, then asserted
                    errors.append(repr(e))
                    continue
                if text != expected[index]:
                    wrong.append(index)

        threads = [threading.Thread(target=run, args=(i,)) for i in range(len(jobs))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(0.005)
    assert errors == [] and wrong == []


def test_language_functions_outside_a_kernel_are_an_error():
    with pytest.raises(gl.CompileError, match="only inside a @ggc.jit kernel"):
        gl.group_id()


# -- the disk cache ----------------------------------------------------------

from ggc import cache, ir  # noqa: E402

IR = ir.grouped_matmul("cached", layout="contiguous", num_groups=2, n=128, k=128)


def _compile():
    cache._memory.clear()  # a fresh process: only the disk cache remains
    return cache.compile_cached(IR, emit="cubin", arch="sm_90a", num_sms=132)


def _entry(tmp_path):
    (entry,) = [p for p in (tmp_path / "cache").iterdir() if not p.name.startswith(".")]
    return entry


def _cut(path, size):
    path.write_bytes(path.read_bytes()[:size])


def _edit_shared_bytes(path):
    import json
    meta = json.loads(path.read_text())
    meta["kernel_info"][0]["shared_bytes"] += 1024
    path.write_text(json.dumps(meta))


CORRUPTIONS = {
    "cubin cut to 100 bytes": lambda e: _cut(e / "cubin.cubin", 100),
    "cubin empty": lambda e: _cut(e / "cubin.cubin", 0),
    "ptx cut": lambda e: _cut(e / "ptx.ptx", 1000),
    "ptx edited, same size": lambda e: (e / "ptx.ptx").write_text(
        (e / "ptx.ptx").read_text().replace("wgmma", "WGMMA", 1)),
    "shared memory bytes edited": lambda e: _edit_shared_bytes(e / "meta.json"),
    "meta.json cut": lambda e: _cut(e / "meta.json", 40),
    "meta.json of another shape": lambda e: (e / "meta.json").write_text("[1, 2, 3]"),
    "meta.json without files": lambda e: (e / "meta.json").write_text(
        '{"format": 2, "stages": ["cubin"], "diagnostics": "", "kernel_info": []}'),
    "meta.json not UTF-8": lambda e: (e / "meta.json").write_bytes(b"\xff\xfe{"),
    "a stage file missing": lambda e: (e / "llvm.ll").unlink(),
}


@pytest.mark.parametrize("corruption", sorted(CORRUPTIONS))
def test_a_broken_cache_entry_is_a_miss_and_is_repaired(tmp_path, corruption):
    good, source = _compile()
    assert source is None
    assert _compile()[1] == "disk"
    CORRUPTIONS[corruption](_entry(tmp_path))
    again, source = _compile()
    assert source is None, "a broken entry was returned as a hit"
    assert again.asm == good.asm and again.kernel_info == good.kernel_info
    repaired, source = _compile()
    assert source == "disk" and repaired.asm == good.asm
    assert repaired.kernel_info == good.kernel_info


def test_cache_entries_follow_the_umask(tmp_path):
    import os
    import stat
    old = os.umask(0o022)
    try:
        _compile()
    finally:
        os.umask(old)
    entry = _entry(tmp_path)
    assert stat.S_IMODE(entry.stat().st_mode) == 0o755
    assert stat.S_IMODE((entry / "cubin.cubin").stat().st_mode) == 0o644
    assert not [p for p in (tmp_path / "cache").iterdir() if p.name.startswith(".")]


@pytest.mark.parametrize("saved", ["[1, 2]", '{"x=[4]": 7}', '{"x=[4]": {"BLOCK_N": 96}}',
                                   '{"x=[4]": {"BLOCK_N": 64', "\xff"])
def test_a_broken_autotune_file_is_ignored(tmp_path, saved):
    tuner = ggc.autotune(configs=[ggc.Config(BLOCK_N=64), ggc.Config(BLOCK_N=128)],
                         key=["x"], timer=lambda fn: 1.0)(autotuned)
    path = tuner._path
    import os
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="latin-1") as f:
        f.write(saved)
    reloaded = ggc.autotune(configs=[ggc.Config(BLOCK_N=64), ggc.Config(BLOCK_N=128)],
                            key=["x"], timer=lambda fn: 1.0)(autotuned)
    assert reloaded.best == {}


def test_autotune_winners_survive_a_new_process(tmp_path):
    configs = [ggc.Config(BLOCK_N=64), ggc.Config(BLOCK_N=128)]
    tuner = ggc.autotune(configs=configs, key=["x"], timer=lambda fn: 1.0)(autotuned)
    tuner.best["x=[4]"] = configs[1]
    tuner._save()
    reloaded = ggc.autotune(configs=configs, key=["x"], timer=lambda fn: 1.0)(autotuned)
    assert reloaded.best == {"x=[4]": reloaded.configs[1]}


@ggc.jit
def autotuned(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, y: gl.Out,
              BLOCK_N: gl.constexpr = None):
    gl.store(y, gl.grouped_dot(x, w, offs))
