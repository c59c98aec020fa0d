"""benchmarks/probes/moe_row_tiles.py's --tiles, without a GPU: each label
becomes the knobs of the layer's kernels, the chosen tile first."""

import os
import sys

import pytest

pytest.importorskip("torch")
HERE = os.path.dirname(__file__)
sys.path.insert(0, os.path.join(HERE, "..", "..", "benchmarks"))
sys.path.insert(0, os.path.join(HERE, "..", "..", "benchmarks", "probes"))
import moe_row_tiles  # noqa: E402


def test_tiles_become_knobs():
    tiles = moe_row_tiles.tile_overrides("64x256,128x192:s5:k64,chosen:skip")
    assert tiles == {"as chosen": {},
                     "64x256": {"BLOCK_M": 64, "BLOCK_N": 256},
                     "128x192:s5:k64": {"BLOCK_M": 128, "BLOCK_N": 192, "STAGES": 5,
                                        "BLOCK_K": 64},
                     "chosen:skip": {"IDLE_WARPGROUPS": "skip"}}


def test_every_knob_is_a_parameter_of_the_layers_kernels():
    """A knob the kernels do not take would make every variant that names it
    a refusal (the probe notes it and times the others)."""
    import inspect
    knobs = {"BLOCK_M", "BLOCK_N", "STAGES", "BLOCK_K", "IDLE_WARPGROUPS"}
    for kernel in (moe_row_tiles.up, moe_row_tiles.up_copied, moe_row_tiles.down):
        assert knobs <= set(inspect.signature(kernel.fn).parameters)
