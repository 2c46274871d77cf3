"""TracedList: what `t.tolist()` gives while a function is traced.

A symbolic tensor has no value while tracing. `t.item()` gives a symbolic scalar instead
(tensor/symbolic.py: a SymFloat or SymInt over a graph value, `g0`), and `t.tolist()` gives a
TracedList: the tensor's value as nested Python lists on every run (the `g` symbol `leaf`, read
with `.tolist()`). Like a symbolic scalar it is

- returned, stored in Python state or logged as the call's real list after every compiled call
  (compiler/result_template.py, compiler/writebacks.py);
- formatted for `print` as a token printed with each call's value (ir/printing.py).

Its length and items are known without the values (`len()`, indexing and iteration give the
rows, or the items as symbolic scalars); anything that needs the numbers themselves (`==`, a
concatenation) specializes on them: the trace records their value, checked on every run.
"""

from __future__ import annotations

from .symbolic import FORMATTER


class TracedList:
    """`tensor.tolist()` of a symbolic tensor, read on every run of the compiled function."""

    __slots__ = ("tensor", "leaf", "env")

    def __init__(self, tensor, leaf: str, env):
        self.tensor, self.leaf, self.env = tensor, leaf, env

    def evaluate(self, binding):
        return binding[self.leaf]

    def names(self) -> set:
        return {self.leaf}

    @property
    def hint(self):
        return self.env.hint_of(self.leaf)

    def _specialized(self, why: str):
        hint = self.hint
        self.env.record(f"{self.leaf} == {hint!r}", "value", why)
        return hint

    def specialize(self, why: str):
        """This call's value, which the trace records and checks on every run."""
        return self._specialized(why)

    def specialize_text(self, spec: str) -> str:
        text = format(self.hint, spec)
        self.env.record(f"format({self.leaf}, {spec!r}) == {text!r}", "value", "formatting")
        return text

    def __format__(self, spec: str) -> str:
        return FORMATTER[0](self, spec)

    def __str__(self) -> str:
        return self.__format__("")

    __repr__ = __str__

    def __len__(self) -> int:
        shape = self.tensor.shape
        if not shape:
            raise TypeError("object of type 'float' has no len()")
        return int(shape[0])

    def __bool__(self) -> bool:
        shape = self.tensor.shape
        return bool(shape[0]) if shape else bool(self.tensor.item())

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self.tensor[index].tolist()
        return self.tensor[index].tolist()

    def __iter__(self):
        if not self.tensor.shape:
            raise TypeError("'float' object is not iterable")
        return (self.tensor[index].tolist() for index in range(len(self)))

    def __eq__(self, other):
        return self._specialized("== was called") == other

    def __ne__(self, other):
        return self._specialized("!= was called") != other

    def __add__(self, other):
        return self._specialized("+ was called") + other

    def __radd__(self, other):
        return other + self._specialized("+ was called")

    def __hash__(self):
        raise TypeError("unhashable type: 'list'")

    def __contains__(self, item):
        return item in self._specialized("`in` was called")
