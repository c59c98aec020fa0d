"""The README's GPU example runs as pasted."""

import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))),
                                "python"))
from test_readme import readme_examples, run_example  # noqa: E402

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA GPU")


def test_the_gpu_example_runs_as_pasted(tmp_path):
    (example,) = [e for e in readme_examples() if 'device="cuda"' in e]
    run = run_example(example, tmp_path)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip(), "the example printed no PTX"
