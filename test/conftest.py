"""Shared pytest setup: import ggc from the source tree's python/ folder."""

import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "python"))


import pytest  # noqa: E402


@pytest.fixture(autouse=True)
def fresh_plan_settings():
    """Tests set ggc.compiler's module state directly (monkeypatch), past
    the setters that drop plan_settings' kept tuple: each test makes it
    again, before and after."""
    compiler = sys.modules.get("ggc.compiler")
    if compiler is not None:
        compiler._settings = None
    yield
    compiler = sys.modules.get("ggc.compiler")
    if compiler is not None:
        compiler._settings = None
