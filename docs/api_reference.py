"""The Python API reference, generated from the docstrings with pdoc, and
checked: every link in it leads to a page (and anchor) that exists.

    python3 docs/api_reference.py OUT_DIR      (make docs; make test checks it)

Needs the built extension (PYTHONPATH=python after make build) and pdoc.
"""

from __future__ import annotations

import html
import html.parser
import os
import sys
from typing import Dict, List, Set, Tuple
from urllib.parse import urldefrag

# The public modules: the package, its ops and drop-ins, the MoE layer, the
# runtime and compiler layers.
# (ggc brings ggc.language, ggc.jit and ggc.autotune, named in its __all__.)
MODULES = ["ggc", "ggc.ops", "ggc.moe", "ggc.deepgemm", "ggc.flashinfer", "ggc.vllm", "ggc.executor",
           "ggc.runtime", "ggc.signature", "ggc.compiler", "ggc.cache", "ggc.groups", "ggc.ir",
           "ggc.torch_ops", "ggc.reference"]


class _Page(html.parser.HTMLParser):
    """A page's link targets and element ids."""

    def __init__(self):
        super().__init__()
        self.links: List[str] = []
        self.ids: Set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name == "id" and value:
                self.ids.add(value)
            if name == "href" and value and tag == "a":
                self.links.append(value)


def broken_links(folder: str) -> List[Tuple[str, str]]:
    """(page, link) for each relative link whose page or anchor is missing."""
    pages: Dict[str, _Page] = {}
    for root, _, files in os.walk(folder):
        for name in files:
            if name.endswith(".html"):
                path = os.path.normpath(os.path.join(root, name))
                page = _Page()
                with open(path, encoding="utf-8") as f:
                    page.feed(f.read())
                pages[path] = page
    broken = []
    for path, page in pages.items():
        for link in page.links:
            if "://" in link or link.startswith(("mailto:", "javascript:", "data:")):
                continue
            target, anchor = urldefrag(link)
            target = (os.path.normpath(os.path.join(os.path.dirname(path), target))
                      if target else path)
            if target not in pages and not os.path.exists(target):
                broken.append((os.path.relpath(path, folder), link))
            elif anchor and target in pages and anchor not in pages[target].ids:
                broken.append((os.path.relpath(path, folder), link))
    return broken


def module_index(modules: List[str]) -> str:
    """The reference's front page: every public module (and the modules
    ggc brings, named in its __all__) with the first line of its
    docstring, linked to its page. pdoc's own index only redirects to the
    package, whose page lists few of them."""
    import importlib
    names = list(modules)
    for extra in ("ggc.language", "ggc.jit", "ggc.autotune"):
        if extra not in names:
            names.insert(1, extra)
    rows = []
    for name in names:
        doc = (importlib.import_module(name).__doc__ or "").strip()
        summary = html.escape(doc.splitlines()[0] if doc else "")
        href = name.replace(".", "/") + ".html"
        rows.append(f'<li><a href="{href}"><code>{name}</code></a>: {summary}</li>')
    return ("<!doctype html>\n<html>\n<head><meta charset=\"utf-8\">"
            "<title>ggc API reference</title></head>\n<body>\n"
            "<h1>ggc API reference</h1>\n<ul>\n" + "\n".join(rows) +
            "\n</ul>\n</body>\n</html>\n")


def main(argv: List[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    import pdoc
    out = argv[0]
    pdoc.pdoc(*MODULES, output_directory=pdoc.Path(out))
    with open(os.path.join(out, "index.html"), "w", encoding="utf-8") as f:
        f.write(module_index(MODULES))
    broken = broken_links(out)
    for page, link in broken:
        print(f"api_reference: broken link in {page}: {link}", file=sys.stderr)
    pages = sum(len(files) for _, _, files in os.walk(out))
    print(f"api_reference: {pages} files in {out}, {len(broken)} broken links")
    return 1 if broken else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
