"""The API reference's front page (docs/api_reference.py): every public
module, with its one-line summary, linked to its page."""

import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "..", "docs"))
import api_reference  # noqa: E402


def test_index_lists_every_public_module_with_its_summary():
    page = api_reference.module_index(api_reference.MODULES)
    rows = re.findall(r'<li><a href="([^"]+)"><code>([^<]+)</code></a>: ([^<]*)</li>', page)
    names = [name for _, name, _ in rows]
    for module in api_reference.MODULES + ["ggc.language", "ggc.jit", "ggc.autotune"]:
        assert names.count(module) == 1, module
    for href, name, summary in rows:
        assert href == name.replace(".", "/") + ".html"
        assert summary.strip(), f"{name} has no docstring summary"
