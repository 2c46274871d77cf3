"""Claims of the docs that no code block shows, checked: the README's flags of every example,
the node names docs/differences.md gives, and the graph-break warning docs/compiler.md
describes."""

from __future__ import annotations

import contextlib
import importlib
import io
import sys
import warnings
from pathlib import Path

import pytest

import autojit
import autojit.nn.functional as F

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = sorted(path.stem for path in (ROOT / "examples").glob("*.py")
                  if path.stem != "example_support")


@pytest.mark.parametrize("name", EXAMPLES)
def test_every_example_takes_the_readmes_flags(name, monkeypatch):
    # README: "Every example takes `--compile`, `--eager` and `--quick`".
    monkeypatch.syspath_prepend(str(ROOT / "examples"))
    module = importlib.import_module(name)
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed), pytest.raises(SystemExit) as ended:
        module.main(["--help"])
    assert ended.value.code == 0
    for flag in ("--compile", "--eager", "--quick"):
        assert flag in printed.getvalue(), (name, flag)
    sys.modules.pop(name, None)


def test_the_node_names_differences_md_gives():
    x = autojit.randn(3, 4, requires_grad=True)
    target = autojit.tensor([0, 1, 2])
    assert F.cross_entropy(x, target).grad_fn.name() == "NllLossBackward0"
    assert F.nll_loss(x, target).grad_fn.name() == "NllLossBackward0"
    assert F.gelu(x).grad_fn.name() == "GeluBackward0"
    assert x.mean().grad_fn.name() == "MeanBackward0"
    assert x.mean(0).grad_fn.name() == "MeanBackward1"
    assert F.mse_loss(x, x.detach()).grad_fn.name() == "MeanBackward0"
    signal = x.reshape(1, 3, 4)
    assert F.interpolate(signal, 6, mode="linear").grad_fn.name() == "UpsampleLinear1DBackward0"
    assert F.conv1d(signal, autojit.ones(2, 3, 2), autojit.zeros(2)
                    ).grad_fn.name() == "ConvolutionBackward0"
    text = (ROOT / "docs" / "differences.md").read_text()
    assert "`cross_entropy`, `nll_loss` and `gelu` have torch's" in text


def test_a_stored_traced_value_names_where_and_the_line_that_made_it():
    history = []

    @autojit.compile
    def step(x):
        y = x * 2  # the line the warning names
        history.append(y)
        return sum(h.sum() for h in history)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        step(autojit.ones(2))
    message = next(str(w.message) for w in caught if w.category is autojit.CompileWarning)
    assert "was stored in history[0]" in message and "y = x * 2" in message
