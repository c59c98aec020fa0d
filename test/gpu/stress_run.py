"""The random-stress suite's inputs, fp64 reference, checks and runner.

Per case: fresh random data, a poisoned output (guard rows before and
after), one launch, an fp64 reference and a check that stays on the
device: each valid row's relative norm error, and whether any row no group
owns lost its poison bit pattern. Results of a batch of cases (one spec)
come back in one transfer, so host syncs do not dominate. Works on any
torch device: on the CPU with a stand-in for the kernel (the unit tests).
"""

from __future__ import annotations

import math
import os
import re
import time
from dataclasses import dataclass, field
from typing import Callable, Dict, List, Optional

import torch

from gpu_checks import refusal
from stress_cases import (EPILOGUES, GUARD_ROWS, POISON, SPECS, SUBNORMAL_STEP, TORCH_DTYPES,
                          CasePlan, Spec, build, plan_case)


def upload(host: Dict[str, torch.Tensor], device) -> Dict[str, torch.Tensor]:
    """All of a case's integer tensors in one pinned, asynchronous copy
    (a plain .to(device) of each would synchronise the stream each time);
    every tensor starts on a 16-byte boundary, as TMA and the kernel want."""
    device = torch.device(device)
    if device.type == "cpu":
        return dict(host)
    starts, total = {}, 0
    for name, t in host.items():
        starts[name] = total
        total += -(-t.numel() * t.element_size() // 16) * 16
    staging = torch.empty(max(total, 16), dtype=torch.uint8).pin_memory()
    for name, t in host.items():
        nbytes = t.numel() * t.element_size()
        staging[starts[name]:starts[name] + nbytes] = t.contiguous().view(torch.uint8)
    packed = staging.to(device, non_blocking=True)
    return {name: packed[starts[name]:starts[name] + t.numel() * t.element_size()].view(t.dtype)
            for name, t in host.items()}


@dataclass
class Inputs:
    args: List[torch.Tensor]      # in the kernel's order
    buf: torch.Tensor             # the output with its guard rows, 2-D, poisoned
    a: torch.Tensor
    b: torch.Tensor
    a_scale: Optional[torch.Tensor] = None   # as drawn (MX: exponents, not words)
    b_scale: Optional[torch.Tensor] = None
    row: Optional[torch.Tensor] = None
    col: Optional[torch.Tensor] = None
    scalar: Optional[torch.Tensor] = None


def _data(gen, dtype: str, *shape, device):
    x = torch.randn(*shape, generator=gen, device=device)
    # Products stay well inside bf16/f16 range; f8 as test_fp8.py draws it.
    return (x * 2 if dtype == "f8" else x / 4).to(TORCH_DTYPES[dtype])


def _positive(gen, *shape, device):
    return torch.rand(*shape, generator=gen, device=device) + 0.5


def pack_ue8m0(exponents: torch.Tensor) -> torch.Tensor:
    """Four UE8M0 exponents per int32 along the last dimension, byte 0 first."""
    *lead, blocks = exponents.shape
    padded = torch.zeros(*lead, -(-blocks // 4) * 4, dtype=torch.uint8,
                         device=exponents.device)
    padded[..., :blocks] = exponents
    return padded.view(torch.int32)


def _scale(gen, kind: Optional[str], shape_of: Dict[str, list], k: int, device):
    """(argument, as drawn) for one side's scale kind; MX draws exponents
    (2^-7 .. 2^7) and passes them packed."""
    if kind is None:
        return None, None
    if kind.startswith("mx"):
        blocks = -(-k // int(kind[2:]))
        e = torch.randint(120, 135, (*shape_of["mx"], blocks), dtype=torch.uint8,
                          generator=gen, device=device)
        return pack_ue8m0(e), e
    s = _positive(gen, *shape_of[kind], device=device)
    return s, s


def _a_scale_shapes(spec: Spec, rows: int) -> Dict[str, list]:
    g, k = spec.groups, spec.k if spec.k is not None else rows
    kb = -(-k // 128)
    if spec.layout == "masked":
        m = spec.m
        return {"tensor": [g], "channel": [g, m], "block": [g, m, kb],
                "block_mn": [g, kb, (m + 3) // 4 * 4], "mx": [g, m]}
    if spec.layout == "k_grouped":
        m = spec.m
        return {"tensor": [g], "channel": [m], "block": [m, kb], "block_mn": [kb, m], "mx": [m]}
    mx_rows = (rows + 3 * g) // 4 * 4 if spec.layout == "contiguous" else rows
    return {"tensor": [g], "channel": [rows], "block": [rows, kb],
            "block_mn": [kb, (rows + 3) // 4 * 4], "mx": [mx_rows]}


def _b_scale_shapes(spec: Spec, k: int) -> Dict[str, list]:
    n, kb, nb = spec.n, -(-k // 128), -(-spec.n // 128)
    lead = [] if spec.layout == "k_grouped" else [spec.groups]
    return {"tensor": [spec.groups], "channel": lead + [n], "block": lead + [nb, kb],
            "block_mn": lead + [kb, nb], "block1x128": lead + [n, kb],
            "block1x128_mn": lead + [kb, n], "mx": lead + [n]}


def make_inputs(spec: Spec, plan: CasePlan, maps: Dict[str, torch.Tensor], gen,
                device) -> Inputs:
    g, n = spec.groups, spec.n
    if spec.layout == "k_grouped":  # operands over the tokens: [M|N, K] or [K, M|N]
        k = plan.rows
        if spec.b_layout == "nk":
            a, b = _data(gen, spec.dtype, spec.m, k, device=device), \
                _data(gen, spec.dtype, n, k, device=device)
        else:
            a, b = _data(gen, spec.dtype, k, spec.m, device=device), \
                _data(gen, spec.dtype, k, n, device=device)
        row_shape = [spec.m]
    else:
        k = spec.k
        a_shape = [g, spec.m, k] if spec.layout == "masked" else [plan.rows, k]
        a = _data(gen, spec.dtype, *a_shape, device=device)
        b = _data(gen, spec.dtype, *([g, n, k] if spec.b_layout == "nk" else [g, k, n]),
                  device=device)
        row_shape = a_shape[:-1]
    sa, sa_drawn = _scale(gen, spec.a_scale, _a_scale_shapes(spec, plan.rows), k, device)
    sb, sb_drawn = _scale(gen, spec.b_scale, _b_scale_shapes(spec, k), k, device)
    epi = EPILOGUES[spec.epilogue]
    row = (_positive(gen, *row_shape, device=device).to(TORCH_DTYPES[epi.rows[0]])
           if epi.rows else None)
    col = (torch.randn(*([n] if epi.col == "n" else [g, n]), generator=gen, device=device)
           if epi.col else None)
    scalar = _positive(gen, g, device=device) if epi.scalar else None
    buf, out = _poisoned_output(spec, plan, device)
    args = [a, b, maps["groups"]] + [t for t in (sa, sb, row, col, scalar, out)
                                      if t is not None]
    return Inputs(args, buf, a, b, sa_drawn, sb_drawn, row, col, scalar)


def _poisoned_output(spec: Spec, plan: CasePlan, device):
    """The output as a view into a buffer with guard rows on both sides,
    all of it holding the poison bit pattern."""
    cols = spec.m if spec.out_layout == "nm" else spec.n
    int_type, pattern = POISON[spec.out_dtype]
    buf = torch.empty(plan.out_rows + 2 * GUARD_ROWS, cols,
                      dtype=TORCH_DTYPES[spec.out_dtype], device=device)
    buf.view(int_type).fill_(pattern)
    out = buf[GUARD_ROWS:GUARD_ROWS + plan.out_rows]
    if spec.layout == "masked":
        out = out.view(spec.groups, spec.m, cols)
    elif spec.layout == "k_grouped":
        out = out.view(spec.groups, -1, cols)
    return buf, out


# ---------------------------------------------------------------------------
# The fp64 reference
# ---------------------------------------------------------------------------

def _per_k(s: torch.Tensor, k: int, block: int = 128) -> torch.Tensor:
    """A factor per K block, expanded to every K (last dimension)."""
    return s.double().repeat_interleave(block, dim=-1)[..., :k]


def _ue8m0(e: torch.Tensor) -> torch.Tensor:
    return torch.exp2(e.double() - 127)


def _a_factor(kind, s, k, rows=None, gid=None, scale_rows=None, m=None):
    """A's scale as a factor of its rows ([.., rows, K] or [.., rows, 1]).
    `rows` picks rows of an [M, ..] scale (contiguous, padded), `gid` gives
    their groups (per-tensor scales), `scale_rows` their MX scale rows
    (contiguous); without `rows`, every row is kept (the first `m` of the
    4-aligned M-major storage)."""
    if kind is None:
        return 1.0
    if kind == "tensor":
        return s.double()[gid][:, None] if gid is not None else s.double()[:, None, None]
    if kind == "block_mn":  # stored [.., K blocks, rows padded to 4]
        s = s.transpose(-1, -2)
        s = s if rows is not None else s[..., :m, :]
    if scale_rows is not None and kind.startswith("mx"):
        s, rows = s[scale_rows], None
    if rows is not None:
        s = s[rows]
    if kind == "channel":
        return s.double()[..., None]
    if kind.startswith("mx"):
        return _ue8m0(s).repeat_interleave(int(kind[2:]), dim=-1)[..., :k]
    return _per_k(s, k)  # block, block_mn: 1x128


def _b_factor(kind, s, n, k):
    """B's scale as a factor of [.., N, K] (a group's N x K block grid)."""
    if kind is None:
        return 1.0
    if kind == "tensor":
        return s.double()[:, None, None]
    if kind == "channel":
        return s.double()[..., None]
    if kind in ("block", "block_mn"):
        grid = s if kind == "block" else s.transpose(-1, -2)
        return _per_k(grid, k).repeat_interleave(128, dim=-2)[..., :n, :]
    if kind in ("block1x128", "block1x128_mn"):
        return _per_k(s if kind == "block1x128" else s.transpose(-1, -2), k)
    return _ue8m0(s).repeat_interleave(int(kind[2:]), dim=-1)[..., :k]


def reference(spec: Spec, plan: CasePlan, maps, inp: Inputs) -> torch.Tensor:
    """fp64 rows of the expected output, [out_rows, C] (zero where no group
    owns the row), epilogue included."""
    gid = maps["gid"][GUARD_ROWS:GUARD_ROWS + plan.out_rows]
    if spec.layout == "k_grouped":
        acc = _reference_k_grouped(spec, plan, maps, inp)
    elif spec.layout == "masked":
        a = inp.a.double() * _a_factor(spec.a_scale, inp.a_scale, spec.k, m=spec.m)
        acc = (a @ _weights(spec, inp).transpose(1, 2)).reshape(plan.out_rows, spec.n)
    else:
        acc = _reference_rows(spec, plan, maps, inp, gid)
    return _epilogue_reference(spec, plan, inp, acc, gid)


def _weights(spec: Spec, inp: Inputs) -> torch.Tensor:
    b = inp.b if spec.b_layout == "nk" else inp.b.transpose(1, 2)
    return b.double() * _b_factor(spec.b_scale, inp.b_scale, spec.n, spec.k)


def _reference_rows(spec, plan, maps, inp, gid):
    """Contiguous and padded: rows of a group are consecutive; scatter them
    into a [G, longest, K] batch, multiply, gather back."""
    valid, slot = maps["valid"], maps["slot"]
    gid_v = gid[valid]
    a = inp.a[valid].double() * _a_factor(spec.a_scale, inp.a_scale, spec.k, rows=valid,
                                          gid=gid_v, scale_rows=maps.get("scale_row"))
    batch = torch.zeros(spec.groups, plan.longest, spec.k, dtype=torch.float64,
                        device=a.device)
    batch[gid_v, slot] = a
    product = batch @ _weights(spec, inp).transpose(1, 2)
    acc = torch.zeros(plan.out_rows, spec.n, dtype=torch.float64, device=a.device)
    acc[valid] = product[gid_v, slot]
    return acc


def _reference_k_grouped(spec, plan, maps, inp):
    """dW[g] = A[:, tokens of g] @ B[:, tokens of g]^T, as one batched
    product with each group's tokens masked in."""
    k, g = plan.rows, spec.groups
    a = inp.a if spec.b_layout == "nk" else inp.a.T
    b = inp.b if spec.b_layout == "nk" else inp.b.T
    group_factor = torch.ones(g, dtype=torch.float64, device=a.device)
    for kind, s in ((spec.a_scale, inp.a_scale), (spec.b_scale, inp.b_scale)):
        if kind == "tensor":
            group_factor = group_factor * s.double()
    a = a.double() * (1.0 if spec.a_scale == "tensor" else _a_factor(spec.a_scale, inp.a_scale, k))
    b = b.double() * (1.0 if spec.b_scale == "tensor"
                      else _b_factor(spec.b_scale, inp.b_scale, spec.n, k))
    mask = maps["token_gid"][None, :] == torch.arange(g, device=a.device)[:, None]
    acc = (a[None] * mask[:, None, :]) @ b.T * group_factor[:, None, None]  # [G, M, N]
    if spec.out_layout == "nm":
        acc = acc.transpose(1, 2)
    return acc.reshape(plan.out_rows, -1)


def _epilogue_reference(spec, plan, inp, acc, gid):
    epi = EPILOGUES[spec.epilogue]
    if spec.epilogue == "none":
        return acc
    group = gid.clamp_min(0)
    row = None
    if inp.row is not None:
        row = inp.row.double().reshape(-1)
        if spec.layout == "k_grouped":  # [M], the same for every group
            row = row.repeat(spec.groups)
        row = row[:, None]
    col = None
    if inp.col is not None:
        col = inp.col.double()[None, :] if epi.col == "n" else inp.col.double()[group]
    scalar = inp.scalar.double()[group][:, None] if inp.scalar is not None else None
    return epi.ref(acc, row, col, scalar, group.double()[:, None])


# ---------------------------------------------------------------------------
# The check, on the device
# ---------------------------------------------------------------------------

def check(spec: Spec, buf: torch.Tensor, ref: torch.Tensor, gid_buf: torch.Tensor):
    """[worst row error, poison lost (0/1), worst row] as one f64 tensor,
    without a host sync. A valid row's error is ||out - ref|| / ||ref||
    (inf where it is not finite, or where ref is zero and out is not);
    rows no group owns, guards included, must keep the poison bit-exactly."""
    rows = ref.shape[0]
    out = buf[GUARD_ROWS:GUARD_ROWS + rows].double()
    gid = gid_buf[GUARD_ROWS:GUARD_ROWS + rows]
    # Less the subnormal rounding allowance (SUBNORMAL_STEP), then relative.
    subnormal = math.sqrt(ref.shape[1]) * SUBNORMAL_STEP[spec.out_dtype] / 2
    diff = ((out - ref).square().sum(1).sqrt() - subnormal).clamp_min(0)
    norm = ref.square().sum(1).sqrt()
    inf = torch.tensor(math.inf, dtype=torch.float64, device=ref.device)
    err = torch.where(norm > 0, diff / norm.clamp_min(1e-300),
                      torch.where(diff == 0, torch.zeros_like(diff), inf))
    err = torch.where(torch.isnan(err), inf, err)
    err = torch.where(gid >= 0, err, torch.zeros_like(err))
    int_type, pattern = POISON[spec.out_dtype]
    lost = ((buf.view(int_type) != pattern).any(1) & (gid_buf < 0)).any()
    if rows == 0:
        worst, where = torch.zeros((), dtype=torch.float64, device=ref.device), 0 * lost
    else:
        worst, where = err.max(0)
    return torch.stack([worst, lost.double(), where.double()])


def run_case(spec: Spec, plan: CasePlan, launch: Callable, device, gen=None):
    """Draws, launches, checks one case; returns check()'s device tensor."""
    maps = upload(plan.host, device)
    if gen is None:
        gen = torch.Generator(device=device)
    gen.manual_seed(plan.seed)
    inp = make_inputs(spec, plan, maps, gen, device)
    launch(*inp.args)
    return check(spec, inp.buf, reference(spec, plan, maps, inp), maps["gid"])


# ---------------------------------------------------------------------------
# The runner
# ---------------------------------------------------------------------------

@dataclass
class SpecResult:
    spec: Spec
    cases: int = 0
    worst: float = 0.0
    compile_s: float = 0.0
    failures: List[str] = field(default_factory=list)
    refused: Optional[str] = None  # the target's refusal of the spec's kernel, by name


@dataclass
class Summary:
    seed: int
    results: List[SpecResult]
    wall_s: float = 0.0
    error: Optional[str] = None   # an exception that stopped the run

    @property
    def cases(self) -> int:
        return sum(r.cases for r in self.results)

    @property
    def failures(self) -> List[str]:
        return [f for r in self.results for f in r.failures] + ([self.error] if self.error else [])

    def lines(self, closest: Optional[int] = None) -> List[str]:
        """The summary; with `closest`, only that many specs, those nearest
        their tolerance."""
        by_family: Dict[str, int] = {}
        for r in self.results:
            key = f"{r.spec.layout}/{r.spec.dtype}"
            by_family[key] = by_family.get(key, 0) + r.cases
        compile_s = sum(r.compile_s for r in self.results)
        reached = sum(1 for r in self.results if r.cases)
        out = [f"ggc stress: seed {self.seed}: {self.cases} cases, {reached}/{len(self.results)}"
               f" specs, {len(self.failures)} failures, {self.wall_s:.1f} s wall "
               f"({compile_s:.1f} s compiling)",
               "cases by layout/dtype: " + ", ".join(f"{k} {v}" for k, v in by_family.items())]
        shown = self.results if closest is None else sorted(
            self.results, key=lambda r: -r.worst / r.spec.tolerance)[:closest]
        for r in shown:
            out.append(f"  {r.spec.name:28s} {r.spec.family:38s} {r.cases:5d} cases  worst "
                       f"{r.worst:.2e} (tol {r.spec.tolerance:.1e})  compile {r.compile_s:.1f} s")
        out += [f"NOT RUN {r.spec.name}: {r.refused}" for r in self.results if r.refused]
        return out + [f"FAIL {f}" for f in self.failures[:50]]


def _record(result: SpecResult, plans: List[CasePlan], values: torch.Tensor, seed: int):
    spec = result.spec
    for plan, (worst, lost, row) in zip(plans, values.tolist()):
        result.cases += 1
        result.worst = max(result.worst, worst)
        if worst > spec.tolerance or lost:
            gid = int(plan.host["gid"][GUARD_ROWS + int(row)]) if plan.out_rows else -1
            result.failures.append(
                f"{spec.name} case {plan.index}: "
                + (f"row {int(row)} (group {gid}) rel err {worst:.2e} > {spec.tolerance:.1e}"
                   if worst > spec.tolerance else "")
                + (" rows outside every group were written" if lost else "")
                + f"; sizes {plan.sizes}; rerun: GGC_STRESS_SEED={seed} "
                  f"GGC_STRESS_SPECS='^{spec.name}$'")


def run_stress(target: int, budget_s: float, seed: int, device="cuda",
               specs: Optional[List[Spec]] = None, batch: int = 64,
               log: Callable[[str], None] = print, cap: Optional[int] = None) -> Summary:
    """Round-robin over the specs, a batch of cases each per round, until
    every spec has run its share of `target` or `budget_s` is spent (first
    round included, compiles included): a short budget still reaches every
    spec before any runs twice."""
    specs = specs if specs is not None else SPECS
    per_spec = -(-target // max(1, len(specs)))
    batch = max(1, min(batch, per_spec))
    results = [SpecResult(s) for s in specs]
    launches: Dict[str, Callable] = {}
    summary = Summary(seed, results)
    start = time.monotonic()
    gen = torch.Generator(device=device)
    try:
        for first in range(0, per_spec, batch):
            for result in results:
                if time.monotonic() - start > budget_s:
                    raise TimeoutError
                if result.refused:
                    continue
                spec = result.spec
                plans = [plan_case(spec, seed, i, cap)
                         for i in range(first, min(per_spec, first + batch))]
                if spec.name not in launches:
                    t0 = time.monotonic()
                    example = make_inputs(spec, plans[0], upload(plans[0].host, device), gen,
                                          device).args
                    try:
                        launches[spec.name] = build(spec, example)[1]
                    except Exception as e:  # noqa: BLE001 - a refusal by target is no failure
                        result.refused = refusal(e)
                        if result.refused is None:
                            raise
                        log(f"ggc stress: {spec.name} not run: {result.refused}")
                        continue
                    result.compile_s = time.monotonic() - t0
                values = torch.stack([run_case(spec, p, launches[spec.name], device, gen)
                                      for p in plans]).cpu()  # one sync per batch
                _record(result, plans, values, seed)
            log(f"ggc stress: {summary.cases} cases after {time.monotonic() - start:.0f} s")
    except TimeoutError:
        log(f"ggc stress: time budget of {budget_s:.0f} s spent")
    except Exception as e:  # a CUDA error is sticky: stop and say where
        summary.error = f"{result.spec.name}: {type(e).__name__}: {e}"
    summary.wall_s = time.monotonic() - start
    return summary


def settings(default_cases: int, default_seconds: float) -> dict:
    """The run's settings from the environment (GGC_STRESS_*)."""
    pattern = os.environ.get("GGC_STRESS_SPECS")
    return dict(target=int(os.environ.get("GGC_STRESS_CASES", default_cases)),
                budget_s=float(os.environ.get("GGC_STRESS_SECONDS", default_seconds)),
                seed=int(os.environ.get("GGC_STRESS_SEED", 20250601)),
                specs=[s for s in SPECS if not pattern or re.search(pattern, s.name)])


def worst_row_error(out, ref):
    """The largest ||out - ref|| / ||ref|| over rows some group owns (ref
    NaN on the others, which must still hold out's NaN poison); a row
    whose reference is zero must be exactly zero."""
    out, ref = out.double().reshape(-1, out.shape[-1]), ref.reshape(-1, ref.shape[-1])
    owned = ~torch.isnan(ref).any(1)
    assert torch.isnan(out[~owned]).all(), "rows no group owns were written"
    diff, norm = (out[owned] - ref[owned]).norm(dim=1), ref[owned].norm(dim=1)
    err = torch.where(norm > 0, diff / norm.clamp_min(1e-300),
                      torch.where(diff == 0, 0.0, math.inf))
    err = torch.where(torch.isnan(err), math.inf, err)  # valid rows left unwritten
    return err.max().item() if err.numel() else 0.0
