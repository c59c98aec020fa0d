"""`python -m ggc cache [--info | --clear]`: the kernel cache on disk.
`python -m ggc info FILE.mlir ...`: what each kernel of gg IR files
compiles to: its tile configuration, shared memory, registers and spills."""

from __future__ import annotations

import argparse
import sys

from . import cache


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog="python -m ggc")
    commands = parser.add_subparsers(dest="command", required=True)
    on_cache = commands.add_parser("cache", help="the compiled-kernel cache on disk")
    action = on_cache.add_mutually_exclusive_group()
    action.add_argument("--info", action="store_true", help="where it is and its size "
                        "(the default)")
    action.add_argument("--clear", action="store_true", help="remove every entry")
    on_info = commands.add_parser("info", help="config, shared memory, registers and "
                                  "spills of each kernel of gg IR files")
    on_info.add_argument("files", nargs="+")
    args = parser.parse_args(argv)
    if args.command == "info":
        return info(args.files)
    return cache_command(args.clear)


def cache_command(clear: bool) -> int:
    folder = cache.cache_dir()
    if folder is None:
        print("ggc: the disk cache is off (GGC_CACHE_DIR=off)")
        return 0
    if clear:
        print(f"ggc: removed {cache.clear(folder)} kernels from {folder}")
        return 0
    found = cache.entries(folder)
    total = sum(size for _, size, _ in found)
    print(f"ggc: {folder}: {len(found)} kernels, {total / (1 << 20):.1f} MB of at most "
          f"{cache.max_bytes() / (1 << 20):.0f} MB (GGC_CACHE_MAX_MB)")
    return 0


def info(files) -> int:
    """One line per kernel; the cubin stage when ptxas is there (registers
    and spills come from it), else PTX."""
    from .compiler import CompilationError
    from .runtime import compile_for_launch
    status = 0
    for path in files:
        with open(path) as f:
            text = f.read()
        try:
            compiled, _ = compile_for_launch(text, source_name=path)
        except CompilationError as e:
            print(f"{path}: {str(e).splitlines()[0]}")
            status = 1
            continue
        configs = [plan["attributes"].get("config", "?") for plan in compiled.plans]
        for i, kernel in enumerate(compiled.kernel_info):
            r = compiled.resources.get(kernel["name"], {})
            regs = (f"{r['registers']} registers, {r['spill_store_bytes']} + "
                    f"{r['spill_load_bytes']} bytes spilled (stores + loads)"
                    if "registers" in r else "registers unknown (no ptxas)")
            print(f"{path}: {kernel['name']}: {configs[i] if i < len(configs) else '?'}, "
                  f"{kernel['shared_bytes']} bytes of shared memory, {regs}")
    return status


if __name__ == "__main__":
    sys.exit(main())
