"""ring_stages = constant through the whole pipeline, without a GPU: where
a tile's K blocks are no whole number of turns of the ring, the producer
passes the last turn's remaining stages on empty (ggk.pass_stage) and the
consumers await them (ggk.promotion_loop's await region); whole turns
need neither. Every kernel must assemble (the GPU tests in
test/gpu/test_fp8.py run them)."""
import pytest

import ggc
from ggc import ir

PLAN = ("#gg.kernel_plan<promotion = serial, scales = stages, registers = [40, 232], "
        "staging = swizzled, ring_stages = constant>")
TILE = "#gg.config<block = [128, 192, 128], stages = 4, cluster = [{cluster}, 1], sms = 132>"


def compiled(k, cluster=1, layout="contiguous", **extra):
    shape = dict(m=256) if layout == "masked" else {}
    return ggc.compile_ir(ir.grouped_matmul(
        "k", layout=layout, num_groups=4, n=2176, k=k, dtype="f8E4M3FN",
        a_scale="block_mn", b_scale="block", config=TILE.format(cluster=cluster),
        kernel_plan=PLAN, **shape, **extra), emit="cubin", arch="sm_90a")


@pytest.mark.parametrize("cluster", [1, 2])
@pytest.mark.parametrize("k, empty", [(2048, 0), (2304, 2), (640, 3)])
def test_last_turn_passes_empty_stages(k, empty, cluster):
    out = compiled(k, cluster)
    kernel = out.asm["ggk"]
    # One producer loop passes stages on empty where the blocks (K / 128)
    # leave a partial turn; the consumers' loop then has an await region.
    assert kernel.count("ggk.pass_stage") == (1 if empty else 0)
    assert ("await {" in kernel) == bool(empty)
    assert "ring_stages = constant" in kernel
    assert out.asm["cubin"]


def test_masked_last_turn():
    kernel = compiled(1152, cluster=2, layout="masked").asm["ggk"]
    assert kernel.count("ggk.pass_stage") == 1 and "await {" in kernel


def test_gathered_rows_need_whole_turns():
    # Every producer thread arrives on a stage of gathered rows: a stage
    # cannot be passed on empty by one thread, so the plan is refused.
    with pytest.raises(ggc.CompilationError, match="K blocks a multiple of the stages where A's rows are gathered"):
        ggc.compile_ir(ir.grouped_matmul(
            "k", layout="contiguous", num_groups=4, n=2176, k=2304, dtype="f8E4M3FN",
            a_scale="block_mn", b_scale="block", a_rows=True, direct_stores=True,
            config=TILE.format(cluster=1),
            kernel_plan=PLAN.replace("scales = stages", "scales = slots").replace(
                "staging = swizzled", "staging = none, producer = all_threads")),
            emit="ggk", arch="sm_90a")


@pytest.mark.parametrize("extra, tile, constant", [
    ({}, "[128, 192, 128]", True),
    ({"zero_ungrouped": True}, "[128, 128, 128]", False)])
def test_long_k_takes_wide_tile_with_constant_stages(extra, tile, constant):
    # gg-select-config gives contiguous FP8 past K 3,072 DeepGEMM's 128x192
    # tile where N is a multiple of 192 and rule 12 gives constant stages
    # (33 K blocks over 4 stages: a partial last turn); zero_ungrouped's
    # tiles stay counted, so they keep 128x128.
    out = ggc.compile_ir(ir.grouped_matmul(
        "k", layout="contiguous", num_groups=8, n=1536, k=4224, dtype="f8E4M3FN",
        a_scale="block_mn", b_scale="block", expected_m=512, **extra),
        emit="ggk", arch="sm_90a")
    assert f"block = {tile}" in out.asm["gg-config"]
    assert ("ring_stages = constant" in out.asm["ggk"]) == constant


def test_k_grouped_passes_empty_stages():
    # k_grouped: each group's K blocks come at run time, so every tile may
    # end its last turn on stages passed on empty (test/gpu/test_fp8.py's
    # test_k_grouped_constant_ring_stages runs it).
    out = ggc.compile_ir(ir.grouped_matmul(
        "k", layout="k_grouped", num_groups=9, n=288, k=None, m=200, b_layout="nk",
        dtype="f8E4M3FN", out_dtype="f32", a_scale="block_mn", b_scale="block1x128_mn",
        direct_stores=True,
        config="#gg.config<block = [128, 144, 128], stages = 4, cluster = [1, 1], sms = 132>",
        kernel_plan=("#gg.kernel_plan<promotion = serial, scales = stages, registers = [24, 240], "
                     "staging = none, column_scale_reads = at_issue, ring_stages = constant>")),
        emit="cubin", arch="sm_90a")
    kernel = out.asm["ggk"]
    assert kernel.count("ggk.pass_stage") == 1 and "await {" in kernel
    assert out.asm["cubin"]


PIPELINED = ("#gg.kernel_plan<promotion = pipelined, scales = stages, registers = [24, 240], "
             "staging = swizzled, ring_stages = constant>")
SQUARE = "#gg.config<block = [128, 128, 128], stages = 5, cluster = [1, 1], sms = 132>"


@pytest.mark.parametrize("k, empty", [(7168, 4), (8192, 1), (2880, 2), (640, 0)])
def test_pipelined_promotion_over_constant_stages(k, empty):
    # Block 0 beside the overlap, (K blocks - 1) % 5 blocks straight, then
    # whole turns; a partial last turn's stages are passed on empty.
    blocks = -(-k // 128)
    assert (5 - blocks % 5) % 5 == empty
    out = ggc.compile_ir(ir.grouped_matmul(
        "k", layout="contiguous", num_groups=8, n=4096, k=k, dtype="f8E4M3FN",
        a_scale="block_mn", b_scale="block", config=SQUARE, kernel_plan=PIPELINED),
        emit="cubin", arch="sm_90a")
    kernel = out.asm["ggk"]
    assert kernel.count("ggk.pass_stage") == (1 if empty else 0)
    assert "promotion = pipelined" in kernel and "ring_stages = constant" in kernel
    assert out.asm["cubin"]


@pytest.mark.parametrize("spec, reason", [
    (dict(layout="k_grouped", num_groups=4, n=288, k=None, m=256, b_layout="nk",
          a_scale="block_mn", b_scale="block1x128_mn", out_dtype="f32", direct_stores=True),
     "a static K")])
def test_pipelined_constant_stages_refused(spec, reason):
    with pytest.raises(ggc.CompilationError, match=reason):
        ggc.compile_ir(ir.grouped_matmul(
            "k", dtype="f8E4M3FN", config=SQUARE.replace("stages = 5", "stages = 4"),
            kernel_plan=PIPELINED.replace("staging = swizzled", "staging = none"), **spec),
            emit="ggk", arch="sm_90a")
