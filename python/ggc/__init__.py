"""ggc: a compiler for grouped GEMM (Mixture-of-Experts) on Hopper and Ampere/Ada.

`@ggc.jit` kernels written with `ggc.language` (as `gl`) trace to gg IR,
compile through the pipeline to a cubin and run through the runtime;
`ggc.compile_ir` compiles gg IR text directly, `ggc.Kernel` runs it.
With torch installed, ggc's torch.ops.ggc.* custom ops (ggc.torch_ops) are
registered when torch is imported, before or after ggc; `import ggc` does
not import torch itself.
"""

import logging as _logging
import os as _os


# GGC_LOG's values: compile, 1 or info show each compile (kernel, target,
# specialisation, milliseconds) and disk-cache hit; debug memory hits too.
_LOG_LEVELS = {"1": "INFO", "ON": "INFO", "TRUE": "INFO", "COMPILE": "INFO", "INFO": "INFO",
               "DEBUG": "DEBUG", "WARNING": "WARNING", "ERROR": "ERROR"}


def _log_to_stderr_if_asked() -> None:
    """GGC_LOG (_LOG_LEVELS) prints the "ggc" logger to stderr; otherwise it
    stays silent unless the application configures logging itself."""
    level = _LOG_LEVELS.get(_os.environ.get("GGC_LOG", "").strip().upper())
    if level is not None:
        handler = _logging.StreamHandler()
        handler.setFormatter(_logging.Formatter("ggc %(levelname)s: %(message)s"))
        logger = _logging.getLogger("ggc")
        logger.addHandler(handler)
        logger.setLevel(level)


_log_to_stderr_if_asked()

# The package's version; pyproject.toml and the compiler's version()
# say the same (test_package.py).
__version__ = "0.1.0"

from importlib.util import find_spec as _find_spec  # noqa: E402

from .compiler import (  # noqa: E402
    CompilationError,
    CompiledIR,
    Stage,
    compile_ir,
    get_memory_gbps,
    get_num_sms,
    get_shared_memory_bytes,
    get_target,
    set_memory_gbps,
    set_num_sms,
    set_shared_memory_bytes,
    set_target,
    stages,
    Target,
    targets,
    version,
)
from .runtime import Kernel, dependent_launches, set_dependent_launches  # noqa: E402
from .jit import JITFunction, jit, spec
from .autotune import Config, autotune
from . import language

# ggc's torch custom ops (torch.ops.ggc.*) are registered as soon as torch
# is there, so torch.compile finds them, but ggc does not import torch
# itself (about 2 s): compile-only use never pays for it. With torch
# already imported they are registered now; otherwise when torch is
# imported (ggc._torch_hook).
if _find_spec("torch") is not None:
    from ._torch_hook import register_torch_ops_with_torch as _with_torch

    _with_torch()

__all__ = [
    "CompilationError",
    "Config",
    "autotune",
    "CompiledIR",
    "JITFunction",
    "Kernel",
    "jit",
    "language",
    "spec",
    "Stage",
    "compile_ir",
    "get_memory_gbps",
    "get_num_sms",
    "get_shared_memory_bytes",
    "get_target",
    "set_memory_gbps",
    "set_num_sms",
    "set_shared_memory_bytes",
    "set_target",
    "stages",
    "Target",
    "targets",
    "version",
]
