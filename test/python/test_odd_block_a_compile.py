"""The schedule's odd_block_a = multicast without a GPU: a pair of CTAs
loads the rows of A of a group's odd last M block once, rank 0 multicasting
every box of them (whole tile or a partial tile's smaller boxes) into both
CTAs, and no more where it has no pair; the default stays each CTA's own
load. (test/gpu/test_grouped_matmul.py's clusters run it on a GPU.)"""

import pytest

import ggc
from ggc import ir

PAIRED = "#gg.config<block = [128, 192, 128], stages = 0, cluster = [2, 1], sms = 132>"
MASKED = dict(layout="masked", num_groups=6, n=448, k=512, m=384, dtype="f8E4M3FN",
              a_scale="block_mn", b_scale="block")


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path / "cache"))


def ptx(config, **kw):
    return ggc.compile_ir(ir.grouped_matmul("k", config=config, **MASKED, **kw), emit="ptx")


def test_a_pair_multicasts_each_box_of_a_once():
    own, shared = ptx(PAIRED), ptx(PAIRED, odd_block_a="multicast")
    assert shared.plans[0]["schedule"]["odd_block_a"] == "multicast"
    assert own.plans[0]["schedule"]["odd_block_a"] == "own"
    boxes = len([p for p in shared.kernel_info[0]["params"]
                 if p["kind"] == "tensor_map" and p["operand"] == "a"])
    assert boxes > 1  # the whole tile's box and the partial tiles' smaller ones
    # Each box of A gains a multicast load beside its own (the NVVM stage:
    # ptxas-bound PTX may merge or duplicate blocks).
    assert shared.asm["nvvm"].count("multicast_mask") == \
        own.asm["nvvm"].count("multicast_mask") + boxes
    loads = "nvvm.cp.async.bulk.tensor.shared.cluster.global"
    assert shared.asm["nvvm"].count(loads) == own.asm["nvvm"].count(loads) + boxes
    # (load_b_tile's shared(...) is B's: count load_tile_rows' own.)
    assert any("ggk.load_tile_rows" in line and ") shared(" in line
               for line in shared.asm["ggk"].splitlines())
    assert not any("ggk.load_tile_rows" in line and ") shared(" in line
                   for line in own.asm["ggk"].splitlines())


def test_a_cta_alone_has_no_pair_to_share_with():
    alone = "#gg.config<block = [128, 128, 128], stages = 0, cluster = [1, 1], sms = 132>"
    with pytest.raises(ggc.CompilationError, match="odd_block_a = multicast shares A's rows "
                                                   "between the CTAs of a pair"):
        ptx(alone, odd_block_a="multicast")
