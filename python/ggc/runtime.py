"""Launch compiled gg kernels on GPU tensors.

`Kernel(ir)` compiles a module holding one function with one
`gg.grouped_matmul` down to a cubin; calling it with the function's
arguments (torch tensors, or objects with `__cuda_array_interface__`)
checks every argument against the function's signature and launches on the
current stream, with no host synchronisation and no allocation.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, List, Optional, Sequence, Tuple, Union

from . import _ggc, groups
from .cache import compile_cached, log
from . import signature as _signature
from .compiler import (CompilationError, check_target, device_target, get_num_sms,
                       get_memory_gbps, get_shared_memory_bytes, get_target)

# Element type names of the IR, by torch dtype name.
_TORCH_DTYPES = {
    "torch.bfloat16": "bf16",
    "torch.float16": "f16",
    "torch.float32": "f32",
    "torch.int32": "i32",
    "torch.int64": "i64",
    "torch.float8_e4m3fn": "f8e4m3fn",
    "torch.float8_e5m2": "f8e5m2",
}
# ... and by __cuda_array_interface__ typestr.
_TYPESTRS = {"<f2": "f16", "<f4": "f32", "<i4": "i32", "<i8": "i64"}
_ELEMENT_BYTES = {"bf16": 2, "f16": 2, "f32": 4, "i32": 4, "i64": 8,
                  "f8e4m3fn": 1, "f8e5m2": 1}


@dataclass(frozen=True)
class _Tensor:
    address: int
    shape: Tuple[int, ...]
    strides: Tuple[int, ...]  # in elements
    dtype: str
    device: Optional[int]     # CUDA device index; None when not on a GPU, -1
                              # for an empty array whose device is unknown
    stream: Optional[int]     # the stream to launch on, when the object says
    location: str = "cuda"    # where it is, for errors ("cpu", "meta", ...)
    readonly: bool = False
    real: bool = True         # False: a fake tensor's storage offset stands in
                              # for the address (describe_fake)


# The kernels index rows, columns and K with 32-bit signed integers and run
# them up to a size rounded up to whole tiles: sizes stay at or below 2^30
# (the verifier's bound on static sizes, gg::kMaxStaticSize), tile indices
# plus the grid below 2^31.
MAX_SIZE = 2**30
MAX_TILES = 2**31 - 1


def _describe(position: int, role: str, obj: Any) -> _Tensor:
    where = f"argument {position} ({role})"
    if obj is None:
        raise TypeError(f"{where} must be a CUDA tensor, got None")
    if type(obj).__module__.startswith("torch") and hasattr(obj, "data_ptr"):
        return _describe_torch(where, obj)
    if hasattr(obj, "__dlpack__") and not hasattr(obj, "__cuda_array_interface__"):
        return _describe_dlpack(where, obj)
    interface = getattr(obj, "__cuda_array_interface__", None)
    if interface is not None:
        return _describe_array_interface(where, interface)
    raise TypeError(f"{where} must be a CUDA tensor (torch.Tensor, or an object with "
                    f"__dlpack__ or __cuda_array_interface__), got {type(obj).__name__}")


def _refuse_negated(where: str, t: Any) -> None:
    if t.is_neg():  # the kernels read memory as it is, not negated
        raise ValueError(f"{where} is a negated view (torch's negative bit, from "
                         f".conj().imag, say): pass it .resolve_neg() first")


def _describe_torch(where: str, obj: Any) -> _Tensor:
    dtype = _TORCH_DTYPES.get(str(obj.dtype))
    if dtype is None:
        raise TypeError(f"{where} has dtype {obj.dtype}, which ggc does not take")
    _refuse_negated(where, obj)
    if obj.device.type != "cuda":
        return _Tensor(0, tuple(obj.shape), tuple(obj.stride()), dtype, None, None,
                       location=obj.device.type)
    import torch
    stream = torch.cuda.current_stream(obj.device).cuda_stream
    return _Tensor(obj.data_ptr(), tuple(obj.shape), tuple(obj.stride()), dtype,
                   obj.device.index, stream)


def describe_fake(position: int, role: str, t: Any) -> _Tensor:
    """A fake (or meta) torch tensor as a launch would see it, for the
    checks of a traced call: its storage offset stands in for the address
    (real allocations are 16-byte aligned)."""
    where = f"argument {position} ({role})"
    dtype = _TORCH_DTYPES.get(str(t.dtype))
    if dtype is None:
        raise TypeError(f"{where} has dtype {t.dtype}, which ggc does not take")
    _refuse_negated(where, t)
    device = (t.device.index or 0) if t.device.type == "cuda" else -1
    return _Tensor(t.storage_offset() * t.element_size(), tuple(t.shape), tuple(t.stride()),
                   dtype, device, None, real=False)


def _span_bytes(t: _Tensor) -> int:
    """The bytes from t's address to past its last element (0 when empty)."""
    if any(d == 0 for d in t.shape):
        return 0
    last = sum((d - 1) * abs(s) for d, s in zip(t.shape, t.strides))
    return (last + 1) * _ELEMENT_BYTES[t.dtype]


def _check_no_overlap(tensors: List[_Tensor], specs, roles) -> None:
    """A written argument may share no byte with another: the kernel would
    read what it overwrites, or write one output twice (a checked call's;
    a kept launch does not look again)."""
    for i, (t, spec) in enumerate(zip(tensors, specs)):
        if not (spec.get("written") and t.real):
            continue
        end = t.address + _span_bytes(t)
        for j, u in enumerate(tensors):
            if j != i and u.real and t.address < u.address + _span_bytes(u) and \
                    u.address < end:
                raise ValueError(f"argument {i} ({roles[i]}) is written by the kernel but "
                                 f"shares memory with argument {j} ({roles[j]}): give the "
                                 f"output its own memory")


def _describe_array_interface(where: str, interface: dict) -> _Tensor:
    """An object with __cuda_array_interface__ (version 2 or 3): its device
    is the one its pointer belongs to, and a `stream` it names is the one
    to launch on."""
    dtype = _TYPESTRS.get(interface.get("typestr"))
    if dtype is None:
        raise TypeError(f"{where} has typestr {interface.get('typestr')!r}, which ggc "
                        f"does not take")
    try:
        shape = tuple(interface["shape"])
        address, readonly = interface["data"]
    except (KeyError, TypeError, ValueError):
        raise TypeError(f"{where}'s __cuda_array_interface__ must hold 'shape' (a tuple "
                        f"of ints) and 'data' (address, read-only flag)") from None
    if not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape):
        raise ValueError(f"{where} has shape {list(shape)}; its sizes must be ints >= 0")
    if not isinstance(address, int) or isinstance(address, bool) or address < 0:
        raise TypeError(f"{where} has data address {address!r}; an int >= 0 belongs there")
    if interface.get("mask") is not None:
        raise ValueError(f"{where} has a mask; ggc takes arrays without one")
    strides = interface.get("strides")
    if strides is None:
        strides = _row_major(shape)
    else:
        size = _ELEMENT_BYTES[dtype]
        if len(strides) != len(shape):
            raise ValueError(f"{where} has {len(strides)} strides for {len(shape)} "
                             f"dimensions")
        if any(s % size for s in strides):
            raise ValueError(f"{where} has strides {list(strides)} bytes, not whole "
                             f"elements of {size} bytes")
        strides = tuple(s // size for s in strides)
    empty = any(d == 0 for d in shape)
    if address == 0 and not empty:
        raise ValueError(f"{where} has a null data pointer but shape {list(shape)}")
    device = -1 if address == 0 else _ggc.pointer_device(address)
    stream = interface.get("stream")
    if stream == 0:
        raise ValueError(f"{where} names stream 0, which __cuda_array_interface__ "
                         f"forbids (1: the legacy default stream, 2: per-thread)")
    return _Tensor(address, shape, strides, dtype, device, stream, readonly=bool(readonly))


def _describe_dlpack(where: str, obj: Any) -> _Tensor:
    """A DLPack producer (versioned capsules too), through torch.from_dlpack,
    which asks the producer for its data on the current stream of the data's
    device; the producer keeps ownership of the memory."""
    try:
        import torch
    except ImportError:
        raise TypeError(f"{where} is a DLPack array; ggc reads those through torch "
                        f"(pip install torch), or pass an object with "
                        f"__cuda_array_interface__") from None
    if not hasattr(obj, "__dlpack_device__"):
        raise TypeError(f"{where} has __dlpack__ but no __dlpack_device__; the DLPack "
                        f"protocol asks for both")
    try:
        tensor = torch.from_dlpack(obj)
    except (RuntimeError, TypeError, BufferError) as e:
        raise TypeError(f"{where}: its DLPack export failed: {e}") from e
    return _describe_torch(where, tensor)


def _row_major(shape: Sequence[int]) -> Tuple[int, ...]:
    strides, step = [], 1
    for extent in reversed(shape):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


def _row_major_layout(shape: Sequence[int], strides: Sequence[int]) -> bool:
    """Whether the elements lie row-major: every dim's stride is the
    row-major one, but a dim of extent 1, whose stride addresses nothing
    (torch calls [G, 1, 2] with strides (2, 1, 1), a transposed [G, 2, 1],
    contiguous, and .contiguous() keeps it)."""
    return all(extent == 1 or stride == want
               for extent, stride, want in zip(shape, strides, _row_major(shape)))


def _ceil_div(a: int, b: int) -> int:
    return -(-a // b)


class Kernel:
    """A compiled gg function: `kernel(*args, stream=None)` runs it.

    `asm[stage]` holds every stage; `info` the launch contract;
    `cache_hit` says where the compiled kernel came from ("memory", "disk",
    or None when it was compiled now)."""

    def __init__(self, ir: str, *, num_sms: Optional[int] = None,
                 source_name: str = "<ggc>", target: Optional[str] = None):
        compiled, self.cache_hit = compile_for_launch(ir, num_sms, source_name, target)
        if len(compiled.kernel_info) != 1:
            raise ValueError(f"a Kernel holds exactly one gg function; the module "
                             f"has {len(compiled.kernel_info)}")
        self.asm = compiled.asm
        self.info = compiled.kernel_info[0]
        # registers, spill bytes, stack and shared memory bytes (ptxas -v)
        self.resources = compiled.resources.get(self.info["name"], {})
        self.diagnostics = compiled.diagnostics
        self._launcher = None
        # Checked launches by argument signature (ggc.signature): what a check
        # decides depends on the fields the signature holds alone, so
        # a call with new tensors of a known signature skips it, and reads
        # only their addresses. Plain dict operations: safe across threads.
        self._launches = {}
        roles = {p["arg"]: p["operand"] for p in self.info["params"] if "arg" in p}
        self._roles = [roles.get(i, "unused") for i in range(len(self.info["args"]))]

    @property
    def name(self) -> str:
        return self.info["name"]

    def _check(self, args: Sequence[Any]) -> Tuple[List[_Tensor], int, int]:
        expected = self.info["args"]
        if len(args) != len(expected):
            raise TypeError(f"{self.name} takes {len(expected)} arguments "
                            f"({', '.join(self._roles)}), got {len(args)}")
        return self.check_described(
            [_describe(i, self._roles[i], arg) for i, arg in enumerate(args)])

    def check_described(self, tensors: List[_Tensor]) -> Tuple[List[_Tensor], int, int]:
        """Every check of a launch on described arguments (no pointer is
        read but the address's alignment: fake tensors pass their storage
        offset). Returns them, the run-time size and the tile count."""
        dynamic, symbolic = {}, []
        for i, (t, spec) in enumerate(zip(tensors, self.info["args"])):
            where = f"argument {i} ({self._roles[i]})"
            if t.device is None:
                raise ValueError(f"{where} must be on a CUDA device, but is on {t.location}")
            if t.readonly and spec.get("written"):
                raise ValueError(f"{where} is written by the kernel but is read-only")
            if t.dtype != spec["dtype"]:
                raise TypeError(f"{where} must have dtype {spec['dtype']}, got {t.dtype}")
            if len(t.shape) != len(spec["shape"]):
                raise ValueError(f"{where} must have rank {len(spec['shape'])} "
                                 f"(shape {_shape_text(spec['shape'])}), got shape "
                                 f"{list(t.shape)}")
            for d, (have, want) in enumerate(zip(t.shape, spec["shape"])):
                if isinstance(want, str):
                    symbolic.append((where, d, have, want))
                    if want in _RUN_TIME_SIZES and "size" not in dynamic:
                        dynamic.update(size=have, name=want, by=where)
                elif have != want:
                    raise ValueError(f"{where} must have shape {_shape_text(spec['shape'])}, "
                                     f"got {list(t.shape)}")
            if not _row_major_layout(t.shape, t.strides):
                raise ValueError(f"{where} must be contiguous (row-major); call "
                                 f".contiguous() first")
            if t.address % 16 != 0:
                raise ValueError(f"{where} must be 16-byte aligned for TMA, but its "
                                 f"address ends in {t.address % 16:#x}")
        # Every run-time size follows one: the row count M, or the
        # concatenated K of k_grouped.
        m = dynamic.get("size", 0)
        if m > MAX_SIZE:
            raise ValueError(f"{dynamic['by']} has {dynamic['name']} = {m}; the kernel's "
                             f"32-bit indices take sizes up to {MAX_SIZE}")
        for where, d, have, want in symbolic:
            if want in _FREE_SIZES:
                if have > MAX_SIZE:
                    raise ValueError(f"{where} has {want} = {have}; the kernel's 32-bit "
                                     f"indices take sizes up to {MAX_SIZE}")
                continue
            value = _SIZE_RULES[want](m, self.info["num_groups"])
            if have != value:
                raise ValueError(f"{where} dimension {d} must be {want} = {value} "
                                 f"({dynamic['name']} = {m}, set by {dynamic['by']}), "
                                 f"got {have}")
        # TMA reads rows whose byte length is a multiple of 16; so do the
        # 16-byte copies of targets without TMA, which take A and B by
        # address.
        for p in self.info["params"]:
            copied = p["kind"] == "pointer" and p["operand"] in ("a", "b")
            if (p["kind"] == "tensor_map" or copied) and len(tensors[p["arg"]].shape) > 1:
                t = tensors[p["arg"]]
                row_bytes = t.shape[-1] * _ELEMENT_BYTES[t.dtype]
                if row_bytes % 16:
                    raise ValueError(
                        f"argument {p['arg']} ({self._roles[p['arg']]}) has rows of "
                        f"{row_bytes} bytes; {'cp.async' if copied else 'TMA'} needs a "
                        f"multiple of 16 (its last dimension, {t.shape[-1]}, a multiple of "
                        f"{16 // _ELEMENT_BYTES[t.dtype]})")
        devices = {t.device for t in tensors if t.device != -1}
        if len(devices) > 1:
            raise ValueError(f"all arguments must be on one CUDA device, got "
                             f"{['cuda:%d' % d for d in sorted(devices)]}")
        tiles = self._tiles(tensors)
        if tiles + self.info["max_grid"] > MAX_TILES:
            raise ValueError(f"{self.name} would have {tiles} tiles at {m} rows; the "
                             f"kernel's 32-bit tile indices hold at most "
                             f"{MAX_TILES - self.info['max_grid']}")
        _check_no_overlap(tensors, self.info["args"], self._roles)
        return tensors, m, tiles

    def _grid(self, tiles: int) -> int:
        """Persistent CTAs: one per SM at most, no more than the tiles
        (each cluster takes a unit of `cluster` M blocks), in whole clusters."""
        cluster = self.info.get("cluster", 1)
        if tiles == 0:
            return 0
        units = _ceil_div(tiles, cluster) * cluster
        return min(self.info["max_grid"] // cluster * cluster, units)

    def _tiles(self, tensors: List[_Tensor]) -> int:
        info = self.info
        n_blocks = _ceil_div(info["n"], info["block_n"])
        size_param = next(p for p in info["params"] if p["kind"] == "size")
        rows = tensors[size_param["arg"]].shape[size_param["dim"]]
        groups = info["num_groups"]
        layout = info["layout"]
        cluster = info.get("cluster", 1)

        def per_group(m):  # M blocks of a group, in whole cluster units
            return _ceil_div(_ceil_div(m, info["block_m"]), cluster) * cluster

        if layout == "k_grouped":
            # Every group writes its whole [M, N] output, zeros when its K
            # range is empty, so the grid does not depend on K.
            return groups * per_group(self._k_grouped_m(tensors)) * n_blocks
        if rows == 0:
            return 0  # no rows: nothing to compute, nothing to write
        if layout == "contiguous":  # each group adds at most one partial tile
            # (and, with clusters, one odd M block), and so does each span of
            # rows outside every group that the kernel zeroes (zero_ungrouped)
            spans = groups + info.get("ungrouped_spans", 0)
            return (_ceil_div(rows, info["block_m"]) + spans * cluster) * n_blocks
        if layout == "masked":
            return groups * per_group(rows) * n_blocks
        return _ceil_div(rows, info["block_m"]) * n_blocks

    def _k_grouped_m(self, tensors: List[_Tensor]) -> int:
        out = next(p for p in self.info["params"] if p["operand"] == "out")
        return tensors[out["arg"]].shape[1]

    def __call__(self, *args: Any, stream: Optional[int] = None,
                 validate: Union[None, bool, str] = None) -> None:
        """Launches on `stream` (default: the tensors' current stream).
        `validate` (default: $GGC_VALIDATE) checks the group metadata on
        the device first (see ggc.groups); "all_rows" also asks that the
        groups cover every row of the output."""
        if validate is None:
            validate = groups.VALIDATE_BY_DEFAULT
        key = None
        if not validate:
            key = _signature.of(args)
            launch = self._launches.get(key) if key is not None else None
            if launch is not None and launch.run(
                    _signature.addresses(args, range(len(args))), stream):
                return
        self._launch_checked(args, key, stream, validate)

    def _launch_checked(self, args: Sequence[Any], key, stream: Optional[int],
                        validate: Optional[str] = None) -> None:
        tensors, size, tiles = self._check(args)
        grid = self._grid(tiles)
        device = next((t.device for t in tensors if t.device != -1), 0)
        if stream is None:
            stream = next((t.stream for t in tensors if t.stream is not None), 0)
        if validate:
            groups.check(self.info, self._roles, tensors, size, device, stream,
                         all_rows=validate == "all_rows")
        # No rows: nothing to compute, nothing to write.
        launch = Launch(self._record(tensors, grid, device) if grid else None, device)
        if key is not None and not validate and _cacheable(args):
            if len(self._launches) >= _MAX_SIGNATURES:
                self._launches.clear()
            self._launches[key] = launch
        launch.run([t.address for t in tensors], stream)

    def _record(self, tensors: List[_Tensor], grid: int, device: int):
        """The launch record of checked arguments: everything but their
        addresses (a tensor map is encoded again when its address changes)."""
        launch_args, sources = [], []
        for p in self.info["params"]:
            t = tensors[p["arg"]]
            sources.append(p["arg"])
            if p["kind"] == "tensor_map":
                # An empty K range (k_grouped) still needs a valid map; the
                # kernel never loads from it.
                shape = [max(d, 1) for d in t.shape]
                launch_args.append(("tensor_map", p["dtype"], shape, p["box"], t.address,
                                    p["swizzle"]))
            elif p["kind"] == "pointer":
                launch_args.append(("pointer", t.address))
            else:
                launch_args.append(("i64", t.shape[p["dim"]]))
        if self._launcher is None:
            ok, why = _ggc.driver_available()
            if not ok:
                raise RuntimeError(f"cannot launch {self.name}: {why}")
            image = self.asm.get("cubin") or self.asm["ptx"].encode()
            self._launcher = _ggc.Kernel(image, self.name,
                                         self.info["shared_bytes"], self.info["block"],
                                         self.info.get("cluster", 1),
                                         self.info.get("dependent_launch", False))
        return self._launcher.record(grid, launch_args, sources, device)

    def launch_for(self, args: Sequence[Any]) -> Optional["Launch"]:
        """The checked launch of torch tensors of these arguments'
        signature, once a call with them has launched; else None."""
        key = _signature.of(args)
        return None if key is None else self._launches.get(key)


# Signatures a kernel keeps launches for: one per token count in use.
_MAX_SIGNATURES = 512


def _cacheable(args: Sequence[Any]) -> bool:
    """Real torch tensors (Parameters too), whose signature says it all."""
    import torch
    from torch._subclasses.fake_tensor import is_fake
    return all(isinstance(a, torch.Tensor) and not is_fake(a) and not a.is_meta
               for a in args)


class Launch:
    """A checked launch of one argument signature: the launch record (None
    when there is nothing to launch) and the device it runs on."""

    __slots__ = ("record", "device")

    def __init__(self, record, device: int):
        self.record, self.device = record, device

    def run(self, addresses: List[int], stream: Optional[int]) -> bool:
        """Launches at these addresses on `stream` (default: the device's
        current torch stream); False, launching nothing, when one is not
        16-byte aligned (the checked path then says which)."""
        for address in addresses:
            if address & 15:
                return False
        if self.record is not None:
            self.record.launch(addresses, current_stream(self.device) if stream is None
                               else stream)
        return True


_raw_stream = None


def dependent_launches() -> bool:
    """Whether ggc's kernels for sm_90a launch with programmatic stream
    serialization: each waits at entry for the kernel ahead of it in the
    stream (griddepcontrol.wait), so its CTAs may start while that kernel's
    last ones run. On by default; GGC_DEPENDENT_LAUNCH=0 (or off, false, no) turns it off."""
    return _ggc.dependent_launches()


def set_dependent_launches(enabled: bool) -> None:
    """Turns dependent launches (see dependent_launches()) on or off for
    every launch after the call, in this process."""
    if not isinstance(enabled, bool):
        raise TypeError(f"set_dependent_launches: enabled must be a bool, got "
                        f"{type(enabled).__name__}")
    _ggc.set_dependent_launches(enabled)


def current_stream(device: int) -> int:
    """The raw handle of CUDA device `device`'s current torch stream."""
    global _raw_stream
    if _raw_stream is None:
        import torch
        # What Triton and Inductor read: no torch.cuda.Stream object made.
        _raw_stream = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
            lambda d: torch.cuda.current_stream(d).cuda_stream)
    return _raw_stream(device)


def compile_for_launch(ir: str, num_sms: Optional[int] = None, source_name: str = "<ggc>",
                       target: Optional[str] = None):
    """To a cubin for `target` (default ggc.compiler.get_target()) with a
    persistent grid of `num_sms` CTAs at most (default
    ggc.compiler.get_num_sms(): the device's SMs); to PTX,
    which the driver compiles when it loads the module (a slower first
    launch, and no register report), for a target older than the device
    or without ptxas."""
    arch = target or get_target()
    check_target(arch)
    num_sms = get_num_sms() if num_sms is None else num_sms
    # Planned for the card in hand (an sm_80 kernel on a Hopper card takes
    # its 227 KiB of shared memory) unless set_shared_memory_bytes says
    # otherwise.
    shared = get_shared_memory_bytes()
    bandwidth = get_memory_gbps()
    device = device_target()
    if device is None or device == arch:
        try:
            return compile_cached(ir, emit="cubin", arch=arch, num_sms=num_sms,
                                  source_name=source_name, shared_memory_bytes=shared,
                                  memory_gbps=bandwidth)
        except CompilationError as e:
            if "needs ptxas" not in e.diagnostics:
                raise
        log.warning("ptxas not found (set GGC_PTXAS, or install the CUDA toolkit): %s goes "
                    "to the driver as PTX, compiled when it loads", source_name)
    return compile_cached(ir, emit="ptx", arch=arch, num_sms=num_sms,
                          source_name=source_name, shared_memory_bytes=shared,
                          memory_gbps=bandwidth)


# The kernel's one run-time size: the row count M, or (k_grouped) the
# concatenated K.
_RUN_TIME_SIZES = ("M", "K")

# Sizes that follow none: the rows of an A read through a_rows (T), and of
# an out written through out_rows (R).
_FREE_SIZES = ("T", "R")

# How each named run-time size follows it.
_SIZE_RULES = {
    "M": lambda m, g: m,
    "K": lambda k, g: k,
    "align4(M)": lambda m, g: (m + 3) // 4 * 4,
    "(M+3G)/4*4": lambda m, g: (m + 3 * g) // 4 * 4,  # MX scale rows
    "ceil(K/128)": lambda k, g: -(-k // 128),  # k_grouped block scales, MX 1x32 words
    "ceil(K/512)": lambda k, g: -(-k // 512),  # k_grouped MX 1x128 words
}


def _shape_text(shape: Sequence[Any]) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"
