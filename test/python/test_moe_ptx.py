"""The PTX of ggc.moe's kernels assembles for sm_80 and sm_90a with ptxas,
without spills: the permutation's, which ggc compiles from gg.sort_routes
for each target, and the elementwise ones, written for sm_80 so that
Ampere and Ada run them too. What this machine can check of them without
a GPU (test/gpu/test_moe_routes.py and test_moe_elementwise.py run them)."""

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
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("name", ["SWIGLU_PTX", "COMBINE_PTX"])
def test_the_elementwise_kernels_assemble_without_spills(tmp_path, name, arch):
    from ggc.moe import elementwise
    source = tmp_path / "kernel.ptx"
    source.write_text(getattr(elementwise, name))
    done = subprocess.run([ptxas(), f"-arch={arch}", "-O3", "-v", str(source), "-o",
                           str(tmp_path / "kernel.cubin")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "0 bytes spill stores" in done.stderr
