"""What ptxas made differently of ggc's FP8 contiguous kernel in clusters
of two (#39): the same 128x192 serial tile compiled alone and in clusters
(B multicast), and, with `--plans`, other register splits. Multicast and
the releases to both CTAs explain a quarter of the cluster kernel's 5-17%
at most (docs/performance.md, the bisection); this reads what is left.

    python3 benchmarks/probes/cluster_sass.py [--out DIR] [--plans]

Writes each kernel's PTX and cubin under DIR (default /tmp/cluster-sass),
prints ptxas's registers and spills for each (from ggc's own compile), and where `cuobjdump`
is found (the device, not this project's build machine) dumps each cubin's
SASS and prints the opcodes whose counts differ between the two, and every
local-memory instruction (a spill) with the instructions around it, so that
where the spill sits (the consumers' K loop or the producer's) can be read.
Compiles only: no GPU needed without cuobjdump.
"""
import argparse
import collections
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "python"))
import ggc  # noqa: E402
from ggc import ir  # noqa: E402

SHAPE = dict(num_groups=8, n=4096, k=7168)
KERNELS = {  # name: (block N, stages, cluster, promotion, registers)
    "alone": (192, 4, 1, "serial", "[40, 232]"),
    "cluster": (192, 4, 2, "serial", "[40, 232]"),
}
PLANS = {
    "cluster 48/224": (192, 4, 2, "serial", "[48, 224]"),
    "pipelined alone": (128, 5, 1, "pipelined", "[24, 240]"),
    "pipelined cluster 40/232": (128, 5, 2, "pipelined", "[40, 232]"),
}


def compile_kernel(block_n, stages, cluster, promotion, registers):
    config = (f"#gg.config<block = [128, {block_n}, 128], stages = {stages}, "
              f"cluster = [{cluster}, 1], sms = 132>")
    plan = (f"#gg.kernel_plan<promotion = {promotion}, scales = stages, "
            f"registers = {registers}, staging = swizzled>")
    return ggc.Kernel(ir.grouped_matmul(
        "k", layout="contiguous", dtype="f8E4M3FN", a_scale="block_mn",
        b_scale="block", config=config, kernel_plan=plan, **SHAPE))


def usage(kernel):
    """What ptxas allocated, from the -v report ggc's own compile read."""
    r = kernel.resources
    if not r:
        return "no cubin (ggc found no ptxas)"
    return (f"{r['registers']} registers at launch, spills {r['spill_store_bytes']} "
            f"bytes stored / {r['spill_load_bytes']} loaded, stack {r['stack_bytes']}")


def parse_sass(text):
    """cuobjdump -sass's instructions, one string each (predicate and
    opcode first), without addresses and encodings."""
    lines = []
    for line in text.splitlines():
        match = re.search(r"/\*[0-9a-f]{4,}\*/\s+(.*?)\s*;", line)
        if match:
            lines.append(match.group(1))
    return lines


def sass_lines(cubin_path):
    run = subprocess.run(["cuobjdump", "-sass", cubin_path], capture_output=True,
                         text=True, check=True)
    return parse_sass(run.stdout)


def opcode(instruction):
    """The instruction's opcode without its predicate or modifiers
    (`LDL.LU` is an LDL)."""
    words = instruction.split()
    if words and words[0].startswith("@"):
        words = words[1:]
    return words[0].split(".")[0] if words else ""


def report_sass(sass):
    counts = {name: collections.Counter(opcode(i) for i in lines)
              for name, lines in sass.items()}
    names = list(sass)
    print(f"\nopcodes whose counts differ ({' / '.join(names)}):")
    for op in sorted(set().union(*counts.values())):
        row = [counts[n][op] for n in names]
        if len(set(row)) > 1:
            print(f"  {op:28s} " + " / ".join(str(c) for c in row))
    for name, lines in sass.items():
        spills = [i for i, line in enumerate(lines) if opcode(line) in ("STL", "LDL")]
        print(f"\n{name}: {len(lines)} instructions, {len(spills)} local-memory ones")
        for i in spills:
            print(f"  -- at {i}:")
            for j in range(max(0, i - 4), min(len(lines), i + 5)):
                print(f"  {'>' if j == i else ' '} {lines[j]}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", default="/tmp/cluster-sass")
    parser.add_argument("--plans", action="store_true",
                        help="also the other register splits and the pipelined plan")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    kernels = dict(KERNELS, **(PLANS if args.plans else {}))
    cubins = {}
    for name, spec in kernels.items():
        kernel = compile_kernel(*spec)
        stem = os.path.join(args.out, name.replace(" ", "_").replace("/", "-"))
        with open(stem + ".ptx", "w") as f:
            f.write(kernel.asm["ptx"])
        cubin = kernel.asm.get("cubin")
        if cubin is not None:
            with open(stem + ".cubin", "wb") as f:
                f.write(cubin)
            cubins[name] = stem + ".cubin"
        print(f"{name:26s} {usage(kernel)}")
    if shutil.which("cuobjdump") is None or len(cubins) < len(kernels):
        print("\ncuobjdump not found: the cubins are in", args.out)
        return
    sass = {name: sass_lines(path) for name, path in cubins.items()}
    for name, lines in sass.items():
        with open(cubins[name][:-len(".cubin")] + ".sass", "w") as f:
            f.write("\n".join(lines) + "\n")
    report_sass(sass)


if __name__ == "__main__":
    main()
