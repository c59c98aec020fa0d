"""Compile gg IR text with the ggc compiler library."""

from __future__ import annotations

from dataclasses import dataclass
import json
import os as _os
import sys as _sys
import re
from typing import Dict, List, Mapping, Tuple, Union

try:
    from . import _ggc
except ImportError as _missing:  # say what to do, not "circular import"
    import glob as _glob
    _here = _os.path.dirname(_os.path.abspath(__file__))
    _built = _glob.glob(_os.path.join(_here, "_ggc*.so"))
    raise ImportError(
        (f"ggc's compiled extension {_built[0]} does not load ({_missing})" if _built else
         f"ggc's compiled extension (_ggc*.so) is not in {_here}") +
        ": build it with `make build` in a source checkout, or install ggc with "
        "`pip install .`") from _missing

DEFAULT_ARCH = "sm_90a"
DEFAULT_NUM_SMS = 132
# Far above any GPU's SM count (the H200 has 132), far below what the
# grid's 32-bit size could hold; libggc refuses more (GGC_MAX_NUM_SMS).
MAX_NUM_SMS = 4096
# The driver's bound on shared_memory_bytes (ggc --shared-memory-bytes): a
# GPU has far less (227 KiB a CTA on Hopper).
MAX_SHARED_MEMORY_BYTES = 1 << 20
# The driver's bound on memory_gbps (ggc --memory-gbps): an H200 has 4,915.
MAX_MEMORY_GBPS = 1 << 20
# The compiler's kNarrowMemoryGBps (compiler/lib/Target.h): gg-select-config's
# and gg-schedule-groups' rules read the bandwidth only as below this or not
# (narrowMemory), so the caches key on that class
# (memory_plan_class); test_compiler checks the two agree.
NARROW_MEMORY_GBPS = 4000


def memory_plan_class(memory_gbps: int) -> int:
    """What the caches key on of a DRAM bandwidth: the bandwidth where
    gg-select-config plans for a card of narrow memory, else 0 (an unknown
    card's plan, which an H200 shares), so that kernels warmed up without
    a GPU serve an H200."""
    return memory_gbps if 0 < memory_gbps < NARROW_MEMORY_GBPS else 0


class CompilationError(RuntimeError):
    """The compiler rejected the input; `diagnostics` holds its messages."""

    def __init__(self, diagnostics: str):
        super().__init__(diagnostics.strip() or "compilation failed")
        self.diagnostics = diagnostics


@dataclass(frozen=True)
class Stage:
    """A point of the pipeline whose output can be asked for."""

    name: str
    description: str


@dataclass(frozen=True)
class CompiledIR:
    """Every stage's output, in pipeline order; `asm[stage]` is its text.
    `kernel_info`: each kernel's launch contract (once stage nvvm ran:
    ggk-collect-launch completes it there).
    `plans`: what stage gg-config chose for each gg.grouped_matmul, in
    module order (ggc_result_kernel_plans): "function", "config" ({"block":
    [bm, bn, bk], "stages", "cluster": [cm, cn], "sms", "split_n"}),
    "schedule", "padding", "overfetch", "store_pool", and "attributes" (every
    plan attribute as the IR prints it); empty before stage gg-config.
    `timing`: with compile_ir(timing=True), the wall time of every stage
    and of each of its passes, as text (`ggc --timing`); else ""."""

    asm: Mapping[str, Union[str, bytes]]  # a dict, or a disk hit's lazily read stages
    diagnostics: str
    ir_after_all: str
    kernel_info: list
    plans: list
    timing: str = ""

    @property
    def last_stage(self) -> str:
        return list(self.asm)[-1]

    @property
    def resources(self) -> Dict[str, Dict[str, int]]:
        """Per kernel, what ptxas allocated (from its -v report, so only
        when the cubin stage ran): registers per thread, spill store and
        load bytes, stack frame bytes; and the dynamic shared memory the
        launch asks for."""
        found: Dict[str, Dict[str, int]] = {}
        current = None
        for line in self.diagnostics.splitlines():
            entry = _PTXAS_FUNCTION.search(line)
            if entry:
                current = found.setdefault(entry.group(1), {})
                continue
            if current is None:
                continue
            for pattern, field in _PTXAS_FIELDS:
                m = pattern.search(line)
                if m:
                    current[field] = int(m.group(1))
        for info in self.kernel_info:
            found.setdefault(info["name"], {})["shared_bytes"] = info["shared_bytes"]
        return found


_PTXAS_FUNCTION = re.compile(r"Function properties for (\S+)")
_PTXAS_FIELDS = tuple((re.compile(pattern), field) for pattern, field in (
    (r"(\d+) bytes stack frame", "stack_bytes"),
    (r"(\d+) bytes spill stores", "spill_store_bytes"),
    (r"(\d+) bytes spill loads", "spill_load_bytes"),
    (r"Used (\d+) registers", "registers")))


def check_num_sms(num_sms) -> None:
    """num_sms sizes the persistent grid: one CTA per SM."""
    if (not isinstance(num_sms, int) or isinstance(num_sms, bool)
            or not 1 <= num_sms <= MAX_NUM_SMS):
        raise ValueError(f"num_sms must be an int in [1, {MAX_NUM_SMS}], got {num_sms!r}")


def check_shared_memory_bytes(shared_memory_bytes) -> None:
    """shared_memory_bytes bounds the kernel's pipeline stages and, before
    sm_90a, its tile width: 0 for the target's (an A100's 163 KiB for
    sm_80), else the device's opt-in shared memory per CTA."""
    if (not isinstance(shared_memory_bytes, int) or isinstance(shared_memory_bytes, bool)
            or not 0 <= shared_memory_bytes <= MAX_SHARED_MEMORY_BYTES):
        raise ValueError(f"shared_memory_bytes must be an int in [0, {MAX_SHARED_MEMORY_BYTES}] "
                         f"(0: the target's), got {shared_memory_bytes!r}")


def describe_target(arch: str, num_sms: int, shared_memory_bytes: int = 0,
                    memory_gbps: int = 0) -> str:
    """What kernels are planned for, as the logs and reports print it:
    "sm_90a (132 SMs, 232448 B shared memory, 3352 GB/s)", the last two
    only where given."""
    details = [f"{num_sms} SMs"] + (
        [f"{shared_memory_bytes} B shared memory"] if shared_memory_bytes else []) + (
        [f"{memory_gbps} GB/s"] if memory_gbps else [])
    return f"{arch} ({', '.join(details)})"


def check_memory_gbps(memory_gbps) -> None:
    """memory_gbps, the device's peak DRAM bandwidth in GB/s, picks among
    gg-select-config's tile rules: 0 for unknown (planned as for an
    H200's)."""
    if (not isinstance(memory_gbps, int) or isinstance(memory_gbps, bool)
            or not 0 <= memory_gbps <= MAX_MEMORY_GBPS):
        raise ValueError(f"memory_gbps must be an int in [0, {MAX_MEMORY_GBPS}] "
                         f"(0: unknown), got {memory_gbps!r}")


_device_shared_memory = ()  # the current device's, found once: () until then


def device_shared_memory_bytes() -> int:
    """The shared memory one CTA may opt in to on the current CUDA device
    (torch's), or 0 (the target's) without torch, CUDA or the property.
    Read once per process. Kernels planned with it run deeper pipelines
    and, before sm_90a, wider tiles where the card has more than its target
    promises (an sm_80 kernel on a
    Hopper card: 227 KiB, not an A100's 163)."""
    global _device_shared_memory
    if _device_shared_memory == ():
        _device_shared_memory = 0
        torch = _sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            _device_shared_memory = getattr(torch.cuda.get_device_properties(
                torch.cuda.current_device()), "shared_memory_per_block_optin", 0) or 0
    return _device_shared_memory


_shared_memory_bytes = None  # set_shared_memory_bytes's; None: the device's


def _forget_kept_launches() -> None:
    """Every setter's: plan_settings is made again, and the torch ops' C++
    kernels, which keep launches compiled under the old settings and look
    them up without asking for the settings, forget them."""
    global _settings
    _settings = None
    from . import signature
    signature.forget_op_plans()


def set_shared_memory_bytes(shared_memory_bytes) -> None:
    """The shared memory per CTA that kernels compiled from now on are
    planned for: an int (0: the target's, e.g. an A100's 163 KiB for
    sm_80), or None for the device's own (the default;
    GGC_SHARED_MEMORY_BYTES in the environment overrides it). A smaller
    budget than the card's plans the kernels another card would run (an
    A100's on a Hopper card). Each value compiles kernels of its own
    (cached)."""
    global _shared_memory_bytes
    if shared_memory_bytes is not None:
        check_shared_memory_bytes(shared_memory_bytes)
    _shared_memory_bytes = shared_memory_bytes
    _forget_kept_launches()


_env_shared_memory = ()  # GGC_SHARED_MEMORY_BYTES's, read once: () until then


def _env_shared_memory_bytes():
    """GGC_SHARED_MEMORY_BYTES as a checked int, or None where it is unset.
    Read once per process: the kernel caches' keys ask for it on every
    call, where an environment lookup would cost half a microsecond."""
    global _env_shared_memory
    if _env_shared_memory == ():
        env = _os.environ.get("GGC_SHARED_MEMORY_BYTES")
        if not env:
            _env_shared_memory = None
        else:
            try:
                value = int(env)
            except ValueError:
                value = env
            try:
                check_shared_memory_bytes(value)
            except ValueError as e:
                raise ValueError(f"GGC_SHARED_MEMORY_BYTES: {e}") from None
            _env_shared_memory = value
    return _env_shared_memory


def get_shared_memory_bytes() -> int:
    """set_shared_memory_bytes's value, else GGC_SHARED_MEMORY_BYTES's, else
    the device's (device_shared_memory_bytes), else 0 (the target's)."""
    if _shared_memory_bytes is not None:
        return _shared_memory_bytes
    env = _env_shared_memory_bytes()
    return env if env is not None else device_shared_memory_bytes()


_memory_gbps = None         # set_memory_gbps's; None: the device's
_device_memory_gbps = ()    # the current device's, found once: () until then


def device_memory_gbps() -> int:
    """The current CUDA device's (torch's) peak DRAM bandwidth in GB/s, as
    the driver reports its memory clock and bus width, or 0 (unknown)
    without torch, CUDA or the driver. Read once per process."""
    global _device_memory_gbps
    if _device_memory_gbps == ():
        _device_memory_gbps = 0
        torch = _sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            try:
                _device_memory_gbps = _ggc.device_memory_gbps(torch.cuda.current_device())
            except RuntimeError:  # the driver refused: plan as for unknown
                pass
    return _device_memory_gbps


def set_memory_gbps(memory_gbps) -> None:
    """The DRAM bandwidth (GB/s) that kernels compiled from now on are
    planned for: an int (0: unknown, planned as for an H200's), or None for
    the device's own (the default). gg-select-config takes wider tiles on
    a card below 4,000 GB/s (an H100 SXM's 3,352): docs/pipeline.md. Each
    value compiles kernels of its own (cached)."""
    global _memory_gbps
    if memory_gbps is not None:
        check_memory_gbps(memory_gbps)
    _memory_gbps = memory_gbps
    _forget_kept_launches()


def get_memory_gbps() -> int:
    """set_memory_gbps's value, else the device's (device_memory_gbps)."""
    return _memory_gbps if _memory_gbps is not None else device_memory_gbps()


_num_sms = None       # set_num_sms's; None: the device's
_device_num_sms = ()  # the current device's SM count, found once: () until then


def device_num_sms():
    """The current CUDA device's (torch's) SM count, or None without torch
    or CUDA. Read once per process."""
    global _device_num_sms
    if _device_num_sms == ():
        _device_num_sms = None
        torch = _sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            _device_num_sms = torch.cuda.get_device_properties(
                torch.cuda.current_device()).multi_processor_count
    return _device_num_sms


def set_num_sms(num_sms: int) -> None:
    """The SMs that kernels compiled from now on spread over (their
    persistent grid), where a kernel does not fix its own (`@ggc.jit(
    num_sms=...)`): fewer leave SMs to work beside them, a communication
    kernel's, say. Each value compiles kernels of its own (cached)."""
    global _num_sms
    check_num_sms(num_sms)
    _num_sms = num_sms
    _forget_kept_launches()


_settings = None  # plan_settings' tuple; None until made, and after a setter


def plan_settings() -> tuple:
    """What the kernels compiled from now on are planned for, as the
    in-memory caches of kernels, kept launches and CUDA graphs key on them:
    the target, the SM count, the shared memory and the DRAM bandwidth's
    plan class (memory_plan_class). Made once and kept until a setter
    runs (the device's values are read once per process anyway): every
    cached call asks for it, and the four getters cost half a
    microsecond."""
    global _settings
    if _settings is None:
        _settings = (get_target(), get_num_sms(), get_shared_memory_bytes(),
                     memory_plan_class(get_memory_gbps()))
    return _settings


def get_num_sms() -> int:
    """set_num_sms's value, else the device's SM count (an A100 has 108,
    an H100 PCIe 114: a grid of more CTAs than SMs would run in two
    waves), else DEFAULT_NUM_SMS."""
    if _num_sms is not None:
        return _num_sms
    return device_num_sms() or DEFAULT_NUM_SMS


@dataclass(frozen=True)
class Target:
    """What a target's hardware has, as the compiler's passes read it: the
    compiler's one list of targets (`ggc_target` in the C API).

    `capabilities` are the compute capabilities whose devices run the
    target's kernels (Orin's (8, 7) runs sm_86's); `mma` is "wgmma" or
    "mma_sync", `async_copy` "tma" or "cp_async"; `tensor_maps` (TMA loads
    and stores), `clusters`, `register_reallocation` (setmaxnreg),
    `mbarrier_try_wait`, `fp8_mma` (FP8 tensor cores) and
    `grid_dependencies` (griddepcontrol: a kernel may launch while the one
    ahead of it ends, and waits for its memory) say what it has.
    """
    name: str
    capabilities: Tuple[Tuple[int, int], ...]
    shared_memory_bytes: int
    mma: str
    async_copy: str
    tensor_maps: bool
    clusters: bool
    register_reallocation: bool
    mbarrier_try_wait: bool
    fp8_mma: bool
    grid_dependencies: bool


def _read_targets() -> Dict[str, Target]:
    targets = {}
    for t in _ggc.targets():
        t["capabilities"] = tuple(divmod(c, 10) for c in t["capabilities"])
        targets[t["name"]] = Target(**t)
    return targets


_TARGETS = _read_targets()
# What ggc compiles for, the default first: Hopper's kernels (TMA, wgmma)
# for 9.0; for Ampere and Ada the lowering by cp.async, ldmatrix and
# mma.sync (FP8 on sm_89).
TARGETS = tuple(_TARGETS)
_TARGET_OF_CAPABILITY = {c: t.name for t in _TARGETS.values() for c in t.capabilities}


def targets() -> Dict[str, Target]:
    """Every target ggc compiles for, by name, the default first."""
    return dict(_TARGETS)

_target = None        # set_target's
_device_target = ()   # the current device's, found once: () until then


def check_target(arch) -> None:
    if arch not in TARGETS:
        raise ValueError(f"target must be one of {', '.join(TARGETS)}, got {arch!r}")


def set_target(arch) -> None:
    """The GPU architecture kernels compiled from now on are for: one of
    TARGETS, or None for the device's own (the default; GGC_TARGET in the
    environment overrides it). A target older than the device (sm_80 on an
    H100) compiles to PTX that the driver assembles for the device. Each
    target compiles kernels of its own (cached)."""
    global _target
    if arch is not None:
        check_target(arch)
    _target = arch
    _forget_kept_launches()


def device_target():
    """The target of the current CUDA device (torch's), or None without
    torch, CUDA or a target for the device. Read once per process."""
    global _device_target
    if _device_target == ():
        _device_target = None
        torch = _sys.modules.get("torch")
        if torch is not None and torch.cuda.is_available():
            _device_target = _TARGET_OF_CAPABILITY.get(
                tuple(torch.cuda.get_device_capability()))
    return _device_target


_env_target = ()  # GGC_TARGET's, read once: () until then


def get_target() -> str:
    """set_target's value, else GGC_TARGET's, else the device's, else
    DEFAULT_ARCH. GGC_TARGET is read once per process: the kernel caches'
    keys ask for the target on every call, where an environment lookup
    would cost more than a microsecond (a miss raises inside os.environ)."""
    global _env_target
    if _target is not None:
        return _target
    if _env_target == ():
        _env_target = _os.environ.get("GGC_TARGET") or None
    if _env_target is not None:
        check_target(_env_target)
        return _env_target
    return device_target() or DEFAULT_ARCH


def stages() -> List[Stage]:
    """Every stage of the pipeline, in order."""
    return [Stage(*s) for s in _ggc.stages()]


def ptxas_identity() -> str:
    """The ptxas that stage 'cubin' runs, as the disk cache keys cubins by
    it: its path, size and modification time ("" without one), so that a
    cubin another ptxas made (GGC_PTXAS changed, the toolkit upgraded) is
    a miss."""
    path = _ggc.ptxas()
    if not path:
        return ""
    try:
        found = _os.stat(path)
    except OSError:
        return path
    return f"{path} {found.st_size} {found.st_mtime_ns}"


def version() -> str:
    return _ggc.version()


def compile_ir(
    source: str,
    *,
    emit: str | None = None,
    arch: str = DEFAULT_ARCH,
    num_sms: int = DEFAULT_NUM_SMS,
    print_ir_after_all: bool = False,
    source_name: str = "<ggc>",
    shared_memory_bytes: int = 0,
    memory_gbps: int = 0,
    timing: bool = False,
) -> CompiledIR:
    """Compiles gg IR text up to stage `emit` (default: "ptx").

    `shared_memory_bytes` is the device's opt-in shared memory per CTA
    (device_shared_memory_bytes()), which bounds the pipeline's stages and,
    before sm_90a, the tile width; 0 (the default) keeps to the target's.
    `memory_gbps` is the device's peak DRAM bandwidth in GB/s
    (device_memory_gbps()), which picks among the tile rules; 0 (the
    default) plans as for an H200's. `timing` records the wall time of
    every stage and pass in the result's `timing`.

    Raises CompilationError with the compiler's diagnostics, and ValueError
    for arguments of the wrong kind, before anything is compiled.
    """
    if not isinstance(source, str):
        raise TypeError(f"source must be gg IR text (str), got {type(source).__name__}")
    known = stages()
    if emit is None:
        emit = "ptx"
    if not isinstance(emit, str) or emit not in {s.name for s in known}:
        raise ValueError(
            f"emit must be one of {[s.name for s in known]}, got {emit!r}")
    check_num_sms(num_sms)
    check_shared_memory_bytes(shared_memory_bytes)
    check_memory_gbps(memory_gbps)
    for name, value in (("arch", arch), ("source_name", source_name)):
        if not isinstance(value, str):
            raise TypeError(f"{name} must be a str, got {type(value).__name__}")
    for name, value in (("print_ir_after_all", print_ir_after_all), ("timing", timing)):
        if not isinstance(value, bool):
            raise TypeError(f"{name} must be a bool, got {type(value).__name__}")
    out = _ggc.compile(source, source_name, emit, arch, num_sms, print_ir_after_all,
                       shared_memory_bytes, memory_gbps, timing)
    if not out.ok:
        raise CompilationError(out.diagnostics)
    # Every stage is text but the cubin, which stays bytes.
    asm = {name: (text if name == "cubin" else text.decode("utf-8"))
           for name, text in out.stages}
    info = json.loads(out.kernel_info) if out.kernel_info else []
    plans = json.loads(out.kernel_plans) if out.kernel_plans else []
    return CompiledIR(asm=asm, diagnostics=out.diagnostics,
                      ir_after_all=out.ir_after_all, kernel_info=info, plans=plans,
                      timing=out.timing)
