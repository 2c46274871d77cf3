"""MkDocs hooks for the documentation site (mkdocs.yml names this file under `hooks:`).

Docstrings carry doctest examples as plain `>>>` lines, which doctest runs (tests/
test_doctests.py) but Markdown would read as nested block quotes. The Markdown extension
below turns each run of such lines into a fenced `pycon` block before the page, or a
docstring rendered by mkdocstrings, is converted, so examples show as code.
"""

from __future__ import annotations

import re

from markdown import Extension
from markdown.preprocessors import Preprocessor

FENCE = re.compile(r"^\s*(```|~~~)")
PROMPT = re.compile(r"^( {0,3})>>> ?")


class DoctestFencePreprocessor(Preprocessor):
    """Wrap a doctest run (a `>>>` line and the lines after it up to a blank line) in a fence."""

    def run(self, lines: list[str]) -> list[str]:
        result: list[str] = []
        in_fence = False
        index = 0
        while index < len(lines):
            line = lines[index]
            if FENCE.match(line):
                in_fence = not in_fence
            match = None if in_fence else PROMPT.match(line)
            if match is None:
                result.append(line)
                index += 1
                continue
            indent = len(match.group(1))
            block = []
            while index < len(lines) and lines[index].strip():
                block.append(lines[index][indent:])
                index += 1
            if result and result[-1].strip():
                result.append("")
            result.extend(["```pycon", *block, "```", ""])
        return result


class DoctestFenceExtension(Extension):
    def extendMarkdown(self, md) -> None:  # noqa: N802 - Markdown's name
        # Before fenced_code (priority 25), so the new fences are parsed like written ones.
        md.preprocessors.register(DoctestFencePreprocessor(md), "doctest_fence", 28)


def on_config(config):
    config.markdown_extensions.append(DoctestFenceExtension())
    return config
