"""gg's schedule group_reads = shared without a GPU: the kernel copies the
group counts or offsets into a table in shared memory at its entry (the
table's bytes counted in the launch's shared bytes) and its walk reads
them there instead of loading each group's from global memory, on every
target; layouts with no walk over groups refuse it by name; the default
stays global. (test/gpu/test_grouped_matmul.py and test_zero_ungrouped.py
run the kernels on a GPU.)"""

import pytest

import ggc
from ggc import ir

MASKED = dict(layout="masked", num_groups=12, n=256, k=256, m=128)
CONTIGUOUS = dict(layout="contiguous", num_groups=12, n=256, k=256)


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path / "cache"))


def compiled(spec, group_reads, arch="sm_90a"):
    return ggc.compile_ir(ir.grouped_matmul("g", group_reads=group_reads, **spec),
                          emit="ptx", arch=arch)


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80", "sm_89"])
@pytest.mark.parametrize("spec, offsets_dtype, table_bytes", [
    (MASKED, "i32", 12 * 4), (CONTIGUOUS, "i32", 13 * 4), (CONTIGUOUS, "i64", 13 * 8)])
def test_the_walk_reads_the_table(arch, spec, offsets_dtype, table_bytes):
    spec = dict(spec, offsets_dtype=offsets_dtype)
    table = compiled(spec, "shared", arch)
    plain = compiled(spec, "global", arch)
    assert "ggk.fill_group_table" in table.asm["ggk"] and " table(" in table.asm["ggk"]
    assert "fill_group_table" not in plain.asm["ggk"] and " table(" not in plain.asm["ggk"]
    grown = table.kernel_info[0]["shared_bytes"] - plain.kernel_info[0]["shared_bytes"]
    assert table_bytes <= grown < table_bytes + 16  # 16-byte aligned, after the others
    # The walks' loads of counts or offsets leave global memory: only the
    # fill's remain there.
    assert table.asm["ptx"].count("ld.global") < plain.asm["ptx"].count("ld.global")
    assert "ld.shared" in table.asm["ptx"]


def test_the_plan_names_the_choice_and_the_default_is_global():
    table = compiled(MASKED, "shared")
    assert table.plans[0]["schedule"]["group_reads"] == "shared"
    assert "group_reads = shared" in table.plans[0]["attributes"]["schedule"]
    chosen = ggc.compile_ir(ir.grouped_matmul("g", **MASKED), emit="ptx")
    assert chosen.plans[0]["schedule"]["group_reads"] == "global"
    assert "group_reads" not in chosen.plans[0]["attributes"]["schedule"]


def test_a_layout_without_a_walk_over_groups_refuses_it():
    with pytest.raises(Exception, match="group_reads = shared tables the counts or offsets "
                                        "a masked or contiguous walk steps over; layout "
                                        "k_grouped takes group_reads = global"):
        compiled(dict(layout="k_grouped", num_groups=4, n=256, k=None, m=256), "shared")


def test_an_unknown_choice_is_named():
    with pytest.raises(Exception, match="expected global or shared, got 'local'"):
        compiled(MASKED, "local")


def test_an_sm80_kernel_on_a_hopper_budget_keeps_its_table():
    # The GPU suite builds sm_80 kernels on an H100, whose 227 KiB budget
    # sizes the stages past an A100's 163 KiB: the table, counted in that
    # budget, is not refused against the target's limit.
    def on_hopper_budget(group_reads):
        return ggc.compile_ir(ir.grouped_matmul(
            "g", layout="contiguous", num_groups=6, n=320, k=200, zero_ungrouped=True,
            group_reads=group_reads), emit="ptx", arch="sm_80", shared_memory_bytes=232448)
    table, plain = on_hopper_budget("shared"), on_hopper_budget("global")
    assert plain.kernel_info[0]["shared_bytes"] > 166912
    assert table.kernel_info[0]["shared_bytes"] > plain.kernel_info[0]["shared_bytes"]
