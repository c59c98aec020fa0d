"""Compiles every kernel ggc knows of to PTX and writes one file per kernel
(NAME.ptx) and its launch contract (NAME.launch.json, the kernel_info the
runtime reads), so two compilers can be compared byte for byte (no GPU
needed); prints a digest of each set.

    PYTHONPATH=python python3 benchmarks/ptx_corpus.py OUT_DIR [--arch sm_80]
    diff -r OLD_DIR NEW_DIR
    python3 benchmarks/cubin_diff.py OLD_DIR NEW_DIR --arch sm_90a   # machine code

The kernels: the bundled examples, the driver tests' inputs, every spec of
the random-stress suite, and the ops' kernels at the benchmark shapes
(contiguous, masked, FP8, MX, k_grouped). A refactor of the lowering that
keeps these byte-identical keeps performance too. `--arch` compiles the
same kernels for another target (sm_80, sm_86, sm_89); a kernel the target
refuses is recorded with the compiler's reason, like any other error.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import pathlib
import sys

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "python"))
sys.path.insert(0, str(ROOT / "test" / "gpu"))

import ggc  # noqa: E402
from ggc import ops  # noqa: E402
from ggc.jit import spec  # noqa: E402


def sources():
    for path in sorted((ROOT / "docs" / "examples").glob("*.mlir")):
        yield f"example-{path.stem}", path.read_text()
    for path in sorted((ROOT / "test" / "ggc" / "Inputs").glob("*.mlir")):
        yield f"input-{path.stem}", path.read_text()
    import stress_cases
    for i, s in enumerate(stress_cases._specs()):
        yield f"stress-{i:03d}", stress_cases.ir_text(s)
    yield from ops_kernels()


def ops_kernels():
    """ops.grouped_gemm's kernels at the shapes bench_grouped_gemm.py runs."""
    bf16, f8 = "bf16", "f8e4m3fn"
    for g, n, k in ((8, 4096, 7168), (8, 7168, 2048), (32, 4096, 4096)):
        kern = ops._kernel_for("contiguous", "nk", False)
        yield f"ops-contig-bf16-{g}-{n}-{k}", kern.trace(
            spec([None, k], bf16), spec([g, n, k], bf16), spec([g + 1], "i32"),
            spec([None, n], bf16))
        kern = ops._kernel_for("masked", "nk", False)
        yield f"ops-masked-bf16-{g}-{n}-{k}", kern.trace(
            spec([g, 256, k], bf16), spec([g, n, k], bf16), spec([g], "i32"),
            spec([g, 256, n], bf16), EXPECTED_M=256)
        kern = ops._kernel_for("contiguous", "nk", True)
        yield f"ops-contig-fp8-{g}-{n}-{k}", kern.trace(
            spec([None, k], f8), spec([g, n, k], f8), spec([g + 1], "i32"),
            spec([(k + 127) // 128, None], "f32"),
            spec([g, (n + 127) // 128, (k + 127) // 128], "f32"),
            spec([None, n], bf16))
        kern = ops._kernel_for("masked", "nk", True)
        for m in (64, 256):
            yield f"ops-masked-fp8-{g}-{m}-{n}-{k}", kern.trace(
                spec([g, m, k], f8), spec([g, n, k], f8), spec([g], "i32"),
                spec([g, (k + 127) // 128, m], "f32"),
                spec([g, (n + 127) // 128, (k + 127) // 128], "f32"),
                spec([g, m, n], bf16), EXPECTED_M=m)
    kern = ops._kernel_for("k_grouped", "kn", False)
    yield "ops-kgrouped-bf16", kern.trace(
        spec([None, 4096], bf16), spec([None, 7168], bf16), spec([9], "i32"),
        spec([8, 4096, 7168], "f32"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", help="folder for NAME.ptx and NAME.launch.json")
    parser.add_argument("--arch", default="sm_90a", help="target (default sm_90a)")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    failed = 0
    for name, text in sources():
        try:
            compiled = ggc.compile_ir(text, emit="ptx", source_name=name, arch=args.arch)
            ptx = compiled.asm["ptx"]
            info = json.dumps(compiled.kernel_info, sort_keys=True, indent=1) + "\n"
        except Exception as e:  # noqa: BLE001 - recorded, the run goes on
            ptx = info = f"ERROR {type(e).__name__}: {e}\n"
            failed += 1
        (out / f"{name}.ptx").write_text(ptx)
        (out / f"{name}.launch.json").write_text(info)

    def digest(pattern):
        files = sorted(out.glob(pattern))
        return len(files), hashlib.sha256(b"".join(f.read_bytes() for f in files)).hexdigest()

    count, ptx_digest = digest("*.ptx")
    _, launch_digest = digest("*.launch.json")
    print(f"{count} kernels ({failed} failed to compile) in {out}; sha256 {ptx_digest[:16]}; "
          f"launch contracts sha256 {launch_digest[:16]}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
