"""Reliability on the host, without a GPU: thread-safe tracing, a disk cache
that verifies what it loads, sizes the kernel's integers can hold, group
metadata checks, and clear errors for bad arguments."""

import os
import re
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
    "cubin a FIFO": lambda e: _replace_by_fifo(e / "cubin.cubin"),
    "cubin missing": lambda e: (e / "cubin.cubin").unlink(),
    "shared memory bytes edited": lambda e: _edit_shared_bytes(e / "meta.json"),
    "meta.json cut": lambda e: _cut(e / "meta.json", 40),
    "meta.json of another shape": lambda e: (e / "meta.json").write_text("[1, 2, 3]"),
    "meta.json without files": lambda e: (e / "meta.json").write_text(
        '{"format": 2, "stages": ["cubin"], "diagnostics": "", "kernel_info": []}'),
    "meta.json not UTF-8": lambda e: (e / "meta.json").write_bytes(b"\xff\xfe{"),
    # Nested past the JSON parser's recursion limit: RecursionError, a miss.
    "meta.json nested 100,000 deep": lambda e: (e / "meta.json").write_text(
        "[" * 100000 + "]" * 100000),
    "no stages, checksum consistent": lambda e: _rewrite_meta(e / "meta.json", stages=[],
                                                              files={}),
    # Edited with the checksum recomputed (it is no secret): kernel_info not
    # a list of contracts raised AttributeError on every call, never repaired.
    "kernel_info a string, checksum consistent": lambda e: _rewrite_meta(
        e / "meta.json", kernel_info="contract"),
    "a file record of another shape, checksum consistent": lambda e: _rewrite_meta(
        e / "meta.json", files={"cubin": 7}),
    # Not regular files: a read of a FIFO blocked the compile forever.
    "meta.json a FIFO": lambda e: _replace_by_fifo(e / "meta.json"),
    "meta.json a symlink": lambda e: _replace_by_symlink(e / "meta.json"),
}

# Broken stages a launch does not read (the IR kernel.asm shows): the
# entry is a hit, and the stage is compiled again when first read.
IR_STAGE_CORRUPTIONS = {
    "ptx cut": lambda e: _cut(e / "ptx.ptx", 1000),
    "ptx edited, same size": lambda e: (e / "ptx.ptx").write_text(
        (e / "ptx.ptx").read_text().replace("wgmma", "WGMMA", 1)),
    "llvm.ll missing": lambda e: (e / "llvm.ll").unlink(),
    "ptx a FIFO": lambda e: _replace_by_fifo(e / "ptx.ptx"),
}


def _replace_by_fifo(path):
    path.unlink()
    os.mkfifo(path)


def _replace_by_symlink(path):
    """A link to a copy of the same bytes: not what ggc writes, so a miss."""
    copy = path.with_name("meta-copy.json")
    copy.write_bytes(path.read_bytes())
    path.unlink()
    path.symlink_to(copy)


def _rewrite_meta(path, **changes):
    """meta.json changed and its checksum made to match (as _store would)."""
    import json
    meta = json.loads(path.read_text())
    meta.update(changes)
    meta["checksum"] = cache._meta_checksum(meta)
    path.write_text(json.dumps(meta))


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


def test_a_broken_ir_stage_read_by_threads_compiles_once(tmp_path, monkeypatch):
    good, _ = _compile()
    (_entry(tmp_path) / "llvm.ll").unlink()
    hit, _ = _compile()
    compiles = []
    real = cache.compile_ir
    monkeypatch.setattr(cache, "compile_ir",
                        lambda *a, **kw: compiles.append(1) or real(*a, **kw))
    threads = [threading.Thread(target=lambda: hit.asm["llvm"]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(compiles) == 1 and hit.asm["llvm"] == good.asm["llvm"]


@pytest.mark.parametrize("corruption", sorted(IR_STAGE_CORRUPTIONS))
def test_a_broken_ir_stage_is_compiled_again_when_read(tmp_path, corruption, caplog):
    good, _ = _compile()
    assert _compile()[1] == "disk"
    IR_STAGE_CORRUPTIONS[corruption](_entry(tmp_path))
    hit, source = _compile()
    assert source == "disk"  # meta.json and the cubin are whole
    assert hit.asm["cubin"] == good.asm["cubin"]
    assert "changed since it was stored" not in caplog.text
    assert hit.asm == good.asm  # every stage read: the broken one compiled again
    assert "changed since it was stored" in caplog.text
    repaired, source = _compile()
    assert source == "disk" and repaired.asm == good.asm  # and stored anew


def test_a_disk_hit_reads_only_the_launched_stage(tmp_path, monkeypatch):
    _compile()
    read = []
    real = cache.read_regular_file
    monkeypatch.setattr(cache, "read_regular_file",
                        lambda path: read.append(os.path.basename(path)) or real(path))
    hit, source = _compile()
    assert source == "disk" and sorted(read) == ["cubin.cubin", "meta.json"]
    assert list(hit.asm)[-1] == "cubin" and "ptx" in hit.asm  # every stage listed
    assert len(read) == 2  # listing and `in` read nothing
    assert ".version" in hit.asm["ptx"] and read[-1] == "ptx.ptx"


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


def test_an_autotune_file_that_is_a_fifo_is_ignored_without_blocking(tmp_path):
    tuner = ggc.autotune(configs=[ggc.Config(BLOCK_N=64), ggc.Config(BLOCK_N=128)],
                         key=["x"], timer=lambda fn: 1.0)(autotuned)
    os.makedirs(os.path.dirname(tuner._path), exist_ok=True)
    os.mkfifo(tuner._path)  # a read of it used to wait for a writer forever
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


# -- arguments the kernels' integers cannot hold, and other bad arguments -----

from ggc import groups, runtime  # noqa: E402


class ArrayInterface:
    """A stand-in for a CUDA array (CuPy, Numba) at a made-up address."""

    def __init__(self, shape, typestr="<f2", address=1 << 20, strides=None,
                 readonly=False, stream=None):
        self.__cuda_array_interface__ = {
            "shape": tuple(shape), "typestr": typestr, "data": (address, readonly),
            "strides": strides, "version": 3, "stream": stream}


@pytest.fixture
def fake_devices(monkeypatch):
    """Pointers at or above 1 << 40 are on device 1, the others on device 0."""
    monkeypatch.setattr(runtime._ggc, "pointer_device", lambda a: int(a >= 1 << 40))


def f16_kernel(n=128):
    return ggc.Kernel(ir.grouped_matmul("k", layout="contiguous", num_groups=2, n=n, k=128,
                                        dtype="f16", out_dtype="f16"))


def f16_args(m, n=128, **out):
    # Apart, and on device 0 (below 1 << 40) up to 2^30 rows of a and out.
    return [ArrayInterface([m, 128]), ArrayInterface([2, n, 128], address=(1 << 38) + (1 << 21)),
            ArrayInterface([3], "<i4", address=(1 << 38) + (1 << 22)),
            ArrayInterface([m, n], **{"address": 1 << 39, **out})]


def test_row_counts_past_32_bits_are_an_error(fake_devices):
    with pytest.raises(ValueError, match=r"M = 1073741825; the kernel's 32-bit indices"):
        f16_kernel()._check(f16_args(2**30 + 1))
    f16_kernel()._check(f16_args(2**30))


def test_tile_counts_past_32_bits_are_an_error(fake_devices):
    kernel = f16_kernel(n=1 << 20)
    with pytest.raises(ValueError, match=r"tiles at 1073741824 rows; the kernel's 32-bit"):
        kernel(*f16_args(2**30, n=1 << 20))


def test_array_interface_arguments_name_what_is_wrong(fake_devices):
    kernel = f16_kernel()
    cases = [
        (dict(readonly=True), r"argument 3 \(out\) is written by the kernel but is read-only"),
        (dict(address=0), r"argument 3 \(out\) has a null data pointer but shape \[64, 128\]"),
        (dict(strides=(257, 2)), r"argument 3 \(out\) has strides \[257, 2\] bytes, not whole"),
        (dict(address=1 << 40), r"one CUDA device, got \['cuda:0', 'cuda:1'\]"),
        (dict(stream=0), r"names stream 0, which __cuda_array_interface__ forbids"),
    ]
    for out, message in cases:
        with pytest.raises(ValueError, match=message):
            kernel._check(f16_args(64, **out))
    # A negative size launched (grid 2, a size argument of -1), and a
    # stride list of the wrong length was cut to fit.
    with pytest.raises(ValueError, match=r"argument 0 \(a\) has shape \[-1, 128\]; its sizes "
                                         r"must be ints >= 0"):
        kernel._check(f16_args(-1))
    with pytest.raises(ValueError, match=r"argument 3 \(out\) has 1 strides for 2 dimensions"):
        kernel._check(f16_args(64, strides=(256,)))
    with pytest.raises(ValueError, match=r"argument 3 \(out\) is written by the kernel but "
                                         r"shares memory with argument 0 \(a\)"):
        kernel._check(f16_args(64, address=1 << 20))


def test_array_interface_arguments_carry_their_device_and_stream(fake_devices):
    t = runtime._describe(0, "a", ArrayInterface([4, 8], address=1 << 41, stream=1234))
    assert (t.device, t.stream) == (1, 1234)
    empty = runtime._describe(0, "a", ArrayInterface([0, 8], address=0))
    assert empty.device == -1  # no memory: it does not decide the device


def test_bad_arguments_of_the_ops_name_themselves():
    import torch
    from ggc import ops
    b = torch.zeros(2, 128, 128, dtype=torch.bfloat16)
    offsets = torch.zeros(3, dtype=torch.int32)
    with pytest.raises(TypeError, match="b must be a torch.Tensor, got NoneType"):
        ops.grouped_gemm(torch.zeros(4, 128, dtype=torch.bfloat16), None, offsets=offsets)
    with pytest.raises(TypeError, match="a_scale must be a torch.Tensor, got list"):
        ops.grouped_gemm(b[0], b, offsets=offsets, a_scale=[1.0])
    meta = [t.to("meta") for t in (b[0], b, offsets)]
    with pytest.raises(ValueError, match="argument 'a' must be on a CUDA device, or on the CPU "
                                         "for ggc's reference backend, but is on meta"):
        ops.grouped_gemm(meta[0], meta[1], offsets=meta[2])
    with pytest.raises(ValueError, match=r"expected_m must be an int in \[1, 2\^31 - 1\]"):
        ops.grouped_gemm(b, b, masked_m=offsets[:2], a_scale=torch.ones(2),
                         expected_m=2**63)


def test_compile_options_of_the_wrong_kind_are_named():
    with pytest.raises(ValueError, match=r"num_sms must be an int in \[1, 4096\], got 1099"):
        ggc.compile_ir(IR, num_sms=2**40)
    with pytest.raises(ValueError, match="num_sms must be an int"):
        ggc.jit(num_sms=0)(silu_rows.fn)
    with pytest.raises(TypeError, match="arch must be a str, got int"):
        ggc.compile_ir(IR, arch=90)
    with pytest.raises(TypeError, match="print_ir_after_all must be a bool, got str"):
        ggc.compile_ir(IR, print_ir_after_all="yes")


def test_the_fake_implementation_rejects_what_the_op_rejects():
    import torch
    from ggc import torch_ops  # noqa: F401
    from torch._subclasses.fake_tensor import FakeTensorMode
    with FakeTensorMode():
        x = torch.empty(100, 512, dtype=torch.bfloat16)
        w = torch.empty(8, 256, 512, dtype=torch.bfloat16)
        with pytest.raises(TypeError, match="offsets must be int32 or int64, got torch.float32"):
            torch.ops.ggc.grouped_mm(x, w, torch.empty(9))
        with pytest.raises(ValueError, match="N a multiple of 8 .* got N = 252"):
            torch.ops.ggc.grouped_mm(x, torch.empty(8, 252, 512, dtype=torch.bfloat16),
                                     torch.empty(9, dtype=torch.int32))


# -- group metadata checks (the host half of validate=True) -------------------

def _np(values):
    import numpy as np
    return np.array(values, dtype=np.int64)


@pytest.mark.parametrize("offsets, all_rows, message", [
    ([0, 5, 3, 9], False, r"offsets\[2\] = 3 < offsets\[1\] = 5 \(groups would overlap\)"),
    ([-1, 5, 9], False, r"offsets\[0\] = -1 is negative"),
    ([0, 5, 11], False, r"offsets\[-1\] = 11 is past M = 9"),
    ([0, 5, 2**32 + 5], False, r"offsets\[-1\] = 4294967301 is past M = 9"),
    ([0, 5, 8], True, r"the groups cover rows \[0, 8\) of 9"),
])
def test_bad_offsets_are_named(offsets, all_rows, message):
    with pytest.raises(groups.GroupMetadataError, match=r"argument 2 \(groups\): .*" + message):
        groups._check_offsets("argument 2 (groups)", _np(offsets), 9, "M", all_rows)


def test_good_offsets_pass():
    groups._check_offsets("x", _np([0, 0, 4, 4, 9]), 9, "M", True)
    groups._check_offsets("x", _np([0, 3]), 9, "M", False)  # tail rows left as they are


def test_bad_counts_and_row_groups_are_named():
    with pytest.raises(groups.GroupMetadataError, match=r"masked_m\[1\] = 300 is outside"):
        groups._check_counts("x", _np([3, 300]), 256)
    with pytest.raises(groups.GroupMetadataError, match=r"m_indices\[2\] = 4 is not a group"):
        groups._check_row_groups("x", _np([0, 0, 4]), 4, 2)
    with pytest.raises(groups.GroupMetadataError, match=r"m_indices\[3\] = 1 shares a 4-row"):
        groups._check_row_groups("x", _np([0, 0, -1, 1, 1, 1]), 2, 4)
    groups._check_row_groups("x", _np([0, 0, -1, -1, 1, 1, 1, -1, 1]), 2, 4)


def test_the_disk_cache_evicts_the_least_recently_used_past_its_bound(tmp_path,
                                                                      monkeypatch):
    import os
    texts = [ir.grouped_matmul(f"k{i}", layout="contiguous", num_groups=2, n=128, k=128)
             for i in range(3)]

    def compile_(text):
        cache._memory.clear()
        return cache.compile_cached(text, emit="cubin", arch="sm_90a", num_sms=132)[1]

    compile_(texts[0])
    (entry,) = cache.entries(str(tmp_path / "cache"))
    monkeypatch.setenv("GGC_CACHE_MAX_MB", str(2.5 * entry[1] / (1 << 20)))
    compile_(texts[1])
    for path, _, _ in cache.entries(str(tmp_path / "cache")):
        os.utime(os.path.join(path, "meta.json"), (1, 1))  # both long unused
    assert compile_(texts[0]) == "disk"  # ... but now text 0 is used again
    compile_(texts[2])  # a third entry passes the bound: text 1 goes
    assert len(cache.entries(str(tmp_path / "cache"))) == 2
    assert compile_(texts[0]) == "disk" and compile_(texts[1]) is None


def test_python_m_ggc_cache_shows_and_clears(tmp_path, capsys):
    from ggc.__main__ import main
    _compile()
    # What a writer or remover stopped midway leaves behind.
    (tmp_path / "cache" / ".tmp-abc123").mkdir()
    (tmp_path / "cache" / ".tmp-abc123" / "ptx.ptx").write_text("half")
    (tmp_path / "cache" / ".old-def456").mkdir()
    assert main(["cache"]) == 0 and "1 kernels" in capsys.readouterr().out
    assert main(["cache", "--clear"]) == 0
    assert "removed 1 kernels" in capsys.readouterr().out
    assert cache.entries(str(tmp_path / "cache")) == []
    assert sorted(p.name for p in (tmp_path / "cache").iterdir()) == []


@pytest.mark.parametrize("value", ["abc", "nan", "inf", "-1", ""])
def test_a_bad_cache_bound_is_an_error_on_every_call(tmp_path, monkeypatch, value):
    _compile()  # in memory now: the next call is a hit
    monkeypatch.setenv("GGC_CACHE_MAX_MB", value)
    with pytest.raises(ValueError, match="GGC_CACHE_MAX_MB must be a finite number of "
                                         f"megabytes >= 0 \\(default 1024\\), got '{value}'"):
        _compile()


def test_masked_counts_are_checked_against_the_static_m_max(monkeypatch, fake_devices):
    kernel = ggc.Kernel(ir.grouped_matmul("masked", layout="masked", num_groups=2, n=128,
                                          k=128, m=64, dtype="f16", out_dtype="f16"))
    args = [ArrayInterface([2, 64, 128]), ArrayInterface([2, 128, 128], address=1 << 30),
            ArrayInterface([2], "<i4", address=1 << 31),
            ArrayInterface([2, 64, 128], address=1 << 32)]
    tensors, size, _ = kernel._check(args)
    monkeypatch.setattr(groups, "_read", lambda t, device, stream: _np([3, 65]))
    with pytest.raises(groups.GroupMetadataError, match=r"masked_m\[1\] = 65 is outside "
                                                        r"\[0, M_max = 64\]"):
        groups.check(kernel.info, kernel._roles, tensors, size, 0, 0)
    monkeypatch.setattr(groups, "_read", lambda t, device, stream: _np([3, 64]))
    groups.check(kernel.info, kernel._roles, tensors, size, 0, 0)


def test_ggc_validate_is_read_when_ops_are_called(monkeypatch):
    import torch
    from ggc import ops
    seen = {}
    monkeypatch.setattr(groups, "VALIDATE_BY_DEFAULT", True)
    monkeypatch.setattr(ops, "_kernel_for", lambda *key: lambda *a, **kw: seen.update(kw))
    a = torch.zeros(4, 128, dtype=torch.bfloat16)
    ops.grouped_gemm(a, torch.zeros(2, 128, 128, dtype=torch.bfloat16),
                     offsets=torch.zeros(3, dtype=torch.int32), out=torch.empty(4, 128))
    assert seen["validate"] is True


def test_dlpack_arrays_are_read_through_torch_with_their_device():
    import torch

    class Producer:  # a DLPack producer that is not a torch tensor
        def __init__(self, t):
            self.t = t

        def __dlpack__(self, **kwargs):
            return self.t.__dlpack__(**kwargs)

        def __dlpack_device__(self):
            return self.t.__dlpack_device__()

    t = runtime._describe(0, "a", Producer(torch.arange(12, dtype=torch.int32).view(3, 4)))
    assert (t.shape, t.strides, t.dtype, t.device, t.location) == ((3, 4), (4, 1), "i32",
                                                                   None, "cpu")
    with pytest.raises(TypeError, match="argument 0 \\(a\\) has dtype torch.float64"):
        runtime._describe(0, "a", Producer(torch.zeros(2, dtype=torch.float64)))

    class Half:  # not the whole protocol
        def __dlpack__(self, **kwargs):
            return torch.zeros(2).__dlpack__(**kwargs)

    with pytest.raises(TypeError, match="has __dlpack__ but no __dlpack_device__"):
        runtime._describe(0, "a", Half())


def test_python_m_ggc_info_prints_config_shared_memory_registers(capsys):
    import glob
    import os
    from ggc.__main__ import main
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    example = sorted(glob.glob(os.path.join(root, "docs", "examples", "masked_fp8*.mlir")))
    assert main(["info", *example]) == 0
    out = capsys.readouterr().out
    assert re.search(r"masked_fp8_kernel: #gg.config<block = \[\d+, \d+, \d+\].*>, \d+ bytes "
                     r"of shared memory, \d+ registers, 0 \+ 0 bytes spilled", out), out
