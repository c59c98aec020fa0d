#!/usr/bin/env python3
"""The full random-stress run of ggc's kernels on the GPU (10,000 cases in
at most 280 s by default), printing the summary: cases by layout and
dtype, the worst error of every spec against its tolerance, wall time.

    python benchmarks/stress.py [--cases N] [--seconds S] [--seed X] [--specs REGEX]

Defaults come from GGC_STRESS_CASES, GGC_STRESS_SECONDS, GGC_STRESS_SEED
and GGC_STRESS_SPECS. Exit status 1 on a wrong result or an out-of-group
write; 2 when the budget ends before the target and GGC_STRESS_STRICT=1.
"""

import argparse
import os
import re
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
sys.path[:0] = [os.path.join(ROOT, "python"), os.path.join(ROOT, "test", "gpu")]
import stress_run  # noqa: E402


def main() -> int:
    config = stress_run.settings(default_cases=10000, default_seconds=280)
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", type=int, default=config["target"])
    parser.add_argument("--seconds", type=float, default=config["budget_s"])
    parser.add_argument("--seed", type=int, default=config["seed"])
    parser.add_argument("--specs", default=None, help="regex over spec names")
    args = parser.parse_args()
    specs = config["specs"] if args.specs is None else [
        s for s in stress_run.SPECS if re.search(args.specs, s.name)]
    print(f"ggc stress: seed {args.seed}, target {args.cases} cases over {len(specs)} specs, "
          f"budget {args.seconds:.0f} s", flush=True)
    summary = stress_run.run_stress(args.cases, args.seconds, args.seed, device="cuda",
                                    specs=specs, log=lambda line: print(line, flush=True))
    print("\n".join(summary.lines()), flush=True)
    if summary.failures:
        return 1
    if os.environ.get("GGC_STRESS_STRICT") == "1" and summary.cases < args.cases:
        print(f"ggc stress: {summary.cases} cases, fewer than the {args.cases} asked")
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
