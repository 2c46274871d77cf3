"""The values of a compiled run's symbolic scalars (tensor/symbolic.py), read when asked for.

executable.py makes a RunBinding per run of an executable whose results, prints, Python writes
or value checks read symbols: a graph value's symbol is read from the run's output array (as
`.item()`, `.tolist()` or `.numpy()` reads it), a runtime scalar's from where it lives, a
dynamic size's from the argument's shape; a
split graph's checks between segments read a LeafBinding over one segment's outputs.
"""

from __future__ import annotations

import numpy as np


class RunBinding:
    """The values of an executable's symbols in one run (tensor/symbolic.py): a graph value's
    read from its output (`.item()`, or `.tolist()`), a runtime scalar's from where it lives;
    each computed when first asked for."""

    __slots__ = ("recipe", "arrays", "args", "cache")

    def __init__(self, recipe, arrays: tuple, args: tuple):
        self.recipe, self.arrays, self.args, self.cache = recipe, arrays, args, {}

    def __getitem__(self, name: str):
        cache = self.cache
        if name in cache:
            return cache[name]
        leaf = self.recipe.symbol_leaves.get(name)
        if leaf is None:
            value = self.recipe.source_value(name, self.args)
        else:
            array = self.arrays[leaf[0]]
            if array.__class__ is not np.ndarray:  # a GPU array
                array = array.to_host()
            kind = leaf[1]
            value = _python_value(array, kind)
        cache[name] = value
        return value


class LeafBinding(RunBinding):
    """A RunBinding over one segment's outputs (by output name), before the graph's outputs
    exist."""

    __slots__ = ()

    def __init__(self, recipe, leaves: dict, args: tuple):
        super().__init__(recipe, leaves, args)

    def __getitem__(self, name: str):
        cache = self.cache
        if name in cache:
            return cache[name]
        leaf = self.recipe.leaf_kinds.get(name)
        if leaf is None:
            value = self.recipe.source_value(name, self.args)
        else:
            output, kind = leaf
            array = self.arrays[output]
            if array.__class__ is not np.ndarray:
                array = array.to_host()
            value = _python_value(array, kind)
        cache[name] = value
        return value


def _python_value(array, kind):
    """A graph value read as Python reads it: `.tolist()`, the array itself (`.numpy()`), or
    `.item()` as a float, int or bool."""
    if kind == "tolist":
        return array.tolist()
    if kind == "array":
        return array
    return kind(array.reshape(()).item())
