"""Counts the NVVM operations each pass before the target's conversions
writes (#37: NVVM comes only from the passes of GGKTargetPasses.td), over
the kernels of ptx_corpus.py, for each target. No GPU needed.

    PYTHONPATH=python python3 benchmarks/nvvm_census.py [--arch sm_90a sm_80 sm_89]

For each kernel the IR after every pass is read (print_ir_after_all); a
pass's count is the rise in `nvvm.` operations across it. Passes declared
in GGKTargetPasses.td (the conversions, ggk-warp-specialize and
ggk-collect-launch) are left out; the total is what the rest wrote, and
the goal is 0.
"""

from __future__ import annotations

import argparse
import collections
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "benchmarks"))

import ggc  # noqa: E402
from ptx_corpus import sources  # noqa: E402

DUMP = re.compile(r"^// -----// IR Dump After (\w+)", re.M)
NVVM_OP = re.compile(r"\bnvvm\.[a-z_.]+")


def target_passes() -> set[str]:
    text = (ROOT / "compiler" / "include" / "ggc" / "GGKTargetPasses.td").read_text()
    return set(re.findall(r"^def (\w+) : Pass<", text, re.M))


def census(source: str, arch: str) -> collections.Counter:
    """What each pass added in NVVM operations (attributes like
    nvvm.maxntid are not operations: only `= nvvm.x` and statements)."""
    out = ggc.compile_ir(source, emit="nvvm", arch=arch, print_ir_after_all=True)
    dumps = DUMP.split(out.ir_after_all)[1:]
    added, before = collections.Counter(), 0
    for name, ir in zip(dumps[::2], dumps[1::2]):
        count = sum(1 for line in ir.splitlines()
                    if NVVM_OP.match(line.split("= ", 1)[-1].strip()))
        added[name] += max(count - before, 0)
        before = count
    return added


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--arch", nargs="+", default=["sm_90a", "sm_80", "sm_89"])
    args = parser.parse_args()
    conversions = target_passes()
    for arch in args.arch:
        total, kernels, failed = collections.Counter(), 0, 0
        for _, source in sources():
            try:
                total += census(source, arch)
                kernels += 1
            except ggc.CompilationError:
                failed += 1
        before = {p: n for p, n in total.items() if p not in conversions and n}
        print(f"{arch}: {sum(before.values())} NVVM operations before the target's "
              f"conversions over {kernels} kernels ({failed} refused)")
        for name, n in sorted(before.items(), key=lambda kv: -kv[1]):
            print(f"  {name}: +{n}")


if __name__ == "__main__":
    main()
