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


def test_the_api_reference_link_check_finds_a_broken_link(tmp_path):
    import sys
    sys.path.insert(0, os.path.join(ROOT, "docs"))
    from api_reference import broken_links
    (tmp_path / "ggc").mkdir()
    (tmp_path / "ggc.html").write_text(
        '<a href="ggc/ops.html#grouped_gemm">ok</a> <a href="#here">ok</a> <p id="here"></p>'
        '<a href="ggc/missing.html">no page</a> <a href="ggc/ops.html#nothing">no anchor</a>'
        '<a href="https://example.org/x">outside</a>')
    (tmp_path / "ggc" / "ops.html").write_text('<div id="grouped_gemm"></div>')
    assert sorted(link for _, link in broken_links(str(tmp_path))) == [
        "ggc/missing.html", "ggc/ops.html#nothing"]
