"""The permutation kernels (ggc.moe.routes, compiled from gg.sort_routes)
against the torch path they replace: the same offsets, order, source,
position and routing weights, bit for bit, on ragged routing with empty
experts, invalid ids, int32 and int64 ids, f32 and bf16 weights, no
routes, and sizes around every round, chunk and warp boundary (one chunk:
the place kernel alone; more: the count kernel first); past MAX_EXPERTS
they decline."""

import os
import sys

import pytest

torch = pytest.importorskip("torch")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "python"))
from ggc.moe import layer, routes  # noqa: E402

permute = sys.modules["ggc.moe.permute"]  # ggc.moe.permute is the function

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def torch_path(ids, weights, experts):
    offsets, order, source, position, invalid = permute.sort_routes(ids, experts)
    return offsets, order, source, position, layer._poisoned(weights, invalid)[order]


# (tokens, top_k, experts)
CASES = [(1, 8, 128), (1, 2, 8), (3, 1, 4), (13, 6, 32), (16, 8, 128), (64, 8, 256),
         (127, 1, 16), (129, 1, 16), (64, 16, 8), (0, 4, 8), (1, 1, 1), (341, 3, 5),
         (128, 8, 512), (512, 8, 128), (513, 8, 128), (1024, 8, 128), (4097, 1, 3),
         (4095, 2, 64), (2731, 3, 256), (16384, 8, 128), (3000, 2, 8)]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "x".join(map(str, c)))
@pytest.mark.parametrize("ids_dtype", [torch.int32, torch.int64])
def test_matches_the_torch_path(case, ids_dtype):
    tokens, top_k, experts = case
    gen = torch.Generator(device="cuda").manual_seed(sum(case))
    ids = torch.randint(0, experts, (tokens, top_k), device="cuda", generator=gen,
                        dtype=ids_dtype)
    if tokens * top_k > 4:  # a few ids outside [0, E), and an expert left empty
        ids[ids == experts // 2] = 0
        ids.view(-1)[1] = experts
        ids.view(-1)[3] = -7
    weights = torch.rand(tokens, top_k, device="cuda", generator=gen)
    for w in (weights, weights.to(torch.bfloat16)):
        assert routes.usable(ids, experts)
        got = routes.sort_routes(ids, w, experts)
        want = torch_path(ids, w, experts)
        check_equal(got, want)
        again = routes.sort_routes(ids, w, experts)
        for first, second in zip(got, again):  # the same bits on every run
            assert torch.equal(first.nan_to_num(), second.nan_to_num())


def check_equal(got, want):
    """The kernels' results are the torch path's, but `source` is int32."""
    for name, g, x in zip(("offsets", "order", "source", "position", "route"), got, want):
        if name == "source":
            assert g.dtype == torch.int32, g.dtype
            x = x.to(torch.int32)
        assert g.dtype == x.dtype and g.shape == x.shape, name
        assert torch.equal(g.isnan(), x.isnan()) if name == "route" else True
        assert torch.equal(g.nan_to_num(), x.nan_to_num()), name


def test_declines_past_max_experts_and_off_alignment():
    ids = torch.zeros(4, 1, dtype=torch.int32, device="cuda")
    assert not routes.usable(ids, routes.MAX_EXPERTS + 1)
    assert routes.usable(ids, routes.MAX_EXPERTS)
    assert not routes.usable(ids.to(torch.int16), 8)
    big = torch.zeros(20, dtype=torch.int32, device="cuda")
    unaligned = big[1:9].view(4, 2)  # 4 bytes past a 16-byte boundary
    assert routes.sort_routes(unaligned, torch.rand(4, 2, device="cuda"), 8) is None


def test_strided_and_expanded_inputs():
    """Views the kernel cannot read as packed arrays are copied first: the
    same results as the torch path."""
    gen = torch.Generator(device="cuda").manual_seed(5)
    full = torch.randint(0, 16, (40, 4), device="cuda", generator=gen, dtype=torch.int32)
    weights = torch.rand(40, 4, device="cuda", generator=gen)
    cases = [(full[:, ::2], weights[:, ::2]), (full[:, :1], weights[:, 1:2]),
             (full[:1, :2].expand(40, 2), weights[:1, :2].expand(40, 2)),
             (full.t()[:2].t(), weights.t()[:2].t())]
    for ids, w in cases:
        check_equal(routes.sort_routes(ids, w, 16), torch_path(ids, w, 16))
