"""The eager path of ggc's torch ops (torch_ops.lean_eager) and the
per-signature checks of grouped_mm and the DeepGEMM drop-ins change no
behaviour: a plain eager call runs the op's body directly, and everything
else (inputs that need a gradient, dispatch modes, fake tensors, tensors
whose dispatch keys ask for more than the backend) still takes the custom
op's own path; a call unlike a checked one gets its error.

CPU tensors stand in for CUDA ones and launches are recorded, as in
benchmarks/host_time.py --stub. The last part covers the ops' C++ kernels."""

import os
import sys

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "benchmarks"))
import host_time  # noqa: E402

import ggc  # noqa: E402
import ggc.moe  # noqa: E402,F401
from ggc import (compiler, groups, signature, deepgemm as dg, gemm_gradients, ops,  # noqa: E402
                 torch_ops)
from torch._subclasses.fake_tensor import FakeTensorMode  # noqa: E402
from torch.fx.experimental.proxy_tensor import make_fx  # noqa: E402

BF16, I32 = torch.bfloat16, torch.int32
G, M, N, K = 2, 64, 128, 128
OPS = ("grouped_gemm", "grouped_gemm_out", "grouped_mm", "grouped_mm_grad_x",
       "grouped_mm_grad_w", "moe_down")


@pytest.fixture
def launches(tmp_path, monkeypatch):
    seen = host_time.stub_for_test(monkeypatch, tmp_path / "cache")
    monkeypatch.setattr(torch_ops, "_MM_CHECKED", {})
    monkeypatch.setattr(torch_ops, "_MM_PLANS_CHECKED", set())
    monkeypatch.setattr(ops, "_PLANS", {})
    torch._dynamo.reset()
    yield seen
    ggc.signature.forget_op_plans()


def operands(**changes):
    t = dict(a=torch.randn(M, K).to(BF16), b=torch.randn(G, N, K).to(BF16),
             offsets=torch.tensor([0, 30, M], dtype=I32))
    t.update(changes)
    return t


@pytest.mark.parametrize("name", OPS)
def test_every_op_has_its_eager_kernels_and_keeps_the_custom_op_ones(name):
    qualified = f"ggc::{name}"
    for key in ("CPU", "CUDA", "AutogradCPU", "AutogradCUDA", "Meta", "Autograd",
                "CompositeExplicitAutograd"):
        assert torch._C._dispatch_has_kernel_for_dispatch_key(qualified, key), key


def test_a_plain_call_runs_the_body_directly(launches):
    t = operands()
    y = torch.ops.ggc.grouped_gemm(t["a"], t["b"], offsets=t["offsets"])
    assert y.shape == (M, N) and y.dtype == BF16 and y.grad_fn is None
    assert launches[-1][:3] == [t[n].data_ptr() for n in ("a", "b", "offsets")]
    assert launches[-1][3] == y.data_ptr()
    y = torch.ops.ggc.grouped_mm(t["a"], t["b"], t["offsets"])
    assert launches[-1][3] == y.data_ptr() and len(launches) == 2


def test_inputs_that_need_a_gradient_go_through_autograd(launches):
    t = operands(a=torch.randn(M, K).to(BF16).requires_grad_())
    for call, backward in (
            (lambda: torch.ops.ggc.grouped_gemm(t["a"], t["b"], offsets=t["offsets"]),
             "ggc_grouped_gemmBackward"),
            (lambda: torch.ops.ggc.grouped_mm(t["a"], t["b"], t["offsets"]),
             "ggc_grouped_mmBackward")):
        y = call()
        assert y.requires_grad and backward in type(y.grad_fn).__name__
        grad_a, = torch.autograd.grad(y.float().sum(), t["a"])
        assert grad_a.shape == t["a"].shape
        with torch.no_grad():
            assert call().grad_fn is None


@pytest.mark.parametrize("needs", ["a", "b", "ab"])
def test_grouped_mm_backward_launches_the_gradients_it_needs(launches, needs):
    """grouped_mm's eager autograd (lean_eager's autograd.Function with the
    op's own formula): its backward launches the input gradient (grad_y, w) and
    the weight gradient (grad_y, x) for the inputs that need them, and
    gives them in the inputs' shapes."""
    t = operands()
    inputs = [t[n].requires_grad_() for n in needs]
    y = torch.ops.ggc.grouped_mm(t["a"], t["b"], t["offsets"])
    before = len(launches)
    grad_y = torch.randn(M, N).to(BF16)
    grads = torch.autograd.grad(y, inputs, grad_y)
    assert [g.shape for g in grads] == [i.shape for i in inputs]
    seconds = [launch[1] for launch in launches[before:]]
    expected = ([t["b"].data_ptr()] if "a" in needs else []) + (
        [t["a"].data_ptr()] if "b" in needs else [])
    assert seconds == expected
    assert all(launch[0] == grad_y.data_ptr() for launch in launches[before:])


def test_grouped_mm_backward_takes_the_strided_offsets_its_forward_took(launches):
    """The forward copies a strided offsets view; its gradients, given the
    same view, copy it too (they raised 'must be contiguous')."""
    every_other = torch.tensor([0, 7, 30, 9, M, 5], dtype=I32)[::2]
    t = operands(a=torch.randn(M, K).to(BF16).requires_grad_(),
                 b=torch.randn(G, N, K).to(BF16).requires_grad_())
    y = torch.ops.ggc.grouped_mm(t["a"], t["b"], every_other)
    grads = torch.autograd.grad(y, [t["a"], t["b"]], torch.randn(M, N).to(BF16))
    assert [g.shape for g in grads] == [(M, K), (G, N, K)]
    assert launches[-1][2] != every_other.data_ptr()  # a contiguous copy was read


@pytest.mark.parametrize("option, good, bad", [
    ("accumulate", True, 1), ("expected_m", 64, 64.0), ("k_major", False, 0)])
def test_a_kept_plan_is_not_found_by_a_value_of_another_type(launches, option, good, bad):
    """Python finds 1 == True and 64.0 == 64: a kept plan's key holds the
    options' types, so such a call takes the checks that refuse it cold."""
    t = operands()
    out = torch.zeros(M, N, dtype=BF16)
    call = lambda value: ggc.ops.grouped_gemm(  # noqa: E731
        t["a"], t["b"], offsets=t["offsets"], out=out, **{option: value})
    call(good)
    call(good)  # now from the kept plan
    with pytest.raises(ValueError, match=f"{option} must be"):
        call(bad)


def test_out_with_inputs_that_need_a_gradient_is_refused(launches):
    """A product written into out= reaches no gradient (it ran silently):
    refused as torch's out= functions refuse it; under no_grad it runs."""
    t = operands(a=torch.randn(M, K).to(BF16).requires_grad_())
    out = torch.empty(M, N, dtype=BF16)
    with pytest.raises(ValueError, match="out= takes no part in autograd, but a or b "
                                         "requires grad"):
        ggc.ops.grouped_gemm(t["a"], t["b"], offsets=t["offsets"], out=out)
    assert launches == []
    with torch.no_grad():
        ggc.ops.grouped_gemm(t["a"], t["b"], offsets=t["offsets"], out=out)
    assert launches[-1][3] == out.data_ptr()


def test_a_weight_gradients_out_of_another_group_count_is_named(launches):
    """k_offsets gives G; an out of G + 1 groups failed in the compiler,
    naming 'groups'."""
    dy, x = torch.randn(M, N).to(BF16), torch.randn(M, K).to(BF16)
    k_offsets = torch.tensor([0, 30, M], dtype=I32)
    out = torch.zeros(G + 1, N, K)
    with pytest.raises(ValueError, match=rf"out must be \[G, M, N\] = \[{G}, {N}, {K}\] "
                                         rf"\(G from k_offsets' {G + 1} entries\), got "
                                         rf"\[{G + 1}, {N}, {K}\]"):
        ggc.ops.grouped_gemm(dy, x, k_offsets=k_offsets, out=out, accumulate=True)
    assert launches == []


def test_moe_down_needs_a_gradient_for_its_autograd(launches):
    a, w = torch.randn(M, K).to(BF16), torch.randn(G, N, K).to(BF16)
    offsets, route = torch.tensor([0, 30, M], dtype=I32), torch.rand(M, requires_grad=True)
    y = torch.ops.ggc.moe_down(a, w, offsets, route, None, None)
    assert "ggc_moe_downBackward" in type(y.grad_fn).__name__
    assert torch.ops.ggc.moe_down(a, w, offsets, route.detach(), None, None).grad_fn is None


def test_a_mutating_op_bumps_the_version_of_what_it_writes(launches):
    t = operands()
    out = torch.empty(M, N, dtype=BF16)
    before = out._version
    torch.ops.ggc.grouped_gemm_out(t["a"], t["b"], out, offsets=t["offsets"])
    assert out._version > before and launches[-1][3] == out.data_ptr()
    # So autograd still sees a tensor it saved being overwritten.
    x = torch.randn(M, N, requires_grad=True)
    saved = out.clone()
    y = (x * saved).sum()
    torch.ops.ggc.grouped_gemm_out(t["a"], t["b"], saved, offsets=t["offsets"])
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        y.backward()


def test_dispatch_modes_and_fakes_still_see_the_op(launches):
    t = operands()
    graph = make_fx(lambda a, b, o: torch.ops.ggc.grouped_gemm(a, b, offsets=o))(
        t["a"], t["b"], t["offsets"])
    targets = [str(n.target) for n in graph.graph.nodes if n.op == "call_function"]
    assert targets == ["ggc.grouped_gemm.default"]
    calls = len(launches)
    with FakeTensorMode():
        y = torch.ops.ggc.grouped_mm(torch.empty(M, K, dtype=BF16),
                                     torch.empty(G, N, K, dtype=BF16),
                                     torch.empty(G + 1, dtype=I32))
    assert torch_ops.without_data([y]) and len(launches) == calls


def test_a_negative_view_is_materialised_before_the_body(launches):
    """Keys below autograd other than the backend's (here Negative) take
    the dispatcher's path, which hands the body a plain copy."""
    t = operands()
    neg = torch._neg_view(t["a"])
    torch.ops.ggc.grouped_gemm(neg, t["b"], offsets=t["offsets"])
    assert launches[-1][0] != t["a"].data_ptr()


def test_fullgraph_compile_and_opcheck_still_hold(launches):
    def step(a, b, offsets):
        return torch.ops.ggc.grouped_mm(a, b, offsets)

    t = operands()
    y = torch.compile(step, backend="aot_eager", fullgraph=True)(t["a"], t["b"], t["offsets"])
    assert y.shape == (M, N)
    result = torch.library.opcheck(torch.ops.ggc.grouped_mm.default,
                                   (t["a"], t["b"], t["offsets"]),
                                   test_utils=("test_schema", "test_autograd_registration",
                                               "test_faketensor"))
    assert set(result.values()) == {"SUCCESS"}, result


def test_grouped_mm_checks_a_new_signature_after_a_cached_one(launches):
    t = operands()
    torch.ops.ggc.grouped_mm(t["a"], t["b"], t["offsets"])
    torch.ops.ggc.grouped_mm(t["a"], t["b"], t["offsets"])
    assert len(torch_ops._MM_CHECKED) == 1
    with pytest.raises(TypeError, match="offsets must be int32 or int64"):
        torch.ops.ggc.grouped_mm(t["a"], t["b"], t["offsets"].float())
    with pytest.raises(ValueError, match=r"offsets must be \[G\+1\] = \[3\]"):
        torch.ops.ggc.grouped_mm(t["a"], t["b"], torch.tensor([0, M], dtype=I32))
    # A transposed copy of b: the kernel gets contiguous storage, every call.
    b_t = t["b"].transpose(1, 2).contiguous().transpose(1, 2)
    for _ in range(2):
        torch.ops.ggc.grouped_mm(t["a"], b_t, t["offsets"])
        assert launches[-1][1] != b_t.data_ptr()


def test_grouped_mm_takes_a_kept_launch_only_after_its_own_checks(launches, monkeypatch):
    """A launch ggc.ops keeps for a direct call of the same signature does
    not let grouped_mm skip its checks; once they have passed, its calls
    (and its gradients') run the kept launch on the new tensors."""
    t = operands()
    ops.grouped_gemm(t["a"], t["b"], offsets=t["offsets"], out_dtype=BF16)
    checked = []
    real_check = torch_ops._check
    monkeypatch.setattr(torch_ops, "_check", lambda *a: checked.append(a) or real_check(*a))
    torch.ops.ggc.grouped_mm(t["a"], t["b"], t["offsets"])
    assert len(checked) == 1
    for _ in range(2):
        u = operands()
        y = torch.ops.ggc.grouped_mm(u["a"], u["b"], u["offsets"])
        assert y.shape == (M, N) and y.dtype == BF16
        assert launches[-1][:3] == [u[n].data_ptr() for n in ("a", "b", "offsets")]
        gx = torch.ops.ggc.grouped_mm_grad_x(y, u["b"], u["offsets"])
        assert gx.shape == (M, K) and launches[-1][0] == y.data_ptr()
        gw = torch.ops.ggc.grouped_mm_grad_w(y, u["a"], u["offsets"])
        assert gw.shape == (G, N, K) and launches[-1][:2] == [y.data_ptr(),
                                                              u["a"].data_ptr()]
    assert len(checked) == 1


class Recorder:
    def __init__(self):
        self.calls = []

    def __call__(self, a, b, **kwargs):
        self.calls.append((a, b, kwargs))
        return kwargs.get("out")


@pytest.fixture
def recorded(monkeypatch):
    recorder = Recorder()
    monkeypatch.setattr(ops, "grouped_gemm", recorder)
    monkeypatch.setattr(dg.grouped, "_CHECKED", {})
    return recorder


def fp8_masked(m=128, k=256, n=256, g=2):
    f8 = torch.float8_e4m3fn
    x, sx = torch.randn(g, m, k).to(f8), torch.rand(g, m, k // 128)
    w, sw = torch.randn(g, n, k).to(f8), torch.rand(g, n // 128, k // 128)
    return (x, sx), (w, sw), torch.empty(g, m, n, dtype=BF16), torch.full((g,), m, dtype=I32)


def test_deepgemm_cached_calls_pass_the_new_tensors(recorded):
    first, second = fp8_masked(), fp8_masked()
    dg.m_grouped_fp8_gemm_nt_masked(*first, 64)
    dg.m_grouped_fp8_gemm_nt_masked(*second, 32)
    assert len(dg.grouped._CHECKED) == 1
    (x, sx), (w, sw), d, masked_m = second
    a, b, kw = recorded.calls[-1]
    assert a is x and b is w and kw["a_scale"] is sx and kw["b_scale"] is sw
    assert kw["out"] is d and kw["masked_m"] is masked_m and kw["expected_m"] == 32
    with pytest.raises(ValueError, match="expected_m and M must be positive"):
        dg.m_grouped_fp8_gemm_nt_masked(*second, 0)  # a value: checked every call
    with pytest.raises(ValueError, match="masked_m must be int32"):
        dg.m_grouped_fp8_gemm_nt_masked(*second[:3], second[3].long(), 64)
    assert len(recorded.calls) == 2


def test_deepgemm_fast_path_is_not_found_by_a_float_expected_m(launches):
    """The drop-ins' fast path keys expected_m with its type: 64.0 after
    64 takes the checks, which refuse it, as they do cold."""
    args = fp8_masked()
    dg.m_grouped_fp8_gemm_nt_masked(*args, 64)
    dg.m_grouped_fp8_gemm_nt_masked(*args, 64)
    assert any(key[0][-2:] == (64, int) for key in dg.fast._LAUNCHES)  # the fast path's
    with pytest.raises(TypeError, match="expected_m must be an int, got float"):
        dg.m_grouped_fp8_gemm_nt_masked(*args, 64.0)


def test_deepgemm_copied_scales_are_copied_on_every_call(recorded):
    """A's scales in a layout the kernel cannot read are copied (as
    DeepGEMM does): a copy belongs to its call, never to the signature."""
    (x, _), (w, sw), d, masked_m = fp8_masked(m=126)
    sx = torch.rand(2, 2, 126).transpose(1, 2)  # MN-major, rows not 4-aligned
    for _ in range(2):
        dg.m_grouped_fp8_gemm_nt_masked((x, sx), (w, sw), d, masked_m, 64)
    first, second = (kw["a_scale"] for _, _, kw in recorded.calls)
    assert first is not sx and second is not sx and first is not second
    assert torch.equal(second, sx) and not dg.grouped._CHECKED


def test_lean_eager_formula_refuses_keyword_only_arguments():
    """The plain autograd.Function takes every argument positionally, the
    dispatcher's left-out defaults filled in: an op with keyword-only
    arguments is refused when it is registered, not when it runs."""
    def body(x: torch.Tensor, *, scale: float = 1.0) -> torch.Tensor:
        return x.clone()
    op = torch.library.custom_op("ggc_test::keyword_only", body, mutates_args=())
    with pytest.raises(ValueError, match="keyword-only arguments; keyword_only has some"):
        torch_ops.lean_eager(op, body, formula=(lambda ctx, inputs, output: None,
                                                lambda ctx, grad: (grad,)))

# ---------------------------------------------------------------------------
# The C++ kernels (python/src/op_kernels.cpp): a call whose signature
# launched before runs the kept launch without Python, on the new call's
# tensors, exactly as the Python kernel would have; anything that could
# change the answer (a gradient, the settings, validation, an unaligned
# address) takes the Python kernel again. The stub's records give them a C
# function that records too.
# ---------------------------------------------------------------------------

cpp_kernels = pytest.mark.skipif(signature.op_kernel_installer() is None,
                                 reason="ggc._signature not built against this torch")


def tensors():
    return operands(y=torch.randn(M, N).to(BF16), out=torch.empty(M, N, dtype=BF16))


# Each op's call on a set of tensors: (the call, the names of its tensors).
CALLS = {
    "grouped_gemm": lambda t: torch.ops.ggc.grouped_gemm(t["a"], t["b"], offsets=t["offsets"]),
    "grouped_gemm_out": lambda t: torch.ops.ggc.grouped_gemm_out(
        t["a"], t["b"], t["out"], offsets=t["offsets"]) or t["out"],
    "grouped_mm": lambda t: torch.ops.ggc.grouped_mm(t["a"], t["b"], t["offsets"]),
    "grouped_mm_grad_x": lambda t: torch.ops.ggc.grouped_mm_grad_x(t["y"], t["b"], t["offsets"]),
    "grouped_mm_grad_w": lambda t: torch.ops.ggc.grouped_mm_grad_w(t["y"], t["a"], t["offsets"]),
}


def roles(addresses, t, result):
    """Each launch address named by what it is: a tensor of `t`, the
    result, or (any other) a constant of the plan, by value."""
    names = {t[n].data_ptr(): n for n in t}
    names[result.data_ptr()] = "result"
    return [names.get(a, a) for a in addresses]


@cpp_kernels
@pytest.mark.parametrize("name", CALLS)
def test_a_call_seen_before_runs_in_cpp_on_the_new_tensors(launches, name):
    first = tensors()
    result = CALLS[name](first)
    python_roles = roles(launches[-1], first, result)
    hits = signature.op_kernel_hits()
    for _ in range(2):
        t = tensors()
        result = CALLS[name](t)
        assert signature.op_kernel_hits() == hits + 1
        hits += 1
        assert roles(launches[-1], t, result) == python_roles
        assert result.dtype == BF16 and result.grad_fn is None
    assert len(launches) == 3


# The forward calls whose backward the C++ autograd node runs: grouped_mm
# (gradient ops the same for every call) and grouped_gemm in both B
# layouts (learnt per call, gemm_gradients.gradient_ops).
NODE_FORWARDS = {
    "grouped_mm": lambda t: torch.ops.ggc.grouped_mm(t["a"], t["b"], t["offsets"]),
    "grouped_gemm nk": lambda t: torch.ops.ggc.grouped_gemm(t["a"], t["b"],
                                                            offsets=t["offsets"]),
    "grouped_gemm kn": lambda t: torch.ops.ggc.grouped_gemm(t["a"], t["b"], offsets=t["offsets"],
                                                            b_layout="kn"),
}


@cpp_kernels
@pytest.mark.parametrize("forward", NODE_FORWARDS)
@pytest.mark.parametrize("needs", ["a", "b", "ab"])
def test_a_call_seen_before_needing_a_gradient_runs_a_cpp_autograd_node(launches, needs, forward):
    """The second call takes the C++ kernels' autograd node, whose backward
    calls the op's gradient ops: the same launches as the Python formula's,
    on the new tensors."""
    names, launched = [], []
    for _ in range(2):
        t = operands()
        if forward.endswith("kn"):
            t["b"] = t["b"].transpose(1, 2).contiguous()
        inputs = [t[n].requires_grad_() for n in needs]
        hits = signature.op_kernel_hits()
        y = NODE_FORWARDS[forward](t)
        names.append(y.grad_fn.name())
        before = len(launches)
        grad_y = torch.randn(M, N).to(BF16)
        grads = torch.autograd.grad(y, inputs, grad_y)
        assert [(g.shape, g.dtype) for g in grads] == [(i.shape, i.dtype) for i in inputs]
        named = {**t, "grad_y": grad_y, **{f"grad_{n}": g for n, g in zip(needs, grads)}}
        launched.append([roles(launch, named, grad_y) for launch in launches[before:]])
    op = forward.split()[0]
    assert f"ggc_{op}Backward" in names[0] and "KeptLaunchWithGradients" in names[1]
    assert signature.op_kernel_hits() == hits + 1 + len(needs)
    assert launched[0] == launched[1] and len(launched[0]) == len(needs)


@cpp_kernels
def test_gradient_ops_must_be_a_function_of_the_call():
    install = signature.op_kernel_installer()
    with pytest.raises(TypeError, match="gradients must be None or a function"):
        install("ggc::grouped_mm", "AutogradCPU", True, lambda *a: None, lambda *a: None, (),
                [(0, "ggc::grouped_mm_grad_x", (-1, 1, 2))])


@cpp_kernels
@pytest.mark.parametrize("bad, says", [
    (((0, "ggc::grouped_mm_grad_x", (-1, 1)),), "grouped_mm_grad_x takes 3 arguments, given 2"),
    (((0, "ggc::no_such_op", (-1, 1, 2)),), "no op ggc::no_such_op"),
    (((5, "ggc::grouped_mm_grad_x", (-1, 1, 2)),), "input 5 is not an argument of ggc::grouped_mm"),
    (((0, "ggc::grouped_mm_grad_x", (-1, 1, 7)),), "source 7 of ggc::grouped_mm_grad_x is "
                                                   "neither -1, an argument nor a constant"),
])
def test_bad_gradient_ops_are_reported_once_and_the_call_keeps_python(launches, monkeypatch,
                                                                      bad, says):
    """A call's gradient calls are checked when they are learnt: a bad
    description is reported (sys.unraisablehook), the call keeps the Python
    formula, and its signature is not asked about again."""
    monkeypatch.setattr(torch_ops, "_MM_GRADIENT_OPS", bad)
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    for _ in range(3):
        t = operands()
        t["a"].requires_grad_()
        y = NODE_FORWARDS["grouped_mm"](t)
        assert "ggc_grouped_mmBackward" in y.grad_fn.name()
        (grad_a,) = torch.autograd.grad(y, [t["a"]], torch.randn(M, N).to(BF16))
        assert grad_a.shape == t["a"].shape
    assert len(reported) == 1 and says in str(reported[0].exc_value)


@cpp_kernels
def test_a_call_without_a_kept_launch_is_not_asked_about_again(launches, monkeypatch):
    """offs= offsets are made on every call: ggc.ops keeps no launch the C++
    kernel can run, and after the first answer the kernel stops asking."""
    described = []
    real = ops._Plan.describe
    monkeypatch.setattr(ops._Plan, "describe",
                        lambda plan, positions: described.append(1) or real(plan, positions))
    t = operands()
    offs = t["offsets"][1:].contiguous()
    hits = signature.op_kernel_hits()
    for _ in range(3):
        y = torch.ops.ggc.grouped_gemm(t["a"], t["b"], offs=offs)
        assert launches[-1][0] == t["a"].data_ptr() and y.shape == (M, N)
    assert len(described) == 1 and signature.op_kernel_hits() == hits


@cpp_kernels
def test_a_launch_learnt_across_a_forget_is_not_kept(launches, monkeypatch):
    """Plans forgotten while a call learns its own (another thread setting
    a setting, here the learning itself): that plan is not kept."""
    real = ops._Plan.describe

    def forgetting(plan, positions):
        signature.forget_op_plans()
        return real(plan, positions)
    monkeypatch.setattr(ops._Plan, "describe", forgetting)
    t = tensors()
    hits = signature.op_kernel_hits()
    for _ in range(3):
        CALLS["grouped_mm"](t)
    assert signature.op_kernel_hits() == hits


@cpp_kernels
def test_a_failing_learn_does_not_fail_the_call(launches, monkeypatch):
    def broken(plan, positions):
        raise KeyError("describe broke")
    monkeypatch.setattr(ops._Plan, "describe", broken)
    reported = []
    monkeypatch.setattr(sys, "unraisablehook", reported.append)
    t = tensors()
    y = CALLS["grouped_mm"](t)
    assert y.shape == (M, N) and launches[-1][3] == y.data_ptr()
    assert len(reported) == 1 and "describe broke" in str(reported[0].exc_value)


@cpp_kernels
def test_the_cpp_kernel_bumps_the_version_of_what_it_writes(launches):
    t = tensors()
    CALLS["grouped_gemm_out"](t)
    hits, before = signature.op_kernel_hits(), t["out"]._version
    CALLS["grouped_gemm_out"](t)
    assert signature.op_kernel_hits() == hits + 1 and t["out"]._version > before


@cpp_kernels
def test_a_call_that_needs_a_gradient_takes_autograd(launches):
    t = tensors()
    CALLS["grouped_mm"](t)
    t["a"].requires_grad_()
    hits = signature.op_kernel_hits()
    y = CALLS["grouped_mm"](t)
    assert "ggc_grouped_mmBackward" in type(y.grad_fn).__name__
    with torch.no_grad():  # a signature of its own (requires_grad): learnt, then kept
        CALLS["grouped_mm"](t)
        assert signature.op_kernel_hits() == hits
        assert CALLS["grouped_mm"](t).grad_fn is None
        assert signature.op_kernel_hits() == hits + 1


@cpp_kernels
def test_inference_mode_takes_the_backend_kernel(launches):
    t = tensors()
    with torch.inference_mode():
        CALLS["grouped_mm"](t)
        hits = signature.op_kernel_hits()
        y = CALLS["grouped_mm"](t)
    assert signature.op_kernel_hits() == hits + 1 and y.is_inference()


@cpp_kernels
def test_an_unaligned_address_takes_the_python_kernel_and_its_error(launches):
    t = tensors()
    CALLS["grouped_gemm"](t)
    # The same signature (shape, strides, dtype), 2 bytes past an aligned address.
    t["a"] = torch.randn(M * K + 1).to(BF16)[1:].view(M, K)
    hits = signature.op_kernel_hits()
    with pytest.raises(ValueError, match="16-byte aligned"):
        CALLS["grouped_gemm"](t)
    assert signature.op_kernel_hits() == hits


@cpp_kernels
def test_a_new_setting_forgets_the_kept_launches(launches, monkeypatch):
    t = tensors()
    CALLS["grouped_mm"](t)
    hits = signature.op_kernel_hits()
    monkeypatch.setattr(compiler, "_num_sms", compiler._num_sms)  # restored after
    compiler.set_num_sms(7)
    calls = len(launches)
    CALLS["grouped_mm"](t)
    assert signature.op_kernel_hits() == hits and len(launches) == calls + 1
    CALLS["grouped_mm"](t)
    assert signature.op_kernel_hits() == hits + 1


@cpp_kernels
def test_validation_by_default_forgets_the_kept_launches(launches, monkeypatch):
    t = tensors()
    CALLS["grouped_mm_grad_x"](t)
    hits = signature.op_kernel_hits()
    checked = []  # (the stub has no device to read the offsets from)
    monkeypatch.setattr(groups, "check", lambda *a, **k: checked.append(1))
    monkeypatch.setattr(groups, "VALIDATE_BY_DEFAULT", True)
    for _ in range(2):
        CALLS["grouped_mm_grad_x"](t)
    assert signature.op_kernel_hits() == hits and len(checked) == 2


@cpp_kernels
def test_an_op_the_cpp_kernel_cannot_call_back_is_refused():
    torch.library.define("ggc_test::listed", "(Tensor x, int[] sizes) -> Tensor")
    install = signature.op_kernel_installer()
    with pytest.raises(ValueError, match="argument 'sizes' is a int\\[\\]"):
        install("ggc_test::listed", "CPU", False, lambda *a: None, lambda *a: None, (), None)
    with pytest.raises(ValueError, match="no op ggc_test::missing"):
        install("ggc_test::missing", "CPU", False, lambda *a: None, lambda *a: None, (), None)


@cpp_kernels
def test_the_python_kernels_stay_on_request(monkeypatch):
    monkeypatch.setenv("GGC_PYTHON_OP_KERNELS", "1")
    assert signature.op_kernel_installer() is None


def test_a_plain_cuda_call_counts_as_plain():
    """A CUDA call of an op that mutates nothing reaches its autograd kernel
    with CUDA alone below autograd (ADInplaceOrView falls through): it must
    take the eager path (the H200 showed every such call taking custom_op's
    wrapper while CUDA alone was missing). Modes and subclasses do not."""
    keys = torch._C.DispatchKeySet
    cuda, cpu = keys(torch._C.DispatchKey.CUDA), keys(torch._C.DispatchKey.CPU)
    inplace = keys(torch._C.DispatchKey.ADInplaceOrView)
    for plain in (cuda, cpu, cuda | inplace, cpu | inplace, cuda | cpu):
        assert plain.raw_repr() in torch_ops._DIRECT, plain
    for other in (keys(torch._C.DispatchKey.Python), keys(torch._C.DispatchKey.Negative)):
        assert (cuda | other).raw_repr() not in torch_ops._DIRECT, other


@cpp_kernels
def test_grouped_gemm_calls_the_node_cannot_run_take_the_python_formula(launches):
    """torch's offs (offsets made per call) and an output dtype other than
    a's have no gradient calls the node runs (gemm_gradients.gradient_ops:
    None): every such call takes the Python formula."""
    t = operands()
    calls = {
        "offs": lambda a, b: torch.ops.ggc.grouped_gemm(a, b, offs=t["offsets"][1:]),
        "out_dtype": lambda a, b: torch.ops.ggc.grouped_gemm(
            a, b, offsets=t["offsets"], out_dtype=torch.float32),
    }
    for name, call in calls.items():
        for _ in range(3):
            a = torch.randn(M, K).to(BF16).requires_grad_()
            y = call(a, torch.randn(G, N, K).to(BF16))
            assert "ggc_grouped_gemmBackward" in y.grad_fn.name(), name


def test_grouped_gemm_gradient_calls_name_every_argument():
    """gradient_ops' calls take grouped_gemm's arguments in its schema's
    order: the gradient (-1), the forward's a, b and offsets (0, 1, 2) and
    constants for the rest, as _backward's keyword calls give them."""
    a, b = torch.randn(M, K).to(BF16), torch.randn(G, N, K).to(BF16)
    offsets = torch.tensor([0, 30, M], dtype=I32)
    schema = torch_ops.grouped_gemm_op._opoverload._schema
    args = [a, b, offsets] + [arg.default_value for arg in schema.arguments[3:]]
    (dx_input, dx_op, dx_sources, dx_constants), (dw_input, _, dw_sources, dw_constants) = (
        gemm_gradients.gradient_ops(*args))
    assert (dx_input, dw_input, dx_op) == (0, 1, "ggc::grouped_gemm")
    names = [arg.name for arg in schema.arguments]
    assert dx_sources[:3] == [-1, 1, 2] and dw_sources[:2] == [-1, 0]
    assert dw_sources[names.index("k_offsets")] == 2
    constant = {n: dx_constants[-2 - s] for n, s in zip(names, dx_sources) if s <= -2}
    assert constant["b_layout"] == "kn" and constant["zero_ungrouped"] is True
    assert constant["masked_m"] is None and constant["out_dtype"] == BF16
    constant = {n: dw_constants[-2 - s] for n, s in zip(names, dw_sources) if s <= -2}
    assert constant["out_dtype"] == BF16 and constant["offsets"] is None
    args[9] = torch.float32  # an output dtype other than a's
    assert gemm_gradients.gradient_ops(*args) is None
    # f16 inputs: the default output is bf16, whose gradient _backward casts
    f16 = [a.half(), b.half(), offsets] + args[3:9] + [None] + args[10:]
    assert gemm_gradients.gradient_ops(*f16) is None
    f16[9] = torch.float16
    assert torch.float16 in gemm_gradients.gradient_ops(*f16)[0][3]  # grad_a in f16
