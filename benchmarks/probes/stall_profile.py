"""Where a kernel's warps wait, instruction by instruction: a summary of
Nsight Compute's per-instruction warp-stall samples (#39, twenty-sixth
session: ggc's FP8 kernels against DeepGEMM's).

    ncu --clock-control none --profile-from-start off --section SourceCounters \
        --section WarpStateStats -o /tmp/k python3 benchmarks/profile_fp8_contiguous.py ggc
    ncu --import /tmp/k.ncu-rep --page source --csv --print-source sass > k.csv
    python3 benchmarks/probes/stall_profile.py k.csv [--top 0.006] [--regions "0:setup,230:producer,..."]

For the export's largest kernel (a report may hold helper kernels too,
DeepGEMM's scale transposition) it prints the samples by instruction
kind, a wait on an mbarrier (the branch after SYNCS.PHASECHK: a consumer
waiting for a full stage, or the producer for an empty one) apart from
other branches and the FP32 arithmetic (the promotion's FMAs) as one
kind; then every instruction holding at least `--top` of the samples,
with its offset, its executions and its two largest stall reasons; and,
with `--regions`, the share of each address range (hex offsets from the
kernel's first instruction, each range named; read them off the SASS).
"""
import argparse
import collections
import csv
import re
import sys

SAMPLES = "Warp Stall Sampling (All Samples)"


class Instruction:
    def __init__(self, offset, source, samples, executed, stalls):
        self.offset, self.source, self.samples = offset, source, samples
        self.executed, self.stalls = executed, stalls


def kernels(path):
    """{kernel name: [Instruction]} from an `ncu --page source --csv` export."""
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    found, name, header = {}, None, None
    for row in rows:
        if row and row[0] == "Kernel Name":
            name, header = row[1], None
            found[name] = []
        elif name is not None and header is None:
            header = row
            if SAMPLES not in header:
                raise ValueError(f"{path}: no '{SAMPLES}' column: export the source page "
                                 f"of a report with the SourceCounters section")
        elif name is not None and row:
            found[name].append(row)
    if not found:
        raise ValueError(f"{path}: no 'Kernel Name' row: not an ncu --page source --csv export")
    return {kernel: parse(rows_of, header) for kernel, rows_of in found.items()}


def parse(rows, header):
    at = {column: i for i, column in enumerate(header)}
    reasons = [c for c in header if c.startswith("stall_") and "Not Issued" not in c]
    base = int(rows[0][at["Address"]], 16)
    number = lambda text: int(text) if text.isdigit() else 0  # noqa: E731
    return [Instruction(int(r[at["Address"]], 16) - base, r[at["Source"]].strip(),
                        number(r[at[SAMPLES]]), number(r[at["Instructions Executed"]]),
                        {c: number(r[at[c]]) for c in reasons})
            for r in rows]


def opcode(source):
    """'@!P0 IADD3.X R1, ...' -> 'IADD3.X' (the predicate dropped)."""
    text = re.sub(r"^@!?U?P\w+\s+", "", source.strip())
    return text.split()[0] if text else "?"


def kind(instruction, previous):
    """The instruction's opcode, with mbarrier waits and FP32 math named."""
    name = opcode(instruction.source)
    if name == "BRA" and "PHASECHK" in previous.source:
        return "mbarrier wait"
    if name.split(".")[0] in ("FFMA", "FMUL", "FADD"):
        return "FP32 math"
    return name


def summary(instructions, top=0.006, regions=None):
    """The report's lines (see the module docstring)."""
    total = sum(i.samples for i in instructions) or 1
    kinds = collections.Counter()
    previous = Instruction(0, "", 0, 0, {})
    for instruction in instructions:
        kinds[kind(instruction, previous)] += instruction.samples
        previous = instruction
    lines = [f"{total} samples over {len(instructions)} instructions"]
    lines += [f"  {name:32} {100 * n / total:5.1f}%" for name, n in kinds.most_common(12)]
    lines.append(f"instructions with at least {100 * top:.1f}% of the samples:")
    for i in instructions:
        if i.samples >= top * total:
            reasons = sorted(i.stalls.items(), key=lambda kv: -kv[1])[:2]
            lines.append(f"  {i.offset:6x} {100 * i.samples / total:5.1f}% "
                         f"executed {i.executed:>9} {i.source[:56]:56} "
                         + ", ".join(f"{r[6:]} {n}" for r, n in reasons))
    if regions:
        shares = collections.Counter()
        for i in instructions:
            shares[[name for start, name in regions if i.offset >= start][-1]] += i.samples
        lines.append("by region:")
        lines += [f"  {name:14} {100 * shares[name] / total:5.1f}%" for _, name in regions]
    return lines


def parse_regions(text):
    """'0:setup,230:producer' -> [(0, 'setup'), (0x230, 'producer')],
    offsets ascending from 0."""
    regions = []
    for part in text.split(","):
        start, _, name = part.partition(":")
        regions.append((int(start, 16), name))
    if not regions or regions[0][0] != 0 or \
            any(a[0] >= b[0] for a, b in zip(regions, regions[1:])):
        raise ValueError(f"--regions must start at 0 and ascend: {text!r}")
    return regions


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("csv", help="ncu --page source --csv --print-source sass output")
    parser.add_argument("--top", type=float, default=0.006,
                        help="list instructions with at least this share of the samples")
    parser.add_argument("--regions", help="'HEX:name,...' address ranges to total")
    args = parser.parse_args(argv)
    found = kernels(args.csv)
    name = max(found, key=lambda k: len(found[k]))
    print(name[:160])
    regions = parse_regions(args.regions) if args.regions else None
    print("\n".join(summary(found[name], args.top, regions)))


if __name__ == "__main__":
    sys.exit(main())
