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
import re
import types

import numpy as np

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
                                 "isnan": math.isnan, "copysign": math.copysign,
                                 "separate": separate}
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
                      grad_is=True, dynamic_dims=()) -> None:
    """Shape, dtype, requires_grad and .grad identity of one tensor. The extents of
    `dynamic_dims` are left free here: symbolic_conditions checks them."""
    dtype = guards.constant(tensor._dtype, "D")
    kind = guards.constant(type(tensor), "K")  # Tensor, or a subclass such as Parameter
    guards.require(f"{expression}.__class__ is {kind} and {expression}._data is not None",
                   f"{what} is no longer a concrete {type(tensor).__name__}")
    shape = tuple(tensor._data.shape)
    if dynamic_dims:
        static = " and ".join(f"{expression}._data.shape[{dim}] == {extent}"
                              for dim, extent in enumerate(shape) if dim not in dynamic_dims)
        guards.require(f"{expression}._data.ndim == {len(shape)}" + (
            f" and {static}" if static else ""), f"{what} changed shape (was "
            f"{_shape_text(shape, dynamic_dims)})")
    else:
        guards.require(f"{expression}._data.shape == {shape!r}",
                       f"{what} changed shape (was {list(shape)})")
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


def _shape_text(shape: tuple, dynamic_dims) -> str:
    return "[" + ", ".join("*" if dim in dynamic_dims else str(extent)
                           for dim, extent in enumerate(shape)) + "]"


_SYMBOL = re.compile(r"\bs(\d+)\b")


def symbolic_conditions(guards: GuardSet, env) -> None:
    """The conditions a dynamic trace recorded on its symbols (symbolic.ShapeEnv), with each
    symbol read from the argument dimension it stands for; every symbol is at least 2, since
    sizes 0 and 1 are traced as constants (broadcasting and empty tensors behave apart)."""

    def source(match) -> str:
        position, dim = env.sources[f"s{match.group(1)}"]
        return f"args[{position}]._data.shape[{dim}]"

    for name in env.hints:
        guards.require(_SYMBOL.sub(source, f"{name} >= 2"),
                       f"a dynamic size ({name}) is 0 or 1")
    for condition in env.guards:
        guards.require(_SYMBOL.sub(source, condition),
                       f"the sizes broke a condition the trace relied on: {condition}")


def separate(written: tuple, others: tuple) -> bool:
    """No array of `written` shares memory with one of `others` (two arrays that each own
    their memory and are not the same object cannot overlap: the common case costs no
    bounds test)."""
    for array in written:
        for other in others:
            if array is other:
                return False
            if array.__class__ is np.ndarray and other.__class__ is np.ndarray:
                if (array.base is not None or other.base is not None) and \
                        np.may_share_memory(array, other):
                    return False
            elif array.__class__ is other.__class__ and array._root() is other._root():
                return False  # device arrays (cuda/array.py) over the same allocation
    return True


def written_input_conditions(guards: GuardSet, args: tuple, graph, arg_positions: list,
                             first_writes: dict):
    """Conditions for a graph that writes an input (an argument, or a captured tensor while
    arguments are read): the graph reads every input before anything is written back, so an
    input the function reads after another input's first write (`first_writes`: id(Input) ->
    node count then) must not share that input's memory, nor may two written inputs share
    memory; and views of a written argument were laid out as its strides were. Returns a
    description of an overlap the call being traced has (it must run eagerly), else None."""
    position_of = {id(entry): position for entry, position in zip(graph.arg_inputs,
                                                                    arg_positions)}
    written = [output.target for output in graph.outputs if output.kind == "update"]
    if not arg_positions or not written:
        return None
    for entry in written:
        if entry.kind == "arg":
            position = position_of[id(entry)]
            argument = args[position]
            if argument._data.__class__ is np.ndarray:
                guards.require(f"args[{position}]._data.strides == {argument._data.strides!r}",
                               f"argument {position}, written in place, changed its memory "
                               f"layout")
            guards.require(f"args[{position}]._is_inference is {argument._is_inference}",
                           f"argument {position}, written in place, changed inference mode")
    inputs = [entry for entry in graph.inputs if entry.kind in ("arg", "captured")]
    written_ids = {id(entry) for entry in written}

    def source(entry):
        if entry.kind == "arg":
            position = position_of[id(entry)]
            return f"args[{position}]", args[position], f"argument {position}"
        return guards.constant(entry.tensor, "T"), entry.tensor, f"captured tensor {entry.name}"

    overlap = None
    for entry in written:
        start = first_writes.get(id(entry), 0)
        read_after = {id(operand) for node in graph.nodes[start:] for operand in node.inputs}
        others = [other for other in inputs if other is not entry and (
            entry.kind == "arg" or other.kind == "arg") and (
            id(other.value) in read_after or id(other) in written_ids)]
        if not others:
            continue
        expression, tensor, what = source(entry)
        listed = [source(other) for other in others]
        listing = ", ".join(f"{other}._data" for other, _, _ in listed)
        guards.require(f"separate(({expression}._data,), ({listing},))",
                       f"{what}, written in place, now shares memory with an input read after "
                       f"the write")
        if overlap is None and not separate((tensor._data,), tuple(
                other._data for _, other, _ in listed)):
            overlap = (f"{what} is written in place and shares memory with another input of "
                       f"the call that is read after the write")
    return overlap
