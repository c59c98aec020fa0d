"""ggc.moe: a Mixture-of-Experts layer on ggc's grouped GEMMs.

- `route(router_logits, top_k, ...)`: top-k routing (softmax before or
  after top-k, sigmoid, renormalisation, DeepSeek-V3's grouped top-k with
  its correction bias); on CUDA one kernel ggc compiles
  (gg.select_experts, `ggc.moe.router_kernel`).
- `permute(topk_ids, num_experts)`: the routes sorted by expert on the
  device (offsets, counts, row indices), with no host synchronisation.
- `fused_moe(x, w13, w2, topk_weights, topk_ids, activation="swiglu", ...)`:
  the experts, BF16 or FP8 (1x128 activation, 128x128 weight block scales),
  the routing weight applied in the down projection's epilogue, combined in
  a fixed order.
- `MoE`: the whole layer as an nn.Module.
- `expert_parallel_moe`, `ExpertParallelMoE`, `ExpertPlacement`: the experts
  spread over the ranks of a torch.distributed group (NCCL or gloo),
  tokens dispatched to them and combined back (docs/expert-parallel.md).
- `graphs`: decode-sized eager calls replayed from cached CUDA graphs.
- `hf`: Hugging Face MoE blocks (Mixtral, Qwen3-MoE, DeepSeek-V3, gpt-oss)
  loaded into `MoE`, and a model's blocks swapped (docs/models.md).
- `activations`: the activations between the GEMMs, by name.
- `quantize_weights`, `quantize_rows`: FP8 block quantisation.
- `warmup(model_or_layer, max_tokens)`: compiles every kernel the layers'
  forwards need for up to max_tokens tokens, ahead of serving (no GPU
  needed; `LayerShape` describes a layer without one; ggc.moe.precompile).

Needs torch. docs/moe.md has the details.
"""

from . import activations, graphs, hf
from .dispatch import ExpertParallelError
from .expert_parallel import expert_parallel_moe
from .layer import activate, fused_moe, routing_weights
from .module import ExpertParallelMoE, MoE
from .permute import Permutation, combine_rows, gather_rows, permute
from .placement import ExpertPlacement
from .precompile import LayerShape, warmup
from .quant import dequantize_weights, quantize_rows, quantize_weights
from .routing import route

__all__ = ["ExpertParallelError", "ExpertParallelMoE", "ExpertPlacement", "LayerShape", "MoE",
           "activations", "expert_parallel_moe", "graphs", "hf", "Permutation", "activate", "combine_rows", "dequantize_weights",
           "fused_moe", "gather_rows", "permute", "quantize_rows", "quantize_weights",
           "route", "routing_weights", "warmup"]
