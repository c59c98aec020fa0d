"""The PTX of ggc.moe's small kernels, which ggc compiles from gg ops for
each target (gg.sort_routes, gg.quantize_rows, gg.swiglu_rows, gg.select_experts,
gg.combine_routes), assembles with ptxas without spills: what this
machine can check of them without a GPU (test/gpu/test_moe_routes.py,
test_quantize_rows.py, test_swiglu_rows.py and test_combine_routes.py run
them)."""

import os
import shutil
import subprocess

import pytest

torch = pytest.importorskip("torch")

from ggc.moe import routes  # noqa: E402


def ptxas():
    found = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    return found if os.path.exists(found) else None


ARCHS = ["sm_80", "sm_90a"]


@pytest.mark.skipif(ptxas() is None, reason="needs ptxas (CUDA toolkit)")
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("experts,id_dtype", [(128, torch.int32), (routes.MAX_EXPERTS, torch.int64),
                                              (3, torch.int32)])
def test_the_routes_kernels_assemble_without_spills(tmp_path, arch, experts, id_dtype):
    name, code = routes.kernels(experts, 8, id_dtype, arch)
    source = tmp_path / "routes.ptx"
    source.write_text(code)
    done = subprocess.run([ptxas(), f"-arch={arch}", "-O3", "-v", str(source), "-o",
                           str(tmp_path / "routes.cubin")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    for kernel in ("_count", "_place"):
        assert f"Compiling entry function '{name}{kernel}'" in done.stderr
    assert done.stderr.count("0 bytes spill stores") == 2, done.stderr
    # The count kernel's histogram, and the place kernel's tables
    # (gg.sort_routes' placeSharedBytes).
    threads = routes.THREADS
    place = 4 * ((threads // 32) * experts + 3 * experts + 2 * threads)
    assert f"{4 * experts} bytes smem" in done.stderr
    assert f"{place} bytes smem" in done.stderr


@pytest.mark.skipif(ptxas() is None, reason="needs ptxas (CUDA toolkit)")
@pytest.mark.parametrize("arch", ARCHS + ["sm_89"])
@pytest.mark.parametrize("which", ["swiglu", "swiglu_routed", "swiglu_backward",
                                   "swiglu_backward_routed", "combine", "quantize",
                                   "quantize_gated", "quantize_scattered",
                                   "quantize_scattered_input_scales", "quantize_routed",
                                   "swiglu_backward_quantized"])
def test_the_row_kernels_assemble_without_spills(tmp_path, which, arch):
    """gg.swiglu_rows' (routed or not, forward and backward, the backward
    quantised), gg.combine_routes' and gg.quantize_rows' kernels (routed
    too; FP8 conversion: sm_89 and sm_90a only)."""
    from ggc.moe import combine_kernel, quant_kernel, swiglu_kernel
    if (which.startswith("quantize") or which.endswith("quantized")) and arch == "sm_80":
        pytest.skip("sm_80 has no e4m3 conversion")
    name, code = {"swiglu": lambda: swiglu_kernel.kernel(768, arch),
                  "swiglu_routed": lambda: swiglu_kernel.kernel(768, arch, routed=True),
                  "swiglu_backward": lambda: swiglu_kernel.kernel(768, arch, backward=True),
                  "swiglu_backward_routed": lambda: swiglu_kernel.kernel(
                      768, arch, backward=True, routed=True),
                  "combine": lambda: combine_kernel.kernel(2048, 8, torch.int64, arch),
                  "quantize": lambda: quant_kernel.kernel(2048, True, False, arch),
                  "quantize_gated": lambda: quant_kernel.kernel(768, False, True, arch),
                  "quantize_scattered": lambda: quant_kernel.kernel(
                      2048, False, False, arch, scatter=("i64", 8, False)),
                  "quantize_scattered_input_scales": lambda: quant_kernel.kernel(
                      2048, False, False, arch, scatter=("i32", 8, True)),
                  "quantize_routed": lambda: quant_kernel.kernel(768, False, True, arch,
                                                                 routed=True),
                  "swiglu_backward_quantized": lambda: swiglu_kernel.kernel(
                      768, arch, backward=True, routed=True, quantized=True)}[which]()
    assemble_one_kernel_without_spills(tmp_path, name, code, arch)


def assemble_one_kernel_without_spills(tmp_path, name, code, arch):
    source = tmp_path / "kernel.ptx"
    source.write_text(code)
    done = subprocess.run([ptxas(), f"-arch={arch}", "-O3", "-v", str(source), "-o",
                           str(tmp_path / "kernel.cubin")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert f"Compiling entry function '{name}'" in done.stderr
    assert "0 bytes spill stores" in done.stderr, done.stderr


@pytest.mark.skipif(ptxas() is None, reason="needs ptxas (CUDA toolkit)")
@pytest.mark.parametrize("arch", ARCHS + ["sm_89"])
@pytest.mark.parametrize("experts,top_k,dtype,routing", [
    (128, 8, torch.bfloat16, (True,)), (8, 2, torch.float32, (False,)),
    (1024, 32, torch.float16, (True,)), (40, 1, torch.bfloat16, (False,)),
    (256, 8, torch.float32, (True, True, 8, 4, True, 2.5)),
    (512, 16, torch.bfloat16, (False, False, 16, 8, True, 1.0)),
    (64, 4, torch.bfloat16, (True, True, 32, 31, True, 1.0))])
def test_the_router_kernel_assembles_without_spills(tmp_path, arch, experts, top_k, dtype,
                                                    routing):
    """gg.select_experts' kernel at the edges of what it takes (E up to
    1,024: 32 logits a lane; top_k up to 32; 16 and 32 groups with a
    bias, each ranked by its two best: group 31's bit the i32's sign) and
    DeepSeek-V3's routing fit their registers."""
    from ggc.moe import router_kernel
    routing = router_kernel.KernelRouting(*routing)
    name, code = router_kernel.kernel(experts, top_k, dtype, routing, arch)
    assemble_one_kernel_without_spills(tmp_path, name, code, arch)
    # One exp a logit slot (sigmoid's with its reciprocal).
    slots = -(-experts // 32)
    assert code.count("ex2.approx") == slots
    assert code.count("rcp.approx") == (slots if routing.sigmoid else 0)
    name, code = router_kernel.kernel(experts, top_k, dtype, True, arch, backward=True)
    assemble_one_kernel_without_spills(tmp_path, name, code, arch)
    # The lanes' w * g added by five shuffles; the zeros before the warp meets.
    assert code.count("shfl.sync.bfly") == 5 and "bar.warp.sync" in code
