"""Choosing the target (ggc.set_target, GGC_TARGET, compile_ir's arch) and
what the sm_80 lowering's kernels check before a launch, without a GPU."""

import os
import subprocess
import sys

import pytest

import ggc
from ggc import ir, runtime


def test_set_target_checks_and_environment(monkeypatch):
    with pytest.raises(ValueError, match="target must be one of sm_90a, sm_80, sm_86, sm_89, "
                                         "got 'sm_75'"):
        ggc.set_target("sm_75")
    monkeypatch.setenv("GGC_TARGET", "sm_86")
    monkeypatch.setattr(ggc.compiler, "_env_target", ())  # read once per process
    assert ggc.get_target() == "sm_86"
    ggc.set_target("sm_80")
    try:
        assert ggc.get_target() == "sm_80"  # set_target wins over the environment
    finally:
        ggc.set_target(None)
    monkeypatch.setenv("GGC_TARGET", "bogus")
    monkeypatch.setattr(ggc.compiler, "_env_target", ())
    with pytest.raises(ValueError, match="got 'bogus'"):
        ggc.get_target()


def test_targets_are_the_compilers_one_list():
    targets = ggc.targets()
    assert tuple(targets) == ggc.compiler.TARGETS  # the default first
    assert next(iter(targets)) == ggc.compiler.DEFAULT_ARCH
    hopper, ada = targets["sm_90a"], targets["sm_89"]
    assert (hopper.mma, hopper.async_copy) == ("wgmma", "tma")
    assert hopper.tensor_maps and hopper.clusters and hopper.register_reallocation
    assert (ada.mma, ada.async_copy) == ("mma_sync", "cp_async")
    assert ada.fp8_mma and not targets["sm_86"].fp8_mma
    assert hopper.grid_dependencies and not ada.grid_dependencies
    assert not ada.tensor_maps and not ada.clusters
    assert (8, 7) in targets["sm_86"].capabilities  # Orin runs sm_86's kernels
    assert targets["sm_80"].shared_memory_bytes == 166912
    targets.clear()  # a copy: the module's list stays whole
    assert ggc.targets()


def test_the_target_reaches_the_module_and_the_contract():
    text = ir.grouped_matmul("k", layout="contiguous", num_groups=2, n=128, k=64)
    sm80 = ggc.compile_ir(text, emit="nvvm", arch="sm_80")
    assert 'gg.target = "sm_80"' in sm80.asm["ggk"]
    kinds = {p["operand"]: p["kind"] for p in sm80.kernel_info[0]["params"]
             if p["kind"] != "size"}
    assert kinds["a"] == kinds["b"] == "pointer"  # copied by address: no TMA
    hopper = ggc.compile_ir(text, emit="nvvm")
    kinds = {p["operand"]: p["kind"] for p in hopper.kernel_info[0]["params"]
             if p["kind"] != "size"}
    assert kinds["a"] == kinds["b"] == "tensor_map"


@pytest.mark.parametrize("arch", ["sm_90a", "sm_80"])
def test_kernels_wait_for_the_prior_grid_where_the_target_can(arch):
    """ggk-await-prior-grid: on sm_90a the kernel's first instruction waits
    for the grid ahead (before any memory access), and the contract tells
    the runtime it may launch the kernel early; on sm_80 neither."""
    text = ir.grouped_matmul("k", layout="contiguous", num_groups=2, n=128, k=64)
    result = ggc.compile_ir(text, emit="ptx", arch=arch)
    ptx = result.asm["ptx"]
    hopper = arch == "sm_90a"
    assert result.kernel_info[0].get("dependent_launch", False) == hopper
    assert ("griddepcontrol.wait" in ptx) == hopper
    if hopper:
        body = ptx[ptx.index(".entry"):]
        body = body[body.index("{"):]
        instructions = [line.strip() for line in body.splitlines()[1:]
                        if line.strip() and not line.strip().startswith((".", "//", "$"))]
        wait = instructions.index("griddepcontrol.wait;")
        assert "launch_dependents" not in ptx  # the next launches at this one's exit
        # Before the wait, only the parameters' addresses: no memory access.
        ahead = [i.split()[0] for i in instructions[:wait]]
        # ld.param reads the kernel's parameter space, not global memory.
        allowed = {"mov.b64", "mov.u64", "cvta.param.u64"}
        assert all(op in allowed or op.startswith("ld.param.") for op in ahead), \
            instructions[:wait]


@pytest.mark.parametrize("value,enabled", [("0", False), ("off", False), ("No", False),
                                           ("1", True)])
def test_dependent_launch_environment_switch(value, enabled):
    """GGC_DEPENDENT_LAUNCH: 0, off, false and no (any case) turn dependent
    launches off; any other value leaves them on."""
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(ggc.__file__)))
    env = dict(os.environ, GGC_DEPENDENT_LAUNCH=value,
               PYTHONPATH=os.pathsep.join([package_root, os.environ.get("PYTHONPATH", "")]))
    code = "import ggc; print(ggc.dependent_launches())"
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, check=True)
    assert done.stdout.strip() == str(enabled)


def test_dependent_launches_switch_is_checked_and_settable():
    before = ggc.dependent_launches()
    try:
        ggc.set_dependent_launches(False)
        assert ggc.dependent_launches() is False
        ggc.set_dependent_launches(True)
        assert ggc.dependent_launches() is True
        with pytest.raises(TypeError, match="enabled must be a bool, got int"):
            ggc.set_dependent_launches(1)
    finally:
        ggc.set_dependent_launches(before)


@pytest.mark.parametrize("dtype, block_m, threads, producer", [
    ("bf16", 128, 256, "none"),      # two consumer warpgroups copy the stages
    ("f16", 256, 512, "none"),       # four: rounds of 64 rows divide the tiles
    ("bf16", 64, 256, "warpgroup"),  # one consumer warpgroup keeps the producer
    ("f32", 128, 384, "warpgroup")])  # 3xTF32 keeps it (measured slower without)
def test_sm80_roles_reach_the_contract_and_the_kernel(dtype, block_m, threads, producer):
    """gg-plan-kernel's producer choice before sm_90a, the launch
    contract's block and the kernel's .maxntid agree: without a producer
    the CTA is the consumer warpgroups alone."""
    config = (f"#gg.config<block = [{block_m}, 128, {32 if dtype == 'f32' else 64}], "
              "stages = 3, cluster = [1, 1], sms = 132>")
    text = ir.grouped_matmul("k", layout="contiguous", num_groups=4, n=256, k=256,
                             dtype=dtype, out_dtype=dtype, config=config)
    result = ggc.compile_ir(text, emit="ptx", arch="sm_80")
    plan = result.plans[0]["attributes"]["kernel_plan"]
    assert ("producer = none" in plan) == (producer == "none"), plan
    assert result.kernel_info[0]["block"] == threads
    assert f".maxntid {threads}, 1, 1" in result.asm["ptx"]


def described(shape, dtype, address=1 << 40):
    """A described CUDA tensor, row-major at an aligned address (never read)."""
    strides, step = [], 1
    for extent in reversed(shape):
        strides.insert(0, step)
        step *= extent
    return runtime._Tensor(address, tuple(shape), tuple(strides), dtype, 0, None)


def test_an_output_sharing_memory_with_an_input_is_refused():
    """The kernel would read what it overwrites: refused before a launch
    (it launched), whether out is the input itself or overlaps its end."""
    kern = ggc.Kernel(ir.grouped_matmul("k", layout="contiguous", num_groups=2, n=128,
                                        k=128, dtype="bf16", out_dtype="bf16"))
    a_bytes = 64 * 128 * 2
    args = [described((64, 128), "bf16", 1 << 40), described((2, 128, 128), "bf16", 1 << 41),
            described((3,), "i32", 1 << 42), described((64, 128), "bf16", 1 << 43)]
    kern.check_described(args)  # apart: fine
    for out_at in (1 << 40, (1 << 40) + a_bytes - 16):
        args[3] = described((64, 128), "bf16", out_at)
        with pytest.raises(ValueError, match=r"argument 3 \(out\) is written by the kernel "
                                             r"but shares memory with argument 0 \(a\)"):
            kern.check_described(args)
    args[3] = described((64, 128), "bf16", (1 << 40) + a_bytes)  # right after a: fine
    kern.check_described(args)


def test_rows_cp_async_cannot_copy_are_rejected_before_launch():
    # K = 1684 f16: rows of 3368 bytes, which 16-byte copies cannot read.
    kern = ggc.Kernel(ir.grouped_matmul("k", layout="k_grouped", num_groups=2, n=136, k=None,
                                        m=200, b_layout="nk", out_dtype="f32", dtype="f16"),
                      target="sm_80")
    args = [described((200, 1684), "f16"), described((136, 1684), "f16"),
            described((3,), "i32"), described((2, 200, 136), "f32")]
    with pytest.raises(ValueError, match=r"argument 0 \(a\) has rows of 3368 bytes; cp.async "
                                         r"needs a multiple of 16"):
        kern.check_described(args)


def test_the_default_sm_count_is_the_devices(monkeypatch):
    """A persistent grid of more CTAs than the GPU has SMs runs in two
    waves: without set_num_sms, kernels spread over the device's SMs (an
    A100's 108 here), and over 132 without a GPU."""
    from ggc import compiler
    monkeypatch.setattr(compiler, "_num_sms", None)
    monkeypatch.setattr(compiler, "_device_num_sms", None)
    assert ggc.get_num_sms() == 132
    monkeypatch.setattr(compiler, "_device_num_sms", 108)
    assert ggc.get_num_sms() == 108
    text = ir.grouped_matmul("k", layout="contiguous", num_groups=2, n=128, k=64)
    kernel = runtime.Kernel(text, target="sm_80")
    assert "sms = 108>" in kernel.asm["gg-config"] and kernel.info["max_grid"] == 108
    ggc.set_num_sms(100)  # the user's count wins over the device's
    assert ggc.get_num_sms() == 100
    assert runtime.Kernel(text, target="sm_80").info["max_grid"] == 100
    assert runtime.Kernel(text, num_sms=64, target="sm_80").info["max_grid"] == 64
