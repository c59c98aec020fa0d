"""Registering ggc's torch custom ops (ggc.torch_ops) when torch is
imported, without importing torch from `import ggc`.

torch takes about 2 s to import, which compile-only use of ggc (the
compiler, `ggc` IR, cubins) should not pay; torch.compile, though, must
find torch.ops.ggc.* whenever torch is there. So: torch already imported,
the ops are registered at once; otherwise a one-shot import hook
registers them right after torch's own module has run.
"""

import importlib.abc
import importlib.util
import sys


def _register() -> None:
    from . import torch_ops  # noqa: F401


class _AfterTorch(importlib.abc.MetaPathFinder):
    """Finds torch as the other finders do, and has its loader register
    ggc's ops once torch's module has run."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)  # one shot; the real finders find it
        spec = importlib.util.find_spec(name)
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        run = loader.exec_module

        def exec_module(module):
            run(module)
            _register()

        loader.exec_module = exec_module
        return spec


def register_torch_ops_with_torch() -> None:
    """Registers the ops now if torch is imported, else when it is."""
    if "torch" in sys.modules:
        _register()
    elif not any(isinstance(f, _AfterTorch) for f in sys.meta_path):
        sys.meta_path.insert(0, _AfterTorch())
