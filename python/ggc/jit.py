"""`@ggc.jit`: trace a Python kernel into gg IR, compile, cache, launch.

Calling a jit function specialises it on the arguments' element types and
static sizes (the token count M stays dynamic) and on its constexpr values,
compiles the specialisation once (memory and disk cache, keyed by the IR's
content hash, the compiler version, the options and the GPU arch), checks
the arguments and launches. `fn.asm[stage]` shows every stage of the last
specialisation; `fn.compile(...)` compiles without launching, and works on
machines without a GPU. Under torch.compile a call becomes the kernel's
own torch custom op (ggc.torch_ops), so fullgraph=True holds. On CPU
tensors a call runs ggc's reference backend instead (ggc.reference: the
traced kernel interpreted in torch, nothing compiled).
"""

from __future__ import annotations

import functools
import inspect
import itertools
import threading
import weakref
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import cache as _cache
from . import groups as _groups
from . import signature as _signature
from . import language as gl
from . import compiler as _compiler
from .compiler import check_num_sms
from .ir import Arg, EpilogueOp, FunctionSpec, emit
from .runtime import Kernel, _TORCH_DTYPES

# ggc.torch_ops once torch is there (it sets this on import; None without
# torch, where no torch tensor can reach a kernel).
_torch_ops = None
_KEYS = itertools.count()
_BY_KEY: "weakref.WeakValueDictionary[int, JITFunction]" = weakref.WeakValueDictionary()

_IR_TYPES = {"bf16": "bf16", "f16": "f16", "f32": "f32", "i32": "i32", "i64": "i64",
             "f8e4m3fn": "f8E4M3FN", "f8e5m2": "f8E5M2"}
TUNING_KNOBS = ("BLOCK_M", "BLOCK_N", "BLOCK_K", "STAGES", "SPLIT_N", "CLUSTER_M")
# What a tile's warpgroups whose rows are all past their group do
# (gg.grouped_matmul's `padding`): "skip" their wgmma or "compute" them.
IDLE_WARPGROUPS = ("skip", "compute")


class spec:  # noqa: N801 - a small value type, used like a tensor
    """A placeholder argument for compiling without tensors: a shape (None
    for the dynamic token count) and an element type name ("bf16",
    "f8e4m3fn", "i32", ...)."""

    def __init__(self, shape: Sequence[Optional[int]], dtype: str):
        if dtype not in _IR_TYPES:
            raise ValueError(f"dtype must be one of {sorted(_IR_TYPES)}, got {dtype!r}")
        self.shape, self.dtype = tuple(shape), dtype

    def __repr__(self) -> str:
        return f"ggc.spec({list(self.shape)}, {self.dtype!r})"


def _describe(name: str, value: Any) -> Tuple[Tuple[Optional[int], ...], str]:
    if isinstance(value, spec):
        return value.shape, value.dtype
    if not type(value).__module__.startswith("torch") and hasattr(value, "__dlpack__"):
        from .runtime import _describe_dlpack
        t = _describe_dlpack(f"argument '{name}'", value)
        return t.shape, t.dtype
    dtype = getattr(value, "dtype", None)
    shape = getattr(value, "shape", None)
    if dtype is None or shape is None:
        raise TypeError(f"argument '{name}' must be a tensor (torch.Tensor, an array with "
                        f"__cuda_array_interface__, or ggc.spec), got {type(value).__name__}")
    name_ = _TORCH_DTYPES.get(str(dtype))
    if name_ is None:
        raise TypeError(f"argument '{name}' has dtype {dtype}, which ggc does not take")
    return tuple(int(d) for d in shape), name_


class JITFunction:
    """A `@ggc.jit` kernel; call it with its arguments to run it."""

    def __init__(self, fn: Callable, num_sms: Optional[int] = None):
        if num_sms is not None:
            check_num_sms(num_sms)
        self.fn = fn
        self._fixed_num_sms = num_sms
        # eval_str: kernels written under `from __future__ import annotations`
        # carry their annotations as strings.
        self.signature = _signature_of(fn)
        self._positions = {p: i for i, p in enumerate(self.signature.parameters)}
        self.tensor_params: List[str] = []
        self.constexprs: List[str] = []
        for p in self.signature.parameters.values():
            ann = p.annotation
            if ann is gl.constexpr:
                self.constexprs.append(p.name)
            elif isinstance(ann, type) and issubclass(ann, gl.Role):
                self.tensor_params.append(p.name)
            else:
                raise TypeError(
                    f"{fn.__name__}: parameter '{p.name}' needs an annotation from "
                    f"ggc.language (Rows, Weights, Offsets, RowVector, Out, ..., or "
                    f"constexpr); got {ann!r}")
        self._specialisations: Dict[Any, Kernel] = {}
        # Held while a specialisation is traced and compiled: two threads'
        # first calls with the same arguments compile it once.
        self._specialise_lock = threading.Lock()
        # Launches by call signature (_call_key), made after a checked call
        # with real tensors; dict operations only, safe across threads.
        self._plans: Dict[Any, Any] = {}
        self.last: Optional[Kernel] = None
        functools.update_wrapper(self, fn)
        # Name of this kernel's torch custom op, once registered (ggc.torch_ops),
        # which finds the kernel by its key: a number is what torch.compile
        # can hand over while tracing.
        self._torch_op: Optional[str] = None
        self._op_key = next(_KEYS)
        _BY_KEY[self._op_key] = self

    @property
    def num_sms(self) -> int:
        """The SMs of the kernel's persistent grid: fixed by the decorator,
        else ggc.compiler.get_num_sms() at the call."""
        return self._fixed_num_sms or _compiler.get_num_sms()

    # -- tracing ------------------------------------------------------------
    def _bind(self, args, kwargs):
        bound = self.signature.bind(*args, **kwargs)
        bound.apply_defaults()
        tensors = {n: bound.arguments[n] for n in self.tensor_params}
        consts = {n: bound.arguments[n] for n in self.constexprs}
        for name, value in consts.items():
            if value is not None and not isinstance(value, (int, float, bool, str)):
                raise TypeError(f"constexpr '{name}' must be a Python number, bool or "
                                f"string, got {type(value).__name__}")
        return tensors, consts

    def trace(self, *args, **kwargs) -> str:
        """The gg IR of the specialisation for these arguments."""
        tensors, consts = self._bind(args, kwargs)
        return self._trace(tensors, consts)[0]

    def _trace(self, tensors: Dict[str, Any], consts: Dict[str, Any]):
        params = {}
        for i, name in enumerate(self.tensor_params):
            shape, dtype = _describe(name, tensors[name])
            ann = self.signature.parameters[name].annotation
            params[name] = gl.Param(name, i, ann, shape, dtype)
        call_args = dict(params)
        call_args.update(consts)
        with gl._tracing(gl._Trace()) as trace:
            self.fn(**call_args)
        if trace.dot is None:
            raise gl.CompileError(f"{self.fn.__name__}: the kernel never calls gl.grouped_dot")
        if trace.stored is None:
            raise gl.CompileError(f"{self.fn.__name__}: the kernel never calls gl.store")
        fn_spec = self._function_spec(params, trace, consts)
        return emit(fn_spec), fn_spec

    def _function_spec(self, params: Dict[str, gl.Param], trace: "gl._Trace",
                       consts: Dict[str, Any]) -> FunctionSpec:
        dot = trace.dot
        layout = dot["layout"]
        out_param, value = trace.stored
        dynamic = {}  # parameter -> dims that follow the token count
        if layout in ("contiguous", "padded_contiguous"):
            dynamic[dot["a"].name] = {0}
            dynamic[out_param.name] = {0}
            if layout == "padded_contiguous":
                dynamic[dot["groups"].name] = {0}
            if dot["a_rows"] is not None:  # A's own rows (T) are a size apart
                dynamic[dot["a_rows"].name] = {0}
            if trace.out_rows is not None:  # out's rows (R) too, its list's are M
                dynamic[trace.out_rows.name] = {0}
            if trace.out_scale is not None:  # [ceil(N/128), align4(M)]
                dynamic[trace.out_scale.name] = {1}
            for kind, p in trace.epilogue_args:
                if kind == "r":
                    dynamic[p.name] = {0}
            if dot["a_scale"] is not None:
                dims = {"channel": {0}, "block": {0}, "block_mn": {1}, "mx32": {0},
                        "mx128": {0}}
                dynamic[dot["a_scale"].name] = dims.get(dot["a_scale_kind"], set())
        elif layout == "k_grouped":
            # The concatenated K: outer for token-major operands, inner for
            # K-major ones; block scales count its 128-wide blocks.
            k_dim = 0 if dot["b_layout"] == "kn" else 1
            dynamic[dot["a"].name] = {k_dim}
            dynamic[dot["b"].name] = {k_dim}
            block_dims = {"block": {1}, "block_mn": {0}, "block1x128": {1},
                          "block1x128_mn": {0}, "mx32": {1}, "mx128": {1}}
            for side in ("a_scale", "b_scale"):
                if dot[side] is not None:
                    dynamic[dot[side].name] = block_dims.get(dot[side + "_kind"], set())
        args = []
        for name in self.tensor_params:
            p = params[name]
            shape = [None if d in dynamic.get(name, ()) else s
                     for d, s in enumerate(p.shape)]
            args.append(Arg(name, shape, _IR_TYPES[p.dtype]))
        used = {dot["a"].name, dot["b"].name, dot["groups"].name, out_param.name}
        used |= {dot[s].name for s in ("a_scale", "b_scale", "a_rows") if dot[s] is not None}
        used |= {p.name for _, p in trace.epilogue_args}
        for listed in (trace.out_rows, trace.out_scale):
            if listed is not None:
                used.add(listed.name)
        unused = [n for n in self.tensor_params if n not in used]
        if unused:
            raise gl.CompileError(f"{self.fn.__name__}: parameter(s) {unused} are never "
                                  f"used by the kernel")
        ops = []
        for op in trace.ops:
            ops += _op_text(op)
        result = value.ssa if value.ssa != "%acc" or ops else "%acc"
        fn_spec = FunctionSpec(
            name=self.fn.__name__, layout=layout, args=args, a=dot["a"].name,
            b=dot["b"].name, groups=dot["groups"].name, out=out_param.name,
            b_layout=dot["b_layout"],
            a_layout="km" if layout == "k_grouped" and dot["b_layout"] == "kn" else "mk",
            tf32=dot["tf32"], column_pairs=trace.column_pairs == "column_pairs",
            column_halves=trace.column_pairs == "column_halves", accumulate=trace.accumulate,
            zero_ungrouped=trace.zero_ungrouped,
            expected_m=dot["expected_m"], loc=dot["loc"],
            rows=[p.name for k, p in trace.epilogue_args if k == "r"],
            cols=[p.name for k, p in trace.epilogue_args if k == "c"],
            group_scalars=[p.name for k, p in trace.epilogue_args if k == "s"],
            a_rows=None if dot["a_rows"] is None else dot["a_rows"].name,
            out_rows=None if trace.out_rows is None else trace.out_rows.name,
            out_scale=None if trace.out_scale is None else trace.out_scale.name)
        if dot["a_scale"] is not None:
            fn_spec.a_scale = (dot["a_scale"].name, dot["a_scale_kind"])
        if dot["b_scale"] is not None:
            fn_spec.b_scale = (dot["b_scale"].name, dot["b_scale_kind"])
        if ops or trace.epilogue_args or trace.column_pairs is not None:
            fn_spec.epilogue = ops + [EpilogueOp(f"gg.yield {result} : f32")]
        return fn_spec

    # -- compiling ----------------------------------------------------------
    def compile(self, *args, **kwargs) -> Kernel:
        """Compiles (or finds in the caches) the specialisation for these
        arguments, without launching; tensors may be ggc.spec placeholders."""
        tensors, consts = self._bind(args, kwargs)
        return self._kernel(tensors, consts)

    def _key(self, tensors, consts):
        described = tuple(_describe(n, tensors[n]) for n in self.tensor_params)
        return (described, tuple(sorted((n, constant_key(v)) for n, v in consts.items())),
                self.num_sms, _compiler.plan_settings())

    def _kernel(self, tensors, consts) -> Kernel:
        key = self._key(tensors, consts)
        kernel = self._specialisations.get(key)
        if kernel is None:
            with self._specialise_lock:
                kernel = self._specialisations.get(key)
                if kernel is None:
                    kernel = self._specialise(tensors, consts)
                    self._specialisations[key] = kernel
        self.last = kernel
        return kernel

    def _specialise(self, tensors, consts) -> Kernel:
        text, fn_spec = self._trace(tensors, consts)
        knobs = checked_knobs(consts)
        idle = consts.get("IDLE_WARPGROUPS")
        if knobs:
            fn_spec.config = self._config_with(text, knobs)
        fn_spec.idle_warpgroups = idle
        if knobs or idle is not None:
            text = emit(fn_spec)
        # GGC_LOG's compile and cache records name the specialisation.
        with _cache.compiling(_cache.specialisation(self.fn.__name__, fn_spec.args, consts)):
            return Kernel(text, num_sms=self.num_sms,
                          source_name=f"{self.fn.__name__} (traced)",
                          target=_compiler.get_target())

    def _config_with(self, text: str, knobs: Dict[str, Any]) -> str:
        """The config gg-select-config picks, with the knobs overriding it."""
        from .compiler import compile_ir
        chosen = compile_ir(text, emit="gg-config", num_sms=self.num_sms,
                            arch=_compiler.get_target(),
                            shared_memory_bytes=_compiler.get_shared_memory_bytes(),
                            memory_gbps=_compiler.get_memory_gbps()).plans[0]["config"]
        (bm, bn, bk), (cm, cn) = chosen["block"], chosen["cluster"]
        sms, split = chosen["sms"], chosen["split_n"]
        bm, bn = knobs.get("BLOCK_M", bm), knobs.get("BLOCK_N", bn)
        # Stages the user leaves open are chosen again for the new tile
        # (stages = 0: gg-select-config picks the deepest pipeline that fits).
        bk, stages = knobs.get("BLOCK_K", bk), knobs.get("STAGES", 0)
        # The chosen split of the columns between warpgroups and the chosen
        # cluster go with the chosen tile; a new tile takes SPLIT_N and
        # CLUSTER_M (2: CTA pairs of neighbouring M blocks sharing B's tile
        # by TMA multicast, the only cluster gg-lower-to-nvvm lowers), else
        # neither.
        if "BLOCK_M" in knobs or "BLOCK_N" in knobs:
            split, cm = 1, 1
        split = knobs.get("SPLIT_N", split)
        cm = knobs.get("CLUSTER_M", cm)
        return (f"#gg.config<block = [{bm}, {bn}, {bk}], stages = {stages}, "
                f"cluster = [{cm}, {cn}], sms = {sms}"
                + (f", split_n = {split}" if split != 1 else "") + ">")

    @property
    def asm(self) -> Dict[str, Any]:
        """Every stage of the last specialisation compiled or run."""
        if self.last is None:
            raise RuntimeError(f"{self.fn.__name__} has not been compiled yet: call it, or "
                               f".compile(...) it with its arguments")
        return self.last.asm

    # -- running ------------------------------------------------------------
    def __call__(self, *args, stream: Optional[int] = None, validate=None,
                 **kwargs) -> None:
        """Runs the kernel on `stream` (default: the tensors' current
        stream); `validate` checks the group metadata first (Kernel).
        CPU tensors run on ggc's reference backend (ggc.reference).
        While torch.compile traces, under make_fx or on fake tensors, the
        call goes through the kernel's custom op instead."""
        key = _call_key(args, kwargs, validate)
        if key is not None:
            key = (key, self.num_sms, _compiler.plan_settings())
            try:
                plan = self._plans.get(key)
            except TypeError:  # an unhashable value: no plan for it
                plan = key = None
            if plan is not None and plan.run(args + tuple(kwargs.values()), stream):
                return
        tensors, consts = self._bind(args, kwargs)
        bridge = _torch_ops
        if bridge is not None and bridge.wants_op(tensors.values()):
            # torch.compile, make_fx, fake tensors: the call becomes this
            # kernel's custom op, whose body comes back to _run.
            bridge.call_jit(self, tensors, consts, stream, validate)
            return
        self._run(tensors, consts, stream, validate)
        if key is not None:
            self._remember(key, args, kwargs, tensors, consts)

    def _remember(self, key, args, kwargs, tensors, consts) -> None:
        """Keeps the checked launch of a call that just ran, for the next
        call of its signature."""
        launch = self.launch_for(tensors, consts)
        if launch is None:
            return
        at = {name: i for i, name in enumerate(list(self.signature.parameters)[:len(args)])}
        at.update((name, len(args) + i) for i, name in enumerate(kwargs))
        if len(self._plans) >= _MAX_PLANS:
            self._plans.clear()
        self._plans[key] = _Plan(launch, [at[n] for n in self.tensor_params])

    def launch_for(self, tensors: Dict[str, Any], consts: Dict[str, Any]):
        """The checked launch (runtime.Launch) of these arguments'
        signature, once a call with them has launched; else None."""
        kernel = self._specialisations.get(self._key(tensors, consts))
        if kernel is None:
            return None
        return kernel.launch_for([tensors[n] for n in self.tensor_params])

    def _run(self, tensors: Dict[str, Any], consts: Dict[str, Any], stream, validate) -> None:
        on_cpu = _runs_on_cpu(tensors)
        bridge = _torch_ops
        if bridge is not None and bridge.without_data(tensors.values()):
            # Fake tensors (a custom op's fake implementation): every check
            # of a launch that needs no data, and no launch.
            if on_cpu:
                _reference().check(self, tensors, consts)
            else:
                bridge.check_without_data(self, tensors, consts)
            return
        if on_cpu:
            _reference().run(self, tensors, consts, validate)
            return
        kernel = self._kernel(tensors, consts)
        kernel(*(tensors[n] for n in self.tensor_params), stream=stream, validate=validate)


_MAX_PLANS = 512


class _Plan:
    """A call signature's launch, and where each kernel argument sits
    among the call's arguments (positional, then keyword)."""

    __slots__ = ("launch", "positions")

    def __init__(self, launch, positions: List[int]):
        self.launch, self.positions = launch, positions

    def run(self, values: Tuple[Any, ...], stream: Optional[int]) -> bool:
        return self.launch.run(_signature.addresses(values, self.positions), stream)


def _call_key(args: Tuple[Any, ...], kwargs: Dict[str, Any], validate):
    """What decides a call's checks, binding and kernel: its arguments'
    signature (ggc.signature.of: every field of a tensor a check reads, a
    constant's type and value) and keyword names; None when the
    call must take the full path (validation, torch.compile tracing or a
    dispatch mode, an argument that is neither)."""
    bridge = _torch_ops
    if (validate if validate is not None else _groups.VALIDATE_BY_DEFAULT) or (
            bridge is None or bridge.tracing()):
        return None
    args_key = _signature.of(args)
    if not kwargs or args_key is None:
        return args_key
    kwargs_key = _signature.of(tuple(kwargs.values()))
    return None if kwargs_key is None else (args_key, tuple(kwargs), kwargs_key)


def _runs_on_cpu(tensors: Dict[str, Any]) -> bool:
    """Whether a launch runs on ggc's reference backend (ggc.reference):
    every torch tensor on the CPU. Otherwise they are CUDA tensors (or
    GPU arrays of another kind), checked by the kernel; a tensor on
    another device, or CPU and CUDA tensors together, are an error naming
    the argument before anything is traced."""
    first = None
    for name, value in tensors.items():
        if type(value).__module__.startswith("torch"):
            kind = value.device.type
        elif hasattr(value, "__cuda_array_interface__"):
            kind = "cuda"
        else:
            continue  # DLPack and the like: the kernel describes them
        if kind not in ("cuda", "cpu"):
            raise ValueError(f"argument '{name}' must be on a CUDA device, or on the CPU for "
                             f"ggc's reference backend, but is on {kind}")
        if first is None:
            first = (name, kind)
        elif kind != first[1]:
            raise ValueError(f"argument '{name}' is on {kind} but argument '{first[0]}' on "
                             f"{first[1]}: a launch's tensors must all be on one device")
    return first is not None and first[1] == "cpu"


def _signature_of(fn: Callable) -> inspect.Signature:
    """fn's signature with string annotations evaluated; one that names
    nothing that exists is an error naming its parameter."""
    try:
        return inspect.signature(fn, eval_str=True)
    except (NameError, AttributeError, SyntaxError) as e:
        raw = inspect.signature(fn)
        bad = next((p.name for p in raw.parameters.values() if isinstance(p.annotation, str)
                    and not _evaluates(p.annotation, fn)), "?")
        raise TypeError(f"@ggc.jit {fn.__name__}: the annotation of '{bad}' names nothing "
                        f"that exists ({e})") from None


def _evaluates(text: str, fn: Callable) -> bool:
    try:
        eval(text, getattr(fn, "__globals__", {}))  # noqa: S307 - the user's own annotation
        return True
    except Exception:  # noqa: BLE001 - any failure names this parameter
        return False


def checked_knobs(consts: Dict[str, Any]) -> Dict[str, Any]:
    """The tuning constexprs given ({name: value}), each checked, with
    IDLE_WARPGROUPS', whatever runs the kernel: the CPU reference ignores
    them, but a bad value is an error there too."""
    knobs = {k: consts[k] for k in TUNING_KNOBS if consts.get(k) is not None}
    for name, value in knobs.items():
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"constexpr {name} must be a positive int, got {value!r}")
    idle = consts.get("IDLE_WARPGROUPS")
    if idle is not None and idle not in IDLE_WARPGROUPS:
        raise ValueError(f"constexpr IDLE_WARPGROUPS must be one of {IDLE_WARPGROUPS}, "
                         f"got {idle!r}")
    return knobs


def constant_key(value):
    """A constexpr as a specialisation's key holds it: with its type (Python
    finds 1 == True == 1.0) and floats by their text (0.0 == -0.0, and NaN
    equals nothing, so a NaN constant would compile on every call)."""
    return (type(value), repr(value) if isinstance(value, float) else value)


def _reference():
    # Imported on the first CPU launch: it needs torch, which jit does not.
    from . import reference
    return reference


def jit(fn: Optional[Callable] = None, *, num_sms: Optional[int] = None):
    """Decorator: `@ggc.jit`, or `@ggc.jit(num_sms=...)` for a kernel whose
    persistent grid has that many CTAs whatever ggc.compiler.set_num_sms
    says (default: its value at each call)."""
    if fn is None:
        return lambda f: JITFunction(f, num_sms=num_sms)
    return JITFunction(fn, num_sms=num_sms)


def _op_text(op: "gl._Op") -> List[EpilogueOp]:
    loc = op.loc
    if op.name == "arith.constant":
        return [EpilogueOp(f"{op.result} = arith.constant {op.operands[0]} : f32", loc)]
    if op.name == "arith.extf":
        return [EpilogueOp(f"{op.result} = arith.extf {op.operands[0]} : {op.type} to f32",
                           loc)]
    if op.name == "group_id":
        as_int = op.result + "_i"
        return [EpilogueOp(f"{as_int} = arith.index_cast %group : index to i64", loc),
                EpilogueOp(f"{op.result} = arith.sitofp {as_int} : i64 to f32", loc)]
    return [EpilogueOp(f"{op.result} = {op.name} {', '.join(op.operands)} : f32", loc)]
