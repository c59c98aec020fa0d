"""The DeepGEMM 2.x and FlashInfer drop-ins without a GPU: how each call's
arguments become one ggc.ops.grouped_gemm call (recorded by a stand-in),
the scale layouts, and the errors raised before anything is launched.
test/gpu/test_dropins_gpu.py runs them."""

import inspect

import pytest

torch = pytest.importorskip("torch")

from ggc import deepgemm as dg, flashinfer, ops  # noqa: E402

F8 = torch.float8_e4m3fn


class Recorder:
    """Stands in for ggc.ops.grouped_gemm: keeps each call, writes ones into
    `out` (or returns a [G, M, N] of ones for a weight gradient without one)."""

    def __init__(self):
        self.calls = []

    def __call__(self, a, b, **kwargs):
        self.calls.append((a, b, kwargs))
        out = kwargs.get("out")
        if out is None:
            g = kwargs["k_offsets"].numel() - 1
            return torch.ones(g, a.shape[0], b.shape[0])
        return out.add_(1) if kwargs.get("accumulate") else out.fill_(1)

    @property
    def only(self):
        assert len(self.calls) == 1, f"{len(self.calls)} launches"
        return self.calls[0]


@pytest.fixture
def launches(monkeypatch):
    recorder = Recorder()
    monkeypatch.setattr(ops, "grouped_gemm", recorder)
    return recorder


def f8(*shape):
    return torch.randn(*shape).to(F8)


def fp8_args(m=256, n=320, k=640, g=3):
    x, sx = f8(m, k), torch.rand(m, -(-k // 128))
    w, sw = f8(g, n, k), torch.rand(g, -(-n // 128), -(-k // 128))
    return x, sx, w, sw, torch.empty(m, n, dtype=torch.bfloat16)


# ---------------------------------------------------------------------------
# DeepGEMM: the m-grouped calls
# ---------------------------------------------------------------------------

def test_contiguous_fp8_passes_deepgemm_tensors_through(launches):
    x, sx, w, sw, d = fp8_args()
    tags = torch.tensor([0] * 100 + [-1] * 28 + [2] * 128, dtype=torch.int32)
    dg.m_grouped_fp8_gemm_nt_contiguous((x, sx), (w, sw), d, tags)
    a, b, kw = launches.only
    assert a is x and b is w and kw["m_indices"] is tags and kw["out"] is d
    assert kw["b_scale"] is sw
    assert kw["a_scale_kind"] == kw["b_scale_kind"] == "block"
    # K-major scales of A reach the kernel as an MN-major copy of the same
    # values (its stages load those); MN-major ones pass through.
    assert kw["a_scale"] is not sx and torch.equal(kw["a_scale"], sx)
    assert kw["a_scale"].stride(-2) == 1
    mn_major = dg.get_mn_major_tma_aligned_tensor(sx)
    dg.m_grouped_fp8_gemm_nt_contiguous((x, mn_major), (w, sw), d, tags)
    assert launches.calls[-1][2]["a_scale"] is mn_major


def test_contiguous_fp8_copies_k_major_scales_every_call(launches, monkeypatch):
    # The copy is the call's own: a second call with new values in the same
    # tensor reaches the kernel with them, and the fast path remembered for
    # the signature copies each call's scales too (handing the kernel the
    # K-major tensor as if MN-major would read wrong values).
    from ggc.deepgemm import grouped
    remembered = []
    monkeypatch.setattr(grouped, "remember", lambda *args: remembered.append(args))
    x, sx, w, sw, d = fp8_args()
    tags = torch.zeros(256, dtype=torch.int32)
    dg.m_grouped_fp8_gemm_nt_contiguous((x, sx), (w, sw), d, tags)
    sx.mul_(2)
    dg.m_grouped_fp8_gemm_nt_contiguous((x, sx), (w, sw), d, tags)
    assert torch.equal(launches.calls[-1][2]["a_scale"], sx)
    key, call, _, prepare = remembered[-1]
    assert prepare is not None
    fresh = torch.rand_like(sx)
    prepared = prepare(call[:7] + (fresh,) + call[8:])
    assert prepared[7] is not fresh and torch.equal(prepared[7], fresh)
    assert prepared[7].stride(-2) == 1 and prepared[:7] == call[:7] and prepared[8:] == call[8:]
    # MN-major scales pass through, and their fast path takes them as they are.
    dg.m_grouped_fp8_gemm_nt_contiguous((x, dg.get_mn_major_tma_aligned_tensor(sx)), (w, sw),
                                        d, tags)
    assert remembered[-1][3] is None


def test_fast_path_prepares_each_calls_tensors(monkeypatch):
    """fast.launched runs a remembered signature's preparation on the call's
    own tensors before the plan reads them."""
    from ggc.deepgemm import fast

    class Plan:
        def run(self, call):
            self.seen = call
            return True

    plan = Plan()
    monkeypatch.setattr(fast, "_LAUNCHES", {"key": (plan, None, lambda c: c[:1] + ("copy",))})
    assert fast.launched("key", ("a", "b"))
    assert plan.seen == ("a", "copy")
    assert not fast.launched("other", ("a", "b"))


def test_fast_path_finds_the_plan_grouped_gemm_keeps(monkeypatch):
    """Each drop-in remembers its launch under the key ggc.ops.grouped_gemm
    keeps the call's plan by (an option tuple of its own had drifted from
    grouped_gemm's, so no fast path was ever remembered)."""
    from ggc.deepgemm import fast
    slots = ("offsets", "masked_m", "m_indices", "k_offsets", "offs", "a_scale", "b_scale",
             "out")
    option_names = inspect.signature(ops.plan_options).parameters
    plans = {}

    def grouped_gemm(a, b, **kw):
        tensors = (a, b) + tuple(kw.get(name) for name in slots)
        options = ops.plan_options(**{k: v for k, v in kw.items() if k in option_names})
        plans[ops._plan_key(tensors, options, kw.get("validate"))] = object()
        return kw["out"]

    monkeypatch.setattr(ops, "grouped_gemm", grouped_gemm)
    monkeypatch.setattr(ops, "_PLANS", plans)
    monkeypatch.setattr(fast, "_LAUNCHES", {})
    x, sx, w, sw, d = fp8_args()
    mn_major = dg.get_mn_major_tma_aligned_tensor(sx)
    dg.m_grouped_fp8_gemm_nt_contiguous((x, mn_major), (w, sw), d,
                                        torch.zeros(256, dtype=torch.int32))
    xm, sxm = f8(3, 64, 640), torch.rand(3, 64, 5)
    dg.m_grouped_fp8_gemm_nt_masked((xm, dg.get_mn_major_tma_aligned_tensor(sxm)), (w, sw),
                                    torch.empty(3, 64, 320, dtype=torch.bfloat16),
                                    torch.zeros(3, dtype=torch.int32), 64)
    a, b = torch.randn(256, 640, dtype=torch.bfloat16), torch.randn(320, 640, dtype=torch.bfloat16)
    dg.bf16_gemm_nt(a, b, torch.empty(256, 320, dtype=torch.bfloat16))
    dg.m_grouped_bf16_gemm_nt_contiguous(a, b.expand(3, -1, -1).contiguous(),
                                         torch.empty(256, 320, dtype=torch.bfloat16),
                                         torch.zeros(256, dtype=torch.int32))
    kinds = {key[0] if isinstance(key[0], str) else key[0][0] for key in fast._LAUNCHES}
    assert kinds == {"fp8 contiguous", "fp8 masked", "bf16", "bf16 contiguous"}, kinds


def test_m_major_scales_reach_the_kernel_as_their_storage(launches):
    """A's scales in DeepGEMM's MN-major TMA-aligned view are read through
    their storage; other layouts (here MN-major, 250 rows: not 4-aligned)
    are copied into that view first, as DeepGEMM does."""
    x, _, w, sw, _ = fp8_args(m=250)
    sx = torch.rand(5, 250).T  # MN-major, stride 250
    d = torch.empty(250, 320, dtype=torch.bfloat16)
    dg.m_grouped_fp8_gemm_nt_contiguous((x, sx), (w, sw), d, torch.zeros(250, dtype=torch.int32))
    scale = launches.only[2]["a_scale"]
    assert scale.stride() == (1, 252) and torch.equal(scale, sx)
    physical, kind = ops._physical_block_scale(scale)
    assert kind == "block_mn" and list(physical.shape) == [5, 252]


def test_transposed_b_scales_are_read_n_major(launches):
    x, sx, w, sw, d = fp8_args()
    sw_t = sw.mT.contiguous().mT
    dg.m_grouped_fp8_gemm_nt_contiguous((x, sx), (w, sw_t), d,
                                        torch.zeros(256, dtype=torch.int32))
    physical, kind = ops._physical_block_scale(launches.only[2]["b_scale"])
    assert kind == "block_mn" and list(physical.shape) == [3, 5, 3]


def test_psum_layout_becomes_m_indices(launches):
    # Groups of 5, 0 (unaligned: ends where group 0 did), 130 and 1 rows.
    ends = torch.tensor([5, 5, 258, 385], dtype=torch.int32)
    x, sx, w, sw, d = fp8_args(m=512, g=4)
    dg.m_grouped_fp8_gemm_nt_contiguous((x, sx), (w, sw), d, ends, use_psum_layout=True,
                                        expected_m_for_psum_layout=64)
    want = torch.full((512,), -1, dtype=torch.int32)
    want[0:5], want[128:258], want[384:385] = 0, 2, 3
    assert torch.equal(launches.only[2]["m_indices"], want)


def test_masked_fp8(launches):
    import numpy as np
    x, sx = f8(4, 250, 640), torch.rand(4, 250, 5)
    w, sw = f8(4, 320, 640), torch.rand(4, 3, 5)
    d = torch.empty(4, 250, 320, dtype=torch.bfloat16)
    masked_m = torch.tensor([250, 0, 3, 9], dtype=torch.int32)
    dg.m_grouped_fp8_gemm_nt_masked((x, sx), (w, sw), d, masked_m, np.int64(97))
    a, b, kw = launches.only
    assert kw["masked_m"] is masked_m and kw["expected_m"] == 97 and type(kw["expected_m"]) is int
    assert kw["a_scale"] is sx and kw["out"] is d
    tma = dg.get_mn_major_tma_aligned_tensor(sx)
    assert tma.stride() == (252 * 5, 1, 252)
    dg.m_grouped_fp8_gemm_nt_masked((x, tma), (w, sw), d, masked_m, 97)
    assert launches.calls[1][2]["a_scale"] is tma  # already in the form ggc reads


@pytest.mark.parametrize("gran_k, words", [(32, 5), (128, 2)])
def test_packed_ue8m0_scales_are_ggc_mx_scales(launches, gran_k, words):
    x, w = f8(3, 64, 640), f8(3, 320, 640)
    sx = torch.randint(0, 2**30, (3, words, 64), dtype=torch.int32).mT  # MN-major
    sw = torch.randint(0, 2**30, (3, 320, words), dtype=torch.int32)
    d = torch.empty(3, 64, 320, dtype=torch.bfloat16)
    dg.m_grouped_fp8_gemm_nt_masked((x, sx), (w, sw), d, torch.zeros(3, dtype=torch.int32),
                                    64, recipe=(1, 1, gran_k))
    kw = launches.only[2]
    assert kw["a_scale_kind"] == kw["b_scale_kind"] == f"mx{gran_k}"
    assert kw["a_scale"].is_contiguous() and torch.equal(kw["a_scale"], sx)


def test_bf16_mn_major_weights_are_read_as_kn_without_a_copy(launches):
    a = torch.randn(128, 64).bfloat16()
    b = torch.randn(2, 64, 32).bfloat16().mT  # [G, N, K] view, MN-major
    d = torch.empty(128, 32, dtype=torch.bfloat16)
    dg.m_grouped_bf16_gemm_nt_contiguous(a, b, d, torch.zeros(128, dtype=torch.int32))
    _, w, kw = launches.only
    assert kw["b_layout"] == "kn" and list(w.shape) == [2, 64, 32]
    assert w.data_ptr() == b.data_ptr()
    dm = torch.empty(2, 16, 32, dtype=torch.bfloat16)
    dg.m_grouped_bf16_gemm_nt_masked(torch.randn(2, 16, 64).bfloat16(), b.contiguous(), dm,
                                     torch.ones(2, dtype=torch.int32), 8)
    assert launches.calls[1][2]["b_layout"] == "nk"


def test_empty_m_launches_nothing(launches):
    x, sx, w, sw, d = fp8_args(m=0)
    dg.m_grouped_fp8_gemm_nt_contiguous((x, sx), (w, sw), d, torch.zeros(0, dtype=torch.int32))
    assert launches.calls == []


def _contiguous_error(launches, exc, match, m_indices=None, **changes):
    x, sx, w, sw, d = fp8_args()
    args = dict(x=x, sx=sx, w=w, sw=sw, d=d,
                m_indices=torch.zeros(256, dtype=torch.int32) if m_indices is None else m_indices)
    kwargs = {k: changes.pop(k) for k in list(changes) if k not in args}
    args.update(changes)
    with pytest.raises(exc, match=match):
        dg.m_grouped_fp8_gemm_nt_contiguous((args["x"], args["sx"]), (args["w"], args["sw"]),
                                            args["d"], args["m_indices"], **kwargs)
    assert launches.calls == [], "nothing may launch after a rejected argument"


@pytest.mark.parametrize("exc, match, changes", [
    (NotImplementedError, r"recipe: ggc takes float32 scales .* got A \(1, 128\), B \(1, 128\)",
     dict(recipe=(1, 1, 128))),
    (ValueError, "either recipe or recipe_a", dict(recipe=(1, 128, 128), recipe_a=(1, 128),
                                                   recipe_b=(128, 128))),
    (ValueError, "recipe_a and recipe_b are given together", dict(recipe_a=(1, 128))),
    (ValueError, "scales must both be float32 or both int32",
     dict(sw=torch.zeros(3, 3, 5, dtype=torch.int32))),
    (ValueError, r"a's scales must be \[256, 5\]", dict(sx=torch.rand(256, 4))),
    (ValueError, r"b's scales must be \[3, 3, 5\]", dict(sw=torch.rand(3, 2, 5))),
    (ValueError, "no FP4", dict(x=torch.zeros(256, 320, dtype=torch.int8))),
    (ValueError, "b must be K-major", dict(w=f8(3, 640, 320).mT)),
    (ValueError, "d must be bfloat16", dict(d=torch.empty(256, 320))),
    (ValueError, "d must be contiguous", dict(d=torch.empty(320, 256, dtype=torch.bfloat16).T)),
    (ValueError, r"d must be \[256, 320\]", dict(d=torch.empty(256, 64, dtype=torch.bfloat16))),
    (ValueError, "a has K = 512", dict(x=f8(256, 512))),
    (ValueError, "m_indices.* must be int32", dict(m_indices=torch.zeros(256, dtype=torch.int64))),
    (ValueError, r"m_indices.* contiguous \[256\]",
     dict(m_indices=torch.zeros(255, dtype=torch.int32))),
    (ValueError, "expected_m_for_psum_layout goes with", dict(expected_m_for_psum_layout=64)),
    (ValueError, r"psum layout.* contiguous \[3\]", dict(use_psum_layout=True)),
])
def test_contiguous_errors_name_the_argument(launches, exc, match, changes):
    _contiguous_error(launches, exc, match, **changes)


def test_ue8m0_recipes_must_match_on_both_sides(launches):
    sx = torch.zeros(256, 5, dtype=torch.int32)
    sw = torch.zeros(3, 320, 2, dtype=torch.int32)
    _contiguous_error(launches, NotImplementedError, r"K block of 32 or 128 on both sides",
                      sx=sx, sw=sw, recipe_a=(1, 32), recipe_b=(1, 128))


@pytest.mark.parametrize("expected_m, exc", [(0, ValueError), (1.5, TypeError)])
def test_masked_expected_m_must_be_a_positive_int(launches, expected_m, exc):
    x, w = f8(2, 64, 128), f8(2, 128, 128)
    with pytest.raises(exc, match="expected_m"):
        dg.m_grouped_fp8_gemm_nt_masked((x, torch.rand(2, 64, 1)), (w, torch.rand(2, 1, 1)),
                                        torch.empty(2, 64, 128, dtype=torch.bfloat16),
                                        torch.zeros(2, dtype=torch.int32), expected_m)
    assert launches.calls == []


def test_alignment_helpers():
    assert dg.get_mk_alignment_for_contiguous_layout() == 128
    assert dg.get_m_alignment_for_contiguous_layout() == 128
    assert dg.get_theoretical_mk_alignment_for_contiguous_layout(64) == 128
    dg.set_mk_alignment_for_contiguous_layout(128)
    with pytest.raises(ValueError, match="supports only 128"):
        dg.set_mk_alignment_for_contiguous_layout(224)
    assert dg.get_tma_aligned_size(4097, 4) == 4100 and dg.get_tma_aligned_size(5, 1) == 16


# ---------------------------------------------------------------------------
# DeepGEMM: the k-grouped calls
# ---------------------------------------------------------------------------

KS = [0, 128, 256]


def k_grouped_args(m=64, n=48):
    sum_k = sum(KS)
    x, y = f8(sum_k, m), f8(sum_k, n)
    sx, sy = torch.rand(sum_k // 128, m), torch.rand(sum_k // 128, n)
    return (x, sx), (y, sy), torch.tensor(KS, dtype=torch.int32)


def test_k_grouped_tn_transposes_to_k_major_and_accumulates(launches):
    (x, sx), (y, sy), layout = k_grouped_args()
    c = torch.randn(3, 64, 48)
    d = c.clone()
    dg.k_grouped_fp8_gemm_tn_contiguous((x, sx), (y, sy), d, KS, layout, d)  # c is d
    a, b, kw = launches.only
    assert torch.equal(a.float(), x.T.float()) and a.is_contiguous()
    assert torch.equal(b.float(), y.T.float()) and kw["k_major"] is True
    assert kw["k_offsets"].tolist() == [0, 0, 128, 384]
    assert kw["out"] is d and kw["accumulate"] is True  # added in place, by the kernel
    assert torch.equal(d, c + 1)  # d = c + the product (ones here)
    assert ops._k_grouped_scale_kind("a", kw["a_scale"], 64, 3, None)[1] == "block_mn"
    assert ops._k_grouped_scale_kind("b", kw["b_scale"], 48, 3, None)[1] == "block1x128_mn"
    assert kw["a_scale"].data_ptr() == sx.data_ptr()  # read through, not copied
    d2 = torch.full_like(c, float("nan"))
    dg.k_grouped_fp8_gemm_tn_contiguous((x, sx), (y, sy), d2, KS, layout, c)
    assert launches.calls[1][2]["out"] is d2 and launches.calls[1][2]["accumulate"] is True
    assert torch.equal(d2, c + 1)  # c copied to d2, the product added to it


def test_k_grouped_nt_gathers_per_group_blocks(launches):
    (x, sx), (y, sy), layout = k_grouped_args()
    blocks = lambda t: torch.cat([t[0:128].T.flatten(), t[128:384].T.flatten()])  # noqa: E731
    d = torch.empty(3, 64, 48)
    dg.k_grouped_fp8_gemm_nt_contiguous((blocks(x), sx.T), (blocks(y), sy.T), d, KS, layout)
    a, b, kw = launches.only
    assert torch.equal(a.float(), x.T.float()) and torch.equal(b.float(), y.T.float())
    assert kw["out"] is d and torch.equal(kw["a_scale"], sx.T)


def test_k_grouped_bf16_tn_reads_token_major_operands_as_they_are(launches):
    a, b = torch.randn(384, 64).bfloat16(), torch.randn(384, 48).bfloat16()
    d = torch.empty(3, 64, 48)
    dg.k_grouped_bf16_gemm_tn_contiguous(a, b, d, KS, torch.tensor(KS, dtype=torch.int32))
    a_, b_, kw = launches.only
    assert a_ is a and b_ is b and "k_major" not in kw and kw["out"] is d


def test_k_grouped_without_tokens_copies_c(launches):
    x, y = f8(0, 64), f8(0, 48)
    c, d = torch.randn(2, 64, 48), torch.empty(2, 64, 48)
    dg.k_grouped_fp8_gemm_tn_contiguous((x, torch.rand(0, 64)), (y, torch.rand(0, 48)), d,
                                        [0, 0], torch.zeros(2, dtype=torch.int32), c)
    assert launches.calls == [] and torch.equal(d, c)


@pytest.mark.parametrize("exc, match, change", [
    (NotImplementedError, "use_psum_layout", dict(use_psum_layout=True)),
    (NotImplementedError, r"float32 \(1, 1, 128\)", dict(recipe=(1, 1, 32))),
    (ValueError, "multiple of 128", dict(ks_cpu=[0, 100, 284])),
    (ValueError, "ks_cpu must list", dict(ks_cpu=[128, 256])),
    (ValueError, "d must be a contiguous float32", dict(d=torch.empty(3, 64, 48).bfloat16())),
    (ValueError, r"a's scales must be \[3, 64\]", dict(sx=torch.rand(3, 48))),
    (ValueError, "a's scales must be float32", dict(sx=torch.zeros(3, 64, dtype=torch.int32))),
    (ValueError, r"a must be \[sum\(ks\) = 384, M = 64\]", dict(x=f8(384, 48))),
])
def test_k_grouped_errors(launches, exc, match, change):
    (x, sx), (y, sy), layout = k_grouped_args()
    args = dict(x=x, sx=sx, d=torch.empty(3, 64, 48), ks_cpu=KS)
    kwargs = {k: change.pop(k) for k in list(change) if k not in args}
    args.update(change)
    with pytest.raises(exc, match=match):
        dg.k_grouped_fp8_gemm_tn_contiguous((args["x"], args["sx"]), (y, sy), args["d"],
                                            args["ks_cpu"], layout, **kwargs)
    assert launches.calls == []


def test_k_grouped_without_tokens_checks_c_as_with_tokens(launches):
    """No tokens: d = c, with c's shape checked as a call with tokens checks
    it (a broadcast c had been copied silently)."""
    x, y = f8(0, 64), f8(0, 48)
    d = torch.empty(2, 64, 48)
    with pytest.raises(ValueError, match=r"c must be \[2, 64, 48\], got \[64, 48\]"):
        dg.k_grouped_fp8_gemm_tn_contiguous((x, torch.rand(0, 64)), (y, torch.rand(0, 48)), d,
                                            [0, 0], torch.zeros(2, dtype=torch.int32),
                                            torch.ones(64, 48))


def test_k_grouped_validation_compares_ks_cpu_with_grouped_layout(launches, monkeypatch):
    """The checks read ks_cpu, the kernel grouped_layout: under validation
    (GGC_VALIDATE) they must agree."""
    from ggc import groups
    (x, sx), (y, sy), _ = k_grouped_args()
    swapped = torch.tensor([128, 0, 256], dtype=torch.int32)
    d = torch.empty(3, 64, 48)
    dg.k_grouped_fp8_gemm_tn_contiguous((x, sx), (y, sy), d, KS, swapped)  # trusted
    monkeypatch.setattr(groups, "VALIDATE_BY_DEFAULT", True)
    with pytest.raises(ValueError, match=r"grouped_layout must hold ks_cpu's values "
                                         r"\[0, 128, 256\], got \[128, 0, 256\]"):
        dg.k_grouped_fp8_gemm_tn_contiguous((x, sx), (y, sy), d, KS, swapped)
    assert len(launches.calls) == 1


def test_psum_validation_refuses_decreasing_ends(launches, monkeypatch):
    from ggc import groups
    monkeypatch.setattr(groups, "VALIDATE_BY_DEFAULT", True)
    ends = torch.tensor([200, 100, 256], dtype=torch.int32)
    with pytest.raises(ValueError, match=r"non-decreasing group ends within M = 256, "
                                         r"got \[200, 100, 256\]"):
        _contiguous_error_free(ends)
    assert launches.calls == []
    _contiguous_error_free(torch.tensor([100, 100, 256], dtype=torch.int32))  # an empty group
    assert len(launches.calls) == 1


def _contiguous_error_free(psum):
    x, sx, w, sw, d = fp8_args()
    dg.m_grouped_fp8_gemm_nt_contiguous((x, sx), (w, sw), d, psum, use_psum_layout=True)


@pytest.mark.parametrize("recipe", [[1, 128, 128], (1, 128, 128)])
def test_a_recipe_may_be_any_sequence(launches, recipe):
    """DeepGEMM takes a list as well as a tuple; a list once raised
    'unhashable type' from the fast path's key, naming nothing."""
    x, sx, w, sw, d = fp8_args()
    for _ in range(2):
        dg.m_grouped_fp8_gemm_nt_contiguous((x, sx), (w, sw), d,
                                            torch.zeros(256, dtype=torch.int32), recipe=recipe)
    assert len(launches.calls) == 2


@pytest.mark.parametrize("call, match", [
    ("contiguous sx", r"a's scales must be a torch.Tensor, got NoneType"),
    ("contiguous d", r"d must be a torch.Tensor, got NoneType"),
    ("contiguous layout", r"grouped_layout \(m_indices\) must be a torch.Tensor, got list"),
    ("masked masked_m", r"masked_m must be a torch.Tensor, got list"),
    ("k-grouped x", r"a\[0\] must be a torch.Tensor, got NoneType"),
    ("k-grouped d", r"d must be a torch.Tensor, got NoneType"),
    ("k-grouped layout", r"grouped_layout must be a torch.Tensor, got list"),
    ("k-grouped bf16 a", r"a must be a torch.Tensor, got list"),
])
def test_arguments_that_are_not_tensors_are_named(launches, call, match):
    """None or a list where a tensor belongs: a TypeError naming the
    argument (it was an AttributeError on .dtype or .shape)."""
    x, sx, w, sw, d = fp8_args()
    (kx, ksx), (ky, ksy), layout = k_grouped_args()
    calls = {
        "contiguous sx": lambda: dg.m_grouped_fp8_gemm_nt_contiguous(
            (x, None), (w, sw), d, torch.zeros(256, dtype=torch.int32)),
        "contiguous d": lambda: dg.m_grouped_fp8_gemm_nt_contiguous(
            (x, sx), (w, sw), None, torch.zeros(256, dtype=torch.int32)),
        "contiguous layout": lambda: dg.m_grouped_fp8_gemm_nt_contiguous(
            (x, sx), (w, sw), d, [0] * 256),
        "masked masked_m": lambda: dg.m_grouped_fp8_gemm_nt_masked(
            (f8(3, 64, 640), torch.rand(3, 64, 5)), (w, sw),
            torch.empty(3, 64, 320, dtype=torch.bfloat16), [64, 64, 64], 64),
        "k-grouped x": lambda: dg.k_grouped_fp8_gemm_tn_contiguous(
            (None, ksx), (ky, ksy), torch.empty(3, 64, 48), KS, layout),
        "k-grouped d": lambda: dg.k_grouped_fp8_gemm_tn_contiguous(
            (kx, ksx), (ky, ksy), None, KS, layout),
        "k-grouped layout": lambda: dg.k_grouped_fp8_gemm_tn_contiguous(
            (kx, ksx), (ky, ksy), torch.empty(3, 64, 48), KS, KS),
        "k-grouped bf16 a": lambda: dg.k_grouped_bf16_gemm_tn_contiguous(
            [[0.0]], torch.randn(384, 48).bfloat16(), torch.empty(3, 64, 48), KS, layout),
    }
    with pytest.raises(TypeError, match=match):
        calls[call]()
    assert launches.calls == []


# ---------------------------------------------------------------------------
# DeepGEMM: layouts and signatures
# ---------------------------------------------------------------------------

def test_transform_sf_into_required_layout():
    sf = torch.rand(3, 4097, 7)
    out = dg.transform_sf_into_required_layout(sf, 4097, 896, (1, 128, 128), 3, True)
    assert out.stride() == (4100 * 7, 1, 4100) and torch.equal(out, sf)
    assert dg.transform_sf_into_required_layout(out, 4097, 896, (1, 128), 3) is out
    sfb = torch.rand(3, 33, 7)
    assert dg.transform_sf_into_required_layout(sfb, 4097, 896, (1, 128, 128), 3, False) is sfb
    words = torch.zeros(4097, 7, dtype=torch.int32).T.contiguous().T
    assert dg.transform_sf_into_required_layout(words, 4097, 896, (1, 32)).is_contiguous()
    with pytest.raises(ValueError, match="needs is_sfa"):
        dg.transform_sf_into_required_layout(sf, 4097, 896, (1, 128, 128), 3)
    with pytest.raises(ValueError, match=r"sf must be \[3, 4097, 8\]"):
        dg.transform_sf_into_required_layout(sf, 4097, 1000, (1, 128), 3)
    with pytest.raises(NotImplementedError, match=r"granularity \(1, 32\)"):
        dg.transform_sf_into_required_layout(torch.rand(64, 28), 64, 896, (1, 32))


# DeepGEMM 2.6.1's Python signatures (csrc/apis/gemm.hpp, layout.hpp).
SIGNATURES = {
    "m_grouped_fp8_gemm_nt_contiguous": "a b d grouped_layout recipe=None recipe_a=None "
        "recipe_b=None compiled_dims='nk' disable_ue8m0_cast=False use_psum_layout=False "
        "ensure_zero_padding=True expected_m_for_psum_layout=None",
    "m_grouped_fp8_gemm_nt_masked": "a b d masked_m expected_m recipe=None recipe_a=None "
        "recipe_b=None compiled_dims='nk' disable_ue8m0_cast=False",
    "m_grouped_bf16_gemm_nt_contiguous": "a b d grouped_layout compiled_dims='nk' "
        "use_psum_layout=False ensure_zero_padding=True expected_m_for_psum_layout=None",
    "m_grouped_bf16_gemm_nt_masked": "a b d masked_m expected_m compiled_dims='nk'",
    "k_grouped_fp8_gemm_tn_contiguous": "a b d ks_cpu grouped_layout c=None "
        "recipe=(1, 1, 128) compiled_dims='mn' use_psum_layout=False",
    "k_grouped_fp8_gemm_nt_contiguous": "a b d ks_cpu grouped_layout c=None "
        "recipe=(1, 1, 128) compiled_dims='mn' use_psum_layout=False",
    "k_grouped_bf16_gemm_tn_contiguous": "a b d ks_cpu grouped_layout c=None "
        "compiled_dims='mn' use_psum_layout=False",
    "transform_sf_into_required_layout": "sf mn k recipe num_groups=None is_sfa=None "
        "disable_ue8m0_cast=False psum_layout=None",
}


@pytest.mark.parametrize("name", sorted(SIGNATURES))
def test_signatures_follow_deepgemm(name):
    params = inspect.signature(getattr(dg, name)).parameters.values()
    got = " ".join(p.name if p.default is p.empty else f"{p.name}={p.default!r}"
                   for p in params)
    assert got == SIGNATURES[name]


def test_deepgemm_aliases():
    assert dg.m_grouped_fp8_fp4_gemm_nt_contiguous is dg.m_grouped_fp8_gemm_nt_contiguous
    assert dg.fp8_m_grouped_gemm_nt_masked is dg.m_grouped_fp8_gemm_nt_masked
    assert dg.bf16_m_grouped_gemm_nt_masked is dg.m_grouped_bf16_gemm_nt_masked


# ---------------------------------------------------------------------------
# FlashInfer's SegmentGEMMWrapper
# ---------------------------------------------------------------------------

def segment_args(column_major=True, d_in=64, d_out=32, weights=4):
    x = torch.randn(10, d_in).half()
    shape = (weights, d_out, d_in) if column_major else (weights, d_in, d_out)
    return x, torch.randn(*shape).half()


def test_segment_gemm_from_seg_lens(launches):
    x, w = segment_args()
    wrapper = flashinfer.SegmentGEMMWrapper(torch.empty(16, dtype=torch.int8))
    y = wrapper.run(x, w, 3, True, seg_lens=torch.tensor([1, 0, 7]))
    a, b, kw = launches.only
    assert a is x and kw["offsets"].tolist() == [0, 1, 1, 8] and kw["b_layout"] == "nk"
    assert b.data_ptr() == w.data_ptr() and b.shape[0] == 3  # the first 3, not copied
    assert y is kw["out"] and y.shape == (10, 32) and y.dtype == torch.float16
    assert wrapper.forward == wrapper.run


def test_segment_gemm_prefers_seg_indptr_and_gathers_selected_weights(launches):
    x, w = segment_args(column_major=False)
    indptr = torch.tensor([0, 4, 9, 10], dtype=torch.int32)
    out = torch.empty(10, 32, dtype=torch.float16)
    y = flashinfer.SegmentGEMMWrapper(None).run(
        x, w, 3, False, out=out, seg_lens=torch.tensor([1, 1, 1]), seg_indptr=indptr,
        weight_indices=torch.tensor([3, 3, 0]))
    _, b, kw = launches.only
    assert y is out and kw["offsets"].data_ptr() == indptr.data_ptr() and kw["b_layout"] == "kn"
    assert torch.equal(b, w[[3, 3, 0]])


def test_segment_gemm_identity_indices_on_the_cpu_gather_nothing(launches):
    x, w = segment_args()
    flashinfer.SegmentGEMMWrapper(None).run(x, w, 4, True, seg_lens=torch.tensor([2, 2, 2, 4]),
                                            weight_indices=torch.arange(4))
    assert launches.only[1].data_ptr() == w.data_ptr()


def test_segment_gemm_f8_output_defaults_to_bf16(launches):
    x, w = f8(10, 64), f8(2, 32, 64)
    y = flashinfer.SegmentGEMMWrapper(None).run(x, w, 2, True, seg_lens=torch.tensor([3, 7]))
    assert y.dtype == torch.bfloat16


@pytest.mark.parametrize("match, change", [
    ("either seg_lens or seg_indptr", dict(seg_lens=None)),
    (r"out must be \(10, 32\)", dict(out=torch.empty(10, 16, dtype=torch.float16))),
    ("x has d_in = 64 but weights have d_in = 48", dict(weights=torch.randn(4, 32, 48))),
    ("fewer than the batch_size = 5",
     dict(batch_size=5, seg_lens=torch.ones(5, dtype=torch.int64))),
    (r"batch_size must be an int >= 0, got -1", dict(batch_size=-1)),
    (r"weight_indices must be in \[0, 4\)", dict(weight_indices=torch.tensor([0, 4, 1]))),
    ("seg_lens must hold batch_size = 3", dict(seg_lens=torch.tensor([1, 2]))),
    ("f8 x needs weight_column_major=True", dict(x=f8(10, 64), weights=f8(4, 64, 32),
                                                 weight_column_major=False)),
])
def test_segment_gemm_errors(launches, match, change):
    x, w = segment_args()
    args = dict(x=x, weights=w, batch_size=3, weight_column_major=True,
                seg_lens=torch.tensor([1, 2, 3]))
    args.update(change)
    with pytest.raises(ValueError, match=match):
        flashinfer.SegmentGEMMWrapper(None).run(**args)
    assert launches.calls == []


@pytest.mark.parametrize("name, value", [
    ("seg_lens", torch.tensor([1.7, 2.2, 3.9])), ("seg_indptr", torch.tensor([0, 1.5, 3, 6])),
    ("weight_indices", torch.tensor([0.9, 1.9, 2.9]))])
def test_segment_gemm_takes_integers_only(launches, name, value):
    """A float length, offset or index was truncated without a word."""
    x, w = segment_args()
    args = dict(x=x, weights=w, batch_size=3, weight_column_major=True,
                seg_lens=torch.tensor([1, 2, 3]))
    args[name] = value
    with pytest.raises(TypeError, match=f"{name} must hold integers, got torch.float32"):
        flashinfer.SegmentGEMMWrapper(None).run(**args)
    assert launches.calls == []


def test_mxfp8_arguments_are_named(launches):
    a, b = f8(8, 128), f8(2, 64, 128)
    scales = dict(a_scale=torch.zeros(16, 1, dtype=torch.int32),
                  b_scale=torch.zeros(2, 64, 1, dtype=torch.int32),
                  m_indptr=torch.tensor([0, 4, 8], dtype=torch.int32))
    with pytest.raises(TypeError, match="a_scale must be a torch.Tensor, got NoneType"):
        flashinfer.moe_gemm_mxfp8_nt_groupwise(a, b, **{**scales, "a_scale": None})
    with pytest.raises(ValueError, match=r"scale_granularity_mnk must be .* got 128"):
        flashinfer.moe_gemm_mxfp8_nt_groupwise(a, b, **scales, scale_granularity_mnk=128)
    with pytest.raises(ValueError, match="out is torch.float16 but out_dtype says "
                                         "torch.bfloat16"):
        flashinfer.moe_gemm_mxfp8_nt_groupwise(a, b, **scales, out_dtype=torch.bfloat16,
                                               out=torch.empty(8, 64, dtype=torch.float16))
    assert launches.calls == []


def test_segment_gemm_backends():
    flashinfer.SegmentGEMMWrapper(None, backend="sm90")
    with pytest.raises(ValueError, match="backend must be 'auto' or 'sm90'"):
        flashinfer.SegmentGEMMWrapper(None, backend="sm80")


def test_ops_imports_no_drop_in_nor_torch_op():
    """ggc.ops sits below the drop-ins and the torch ops (#41): importing
    it alone loads none of them, and FlashInfer's names are ggc.flashinfer's
    only."""
    import os
    import subprocess
    import sys
    code = ("import sys; import ggc.ops; "
            "print(sorted(m for m in ('ggc.flashinfer', 'ggc.torch_ops', 'ggc.deepgemm', "
            "'torch') if m in sys.modules)); "
            "print(hasattr(ggc.ops, 'moe_gemm_mxfp8_nt_groupwise'))")
    package = os.path.dirname(os.path.dirname(os.path.abspath(ops.__file__)))
    env = dict(os.environ, PYTHONPATH=package)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          check=True, env=env)
    assert done.stdout.split("\n")[:2] == ["[]", "False"], done.stdout
    import ast
    tree = ast.parse(inspect.getsource(ops))
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                for a in n.names}
    assert not imported & {"flashinfer", "torch_ops", "deepgemm"}, imported


@pytest.mark.parametrize("call", ["contiguous", "masked", "dense"])
def test_fp8_operand_without_its_scales_names_the_argument(launches, call):
    """An FP8 operand is DeepGEMM's pair (tensor, scales); a bare tensor is
    refused naming it (it raised 'too many values to unpack')."""
    x, sx, w, sw, d = fp8_args()
    if call == "contiguous":
        fn = lambda a, b: dg.m_grouped_fp8_gemm_nt_contiguous(  # noqa: E731
            a, b, d, torch.zeros(256, dtype=torch.int32))
    elif call == "masked":
        d = torch.empty(3, 256, 320, dtype=torch.bfloat16)
        fn = lambda a, b: dg.m_grouped_fp8_gemm_nt_masked(  # noqa: E731
            a, b, d, torch.full((3,), 256, dtype=torch.int32), 256)
    else:
        fn = lambda a, b: dg.fp8_gemm_nt(a, b, d)  # noqa: E731
    with pytest.raises(ValueError, match=r"^a must be a pair \(the FP8 tensor, its scales\), "
                                         r"as DeepGEMM takes it; got Tensor$"):
        fn(x, (w, sw))
    with pytest.raises(ValueError, match=r"^b must be a pair .* got a tuple of 3$"):
        fn((x, sx), (w, sw, sw))
    assert launches.calls == []


def test_scale_transposition_kernel_compiles_and_checks_its_storage():
    """gg.transpose_scales' kernel for the drop-in's K-major scales: its
    IR compiles for every target (one kernel, four scales a thread), a
    storage of the wrong shape is refused by name, and off CUDA the copy
    is torch's (None from the kernel's launcher)."""
    import ggc
    from ggc.moe import quant_kernel as qk
    for arch in ("sm_90a", "sm_80"):
        ptx = ggc.compile_ir(qk.scales_source_text("t", batched=arch == "sm_80"),
                             emit="ptx", arch=arch).asm["ptx"]
        assert ".entry t_transpose_scales(" in ptx
        # Four scales a thread through a shared tile, the four reads issued
        # before the tile's stores, a barrier either side of them.
        assert ptx.count("ld.global") == 4 and ptx.count("st.global") == 4
        assert ptx.count("st.shared") == 4 and ptx.count("ld.shared") == 4
        assert ptx.count("bar.sync") == 2
        reads = ptx[ptx.index("ld.global"):ptx.index("st.shared")]
        assert reads.count("ld.global") == 4
    sf = torch.rand(10, 7)
    assert qk.transposed_scales(sf, 12) is None
    if torch.cuda.is_available():
        with pytest.raises(ValueError, match="out must be a contiguous float32 tensor of shape"):
            qk.transposed_scales(sf.cuda(), 12, out=torch.empty(7, 10, device="cuda"))
    with pytest.raises(ValueError, match=r"aligned must be at least the scales' rows \(10\)"):
        qk.transposed_scales(sf, 8)
    # Tiles of 128 rows x 8 columns, numbered in i32 by the kernel: from
    # 2^31 of them (a narrow, very tall storage) the launcher declines.
    assert qk.scale_tiles(3, 56, 8193) == 3 * 7 * 65
    assert qk.scale_tiles(1, 1, 2**31 * 128) == 2**31
