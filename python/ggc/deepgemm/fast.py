"""The drop-ins' fast path: a call whose signature launched before runs
ggc.ops' remembered launch of it again, without the checks and the
translation (they read the signature alone). DeepGEMM spends 11 to 25 us
of host time a call; docs/performance.md has ggc's beside it."""

from __future__ import annotations

from .. import compiler as _compiler
from .. import groups as _groups
from .. import signature as _signature
from .. import ops

# A drop-in call's signature -> (ggc.ops' plan of its launch, the tensors
# the translation made once for it: the span of a dense call, and what
# each call does to its own tensors first: a copy of scales, say).
_LAUNCHES = {}
_MAX_LAUNCHES = 256


def fast_key(kind, tensors, c=None):
    """What decides a drop-in call's checks and launch: `kind` (the call and
    its options), the tensors' signature (ggc.signature) and the target;
    None where every call takes the full path (an accumulating c,
    validation, tracing)."""
    bridge = ops._torch_ops
    if c is not None or _groups.VALIDATE_BY_DEFAULT or bridge is None or bridge.tracing():
        return None
    tensors_key = _signature.of(tensors)
    if tensors_key is None:
        return None
    return (kind, _compiler.plan_settings(), tensors_key)


def remember(key, call, options, prepare=None) -> None:
    """After a full call: keeps ggc.ops' plan of its launch, `call` being
    grouped_gemm's ten tensor slots as the drop-in passed them and
    `options` its options, as ops.plan_options makes them. `prepare`, when
    given, makes each later call's slots from the call's own tensors (the
    translation's per-call work, which the signature alone cannot do)."""
    plan = ops._PLANS.get(ops._plan_key(call, options, None))
    if plan is not None and _hashable(key):
        if len(_LAUNCHES) >= _MAX_LAUNCHES:
            _LAUNCHES.clear()
        _LAUNCHES[key] = (plan, call[2], prepare)


def launched(key, call) -> bool:
    """Launches a call of a remembered signature; `call` holds the call's
    own tensors in grouped_gemm's slots (a view the translation would make,
    b.unsqueeze(0) say, may be the tensor itself: the plan reads addresses
    only; slot 2 is filled from the memory). False when none is kept."""
    try:
        entry = _LAUNCHES.get(key) if key is not None else None
    except TypeError:  # a recipe given as a list (DeepGEMM takes any sequence): no fast path
        return False
    if entry is None:
        return False
    plan, offsets, prepare = entry
    if offsets is not None:
        call = call[:2] + (offsets,) + call[3:]
    if prepare is not None:
        call = prepare(call)
    return plan.run(call) is not None


def _hashable(key) -> bool:
    try:
        hash(key)
        return True
    except TypeError:
        return False
