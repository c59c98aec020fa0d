"""`import ggc` does not import torch (about 2 s that compile-only use
should not pay), yet torch.ops.ggc.* are registered whenever torch is
there, imported before ggc or after (ggc._torch_hook). Each case in a
fresh interpreter."""

import os
import subprocess
import sys

import pytest

pytest.importorskip("torch")

PYTHON_DIR = os.path.join(os.path.dirname(__file__), "..", "..", "python")


def run(code: str) -> str:
    env = dict(os.environ, PYTHONPATH=os.path.abspath(PYTHON_DIR))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_import_ggc_leaves_torch_alone():
    assert run("import sys, ggc; print('torch' in sys.modules)") == "False"


def test_ops_registered_when_torch_comes_after_ggc():
    assert run("import ggc, torch; print(hasattr(torch.ops.ggc, 'grouped_mm'), "
               "ggc.ops._torch_ops is not None)") == "True True"


def test_ops_registered_when_torch_came_first():
    assert run("import torch, ggc; print(hasattr(torch.ops.ggc, 'grouped_mm'), "
               "ggc.ops._torch_ops is not None)") == "True True"


def test_the_hook_is_one_shot():
    # After torch is imported the hook is gone from sys.meta_path.
    assert run("import sys, ggc, torch; from ggc._torch_hook import _AfterTorch; "
               "print(any(isinstance(f, _AfterTorch) for f in sys.meta_path))") == "False"
