"""Where a K block's block scales live is #gg.kernel_plan's `scales`,
chosen by gg-plan-kernel and overridable: ggk-place-scales makes the
stages carry them (the producer's cp.async of B's and TMA window of A's,
on the stage's full barrier) or each consumer warp copy them into its
slots. The kernel that comes out follows the plan, not a guess of the
lowering's."""

import re

import pytest

import ggc
from ggc import ir


def plan(promotion, scales, registers):
    return (f"#gg.kernel_plan<promotion = {promotion}, scales = {scales}, "
            f"registers = {registers}, staging = swizzled>")


def compile_masked(a_scale="block_mn", kernel_plan=None, emit="ptx", k=640):
    text = ir.grouped_matmul("k", layout="masked", num_groups=4, n=2112, k=k, m=256,
                             dtype="f8E4M3FN", expected_m=97, a_scale=a_scale,
                             b_scale="block", kernel_plan=kernel_plan)
    return ggc.compile_ir(text, emit=emit)


def a_scale_maps(compiled):
    return [p for p in compiled.kernel_info[0]["params"]
            if p["kind"] == "tensor_map" and p["operand"] == "a_scale"]


def test_deepgemm_scales_ride_the_stages_by_default():
    out = compile_masked()
    assert "scales = stages" in out.plans[0]["attributes"]["kernel_plan"]
    ptx = out.asm["ptx"]
    # B's block scale by cp.async, counted as the full barrier's second
    # arrival; A's window by TMA (one more tensor map); no slot copies.
    assert "cp.async.mbarrier.arrive.noinc" in ptx
    assert not re.search(r"cp\.async\.wait_group", ptx)
    (window,) = a_scale_maps(out)
    assert window["box"][0] == 128 + 4


@pytest.mark.parametrize("promotion, registers", [("serial", "[40, 232]"),
                                                  ("pipelined", "[24, 240]")])
def test_a_plan_that_says_slots_gets_slot_copies(promotion, registers):
    out = compile_masked(kernel_plan=plan(promotion, "slots", registers))
    assert "scales = slots" in out.plans[0]["attributes"]["kernel_plan"]
    ptx = out.asm["ptx"]
    assert "cp.async.mbarrier.arrive.noinc" not in ptx
    assert re.search(r"cp\.async\.wait_group\s+1;", ptx)
    assert a_scale_maps(out) == []


@pytest.mark.parametrize("scales, arrivals", [("stages", 2), ("slots", 1)])
def test_the_kernel_stage_states_the_scales_and_the_nvvm_stage_has_placed_them(scales,
                                                                             arrivals):
    out = compile_masked(kernel_plan=plan("pipelined", scales, "[24, 240]"), emit="nvvm")
    kernel, nvvm = out.asm["ggk"], out.asm["nvvm"]
    # The generator states the same ops whatever the plan says; they carry
    # the plan that ggk-place-scales reads.
    for name in ("stage_block_scales", "read_block_scales", "init_full_barrier"):
        ops = re.findall(rf"ggk\.{name} [^\n]*", kernel)
        assert ops and all(f"scales = {scales}" in op for op in ops), name
        assert f"ggk.{name}" not in nvvm
    # A stage's full barrier counts the producer's arrival, and the
    # cp.async's where the stages carry B's scales (the empty barriers
    # count the consumers' 256 threads).
    counts = set(re.findall(r"nvvm\.mbarrier\.init %\w+, %c(\d+)_i32", nvvm))
    assert counts == {str(arrivals), "256"}


def test_k_major_scales_ride_the_stages_as_boxes_four_k_blocks_wide():
    # K-major 1x128 scales of A with long rows (ceil(7168/128) = 56 blocks):
    # each stage's window is a box of four K blocks by the tile's rows, no
    # copy into the M-major form first.
    out = compile_masked(a_scale="block", k=7168)
    assert "scales = stages" in out.plans[0]["attributes"]["kernel_plan"]
    ptx = out.asm["ptx"]
    assert "cp.async.mbarrier.arrive.noinc" in ptx
    assert not re.search(r"cp\.async\.wait_group", ptx)
    (window,) = a_scale_maps(out)
    assert window["box"][:2] == [4, 128 + 4]
    # The consumers read their block's word of a 16-byte row.
    kernel = out.asm["ggk"]
    assert re.search(r"ggk\.read_block_scales [^\n]*a_k_major", kernel)
    assert re.search(r"ggk\.stage_block_scales [^\n]*a_k_major", kernel)


@pytest.mark.parametrize("layout, scales", [("masked", "stages"), ("contiguous", "stages"),
                                           ("padded_contiguous", "slots")])
def test_short_k_major_rows_ride_the_stages_but_in_the_padded_layout(layout, scales):
    # 8 K blocks a row: the stages by default, but DeepGEMM's padded layout
    # takes the warps' slots (gg-plan-kernel's rule); a plan that says
    # stages gets the boxes there too.
    spec = dict(layout=layout, num_groups=4, n=2112, k=1024, dtype="f8E4M3FN",
                a_scale="block", b_scale="block",
                **({"m": 256, "expected_m": 97} if layout == "masked" else {}))
    out = ggc.compile_ir(ir.grouped_matmul("k", **spec))
    assert f"scales = {scales}" in out.plans[0]["attributes"]["kernel_plan"]
    assert (a_scale_maps(out) == []) == (scales == "slots")
    staged = out.plans[0]["attributes"]["kernel_plan"].replace("scales = slots",
                                                               "scales = stages")
    (window,) = a_scale_maps(ggc.compile_ir(ir.grouped_matmul("k", kernel_plan=staged, **spec)))
    assert window["box"][:2] == [4, 128 + 4]


def test_tiles_of_256_rows_keep_the_slots():
    # A's window would be a TMA box of 256 + 4 rows, past TMA's 256.
    text = ir.grouped_matmul("k", layout="contiguous", num_groups=8, n=4096, k=7168,
                             dtype="f8E4M3FN", a_scale="block_mn", b_scale="block",
                             config="#gg.config<block = [256, 128, 128], stages = 3, "
                                    "cluster = [1, 1], sms = 132>")
    out = ggc.compile_ir(text, emit="nvvm")
    assert "scales = slots" in out.plans[0]["attributes"]["kernel_plan"]
    assert a_scale_maps(out) == []


def test_stages_are_rejected_where_the_scales_cannot_ride_them():
    # K-major 1x128 scales of A whose rows are not whole 16-byte units
    # (ceil(640/128) = 5 blocks): no TMA box.
    with pytest.raises(ggc.CompilationError, match="cannot carry scales in the stages"):
        compile_masked(a_scale="block", kernel_plan=plan("pipelined", "stages", "[24, 240]"))


def compile_weight_gradient(b_scale="block1x128_mn", m=256, n=512, kernel_plan=None,
                            emit="ptx", config=None):
    """An FP8 weight gradient: k_grouped, K-major operands, 1x128 scales
    over the tokens on both sides (A's M-major)."""
    text = ir.grouped_matmul("wgrad", layout="k_grouped", num_groups=4, n=n, k=None, m=m,
                             dtype="f8E4M3FN", a_scale="block_mn", b_scale=b_scale,
                             out_dtype="f32", kernel_plan=kernel_plan, config=config)
    return ggc.compile_ir(text, emit=emit)


def scale_maps(compiled, operand):
    return [p for p in compiled.kernel_info[0]["params"]
            if p["kind"] == "tensor_map" and p["operand"] == operand]


def test_weight_gradient_scales_ride_the_stages_by_default():
    out = compile_weight_gradient()
    assert "scales = stages" in out.plans[0]["attributes"]["kernel_plan"]
    ptx = out.asm["ptx"]
    # A's window and B's columns by TMA, one box each a stage; no slot
    # copies, no per-block publication of the columns (a named barrier of
    # one consumer warpgroup's 128 threads).
    (window,) = scale_maps(out, "a_scale")
    (columns,) = scale_maps(out, "b_scale")
    assert window["box"][0] == 128 + 4
    block_n = int(re.search(r"block = \[128, (\d+), 128\]",
                            out.plans[0]["attributes"]["config"]).group(1))
    assert columns["box"] == [block_n, 1]
    assert not re.search(r"cp\.async\.wait_group", ptx)
    assert not re.search(r"bar\.sync\s+\d+,\s*128;", ptx)
    # The promotion reads the columns from the stage, so the loop gives the
    # stage back after it.
    assert "promote_reads_stage" in out.asm["ggk"]


def test_weight_gradient_slots_where_the_scales_are_no_box():
    # K-major 1x128 scales of B ([N, ceil(K/128)]): a tile's columns of them
    # are no TMA box; M off 4: A's rows of them are not 16-byte aligned.
    for kwargs in ({"b_scale": "block1x128"}, {"m": 250}):
        out = compile_weight_gradient(**kwargs)
        assert "scales = slots" in out.plans[0]["attributes"]["kernel_plan"], kwargs
        assert scale_maps(out, "b_scale") == [] and scale_maps(out, "a_scale") == []


def test_weight_gradient_plan_may_still_say_slots():
    out = compile_weight_gradient(kernel_plan=plan("pipelined", "slots", "[24, 240]"))
    assert "scales = slots" in out.plans[0]["attributes"]["kernel_plan"]
    assert scale_maps(out, "b_scale") == []
    assert re.search(r"cp\.async\.wait_group", out.asm["ptx"])


def test_weight_gradient_columns_in_the_stages_take_wide_tiles():
    # The stages' box of B's column scales spans up to 256 columns (the
    # slots' copies stop at 128): a 128x176 tile with serial promotion
    # (two of its fragments fit the registers, three do not) compiles
    # without spills.
    out = compile_weight_gradient(
        m=512, n=1024, emit="cubin",
        kernel_plan=plan("serial", "stages", "[40, 232]").replace("swizzled", "dense"),
        config="#gg.config<block = [128, 176, 128], stages = 3, cluster = [1, 1], sms = 132>")
    (columns,) = scale_maps(out, "b_scale")
    assert columns["box"] == [176, 1]
    (resources,) = out.resources.values()
    assert resources["spill_store_bytes"] == 0
    with pytest.raises(ggc.CompilationError, match="block N over 128"):
        compile_weight_gradient(
            m=512, n=1024, kernel_plan=plan("serial", "slots", "[40, 232]").replace(
                "swizzled", "dense"),
            config="#gg.config<block = [128, 176, 128], stages = 3, cluster = [1, 1], sms = 132>")


@pytest.mark.parametrize("tokens, out_dtype, accumulate, block_n, promotion, staging, reads", [
    # group sizes unknown, or few K blocks a tile: 128x128, serial (B's
    # column scales beside three accumulators would spill), the column
    # scales read at the promotion
    (None, "f32", True, 128, "serial", "swizzled", None),
    (512, "f32", True, 128, "serial", "swizzled", None),
    # long groups: 144 keeps f32's store pool and a fourth stage, with B's
    # column scales read at the wgmma's issue; its 576-byte rows are no
    # whole 128-byte chunks, and TMA adds 64-byte ones slower than whole rows
    (2048, "f32", True, 144, "serial", "dense", "at_issue"),
    (2048, "f32", False, 144, "serial", "swizzled_64", "at_issue"),  # stored, not added
    # 144's bf16 rows would lose the pool; 160's are five 64-byte chunks
    (8192, "bf16", False, 160, "serial", "swizzled_64", None),
])
def test_weight_gradient_tiles_follow_the_tokens_a_group_holds(tokens, out_dtype, accumulate,
                                                               block_n, promotion, staging,
                                                               reads):
    text = ir.grouped_matmul("wgrad", layout="k_grouped", num_groups=4, n=2048, k=None,
                             m=1024, dtype="f8E4M3FN", a_scale="block_mn",
                             b_scale="block1x128_mn", out_dtype=out_dtype, expected_m=tokens,
                             accumulate=accumulate)
    attributes = ggc.compile_ir(text, emit="gg-config").plans[0]["attributes"]
    assert f"block = [128, {block_n}, 128]" in attributes["config"]
    assert f"promotion = {promotion}" in attributes["kernel_plan"]
    assert "scales = stages" in attributes["kernel_plan"]
    assert f"staging = {staging}" in attributes["kernel_plan"]
    if reads is None:
        assert "column_scale_reads" not in attributes["kernel_plan"]
    else:
        assert f"column_scale_reads = {reads}" in attributes["kernel_plan"]
        assert "registers = [24, 240]" in attributes["kernel_plan"]


@pytest.mark.parametrize("accumulate", [True, False])
def test_long_group_weight_gradient_holds_its_column_scales_without_spills(accumulate):
    # The f32 long-group default (128x144, four stages, B's column scales
    # held in registers from the wgmma's issue, 240 a consumer) compiles
    # without spills, added to `out` or stored.
    text = ir.grouped_matmul("wgrad", layout="k_grouped", num_groups=4, n=2048, k=None,
                             m=1024, dtype="f8E4M3FN", a_scale="block_mn",
                             b_scale="block1x128_mn", out_dtype="f32", expected_m=4096,
                             accumulate=accumulate)
    out = ggc.compile_ir(text, emit="cubin")
    assert "column_scale_reads = at_issue" in out.plans[0]["attributes"]["kernel_plan"]
    assert "ggk.load_column_scales" in out.asm["ggk"]
    (resources,) = out.resources.values()
    assert resources["spill_store_bytes"] == 0 and resources["spill_load_bytes"] == 0


def test_a_staged_tile_of_64_byte_chunks_is_stored_through_64B_swizzled_maps():
    # The f32 weight gradient's 128x176 tile as the plan's staging =
    # swizzled_64 asks: 16-column boxes whose maps swizzle by 64 bytes, the
    # layout its consumers stage in, without spills.
    text = ir.grouped_matmul(
        "wgrad", layout="k_grouped", num_groups=4, n=2048, k=None, m=1024,
        dtype="f8E4M3FN", a_scale="block_mn", b_scale="block1x128_mn", out_dtype="f32",
        config="#gg.config<block = [128, 176, 128], stages = 3, cluster = [1, 1], sms = 132>",
        kernel_plan="#gg.kernel_plan<promotion = serial, scales = stages, "
                    "registers = [40, 232], staging = swizzled_64>")
    out = ggc.compile_ir(text, emit="cubin")
    pool = [p for p in out.kernel_info[0]["params"]
            if p["kind"] == "tensor_map" and p["operand"] == "out"]
    assert [p["box"][:2] for p in pool] == [[16, h] for h in (128, 64, 32, 16, 8, 4, 2, 1)]
    assert {p["swizzle"] for p in pool} == {"64B"}
    (resources,) = out.resources.values()
    assert resources["spill_store_bytes"] == 0


def test_expected_group_tokens_rounds_the_mean_down_to_a_power_of_two():
    from ggc import ops
    assert ops.expected_group_tokens(34304, 4) == 8192
    assert ops.expected_group_tokens(16384, 32) == 512
    assert ops.expected_group_tokens(3, 8) == 1  # fewer tokens than groups
    assert ops.expected_group_tokens(0, 0) == 1
    assert ops.expected_group_tokens(1 << 20, 4) == 8192  # capped
    assert ops.expected_group_tokens(object(), 4) is None  # a symbolic count


def test_a_tile_staged_a_slice_at_a_time_keeps_its_stages():
    # The f32 weight gradient's 128x160 tile with store_slice = 32: a ring
    # of two 128 x 32 buffers (32 KB) instead of the whole 80 KB tile
    # leaves five stages, where the whole tile keeps three; each of the five
    # slices stores 32-column boxes (128B-swizzled), the second on waiting
    # for all but the newest store group to have read its buffer.
    def wgrad(store_slice):
        text = ir.grouped_matmul(
            "wgrad", layout="k_grouped", num_groups=4, n=2048, k=None, m=1024,
            dtype="f8E4M3FN", a_scale="block_mn", b_scale="block1x128_mn", out_dtype="f32",
            accumulate=True, store_slice=store_slice,
            config="#gg.config<block = [128, 160, 128], stages = 5, cluster = [1, 1], sms = 132>")
        return ggc.compile_ir(text, emit="cubin")
    whole, sliced = wgrad(None), wgrad(32)
    assert "stages = 3" in whole.plans[0]["attributes"]["config"]
    assert "stages = 5" in sliced.plans[0]["attributes"]["config"]
    pool = [p for p in sliced.kernel_info[0]["params"]
            if p["kind"] == "tensor_map" and p["operand"] == "out"]
    assert {tuple(p["box"][:1]) for p in pool} == {(32,)}
    assert {p["swizzle"] for p in pool} == {"128B"}
    waits = re.findall(r"cp\.async\.bulk\.wait_group\.read\s+(\d+);", sliced.asm["ptx"])
    assert waits == ["0", "1", "1", "1", "1"]
    (resources,) = sliced.resources.values()
    assert resources["spill_store_bytes"] == 0
