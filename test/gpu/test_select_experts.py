"""gg.select_experts' kernel (ggc.moe.router_kernel) against fp64: each
token's top-k experts exactly as a stable descending sort of its logits
chooses them (equal logits: the lower expert first) and their softmax
weights within 1e-5, on fresh random logits (bf16, f16, f32), with and
without renormalisation, token counts 0, 1 and off every CTA's four, E
from 1 to 1,024 (off the lanes' 32 too) and top_k up to 32; heavy ties;
masked (-inf) experts; a NaN logit; sigmoid scores, correction biases,
grouped top-k and scaling (DeepSeek-V3), where near ties (within 1e-6)
may go either way. gg.select_experts_backward's kernel: the renormalised
weights' gradient against fp64's, exactly zero at every expert not
chosen. And `ggc.moe.route`'s use of them: the same
as its torch path, which it keeps for a gradient of any routing but
renormalised softmax; inside a CUDA graph."""

import os

import pytest

torch = pytest.importorskip("torch")

from ggc.moe import route, router_kernel, routing  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


@pytest.fixture
def kernel_calls(monkeypatch):
    """The routings gg.select_experts' kernel ran, in order (so that a test
    of route() fails where it fell back to torch)."""
    calls = []
    original = router_kernel._forward
    monkeypatch.setattr(router_kernel, "_forward",
                        lambda *args: calls.append(args[2]) or original(*args))
    return calls


def fresh_generator():
    seed = int.from_bytes(os.urandom(4), "little")
    return torch.Generator(device="cuda").manual_seed(seed), seed


def reference(logits, top_k, renormalize):
    """fp64 weights and the ids a stable descending sort chooses."""
    values = logits.double()
    ids = torch.sort(values, dim=1, descending=True, stable=True).indices[:, :top_k]
    weights = torch.softmax(values, dim=1).gather(1, ids)
    if renormalize:
        weights = weights / weights.sum(dim=1, keepdim=True)
    return weights, ids.int()


def check(logits, top_k, renormalize, seed):
    made = router_kernel.select_experts(logits, top_k, router_kernel.KernelRouting(renormalize))
    assert made is not None, "the kernel declined logits it takes"
    weights, ids = made
    want_weights, want_ids = reference(logits, top_k, renormalize)
    assert weights.dtype == torch.float32 and ids.dtype == torch.int32
    assert weights.shape == ids.shape == (logits.shape[0], top_k)
    assert torch.equal(ids, want_ids), f"seed {seed}"
    if logits.shape[0]:
        error = ((weights.double() - want_weights).norm() / want_weights.norm()).item()
        assert error < 1e-5, f"relative error {error:.2e}, seed {seed}"
        worst = ((weights.double() - want_weights).abs() / want_weights).max().item()
        assert worst < 2e-5, f"worst element {worst:.2e}, seed {seed}"


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float16, torch.float32])
@pytest.mark.parametrize("experts,top_k", [(1, 1), (8, 2), (40, 3), (128, 8), (256, 8),
                                           (1024, 32)])
@pytest.mark.parametrize("tokens", [0, 1, 5, 1031])
@pytest.mark.parametrize("renormalize", [True, False])
def test_matches_fp64(dtype, experts, top_k, tokens, renormalize):
    gen, seed = fresh_generator()
    logits = (torch.randn(tokens, experts, device="cuda", generator=gen) * 3).to(dtype)
    check(logits, top_k, renormalize, seed)


@pytest.mark.parametrize("experts,top_k", [(8, 2), (128, 8), (300, 32)])
def test_equal_logits_choose_the_lower_expert_first(experts, top_k):
    gen, seed = fresh_generator()
    logits = torch.randint(-2, 3, (777, experts), device="cuda", generator=gen).to(torch.bfloat16)
    check(logits, top_k, True, seed)


def test_masked_experts_are_chosen_last_with_weight_zero():
    gen, seed = fresh_generator()
    logits = torch.randn(64, 128, device="cuda", generator=gen)
    logits[:, 3:] = float("-inf")  # three experts left a token
    weights, ids = router_kernel.select_experts(logits, 5, router_kernel.KernelRouting(False))
    assert torch.equal(ids[:, :3].sort(dim=1).values,
                       torch.arange(3, device="cuda", dtype=torch.int32).expand(64, 3)), seed
    assert (weights[:, 3:] == 0).all() and (ids[:, 3:] >= 3).all()
    assert (ids.sort(dim=1).values.diff(dim=1) > 0).all(), "an expert chosen twice"
    check(logits, 3, True, seed)


def test_a_nan_logit_makes_its_token_weights_nan_only():
    gen, seed = fresh_generator()
    logits = torch.randn(9, 64, device="cuda", generator=gen).bfloat16()
    logits[4, 17] = float("nan")
    weights, ids = router_kernel.select_experts(logits, 4, router_kernel.KernelRouting(True))
    assert weights[4].isnan().all()
    assert ((ids[4] >= 0) & (ids[4] < 64)).all() and ids[4].unique().numel() == 4
    rest = [t for t in range(9) if t != 4]
    want_weights, want_ids = reference(logits[rest], 4, True)
    assert torch.equal(ids[rest], want_ids), seed
    assert torch.allclose(weights[rest].double(), want_weights, rtol=2e-5, atol=0)


@pytest.mark.parametrize("scoring,renormalize", [("softmax", True), ("softmax", False),
                                                 ("topk_softmax", True)])
def test_route_takes_the_kernel_and_agrees_with_its_torch_path(monkeypatch, kernel_calls,
                                                               scoring, renormalize):
    gen, seed = fresh_generator()
    logits = torch.randn(4099, 128, device="cuda", generator=gen)
    weights, ids = route(logits, 8, scoring=scoring, renormalize=renormalize)
    assert kernel_calls == [router_kernel.KernelRouting(renormalize or scoring == "topk_softmax")]
    monkeypatch.setattr(routing, "ROUTER_KERNEL", False)
    torch_weights, torch_ids = route(logits, 8, scoring=scoring, renormalize=renormalize)
    assert torch.equal(ids, torch_ids), seed
    assert torch.allclose(weights, torch_weights, rtol=2e-5, atol=0), seed


def reference_gradient(logits, ids, grad):
    """The logits' gradient of sum(w * grad) in fp64, w the renormalised
    weights of the given ids."""
    values = logits.detach().double().requires_grad_()
    chosen = torch.softmax(values, dim=1).gather(1, ids.long())
    (chosen / chosen.sum(dim=1, keepdim=True) * grad.double()).sum().backward()
    return values.grad


@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("experts,top_k", [(8, 2), (128, 8), (300, 32)])
@pytest.mark.parametrize("tokens", [0, 1, 1031])
def test_the_gradient_matches_fp64(dtype, experts, top_k, tokens):
    gen, seed = fresh_generator()
    logits = (torch.randn(tokens, experts, device="cuda", generator=gen) * 3).to(dtype)
    logits.requires_grad_()
    assert router_kernel.takes(logits, top_k)
    weights, ids = route(logits, top_k)
    assert weights.grad_fn is not None and "SelectExperts" in type(weights.grad_fn).__name__
    grad = torch.randn(tokens, top_k, device="cuda", generator=gen)
    (weights * grad).sum().backward()
    check_gradient(logits, ids, grad, seed)


def check_gradient(logits, ids, grad, seed):
    got = logits.grad
    assert got.dtype == logits.dtype and got.shape == logits.shape
    if not logits.shape[0]:
        return
    want = reference_gradient(logits, ids, grad)
    unchosen = torch.ones_like(got, dtype=torch.bool).scatter_(1, ids.long(), False)
    assert (got[unchosen] == 0).all(), f"seed {seed}"
    error = ((got.double() - want).norm() / want.norm()).item()
    bound = 4e-3 if logits.dtype == torch.bfloat16 else 2e-5
    assert error < bound, f"{error:.2e}, seed {seed}"


def test_the_gradient_from_a_view_off_16_bytes():
    """The weights' gradient a view 8 bytes into a larger one (torch.cat's
    backward hands out such views): copied to an aligned buffer first."""
    gen, seed = fresh_generator()
    logits = torch.randn(37, 64, device="cuda", generator=gen, requires_grad=True)
    weights, ids = route(logits, 2)
    grad = torch.randn(38, 2, device="cuda", generator=gen)
    (torch.cat([torch.zeros(1, 2, device="cuda"), weights]) * grad).sum().backward()
    check_gradient(logits, ids, grad[1:], seed)


def test_route_keeps_torch_for_a_gradient_without_renormalisation_and_scales(kernel_calls):
    logits = torch.randn(33, 64, device="cuda", requires_grad=True)
    assert not router_kernel.takes(logits, 4, router_kernel.KernelRouting(False))
    weights, _ = route(logits, 4, renormalize=False)
    assert "SelectExperts" not in type(weights.grad_fn).__name__
    weights.sum().backward()
    assert logits.grad is not None and logits.grad.abs().sum() > 0
    with torch.no_grad():
        assert router_kernel.takes(logits, 4)
        scaled, ids = route(logits, 4, scaling_factor=2.5)
        plain, plain_ids = route(logits, 4)
    assert [c.scaling for c in kernel_calls] == [2.5, 1.0]
    assert torch.equal(ids, plain_ids)
    assert torch.allclose(scaled, plain * 2.5, rtol=2e-5, atol=0)


def test_route_in_a_cuda_graph(kernel_calls):
    gen, seed = fresh_generator()
    logits = torch.randn(16, 128, device="cuda", generator=gen).bfloat16()
    route(logits, 8)  # compiled and recorded before capture
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        weights, ids = route(logits, 8)
    assert len(kernel_calls) == 2
    logits.copy_(torch.randn(16, 128, device="cuda", generator=gen).bfloat16())
    graph.replay()
    want_weights, want_ids = reference(logits, 8, True)
    assert torch.equal(ids, want_ids), seed
    assert torch.allclose(weights.double(), want_weights, rtol=2e-5, atol=0), seed


def routing_reference(logits, top_k, kr, bias):
    """fp64: (scores, ranking values, group ranks or None, kept-group mask
    per expert or None, ids by a stable descending sort)."""
    values = logits.double()
    scores = torch.sigmoid(values) if kr.sigmoid else torch.softmax(values, dim=1)
    # Without a bias softmax ranks by logit: the same order as its scores.
    choice = scores + bias.double() if bias is not None else (scores if kr.sigmoid else values)
    ranks = allowed = None
    ranked = choice
    if kr.groups > 1:
        tokens, experts = choice.shape
        grouped = choice.view(tokens, kr.groups, experts // kr.groups)
        ranks = grouped.topk(2, dim=-1).values.sum(-1) if bias is not None else grouped.amax(-1)
        keep = torch.sort(ranks, dim=1, descending=True, stable=True).indices[:, :kr.topk_groups]
        kept = torch.zeros_like(ranks, dtype=torch.bool).scatter_(1, keep, True)
        allowed = kept.repeat_interleave(experts // kr.groups, dim=1)
        ranked = choice.masked_fill(~allowed, float("-inf"))
    ids = torch.sort(ranked, dim=1, descending=True, stable=True).indices[:, :top_k]
    return scores, choice, ranks, allowed, ids


def check_routing(logits, top_k, kr, bias, weights, ids, seed, near=1e-6):
    """ids as fp64 chooses them, but where choice values (or group ranks)
    lie within `near` of each other, where either may be chosen; weights
    within 1e-5 of fp64's for the ids chosen."""
    scores, choice, ranks, allowed, want = routing_reference(logits, top_k, kr, bias)
    got = ids.long()
    assert ((got >= 0) & (got < logits.shape[1])).all(), seed
    assert (got.sort(dim=1).values.diff(dim=1) > 0).all(), f"an expert chosen twice, seed {seed}"
    differ = (got != want).any(dim=1).nonzero().flatten().tolist()
    for t in differ:
        if ranks is not None:  # every chosen group at least the last kept one's rank - near
            last_kept = ranks[t].sort(descending=True).values[kr.topk_groups - 1]
            chosen_groups = got[t] // (logits.shape[1] // kr.groups)
            assert (ranks[t][chosen_groups] >= last_kept - near).all(), (t, seed)
        assert any(torch.allclose(choice[t][got[t]], pool.sort(descending=True).values[:top_k],
                                  atol=near, rtol=0)
                   for pool in candidate_pools(choice[t], allowed, got[t], kr, t)), \
            (t, seed)
    assert len(differ) <= max(2, logits.shape[0] // 100), f"{len(differ)} tokens differ, seed {seed}"
    want_weights = scores.gather(1, got)
    if kr.renormalize:
        want_weights = want_weights / want_weights.sum(dim=1, keepdim=True)
    want_weights = want_weights * kr.scaling
    if logits.shape[0]:
        error = ((weights.double() - want_weights).norm() / want_weights.norm()).item()
        assert error < 1e-5, f"relative error {error:.2e}, seed {seed}"


def candidate_pools(choice, allowed, chosen, kr, t):
    """The ranking values the kernel may have chosen from for token t: all
    of them without groups; the kept groups' and, where a chosen expert's
    group was not kept (its rank near-tied), the kept groups with that one
    in place of each near-tied kept group in turn."""
    if allowed is None:
        return [choice]
    kept = allowed[t]
    pools = [choice.masked_fill(~kept, float("-inf"))]
    size = choice.shape[0] // kr.groups
    outside = {int(g) for g in chosen // size if not kept[int(g) * size]}
    if len(outside) == 1:
        (extra,) = outside
        for group in range(kr.groups):
            if kept[group * size]:
                swapped = kept.clone()
                swapped[group * size:(group + 1) * size] = False
                swapped[extra * size:(extra + 1) * size] = True
                pools.append(choice.masked_fill(~swapped, float("-inf")))
    return pools


ROUTINGS = {  # name: (E, top_k, KernelRouting(...), bias)
    "deepseek-v3": (256, 8, (True, True, 8, 4, True, 2.5), True),
    "sigmoid-bias": (160, 6, (False, True, 1, 1, True, 1.0), True),
    "softmax-groups": (64, 6, (False, False, 8, 3, False, 1.0), False),
    "softmax-bias-groups-of-10": (40, 4, (True, False, 4, 2, True, 0.5), True),
    "sigmoid-groups-no-bias": (96, 5, (True, True, 3, 2, False, 1.0), False),
    "sigmoid-plain": (64, 4, (False, True, 1, 1, False, 1.0), False),
    "every-group-kept": (32, 3, (True, False, 4, 4, True, 1.0), True),
    "32-groups": (64, 4, (True, True, 32, 31, True, 1.0), True),
}


@pytest.mark.parametrize("name", list(ROUTINGS))
@pytest.mark.parametrize("dtype", [torch.bfloat16, torch.float32])
@pytest.mark.parametrize("tokens", [0, 1, 1031])
def test_grouped_and_biased_routing_matches_fp64(name, dtype, tokens):
    experts, top_k, routing, biased = ROUTINGS[name]
    kr = router_kernel.KernelRouting(*routing)
    gen, seed = fresh_generator()
    logits = (torch.randn(tokens, experts, device="cuda", generator=gen) * 2).to(dtype)
    bias = torch.randn(experts, device="cuda", generator=gen) * 0.1 if biased else None
    made = router_kernel.select_experts(logits, top_k, kr, bias)
    assert made is not None
    weights, ids = made
    assert weights.shape == ids.shape == (tokens, top_k)
    check_routing(logits, top_k, kr, bias, weights, ids, seed)


def test_route_runs_topk_softmax_with_groups_as_the_kernel(kernel_calls):
    """topk_softmax's groups rank by logit, as the renormalised softmax's."""
    gen, seed = fresh_generator()
    logits = torch.randn(1031, 64, device="cuda", generator=gen)
    weights, ids = route(logits, 4, scoring="topk_softmax", n_group=8, topk_group=3)
    kr = router_kernel.KernelRouting(True, False, 8, 3, False, 1.0)
    assert kernel_calls == [kr]
    check_routing(logits, 4, kr, None, weights, ids, seed)


def test_route_runs_deepseek_v3_routing_as_the_kernel(monkeypatch, kernel_calls):
    """route()'s sigmoid, correction bias, grouped top-k and scaling go
    to the kernel; both paths choose as fp64 does (near ties aside)."""
    gen, seed = fresh_generator()
    logits = torch.randn(2048, 256, device="cuda", generator=gen)
    bias = torch.randn(256, device="cuda", generator=gen) * 0.1
    args = dict(scoring="sigmoid", n_group=8, topk_group=4, correction_bias=bias,
                scaling_factor=2.5)
    kr = router_kernel.KernelRouting(True, True, 8, 4, True, 2.5)
    weights, ids = route(logits, 8, **args)
    assert kernel_calls == [kr]
    check_routing(logits, 8, kr, bias, weights, ids, seed)
    monkeypatch.setattr(routing, "ROUTER_KERNEL", False)
    torch_weights, torch_ids = route(logits, 8, **args)
    check_routing(logits, 8, kr, bias, torch_weights, torch_ids, seed)
