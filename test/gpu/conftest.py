"""GPU tests: skipped, with the reason, on machines without a CUDA GPU."""

import shutil
import subprocess

import pytest


def _has_cuda_gpu() -> bool:
    smi = shutil.which("nvidia-smi")
    if smi is None:
        return False
    try:
        return subprocess.run([smi, "-L"], capture_output=True, timeout=20).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


HAS_GPU = _has_cuda_gpu()


def pytest_collection_modifyitems(config, items):
    if HAS_GPU:
        return
    skip = pytest.mark.skip(reason="no CUDA GPU on this machine")
    for item in items:
        if "test/gpu" in str(item.fspath):
            item.add_marker(skip)


# A test whose kernel the target refuses by name (gpu_checks.refusal) is
# reported as skipped with the compiler's reason, so that what could not
# run is said plainly; any other failure stays a failure.
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.excinfo is None or report.when != "call":
        return
    from gpu_checks import refusal  # here: it imports torch, which conftest must not need
    reason = refusal(call.excinfo.value)
    if reason is None:
        return
    report.outcome = "skipped"
    report.longrepr = (str(item.fspath), item.location[1] or 0, f"Skipped: {reason}")
