"""docs/examples.md quotes runs that tools/examples_page.py wrote, and they still agree with
the code: the kernel and parameter counts, the data sizes and the docs' length recomputed now,
a compiled step faster than the eager one in every recorded comparison, and the README's and
docs/index.md's sentence about the flagship (tools/examples_page.py's docstring lists the
checks). A full run takes minutes, so nothing here trains: a stale block is written again by
`python tools/examples_page.py`."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def tool():
    spec = importlib.util.spec_from_file_location("examples_page", ROOT / "tools" /
                                                  "examples_page.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["examples_page"] = module  # its dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def page(tool):
    return tool.PAGE.read_text()


def test_every_block_agrees_with_the_code(tool, page):
    problems = tool.problems(page)
    assert not problems, "docs/examples.md is stale (run python tools/examples_page.py):\n" \
        + "\n".join(problems)


def test_every_quoted_example_has_its_block_and_only_those(tool, page):
    assert list(tool.blocks(page)) == list(tool.RUNS)  # in the page's order too


def edited(tool, page: str, name: str, pattern: str, replacement: str) -> str:
    """The page with one figure of NAME's block changed."""
    block = tool.blocks(page)[name]
    changed, count = re.subn(pattern, replacement, block, count=1)
    assert count == 1, (name, pattern)
    return page.replace(block, changed)


@pytest.mark.parametrize("name, pattern, replacement, complaint", [
    ("digits_mlp", r"\d+ fused kernels", "52 fused kernels", "52 fused kernels"),
    ("digits_mlp", r"compiled/eager [\d.]+x", "compiled/eager 0.80x", "not faster than eager"),
    ("digits_mlp", r"[\d,]+ parameters", "1 parameters", "parameters"),
    ("digits_mlp", r"(?m)^test accuracy: [\d.]+%", "test accuracy: 80.00%", "says about 97%"),
    ("gradient_penalty", r"\d+ fused kernels", "999 fused kernels", "kernels"),
    ("char_transformer", r"text: [\d,]+ characters", "text: 420,000 characters",
     "420,000 characters"),
    ("lstm_forecast", r"\d+ training windows", "7 training windows", "lstm_forecast"),
])
def test_a_stale_figure_is_reported(tool, page, name, pattern, replacement, complaint):
    problems = tool.problems(edited(tool, page, name, pattern, replacement))
    assert any(complaint in problem for problem in problems), problems


@pytest.mark.parametrize("old, new", [("below 0.6 times", "below 0.5 times"),
                                      ("(64-128-128-10, ReLU)", "(64-256-256-10, ReLU)"),
                                      ("above 0.02, 0.25", "above 0.01, 0.25")])
def test_a_stale_setting_in_the_prose_is_reported(tool, page, old, new):
    assert old in page
    problems = tool.problems(page.replace(old, new, 1))
    assert any("the prose says" in problem for problem in problems), problems


def test_a_block_is_rewritten_in_place_and_the_prose_kept(tool, page):
    new = tool.rewrite(page, {"digits_cnn": "new text\n"})
    assert tool.blocks(new)["digits_cnn"] == "new text\n"
    assert new.replace("new text\n", tool.blocks(page)["digits_cnn"]) == page
    with pytest.raises(SystemExit, match="no block for"):
        tool.rewrite("no blocks here\n", {"digits_cnn": "x\n"})


def test_kept_lines_are_the_summary_and_a_few_sample_lines(tool):
    output = "epoch 1\nspeed: fast\nnoise\nsample:\na\nb\nc\nd\ne\nok: fine\nnote: traced\n"
    run = tool.Run(("speed:", "ok:"), sample_lines=2)
    assert tool.kept_lines(output, run) == ["speed: fast", "sample:", "a", "b", "ok: fine",
                                            "note: traced"]
