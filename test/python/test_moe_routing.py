"""ggc.moe.route against routing written out per token, and its errors."""

import pytest

torch = pytest.importorskip("torch")

from ggc import moe  # noqa: E402


def logits(tokens=40, experts=16, seed=0):
    return torch.randn(tokens, experts, generator=torch.Generator().manual_seed(seed))


def per_token(scores, choice, top_k, n_group=None, topk_group=None, biased=False):
    """Grouped top-k one token at a time, in plain Python over fp64 values:
    groups ranked by their best (or, biased, two best) choice values, the
    top_k experts taken from the kept groups; returns (ids, scores) lists."""
    out_ids, out_scores = [], []
    experts = len(choice[0])
    for s, c in zip(scores.tolist(), choice.tolist()):
        allowed = range(experts)
        if n_group:
            size = experts // n_group
            groups = [sorted(c[g * size:(g + 1) * size], reverse=True) for g in range(n_group)]
            rank = [sum(v[:2]) if biased else v[0] for v in groups]
            kept = sorted(range(n_group), key=lambda g: -rank[g])[:topk_group]
            allowed = [e for e in range(experts) if e // size in kept]
        ids = sorted(allowed, key=lambda e: -c[e])[:top_k]
        out_ids.append(sorted(ids))
        out_scores.append([s[e] for e in sorted(ids)])
    return out_ids, out_scores


def by_id(weights, ids):
    """(sorted ids, weights in that order) per token: top-k's order is not
    part of the contract."""
    order = ids.long().argsort(dim=1)
    return ids.long().gather(1, order).tolist(), weights.gather(1, order)


def test_softmax_then_topk_renormalised_equals_softmax_over_topk():
    x = logits()
    w1, ids1 = moe.route(x, 4, scoring="softmax", renormalize=True)
    w2, ids2 = moe.route(x, 4, scoring="topk_softmax")
    assert ids1.dtype == torch.int32 and w1.dtype == torch.float32
    assert torch.equal(ids1, ids2)
    torch.testing.assert_close(w1, w2)
    ids, weights = by_id(w1, ids1)
    want_ids, want = per_token(torch.softmax(x.double(), -1), x.double(), 4)
    assert ids == want_ids
    want = torch.tensor(want, dtype=torch.float64)
    torch.testing.assert_close(weights.double(), want / want.sum(1, keepdim=True))


def test_softmax_without_renormalisation_keeps_the_probabilities():
    x = logits(seed=1)
    w, ids = moe.route(x, 2, renormalize=False, scaling_factor=2.5)
    probs = torch.softmax(x, -1)
    torch.testing.assert_close(w, 2.5 * probs.gather(1, ids.long()))
    assert (w.sum(1) < 2.5).all()


@pytest.mark.parametrize("bias", [False, True])
def test_grouped_topk_with_sigmoid_and_correction_bias(bias):
    """DeepSeek-V3's routing: 16 experts in 4 groups, 2 groups kept, top-3;
    the bias picks experts and groups but the weights are the unbiased
    sigmoid scores, renormalised and scaled."""
    x = logits(tokens=64, experts=16, seed=2)
    correction = (torch.randn(16, generator=torch.Generator().manual_seed(3))
                  if bias else None)
    w, ids = moe.route(x, 3, scoring="sigmoid", n_group=4, topk_group=2,
                       correction_bias=correction, scaling_factor=2.0)
    scores = x.double().sigmoid()
    choice = scores + correction.double() if bias else scores
    want_ids, want = per_token(scores, choice, 3, 4, 2, biased=bias)
    got_ids, got = by_id(w, ids)
    assert got_ids == want_ids
    want = torch.tensor(want, dtype=torch.float64)
    torch.testing.assert_close(got.double(), 2.0 * want / want.sum(1, keepdim=True))
    kept_groups = torch.tensor(got_ids) // 4
    assert all(len(set(g)) <= 2 for g in kept_groups.tolist())


def test_grouping_changes_the_choice():
    """Experts 0 and 1 are the second and third best, but their group (0-3)
    ranks below the group of the best one (4-7): with topk_group=1 only
    group 4-7 is kept, so the grouping is not a no-op."""
    x = torch.full((1, 8), -5.0)
    x[0, 4], x[0, 0], x[0, 1] = 3.0, 2.0, 1.9  # group 1 has the best expert
    _, plain = moe.route(x, 2, scoring="sigmoid")
    _, grouped = moe.route(x, 2, scoring="sigmoid", n_group=2, topk_group=1)
    assert sorted(plain[0].tolist()) == [0, 4]
    assert 4 in grouped[0].tolist() and set(grouped[0].tolist()) <= {4, 5, 6, 7}


ROUTE_ERRORS = [
    (lambda x: (x[0], 2), {}, r"router_logits must be a \[T, E\] tensor"),
    (lambda x: (x.long(), 2), {}, "router_logits must be floating point"),
    (lambda x: (x, 17), {}, r"top_k must be an int in \[1, E = 16\], got 17"),
    (lambda x: (x, 0), {}, "top_k must be an int"),
    (lambda x: (x, 2), dict(scoring="relu"), "scoring must be one of"),
    (lambda x: (x, 2), dict(n_group=4), "both n_group and topk_group"),
    (lambda x: (x, 2), dict(n_group=5, topk_group=1), "n_group = 5 must divide"),
    (lambda x: (x, 2), dict(n_group=4, topk_group=5), "topk_group = 5 exceeds n_group"),
    (lambda x: (x, 9), dict(n_group=4, topk_group=2), "top_k = 9 exceeds the 8 experts"),
    (lambda x: (x, 2), dict(n_group=16, topk_group=2, correction_bias=torch.zeros(16)),
     "two best experts"),
    (lambda x: (x, 2), dict(correction_bias=torch.zeros(15)),
     r"correction_bias must be a \[E\] = \[16\] tensor, got shape \[15\]"),
    (lambda x: (x, 2), dict(scoring="topk_softmax", correction_bias=torch.zeros(16)),
     "correction_bias ranks scores"),
    (lambda x: (x, 2), dict(scaling_factor="2"), "scaling_factor must be a number"),
    (lambda x: (x, 2), dict(scaling_factor=float("nan")), "scaling_factor must be finite"),
    (lambda x: (x, 2), dict(renormalize="no"), "renormalize must be True or False, got 'no'"),
]


@pytest.mark.parametrize("make, kwargs, message", ROUTE_ERRORS)
def test_route_errors_name_the_argument(make, kwargs, message):
    with pytest.raises((ValueError, TypeError), match=message):
        moe.route(*make(logits()), **kwargs)


@pytest.mark.parametrize("experts, key", [(8, torch.uint8), (255, torch.uint8),
                                          (256, torch.int16), (40000, torch.int32)])
def test_routes_sort_on_the_narrowest_key_as_on_int32(experts, key):
    """sort_routes sorts expert ids as the narrowest integer holding 0..E
    (torch's radix sort takes a pass per key byte): the same permutation as
    a stable sort of the int32 ids, invalid ids (counted on the nearest
    expert) and another rank's routes (after every group) included."""
    from ggc.moe.permute import _sort_key_dtype, sort_routes
    assert _sort_key_dtype(experts) == key
    gen = torch.Generator().manual_seed(experts)
    ids = torch.randint(0, experts, (50, 4), generator=gen, dtype=torch.int32)
    ids[3, 1], ids[7, 0] = experts + 5, -2
    skipped = torch.zeros(200, dtype=torch.bool)
    skipped[[10, 11, 90]] = True
    offsets, order, source, position, invalid = sort_routes(ids, experts, skipped)
    flat = ids.reshape(-1)
    wide = flat.clamp(0, experts - 1).masked_fill(skipped, experts)
    want = torch.sort(wide, stable=True)[1]
    assert torch.equal(order, want)
    assert torch.equal(offsets, torch.searchsorted(wide[want], torch.arange(
        experts + 1, dtype=wide.dtype), out_int32=True))
    assert torch.equal(position[order], torch.arange(200))
    assert torch.equal(source, order // 4)
    assert invalid.nonzero().flatten().tolist() == [13, 28]


@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16])
def test_sorted_weights_gradient_is_the_gathered_weights_gradient(dtype):
    """permute._SortedWeights (training's sorted weights from gg.sort_routes'
    kernel) passes route r's gradient from its sorted row position[r]:
    topk_weights' gradient equals the one through torch's gather of the
    weights by `order`, in topk_weights' dtype, for valid routes; the
    forward returns the kernel's weights unchanged."""
    from ggc.moe.permute import _SortedWeights, sort_routes
    gen = torch.Generator().manual_seed(3)
    ids = torch.randint(0, 16, (30, 4), generator=gen, dtype=torch.int32)
    weights = torch.rand(30, 4, generator=gen).to(dtype).requires_grad_()
    _, order, _, position, invalid = sort_routes(ids, 16)
    assert not invalid.any()
    route = weights.detach().reshape(-1).float().index_select(0, order)
    upstream = torch.randn(120, generator=gen)
    got = _SortedWeights.apply(weights, route, position)
    assert torch.equal(got, route)
    (got_grad,) = torch.autograd.grad(got, weights, upstream)
    want = weights.reshape(-1).float().index_select(0, order)
    (want_grad,) = torch.autograd.grad(want, weights, upstream)
    assert got_grad.dtype == dtype and got_grad.shape == weights.shape
    assert torch.equal(got_grad, want_grad)
