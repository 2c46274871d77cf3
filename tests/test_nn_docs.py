"""docs/nn.md names every public layer of autojit.nn, and the docs name every optimizer and
learning-rate scheduler: a layer added without its line in the docs fails here.

The docs write a family once, `nn.MaxPool1d/2d/3d`: each such name stands for each of its
dimensions."""

from __future__ import annotations

import inspect
import re
from pathlib import Path

import autojit

DOCS = Path(__file__).resolve().parents[1] / "docs"
# Public names that are not layers a model is built from, with where they are documented.
NOT_LAYERS = {"OptimizedModule": "what autojit.compile returns for a module (docs/compiler.md)"}


def named_in(text: str) -> set:
    """The identifiers the text names, with each family `Name1d/2d/3d` expanded."""
    names = set(re.findall(r"[A-Za-z_][A-Za-z_0-9]*", text))
    for stem, first, rest in re.findall(r"([A-Za-z_]+)(\d)d((?:/\d+d)+)", text):
        for dimension in [first, *re.findall(r"(\d+)d", rest)]:
            names.add(f"{stem}{dimension}d")
    return names


def public_classes(module, base) -> list:
    return sorted(name for name in dir(module) if not name.startswith("_")
                  and inspect.isclass(getattr(module, name))
                  and issubclass(getattr(module, name), base))


def test_docs_nn_names_every_layer():
    named = named_in((DOCS / "nn.md").read_text())
    missing = [name for name in public_classes(autojit.nn, autojit.nn.Module)
               if name not in named and name not in NOT_LAYERS]
    assert not missing, f"layers of autojit.nn that docs/nn.md does not name: {missing}"


def test_docs_name_every_optimizer_and_scheduler():
    named = named_in("".join(path.read_text() for path in DOCS.glob("*.md")))
    scheduler = autojit.optim.lr_scheduler
    classes = public_classes(autojit.optim, autojit.optim.Optimizer) + [
        name for name in public_classes(scheduler, object)
        if name.endswith(("LR", "Scheduler", "Plateau", "Restarts"))]
    missing = [name for name in classes if name not in named]
    assert not missing, f"optimizers and schedulers the docs do not name: {missing}"
