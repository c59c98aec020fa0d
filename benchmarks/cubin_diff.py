"""Two PTX corpora (benchmarks/ptx_corpus.py's folders from two compilers)
assembled by ptxas and compared cubin by cubin: PTX that differs only in
the order of independent instructions often assembles to the same
machine code, which then needs no timing on a GPU. Prints the kernels
whose cubins differ and a count (no GPU needed; ptxas on PATH).

    python3 benchmarks/cubin_diff.py OLD_DIR NEW_DIR [--arch sm_90a]

`--arch` is ptxas's: sm_90a for the sm_90a corpus; sm_90 (the card the
sm_80 kernels run on here) or sm_80 for an sm_80 corpus.
"""
import argparse
import pathlib
import subprocess
import sys
import tempfile


def assemble(ptx: pathlib.Path, arch: str, out: pathlib.Path) -> bytes:
    subprocess.run(["ptxas", f"-arch={arch}", str(ptx), "-o", str(out)], check=True,
                   capture_output=True)
    return out.read_bytes()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("old")
    parser.add_argument("new")
    parser.add_argument("--arch", default="sm_90a")
    args = parser.parse_args()
    old, new = pathlib.Path(args.old), pathlib.Path(args.new)
    same = differ = errors = 0
    with tempfile.TemporaryDirectory() as tmp:
        for ptx in sorted(old.glob("*.ptx")):
            other = new / ptx.name
            a, b = ptx.read_text(), other.read_text() if other.exists() else ""
            if a.startswith("ERROR") or b.startswith("ERROR"):
                # A kernel the compiler refused: the same refusal, or a change.
                if a != b:
                    print(f"refusal changed: {ptx.stem}")
                    differ += 1
                else:
                    errors += 1
                continue
            if a == b or assemble(ptx, args.arch, pathlib.Path(tmp, "a.cubin")) == \
                    assemble(other, args.arch, pathlib.Path(tmp, "b.cubin")):
                same += 1
            else:
                print(f"cubin differs: {ptx.stem}")
                differ += 1
    print(f"{args.arch}: {same} identical cubins, {differ} differ, {errors} refused by both")
    return 0


if __name__ == "__main__":
    sys.exit(main())
