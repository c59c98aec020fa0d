"""The `ggc` and `ggc-opt` commands of an installed package: the compiler
tools shipped in ggc/bin, and `ggc cache [--info | --clear]`."""

from __future__ import annotations

import os
import sys

_BIN = os.path.join(os.path.dirname(os.path.abspath(__file__)), "bin")


def _exec(tool: str) -> None:
    path = os.path.join(_BIN, tool)
    if not os.access(path, os.X_OK):
        sys.exit(f"{tool}: the compiler tool is not installed at {path} (this ggc was not "
                 f"installed with `pip install .`; in a source checkout use build/bin/{tool})")
    os.execv(path, [tool] + sys.argv[1:])


def ggc() -> None:
    if sys.argv[1:2] == ["cache"]:
        from .__main__ import main
        sys.exit(main(sys.argv[1:]))
    _exec("ggc")


def ggc_opt() -> None:
    _exec("ggc-opt")
