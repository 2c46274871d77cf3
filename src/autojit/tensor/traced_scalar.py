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
concatenation) specializes on them: the trace records their value, checked on every run. A
complex tensor's `tolist()` is one too, 0-d included (a symbolic scalar is real): its value is
a complex number, and Python arithmetic on it specializes.
"""

from __future__ import annotations

import operator

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
            raise TypeError("object of type 'complex' has no len()")
        return int(shape[0])

    def __bool__(self) -> bool:
        shape = self.tensor.shape
        return bool(shape[0]) if shape else bool(self._specialized("bool() was called"))

    @property
    def real(self):
        return self._specialized(".real was read").real

    @property
    def imag(self):
        return self._specialized(".imag was read").imag

    def conjugate(self):
        return self._specialized("conjugate() was called").conjugate()

    def __getitem__(self, index):
        if isinstance(index, slice):
            return self.tensor[index].tolist()
        return self.tensor[index].tolist()

    def __iter__(self):
        if not self.tensor.shape:
            raise TypeError("'complex' object is not iterable")
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
        if not self.tensor.shape:  # a complex number's value
            return hash(self._specialized("hash() was called"))
        raise TypeError("unhashable type: 'list'")

    def __contains__(self, item):
        return item in self._specialized("`in` was called")


def _specializing(name: str, reflected: bool):
    symbol = name.strip("_")

    def method(self, *other):
        value = self._specialized(f"{symbol} was called")
        if reflected:
            return getattr(operator, name.replace("__r", "__", 1))(other[0], value)
        return getattr(operator, name)(value, *other) if hasattr(operator, name) else \
            getattr(value, name)(*other)

    method.__name__ = name
    return method


# The rest of a number's and a list's operators: this call's value, checked on every run.
for _name in ("__mul__", "__sub__", "__truediv__", "__floordiv__", "__mod__", "__pow__",
              "__lt__", "__le__", "__gt__", "__ge__", "__neg__", "__pos__", "__abs__",
              "__complex__", "__float__", "__int__", "__index__"):
    setattr(TracedList, _name, _specializing(_name, False))
for _name in ("__rmul__", "__rsub__", "__rtruediv__", "__rfloordiv__", "__rmod__", "__rpow__"):
    setattr(TracedList, _name, _specializing(_name, True))
