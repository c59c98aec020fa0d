"""Expert placement: which rank of an expert-parallel group holds which
experts, and the tables the dispatch reads on the device."""

from __future__ import annotations

from typing import Dict, Optional, Sequence, Tuple, Union

import numpy as np
import torch

PlacementSpec = Union[None, "ExpertPlacement", Sequence[int], Sequence[Sequence[int]]]


_CONTIGUOUS: Dict[Tuple[int, int], "ExpertPlacement"] = {}


class ExpertPlacement:
    """Rank r holds the experts `experts_of[r]` (global ids, in the order of
    its local weights: local expert i of rank r is global expert
    experts_of[r][i]). Every expert is held by exactly one rank; a rank
    may hold none.

    - `ExpertPlacement.contiguous(E, W)`: blocks of consecutive experts,
      the first E % W ranks one more (uneven counts allowed).
    - `ExpertPlacement.of(spec, E, W)`: None (contiguous), a placement,
      the rank of each expert ([E] ints) or each rank's experts ([W] lists).
    """

    def __init__(self, experts_of: Sequence[Sequence[int]], num_experts: int):
        if not isinstance(num_experts, int) or isinstance(num_experts, bool) or num_experts < 1:
            raise ValueError(f"num_experts must be a positive int, got {num_experts!r}")
        for experts in experts_of:
            if not isinstance(experts, (list, tuple, range)):
                raise TypeError(f"placement must be each expert's rank ([E] ints) or each "
                                f"rank's experts ([W] lists of ints), got an entry "
                                f"{experts!r}")
        lists = tuple(tuple(_expert_id(e, r, num_experts) for e in experts)
                      for r, experts in enumerate(experts_of))
        if not lists:
            raise ValueError("placement must name at least one rank")
        owner: Dict[int, int] = {}
        for rank, experts in enumerate(lists):
            for expert in experts:
                if expert in owner:
                    where = ("twice on rank " + str(rank) if owner[expert] == rank else
                             f"on ranks {owner[expert]} and {rank}")
                    raise ValueError(f"placement names expert {expert} {where}: each expert "
                                     f"must be held by exactly one rank")
                owner[expert] = rank
        missing = [e for e in range(num_experts) if e not in owner]
        if missing:
            raise ValueError(f"placement holds no rank for expert(s) {missing[:8]}"
                             f"{' ...' if len(missing) > 8 else ''}: every expert in "
                             f"[0, E = {num_experts}) needs one")
        self.experts_of: Tuple[Tuple[int, ...], ...] = lists
        self.num_experts = num_experts
        self.world_size = len(lists)
        self.owner = tuple(owner[e] for e in range(num_experts))
        self._tables: Dict[torch.device, Tuple[torch.Tensor, ...]] = {}
        self._digest: Optional[int] = None

    @classmethod
    def contiguous(cls, num_experts: int, world_size: int) -> "ExpertPlacement":
        if not isinstance(world_size, int) or world_size < 1:
            raise ValueError(f"world_size must be a positive int, got {world_size!r}")
        base, extra = divmod(num_experts, world_size)
        lists, start = [], 0
        for rank in range(world_size):
            count = base + (rank < extra)
            lists.append(range(start, start + count))
            start += count
        return cls(lists, num_experts)

    @classmethod
    def of(cls, spec: PlacementSpec, num_experts: int, world_size: int) -> "ExpertPlacement":
        """The placement a user gave (see the class), checked against the
        group's size."""
        if spec is None:
            key = (num_experts, world_size)
            if key not in _CONTIGUOUS:  # made once: a call's host time counts
                _CONTIGUOUS[key] = cls.contiguous(num_experts, world_size)
            return _CONTIGUOUS[key]
        if isinstance(spec, (torch.Tensor, np.ndarray)):
            spec = _integer_lists(spec)
        ranks = None if isinstance(spec, ExpertPlacement) else [_as_int(v) for v in spec]
        if isinstance(spec, ExpertPlacement):
            placement = spec
        elif None not in ranks:  # the rank of each expert
            if len(ranks) != num_experts:
                raise ValueError(f"placement as the rank of each expert must have E = "
                                 f"{num_experts} entries, got {len(ranks)}")
            for expert, rank in enumerate(ranks):
                if not 0 <= rank < world_size:
                    raise ValueError(f"placement puts expert {expert} on rank {rank}, but the "
                                     f"group has ranks 0..{world_size - 1}")
            placement = cls([[e for e, r in enumerate(ranks) if r == rank]
                             for rank in range(world_size)], num_experts)
        else:
            placement = cls(spec, num_experts)
        if placement.num_experts != num_experts:
            raise ValueError(f"placement is for {placement.num_experts} experts, the layer has "
                             f"{num_experts}")
        if placement.world_size != world_size:
            raise ValueError(f"placement names {placement.world_size} ranks, but the group has "
                             f"{world_size} (ranks 0..{world_size - 1})")
        return placement

    def local_experts(self, rank: int) -> Tuple[int, ...]:
        return self.experts_of[rank]

    @property
    def max_local(self) -> int:
        return max(len(experts) for experts in self.experts_of)

    def digest(self) -> int:
        """A 62-bit summary of the placement, to check that every rank was
        given the same one."""
        if self._digest is None:
            value = 1469598103934665603
            for rank, experts in enumerate(self.experts_of):
                for item in (rank, len(experts), *experts):
                    value = ((value ^ item) * 1099511628211) & ((1 << 62) - 1)
            self._digest = value
        return self._digest

    def tables(self, device: torch.device) -> Tuple[torch.Tensor, torch.Tensor]:
        """(rank_of [E] int64: the rank holding each expert, local_of [E]
        int64: its index among that rank's experts), on `device`."""
        device = torch.device(device)
        cached = self._tables.get(device)
        if cached is None:
            local_of = [0] * self.num_experts
            for experts in self.experts_of:
                for local, expert in enumerate(experts):
                    local_of[expert] = local
            with torch.inference_mode(False):
                cached = tuple(torch.tensor(values, dtype=torch.int64, device=device)
                               for values in (self.owner, local_of))
            self._tables[device] = cached
        return cached

    def __eq__(self, other) -> bool:
        return isinstance(other, ExpertPlacement) and (
            self.experts_of == other.experts_of and self.num_experts == other.num_experts)

    def __hash__(self) -> int:
        return hash((self.experts_of, self.num_experts))

    def __repr__(self) -> str:
        counts = [len(e) for e in self.experts_of]
        return f"ExpertPlacement(num_experts={self.num_experts}, experts per rank={counts})"


def _as_int(value) -> Optional[int]:
    """`value` as an int where it is an integer (Python's but a bool,
    numpy's, a one-element integer tensor); None otherwise: a float is
    never truncated into an id or a rank."""
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, np.integer):
        return int(value)
    if isinstance(value, torch.Tensor) and value.numel() == 1 and not (
            value.is_floating_point() or value.is_complex() or value.dtype == torch.bool):
        return int(value)
    return None


def _integer_lists(spec):
    """A tensor or array spec as lists: [E] the rank of each expert, [W, k]
    each rank's experts; integers only."""
    array = spec.cpu().numpy() if isinstance(spec, torch.Tensor) else spec
    if array.ndim not in (1, 2) or not np.issubdtype(array.dtype, np.integer):
        raise TypeError(f"placement as an array must hold integers, [E] (each expert's rank) "
                        f"or [W, k] (each rank's experts), got {array.dtype} of shape "
                        f"{list(array.shape)}")
    return array.tolist()


def _expert_id(value, rank: int, num_experts: int) -> int:
    found = _as_int(value)
    if found is None:
        raise TypeError(f"placement for rank {rank} must list expert ids (ints), got "
                        f"{value!r}")
    value = found
    if not 0 <= value < num_experts:
        raise ValueError(f"placement for rank {rank} names expert {value}, outside "
                         f"[0, E = {num_experts})")
    return value


def local_weights_check(placement: ExpertPlacement, rank: int, w13, w2) -> Optional[str]:
    """Why a rank's local expert weights do not match its share of the
    placement (None when they do)."""
    want = len(placement.local_experts(rank))
    for name, w in (("w13", w13), ("w2", w2)):
        if not isinstance(w, torch.Tensor) or w.dim() != 3:
            return f"{name} must be this rank's experts' weights [E_local, ., .], got " \
                   f"{list(getattr(w, 'shape', [])) or type(w).__name__}"
        if w.shape[0] != want:
            return (f"{name} holds {w.shape[0]} experts but the placement gives rank {rank} "
                    f"{want} (experts {list(placement.local_experts(rank))[:8]}"
                    f"{' ...' if want > 8 else ''})")
    return None
