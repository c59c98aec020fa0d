"""ggc: a compiler for grouped GEMM (Mixture-of-Experts) on Hopper.

`@ggc.jit` kernels written with `ggc.language` (as `gl`) trace to gg IR,
compile through the pipeline to a cubin and run through the runtime;
`ggc.compile_ir` compiles gg IR text directly, `ggc.Kernel` runs it.
"""

from .compiler import (
    CompilationError,
    CompiledIR,
    Stage,
    compile_ir,
    stages,
    version,
)
from .runtime import Kernel
from .jit import JITFunction, jit, spec
from .autotune import Config, autotune
from . import language

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
    "stages",
    "version",
]
