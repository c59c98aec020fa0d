# lit configuration for ggc: dialect, pass and driver tests (FileCheck).
import os

import lit.formats

config.name = "ggc"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.ggc_tools_dir, "..", "test")
# GPU tests and examples are run by pytest and the benchmarks, not lit.
config.excludes = ["gpu", "unit", "python", "lit.cfg.py"]

config.substitutions.append(("%ggc_src", config.ggc_source_dir))
for tool in ["ggc-opt", "ggc"]:
    config.substitutions.append(
        (r"\b%s\b" % tool, os.path.join(config.ggc_tools_dir, tool)))
config.environment["PATH"] = os.pathsep.join(
    [config.ggc_tools_dir, config.llvm_tools_dir, config.environment.get("PATH", "")])
