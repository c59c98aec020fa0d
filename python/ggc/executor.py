"""The grouped-GEMM executor for MoE (docs/executor.md), on torch tensors.

    ex = GroupedGemmExecutor(group_count=8, precision="bf16")
    w = ExpertWeights.load([w0, ..., w7])          # each [N, K], any device
    inp = ex.prepare_input(x, topk_ids)            # x [T, K] on the GPU
    y = ex.execute_grouped(inp, w)                 # [rows, N], expert order
    out = ex.scatter_output(y, inp)                # [T, top_k, N], token order

Bad arguments raise ValueError naming the argument. The token-to-expert
mapping is computed on the host (topk_ids is copied there): this path is not
for CUDA graphs; ggc.moe is.
"""

from __future__ import annotations

from typing import Optional, Sequence

from . import _executor

_DTYPES = {"torch.float32": "f32", "torch.float16": "f16", "torch.bfloat16": "bf16"}
_INPUT = {"fp32": "f32", "tf32": "f32", "fp16": "f16", "bf16": "bf16", "fp8": "bf16"}


def _raw(t) -> bytes:
    """A tensor's bytes on the host (bfloat16 has no numpy type: as bytes)."""
    import torch
    return t.detach().contiguous().cpu().view(-1).view(torch.uint8).numpy().tobytes()


def _dtype_name(where: str, t) -> str:
    name = _DTYPES.get(str(t.dtype))
    if name is None:
        raise ValueError(f"{where} must be float32, float16 or bfloat16, got {t.dtype}")
    return name


class ExpertWeights:
    """Expert weights packed into one [G, N, K] buffer on the GPU (and
    optional biases [G, N]); quantize() adds the FP8 form with 128x128
    block scales."""

    def __init__(self, manager, num_experts: int, expert_dim: int, hidden_dim: int,
                 dtype: str, device: int):
        self._manager = manager
        self.num_experts, self.expert_dim, self.hidden_dim = num_experts, expert_dim, hidden_dim
        self.dtype, self.device = dtype, device

    @classmethod
    def load(cls, expert_weights: Sequence, expert_biases: Optional[Sequence] = None,
             device: int = 0) -> "ExpertWeights":
        if len(expert_weights) == 0:
            raise ValueError("expert_weights must hold at least one [N, K] tensor")
        first = expert_weights[0]
        if first.dim() != 2:
            raise ValueError(f"expert_weights[0] must be 2-D [N, K], got shape {list(first.shape)}")
        dtype = _dtype_name("expert_weights[0]", first)
        for i, w in enumerate(expert_weights):
            if w.shape != first.shape or w.dtype != first.dtype:
                raise ValueError(f"expert_weights[{i}] has shape {list(w.shape)} and dtype "
                                 f"{w.dtype}; expert 0 has {list(first.shape)}, {first.dtype}")
        biases = list(expert_biases or [])
        if biases and len(biases) != len(expert_weights):
            raise ValueError(f"expert_biases must hold {len(expert_weights)} vectors, "
                             f"got {len(biases)}")
        for i, b in enumerate(biases):
            if b.shape != (first.shape[0],) or b.dtype != first.dtype:
                raise ValueError(f"expert_biases[{i}] must be [{first.shape[0]}] of "
                                 f"{first.dtype}, got {list(b.shape)} of {b.dtype}")
        manager = _executor.ExpertWeightManager.load(
            [_raw(w) for w in expert_weights], [_raw(b) for b in biases],
            int(first.shape[0]), int(first.shape[1]), dtype, device)
        return cls(manager, len(expert_weights), int(first.shape[0]), int(first.shape[1]),
                   dtype, device)

    def quantize(self) -> None:
        self._manager.quantize()

    @property
    def quantized(self) -> bool:
        return self._manager.quantized


class GroupedInput:
    """Tokens gathered by expert on the GPU, with the mapping."""

    def __init__(self, native, tokens, top_k: int):
        self._native, self._tokens, self.top_k = native, tokens, top_k
        self.num_tokens, self.hidden = int(tokens.shape[0]), int(tokens.shape[1])

    tokens_per_expert = property(lambda self: self._native.tokens_per_expert)
    expert_offsets = property(lambda self: self._native.expert_offsets)
    assignment_of_row = property(lambda self: self._native.assignment_of_row)
    expert_of_row = property(lambda self: self._native.expert_of_row)
    active_experts = property(lambda self: self._native.active_experts)
    num_rows = property(lambda self: self._native.num_rows)


class GroupedGemmExecutor:
    """See docs/executor.md: algorithms 'ggc', 'cublas_grouped',
    'cublas_sequential', 'auto'; precisions 'fp32', 'tf32', 'fp16', 'bf16',
    'fp8'. Safe to share between threads."""

    def __init__(self, group_count: int, algorithm: str = "auto",
                 use_tensor_cores: bool = True, workspace_bytes: int = 32 << 20,
                 precision: str = "bf16", max_concurrent_calls: int = 4, device: int = 0):
        self.precision, self.device = precision, device
        self._native = _executor.Executor(group_count, algorithm, use_tensor_cores,
                                          workspace_bytes, precision, max_concurrent_calls,
                                          device)
        self.group_count = group_count

    def supports_grouped_gemm(self) -> bool:
        return self._native.supports_grouped_gemm()

    def select_algorithm(self, batch_size: int, active_experts: int) -> str:
        return self._native.select_algorithm(batch_size, active_experts)

    @property
    def capabilities(self) -> dict:
        return self._native.capabilities

    def _stream(self) -> int:
        import torch
        return torch.cuda.current_stream(self.device).cuda_stream

    def prepare_input(self, tokens, topk_ids) -> GroupedInput:
        if tokens.dim() != 2 or not tokens.is_cuda or not tokens.is_contiguous():
            raise ValueError(f"tokens must be a contiguous 2-D CUDA tensor [T, K], got "
                             f"shape {list(tokens.shape)} on {tokens.device}")
        if tokens.device.index != self.device:
            raise ValueError(f"tokens are on {tokens.device}, the executor on cuda:{self.device}")
        want = _INPUT[self.precision]
        if _dtype_name("tokens", tokens) != want:
            raise ValueError(f"tokens must be {want} for precision {self.precision}, "
                             f"got {tokens.dtype}")
        if topk_ids.dim() != 2 or topk_ids.shape[0] != tokens.shape[0]:
            raise ValueError(f"topk_ids must be [T = {tokens.shape[0]}, top_k], got "
                             f"shape {list(topk_ids.shape)}")
        ids = [int(i) for i in topk_ids.reshape(-1).tolist()]
        native = self._native.prepare_input(tokens.data_ptr(), int(tokens.shape[0]),
                                            int(tokens.shape[1]), ids,
                                            int(topk_ids.shape[1]), self._stream())
        return GroupedInput(native, tokens, int(topk_ids.shape[1]))

    def _out_dtype(self):
        import torch
        return {"fp32": torch.float32, "tf32": torch.float32, "fp16": torch.float16,
                "bf16": torch.bfloat16, "fp8": torch.bfloat16}[self.precision]

    def _execute(self, inp: GroupedInput, weights: ExpertWeights, algorithm: str):
        import torch
        if not isinstance(inp, GroupedInput):
            raise ValueError("input must come from prepare_input")
        if not isinstance(weights, ExpertWeights):
            raise ValueError("weights must be an ExpertWeights")
        out = torch.empty(inp.num_rows, weights.expert_dim, dtype=self._out_dtype(),
                          device=f"cuda:{self.device}")
        self._native.execute(inp._native, weights._manager, out.data_ptr(), algorithm)
        return out

    def execute_grouped(self, inp: GroupedInput, weights: ExpertWeights,
                        algorithm: str = "auto"):
        """[rows, N] in expert order (rows = T * top_k)."""
        if algorithm == "cublas_sequential":
            raise ValueError("algorithm 'cublas_sequential' is execute_sequential's")
        return self._execute(inp, weights, algorithm)

    def execute_sequential(self, inp: GroupedInput, weights: ExpertWeights):
        return self._execute(inp, weights, "cublas_sequential")

    def scatter_output(self, expert_outputs, inp: GroupedInput):
        """[T, top_k, N]: row r of expert_outputs goes to its (token, slot)."""
        import torch
        if (expert_outputs.dim() != 2 or expert_outputs.shape[0] != inp.num_rows
                or not expert_outputs.is_cuda or not expert_outputs.is_contiguous()):
            raise ValueError(f"expert_outputs must be a contiguous CUDA tensor [{inp.num_rows}, N], "
                             f"got shape {list(expert_outputs.shape)}")
        width = int(expert_outputs.shape[1])
        out = torch.empty(inp.num_tokens, inp.top_k, width, dtype=expert_outputs.dtype,
                          device=expert_outputs.device)
        self._native.scatter_output(expert_outputs.data_ptr(), width,
                                    _dtype_name("expert_outputs", expert_outputs),
                                    inp._native, out.data_ptr())
        return out
