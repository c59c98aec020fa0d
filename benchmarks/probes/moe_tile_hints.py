"""Which tiles serve each of ggc.moe's two GEMMs at a few hundred rows an
expert (#38: the Qwen3-like layer at T = 1,024 and 4,096 is short of 1.3x
vLLM). ggc.moe hints both GEMMs with the even share of routes (the
expected_m hint), and gg-select-config took 128x256 tiles only from a
hint of 1,024 rows (since the twenty-fifth session: 2,048, kTallGroupRows,
or 256 where N >= 16,384), or for a gated up projection from 128
(kGatedWideGroupRows); the whole layer with every hint at 4x measured
1.027x on the Qwen3-like layer at 256 rows an expert and 0.98x on the
Mixtral-like one (docs/performance-history.md, twelfth session). This
times the layer (graph replay, L2 flushed, interleaved) as chosen, with
the up projection on 128x128 tiles (its hint lowered to 64), and with the
down projection on 128x256 (its hint raised to TALL), to find which GEMM
gains and which loses.

    python3 benchmarks/probes/moe_tile_hints.py [--shapes qwen3,mixtral]
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from moe_expected_m import main  # noqa: E402
from ggc import moe  # noqa: E402
from ggc.moe import layer  # noqa: E402

CASES = {"qwen3": (2048, 4096, 8192), "mixtral": (512, 1024, 2048), "deepseek": (1024, 4096)}
TALL = 2048  # gg-select-config's kTallGroupRows (1,024 when this probe ran)
NARROW = 64  # above its decode tiles, below kGatedWideGroupRows: 128x128


def variant(up_hint=None, down_hint=None):
    """fused_moe's layer with the up and/or the down projection's hint
    replaced (None: as chosen)."""
    gated_up, gathered_up, routed_down = layer.gated_up, layer.gathered_up, layer.routed_down

    def up(rows, w13, offsets, activation, hint, *rest):
        return gated_up(rows, w13, offsets, activation, up_hint or hint, *rest)

    def up_plain(rows, source, w13, offsets, hint):
        return gathered_up(rows, source, w13, offsets, up_hint or hint)

    def down(*args, expected_m=None, **kwargs):
        return routed_down(*args, expected_m=down_hint or expected_m, **kwargs)

    def run(x, w13, w2, weights, ids):
        layer.gated_up, layer.gathered_up, layer.routed_down = up, up_plain, down
        try:
            return moe.fused_moe(x, w13, w2, weights, ids, graph=False)
        finally:
            layer.gated_up, layer.gathered_up, layer.routed_down = (
                gated_up, gathered_up, routed_down)
    return run


VARIANTS = {"as chosen": variant(), "up 128x128": variant(up_hint=NARROW),
            "down 128x256": variant(down_hint=TALL),
            "up 128x128, down 128x256": variant(up_hint=NARROW, down_hint=TALL)}


if __name__ == "__main__":
    main(VARIANTS, CASES, rounds=10)
