"""The PTX of ggc.moe's kernels (routes, elementwise), written for sm_80 so
that Ampere and Ada run it too, assembles for sm_80 and sm_90a with ptxas,
without spills: what this machine can check of it without a
GPU (test/gpu/test_moe_routes.py and test_moe_elementwise.py run them)."""

import os
import shutil
import subprocess

import pytest

pytest.importorskip("torch")

from ggc.moe import routes  # noqa: E402


def ptxas():
    found = shutil.which("ptxas") or "/usr/local/cuda/bin/ptxas"
    return found if os.path.exists(found) else None


ARCHS = ["sm_80", "sm_90a"]


@pytest.mark.skipif(ptxas() is None, reason="needs ptxas (CUDA toolkit)")
@pytest.mark.parametrize("arch", ARCHS)
def test_the_kernel_assembles_without_spills(tmp_path, arch):
    source = tmp_path / "routes.ptx"
    source.write_text(routes.PTX)
    done = subprocess.run([ptxas(), f"-arch={arch}", "-O3", "-v", str(source), "-o",
                           str(tmp_path / "routes.cubin")], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert "Compiling entry function 'ggc_moe_routes'" in done.stderr
    assert "0 bytes spill stores" in done.stderr
    # The shared table holds MAX_ROUTES entries.
    assert f"{4 * routes.MAX_ROUTES} bytes smem" in done.stderr


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
