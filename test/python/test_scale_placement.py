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


def compile_masked(a_scale="block_mn", kernel_plan=None, emit="ptx"):
    text = ir.grouped_matmul("k", layout="masked", num_groups=4, n=2112, k=640, m=256,
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


def test_stages_are_rejected_where_the_scales_cannot_ride_them():
    # K-major 1x128 scales of A: a tile's rows of scales are no TMA box.
    with pytest.raises(ggc.CompilationError, match="cannot carry scales in the stages"):
        compile_masked(a_scale="block", kernel_plan=plan("pipelined", "stages", "[24, 240]"))
