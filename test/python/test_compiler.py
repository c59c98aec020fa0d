"""The compiler library from Python: stages, outputs and errors."""

import functools
import os
import re
import subprocess
import sys

import pytest

import ggc

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = os.path.join(ROOT, "docs", "examples")

MASKED = """
func.func @k(%a: memref<4x{m}x512xbf16>, %b: memref<4x1024x512xbf16>,
             %m: memref<4xi32>, %o: memref<4x{m}x1024xbf16>) {{
  gg.grouped_matmul masked a(%a : memref<4x{m}x512xbf16>)
      b(%b : memref<4x1024x512xbf16>) groups(%m : memref<4xi32>)
      out(%o : memref<4x{m}x1024xbf16>) {{expected_m = {expected} : i64}}
  return
}}
"""


def test_stages_are_listed_in_pipeline_order():
    assert [s.name for s in ggc.stages()] == ["gg", "gg-config", "ggk", "nvvm", "llvm", "ptx",
                                              "cubin"]


def test_compile_returns_every_stage_up_to_emit():
    out = ggc.compile_ir(MASKED.format(m=256, expected=40), emit="gg-config")
    assert list(out.asm) == ["gg", "gg-config"]
    assert "#gg.config" not in out.asm["gg"]
    # expected_m = 40 is a decode batch: 64-row tiles.
    assert "#gg.config<block = [64, " in out.asm["gg-config"]
    out = ggc.compile_ir(MASKED.format(m=256, expected=200), emit="gg-config")
    assert "#gg.config<block = [128, " in out.asm["gg-config"]


@pytest.mark.parametrize("example", sorted(os.listdir(EXAMPLES)))
def test_every_example_compiles_to_ptx(example):
    with open(os.path.join(EXAMPLES, example)) as f:
        source = f.read()
    assert "#gg.config" in ggc.compile_ir(source, emit="gg-config").asm["gg-config"]
    out = ggc.compile_ir(source, source_name=example)
    assert out.last_stage == "ptx" and "wgmma.mma_async" in out.asm["ptx"]
    assert out.kernel_info[0]["name"].endswith("_kernel")


def test_verifier_error_names_the_operand_and_the_file():
    bad = MASKED.format(m=256, expected=300)
    with pytest.raises(ggc.CompilationError) as info:
        ggc.compile_ir(bad, source_name="moe.mlir")
    assert "moe.mlir:4:3: error:" in info.value.diagnostics
    assert "'expected_m' must be in [1, M_max = 256], but is 300" in str(info.value)


def test_a_nul_byte_in_the_ir_is_an_error_at_its_place():
    good = MASKED.format(m=256, expected=64)
    with pytest.raises(ggc.CompilationError) as info:
        ggc.compile_ir(good + "\0" + good.replace("@k", "@k2"), source_name="moe.mlir")
    line = good.count("\n") + 1
    assert (f"moe.mlir:{line}:1: error: IR text holds a NUL byte (offset {len(good)}): IR "
            f"must be text without NULs") in info.value.diagnostics


def test_cubin_is_bytes_and_kernel_info_describes_the_launch():
    out = ggc.compile_ir(MASKED.format(m=256, expected=200), emit="cubin")
    assert isinstance(out.asm["cubin"], bytes) and out.asm["cubin"][:4] == b"\x7fELF"
    info = out.kernel_info[0]
    assert info["layout"] == "masked" and info["block"] == 384
    kinds = [p["kind"] for p in info["params"]]
    # A's loads (whole tile, then 64 down to 8 rows), B, the store pool
    # (128, 64, ..., 1 rows), out, groups, M.
    assert kinds == ["tensor_map"] * 14 + ["pointer", "pointer", "size"]
    assert [(p["operand"], p["box"][1]) for p in info["params"][:5]] == \
        [("a", 128), ("a", 64), ("a", 32), ("a", 16), ("a", 8)]
    assert info["params"][5]["operand"] == "b"
    pool = [p["box"][1] for p in info["params"][6:14]]
    assert pool == [128, 64, 32, 16, 8, 4, 2, 1]
    # Each box stores one 128B-swizzled chunk of 64 bf16 columns.
    assert {(p["swizzle"], p["box"][0]) for p in info["params"][6:14]} == {("128B", 64)}
    assert "Used" in out.diagnostics  # ptxas -v resource report


@pytest.mark.parametrize("layout, a_scale, k, box", [
    ("masked", "block_mn", 512, [132, 1, 1]),     # [G, ceil(K/128), align4(M)]
    ("contiguous", "block_mn", 512, [132, 1]),    # [ceil(K/128), align4(M)]
    ("masked", "block", 7168, [4, 132, 1]),       # [G, M, ceil(K/128)], 56 blocks a row
    ("contiguous", "block", 8192, [4, 132]),      # [M, ceil(K/128)]
    ("masked", "block", 640, None),               # K-major, 5 blocks a row: per-warp slots
    ("contiguous", "block", 1024, [4, 132]),      # 8 blocks a row
    ("padded_contiguous", "block", 1024, None),   # 8 blocks, padded: slots (gg-plan-kernel)
])
def test_block_scales_of_a_reach_the_kernel_by_tma_where_a_row_is_a_box(layout, a_scale, k,
                                                                         box):
    # M-major 1x128 scales ride with the stages: one TMA box of 128 + 4 rows
    # per K block (the window starts at the tile's first row rounded down to
    # 4); K-major ones as a box four K blocks wide where a row of them is
    # whole 16-byte units (in the padded layout, rows of at least 32 K
    # blocks: gg-plan-kernel's rule). Other K-major ones keep only their
    # pointer.
    from ggc import ir
    src = ir.grouped_matmul("k", layout=layout, num_groups=4, n=256, k=k,
                            m=256 if layout == "masked" else None, dtype="f8E4M3FN",
                            a_scale=a_scale, b_scale="block")
    info = ggc.compile_ir(src, emit="nvvm").kernel_info[0]
    maps = [p for p in info["params"]
            if p["kind"] == "tensor_map" and p["operand"] == "a_scale"]
    assert [(p["box"], p["dtype"], p["swizzle"]) for p in maps] == \
        ([] if box is None else [(box, "float32", "none")])
    # The map comes right after B's, before the store pool's.
    kinds = [(p["kind"], p["operand"]) for p in info["params"]]
    if box is not None:
        assert kinds.index(("tensor_map", "a_scale")) == kinds.index(("tensor_map", "b")) + 1
    assert ("pointer", "a_scale") in kinds


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"emit": "sass"}, "emit must be one of"),
        ({"num_sms": 0}, r"num_sms must be an int in \[1, 4096\], got 0"),
        ({"num_sms": True}, "num_sms must be an int in"),
        ({"shared_memory_bytes": -1},
         r"shared_memory_bytes must be an int in \[0, 1048576\] \(0: the target's\), got -1"),
        ({"shared_memory_bytes": 1.5}, "shared_memory_bytes must be an int in"),
        ({"memory_gbps": -1},
         r"memory_gbps must be an int in \[0, 1048576\] \(0: unknown\), got -1"),
        ({"memory_gbps": "3352"}, "memory_gbps must be an int in"),
    ],
)
def test_bad_arguments_are_rejected_before_compiling(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ggc.compile_ir(MASKED.format(m=64, expected=8), **kwargs)


def test_source_must_be_text():
    with pytest.raises(TypeError, match="source must be gg IR text"):
        ggc.compile_ir(b"func.func @f() { return }")


def test_num_sms_reaches_the_config():
    out = ggc.compile_ir(MASKED.format(m=64, expected=8), emit="gg-config", num_sms=78)
    assert "sms = 78>" in out.asm["gg-config"]


@pytest.mark.parametrize("shared, config, warp_columns", [
    # The target's (an A100's 163 KiB): 128x128, five stages, 32x64 warps.
    (0, "block = [128, 128, 64], stages = 5", 2),
    # An RTX 4090's or L40S's 99 KiB: three stages.
    (101376, "block = [128, 128, 64], stages = 3", 2),
    # A Hopper card's 227 KiB: four stages of 128x256 tiles of 64x64 warps.
    (232448, "block = [128, 256, 64], stages = 4", 4),
])
def test_the_devices_shared_memory_plans_the_sm80_kernel(shared, config, warp_columns):
    text = ggc.ir.grouped_matmul("k", layout="contiguous", num_groups=8, n=4096, k=4096)
    plan = ggc.compile_ir(text, emit="gg-config", arch="sm_80",
                          shared_memory_bytes=shared).plans[0]["attributes"]
    assert config in plan["config"]
    assert f"warp_columns = {warp_columns}," in plan["kernel_plan"]
    assert "producer = none" in plan["kernel_plan"]


def test_the_devices_shared_memory_keys_the_cache(tmp_path, monkeypatch):
    """Kernels planned for one card's shared memory are not served for
    another's, and the runtime plans with the card's unless told another."""
    from ggc import cache, compiler, runtime
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path))
    text = ggc.ir.grouped_matmul("smem", layout="contiguous", num_groups=8, n=4096, k=4096)
    a100, source = cache.compile_cached(text, emit="ptx", arch="sm_80", num_sms=132)
    hopper, again = cache.compile_cached(text, emit="ptx", arch="sm_80", num_sms=132,
                                         shared_memory_bytes=232448)
    assert again is None  # compiled, not served from the 163 KiB entry
    assert (a100.kernel_info[0]["block_n"], hopper.kernel_info[0]["block_n"]) == (128, 256)
    monkeypatch.setattr(compiler, "_device_shared_memory", 232448)
    monkeypatch.setattr(compiler, "_device_target", None)
    compiled, _ = runtime.compile_for_launch(text, target="sm_80")
    assert compiled.kernel_info[0]["block_n"] == 256
    assert compiled.kernel_info[0]["shared_bytes"] > 166912
    # An A100's plan on this card: the environment, then the setter.
    monkeypatch.setenv("GGC_SHARED_MEMORY_BYTES", "166912")
    monkeypatch.setattr(compiler, "_env_shared_memory", ())  # read once per process
    compiled, _ = runtime.compile_for_launch(text, target="sm_80")
    assert compiled.kernel_info[0]["block_n"] == 128
    assert compiled.kernel_info[0]["shared_bytes"] <= 166912
    monkeypatch.setenv("GGC_SHARED_MEMORY_BYTES", "lots")
    monkeypatch.setattr(compiler, "_env_shared_memory", ())
    with pytest.raises(ValueError, match="GGC_SHARED_MEMORY_BYTES: shared_memory_bytes must be"):
        runtime.compile_for_launch(text, target="sm_80")
    monkeypatch.delenv("GGC_SHARED_MEMORY_BYTES")
    monkeypatch.setattr(compiler, "_env_shared_memory", ())
    try:
        ggc.set_shared_memory_bytes(101376)
        assert ggc.get_shared_memory_bytes() == 101376
        compiled, _ = runtime.compile_for_launch(text, target="sm_80")
        assert compiled.kernel_info[0]["shared_bytes"] <= 101376
        with pytest.raises(ValueError, match="shared_memory_bytes must be an int"):
            ggc.set_shared_memory_bytes(-5)
    finally:
        ggc.set_shared_memory_bytes(None)
    assert ggc.get_shared_memory_bytes() == 232448


def test_print_ir_after_all_records_each_pass():
    out = ggc.compile_ir(MASKED.format(m=64, expected=8), emit="gg-config",
                         print_ir_after_all=True)
    assert "IR Dump After SelectConfig" in out.ir_after_all
    plain = ggc.compile_ir(MASKED.format(m=64, expected=8), emit="gg-config")
    assert plain.ir_after_all == ""


def test_timing_lists_each_stage_and_pass_only_when_asked():
    source = MASKED.format(m=64, expected=8)
    out = ggc.compile_ir(source, emit="ggk", timing=True)
    lines = out.timing.splitlines()
    assert lines[0].startswith("ggc timing")
    names = [line.rsplit(None, 1)[0].strip() for line in lines[1:]]
    assert names.index("stage gg-config") < names.index("gg-select-config") \
        < names.index("stage ggk") < names.index("gg-lower-to-nvvm")
    assert names[-1] == "total" and "stage nvvm" not in names
    assert all(float(line.rsplit(None, 1)[1]) >= 0 for line in lines[1:])
    plain = ggc.compile_ir(source, emit="ggk")
    assert plain.timing == "" and plain.asm == out.asm
    with pytest.raises(TypeError, match="timing must be a bool"):
        ggc.compile_ir(source, timing="yes")


def test_driver_and_library_agree():
    """`ggc` and compile_ir are one code path: same text for the same input."""
    build = os.environ.get("GGC_BUILD_DIR", os.path.join(ROOT, "build"))
    path = os.path.join(EXAMPLES, "masked_fp8_deepgemm.mlir")
    driver = subprocess.run([os.path.join(build, "bin", "ggc"), path, "--emit=gg-config"],
                            check=True, capture_output=True, text=True).stdout
    with open(path) as f:
        library = ggc.compile_ir(f.read(), emit="gg-config").asm["gg-config"]
    assert driver == library


def test_version_names_llvm():
    assert ggc.version().startswith("ggc ") and "LLVM 22" in ggc.version()
    # The sources' hash keys the kernel cache (a rebuilt compiler recompiles).
    assert re.search(r"; sources [0-9a-f]{16}\)$", ggc.version())


@pytest.mark.parametrize("generated, checked_in", [
    ("dialects/GGDialect.md", "docs/dialect.md"),
    ("dialects/GGKDialect.md", "docs/kernel-dialect.md"),
    ("compiler/GGCPasses.md", "docs/passes.md"),
])
def test_generated_docs_are_current(generated, checked_in):
    """docs/ carries the ODS-generated reference; `make docs` refreshes it."""
    build = os.environ.get("GGC_BUILD_DIR", os.path.join(ROOT, "build"))
    with open(os.path.join(build, generated)) as f:
        fresh = f.read()
    with open(os.path.join(ROOT, checked_in)) as f:
        assert f.read() == fresh, f"{checked_in} is stale: run `make docs`"


def test_compiled_kernels_report_registers_spills_and_shared_memory(tmp_path, monkeypatch):
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path))
    text = ggc.ir.grouped_matmul("res", layout="contiguous", num_groups=2, n=128, k=128)
    kernel = ggc.Kernel(text)
    r = kernel.resources
    assert 24 <= r["registers"] <= 255
    assert r["spill_store_bytes"] == 0 and r["spill_load_bytes"] == 0
    assert r["shared_bytes"] == kernel.info["shared_bytes"] > 0
    # A kernel loaded from the disk cache reports the same.
    from ggc import cache
    cache._memory.clear()
    again = ggc.Kernel(text)
    assert again.cache_hit == "disk" and again.resources == r


def test_ggc_log_prints_compiles_and_cache_events(tmp_path):
    script = ("import ggc\nfrom ggc import ir\n"
              "ggc.Kernel(ir.grouped_matmul('logged', layout='contiguous', num_groups=2, "
              "n=128, k=128))\n")
    env = dict(os.environ, GGC_LOG="debug", GGC_CACHE_DIR=str(tmp_path),
               PYTHONPATH=os.path.join(ROOT, "python"))
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, timeout=120) for _ in range(2)]
    # The kernel, its target, milliseconds, a miss; then a disk hit, no compile.
    assert re.search(r"ggc INFO: compiled logged_kernel \(<ggc>\) for sm_90a \(132 SMs\) "
                     r"in [0-9]+ ms \(cache miss; to cubin, key [0-9a-f]{12}\)", runs[0].stderr)
    assert ("ggc INFO: loaded logged_kernel (<ggc>) for sm_90a (132 SMs) from the disk cache"
            in runs[1].stderr) and "compiled" not in runs[1].stderr
    quiet = subprocess.run([sys.executable, "-c", script],
                           env={**env, "GGC_LOG": ""}, capture_output=True, text=True)
    assert quiet.stderr == ""


def test_without_ptxas_a_kernel_is_kept_as_ptx_for_the_driver(tmp_path, monkeypatch):
    from ggc import runtime
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path))
    real = runtime.compile_cached

    def no_ptxas(ir, *, emit, **kwargs):  # as on a machine without the toolkit
        if emit == "cubin":
            raise ggc.CompilationError("error: stage 'cubin' needs ptxas (CUDA toolkit)")
        return real(ir, emit=emit, **kwargs)

    monkeypatch.setattr(runtime, "compile_cached", no_ptxas)
    text = ggc.ir.grouped_matmul("noptxas", layout="contiguous", num_groups=2, n=128, k=128)
    kernel = ggc.Kernel(text)
    assert "cubin" not in kernel.asm and ".entry noptxas_kernel" in kernel.asm["ptx"]
    assert kernel.resources == {"shared_bytes": kernel.info["shared_bytes"]}


def test_the_devices_memory_bandwidth_plans_and_keys_the_cache(tmp_path, monkeypatch):
    """A card below 4,000 GB/s of DRAM bandwidth (an H100 SXM's 3,352) gets
    wider 16-bit contiguous tiles than an unknown card or an H200; the
    cache keeps the two apart, and the runtime plans with the card's
    bandwidth unless told another."""
    from ggc import cache, compiler, runtime
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path))
    text = ggc.ir.grouped_matmul("gbps", layout="contiguous", num_groups=32, n=3072, k=8192,
                                 expected_m=512)

    def block_n(gbps):
        return ggc.compile_ir(text, emit="gg-config", memory_gbps=gbps).plans[0]["config"]

    assert [block_n(g)["block"][1] for g in (0, 4915, 3999, 3352)] == [128, 128, 256, 256]
    narrow_card, first = cache.compile_cached(text, emit="gg-config", arch="sm_90a",
                                              num_sms=132, memory_gbps=3352)
    unknown_card, source = cache.compile_cached(text, emit="gg-config", arch="sm_90a",
                                                num_sms=132)
    assert (first, source) == (None, None)  # each compiled: no entry serves the other
    assert (narrow_card.plans[0]["config"]["block"][1],
            unknown_card.plans[0]["config"]["block"][1]) == (256, 128)
    # The keys hold the plan class: an H200's (4,915) is an unknown card's.
    key = functools.partial(cache.key_of, text, emit="ptx", arch="sm_90a", num_sms=132)
    assert key() == key(memory_gbps=4915) == key(memory_gbps=compiler.NARROW_MEMORY_GBPS)
    assert key() != key(memory_gbps=3352) != key(memory_gbps=2000)
    # The class's bound is the compiler's.
    below, at = (block_n(compiler.NARROW_MEMORY_GBPS + d)["block"][1] for d in (-1, 0))
    assert (below, at) == (256, 128)
    monkeypatch.setattr(compiler, "_device_memory_gbps", 3352)
    monkeypatch.setattr(compiler, "_device_target", None)
    assert ggc.get_memory_gbps() == 3352
    compiled, _ = runtime.compile_for_launch(text, target="sm_90a")
    assert compiled.kernel_info[0]["block_n"] == 256
    try:
        ggc.set_memory_gbps(0)  # unknown: planned as for an H200
        assert ggc.get_memory_gbps() == 0
        compiled, _ = runtime.compile_for_launch(text, target="sm_90a")
        assert compiled.kernel_info[0]["block_n"] == 128
        with pytest.raises(ValueError, match="memory_gbps must be an int"):
            ggc.set_memory_gbps(-5)
    finally:
        ggc.set_memory_gbps(None)
    assert ggc.get_memory_gbps() == 3352


def test_schedule_bands_follow_the_cards_memory():
    """gg-schedule-groups reads the bandwidth the driver hands gg-select-config:
    on a card of narrow memory, FP8 contiguous groups hinted at 1,024 rows and
    walked M first go in bands of 8 (H100, sixty-third session); an H200 and
    an unknown card take none, and a hint of 512 none anywhere."""
    def schedule(gbps, hint):
        text = ggc.ir.grouped_matmul("bands", layout="contiguous", num_groups=8, n=4096, k=7168,
                                     dtype="f8E4M3FN", a_scale="block_mn", b_scale="block",
                                     expected_m=hint)
        return ggc.compile_ir(text, emit="gg-config", memory_gbps=gbps).plans[0]["schedule"]

    assert [schedule(g, 1024)["m_band"] for g in (3352, 4915, 0)] == [8, 0, 0]
    assert schedule(3352, 1024)["order"] == "m_fastest"
    assert schedule(3352, 512)["m_band"] == 0


def test_plan_settings_hold_what_plans_the_kernels(monkeypatch):
    """The in-memory caches' key (kernels, kept launches, the MoE layer's
    CUDA graphs): a setting that changes a plan changes it, an H200's
    bandwidth does not (its plans are an unknown card's)."""
    from ggc import compiler
    monkeypatch.setattr(compiler, "_device_memory_gbps", 0)
    before = compiler.plan_settings()
    try:
        ggc.set_memory_gbps(4915)
        assert compiler.plan_settings() == before
        ggc.set_memory_gbps(3352)
        assert compiler.plan_settings() != before
        ggc.set_memory_gbps(None)
        ggc.set_num_sms(78)
        assert compiler.plan_settings() != before
    finally:
        ggc.set_memory_gbps(None)
        ggc.set_num_sms(compiler.device_num_sms() or compiler.DEFAULT_NUM_SMS)
        monkeypatch.setattr(compiler, "_num_sms", None)
    assert compiler.plan_settings() == before


def test_num_sms_bound_is_libggcs():
    """Python refuses what libggc refuses: the same bound on SMs."""
    from ggc import compiler
    with open(os.path.join(ROOT, "compiler", "include", "ggc-c", "Compiler.h")) as f:
        bound = int(re.search(r"#define GGC_MAX_NUM_SMS (\d+)", f.read()).group(1))
    assert compiler.MAX_NUM_SMS == bound
    with pytest.raises(ValueError, match=rf"num_sms must be an int in \[1, {bound}\]"):
        ggc.compile_ir(MASKED, emit="gg", num_sms=bound + 1)


def test_plan_settings_follow_every_setter():
    """plan_settings is kept between calls (host time) and made again by
    each setter: a kept tuple would key new kernels by old settings."""
    from ggc import compiler
    before = compiler.plan_settings()
    assert compiler.plan_settings() is before  # kept
    try:
        compiler.set_num_sms(77)
        assert compiler.plan_settings()[1] == 77
        compiler.set_target("sm_80")
        assert compiler.plan_settings()[0] == "sm_80"
        compiler.set_shared_memory_bytes(101376)
        assert compiler.plan_settings()[2] == 101376
        compiler.set_memory_gbps(3352)
        assert compiler.plan_settings()[3] == 3352
    finally:
        compiler._num_sms = None
        for reset in (compiler.set_target, compiler.set_shared_memory_bytes,
                      compiler.set_memory_gbps):
            reset(None)
    assert compiler.plan_settings() == before


def test_cubins_are_keyed_by_the_ptxas_that_made_them(monkeypatch, tmp_path):
    """Another ptxas (GGC_PTXAS, an upgraded toolkit) makes other machine
    code: its cubins are a miss, not the old assembler's served. PTX keys
    do not depend on it."""
    from ggc import cache, compiler
    key = functools.partial(cache.key_of, MASKED, arch="sm_90a", num_sms=132)
    monkeypatch.delenv("GGC_PTXAS", raising=False)
    before = key(emit="cubin"), key(emit="ptx")
    fake = tmp_path / "ptxas"
    fake.write_text("#!/bin/sh\n")
    fake.chmod(0o755)
    monkeypatch.setenv("GGC_PTXAS", str(fake))
    assert compiler.ptxas_identity().startswith(str(fake))
    first_fake = key(emit="cubin")
    assert first_fake != before[0] and key(emit="ptx") == before[1]
    fake.write_text("#!/bin/sh\n# a new version\n")
    os.utime(fake, ns=(0, 1))  # upgraded in place: same path, other size and time
    assert key(emit="cubin") not in (before[0], first_fake)


@pytest.mark.parametrize("change, message", [
    (dict(config="#gg.config<block = [128, 128, 64], stages = 4, cluster = [1, 1], "
                 "sms = 132>, accumulate"), "config must be one #gg.config<...> attribute"),
    (dict(kernel_plan="#gg.kernel_plan<promotion = serial> } //"),
     "kernel_plan must be one #gg.kernel_plan<...> attribute"),
    (dict(dtype="bf16>, %evil: memref<4xf32"), "dtype must be one of"),
    (dict(name="k.x"), r"name must be an identifier"),
    (dict(n=-128), r"n must be an int >= 1, got -128"),
    (dict(n="128"), r"n must be an int >= 1, got '128'"),
    (dict(num_groups=True), r"num_groups must be an int >= 1, got True"),
    (dict(m=64.5), r"m must be an int >= 1 or None, got 64.5"),
    (dict(out_layout="NM"), r"out_layout must be 'mn' or 'nm', got 'NM'"),
    (dict(b_scale="mx64"), r"b_scale must be one of \[.*\], got 'mx64'"),
    (dict(a_scale="block1x128"), r"a_scale must be one of \[.*\], got 'block1x128'"),
    (dict(rows="f32"), r"rows must be a list of element types"),
    (dict(group_scalars=-1), r"group_scalars must be an int >= 0, got -1"),
])
def test_the_ir_builder_refuses_what_would_splice_other_ir(change, message):
    """Each string of ir.grouped_matmul becomes IR text: a config with
    ", accumulate" after it compiled an accumulating kernel, a dtype could
    add an argument. Each is refused by name, as are sizes that are not
    positive ints."""
    from ggc import ir
    args = dict(name="k", layout="contiguous", num_groups=2, n=128, k=128)
    args.update(change)
    with pytest.raises(ValueError, match=message):
        ir.grouped_matmul(args.pop("name"), **args)
