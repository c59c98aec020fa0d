"""ggc.vllm.fused_experts on the GPU against vLLM's own Triton fused-MoE
path (the vendored peer ../shared/peers/vllm_fused_moe.py, copied into
.peers/ for a device run; skipped where it or triton is missing) on the
same inputs, and against fp64.

Fresh random inputs per test; ragged routing with empty and one-token
experts and sizes off the tile boundaries."""

import importlib.util
import os

import pytest

torch = pytest.importorskip("torch")

from ggc import vllm  # noqa: E402

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")

HERE = os.path.dirname(os.path.abspath(__file__))
PLACES = [os.path.join(HERE, "..", "..", *parts, "vllm_fused_moe.py")
          for parts in ((".peers",), ("shared", "peers"), ("..", "shared", "peers"))]
# Two bf16 results of nearly equal f32 sums (vLLM rounds the activation's
# product and each route's output to bf16 before its sum, ggc sums in f32).
TOL_PEER = 1e-2
TOL_REF = 1e-2


def _load_peer():
    path = next((p for p in PLACES if os.path.exists(p)), None)
    if path is None or not torch.cuda.is_available():
        return None, "vllm_fused_moe.py not found (copy ../shared/peers into .peers/)"
    try:
        spec = importlib.util.spec_from_file_location("vllm_fused_moe_peer", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    except Exception as e:  # noqa: BLE001 - triton missing or broken
        return None, f"the vLLM peer does not load: {type(e).__name__}: {e}"
    return module, ""


PEER, WHY_NOT = _load_peer()
needs_peer = pytest.mark.skipif(PEER is None, reason=WHY_NOT)


def inputs(tokens, hidden, inter, experts, top_k, seed):
    """x, w1, w2, weights, ids; expert 0 gets no token, expert 1 one."""
    gen = torch.Generator(device="cuda").manual_seed(seed)
    x = torch.randn(tokens, hidden, device="cuda", generator=gen).bfloat16()
    w1 = (torch.randn(experts, 2 * inter, hidden, device="cuda", generator=gen)
          / hidden ** 0.5).bfloat16()
    w2 = (torch.randn(experts, hidden, inter, device="cuda", generator=gen)
          / inter ** 0.5).bfloat16()
    logits = torch.randn(tokens, experts, device="cuda", generator=gen)
    logits[:, 0] = -1e9
    logits[:, 1] = -1e9
    weights, ids = vllm.fused_topk(x, logits, top_k, renormalize=True)
    if tokens:
        ids[0, -1] = 1
    return x, w1, w2, weights, ids


def reference(x, w1, w2, weights, ids, expert_map=None):
    out = torch.zeros(x.shape[0], w2.shape[1], dtype=torch.float64, device=x.device)
    local = ids.long() if expert_map is None else expert_map.long()[ids.long()]
    for e in local.unique().tolist():
        if e < 0:
            continue
        tokens, slots = (local == e).nonzero(as_tuple=True)
        h = x[tokens].double() @ w1[e].double().T
        gate, up = h.chunk(2, dim=-1)
        y = (torch.nn.functional.silu(gate) * up) @ w2[e].double().T
        out.index_add_(0, tokens, y * weights[tokens, slots].double().unsqueeze(1))
    return out


def rel(a, b):
    a, b = a.double(), b.double()
    assert torch.isfinite(a).all()
    return ((a - b).norm() / b.norm()).item()


def peer(x, w1, w2, weights, ids):
    config, _ = PEER.pick_config(x.shape[0], w1.shape[0], w2.shape[2], w2.shape[1],
                                 ids.shape[1])
    return PEER.fused_experts_bf16(x, w1, w2, weights, ids, config)


@needs_peer
@pytest.mark.parametrize("tokens,hidden,inter,experts,top_k", [
    (1, 512, 256, 8, 2), (37, 1024, 384, 8, 2), (300, 2048, 768, 16, 4),
    (1000, 1024, 256, 64, 8)])
def test_matches_vllm_triton_path(tokens, hidden, inter, experts, top_k):
    x, w1, w2, weights, ids = inputs(tokens, hidden, inter, experts, top_k, seed=tokens)
    with torch.no_grad():
        ours = vllm.fused_experts(x, w1, w2, weights, ids)
        theirs = peer(x, w1, w2, weights, ids)
    assert rel(ours, theirs) < TOL_PEER
    ref = reference(x, w1, w2, weights, ids)
    assert rel(ours, ref) < TOL_REF


@needs_peer
def test_expert_map_parts_add_up_to_vllm_whole():
    experts = 16
    x, w1, w2, weights, ids = inputs(200, 1024, 256, experts, 4, seed=7)
    with torch.no_grad():
        whole = peer(x, w1, w2, weights, ids)
        total = torch.zeros_like(whole, dtype=torch.float64)
        for rank in range(4):
            held = torch.arange(rank, experts, 4, device="cuda")
            expert_map = torch.full((experts,), -1, dtype=torch.int32, device="cuda")
            expert_map[held] = torch.arange(held.numel(), dtype=torch.int32, device="cuda")
            part = vllm.fused_experts(x, w1[held].contiguous(), w2[held].contiguous(), weights,
                                      ids, global_num_experts=experts, expert_map=expert_map)
            total += part.double()
    assert rel(total, whole) < TOL_PEER


def test_router_weight_on_input_and_inplace():
    x, w1, w2, weights, ids = inputs(129, 512, 256, 8, 1, seed=3)
    weights = weights * 2.5
    with torch.no_grad():
        scaled = (x.double() * weights.double()).bfloat16()
        ref = reference(scaled, w1, w2, torch.ones_like(weights), ids)
        out = vllm.fused_experts(x.clone(), w1, w2, weights, ids,
                                 apply_router_weight_on_input=True)
        assert rel(out, ref) < TOL_REF
        buf = x.clone()
        again = vllm.fused_experts(buf, w1, w2, weights, ids, inplace=True,
                                   apply_router_weight_on_input=True)
    assert again is buf and torch.equal(buf, out)
