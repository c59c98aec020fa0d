"""The GPU stress suite's host logic, on the CPU: case plans, inputs, the
fp64 reference and the checks (test/gpu/stress_*.py).

A stand-in kernel computes every spec the way the real one is meant to
(per group and per K block, f32, scales looked up one block at a time:
independent of the reference's batched formulation); the checks must
pass it and must catch it when it is made wrong. Every spec compiles, and
its arguments match the compiled kernel's launch contract.
"""

import math
import os
import sys

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "gpu"))
import stress_cases as sc  # noqa: E402
import stress_run as sr  # noqa: E402

import ggc  # noqa: E402

SEED = 7
CAP = 300  # rows per case: small, the CPU does the fp64 work


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path / "cache"))


# ---------------------------------------------------------------------------
# A stand-in kernel
# ---------------------------------------------------------------------------

def _unpack(words, block):
    """The UE8M0 exponent of K block `block` from int32 words, as a factor."""
    e = (words[..., block // 4] >> (8 * (block % 4))) & 0xFF
    return torch.exp2(e.float() - 127)


def _a_vec(kind, s, rows, j, g):
    """A's scale of `rows` in K block j (s already taken per group when masked)."""
    if kind is None:
        return torch.ones(len(rows))
    if kind == "tensor":
        return s[g].expand(len(rows))
    if kind == "channel":
        return s[rows]
    if kind == "block":
        return s[rows, j]
    if kind == "block_mn":
        return s[j, rows]
    return _unpack(s[rows], j)


def _b_vec(kind, s, n, j, g):
    cols = torch.arange(n)
    table = {None: lambda: torch.ones(n), "tensor": lambda: s[g].expand(n),
             "channel": lambda: s, "block": lambda: s[cols // 128, j],
             "block_mn": lambda: s[j, cols // 128], "block1x128": lambda: s[:, j],
             "block1x128_mn": lambda: s[j, :], "mx32": lambda: _unpack(s, j),
             "mx128": lambda: _unpack(s, j)}
    return table[kind]()


def _group_work(spec, groups, a, b):
    """Per group: (g, A, the rows of A it owns, its B as [N, K], its token
    range (k_grouped; None: all of K), where its rows go in out)."""
    tokens = None
    for g in range(spec.groups):
        if spec.layout == "k_grouped":
            o = groups.tolist()
            a_km = a if spec.b_layout == "nk" else a.T
            b_nk = b if spec.b_layout == "nk" else b.T
            yield g, a_km, torch.arange(spec.m), b_nk, (o[g], o[g + 1]), g
            continue
        b_g = b[g] if spec.b_layout == "nk" else b[g].T
        if spec.layout == "masked":
            c = max(0, min(int(groups[g]), spec.m))
            yield g, a[g], torch.arange(c), b_g, tokens, (g, slice(0, c))
        elif spec.layout == "contiguous":
            o = groups.tolist()
            rows = torch.arange(o[g], o[g + 1])
            yield g, a, rows, b_g, tokens, rows
        else:
            rows = torch.nonzero(groups == g).flatten()
            yield g, a, rows, b_g, tokens, rows


def fake_kernel(spec, *args, wrong_group=False, drop_last_block=False):
    a, b, groups, *rest = args
    out = rest.pop()
    sa = rest.pop(0) if spec.a_scale else None
    sb = rest.pop(0) if spec.b_scale else None
    epi = sc.EPILOGUES[spec.epilogue]
    row = rest.pop(0) if epi.rows else None
    col = rest.pop(0) if epi.col else None
    scalar = rest.pop(0) if epi.scalar else None
    block = 32 if "mx32" in (spec.a_scale, spec.b_scale) else 128
    k_total = a.shape[-1] if spec.layout != "k_grouped" or spec.b_layout == "nk" else a.shape[0]
    for g, a_rows, rows, b_g, tokens, where in _group_work(spec, groups, a, b):
        if wrong_group and spec.layout != "k_grouped":
            b_g = (b[(g + 1) % spec.groups] if spec.b_layout == "nk"
                   else b[(g + 1) % spec.groups].T)
        lo_k, hi_k = tokens or (0, k_total)
        acc = torch.zeros(len(rows), b_g.shape[0])
        s_a = sa[g] if spec.layout == "masked" and spec.a_scale not in (None, "tensor") else sa
        s_b = (sb[g] if spec.layout != "k_grouped" and spec.b_scale not in (None, "tensor")
               else sb)
        if spec.layout == "contiguous" and spec.a_scale and spec.a_scale.startswith("mx"):
            start = int(groups[g])
            scale_rows = (start + 3 * g) // 4 * 4 + (rows - start)
        else:
            scale_rows = rows
        last = -(-hi_k // block) - 1
        for j in range(lo_k // block, -(-hi_k // block)):
            if drop_last_block and j == last and j > lo_k // block:
                continue
            lo, hi = max(lo_k, j * block), min(hi_k, (j + 1) * block)
            a_part = a_rows[rows][:, lo:hi].float() * _a_vec(spec.a_scale, s_a, scale_rows, j,
                                                             g)[:, None]
            b_part = b_g[:, lo:hi].float() * _b_vec(spec.b_scale, s_b, spec.n, j, g)[:, None]
            acc += a_part @ b_part.T
        acc = _epilogue(spec, epi, acc, g, rows, row, col, scalar)
        _store(spec, out, where, acc)


def _epilogue(spec, epi, acc, g, rows, row, col, scalar):
    r = None
    if row is not None:  # [M] per row; masked [G, M_max]; k_grouped [M], every group
        r = row[g][rows] if spec.layout == "masked" else row if spec.layout == "k_grouped" \
            else row[rows]
        r = r.float()[:, None]
    c = None if col is None else (col if epi.col == "n" else col[g])[None, :].float()
    s = None if scalar is None else scalar[g].float()
    return epi.ref(acc, r, c, s, float(g))


def _store(spec, out, where, acc):
    if spec.layout == "k_grouped":
        out[where] = (acc if spec.out_layout == "mn" else acc.T).to(out.dtype)
    elif spec.layout == "masked":
        out[where[0], where[1]] = acc.to(out.dtype)
    else:
        out[where] = acc.to(out.dtype)


# ---------------------------------------------------------------------------
# Harness
# ---------------------------------------------------------------------------

def run_fake(spec, plan, mutate=None, **fake):
    """One case through the suite's own steps with the stand-in kernel;
    `mutate(spec, plan, inp)` spoils the output before the check."""
    maps = sr.upload(plan.host, "cpu")
    gen = torch.Generator().manual_seed(plan.seed)
    inp = sr.make_inputs(spec, plan, maps, gen, "cpu")
    fake_kernel(spec, *inp.args, **fake)
    if mutate is not None:
        mutate(spec, plan, inp)
    worst, lost, _ = sr.check(spec, inp.buf, sr.reference(spec, plan, maps, inp),
                              maps["gid"]).tolist()
    return worst, lost


def spec_named(name):
    return next(s for s in sc.SPECS if s.name == name)


def plan_with(spec, want, tries=200):
    """The first case plan (seed SEED) that `want(plan)` accepts."""
    for i in range(tries):
        plan = sc.plan_case(spec, SEED, i, cap=CAP)
        if want(plan):
            return plan
    raise AssertionError(f"no case of {spec.name} in {tries} draws is what the test needs")


def owned_rows(plan):
    gid = plan.host["gid"][sc.GUARD_ROWS:sc.GUARD_ROWS + plan.out_rows]
    return torch.nonzero(gid >= 0).flatten(), torch.nonzero(gid < 0).flatten()


# ---------------------------------------------------------------------------
# The specs, the case plans
# ---------------------------------------------------------------------------

def test_spec_table_covers_every_layout_dtype_and_scale_kind():
    specs = sc.SPECS
    assert 40 <= len(specs) <= 80 and len({s.name for s in specs}) == len(specs)
    assert {s.layout for s in specs} == {"contiguous", "masked", "padded_contiguous",
                                        "k_grouped"}
    for layout in ("contiguous", "masked", "padded_contiguous", "k_grouped"):
        dtypes = {s.dtype for s in specs if s.layout == layout}
        assert dtypes == {"bf16", "f16", "f32", "f8"}, (layout, dtypes)
    kinds = {k for s in specs for k in (s.a_scale, s.b_scale)}
    assert kinds >= {"tensor", "channel", "block", "block_mn", "block1x128", "block1x128_mn",
                     "mx32", "mx128"}
    assert {s.offsets for s in specs} == {"i32", "i64"}
    assert {s.epilogue for s in specs} == set(sc.EPILOGUES)
    assert any("split_n" in (s.config or "") for s in specs)
    assert any("cluster = [2" in (s.config or "") for s in specs)
    assert {s.via for s in specs} == {"ir", "jit"}
    for s in specs:  # rows TMA can read: N (and masked/k_grouped M) whole 16 bytes
        assert s.n % 8 == 0 and (s.m is None or s.m % 8 == 0), s.name


def test_case_plans_are_ragged_and_reproducible():
    spec = spec_named("c_bf16")
    plans = [sc.plan_case(spec, SEED, i) for i in range(600)]
    sizes = [x for p in plans for x in p.sizes]
    assert all(sum(p.sizes) <= spec.cap for p in plans)
    assert 0 in sizes and 1 in sizes and max(sizes) >= spec.cap // 2
    for boundary in (64, 128, 256):  # on, just under and just over tile boundaries
        assert {boundary - 1, boundary, boundary + 1} <= set(sizes), boundary
    assert any(sum(p.sizes) == 0 for p in plans)             # all groups empty
    assert any(p.rows > sum(p.sizes) for p in plans)         # rows after the last group
    again = [sc.plan_case(spec, SEED, i).sizes for i in range(50)]
    assert again == [p.sizes for p in plans[:50]]
    assert [sc.plan_case(spec, SEED + 1, i).sizes for i in range(50)] != again


def test_contiguous_plan_maps_rows_to_groups():
    spec = spec_named("c_f8_mx128")
    plan = plan_with(spec, lambda p: len([x for x in p.sizes if x]) >= 3 and p.rows > sum(p.sizes))
    offsets = plan.host["groups"].tolist()
    gid = plan.host["gid"]
    assert (gid[:sc.GUARD_ROWS] == -1).all() and (gid[-sc.GUARD_ROWS:] == -1).all()
    for g in range(spec.groups):
        assert (gid[sc.GUARD_ROWS + offsets[g]:sc.GUARD_ROWS + offsets[g + 1]] == g).all()
    assert (gid[sc.GUARD_ROWS + offsets[-1]:-sc.GUARD_ROWS] == -1).all()
    # MX scale rows: each group's start rounded up as (start + 3g) // 4 * 4.
    g = next(g for g in range(spec.groups) if plan.sizes[g])
    first = plan.host["scale_row"][offsets[g]]
    assert first == (offsets[g] + 3 * g) // 4 * 4


def test_padded_plan_is_deepgemm_aligned():
    spec = spec_named("p_bf16")
    for i in range(100):
        plan = sc.plan_case(spec, SEED, i)
        tags = plan.host["groups"].tolist()
        assert len(tags) % 128 == 0 and plan.host["groups"].dtype == torch.int32
        for g, size in enumerate(plan.sizes):
            if size:
                start = tags.index(g)
                assert start % 128 == 0 and tags[start:start + size] == [g] * size
                assert tags.count(g) == size


def test_masked_plan_clamps_counts():
    spec = spec_named("m_bf16")
    plans = [sc.plan_case(spec, SEED, i) for i in range(400)]
    counts = [c for p in plans for c in p.sizes]
    assert spec.m in counts and 0 in counts
    if sc.OUT_OF_RANGE_COUNTS:  # the kernel clamps them (GGC_VALIDATE=1 rejects them)
        assert min(counts) < 0 and max(counts) > spec.m
    for p in plans[:50]:
        gid = p.host["gid"][sc.GUARD_ROWS:-sc.GUARD_ROWS].view(spec.groups, spec.m)
        for g, c in enumerate(p.sizes):
            assert (gid[g] >= 0).sum() == max(0, min(c, spec.m))


def test_k_grouped_plan_keeps_k_major_rows_whole():
    for name in ("k_f8_block_1x128", "k_bf16_nk", "k_tf32_nk"):
        spec = spec_named(name)
        align = 16 // sc.TORCH_DTYPES[spec.dtype].itemsize
        for i in range(100):
            plan = sc.plan_case(spec, SEED, i)
            assert plan.rows == sum(plan.sizes) > 0 and plan.rows % align == 0


# ---------------------------------------------------------------------------
# Reference and checks against the stand-in kernel
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("spec", sc.SPECS, ids=lambda s: s.name)
def test_stand_in_kernel_passes_the_checks(spec):
    for i in range(3):
        plan = sc.plan_case(spec, SEED, i, cap=CAP)
        worst, lost = run_fake(spec, plan)
        assert worst <= spec.tolerance and not lost, (spec.name, plan.sizes, worst, lost)


def _spoil_row(spec, plan, inp):
    owned, _ = owned_rows(plan)
    rows = sc.GUARD_ROWS + owned
    rows = rows[inp.buf[rows].float().abs().sum(1) > 0]  # not an empty group's zeros
    row = rows[len(rows) // 2]
    inp.buf[row] = (inp.buf[row].float() * 1.05).to(inp.buf.dtype)


def _write_unowned_row(spec, plan, inp):
    _, free = owned_rows(plan)
    inp.buf[sc.GUARD_ROWS + free[0], 0] = 0


def _write_guard(spec, plan, inp):
    inp.buf[-1, -1] = 0


def _unwrite_row(spec, plan, inp):
    owned, _ = owned_rows(plan)
    int_type, pattern = sc.POISON[spec.out_dtype]
    inp.buf[sc.GUARD_ROWS + owned[-1]].view(int_type).fill_(pattern)


def _nonempty(plan):
    return len(owned_rows(plan)[0]) > 0


def _two_groups_with_rows(plan):
    return sum(1 for x in plan.sizes if x > 0) >= 2


@pytest.mark.parametrize("name", ["c_bf16", "m_f8_blockmn_block", "p_f8_mx32_f32out",
                                  "k_f8_block_128x128", "c_bf16_mix"])
def test_checks_catch_wrong_results(name):
    spec = spec_named(name)
    plan = plan_with(spec, _two_groups_with_rows)
    assert run_fake(spec, plan)[0] <= spec.tolerance
    assert run_fake(spec, plan, _spoil_row)[0] > spec.tolerance          # one row 5% off
    assert run_fake(spec, plan, _unwrite_row)[0] == math.inf              # a row not written
    assert run_fake(spec, plan, drop_last_block=True)[0] > spec.tolerance  # K cut short
    if spec.layout != "k_grouped":
        assert run_fake(spec, plan, wrong_group=True)[0] > spec.tolerance  # another group's B


@pytest.mark.parametrize("name", ["c_bf16", "m_bf16", "p_f16_scalar", "k_bf16_kn"])
def test_checks_catch_writes_outside_every_group(name):
    spec = spec_named(name)
    assert run_fake(spec, plan_with(spec, _nonempty), _write_guard)[1] == 1
    if spec.layout != "k_grouped":  # k_grouped writes every row of dW
        plan = plan_with(spec, lambda p: _nonempty(p) and len(owned_rows(p)[1]) > 0)
        assert run_fake(spec, plan)[1] == 0
        assert run_fake(spec, plan, _write_unowned_row)[1] == 1


def test_empty_k_group_must_be_exact_zeros():
    spec = spec_named("k_bf16_kn")
    plan = plan_with(spec, lambda p: 0 in p.sizes)
    g = plan.sizes.index(0)

    def tiny(spec, plan, inp):  # a denormal-sized value where dW[g] must be 0
        inp.buf[sc.GUARD_ROWS + g * spec.m, 0] = 1e-30
    assert run_fake(spec, plan)[0] <= spec.tolerance
    assert run_fake(spec, plan, tiny)[0] == math.inf


def test_upload_keeps_every_tensor():
    plan = sc.plan_case(spec_named("c_f8_mx32_f32out"), SEED, 3)
    maps = sr.upload(plan.host, "cpu")
    assert set(maps) == set(plan.host)
    assert all(torch.equal(maps[k], plan.host[k]) for k in maps)


def test_runner_counts_cases_and_reports_failures(monkeypatch):
    specs = [spec_named("c_f16_kn_col"), spec_named("m_f8_tensor_scalar")]
    monkeypatch.setattr(sr, "build", lambda spec, example: (
        None, lambda *args: fake_kernel(spec, *args, wrong_group=spec.layout == "masked")))
    summary = sr.run_stress(target=10, budget_s=600, seed=SEED, device="cpu", specs=specs,
                            batch=2, log=lambda line: None, cap=CAP)
    assert summary.cases == 10 and summary.error is None
    assert not summary.results[0].failures and summary.results[1].failures
    assert all("GGC_STRESS_SPECS='^m_f8_tensor_scalar$'" in f
               for f in summary.results[1].failures)
    text = "\n".join(summary.lines())
    assert "contiguous/f16 5" in text and "masked/f8 5" in text


def test_runner_reports_what_the_target_refuses_as_not_run(monkeypatch):
    """A spec whose kernel the target refuses by name (GGC_TARGET=sm_89 and
    a cluster) is reported as not run, with the compiler's reason, and the
    others go on; any other compile error stays a failure."""
    specs = [spec_named("c_f16_kn_col"), spec_named("c_f8_mx32_cluster")]

    def build(spec, example):
        if spec.name == "c_f8_mx32_cluster":
            raise ggc.CompilationError("<ggc>:2:3: error: 'gg.grouped_matmul' op cannot be "
                                       "lowered for sm_89: its config asks for a cluster")
        return None, lambda *args: fake_kernel(spec, *args)

    monkeypatch.setattr(sr, "build", build)
    summary = sr.run_stress(target=10, budget_s=600, seed=SEED, device="cpu", specs=specs,
                            batch=2, log=lambda line: None, cap=CAP)
    assert summary.error is None and not summary.failures
    assert summary.results[0].cases == 5 and summary.results[1].cases == 0
    assert summary.results[1].refused == ("cannot be lowered for sm_89: its config asks "
                                          "for a cluster")
    assert "NOT RUN c_f8_mx32_cluster: cannot be lowered for sm_89" in "\n".join(
        summary.lines())

    def broken(spec, example):
        raise ggc.CompilationError("error: something else")

    monkeypatch.setattr(sr, "build", broken)
    summary = sr.run_stress(target=2, budget_s=600, seed=SEED, device="cpu", specs=specs[:1],
                            batch=2, log=lambda line: None, cap=CAP)
    assert summary.error and "something else" in summary.error


# ---------------------------------------------------------------------------
# Every spec compiles, and its arguments fit the kernel's launch contract
# ---------------------------------------------------------------------------

SIZE_RULES = {"M": lambda m, g: m, "K": lambda k, g: k,
              "align4(M)": lambda m, g: (m + 3) // 4 * 4,
              "(M+3G)/4*4": lambda m, g: (m + 3 * g) // 4 * 4,
              "ceil(K/128)": lambda k, g: -(-k // 128), "ceil(K/512)": lambda k, g: -(-k // 512)}
IR_NAMES = {torch.bfloat16: "bf16", torch.float16: "f16", torch.float32: "f32",
            torch.int32: "i32", torch.int64: "i64", torch.float8_e4m3fn: "f8e4m3fn"}


@pytest.mark.parametrize("spec", sc.SPECS, ids=lambda s: s.name)
def test_spec_compiles_and_arguments_fit(spec):
    plan = plan_with(spec, _nonempty)
    maps = sr.upload(plan.host, "cpu")
    args = sr.make_inputs(spec, plan, maps, torch.Generator().manual_seed(1), "cpu").args
    kernel, _ = sc.build(spec, args)
    contract = kernel.info["args"]
    assert len(contract) == len(args)
    size = plan.rows  # M, or the tokens K of k_grouped
    tma = {p["arg"] for p in kernel.info["params"] if p["kind"] == "tensor_map"}
    for i, (arg, want) in enumerate(zip(args, contract)):
        assert IR_NAMES[arg.dtype] == want["dtype"], (i, arg.dtype, want)
        expected = [SIZE_RULES[d](size, spec.groups) if isinstance(d, str) else d
                    for d in want["shape"]]
        assert list(arg.shape) == expected, (i, list(arg.shape), want["shape"])
        assert arg.is_contiguous()
        if i in tma and arg.dim() > 1:  # rows TMA reads: whole 16 bytes
            assert arg.shape[-1] * arg.element_size() % 16 == 0, (i, list(arg.shape))
    out = args[-1]
    guard_bytes = sc.GUARD_ROWS * out.shape[-1] * out.element_size()
    assert guard_bytes % 16 == 0  # the output view stays 16-byte aligned
    if spec.config and spec.via == "ir":
        bm, bn, bk = (int(x) for x in spec.config.split("[")[1].split("]")[0].split(","))
        assert (kernel.info["block_m"], kernel.info["block_n"]) == (bm, bn)
    for knob, value in spec.knobs:
        if knob in ("BLOCK_M", "BLOCK_N"):
            assert kernel.info[knob.lower()] == value
