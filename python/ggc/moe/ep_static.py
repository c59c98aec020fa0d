"""Expert parallelism with no host synchronisation (`sync_free=True`):
every exchange has a size that depends on the token count T alone, so a
call can be captured in a CUDA graph and replayed with new tokens and new
routing.

    gather   every rank's T rows to every rank (all_gather), and to each
             rank, per row, its slots there (local expert or -1, weight;
             an all_to_all of equal splits)
    experts  every received (row, slot) pair kept, the skipped ones sorted
             past the last expert's rows (ep_layout.receive_layout with
             routes=None), so the grouped GEMMs' row buffers hold
             W * T * top_k + 1 rows of which only the local routes are
             computed
    return   each rank's per-row sums to the rows' ranks (all_to_all of
             equal splits), added in rank order

It moves every token to every rank and sizes the buffers for the worst
case: for decode-sized batches, where a host synchronisation costs more
than the bytes. Every rank must pass the same T: the first call of a
signature checks that (and the rest of the agreement) with one host
synchronisation, later calls trust it.
"""

from __future__ import annotations

from typing import Set

import torch
import torch.distributed as dist

from .dispatch import ExpertsFn, _as_bytes, agree
from .ep_layout import fixed_order_sum, receive_layout, slots, take_rows, zero_dummy
from .placement import ExpertPlacement
from .quant import FP8, mn_major, quantize_rows

_AGREED: Set[tuple] = set()


# all_gather_into_tensor's name in torch >= 2.10 (the old one warns that it
# is deprecated); the same collective.
_all_gather_single = getattr(dist, "all_gather_single", None) or dist.all_gather_into_tensor


def check_once(group, key: tuple, fields, device: torch.device, placement=None,
               timeout=None) -> None:
    """The agreement of a signature's first call (T among its fields);
    under a CUDA-graph capture it cannot run (a host synchronisation), so
    a signature must have been called once outside it."""
    if key in _AGREED:
        return
    if device.type == "cuda" and torch.cuda.is_current_stream_capturing():
        raise RuntimeError("ggc.moe: an expert-parallel signature is captured before its "
                           "first eager call, which checks that every rank agrees (a host "
                           "synchronisation): call the layer once outside the capture")
    agree(group, None, fields, None, device, placement, timeout)
    _AGREED.add(key)


def sync_free_call(x: torch.Tensor, topk_weights: torch.Tensor, topk_ids: torch.Tensor,
                   placement: ExpertPlacement, local_experts: int, wire: str,
                   run_experts: ExpertsFn, group) -> torch.Tensor:
    tokens, hidden = x.shape
    top_k = topk_ids.shape[1]
    world = placement.world_size
    _, slot_ids, slot_weights = slots(topk_ids, topk_weights, placement)  # [T, W, top_k]
    meta = [slot_ids, slot_weights]
    rows = x.contiguous()
    if wire == "fp8":
        rows, scale = quantize_rows(x, "x")
        meta.append(scale.unsqueeze(1).expand(tokens, world, scale.shape[1]))
    meta = torch.cat(meta, dim=2).transpose(0, 1).contiguous()  # [W, T, .]: by destination
    gathered = rows.new_empty(world * tokens, hidden)
    _all_gather_single(_as_bytes(gathered), _as_bytes(rows), group=group)
    meta_in = torch.empty_like(meta)
    dist.all_to_all_single(_as_bytes(meta_in.view(world * tokens, -1)),
                           _as_bytes(meta.view(world * tokens, -1)), group=group)
    meta_in = meta_in.view(world * tokens, -1)
    dtype = torch.bfloat16 if rows.dtype == FP8 else rows.dtype
    if local_experts == 0 or tokens == 0:
        sums = gathered.new_zeros(world * tokens, hidden, dtype=dtype)
    else:
        layout = receive_layout(meta_in[:, :top_k], meta_in[:, top_k:2 * top_k], None,
                                local_experts)
        routed = take_rows(gathered, layout.source)
        scale = (None if rows.dtype != FP8
                 else mn_major(meta_in[:, 2 * top_k:], layout.source))
        y = run_experts(routed, scale, layout.offsets, layout.local_ids, layout.weights)
        y = zero_dummy(y if y.dtype == dtype else y.to(dtype), layout, False)
        sums = fixed_order_sum(y, layout.position, top_k)
    back = torch.empty_like(sums)
    dist.all_to_all_single(_as_bytes(back), _as_bytes(sums), group=group)
    # Rank order, f32 accumulation, one rounding (torch's reduced-precision sum).
    return back.view(world, tokens, hidden).sum(dim=0)
