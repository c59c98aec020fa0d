"""Which instructions one kernel executes more of than another: two Nsight
Compute source exports (SourceCounters, SASS) compared by opcode (#39,
fifty-third session: at the same 128x192 tile ggc's FP8 kernel executed
15% more instructions than DeepGEMM's, with the same memory traffic).

    python3 benchmarks/probes/instruction_mix.py A.csv B.csv [--top 16] [--hot 12]

Each CSV is `ncu --import REPORT --page source --csv --print-source sass`
of a report with the SourceCounters section (benchmarks/device_fp8_sass.sh
makes both). For each export's largest kernel it prints the instructions
executed (warp level, all SMs) by opcode (predicate dropped, the opcode's
first dotted part: FFMA, IADD3, WARPGROUP, ...), A's and B's side by side
with their difference, the largest differences first; then each kernel's
`--hot` most executed instructions with their offsets, which locate the
loops that run them (a K loop's instructions share its count).
"""
import argparse
import collections
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import stall_profile  # noqa: E402
from stall_profile import kernels  # noqa: E402


def opcode(source):
    """'@!P0 IADD3.X R1, ...' -> 'IADD3'."""
    return stall_profile.opcode(source).split(".")[0]


def largest(path):
    """(name, instructions) of the export's kernel with the most instructions."""
    found = kernels(path)
    name = max(found, key=lambda k: len(found[k]))
    return name, found[name]


def executed_by_opcode(instructions):
    counts = collections.Counter()
    for instruction in instructions:
        counts[opcode(instruction.source)] += instruction.executed
    return counts


def comparison(a, b, top=16):
    """Lines: the totals, then the `top` opcodes whose counts differ most."""
    count_a, count_b = executed_by_opcode(a), executed_by_opcode(b)
    total_a, total_b = sum(count_a.values()), sum(count_b.values())
    lines = [f"{'executed':12} {total_a:>14,} {total_b:>14,} {total_a - total_b:>+14,}"
             f" ({100 * (total_a - total_b) / max(total_b, 1):+.1f}% of B)"]
    names = sorted(set(count_a) | set(count_b),
                   key=lambda op: (-abs(count_a[op] - count_b[op]), op))
    for op in names[:top]:
        lines.append(f"{op:12} {count_a[op]:>14,} {count_b[op]:>14,} "
                     f"{count_a[op] - count_b[op]:>+14,}")
    return lines


def hottest(instructions, hot=12):
    """Lines: the `hot` most executed instructions, by offset."""
    chosen = sorted(instructions, key=lambda i: (-i.executed, i.offset))[:hot]
    return [f"  {i.offset:6x} executed {i.executed:>11,} {i.source[:64]}"
            for i in sorted(chosen, key=lambda i: i.offset)]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("a", help="the first kernel's source export (CSV)")
    parser.add_argument("b", help="the second kernel's source export (CSV)")
    parser.add_argument("--top", type=int, default=16, help="opcodes to list")
    parser.add_argument("--hot", type=int, default=12,
                        help="most executed instructions to list per kernel")
    args = parser.parse_args(argv)
    (name_a, a), (name_b, b) = largest(args.a), largest(args.b)
    print(f"A: {name_a[:120]}\nB: {name_b[:120]}")
    print(f"{'opcode':12} {'A':>14} {'B':>14} {'A - B':>14}")
    print("\n".join(comparison(a, b, args.top)))
    for label, instructions in (("A", a), ("B", b)):
        print(f"{label}'s most executed instructions:")
        print("\n".join(hottest(instructions, args.hot)))


if __name__ == "__main__":
    sys.exit(main())
