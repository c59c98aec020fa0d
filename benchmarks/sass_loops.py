"""The size of each kernel's MMA loops in machine code, for judging a
change to the lowering without a GPU: every `NAME.ptx` of a corpus
(benchmarks/ptx_corpus.py's folder) assembled by ptxas and disassembled by
cuobjdump, and each loop whose body issues a wgmma (HGMMA, QGMMA, ...) or
an mma.sync (HMMA) counted: its instructions, how many run on the uniform
datapath, and its FFMAs (the promotion's). With two folders, the kernels
whose loops changed, old against new.

    python3 benchmarks/sass_loops.py DIR [NEW_DIR] [--arch sm_90a] [--kernels SUBSTRING]

A loop is a backward branch and the instructions from its target to it;
the innermost (shortest) is the K loop a consumer runs, one K block a
turn or more (two where the lowering pairs them, a turn of the ring with
ring_stages = constant: compare instructions an MMA), the outer ones its tile
loops. cuobjdump needs no GPU, but it runs nvdisasm: where they are not
on PATH, NVIDIA's wheels have them (`python3 -m pip download --no-deps
nvidia-cuda-cuobjdump nvidia-cuda-nvdisasm`, unzip both, then
PATH=.../nvidia/cu13/bin:$PATH).
"""
from __future__ import annotations

import argparse
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent / "probes"))
from cubin_diff import assemble  # noqa: E402
from stall_profile import opcode  # noqa: E402

_LINE = re.compile(r"^\s+/\*([0-9a-f]{4,})\*/\s+(.*?)\s*;")
_BACK_BRANCH = re.compile(r"\bBRA(?:\.\w+)*\s+(?:!?U?P\w+,\s*)?(?:`\()?0x([0-9a-f]+)")
_MMA = re.compile(r"\b[HQIB]GMMA\b|\bHMMA\b|\bIMMA\b")


def instructions(sass: str) -> list[tuple[int, str]]:
    """(address, text) of each instruction of a cuobjdump -sass listing,
    the predicate kept as part of the text."""
    out = []
    for line in sass.splitlines():
        m = _LINE.match(line)
        if m:
            out.append((int(m.group(1), 16), m.group(2).strip()))
    return out


def mma_loops(insts: list[tuple[int, str]]) -> list[dict]:
    """Each loop (a backward branch) whose body holds an MMA, innermost
    first: its first and last addresses and its counts."""
    index = {addr: i for i, (addr, _) in enumerate(insts)}
    loops = []
    for i, (addr, text) in enumerate(insts):
        m = _BACK_BRANCH.search(text)
        if not m:
            continue
        target = int(m.group(1), 16)
        if target >= addr or target not in index:
            continue
        body = [t for _, t in insts[index[target]:i + 1]]
        if not any(_MMA.search(t) for t in body):
            continue
        ops = [opcode(t) for t in body]
        loops.append({"start": target, "end": addr, "instructions": len(body),
                      "uniform": sum(o.startswith("U") for o in ops),
                      "ffma": sum(o.startswith("FFMA") for o in ops),
                      "mma": sum(bool(_MMA.search(t)) for t in body)})
    return sorted(loops, key=lambda loop: loop["instructions"])


def disassemble(ptx: pathlib.Path, arch: str, work: pathlib.Path) -> str:
    """The SASS listing of `ptx` assembled for `arch`; empty where ptxas
    refuses it (the corpus records a kernel the compiler refused as a
    .ptx file holding the reason)."""
    cubin = work / (ptx.stem + ".cubin")
    try:
        assemble(ptx, arch, cubin)
    except subprocess.CalledProcessError:
        return ""
    return subprocess.run(["cuobjdump", "-sass", str(cubin)], check=True,
                          capture_output=True, text=True).stdout


def innermost(folder: pathlib.Path, arch: str, pattern: str) -> dict[str, dict | None]:
    """Each kernel's innermost MMA loop (None where it has none)."""
    result = {}
    with tempfile.TemporaryDirectory() as work:
        for ptx in sorted(folder.glob("*.ptx")):
            if pattern and pattern not in ptx.stem:
                continue
            loops = mma_loops(instructions(disassemble(ptx, arch, pathlib.Path(work))))
            result[ptx.stem] = loops[0] if loops else None
    return result


def describe(loop: dict | None) -> str:
    """A loop's counts, and its instructions per MMA instruction, which
    compares loops unrolled differently (a pipelined loop covers two K
    blocks, one with ring_stages = constant a turn of the ring)."""
    if loop is None:
        return "no MMA loop"
    return (f"{loop['instructions']} instructions ({loop['uniform']} uniform, "
            f"{loop['ffma']} FFMA, {loop['mma']} MMA; "
            f"{loop['instructions'] / loop['mma']:.1f} an MMA)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", type=pathlib.Path)
    parser.add_argument("new", type=pathlib.Path, nargs="?")
    parser.add_argument("--arch", default="sm_90a")
    parser.add_argument("--kernels", default="", help="only kernels whose name holds this")
    args = parser.parse_args()
    for tool in ("ptxas", "cuobjdump"):
        if shutil.which(tool) is None:
            print(f"sass_loops.py: {tool} is not on PATH (see this script's docstring)",
                  file=sys.stderr)
            return 2
    old = innermost(args.old, args.arch, args.kernels)
    if args.new is None:
        for name, loop in old.items():
            print(f"{name}: {describe(loop)}")
        return 0
    new = innermost(args.new, args.arch, args.kernels)
    changed = 0
    for name in sorted(old.keys() & new.keys()):
        a, b = old[name], new[name]
        if (a and a["instructions"]) != (b and b["instructions"]):
            changed += 1
            print(f"{name}: {describe(a)} -> {describe(b)}")
    print(f"{changed} of {len(old.keys() & new.keys())} kernels' innermost MMA loops changed size")
    return 0


if __name__ == "__main__":
    sys.exit(main())
