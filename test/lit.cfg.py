# lit configuration for ggc: dialect, pass and driver tests (FileCheck).
import os

import lit.formats

config.name = "ggc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir", ".test"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ggc_tools_dir, "..", "test")
# GPU tests and examples are run by pytest and the benchmarks, not lit.
config.excludes = ["gpu", "unit", "python", "Inputs", "lit.cfg.py"]

config.substitutions.append(("%ggc_src", config.ggc_source_dir))
# ggc, ggc-opt, FileCheck and not are found on PATH, this build's tools first.
config.environment["PATH"] = os.pathsep.join(
    [config.ggc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])

# Tests that assemble cubins need ptxas (CUDA toolkit).
if any(os.access(p, os.X_OK) for p in ["/usr/local/cuda/bin/ptxas", "/usr/local/bin/ptxas"]):
    config.available_features.add("ptxas")
