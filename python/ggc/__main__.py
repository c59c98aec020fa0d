"""`python -m ggc cache [--info | --clear]`: the kernel cache on disk."""

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
    args = parser.parse_args(argv)
    folder = cache.cache_dir()
    if folder is None:
        print("ggc: the disk cache is off (GGC_CACHE_DIR=off)")
        return 0
    if args.clear:
        print(f"ggc: removed {cache.clear(folder)} kernels from {folder}")
        return 0
    found = cache.entries(folder)
    total = sum(size for _, size, _ in found)
    print(f"ggc: {folder}: {len(found)} kernels, {total / (1 << 20):.1f} MB of at most "
          f"{cache.max_bytes() / (1 << 20):.0f} MB (GGC_CACHE_MAX_MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
