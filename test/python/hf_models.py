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
