"""PyTorch integration: ggc's entry points as `torch.ops.ggc.*` custom ops,
so that torch.compile(fullgraph=True), make_fx and torch.export trace them,
with autograd where a backward exists. Imported by `import ggc` when torch
is installed. On CPU tensors every op runs on ggc's reference backend
(ggc.reference), fakes included.

- `torch.ops.ggc.grouped_gemm` (returns the output) and
  `torch.ops.ggc.grouped_gemm_out` (writes `out`): everything
  `ggc.ops.grouped_gemm` takes, which itself calls them while compiling.
- One op per `@ggc.jit` kernel, registered on its first traced call
  (`jit_<name>_<hash>`): its Out parameters are mutated, it returns nothing.
- `torch.ops.ggc.grouped_mm(x, w, offsets)`: bf16/f16 contiguous groups.

The fake implementations are the real bodies: given fake tensors, a jit
kernel traces and compiles its specialisation as a call would, and holds
the arguments to the compiled kernel's contract instead of launching
(`check_without_data`), so a fake rejects what the real op rejects, save
what needs data (group metadata, pointers).

Backward (grouped_mm, and grouped_gemm's bf16/f16 contiguous layout): two
more grouped GEMMs, grad_a[g] = grad_out[g] @ b[g] (b read in the other
layout, no copy) and grad_b[g] = grad_out[g]^T @ a[g] (k_grouped: the
groups split the tokens, which are the reduction there).
"""

from __future__ import annotations

import ast
import hashlib
import re
import sys
import threading
from typing import Optional

import torch
from torch import Tensor
from torch._subclasses.fake_tensor import is_fake

from . import language as gl
from . import runtime as _rt
from . import gemm_gradients
from . import signature as _signature
from .jit import _BY_KEY as _jit_functions, spec
from .ops import _from_torch_offsets, grouped_gemm, plan_options, remembered

# Inductor keeps the strides a custom op is given (ggc reads DeepGEMM's
# M-major scale views through their storage, and checks contiguity).
_TAGS = tuple(getattr(torch.Tag, t) for t in ("needs_exact_strides",) if hasattr(torch.Tag, t))

# ---------------------------------------------------------------------------
# When a call becomes a custom op
# ---------------------------------------------------------------------------

_state = threading.local()


class _op_body:  # noqa: N801 - used as `with _op_body():`, as the function it was
    """Inside an op's body (real or fake) calls run directly: going through
    the op again would recurse (torch >= 2.12 says is_compiling() while
    running fake implementations). A class, not a contextlib generator:
    it is entered on every eager op call, and costs a third as much."""

    __slots__ = ("previous",)

    def __enter__(self):
        self.previous = getattr(_state, "inside", False)
        _state.inside = True

    def __exit__(self, *exc):
        _state.inside = self.previous


def without_data(tensors) -> bool:
    """Fake or meta tensors: shapes, strides and dtypes, nothing to launch on."""
    for t in tensors:
        if type(t) is Tensor:  # the eager case, kept cheap: no subclass is fake
            if t.is_meta:
                return True
        elif isinstance(t, Tensor) and (is_fake(t) or t.is_meta):
            return True
    return False


def tracing() -> bool:
    """torch.compile tracing, or a dispatch mode (make_fx, FakeTensorMode,
    ...) active: no call may take a cached launch."""
    return torch.compiler.is_compiling() or torch._C._len_torch_dispatch_stack() > 0


def wants_op(tensors, grad: bool = False) -> bool:
    """Whether a call must go through its custom op: while torch.compile
    traces it, under a dispatch mode (make_fx, FakeTensorMode, ...), on
    tensors without data, or (`grad`) for inputs that need a gradient."""
    if getattr(_state, "inside", False):
        return False
    if torch.compiler.is_compiling():
        return True
    if torch._C._len_torch_dispatch_stack() > 0 or without_data(tensors):
        return True
    return grad and needs_grad(tensors)


def needs_grad(tensors) -> bool:
    """Whether grad mode is on and a tensor of `tensors` requires grad."""
    return torch.is_grad_enabled() and any(
        isinstance(t, Tensor) and t.requires_grad for t in tensors)


def out_loses_grad(tensors) -> bool:
    """Whether an eager out= call (outside an op's body) takes inputs that
    need a gradient, which a result written into `out` cannot carry."""
    return not getattr(_state, "inside", False) and needs_grad(tensors)


# ---------------------------------------------------------------------------
# The eager path of every op: plain kernels, no custom_op wrappers
# ---------------------------------------------------------------------------

# torch.library.custom_op's eager call is a Python autograd kernel that
# redispatches to a Python backend wrapper (torch._disable_dynamo, an
# aliasing check), 6-10 us per call before the body runs. Each op below
# keeps its custom_op (schema, fake, autograd formula, what torch.compile
# and opcheck know), and gets plain kernels on the CPU and CUDA keys plus a
# kernel on AutogradCPU/AutogradCUDA (which win over custom_op's Autograd
# and CompositeExplicitAutograd registrations for these devices) that runs
# the body directly when nothing else is to be done: no input needs a
# gradient, and below autograd there is nothing but the backend
# (ADInplaceOrView's only work here, the version bump of mutated
# arguments, is done in its place). Anything else (a gradient, a dispatch
# mode or tensor subclass: the Python key, functionalization, neg/conj
# views) takes custom_op's own autograd kernel, as before.
_LIBS = []
# The keys below autograd as DispatchKeySet's bits: a call's keyset is
# tested with one integer AND (a keyset's & is its bits' AND), where
# DispatchKeySet's & and raw_repr() cost two bindings' calls.
# The backends alone (CPU, CUDA or both), with or without ADInplaceOrView
# (which the dispatcher leaves out of an op that mutates nothing: a plain
# CUDA call's keys below autograd are CUDA's alone).
_AFTER_AUTOGRAD_BITS = torch._C._after_autograd_keyset.raw_repr()
_BACKENDS = tuple(torch._C.DispatchKeySet(getattr(torch._C.DispatchKey, b)) for b in ("CPU", "CUDA"))
_DIRECT = frozenset(
    (backends | extra).raw_repr()
    for backends in (_BACKENDS[0], _BACKENDS[1], _BACKENDS[0] | _BACKENDS[1])
    for extra in (torch._C.DispatchKeySet(torch._C.DispatchKey.ADInplaceOrView),
                  torch._C.DispatchKeySet(torch._C.DispatchKey.Undefined)))


def _formula_function(op, body, setup_context, backward):
    """An autograd.Function (named ggc_<op>, its grad_fn ggc_<op>Backward)
    whose forward runs `body` and `setup_context` on all the op's
    arguments and whose backward is `backward`."""
    def forward(ctx, *inputs):
        output = body(*inputs)
        setup_context(ctx, inputs, output)
        return output

    return type(f"ggc_{op._name}", (torch.autograd.Function,),
                {"forward": staticmethod(forward), "backward": staticmethod(backward)})


def lean_eager(op, body, mutated=(), formula=None, learn=None, gradient_ops=None) -> None:
    """Registers `body` (the custom_op `op`'s eager implementation) as
    described above; `mutated`: positions of the arguments it writes.
    `formula`: the op's (setup_context, backward), what its
    register_autograd gets, which a call on plain tensors that needs a
    gradient then runs in a plain autograd.Function instead of custom_op's
    generic autograd wrapper (which redispatches below autograd and fills
    defaults: a third of a training step's host time). `learn`: for an op
    whose body runs launches ggc.ops keeps, learn(*all its arguments) ->
    the kept launch's description (_Plan.describe) or None; with it and
    ggc._signature, the four kernels are C++ (python/src/op_kernels.cpp),
    which run a call seen before without Python and call these Python
    kernels for any other. `gradient_ops(*a call's arguments)`: `formula`'s
    backward for that call as calls of other ops, [(input, "ns::op",
    sources[, constants])] with each source -1 (the incoming gradient),
    the position of one of the op's tensor arguments, or -2 - i for
    constants[i]; or None where it has none: a call seen before that needs
    a gradient then runs its launch in a C++ autograd node too."""
    from torch._library.autograd import make_autograd_impl
    full = make_autograd_impl(op._opoverload, op)  # what custom_op registered
    function = _formula_function(op, body, *formula) if formula else None
    any_grad, grad_enabled = torch._C._any_requires_grad, torch._C.is_grad_enabled
    bump = torch._C._increment_version
    # The dispatcher leaves trailing arguments at their defaults out; the
    # Function takes them all, positionally.
    arguments = op._opoverload._schema.arguments
    if function is not None and any(arg.kwarg_only for arg in arguments):
        raise ValueError(f"lean_eager's formula= takes ops without keyword-only "
                         f"arguments; {op._name} has some")
    defaults = [arg.default_value for arg in arguments if arg.has_default_value()]
    required = len(arguments) - len(defaults)

    def autograd(keyset, *args, **kwargs):
        if (keyset.raw_repr() & _AFTER_AUTOGRAD_BITS) in _DIRECT:
            if not (grad_enabled() and any_grad(*args, **kwargs)):
                if mutated:
                    bump([args[i] for i in mutated])
                return body(*args, **kwargs)
            if function is not None and not kwargs:
                return function.apply(*args, *defaults[len(args) - required:])
        return full(keyset, *args, **kwargs)

    install = _signature.op_kernel_installer() if learn is not None else None
    if install is not None:
        qualified = f"{op._namespace}::{op._name}"
        for key in ("CPU", "CUDA"):
            install(qualified, key, False, lambda bits, *args: body(*args), learn, mutated,
                    None)
        for key in ("AutogradCPU", "AutogradCUDA"):
            install(qualified, key, True, lambda bits, *args: autograd(_keyset_of(bits), *args),
                    learn, mutated, gradient_ops)
        return
    lib = torch.library.Library(op._namespace, "FRAGMENT")
    for key in ("CPU", "CUDA"):
        lib.impl(op._name, body, key)
    for key in ("AutogradCPU", "AutogradCUDA"):
        lib.impl(op._name, autograd, key, with_keyset=True)
    _LIBS.append(lib)  # a Library's registrations last as long as it does


_keyset_of = torch._C.DispatchKeySet.from_raw_repr


def kept_launch_learner(plan_call, positions, checked=None):
    """lean_eager's learn= for an op whose body runs a launch ggc.ops
    keeps: plan_call(*the op's arguments) -> (grouped_gemm's tensors,
    plan_options, validate), as the body looks its launch up;
    `positions`: each of those tensors' position among the op's
    arguments (_Plan.describe); `checked()`: the plan keys the op's own
    checks passed, where it has any."""
    def learn(*args):
        tensors, options, validate = plan_call(*args)
        key, plan = remembered(tensors, options, validate)
        if plan is None or (checked is not None and key not in checked()):
            return None
        return plan.describe(positions)
    return learn


# ---------------------------------------------------------------------------
# grouped_gemm and grouped_gemm_out
# ---------------------------------------------------------------------------

def _grouped_gemm(a: Tensor, b: Tensor, offsets: Optional[Tensor] = None,
                  masked_m: Optional[Tensor] = None, m_indices: Optional[Tensor] = None,
                  k_offsets: Optional[Tensor] = None, offs: Optional[Tensor] = None,
                  a_scale: Optional[Tensor] = None, b_scale: Optional[Tensor] = None,
                  out_dtype: Optional[torch.dtype] = None, b_layout: str = "nk",
                  expected_m: Optional[int] = None, a_scale_kind: Optional[str] = None,
                  b_scale_kind: Optional[str] = None, k_major: bool = False,
                  validate: Optional[bool] = None, zero_ungrouped: bool = False) -> Tensor:
    # grouped_gemm's own first step, before the body's context and keyword
    # call (2 us a call): a launch it keeps for the call's signature.
    tensors, options, _ = _gemm_plan_call(
        a, b, offsets, masked_m, m_indices, k_offsets, offs, a_scale, b_scale, out_dtype,
        b_layout, expected_m, a_scale_kind, b_scale_kind, k_major, validate, zero_ungrouped)
    out = _launch_remembered(tensors, options, validate=validate)
    if out is not None:
        return out
    with _op_body():
        return grouped_gemm(a, b, offsets=offsets, masked_m=masked_m, m_indices=m_indices,
                            k_offsets=k_offsets, offs=offs, a_scale=a_scale,
                            b_scale=b_scale, out_dtype=out_dtype, b_layout=b_layout,
                            expected_m=expected_m, a_scale_kind=a_scale_kind,
                            b_scale_kind=b_scale_kind, k_major=k_major, validate=validate,
                            zero_ungrouped=zero_ungrouped)


def _grouped_gemm_out(a: Tensor, b: Tensor, out: Tensor, offsets: Optional[Tensor] = None,
                      masked_m: Optional[Tensor] = None, m_indices: Optional[Tensor] = None,
                      k_offsets: Optional[Tensor] = None, offs: Optional[Tensor] = None,
                      a_scale: Optional[Tensor] = None, b_scale: Optional[Tensor] = None,
                      b_layout: str = "nk", expected_m: Optional[int] = None,
                      a_scale_kind: Optional[str] = None, b_scale_kind: Optional[str] = None,
                      k_major: bool = False, validate: Optional[bool] = None,
                      accumulate: bool = False, zero_ungrouped: bool = False) -> None:
    tensors, options, _ = _gemm_out_plan_call(
        a, b, out, offsets, masked_m, m_indices, k_offsets, offs, a_scale, b_scale, b_layout,
        expected_m, a_scale_kind, b_scale_kind, k_major, validate, accumulate, zero_ungrouped)
    if _launch_remembered(tensors, options, validate=validate) is not None:
        return
    with _op_body():
        grouped_gemm(a, b, out=out, offsets=offsets, masked_m=masked_m, m_indices=m_indices,
                     k_offsets=k_offsets, offs=offs, a_scale=a_scale, b_scale=b_scale,
                     b_layout=b_layout, expected_m=expected_m, a_scale_kind=a_scale_kind,
                     b_scale_kind=b_scale_kind, k_major=k_major, validate=validate,
                     accumulate=accumulate, zero_ungrouped=zero_ungrouped)


def _gemm_plan_call(a, b, offsets, masked_m, m_indices, k_offsets, offs, a_scale, b_scale,
                    out_dtype, b_layout, expected_m, a_scale_kind, b_scale_kind, k_major,
                    validate, zero_ungrouped):
    """grouped_gemm's arguments as ggc.ops keeps its launch: (tensors,
    plan_options, validate)."""
    return ((a, b, offsets, masked_m, m_indices, k_offsets, offs, a_scale, b_scale, None),
            plan_options(out_dtype, b_layout, expected_m, a_scale_kind, b_scale_kind, k_major,
                         zero_ungrouped=zero_ungrouped), validate)


def _gemm_out_plan_call(a, b, out, offsets, masked_m, m_indices, k_offsets, offs, a_scale,
                        b_scale, b_layout, expected_m, a_scale_kind, b_scale_kind, k_major,
                        validate, accumulate, zero_ungrouped):
    """grouped_gemm_out's, likewise."""
    return ((a, b, offsets, masked_m, m_indices, k_offsets, offs, a_scale, b_scale, out),
            plan_options(None, b_layout, expected_m, a_scale_kind, b_scale_kind, k_major,
                         accumulate, zero_ungrouped), validate)


# Where each of grouped_gemm's tensors (ggc.ops' slots: a, b, the four
# group layouts, offs, the scales, out) is among each op's arguments.
_GEMM_POSITIONS = {slot: slot for slot in range(9)}
_GEMM_OUT_POSITIONS = {0: 0, 1: 1, **{slot: slot + 1 for slot in range(2, 9)}, 9: 2}

grouped_gemm_op = torch.library.custom_op("ggc::grouped_gemm", _grouped_gemm,
                                          mutates_args=(), tags=_TAGS)
grouped_gemm_op.register_fake(_grouped_gemm)
grouped_gemm_out_op = torch.library.custom_op("ggc::grouped_gemm_out", _grouped_gemm_out,
                                              mutates_args=("out",), tags=_TAGS)
grouped_gemm_out_op.register_fake(_grouped_gemm_out)
lean_eager(grouped_gemm_out_op, _grouped_gemm_out, mutated=(2,),
           learn=kept_launch_learner(_gemm_out_plan_call, _GEMM_OUT_POSITIONS))


def call_grouped_gemm(a, b, *, out=None, out_dtype=None, accumulate=False, **kwargs):
    """ggc.ops.grouped_gemm through its custom op (the functional one when
    it allocates the output; accumulating needs an `out`)."""
    if out is None:
        return torch.ops.ggc.grouped_gemm(a, b, out_dtype=out_dtype, **kwargs)
    torch.ops.ggc.grouped_gemm_out(a, b, out, accumulate=accumulate, **kwargs)
    return out


lean_eager(grouped_gemm_op, _grouped_gemm,
           formula=(gemm_gradients.setup_context, gemm_gradients.backward),
           learn=kept_launch_learner(_gemm_plan_call, _GEMM_POSITIONS),
           gradient_ops=gemm_gradients.gradient_ops)


grouped_gemm_op.register_autograd(gemm_gradients.backward,
                                  setup_context=gemm_gradients.setup_context)

# ---------------------------------------------------------------------------
# @ggc.jit kernels
# ---------------------------------------------------------------------------

_jit_ops = {}  # op name -> its JITFunction
_jit_lock = threading.Lock()


def _encode(value) -> str:
    # Constexprs (int, float, bool, str or None) travel as their repr, one
    # schema for every value a parameter takes.
    return repr(value)


def _decode(text: str):
    try:
        return ast.literal_eval(text)
    except ValueError:  # nan, inf
        return float(text)


def jit_op(fn):
    """The custom op of the @ggc.jit kernel `fn` (torch.ops.ggc.jit_...),
    registered on first use."""
    return getattr(torch.ops.ggc, _jit_op_name(fn._op_key))


@torch._dynamo.assume_constant_result
def _jit_op_name(key: int) -> str:
    # torch.compile runs this while tracing and keeps the name; it takes the
    # kernel's key, a constant, since torch 2.11 takes no other object here.
    fn = _jit_functions[key]
    return fn._torch_op or _register_jit_op(fn)


def _register_jit_op(fn) -> str:
    qualified = f"{fn.fn.__module__}.{fn.fn.__qualname__}"
    base = (f"jit_{re.sub(r'[^0-9A-Za-z_]', '_', fn.__name__)}_"
            f"{hashlib.sha1(qualified.encode()).hexdigest()[:8]}")
    with _jit_lock:
        if fn._torch_op is not None:
            return fn._torch_op
        name, n = base, 1
        while name in _jit_ops:  # two kernels of one qualified name
            n += 1
            name = f"{base}_{n}"
        # The kernel writes out and, quantising it, its scales.
        mutated = [p for p in fn.tensor_params
                   if fn.signature.parameters[p].annotation in (gl.Out, gl.OutScale)]
        params = [f"Tensor({chr(97 + mutated.index(p))}!) {p}" if p in mutated
                  else f"Tensor {p}" for p in fn.tensor_params]
        params += [f"str {c}" for c in fn.constexprs] + ["str? ggc_validate"]
        body = _jit_body(fn)
        op = torch.library.custom_op(f"ggc::{name}", body, mutates_args=tuple(mutated),
                                     schema=f"({', '.join(params)}) -> ()", tags=_TAGS)
        op.register_fake(body)
        lean_eager(op, body, mutated=[fn.tensor_params.index(p) for p in mutated])
        _jit_ops[name] = fn
        fn._torch_op = name
    return name


def _jit_body(fn):
    tensor_count = len(fn.tensor_params)

    def body(*args) -> None:
        """Runs the kernel; with fake tensors, checks it instead."""
        tensors = dict(zip(fn.tensor_params, args[:tensor_count]))
        consts = {c: _decode(v) for c, v in zip(fn.constexprs, args[tensor_count:-1])}
        validate = args[-1] if args[-1] in (None, "all_rows") else args[-1] == "True"
        with _op_body():
            fn._run(tensors, consts, None, validate)
    return body


def call_jit(fn, tensors, consts, stream, validate) -> None:
    """A @ggc.jit call through its custom op."""
    if stream is not None:
        raise ValueError(f"{fn.__name__}: stream= is not traced by torch.compile; run it "
                         f"under torch.cuda.stream(...) instead")
    jit_op(fn)(*[tensors[p] for p in fn.tensor_params],
               *[_encode(consts[c]) for c in fn.constexprs],
               None if validate is None else str(validate))


# ---------------------------------------------------------------------------
# Fake tensors: a launch's checks that need no data
# ---------------------------------------------------------------------------

def _hint(size) -> int:
    """A size's value as traced; a symbolic one is not guarded on (the
    kernel leaves the token count dynamic; data-dependent sizes read 1)."""
    if isinstance(size, int):
        return size
    hint = getattr(size.node, "hint", None)
    return hint if isinstance(hint, int) else 1


def check_without_data(fn, tensors, consts) -> None:
    """Traces and compiles `fn`'s specialisation as a call would (the same
    IR: sizes that follow the token count stay dynamic, so the real call
    finds it cached), then holds the tensors to the kernel's contract."""
    hinted = {}
    for name, t in tensors.items():
        dtype = _rt._TORCH_DTYPES.get(str(t.dtype))
        if dtype is None:
            raise TypeError(f"argument '{name}' has dtype {t.dtype}, which ggc does not take")
        hinted[name] = spec([_hint(d) for d in t.shape], dtype)
    _, fn_spec = fn._trace(hinted, consts)
    shapes = {arg.name: arg.shape for arg in fn_spec.args}
    placeholders = {n: spec(shapes[n], hinted[n].dtype) for n in tensors}
    kernel = fn._kernel(placeholders, consts)
    _check_contract(kernel, [tensors[n] for n in fn.tensor_params])


def _check_contract(kernel, tensors) -> None:
    """runtime.Kernel's checks of a launch, on fake tensors."""
    kernel.check_described([_rt.describe_fake(i, kernel._roles[i], t)
                            for i, t in enumerate(tensors)])


# How @ggc.jit calls reach the code above (jit.py imports no torch; the
# package's `jit` is the decorator, hence sys.modules).
sys.modules[f"{__package__}.jit"]._torch_ops = sys.modules[__name__]
sys.modules[f"{__package__}.ops"]._torch_ops = sys.modules[__name__]

# ---------------------------------------------------------------------------
# grouped_mm(x, w, offsets): bf16/f16 contiguous groups, with autograd
# ---------------------------------------------------------------------------


def _check(x: torch.Tensor, w: torch.Tensor, offsets: torch.Tensor) -> None:
    if x.dim() != 2 or w.dim() != 3:
        raise ValueError(f"grouped_mm takes x [M, K] and w [G, N, K]; got x "
                         f"{list(x.shape)} and w {list(w.shape)}")
    if x.shape[1] != w.shape[2]:
        raise ValueError(f"x has K = {x.shape[1]} but w has K = {w.shape[2]}")
    if min(w.shape) < 1:  # the compiler's verifier would say it later, less plainly
        raise ValueError(f"grouped_mm needs w [G, N, K] with G, N and K at least 1, got "
                         f"{list(w.shape)}")
    if offsets.dim() != 1 or offsets.shape[0] != w.shape[0] + 1:
        raise ValueError(f"offsets must be [G+1] = [{w.shape[0] + 1}], got "
                         f"{list(offsets.shape)}")
    if x.dtype != w.dtype or x.dtype not in (torch.bfloat16, torch.float16):
        raise TypeError(f"grouped_mm takes bf16 or f16 x and w of one dtype; got "
                        f"{x.dtype} and {w.dtype}")
    if offsets.dtype not in (torch.int32, torch.int64):
        raise TypeError(f"offsets must be int32 or int64, got {offsets.dtype}")
    # The kernel's rules, checked here too so that the fake implementation
    # rejects what the real op would (the compiler's verifier says the same).
    for name, size in (("K", x.shape[1]), ("N", w.shape[1])):
        if size % 8:
            raise ValueError(f"grouped_mm needs {name} a multiple of 8 (rows of a multiple "
                             f"of 16 bytes for TMA), got {name} = {size}")
    if x.shape[0] > _rt.MAX_SIZE:
        raise ValueError(f"x has {x.shape[0]} rows; the kernel's 32-bit indices hold at "
                         f"most {_rt.MAX_SIZE}")
    devices = {x.device, w.device, offsets.device}
    if len(devices) != 1:
        raise ValueError(f"x, w and offsets must be on one device, got "
                         f"{sorted(map(str, devices))}")


_MM_CHECKED = {}  # signatures of (x, w, offsets) that passed _check -> all contiguous


def _mm_checked(x: Tensor, w: Tensor, offsets: Tensor) -> bool:
    """_check, once per signature (ggc.signature of the three: all it
    reads); whether all three are contiguous."""
    try:
        key = _signature.of((x, w, offsets))
        contiguous = None if key is None else _MM_CHECKED.get(key)
    except TypeError:  # symbolic sizes
        key = contiguous = None
    if contiguous is None:
        _check(x, w, offsets)
        contiguous = x.is_contiguous() and w.is_contiguous() and offsets.is_contiguous()
        if key is not None:
            if len(_MM_CHECKED) >= 512:
                _MM_CHECKED.clear()
            _MM_CHECKED[key] = contiguous
    return contiguous


# The training ops' calls of grouped_gemm as its plans know them: its
# tensors in order (None for the seven a call leaves out) and options.
_LEFT_OUT = (None,) * 7


def _launch_remembered(tensors, options, checked=None, validate=None):
    """The output of a call whose launch grouped_gemm keeps (ops.remembered),
    run straight from it; None when it keeps none, when `validate` asks for
    the full path, or (`checked`) when the op's own checks have not yet
    passed for this key."""
    key, plan = remembered(tensors, options, validate)
    if plan is None or (checked is not None and key not in checked):
        return None
    return plan.run(tensors)


def _mark_checked(checked, tensors, options) -> None:
    """Records that the op's checks passed for the call's key, once
    grouped_gemm keeps its launch."""
    key, plan = remembered(tensors, options)
    if plan is not None:
        if len(checked) >= 512:
            checked.clear()
        checked.add(key)


_MM_PLANS_CHECKED = set()  # plan keys of grouped_mm calls that passed _check


def _mm_plan_call(x, w, offsets):
    return (x, w, offsets, *_LEFT_OUT), plan_options(out_dtype=x.dtype), None


def _mm_grad_x_plan_call(grad_y, w, offsets):
    # w [G, N, K] read as the "kn" form of a product over N; zero_ungrouped:
    # below.
    return ((grad_y, w, offsets, *_LEFT_OUT),
            plan_options(out_dtype=grad_y.dtype, b_layout="kn", zero_ungrouped=True), None)


def _mm_grad_w_plan_call(grad_y, x, offsets):
    return ((grad_y, x, None, None, None, offsets, *_LEFT_OUT[:4]),
            plan_options(out_dtype=x.dtype), None)


def _grouped_mm(x: torch.Tensor, w: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
    """y[rows of g] = x[rows of g] @ w[g]^T for contiguous groups."""
    tensors, options, _ = _mm_plan_call(x, w, offsets)
    out = _launch_remembered(tensors, options, _MM_PLANS_CHECKED)
    if out is not None:
        return out
    if not _mm_checked(x, w, offsets):
        x, w, offsets = x.contiguous(), w.contiguous(), offsets.contiguous()
    with _op_body():
        out = grouped_gemm(x, w, offsets=offsets, out_dtype=x.dtype)
    _mark_checked(_MM_PLANS_CHECKED, tensors, options)
    return out


grouped_mm = torch.library.custom_op("ggc::grouped_mm", _grouped_mm, mutates_args=())


@grouped_mm.register_fake
def _(x, w, offsets):
    _check(x, w, offsets)
    return x.new_empty(x.shape[0], w.shape[1])


def _grouped_mm_grad_x(grad_y: torch.Tensor, w: torch.Tensor,
                       offsets: torch.Tensor) -> torch.Tensor:
    # Rows of x outside every group took no part in the forward: the kernel
    # writes zeros to them (zero_ungrouped; where the groups end is on the
    # device), so every row is written and the launch allocates the
    # output, as the forward's does.
    tensors, options, _ = _mm_grad_x_plan_call(grad_y, w, offsets)
    out = _launch_remembered(tensors, options)
    if out is not None:
        return out
    with _op_body():  # offsets as the forward took them: a strided view is copied
        return grouped_gemm(grad_y.contiguous(), w.contiguous(), offsets=offsets.contiguous(),
                            b_layout="kn", out_dtype=grad_y.dtype, zero_ungrouped=True)


grouped_mm_grad_x = torch.library.custom_op("ggc::grouped_mm_grad_x", _grouped_mm_grad_x,
                                            mutates_args=())
# (x or grad_y, w or x, offsets: the three slots the grouped_mm ops take)
_MM_POSITIONS = {0: 0, 1: 1, 2: 2}
lean_eager(grouped_mm_grad_x, _grouped_mm_grad_x,
           learn=kept_launch_learner(_mm_grad_x_plan_call, _MM_POSITIONS))


@grouped_mm_grad_x.register_fake
def _(grad_y, w, offsets):
    return grad_y.new_empty(grad_y.shape[0], w.shape[2])


def _grouped_mm_grad_w(grad_y: torch.Tensor, x: torch.Tensor,
                       offsets: torch.Tensor) -> torch.Tensor:
    # The tokens are the reduction: grad_y [T, N] and x [T, K] token-major.
    # Written in the weight's dtype (x's) by the kernel: no pass to cast it.
    out = _launch_remembered(*_mm_grad_w_plan_call(grad_y, x, offsets)[:2])
    if out is not None:
        return out
    with _op_body():
        return grouped_gemm(grad_y.contiguous(), x.contiguous(), k_offsets=offsets.contiguous(),
                            out_dtype=x.dtype)


grouped_mm_grad_w = torch.library.custom_op("ggc::grouped_mm_grad_w", _grouped_mm_grad_w,
                                            mutates_args=())
lean_eager(grouped_mm_grad_w, _grouped_mm_grad_w,
           learn=kept_launch_learner(_mm_grad_w_plan_call, {0: 0, 1: 1, 5: 2}))


@grouped_mm_grad_w.register_fake
def _(grad_y, x, offsets):
    return x.new_empty(offsets.shape[0] - 1, grad_y.shape[1], x.shape[1])


def _mm_setup_context(ctx, inputs, output):
    x, w, offsets = inputs
    ctx.save_for_backward(x, w, offsets)


# _mm_backward's two calls, every call's, for the C++ kernels' autograd node
_MM_GRADIENT_OPS = ((0, "ggc::grouped_mm_grad_x", (-1, 1, 2)),
                    (1, "ggc::grouped_mm_grad_w", (-1, 0, 2)))


def _mm_backward(ctx, grad_y):
    x, w, offsets = ctx.saved_tensors
    grad_x = grad_w = None
    if ctx.needs_input_grad[0]:
        grad_x = grouped_mm_grad_x(grad_y, w, offsets)
    if ctx.needs_input_grad[1]:
        grad_w = grouped_mm_grad_w(grad_y, x, offsets)
    return grad_x, grad_w, None


grouped_mm.register_autograd(_mm_backward, setup_context=_mm_setup_context)


lean_eager(grouped_mm, _grouped_mm, formula=(_mm_setup_context, _mm_backward),
           learn=kept_launch_learner(_mm_plan_call, _MM_POSITIONS, lambda: _MM_PLANS_CHECKED),
           gradient_ops=lambda *args: _MM_GRADIENT_OPS)
