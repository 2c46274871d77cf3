"""TracedScalar: what `.item()` and `.tolist()` give while a function is traced.

A symbolic tensor has no value while tracing, so `loss.item()` cannot be a Python float yet.
It is a TracedScalar instead, which stands for "this tensor's value, as a Python number (or
nested list), on every call": the tracer makes the tensor an output of the graph, and

- returned from the compiled function (`return loss.item()`, or inside a returned tuple,
  list or dict), it is the call's real number after every compiled call
  (compiler/result_template.py);
- formatted (`str`, `repr`, f-strings, `format`) for `print`, it prints the value of each
  call, as formatted tensors do (ir/printing.py).

Anything else needs the value now: arithmetic, comparisons, `bool()`, `float()`, a use as a
size or index. Those stop the trace with a graph break naming the user's line, so the call
runs eagerly, as before symbolic scalars existed; and one stored in Python state (a list, an
attribute) is found after the trace (compiler/reachability.py) and does the same.
"""

from __future__ import annotations

from .graph_break import graph_break
from .state import state


class TracedScalar:
    """`tensor.item()` (kind "item") or `tensor.tolist()` (kind "tolist") of a symbolic tensor,
    read on every call of the compiled function."""

    __slots__ = ("tensor", "kind")

    def __init__(self, tensor, kind: str):
        self.tensor, self.kind = tensor, kind

    def _needs_value(self, what: str):
        graph_break(f"{what} of a value read with Tensor.{self.kind}() (Python decides on "
                    "it while tracing)")

    def _token(self, spec: str) -> str:
        tracer = state.tracer
        token = tracer.format_scalar(self.tensor, spec, self.kind) if tracer is not None \
            else None
        if token is None:
            self._needs_value("formatting")
        return token

    def __format__(self, spec: str) -> str:
        return self._token(spec)

    def __str__(self) -> str:
        return self._token("")

    __repr__ = __str__

    def __bool__(self):
        self._needs_value("bool()")

    def __float__(self):
        self._needs_value("float()")

    def __int__(self):
        self._needs_value("int()")

    def __index__(self):
        self._needs_value("an index")

    def __hash__(self):
        self._needs_value("hash()")

    def __len__(self):
        self._needs_value("len()")

    def __iter__(self):
        self._needs_value("iteration")

    def __getitem__(self, key):
        self._needs_value("indexing")


def _refuse(name: str):
    def method(self, *args):
        self._needs_value(f"Python's {name.strip('_')}")

    method.__name__ = name
    return method


for _name in ("__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__",
              "__truediv__", "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__",
              "__rmod__", "__pow__", "__rpow__", "__neg__", "__pos__", "__abs__", "__round__",
              "__lt__", "__le__", "__gt__", "__ge__", "__eq__", "__ne__", "__trunc__",
              "__floor__", "__ceil__", "__complex__"):
    setattr(TracedScalar, _name, _refuse(_name))
