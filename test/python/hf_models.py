"""Tiny random transformers MoE models of each family ggc.moe.hf loads,
for the CPU and the GPU tests (transformers is a test dependency)."""

import torch

FAMILIES = ("mixtral", "qwen3_moe", "deepseek_v3", "gpt_oss")

# H and I multiples of 128 (FP8's blocks); experts off powers of two.
H, I, E, TOP_K, VOCAB = 256, 128, 6, 2, 320


def config(family):
    from transformers import AutoConfig
    common = dict(hidden_size=H, num_hidden_layers=2, num_attention_heads=4,
                  num_key_value_heads=2, vocab_size=VOCAB, num_experts_per_tok=TOP_K,
                  max_position_embeddings=256)
    if family == "mixtral":
        extra = dict(intermediate_size=I, num_local_experts=E)
    elif family == "qwen3_moe":
        extra = dict(intermediate_size=2 * I, moe_intermediate_size=I, num_experts=E,
                     norm_topk_prob=False, head_dim=64)
    elif family == "deepseek_v3":
        extra = dict(intermediate_size=2 * I, moe_intermediate_size=I, n_routed_experts=E,
                     n_shared_experts=2, n_group=3, topk_group=2, routed_scaling_factor=2.5,
                     first_k_dense_replace=1, kv_lora_rank=64, q_lora_rank=96,
                     qk_rope_head_dim=32, qk_nope_head_dim=32, v_head_dim=64,
                     num_key_value_heads=4, norm_topk_prob=True)
    else:
        extra = dict(intermediate_size=I, num_local_experts=E, head_dim=64, sliding_window=64,
                     max_position_embeddings=131072)  # YaRN's factor expects it
    return AutoConfig.for_model(family, **{**common, **extra})


def model(family, device="cpu", seed=0):
    """A causal LM of the family, bf16, with random weights; the routers,
    the biases and the output head larger than transformers' init, so that
    routing and biases matter and the choices between experts and between
    next tokens are rarely near ties (bf16 rounding would decide those)."""
    from transformers import AutoModelForCausalLM
    torch.manual_seed(seed)
    m = AutoModelForCausalLM.from_config(config(family)).to(torch.bfloat16)
    with torch.no_grad():
        for name, p in m.named_parameters():
            if ".mlp." not in name:
                continue
            if "router" in name or "gate.weight" in name or "bias" in name:
                # Sigmoid scores (DeepSeek-V3) saturate past a few units.
                p.normal_(0, 0.5 if "bias" in name else 0.2 if family == "deepseek_v3" else 1.0)
            elif "experts" in name and p.dim() == 3:
                p.normal_(0, p.shape[-1] ** -0.5 if family != "gpt_oss" else
                          p.shape[-2] ** -0.5)
        m.lm_head.weight.normal_(0, 0.5)
        for name, b in m.named_buffers():
            if "e_score_correction_bias" in name:
                b.normal_(0, 0.1)
    return m.to(device).eval()


def moe_blocks(m, family):
    """(layer index, block) of each MoE block of model m."""
    from ggc.moe.hf import FAMILIES as SPECS
    kind = SPECS[family].block
    return [(i, layer.mlp) for i, layer in enumerate(m.model.layers)
            if type(layer.mlp).__name__ == kind]


def block_output(block, x):
    out = block(x)
    return out[0] if isinstance(out, tuple) else out


def trainable_model(family, seed, device="cpu"):
    """model(family, seed) with the output head at a usual scale (std 0.02):
    the large head that keeps next-token choices apart for the inference
    tests makes the loss and its gradients swing with every bf16 rounding."""
    m = model(family, seed=seed)
    gen = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        m.lm_head.weight.copy_(torch.randn(m.lm_head.weight.shape, generator=gen) * 0.02)
    return m.to(device)


def train_losses(m, steps=6, seed=11, lr=1e-3):
    """The losses (language-model loss plus the router's auxiliary loss,
    which needs output_router_logits) of `steps` AdamW steps of model m on
    fixed random token batches, and each step's auxiliary loss."""
    device = next(m.parameters()).device
    gen = torch.Generator().manual_seed(seed)
    batches = [torch.randint(0, VOCAB, (2, 16), generator=gen).to(device) for _ in range(steps)]
    m.config.router_aux_loss_coef = 0.1  # large enough that its gradient matters
    opt = torch.optim.AdamW([p for p in m.parameters() if p.requires_grad], lr=lr)
    m.train()
    losses, aux = [], []
    for ids in batches:
        out = m(ids, labels=ids, output_router_logits=True)
        opt.zero_grad()
        out.loss.backward()
        opt.step()
        losses.append(out.loss.item())
        aux.append(out.aux_loss.item())
    return losses, aux


def assert_trains_like_the_original(family, device="cpu", swap=None):
    """AdamW steps of `family`'s model swapped by `swap(model)` (the router's
    auxiliary loss included) follow the unswapped model's loss curve within
    bf16 noise: each loss as near the fp32 model's as the unswapped bf16
    model's are (3x their largest gap, at least 0.02)."""
    from ggc.moe import hf
    curves = {}
    for kind in ("bf16", "ggc", "fp32"):
        m = trainable_model(family, seed=14, device=device)
        if kind == "ggc":
            assert swap(m) > 0
            routers = [layer.gate.weight for layer in hf.swapped_layers(m)]
            before = [r.detach().clone() for r in routers]
        curves[kind] = train_losses(m if kind != "fp32" else m.float())
    (want, want_aux), (got, got_aux), (exact, exact_aux) = (curves[k] for k in
                                                           ("bf16", "ggc", "fp32"))
    noise = max(abs(a - b) for a, b in zip(want, exact))
    for step, (mine, truth) in enumerate(zip(got, exact)):
        assert abs(mine - truth) <= max(3 * noise, 0.02), f"step {step}: {got} vs {exact}"
    # The first step's auxiliary loss comes from the same weights in all
    # three: the router logits the swapped blocks record give transformers'
    # value within bf16 rounding. Later steps' follow each model's own
    # trajectory, which bf16 rounding moves apart (measured: 0.24 apart
    # after six steps where the unswapped bf16 model's was 0.013 apart):
    # held as the losses are, to 3x the largest gap of the unswapped model.
    assert abs(got_aux[0] - exact_aux[0]) <= max(3 * abs(want_aux[0] - exact_aux[0]), 0.01), \
        f"first step's auxiliary loss {got_aux[0]} vs {exact_aux[0]}"
    aux_noise = max(abs(a - b) for a, b in zip(want_aux, exact_aux))
    for step, (mine, truth) in enumerate(zip(got_aux, exact_aux)):
        assert abs(mine - truth) <= max(3 * aux_noise, 3 * noise, 0.05), \
            f"auxiliary loss, step {step}: {got_aux} vs {exact_aux}"
    # The steps reached the swapped routers (through the routing weights
    # and the auxiliary loss): they were not no-ops.
    assert all(not torch.equal(r.detach(), b) for r, b in zip(routers, before))
