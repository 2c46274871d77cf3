"""Guards: the conditions under which a compiled executable still means what was traced.

A compiled function's executable is valid only while everything the trace depended on is the
same (DESIGN rule 5): argument shapes, dtypes and requires_grad flags, Python scalar arguments,
grad mode, the captured tensors (which object the function reaches, its shape, dtype,
requires_grad and .grad), and Python scalars the function reaches through its closure, globals
and arguments (a learning rate in a dict, a flag on a module). The guard set is written as
Python source, one condition per line, compiled into a function, so that checking it costs a few
attribute reads and comparisons per call, and `str(guards)` shows exactly what is checked.

`reachable(roots)` walks the objects a function can reach, recording an access path (a Python
expression) for every tensor and scalar it finds; paths are re-evaluated by the guard.
"""

from __future__ import annotations

import math
import types

from . import dtypes
from .state import state
from .tensor import Tensor

SCALAR_TYPES = (bool, int, float, str, type(None))
_MAX_DEPTH = 4
_MAX_OBJECTS = 2000
_MAX_SEQUENCE = 64
_MAX_STRING = 64
_OPAQUE = (types.ModuleType, type, types.FunctionType, types.BuiltinFunctionType,
           types.MethodType, types.CodeType)


def reachable(roots: list) -> tuple[dict, list, bool]:
    """Walk from `roots` ((expression, object) pairs) through attributes, dicts, lists, tuples.

    Returns ({id(tensor): (path, tensor)}, [(path, scalar)], complete): the first path found
    to each tensor, every scalar leaf, and whether the walk stayed within its budget.
    """
    tensors: dict = {}
    scalars: list = []
    seen: set = set()
    frontier = [(expression, obj) for expression, obj in roots]
    visited = 0
    for depth in range(_MAX_DEPTH + 1):
        following = []
        for expression, obj in frontier:
            if isinstance(obj, Tensor):
                tensors.setdefault(id(obj), (expression, obj))
                continue
            if isinstance(obj, SCALAR_TYPES):
                if not isinstance(obj, str) or len(obj) <= _MAX_STRING:
                    scalars.append((expression, obj))
                continue
            if id(obj) in seen or isinstance(obj, _OPAQUE) or depth == _MAX_DEPTH:
                continue
            seen.add(id(obj))
            visited += 1
            if visited > _MAX_OBJECTS:
                return tensors, scalars, False
            following.extend(_children(expression, obj))
        frontier = following
    return tensors, scalars, True


def _children(expression: str, obj) -> list:
    if isinstance(obj, dict):
        return [(f"{expression}[{key!r}]", value) for key, value in list(obj.items())[
            :_MAX_SEQUENCE] if isinstance(key, (str, int)) and not isinstance(key, bool)]
    if isinstance(obj, (list, tuple)):
        return [(f"{expression}[{index}]", value)
                for index, value in enumerate(obj[:_MAX_SEQUENCE])]
    attributes = getattr(obj, "__dict__", None)
    if not isinstance(attributes, dict):
        return []
    return [(f"{expression}.{name}", value) for name, value in attributes.items()
            if name.isidentifier() and not name.startswith("__")]


class GuardSet:
    """A compiled predicate over a call's arguments; `str()` gives its source."""

    def __init__(self):
        self._lines: list[str] = []
        self._constants: dict = {"Tensor": Tensor, "state": state, "dtypes": dtypes,
                                 "isnan": math.isnan, "copysign": math.copysign}
        self.complete = True
        self._check = None

    def constant(self, value, prefix: str = "C") -> str:
        for name, existing in self._constants.items():
            if existing is value and name.startswith(prefix):
                return name
        name = f"{prefix}{len(self._constants)}"
        self._constants[name] = value
        return name

    def require(self, condition: str, reason: str) -> None:
        self._lines.append((condition, reason))

    def source(self) -> str:
        body = "\n".join(f"    if not ({condition}):\n        return {reason!r}"
                         for condition, reason in self._lines)
        return f"def check(args):\n{body or '    pass'}\n    return None\n"

    def build(self) -> None:
        namespace = dict(self._constants)
        exec(compile(self.source(), "<autojit guards>", "exec"), namespace)  # noqa: S102
        self._check = namespace["check"]

    def failure(self, args: tuple) -> str | None:
        """None when every guard holds, else the reason of the first that fails."""
        try:
            return self._check(args)
        except Exception as error:  # a path that no longer resolves fails the guard
            return f"a guarded path raised {type(error).__name__}: {error}"

    def __str__(self) -> str:
        return "\n".join(f"{condition}  # {reason}" for condition, reason in self._lines)

    def __len__(self) -> int:
        return len(self._lines)


def tensor_conditions(guards: GuardSet, expression: str, tensor: Tensor, what: str,
                      grad_is=True) -> None:
    """Shape, dtype, requires_grad and .grad identity of one tensor."""
    dtype = guards.constant(tensor._dtype, "D")
    kind = guards.constant(type(tensor), "K")  # Tensor, or a subclass such as Parameter
    guards.require(f"{expression}.__class__ is {kind} and {expression}._data is not None",
                   f"{what} is no longer a concrete {type(tensor).__name__}")
    guards.require(f"{expression}._data.shape == {tuple(tensor._data.shape)!r}",
                   f"{what} changed shape (was {list(tensor._data.shape)})")
    guards.require(f"{expression}._dtype is {dtype}", f"{what} changed dtype (was "
                   f"{tensor._dtype.name})")
    storage = guards.constant(tensor._data.__class__, "S")  # ndarray (CPU) or CudaArray
    guards.require(f"{expression}._data.__class__ is {storage}",
                   f"{what} changed device (was {tensor.device})")
    guards.require(f"{expression}._requires_grad is {tensor._requires_grad}",
                   f"{what} changed requires_grad (was {tensor._requires_grad})")
    if grad_is:
        grad_condition(guards, expression, tensor, what)


def grad_condition(guards: GuardSet, expression: str, tensor: Tensor, what: str) -> None:
    """Which object .grad is (None included): the trace read or assigned it."""
    if tensor._grad is None:
        guards.require(f"{expression}._grad is None", f"{what}.grad is no longer None")
    else:
        grad = guards.constant(tensor._grad, "G")
        guards.require(f"{expression}._grad is {grad}", f"{what}.grad was replaced")


def scalar_condition(guards: GuardSet, expression: str, value, what: str) -> None:
    if value is None:
        guards.require(f"{expression} is None", f"{what} changed (was None)")
        return
    kind = type(value).__name__
    if isinstance(value, float) and math.isnan(value):
        guards.require(f"{expression}.__class__ is float and isnan({expression})",
                       f"{what} changed (was nan)")
        return
    if isinstance(value, float) and value == 0.0:
        # -0.0 == 0.0, but 1 / x tells them apart: the sign is part of the value.
        guards.require(f"{expression}.__class__ is float and {expression} == 0.0 and "
                       f"copysign(1.0, {expression}) == {math.copysign(1.0, value)!r}",
                       f"{what} changed (was {value!r})")
        return
    guards.require(f"{expression}.__class__ is {kind} and {expression} == {value!r}",
                   f"{what} changed (was {value!r})")


def mode_conditions(guards: GuardSet) -> None:
    default = guards.constant(dtypes.get_default_dtype(), "D")
    guards.require(f"state.grad_enabled is {state.grad_enabled}",
                   f"grad mode changed (was {'enabled' if state.grad_enabled else 'disabled'})")
    guards.require(f"state.inference is {state.inference}", "inference mode changed")
    guards.require(f"state.anomaly is {state.anomaly}", "anomaly mode changed")
    guards.require(f"dtypes._default_float[0] is {default}", "the default dtype changed")
