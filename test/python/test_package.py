"""The package's metadata: one version everywhere, a license."""

import os
import re

import ggc

ROOT = os.path.join(os.path.dirname(__file__), "..", "..")


def test_one_version_in_the_package_the_project_and_the_compiler():
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        project = re.search(r'^version = "([^"]+)"', f.read(), re.M).group(1)
    assert ggc.__version__ == project
    assert ggc.version().startswith(f"ggc {project} "), ggc.version()


def test_license_and_changelog():
    with open(os.path.join(ROOT, "LICENSE")) as f:
        assert "Apache License" in f.read(200)
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        assert 'license = {text = "Apache-2.0"}' in f.read()
    with open(os.path.join(ROOT, "CHANGELOG.md")) as f:
        assert ggc.__version__ in f.read()
