"""The Python code in README.md and docs/ runs, and prints what the text says it prints.

Every ```python block of a page runs, in order, in one namespace per page (a later block may use
names an earlier one defined). A block whose first line is `# not run` is skipped. A ```output
block right after a ```python block is that block's expected stdout, compared line by line
(trailing spaces ignored), so pasted results cannot drift from what the code does.
"""

from __future__ import annotations

import contextlib
import io
import linecache
import re
from pathlib import Path

import pytest

import autojit
from autojit import config
from autojit.tensor.state import state

ROOT = Path(__file__).resolve().parents[1]
PAGES = sorted([ROOT / "README.md", *(ROOT / "docs").rglob("*.md")])
FENCE = re.compile(r"^```(\w*)[ \t]*$")


def code_blocks(text: str) -> list[tuple[int, int, str, str]]:
    """(opening line, closing line, language, body) of each fenced block, 1-based, in order."""
    blocks = []
    lines = text.splitlines()
    index = 0
    while index < len(lines):
        match = FENCE.match(lines[index])
        if match is None:
            index += 1
            continue
        start = index
        index += 1
        body = []
        while index < len(lines) and not lines[index].startswith("```"):
            body.append(lines[index])
            index += 1
        blocks.append((start + 1, index + 1, match.group(1), "\n".join(body) + "\n"))
        index += 1
    return blocks


def runnable(text: str) -> list[tuple[int, str, str | None]]:
    """(line, python code, expected output or None) for each python block that runs."""
    lines = text.splitlines()
    blocks = code_blocks(text)
    result = []
    for position, (line, end, language, body) in enumerate(blocks):
        if language != "python" or body.lstrip().startswith("# not run"):
            continue
        expected = None
        if position + 1 < len(blocks):
            next_line, _, next_language, next_body = blocks[position + 1]
            # The output block belongs to this one only when blank lines alone lie between.
            if next_language == "output" and not "".join(lines[end:next_line - 1]).strip():
                expected = next_body
        result.append((line, body, expected))
    return result


def normalized(output: str) -> list[str]:
    return [line.rstrip() for line in output.strip("\n").splitlines()]


@pytest.fixture
def clean_state():
    """Pages may change the default dtype, grad mode or thread count (a measurement on one
    thread); put them back for the next test."""
    threads = dict(config._threads)
    yield
    config._threads.update(threads)
    for listener in config.THREAD_LISTENERS:
        listener(config.get_num_threads())
    autojit.set_default_dtype(autojit.float32)
    state.grad_enabled = True
    state.inference = False


def test_there_are_pages_with_code():
    assert ROOT / "README.md" in PAGES
    assert sum(len(runnable(page.read_text())) for page in PAGES) >= 10


@pytest.mark.parametrize("page", PAGES, ids=lambda page: str(page.relative_to(ROOT)))
def test_page_code_runs(page: Path, clean_state):
    namespace: dict = {"__name__": "__docs__"}
    relative = page.relative_to(ROOT)
    for line, code, expected in runnable(page.read_text()):
        captured = io.StringIO()
        filename = f"{relative}:{line}"
        # The block's source, as a file's is: what autojit reads of a compiled function's
        # source (how a formatted value is used, a graph break's line) is there to read.
        linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
        try:
            with contextlib.redirect_stdout(captured):
                exec(compile(code, filename, "exec"), namespace)
        except Exception as error:
            raise AssertionError(f"the python block at {relative}:{line} raised "
                                 f"{type(error).__name__}: {error}") from error
        if expected is not None:
            assert normalized(captured.getvalue()) == normalized(expected), (
                f"the python block at {relative}:{line} printed\n{captured.getvalue()}\n"
                f"but the page says\n{expected}")


def test_output_blocks_are_compared():
    """The block parser pairs an output block with the python block right before it."""
    page = "text\n```python\nprint(1 + 1)\n```\n```output\n2\n```\n```python\n# not run\nx\n```\n"
    assert runnable(page) == [(2, "print(1 + 1)\n", "2\n")]
