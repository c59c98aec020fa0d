"""Compile time of ggc's kernels: cold (an empty disk cache: the whole
pipeline, ptxas included), a disk hit (a new process, the kernel cached by
an earlier one: what a second run of a program pays) and a memory hit (the
same process asking again), ms a kernel, median of --rounds. Each cold and
disk-hit figure comes from a process of its own, so nothing is shared but
the disk cache; the import of ggc is not counted.

    python3 benchmarks/compile_time.py [--rounds 3] [--json out.json] [--stages]

--stages also splits each kernel's cold compile by stage (ggc.compile_ir
with timing=True, in this process, median of --rounds): ggc's own passes
(stages gg-config, ggk, nvvm), LLVM (llvm), the NVPTX backend (ptx),
ptxas (cubin), and printing every stage's text.

Runs on a machine without a GPU: ggc.Kernel compiles to a cubin where
ptxas is found (else to PTX; the table says which), for GGC_TARGET's
target, else sm_90a (torch is not imported, so no device is asked), on
132 SMs. GGC_DUMP_DIR is not passed on (it would read every stage).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))

# (label, keyword arguments of ggc.ir.grouped_matmul): a kernel of each
# layout and dtype family the forward and training paths compile.
KERNELS = [
    ("bf16 contiguous N4096 K7168",
     dict(layout="contiguous", num_groups=8, n=4096, k=7168)),
    ("bf16 masked N4096 K7168",
     dict(layout="masked", num_groups=16, n=4096, k=7168, m=128, expected_m=128)),
    ("fp8 contiguous 1x128/128x128 N7168 K2048",
     dict(layout="contiguous", num_groups=8, n=7168, k=2048, dtype="f8E4M3FN",
          a_scale="block_mn", b_scale="block")),
    ("fp8 masked 1x128/128x128 N4096 K7168",
     dict(layout="masked", num_groups=4, n=4096, k=7168, m=256, expected_m=256,
          dtype="f8E4M3FN", a_scale="block_mn", b_scale="block")),
    ("mxfp8 contiguous N4096 K7168",
     dict(layout="contiguous", num_groups=8, n=4096, k=7168, dtype="f8E4M3FN",
          a_scale="mx32", b_scale="mx32")),
    ("bf16 k_grouped (weight gradient) M4096 N7168",
     dict(layout="k_grouped", num_groups=8, n=7168, k=None, m=4096, out_dtype="f32")),
]


JIT_LABEL = "@ggc.jit: routed rows (traced, epilogue x * r)"


def compiler_of(index):
    """A function that compiles kernel `index` once more each call: a
    ggc.Kernel of its IR, or for the last, the @ggc.jit specialisation of
    its signature (the trace included)."""
    import ggc
    if index < len(KERNELS):
        from ggc import ir
        source = ir.grouped_matmul("k", **KERNELS[index][1])
        return lambda: ggc.Kernel(source)
    import ggc.language as gl

    args = (ggc.spec([None, 2048], "bf16"), ggc.spec([8, 1536, 2048], "bf16"),
            ggc.spec([9], "i32"), ggc.spec([None], "f32"), ggc.spec([None, 1536], "bf16"))

    def compile_jit():
        @ggc.jit  # a new function each call: its specialisations start empty
        def routed(x: gl.Rows, w: gl.Weights, offs: gl.Offsets, r: gl.RowVector,
                   y: gl.Out):
            gl.store(y, gl.grouped_dot(x, w, offs) * r)
        return routed.compile(*args)
    return compile_jit


def child(index):
    """One process: the kernel's compile (or disk hit), then a memory hit;
    prints both in ms, and where the first came from, as JSON."""
    compile_once = compiler_of(index)
    start = time.perf_counter()
    kernel = compile_once()
    first = (time.perf_counter() - start) * 1e3
    start = time.perf_counter()
    compile_once()
    again = (time.perf_counter() - start) * 1e3
    print(json.dumps({"first_ms": first, "memory_hit_ms": again, "from": kernel.cache_hit,
                      "stage": "cubin" if "cubin" in kernel.asm else "ptx"}))


STAGE_GROUPS = {"ggc passes": ("gg", "gg-config", "ggk", "nvvm"), "llvm": ("llvm",),
                "nvptx": ("ptx",), "ptxas": ("cubin",)}


def stage_times(report):
    """{stage: (making ms, printing ms)} from a compile's timing report
    (ggc.compile_ir(..., timing=True).timing; `ggc --timing`)."""
    times = {}
    for line in report.splitlines()[1:]:
        name, ms = line.rsplit(None, 1)
        name = name.strip()
        if name.startswith("stage "):
            times[name[len("stage "):]] = [float(ms), 0.0]
        elif name.startswith("(print ") and name.endswith(")"):
            times[name[len("(print "):-1]][1] = float(ms)
    return {stage: tuple(t) for stage, t in times.items()}


def grouped_stage_times(report):
    """stage_times summed into STAGE_GROUPS, plus "printing" (every
    stage's text) and "total"."""
    times = stage_times(report)
    groups = {group: sum(times[s][0] for s in stages if s in times)
              for group, stages in STAGE_GROUPS.items()}
    groups["printing"] = sum(p for _, p in times.values())
    groups["total"] = sum(m + p for m, p in times.values())
    return groups


def stage_split(rounds):
    """{label: grouped_stage_times' medians} of each of KERNELS' cold
    compile, in this process (no cache: compile_ir compiles)."""
    from ggc import ir
    split = {}
    for label, kwargs in KERNELS:
        source = ir.grouped_matmul("k", **kwargs)
        runs = [grouped_stage_times(_timed_compile(source)) for _ in range(rounds)]
        split[label] = {group: statistics.median(run[group] for run in runs)
                        for group in runs[0]}
    return split


def _timed_compile(source):
    """The timing report of compiling `source` to a cubin, or to PTX where
    the compiler finds no ptxas (as ggc.Kernel falls back)."""
    import ggc
    try:
        return ggc.compile_ir(source, emit="cubin", timing=True).timing
    except ggc.CompilationError as e:
        if "needs ptxas" not in e.diagnostics:
            raise
    return ggc.compile_ir(source, emit="ptx", timing=True).timing


def run_child(index, cache_dir):
    env = {name: value for name, value in os.environ.items() if name != "GGC_DUMP_DIR"}
    env["GGC_CACHE_DIR"] = cache_dir
    out = subprocess.run([sys.executable, __file__, "--child", str(index)],
                         env=env, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", help="write the results here")
    parser.add_argument("--stages", action="store_true",
                        help="also split each cold compile by stage (in this process)")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:
        child(args.child)
        return
    results = {}
    print(f"{'kernel':46} {'cold ms':>9} {'disk hit ms':>12} {'memory hit ms':>14} stage",
          flush=True)
    for index, label in enumerate([label for label, _ in KERNELS] + [JIT_LABEL]):
        cold, disk, memory = [], [], []
        for _ in range(args.rounds):
            with tempfile.TemporaryDirectory() as folder:
                first = run_child(index, folder)
                second = run_child(index, folder)
            if first["from"] is not None or second["from"] != "disk":
                raise SystemExit(f"{label}: the disk cache did not behave "
                                 f"(first {first}, second {second})")
            cold.append(first["first_ms"])
            disk.append(second["first_ms"])
            memory += [first["memory_hit_ms"], second["memory_hit_ms"]]
        row = {"cold_ms": statistics.median(cold), "disk_hit_ms": statistics.median(disk),
               "memory_hit_ms": statistics.median(memory), "stage": first["stage"]}
        results[label] = row
        print(f"{label:46} {row['cold_ms']:9.1f} {row['disk_hit_ms']:12.2f} "
              f"{row['memory_hit_ms']:14.3f} {row['stage']}", flush=True)
    split = stage_split(args.rounds) if args.stages else None
    if split:
        groups = list(next(iter(split.values())))
        print(f"\n{'kernel, cold compile by stage (ms)':46} "
              + " ".join(f"{g:>11}" for g in groups))
        for label, row in split.items():
            print(f"{label:46} " + " ".join(f"{row[g]:11.1f}" for g in groups), flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"rounds": args.rounds, "results": results, "stages": split}, f,
                      indent=1)


if __name__ == "__main__":
    main()
