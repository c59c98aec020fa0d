"""The README's examples run as pasted: the compile-only one here, the GPU
one in test/gpu/test_readme.py."""

import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def readme_examples():
    with open(os.path.join(ROOT, "README.md")) as f:
        return re.findall(r"```python\n(.*?)```", f.read(), re.S)


def run_example(source, tmp_path):
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"),
               GGC_CACHE_DIR=str(tmp_path))
    return subprocess.run([sys.executable, "-c", source], env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_compile_only_example_runs_as_pasted(tmp_path):
    (example,) = [e for e in readme_examples() if "spec(" in e]
    run = run_example(example, tmp_path)
    assert run.returncode == 0, run.stderr
    assert "#gg.config<block = [" in run.stdout and "'registers': " in run.stdout


def test_the_status_states_only_figures_the_performance_pages_record():
    """README's status is a summary of docs/performance.md (and its dated
    records): every ratio, share or time it states appears there, so a
    figure changes in one place first (#41)."""
    with open(os.path.join(ROOT, "README.md")) as f:
        readme = f.read()
    status = readme[readme.index("## Status"):]
    status = status[:status.index("\n## ", 1)]
    pages = ""
    for name in ("performance.md", "performance-history.md"):
        with open(os.path.join(ROOT, "docs", name)) as f:
            pages += f.read()
    figures = set(re.findall(r"(?<![\d.])(\d+\.\d+)(?=x|%| us| TFLOPS|-\d)", status))
    assert len(figures) > 10, figures  # the pattern still finds the status' figures
    assert not [f for f in sorted(figures) if f not in pages]
