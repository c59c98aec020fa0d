"""ggc: a compiler for grouped GEMM (Mixture-of-Experts) on Hopper.

This package exposes the compiler library: compile gg IR text through the
pipeline and read every stage's output. The `@ggc.jit` DSL, the runtime and
the PyTorch ops build on it.
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

__all__ = [
    "CompilationError",
    "CompiledIR",
    "Kernel",
    "Stage",
    "compile_ir",
    "stages",
    "version",
]
