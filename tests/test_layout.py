"""docs/layout.md is what tools/layout.py writes from the tree: every package in layer order and
every module with the first sentence of its docstring (a module without one fails here)."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _layout_tool():
    spec = importlib.util.spec_from_file_location("layout_tool", ROOT / "tools" / "layout.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_committed_layout_page_is_the_generated_one():
    tool = _layout_tool()
    assert (ROOT / "docs" / "layout.md").read_text() == tool.render(), \
        "docs/layout.md is stale: run python tools/layout.py"


def test_every_module_and_package_is_on_the_page():
    text = (ROOT / "docs" / "layout.md").read_text()
    package = ROOT / "src" / "autojit"
    for path in package.rglob("*.py"):
        if path.name != "__init__.py":
            assert f"\n{path.name} " in text, path
    for init in package.rglob("__init__.py"):
        folder = init.parent.relative_to(package).as_posix()
        if folder != ".":
            assert f"## `autojit/{folder}/`" in text, folder
