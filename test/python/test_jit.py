"""@ggc.jit and ggc.language: tracing, IR text, errors, caches, autotune,
and the PyTorch custom ops (all without a GPU)."""

import json
import os
import subprocess
import sys
import textwrap

import pytest

import ggc
import ggc.language as gl
from ggc import spec

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture(autouse=True)
def private_cache(tmp_path, monkeypatch):
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path / "cache"))


@ggc.jit
def moe_up(x: gl.Rows, w: gl.Weights, m_indptr: gl.Offsets, route: gl.RowVector,
           bias: gl.ColVector, scale: gl.GroupScalar, y: gl.Out,
           BLOCK_N: gl.constexpr = None):
    acc = gl.grouped_dot(x, w, m_indptr)
    acc = gl.silu(acc * route + bias) * scale
    gl.store(y, gl.maximum(acc, 0.0) + gl.group_id())


ARGS = (spec([None, 512], "bf16"), spec([8, 256, 512], "bf16"), spec([9], "i32"),
        spec([None], "bf16"), spec([8, 256], "f32"), spec([8], "f32"),
        spec([None, 256], "bf16"))


def test_trace_states_the_grouped_matmul_and_its_epilogue():
    text = moe_up.trace(*ARGS)
    assert "gg.grouped_matmul contiguous a(%x : memref<?x512xbf16>)" in text
    assert "rows(%route : memref<?xbf16>)" in text
    assert "cols(%bias : memref<8x256xf32>)" in text
    assert "group_scalars(%scale : memref<8xf32>)" in text
    # bf16 row values are widened; constants, silu, max and the group index.
    assert "arith.extf %r0 : bf16 to f32" in text
    assert "gg.silu" in text and "arith.maximumf" in text
    assert "arith.index_cast %group : index to i64" in text
    # Every epilogue op carries the Python line that wrote it.
    assert f'loc("{__file__}":' in text


def test_compile_without_a_gpu_gives_every_stage():
    kernel = moe_up.compile(*ARGS)
    assert set(kernel.asm) == {"gg", "gg-config", "ggk", "nvvm", "llvm", "ptx", "cubin"}
    assert moe_up.asm is kernel.asm
    assert "wgmma.mma_async" in moe_up.asm["ptx"]


@ggc.jit
def fp8_weight_gradient(dy_t: gl.KMajor, x_t: gl.KMajor, k_offsets: gl.Offsets,
                        dy_scale: gl.Scale, x_scale: gl.Scale, dw: gl.Out):
    gl.store(dw, gl.grouped_dot(dy_t, x_t, k_offsets, a_scale=dy_scale, b_scale=x_scale,
                                a_scale_kind="block", b_scale_kind="block1x128"))


def test_k_major_weight_gradient_takes_block_scales_over_the_concatenated_k():
    args = (spec([256, None], "f8e4m3fn"), spec([384, None], "f8e4m3fn"), spec([5], "i32"),
            spec([256, None], "f32"), spec([384, None], "f32"), spec([4, 256, 384], "f32"))
    text = fp8_weight_gradient.trace(*args)
    assert "gg.grouped_matmul k_grouped a(%dy_t : memref<256x?xf8E4M3FN>)" in text
    assert "a_scale(%dy_scale : memref<256x?xf32>, <block 1x128>)" in text
    assert "b_scale(%x_scale : memref<384x?xf32>, <block 1x128>)" in text
    kernel = fp8_weight_gradient.compile(*args)
    # K blocks start on the 128-wide scale blocks (gg-plan-overfetch).
    assert "overfetch = #gg.overfetch<rows = 0, k = 127>" in fp8_weight_gradient.asm["gg-config"]
    shapes = [a["shape"] for a in kernel.info["args"]]
    assert shapes[:5] == [[256, "K"], [384, "K"], [5], [256, "ceil(K/128)"],
                          [384, "ceil(K/128)"]]


@ggc.jit
def mx_weight_gradient(dy_t: gl.KMajor, x_t: gl.KMajor, k_offsets: gl.Offsets,
                       dy_scale: gl.Scale, x_scale: gl.Scale, dw: gl.Out):
    gl.store(dw, gl.grouped_dot(dy_t, x_t, k_offsets, a_scale=dy_scale, b_scale=x_scale,
                                a_scale_kind="mx128", b_scale_kind="mx128"))


def test_k_major_weight_gradient_takes_mx_words_over_the_concatenated_k():
    args = (spec([256, None], "f8e4m3fn"), spec([384, None], "f8e4m3fn"), spec([5], "i32"),
            spec([256, None], "i32"), spec([384, None], "i32"), spec([4, 256, 384], "f32"))
    text = mx_weight_gradient.trace(*args)
    assert "a_scale(%dy_scale : memref<256x?xi32>, <mx 1x128>)" in text
    assert "b_scale(%x_scale : memref<384x?xi32>, <mx 1x128>)" in text
    kernel = mx_weight_gradient.compile(*args)
    # Each i32 holds four 128-token exponents: the runtime checks the words
    # against ceil(K/512).
    shapes = [a["shape"] for a in kernel.info["args"]]
    assert shapes[3:5] == [[256, "ceil(K/512)"], [384, "ceil(K/512)"]]


def test_weight_gradient_operands_and_scale_kinds_must_agree():
    @ggc.jit
    def mixed(dy: gl.TokenMajor, x_t: gl.KMajor, k_offsets: gl.Offsets, dw: gl.Out):
        gl.store(dw, gl.grouped_dot(dy, x_t, k_offsets))

    with pytest.raises(gl.CompileError, match="a weight gradient takes both operands "
                                              "TokenMajor; 'x_t' is KMajor"):
        mixed.trace(spec([None, 256], "bf16"), spec([384, None], "bf16"), spec([5], "i32"),
                    spec([4, 256, 384], "f32"))

    @ggc.jit
    def per_column_a(dy_t: gl.KMajor, x_t: gl.KMajor, k_offsets: gl.Offsets,
                     s: gl.Scale, dw: gl.Out):
        gl.store(dw, gl.grouped_dot(dy_t, x_t, k_offsets, a_scale=s,
                                    a_scale_kind="block1x128"))

    with pytest.raises(gl.CompileError, match="a_scale_kind 'block1x128' is a per-column "
                                              "scale of B"):
        per_column_a.trace(spec([256, None], "f8e4m3fn"), spec([384, None], "f8e4m3fn"),
                           spec([5], "i32"), spec([256, None], "f32"),
                           spec([4, 256, 384], "f32"))


@ggc.jit
def fp8_decode(x: gl.MaskedRows, w: gl.Weights, masked_m: gl.MaskedCounts, sx: gl.Scale,
               sw: gl.Scale, y: gl.Out, STAGES: gl.constexpr = None,
               BLOCK_M: gl.constexpr = None, SPLIT_N: gl.constexpr = None):
    gl.store(y, gl.grouped_dot(x, w, masked_m, a_scale=sx, b_scale=sw, expected_m=40))


def test_knobs_keep_or_set_the_column_split():
    args = (spec([8, 128, 512], "f8e4m3fn"), spec([8, 512, 512], "f8e4m3fn"), spec([8], "i32"),
            spec([8, 4, 128], "f32"), spec([8, 4, 4], "f32"), spec([8, 128, 512], "bf16"))
    fp8_decode.compile(*args)  # a decode batch: 64x256 tiles split in two
    assert "block = [64, 256, 128]" in fp8_decode.asm["gg-config"]
    assert "split_n = 2>" in fp8_decode.asm["gg-config"]
    fp8_decode.compile(*args, STAGES=3)  # the split goes with the chosen tile
    assert "stages = 3, cluster = [1, 1], sms = 132, split_n = 2>" in fp8_decode.asm["gg-config"]
    fp8_decode.compile(*args, BLOCK_M=128)  # a new tile takes no split
    assert "block = [128, 256, 128]" in fp8_decode.asm["gg-config"]
    assert "split_n" not in fp8_decode.asm["gg-config"]
    fp8_decode.compile(*args, BLOCK_M=128, SPLIT_N=2)
    assert "split_n = 2>" in fp8_decode.asm["gg-config"]


@ggc.jit
def fp8_wgrad(a: gl.KMajor, b: gl.KMajor, groups: gl.Offsets, sa: gl.Scale, sb: gl.Scale,
              out: gl.Out, CLUSTER_M: gl.constexpr = None, BLOCK_N: gl.constexpr = None):
    gl.store(out, gl.grouped_dot(a, b, groups, a_scale=sa, b_scale=sb, a_scale_kind="block",
                                 b_scale_kind="block1x128"), accumulate=True)


def test_cluster_m_pairs_ctas_that_share_b_by_multicast():
    args = (spec([4096, None], "f8e4m3fn"), spec([2048, None], "f8e4m3fn"), spec([9], "i32"),
            spec([4096, None], "f32"), spec([2048, None], "f32"), spec([8, 4096, 2048], "f32"))
    fp8_wgrad.compile(*args)
    assert "cluster = [1, 1]" in fp8_wgrad.asm["gg-config"]
    assert "multicast" not in fp8_wgrad.asm["ptx"]
    fp8_wgrad.compile(*args, CLUSTER_M=2)
    assert "cluster = [2, 1]" in fp8_wgrad.asm["gg-config"]
    assert "mbarrier::complete_tx::bytes.multicast::cluster" in fp8_wgrad.asm["ptx"]
    fp8_wgrad.compile(*args, CLUSTER_M=2, BLOCK_N=128)  # a new tile keeps the pair asked for
    assert "block = [128, 128, 128]" in fp8_wgrad.asm["gg-config"]
    assert "cluster = [2, 1]" in fp8_wgrad.asm["gg-config"]
    with pytest.raises(ValueError, match="constexpr CLUSTER_M must be a positive int"):
        fp8_wgrad.compile(*args, CLUSTER_M=0)


@ggc.jit
def ragged_up(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, y: gl.Out,
              IDLE_WARPGROUPS: gl.constexpr = None):
    gl.store(y, gl.grouped_dot(x, w, offs, expected_m=256))


def test_idle_warpgroups_states_the_padding():
    args = (spec([None, 4096], "bf16"), spec([8, 1024, 4096], "bf16"), spec([9], "i32"),
            spec([None, 1024], "bf16"))
    ragged_up.compile(*args)  # K of 8 KiB a row: gg-eliminate-padding computes
    assert "idle_warpgroups = compute" in ragged_up.asm["gg-config"]
    assert "padding" not in ragged_up.asm["gg"]
    ragged_up.compile(*args, IDLE_WARPGROUPS="skip")
    assert "padding = #gg.padding<idle_warpgroups = skip>" in ragged_up.asm["gg"]
    assert "idle_warpgroups = skip" in ragged_up.asm["gg-config"]
    with pytest.raises(ValueError, match="constexpr IDLE_WARPGROUPS must be one of "
                                         r"\('skip', 'compute'\), got 'idle'"):
        ragged_up.compile(*args, IDLE_WARPGROUPS="idle")


def test_constexpr_knobs_override_the_config():
    moe_up.compile(*ARGS, BLOCK_N=64)
    assert "#gg.config<block = [128, 64, 64]" in moe_up.asm["gg-config"]
    with pytest.raises(ValueError, match="constexpr BLOCK_N must be a positive int"):
        moe_up.compile(*ARGS, BLOCK_N=0)


def test_specialisations_are_cached_in_memory():
    first = moe_up.compile(*ARGS)
    assert moe_up.compile(*ARGS) is first
    other = moe_up.compile(spec([None, 512], "bf16"), spec([8, 128, 512], "bf16"),
                           *ARGS[2:4], spec([8, 128], "f32"), ARGS[5],
                           spec([None, 128], "bf16"))
    assert other is not first


@ggc.jit
def scaled(x: gl.Rows, w: gl.Weights, m_indptr: gl.Offsets, y: gl.Out,
           SCALE: gl.constexpr = 1.0):
    gl.store(y, gl.grouped_dot(x, w, m_indptr) * SCALE)


def test_constexprs_equal_in_python_but_not_in_the_kernel_specialise_apart():
    """0.0 == -0.0 and 1 == 1.0 in Python; each is its own kernel."""
    args = (ARGS[0], ARGS[1], ARGS[2], ARGS[6])
    zero = scaled.compile(*args, SCALE=0.0)
    negative_zero = scaled.compile(*args, SCALE=-0.0)
    assert negative_zero is not zero and "-0.0" in negative_zero.asm["gg"]
    assert "-0.0" not in zero.asm["gg"]
    assert scaled.compile(*args, SCALE=1) is not scaled.compile(*args, SCALE=1.0)
    nan = scaled.compile(*args, SCALE=float("nan"))
    assert scaled.compile(*args, SCALE=float("nan")) is nan  # found again, not recompiled


def test_non_finite_constants_reach_the_kernel_and_the_reference():
    """MLIR reads no `inf` or `nan`: they enter the IR as their bits, and
    ggc's reference backend reads them back; a finite constant past f32's
    range is refused by name."""
    torch = pytest.importorskip("torch")
    args = (ARGS[0], ARGS[1], ARGS[2], ARGS[6])
    kernel = scaled.compile(*args, SCALE=float("-inf"))
    assert "arith.constant 0xFF800000 : f32" in kernel.asm["gg"]
    x = torch.randn(5, 512).bfloat16()
    w = torch.randn(8, 256, 512).bfloat16()
    offsets = torch.tensor([0, 2, 5, 5, 5, 5, 5, 5, 5], dtype=torch.int32)
    y = torch.zeros(5, 256).bfloat16()
    scaled(x, w, offsets, y, SCALE=float("inf"))
    product = torch.cat([x[:2].float() @ w[0].float().T, x[2:].float() @ w[1].float().T])
    assert torch.equal(y.float(), product.sign() * float("inf"))
    with pytest.raises(gl.CompileError, match=r"constant 1e\+39 is beyond f32's range"):
        scaled.trace(*args, SCALE=1e39)


def test_numpy_numbers_and_abs_enter_the_epilogue():
    np = pytest.importorskip("numpy")
    traced = kernel_source("acc = gl.grouped_dot(x, w, offs)\n"
                           "gl.store(y, abs(acc * np.float32(2)))",
                           extra_globals={"np": np}).trace(*BASIC)
    assert "math.absf" in traced and "arith.constant 2.0 : f32" in traced


def test_the_cpu_reference_specialises_as_the_gpu_does():
    """0.0 and -0.0, 1 and True are different constants on the CPU too
    (its cache took the first for the second); tuning knobs are checked
    there too (it ignored them)."""
    torch = pytest.importorskip("torch")
    x = torch.randn(5, 512).bfloat16()
    w = torch.randn(8, 256, 512).bfloat16()
    offsets = torch.tensor([0, 2, 5, 5, 5, 5, 5, 5, 5], dtype=torch.int32)
    y = torch.zeros(5, 256).bfloat16()

    def inverse_sign(scale):
        scaled(x, w, offsets, y, SCALE=scale)
        return (1 / y.float()).sign()

    assert torch.equal(inverse_sign(-0.0), -inverse_sign(0.0))  # acc * -0.0: the other zero
    with pytest.raises(gl.CompileError, match="booleans cannot enter the epilogue"):
        scaled(x, w, offsets, y, SCALE=True)
    route, bias, scale = torch.rand(5).bfloat16(), torch.rand(8, 256), torch.rand(8)
    with pytest.raises(ValueError, match="constexpr BLOCK_N must be a positive int, got 0"):
        moe_up(x, w, offsets, route, bias, scale, y, BLOCK_N=0)


def test_a_misspelt_string_annotation_names_its_parameter():
    def kernel(x: "gl.Rowz", y: "gl.Out"):
        pass
    kernel.__globals__["gl"] = gl
    with pytest.raises(TypeError, match="the annotation of 'x' names nothing that exists"):
        ggc.jit(kernel)


def test_disk_cache_is_reused_by_a_second_process(tmp_path):
    script = textwrap.dedent(f"""
        import sys; sys.path.insert(0, {os.path.join(ROOT, 'python')!r})
        import ggc, ggc.language as gl
        @ggc.jit
        def k(x: gl.MaskedRows, w: gl.Weights, counts: gl.MaskedCounts, y: gl.Out):
            gl.store(y, gl.grouped_dot(x, w, counts))
        kernel = k.compile(ggc.spec([4, 64, 128], "bf16"), ggc.spec([4, 128, 128], "bf16"),
                           ggc.spec([4], "i32"), ggc.spec([4, 64, 128], "bf16"))
        print(kernel.cache_hit)
    """)
    env = dict(os.environ, GGC_CACHE_DIR=str(tmp_path / "shared-cache"))
    runs = [subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, check=True).stdout.strip() for _ in range(2)]
    assert runs == ["None", "disk"]


def test_dump_dir_holds_every_stage_and_ggc_reruns_it(tmp_path, monkeypatch):
    monkeypatch.setenv("GGC_DUMP_DIR", str(tmp_path / "dump"))

    @ggc.jit
    def dumped(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, y: gl.Out):
        gl.store(y, gl.grouped_dot(x, w, offs) * 2.0)

    dumped.compile(spec([None, 64], "f16"), spec([2, 64, 64], "f16"), spec([3], "i32"),
                   spec([None, 64], "f16"))
    files = sorted(os.listdir(tmp_path / "dump"))
    stages = {f.split(".", 1)[1] for f in files}
    # A stage with a file type of its own is named by it alone (not .ptx.ptx).
    assert {"gg.mlir", "nvvm.mlir", "ll", "ptx", "cubin"} <= stages
    gg_file = next(tmp_path / "dump" / f for f in files if f.endswith(".gg.mlir"))
    build = os.environ.get("GGC_BUILD_DIR", os.path.join(ROOT, "build"))
    ptx = subprocess.run([os.path.join(build, "bin", "ggc"), str(gg_file), "--emit=ptx"],
                         capture_output=True, text=True, check=True).stdout
    assert ptx == dumped.asm["ptx"]


def kernel_source(body, params="x: gl.Rows, w: gl.Weights, offs: gl.Offsets, y: gl.Out",
                  extra_globals=None):
    """A kernel in file 'user_kernel.py' whose body starts on line 3."""
    namespace = {"ggc": ggc, "gl": gl, **(extra_globals or {})}
    exec(compile(f"@ggc.jit\ndef k({params}):\n" + textwrap.indent(body, "    "),
                 "user_kernel.py", "exec"), namespace)
    return namespace["k"]


BASIC = (spec([None, 64], "bf16"), spec([2, 64, 64], "bf16"), spec([3], "i32"),
         spec([None, 64], "bf16"))


@pytest.mark.parametrize("body, message", [
    ("gl.store(y, gl.grouped_dot(w, w, offs))",
     "user_kernel.py:3: gl.grouped_dot's 'a' must be annotated Rows, MaskedRows"),
    ("acc = gl.grouped_dot(x, w, offs)\ngl.store(y, acc)\ngl.store(y, acc)",
     "user_kernel.py:5: a kernel stores once"),
    ("acc = gl.grouped_dot(x, w, offs)\nif acc:\n    pass\ngl.store(y, acc)",
     "user_kernel.py:4: the accumulator has no truth value"),
    ("gl.store(y, gl.grouped_dot(x, w, offs) * offs)",
     "user_kernel.py:3: parameter 'offs' (Offsets) cannot enter the epilogue: only "
     "parameters annotated RowVector, ColVector or GroupScalar do"),
    ("acc = gl.grouped_dot(x, w, offs)\ngl.store(y, acc ** 2)",
     "user_kernel.py:4: the epilogue has no "),
    ("acc = gl.grouped_dot(x, w, offs)\ngl.store(y, max(acc, 0.0))",
     "user_kernel.py:4: the epilogue cannot compare values while tracing"),
    ("gl.store(y, gl.grouped_dot(x, w, offs, tf32='no'))",
     "user_kernel.py:3: tf32 must be True or False, got 'no'"),
    ("gl.store(y, gl.grouped_dot(x, w, offs, b_scale_kind='bogus'))",
     "user_kernel.py:3: b_scale_kind must be one of"),
    ("acc = gl.grouped_dot(x, w, offs)",
     "the kernel never calls gl.store"),
    ("gl.store(x, gl.grouped_dot(x, w, offs))",
     "user_kernel.py:3: gl.store writes to a parameter annotated Out"),
    ("gl.store(y, gl.grouped_dot(x, w, offs, expected_m=0))",
     "user_kernel.py:3: expected_m must be an int in .1, 2.31 - 1., got 0"),
])
def test_tracing_errors_point_at_the_users_line(body, message):
    with pytest.raises(gl.CompileError, match=message.replace("(", r"\(").replace(")", r"\)")):
        kernel_source(body).trace(*BASIC)


def test_expected_m_hints_the_tokens_of_row_groups_and_of_k_groups():
    # Contiguous rows take the hint into the op, where config selection reads it.
    hinted = kernel_source("gl.store(y, gl.grouped_dot(x, w, offs, expected_m=4096))")
    assert "expected_m = 4096 : i64" in hinted.trace(*BASIC)
    # A weight gradient's groups split the tokens (K): the hint is their share.
    weight_grad = kernel_source("gl.store(y, gl.grouped_dot(x, w, offs, expected_m=64))",
                                "x: gl.TokenMajor, w: gl.TokenMajor, offs: gl.Offsets, "
                                "y: gl.Out")
    traced = weight_grad.trace(spec([64, None], "bf16"), spec([64, None], "bf16"),
                               spec([3], "i32"), spec([2, 64, 64], "f32"))
    assert "k_grouped" in traced and "expected_m = 64 : i64" in traced
    bad = kernel_source("gl.store(y, gl.grouped_dot(x, w, offs, expected_m=0))",
                        "x: gl.TokenMajor, w: gl.TokenMajor, offs: gl.Offsets, y: gl.Out")
    with pytest.raises(gl.CompileError, match=r"user_kernel.py:3: expected_m must be an int "
                                              r"in \[1, 2\^31 - 1\], got 0"):
        bad.trace(spec([64, None], "bf16"), spec([64, None], "bf16"), spec([3], "i32"),
                  spec([2, 64, 64], "f32"))


def test_groups_must_match_the_layout():
    k = kernel_source("gl.store(y, gl.grouped_dot(x, w, offs))",
                      "x: gl.MaskedRows, w: gl.Weights, offs: gl.Offsets, y: gl.Out")
    with pytest.raises(gl.CompileError, match="'x' is MaskedRows, so the groups must be "
                                              "MaskedCounts; 'offs' is Offsets"):
        k.trace(spec([2, 8, 64], "bf16"), BASIC[1], spec([2], "i32"), spec([2, 8, 64], "bf16"))


def test_unannotated_and_unused_parameters_are_rejected():
    with pytest.raises(TypeError, match="parameter 'x' needs an annotation from ggc.language"):
        ggc.jit(lambda x, y: None)
    k = kernel_source("gl.store(y, gl.grouped_dot(x, w, offs))",
                      "x: gl.Rows, w: gl.Weights, offs: gl.Offsets, extra: gl.RowVector, "
                      "y: gl.Out")
    with pytest.raises(gl.CompileError, match=r"parameter\(s\) \['extra'\] are never used"):
        k.trace(*BASIC[:3], spec([None], "f32"), BASIC[3])


def test_verifier_errors_point_at_the_python_line():
    k = kernel_source("acc = gl.grouped_dot(x, w, offs)\ngl.store(y, acc * r)",
                      "x: gl.Rows, w: gl.Weights, offs: gl.Offsets, r: gl.RowVector, y: gl.Out")
    # A row vector of another length than M: the verifier rejects it.
    with pytest.raises(ggc.CompilationError, match=r"user_kernel.py:3:1: error: .*'rows' "
                                                   r"must have shape \[\?\]"):
        k.compile(*BASIC[:3], spec([2, 5], "f32"), BASIC[3])


def test_bad_argument_types_name_the_argument():
    with pytest.raises(TypeError, match="argument 'x' must be a tensor"):
        moe_up.trace(3, *ARGS[1:])
    with pytest.raises(ValueError, match="dtype must be one of"):
        spec([4], "float64")


def test_outside_a_kernel_the_language_says_so():
    with pytest.raises(gl.CompileError, match="only inside a @ggc.jit kernel"):
        gl.silu(1.0)


def test_autotune_times_each_config_once_per_key_and_remembers(tmp_path):
    timings = {64: 30.0, 128: 10.0, 256: 20.0}
    calls = []

    def fake_timer(fn):
        config = moe_up.last.asm["gg-config"]
        bn = next(b for b in timings if f"block = [128, {b}, 64]" in config)
        calls.append(bn)
        return timings[bn]

    configs = [ggc.Config(BLOCK_N=bn) for bn in timings]
    tuned = ggc.autotune(configs=configs, key=["x", "w"], timer=fake_timer)(moe_up)
    assert tuned.choose(*ARGS).knobs == {"BLOCK_N": 128}
    assert sorted(calls) == [64, 128, 256]
    assert tuned.choose(*ARGS).knobs == {"BLOCK_N": 128} and len(calls) == 3
    # A new process (a new tuner) finds the winner on disk and times nothing.
    again = ggc.autotune(configs=configs, key=["x", "w"], timer=fake_timer)(moe_up)
    assert again.choose(*ARGS).knobs == {"BLOCK_N": 128} and len(calls) == 3
    saved = json.load(open(again._path))
    assert list(saved.values()) == [{"BLOCK_N": 128}]


def test_autotune_skips_configs_that_do_not_compile():
    tuned = ggc.autotune(configs=[ggc.Config(BLOCK_N=100), ggc.Config(BLOCK_N=64)],
                         key=["w"], timer=lambda fn: 1.0)(moe_up)
    assert tuned.choose(*ARGS).knobs == {"BLOCK_N": 64}
    (failures,) = tuned.failures.values()
    assert len(failures) == 1 and "BLOCK_N=100" in failures[0]


def test_autotune_rejects_unknown_knobs_and_keys():
    with pytest.raises(ValueError, match="not constexpr parameters"):
        ggc.autotune(configs=[ggc.Config(WARPS=4)], key=["x"])(moe_up)
    with pytest.raises(ValueError, match="not parameters of moe_up"):
        ggc.autotune(configs=[ggc.Config(BLOCK_N=64)], key=["tokens"])(moe_up)


def test_autotune_winners_follow_the_compile_settings():
    """A winner found under one target, SM count or shared memory budget
    is searched again under another (it was reused: under a smaller budget
    it failed to compile)."""
    from ggc import compiler
    searches = []
    tuned = ggc.autotune(configs=[ggc.Config(BLOCK_N=64)], key=["w"],
                         timer=lambda fn: searches.append(1) or 1.0)(moe_up)
    tuned.choose(*ARGS)
    try:
        compiler.set_num_sms(66)
        tuned.choose(*ARGS)
    finally:
        compiler._num_sms = None
        compiler.set_target(None)
    assert len(searches) == 2 and len(tuned.best) == 2


def test_autotune_call_arguments(tmp_path, monkeypatch, caplog):
    """A tuned knob given by the caller is refused (the winner's replaced
    it without a word); stream= and validate= reach the kernel; configs
    may be any iterable of Config, nothing else; winners that cannot be
    saved stay in memory."""
    torch = pytest.importorskip("torch")
    tuned = ggc.autotune(configs=(ggc.Config(BLOCK_N=b) for b in (64, 128)), key=["w"],
                         timer=lambda fn: 1.0)(moe_up)
    assert len(tuned.configs) == 2
    with pytest.raises(TypeError, match=r"\['BLOCK_N'\] are tuned by @ggc.autotune"):
        tuned(*ARGS, BLOCK_N=256)
    with pytest.raises(TypeError, match=r"configs must be ggc.Config objects, got \['dict'\]"):
        ggc.autotune(configs=[{"BLOCK_N": 64}], key=["w"])(moe_up)
    monkeypatch.setenv("GGC_CACHE_DIR", str(tmp_path))
    (tmp_path / "autotune").write_text("a file where the folder belongs")
    unsaved = ggc.autotune(configs=[ggc.Config(BLOCK_N=64)], key=["w"],
                           timer=lambda fn: 1.0)(moe_up)
    x, w = torch.randn(5, 512).bfloat16(), torch.randn(8, 256, 512).bfloat16()
    offsets = torch.tensor([0, 2, 5, 5, 5, 5, 5, 5, 5], dtype=torch.int32)
    route, bias, scale = torch.rand(5).bfloat16(), torch.rand(8, 256), torch.rand(8)
    y = torch.zeros(5, 256).bfloat16()
    unsaved(x, w, offsets, route, bias, scale, y, stream=None, validate=True)
    assert len(unsaved.best) == 1 and "autotune winners not saved" in caplog.text


def _rows_args(m, dtype="bf16"):
    return (spec([m, 512], dtype), spec([8, 256, 512], dtype), spec([9], "i32"),
            spec([m], "bf16"), spec([8, 256], "f32"), spec([8], "f32"),
            spec([m, 256], "bf16"))


def test_autotune_buckets_the_token_count_and_keys_dtypes(capsys):
    searches = []
    tuned = ggc.autotune(configs=[ggc.Config(BLOCK_N=64), ggc.Config(BLOCK_N=128)],
                         key=["x", "w"], timer=lambda fn: searches.append(1) or 1.0,
                         verbose=True)(moe_up)
    for m in (100, 101, 102, 128):
        tuned.choose(*_rows_args(m))
    assert len(searches) == 2, "M = 100..128 share one power-of-two bucket"
    tuned.choose(*_rows_args(129))
    assert len(searches) == 4
    (first, second) = tuned.best
    assert "x=[128, 512]" in first and "x=[256, 512]" in second
    assert "dtypes=bf16,bf16,i32" in first
    err = capsys.readouterr().err
    assert "moe_up [" in err and "2/2 Config(BLOCK_N=128): 1.0 us" in err
    assert "chose Config(BLOCK_N=64)" in err


def test_autotune_keys_on_the_dtypes_of_every_argument():
    tuned = ggc.autotune(configs=[ggc.Config(BLOCK_N=64)], key=["w"],
                         timer=lambda fn: 1.0)(moe_up)
    tuned.choose(*_rows_args(64))
    tuned.choose(*_rows_args(64, dtype="f16"))
    assert len(tuned.best) == 2


def test_autotune_takes_a_key_function():
    tuned = ggc.autotune(configs=[ggc.Config(BLOCK_N=64)], timer=lambda fn: 1.0,
                         key_fn=lambda x, *rest, **kw: x.shape[0] // 1000)(moe_up)
    tuned.choose(*_rows_args(100))
    tuned.choose(*_rows_args(900))
    tuned.choose(*_rows_args(1900))
    assert sorted(k.split("user=")[1] for k in tuned.best) == ["0", "1"]
