"""What stage gg-config chose, as data: CompiledIR.plans (the C API's
ggc_result_kernel_plans) agrees with the printed IR."""

import os
import re

import pytest

import ggc
from ggc import cache

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLE = os.path.join(ROOT, "docs", "examples", "masked_bf16_decode.mlir")

PRINTED_CONFIG = re.compile(r"#gg\.config<block = \[(\d+), (\d+), (\d+)\], stages = (\d+), "
                            r"cluster = \[(\d+), (\d+)\], sms = (\d+)(?:, split_n = (\d+))?>")

USER_CONFIG = "#gg.config<block = [128, 64, 64], stages = 3, cluster = [1, 1], sms = 100>"

TWO_FUNCTIONS = """
func.func @first(%a: memref<?x256xbf16>, %b: memref<4x512x256xbf16>,
                 %off: memref<5xi32>, %o: memref<?x512xbf16>) {{
  gg.grouped_matmul contiguous a(%a : memref<?x256xbf16>)
      b(%b : memref<4x512x256xbf16>) groups(%off : memref<5xi32>)
      out(%o : memref<?x512xbf16>) {{config = {config}}}
  return
}}
func.func @second(%a: memref<4x256x512xbf16>, %b: memref<4x1024x512xbf16>,
                  %m: memref<4xi32>, %o: memref<4x256x1024xbf16>) {{
  gg.grouped_matmul masked a(%a : memref<4x256x512xbf16>)
      b(%b : memref<4x1024x512xbf16>) groups(%m : memref<4xi32>)
      out(%o : memref<4x256x1024xbf16>) {{expected_m = 40 : i64}}
  return
}}
"""


def _example():
    with open(EXAMPLE) as f:
        return f.read()


def _as_plan_config(printed):
    bm, bn, bk, stages, cm, cn, sms, split = PRINTED_CONFIG.fullmatch(printed).groups()
    return {"block": [int(bm), int(bn), int(bk)], "stages": int(stages),
            "cluster": [int(cm), int(cn)], "sms": int(sms), "split_n": int(split or 1)}


def test_the_plan_holds_the_config_the_ir_prints():
    out = ggc.compile_ir(_example(), emit="gg-config")
    (plan,) = out.plans
    (printed,) = PRINTED_CONFIG.finditer(out.asm["gg-config"])
    assert plan["function"] == "masked_decode"
    assert plan["config"] == _as_plan_config(printed.group(0))
    assert plan["attributes"]["config"] == printed.group(0)
    # Every plan attribute the IR prints is there, as printed; the
    # operands' own attributes (expected_m) are not.
    for name, text in plan["attributes"].items():
        assert f"{name} = {text}" in out.asm["gg-config"]
    assert {"config", "store_pool", "schedule", "padding",
            "overfetch"} <= set(plan["attributes"])
    assert "expected_m" not in plan["attributes"]
    assert plan["store_pool"] == [int(x) for x in re.search(
        r"store_pool = array<i64: ([\d, ]+)>", out.asm["gg-config"]).group(1).split(", ")]
    assert plan["schedule"]["order"] in ("m_fastest", "n_fastest")
    assert plan["padding"]["idle_warpgroups"] in ("compute", "skip")
    assert set(plan["overfetch"]) == {"rows", "k"}


def test_a_users_config_is_reported_as_written_and_plans_follow_module_order():
    out = ggc.compile_ir(TWO_FUNCTIONS.format(config=USER_CONFIG), emit="gg-config")
    assert [p["function"] for p in out.plans] == ["first", "second"]
    assert out.plans[0]["attributes"]["config"] == USER_CONFIG
    assert out.plans[0]["config"] == {"block": [128, 64, 64], "stages": 3,
                                      "cluster": [1, 1], "sms": 100, "split_n": 1}
    # The contiguous op's tall groups walk in M bands; the masked op's
    # static groups do not.
    assert out.plans[0]["schedule"]["m_band"] > 0
    assert out.plans[1]["schedule"]["m_band"] == 0
    # The second is chosen: a decode batch takes 64-row tiles.
    assert out.plans[1]["config"]["block"][0] == 64


@pytest.mark.parametrize("n, k, expected_m, block, band", [
    (28672, 4096, None, [128, 128, 64], 12),
    (28672, 4096, 16, [64, 64, 64], 0),
    (28672, 4096, 64, [128, 128, 64], 0),
    (28672, 4096, 255, [128, 128, 64], 0),
    (28672, 4096, 256, [128, 256, 64], 0),
    (28672, 4096, 1024, [128, 256, 64], 0),
    (28672, 4096, 2560, [128, 256, 64], 19),
    (28672, 4096, 4096, [128, 256, 64], 19),
    # N 4,096 keeps 128-wide tiles up to 2,047 rows (kWideNMinN), 256 from
    # 2,048 (kTallGroupRows).
    (4096, 7168, 1024, [128, 128, 64], 0),
    (4096, 7168, 2047, [128, 128, 64], 12),
    (4096, 7168, 2048, [128, 256, 64], 19)])
def test_a_contiguous_groups_rows_hint_chooses_the_tile(n, k, expected_m, block, band):
    from ggc import ir
    out = ggc.compile_ir(ir.grouped_matmul("k", layout="contiguous", num_groups=8, n=n,
                                           k=k, expected_m=expected_m), emit="gg-config")
    assert out.plans[0]["config"]["block"] == block
    assert out.plans[0]["schedule"]["m_band"] == band


@pytest.mark.parametrize("n, k, expected_m, block_n, order", [
    (1536, 2048, 256, 192, "n_fastest"),   # Qwen3-like up, 256 rows an expert
    (1536, 2048, 1024, 192, "n_fastest"),  # ... 1,024 rows
    (1536, 2048, 64, 128, "m_fastest"),    # decode-sized groups: neither rule
    (2048, 768, 1024, 128, "n_fastest"),   # Qwen3-like down: N no multiple of 192
    (2880, 2880, 128, 192, "m_fastest"),   # gpt-oss-like down: 128 rows, 8.3 MB of weights
    (4096, 7168, 512, 128, "m_fastest"),   # DeepSeek-V3-like up: long K, large B
])
def test_fine_grained_fp8_experts_choose_wide_tiles_and_n_first(n, k, expected_m, block_n,
                                                                order):
    """The MoE layers' FP8 GEMMs as ggc.moe calls them (contiguous, 1x128
    and 128x128 block scales, the rows hint) on sm_90a: 128x192 tiles where
    N is a multiple of 192, K at most 3,072 and groups hold 128 rows or
    more; N blocks first where an expert's weights take at most 4 MiB and
    groups hold 256 to 1,024 rows (docs/performance-history.md,
    twenty-second session)."""
    from ggc import ir
    out = ggc.compile_ir(ir.grouped_matmul("k", layout="contiguous", num_groups=128, n=n, k=k,
                                           expected_m=expected_m, dtype="f8E4M3FN",
                                           a_scale="block_mn", b_scale="block"),
                         arch="sm_90a", emit="gg-config")
    assert out.plans[0]["config"]["block"] == [128, block_n, 128]
    assert out.plans[0]["schedule"]["order"] == order


def _fp8_weight_gradient(out_dtype, accumulate, expected_m, emit, m, n):
    """The FP8 weight gradient (k_grouped over 32 groups, 1x128 scales over
    the tokens) compiled for sm_90a up to `emit`."""
    from ggc import ir
    return ggc.compile_ir(ir.grouped_matmul("k", layout="k_grouped", num_groups=32, n=n, k=None,
                                            m=m, b_layout="nk", dtype="f8E4M3FN",
                                            out_dtype=out_dtype, a_scale="block_mn",
                                            b_scale="block1x128_mn", accumulate=accumulate,
                                            expected_m=expected_m),
                          arch="sm_90a", emit=emit)


@pytest.mark.parametrize("out_dtype, accumulate, expected_m, block_n, promotion", [
    ("bf16", False, 256, 160, "serial"),     # the FP8 recipe's gradient, 256 tokens an expert
    ("bf16", False, 1024, 160, "serial"),
    ("bf16", False, 255, 128, "serial"),  # fewer tokens: 128 columns, serial (no spill)
    ("f32", True, 1024, 128, "serial"),   # added to f32: wide from 2,048 tokens
    ("f32", True, 2048, 144, "serial"),
    ("f32", False, 1024, 128, "serial"),  # f32 written: as added
    ("bf16", True, 1024, 128, "serial"),  # bf16 added to: as f32 added
])
def test_fp8_weight_gradient_tiles_by_group_tokens_and_output(out_dtype, accumulate, expected_m,
                                                               block_n, promotion):
    """gg-select-config's step 3d: the FP8 weight gradient (k_grouped,
    1x128 scales over the tokens) takes its wide serial tile from 256
    tokens an expert where it writes a 16-bit gradient and from 2,048
    where it adds to (or writes) an f32 one (docs/performance-history.md,
    thirty-third and thirty-fourth sessions)."""
    out = _fp8_weight_gradient(out_dtype, accumulate, expected_m, "gg-config", m=7168, n=2048)
    assert out.plans[0]["config"]["block"] == [128, block_n, 128]
    assert f"promotion = {promotion}" in out.asm["gg-config"]


@pytest.mark.parametrize("out_dtype, accumulate, expected_m", [
    ("bf16", False, 128), ("f32", True, 1024), ("f32", True, 4096)])
def test_fp8_weight_gradient_defaults_spill_nothing(out_dtype, accumulate, expected_m):
    """gg-plan-kernel counts B's column scales beside pipelined promotion's
    three accumulators: the FP8 weight gradient's 128x128 tiles, which
    spilled pipelined (28-36 bytes a thread), are serial and spill
    nothing; on 128 columns an f32 gradient reads the scales at the
    promotion, wider tiles at the wgmma's issue."""
    out = _fp8_weight_gradient(out_dtype, accumulate, expected_m, "cubin", m=2048, n=7168)
    plan = out.plans[0]["attributes"]["kernel_plan"]
    assert "promotion = serial" in plan
    assert ("column_scale_reads = at_issue" in plan) == (out.plans[0]["config"]["block"][1] > 128)
    (resources,) = out.resources.values()
    assert resources["spill_store_bytes"] == 0 and resources["spill_load_bytes"] == 0


def test_two_epilogue_blocks_are_the_users_choice_and_change_the_kernel():
    """gg-plan-kernel keeps epilogue_blocks at 1; a plan of 2 (bench_grouped_gemm's
    'eb2') is kept, reported, and issues the tile's first two K blocks before the
    deferred epilogue: another kernel, still without spills."""
    from ggc import ir
    spec = dict(layout="contiguous", num_groups=128, n=2048, k=768, expected_m=1024,
                dtype="f8E4M3FN", a_scale="block_mn", b_scale="block")
    chosen = ggc.compile_ir(ir.grouped_matmul("k", **spec), arch="sm_90a", emit="ptx")
    chosen_plan = chosen.plans[0]["attributes"]["kernel_plan"]
    assert "epilogue_blocks" not in chosen_plan and "promotion = pipelined" in chosen_plan
    plan = chosen_plan[:-1] + ", epilogue_blocks = 2>"  # the chosen plan, but for the field
    two = ggc.compile_ir(ir.grouped_matmul("k", kernel_plan=plan, **spec), arch="sm_90a",
                         emit="cubin")
    assert "epilogue_blocks = 2" in two.plans[0]["attributes"]["kernel_plan"]
    assert two.asm["ptx"] != chosen.asm["ptx"]
    (resources,) = two.resources.values()
    assert resources["spill_store_bytes"] == 0


def test_scale_kinds_describe_operands_not_the_plan():
    with open(os.path.join(ROOT, "docs", "examples", "contiguous_mxfp8.mlir")) as f:
        out = ggc.compile_ir(f.read(), emit="gg-config")
    assert "<mx 1x32>" in out.asm["gg-config"]  # the scale kinds, #gg.scale
    assert not {"a_scale_kind", "b_scale_kind"} & set(out.plans[0]["attributes"])


def test_there_is_no_plan_before_stage_gg_config():
    assert ggc.compile_ir(_example(), emit="gg").plans == []


def test_later_stages_keep_the_plans():
    config = ggc.compile_ir(_example(), emit="gg-config").plans
    assert ggc.compile_ir(_example(), emit="nvvm").plans == config


def test_the_disk_cache_keeps_the_plans(tmp_path, monkeypatch):
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path / "cache"))
    cache._memory.clear()
    compiled, source = cache.compile_cached(_example(), emit="gg-config", arch="sm_90a",
                                            num_sms=132)
    assert source is None and compiled.plans
    cache._memory.clear()  # a fresh process: only the disk cache remains
    again, source = cache.compile_cached(_example(), emit="gg-config", arch="sm_90a",
                                         num_sms=132)
    assert source == "disk" and again.plans == compiled.plans


@pytest.mark.parametrize("num_sms", [100, 132])
def test_the_chosen_grid_follows_num_sms(num_sms):
    out = ggc.compile_ir(_example(), emit="gg-config", num_sms=num_sms)
    assert out.plans[0]["config"]["sms"] == num_sms


def _launch_constants(a, b, expected_m=None, k_major=False, **groups):
    """The constexprs ggc.ops.grouped_gemm launches with (checked on the
    CPU: no launch)."""
    from ggc import ops
    slots = dict(offsets=None, masked_m=None, m_indices=None, k_offsets=None, offs=None)
    slots.update(groups)
    tensors = (a, b, slots["offsets"], slots["masked_m"], slots["m_indices"],
               slots["k_offsets"], slots["offs"], None, None, None)
    return ops._checked_call(tensors, out_dtype=None, b_layout="nk", expected_m=expected_m,
                             a_scale_kind=None, b_scale_kind=None, k_major=k_major,
                             validate=False)[2]


@pytest.mark.parametrize("rows, groups, hint", [(8192, 8, 1024), (8191, 8, 512),
                                                (100_000, 8, 4096), (3, 8, 1), (0, 8, 1),
                                                (4096, 1, None)])
def test_a_contiguous_call_without_a_hint_compiles_with_its_rows_mean(rows, groups, hint):
    """ggc.ops derives expected_m from a's rows over the groups (mean_hint,
    capped at 4,096) where the caller gives none and there are two groups
    or more, over CSR offsets and, f8 only, DeepGEMM's padded layout
    (m_indices: its padding rows count too); a caller's hint is kept, and
    masked groups (whose M_max the compiler reads), bf16 padded calls
    (whose kernel reads none) and weight gradients get none."""
    import torch
    a = torch.zeros(rows, 64, dtype=torch.bfloat16)
    b = torch.zeros(groups, 128, 64, dtype=torch.bfloat16)
    offsets = torch.zeros(groups + 1, dtype=torch.int32)
    ends = torch.zeros(groups, dtype=torch.int32)
    for given in ({"offsets": offsets}, {"offs": ends}):
        assert _launch_constants(a, b, **given).get("EXPECTED_M") == hint
        assert _launch_constants(a, b, expected_m=64, **given)["EXPECTED_M"] == 64
    masked = torch.zeros(groups, max(rows // groups, 1), 64, dtype=torch.bfloat16)
    counts = torch.zeros(groups, dtype=torch.int32)
    assert "EXPECTED_M" not in _launch_constants(masked, b, masked_m=counts)
    tags = torch.zeros(rows, dtype=torch.int32)
    assert "EXPECTED_M" not in _launch_constants(a, b, m_indices=tags)
    a8, b8 = a.to(torch.float8_e4m3fn), b.to(torch.float8_e4m3fn)
    assert _launch_constants(a8, b8, m_indices=tags).get("EXPECTED_M") == hint
    grad = torch.zeros(rows, 32, dtype=torch.bfloat16)
    assert "EXPECTED_M" not in _launch_constants(a, grad, offs=ends)


@pytest.mark.parametrize("tokens, groups, hint", [(34304, 4, 8192), (34304, 16, 2048),
                                                  (4096, 8, 512), (4096, 1, 4096)])
def test_an_fp8_weight_gradient_without_a_hint_compiles_with_its_tokens_mean(tokens, groups,
                                                                            hint):
    """An FP8 weight gradient (k_offsets, K-major) with 1x128 scales of b
    and no expected_m takes the tokens' mean over its groups
    (ops.expected_group_tokens, as the DeepGEMM drop-in and ggc.training
    pass it), which gg-select-config's long-group tiles read; a caller's
    hint is kept, and calls whose tiles read none get none: per-tensor
    scales of b, no scales, BF16."""
    import torch
    from ggc import ops
    a = torch.zeros(256, tokens, dtype=torch.float8_e4m3fn)
    b = torch.zeros(512, tokens, dtype=torch.float8_e4m3fn)
    k_offsets = torch.zeros(groups + 1, dtype=torch.int32)
    kb = -(-tokens // 128)
    a_scale, b_scale = torch.ones(kb, 256).T, torch.ones(kb, 512).T  # M-/N-major

    def constants(expected_m=None, b_scale=b_scale):
        tensors = (a, b, None, None, None, k_offsets, None, a_scale, b_scale, None)
        return ops._checked_call(tensors, out_dtype=None, b_layout="nk",
                                 expected_m=expected_m, a_scale_kind=None, b_scale_kind=None,
                                 k_major=True, validate=False)[2]
    assert constants().get("EXPECTED_M") == hint
    assert constants()["B_KIND"].startswith("block1x128")
    assert constants(expected_m=64)["EXPECTED_M"] == 64
    assert "EXPECTED_M" not in constants(b_scale=torch.ones(groups))
    assert "EXPECTED_M" not in _launch_constants(a, b, k_major=True, k_offsets=k_offsets)
    bf16 = (torch.zeros(tokens, 256, dtype=torch.bfloat16),
            torch.zeros(tokens, 512, dtype=torch.bfloat16))
    assert "EXPECTED_M" not in _launch_constants(*bf16, k_offsets=k_offsets)


@pytest.mark.parametrize("n, k, rows, block", [(2880, 2880, 64, [128, 128, 64]),
                                               (1088, 1280, None, [128, 128, 64]),
                                               (960, 2880, None, [128, 64, 64]),
                                               (16384, 1280, 256, [128, 256, 64]),
                                               (4096, 1280, 256, [128, 128, 64])])
def test_sixteen_bit_contiguous_column_tiles(n, k, rows, block):
    """N a multiple of 64 but not of 128 takes 128-wide tiles from N =
    1,024 (the last ragged); 128x256 from 256 rows a group needs N >=
    16,384 (gg-select-config, sm_90a)."""
    from ggc import ir
    out = ggc.compile_ir(ir.grouped_matmul("k", layout="contiguous", num_groups=8, n=n,
                                           k=k, expected_m=rows), emit="gg-config")
    assert out.plans[0]["config"]["block"] == block


@pytest.mark.parametrize("expected_m, dtype, idle", [
    (150, "f8E4M3FN", "skip"),     # a typical group's last 128-row tile partial
    (97, "f8E4M3FN", "skip"),
    (256, "f8E4M3FN", "compute"),  # whole tiles: the full groups of a prefill batch
    (None, "f8E4M3FN", "compute"),  # no hint: taken as full groups
    (150, "bf16", "compute"),      # bf16 masked not measured: computes
])
def test_masked_batches_skip_idle_warpgroups_where_their_hint_leaves_a_partial_tile(
        expected_m, dtype, idle):
    """gg-eliminate-padding's default for masked ops, end to end from the
    op the Python API builds (128-row tiles at these hints: N 2,048 fills
    as many waves of 64x256 tiles, so gg-select-config keeps 128x128)."""
    from ggc import ir
    scales = dict(a_scale="block_mn", b_scale="block") if dtype.startswith("f8") else {}
    hint = {} if expected_m is None else {"expected_m": expected_m}
    out = ggc.compile_ir(ir.grouped_matmul("k", layout="masked", num_groups=8, m=256, n=2048,
                                           k=7168, dtype=dtype, **scales, **hint),
                         emit="gg-config")
    (plan,) = out.plans
    assert plan["config"]["block"][0] == 128
    assert plan["padding"]["idle_warpgroups"] == idle


@pytest.mark.parametrize("stages, kept, pool", [(0, 5, []), (4, 4, [128, 64, 32, 16, 8, 4, 2, 1])])
def test_masked_fp8_pairs_keep_their_fifth_stage(stages, kept, pool):
    """gg-tma-store-pool: paired 128x192 masked f8 tiles store per thread
    where the staged tile would cost a stage (five stages, no pool), and
    take the pool where the stated stages leave it room (as the GPU test of
    clusters runs both)."""
    from ggc import ir
    config = (f"#gg.config<block = [128, 192, 128], stages = {stages}, cluster = [2, 1], "
              "sms = 132>")
    plan = ggc.compile_ir(ir.grouped_matmul(
        "k", layout="masked", num_groups=6, n=448, k=512, m=384, dtype="f8E4M3FN",
        a_scale="block_mn", b_scale="block", config=config), emit="gg-config").plans[0]
    assert plan["config"]["stages"] == kept
    assert plan["store_pool"] == pool


@pytest.mark.parametrize("stages, kept, pool", [(0, 5, []), (4, 4, [64, 32, 16, 8, 4, 2, 1])])
def test_masked_fp8_split_tiles_keep_their_fifth_stage(stages, kept, pool):
    """gg-tma-store-pool: 64x256 masked f8 tiles split between two consumer
    warpgroups store per thread where the staged tile would cost a stage,
    and take the pool where the stated stages leave it room; 128x128 tiles
    (not measured so) keep the pool and lose the stage."""
    from ggc import ir
    def plan(config):
        return ggc.compile_ir(ir.grouped_matmul(
            "k", layout="masked", num_groups=16, n=4096, k=7168, m=128, dtype="f8E4M3FN",
            a_scale="block", b_scale="block", expected_m=60, config=config),
            emit="gg-config", shared_memory_bytes=232448).plans[0]
    split = plan(f"#gg.config<block = [64, 256, 128], stages = {stages}, cluster = [1, 1], "
                 "sms = 132, split_n = 2>")
    assert split["config"]["stages"] == kept
    assert split["store_pool"] == pool
    square = plan("#gg.config<block = [128, 128, 128], stages = 0, cluster = [1, 1], sms = 132>")
    assert square["store_pool"] == [128, 64, 32, 16, 8, 4, 2, 1]
    assert square["config"]["stages"] < 6
