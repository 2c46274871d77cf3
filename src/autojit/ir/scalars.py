"""Symbolic scalars in the graph being traced: graph values read in Python, scalars read before
each run fed to the graph, and the values a decision needs while tracing.

The tracer (trace.py) hands three jobs to a `ScalarGraph`:

- `leaf(tensor, kind)`: `t.item()`, `t.tolist()` or `bool(t)` of a traced tensor. The tensor's
  value becomes a "value" output of the graph and the function gets a symbolic scalar
  (tensor/symbolic.py: a `g` symbol) standing for that output read as a Python number on
  every run.
- `operand(scalar, dtype)`: a symbolic scalar that reaches a tensor op (`x * loss.item()`,
  `p.add_(g, alpha=-lr)`) as a 0-d graph value of the dtype the op computes in, rounded as
  NumPy rounds a Python number operand. The part made of runtime scalars only (a learning
  rate, `base_lr * gamma ** i0`) is a "scalar" input that Python evaluates before each run
  (DerivedScalar), so it equals eager's arithmetic exactly; the part that reads graph values
  is computed by graph ops in float64 (int64 for ints), Python's own precision.
- `evaluate(value)`: the value a graph value has in the call being traced, for a decision
  Python makes on it (`if loss.item() > 10:`). The nodes it depends on run through the eager
  impls on the call's real inputs (arguments, captured tensors, runtime scalars, and random
  draws made from copies of the generators' state, so the generators do not move). The trace
  takes the branch this call takes; the decision is checked again on every run
  (compiler/executable.py), so this is only the choice of which branch to trace.

See docs/notes/symbolic-scalars.md.
"""

from __future__ import annotations

import contextlib
import copy
import math
import threading

import numpy as np

from ..ops import elementwise
from ..ops.registry import run_eager
from ..tensor import dtypes
from ..tensor import generator as generators
from ..tensor.graph_break import graph_break, user_frame
from ..tensor.state import state
from ..tensor.symbolic import (
    FORMATTER,
    SymFloat,
    SymInt,
    call_symbolic,
    contains_symbolic,
    digest,
    is_runtime,
    predicate,
    substitute,
)
from ..tensor.symbolic_expr import (
    evaluate_poly,
    evaluate_tree,
    poly_names,
    poly_source,
    tree_names,
    tree_source,
)
from ..tensor.tensor import Tensor
from ..tensor.traced_scalar import TracedList
from .graph import Value
from .source_uses import formatted_reaches_sinks

# Python's arithmetic, as graph ops.
_FLOAT_OPS = {"+": elementwise.ADD, "-": elementwise.SUB, "*": elementwise.MUL,
              "/": elementwise.DIV, "**": elementwise.POW, "//": elementwise.FLOOR_DIVIDE,
              "%": elementwise.REMAINDER}
_ATOM_OPS = {"floordiv": elementwise.FLOOR_DIVIDE, "mod": elementwise.REMAINDER,
             "min": elementwise.MINIMUM, "max": elementwise.MAXIMUM}
_CALL_OPS = {"exp": elementwise.EXP, "log": elementwise.LOG, "sqrt": elementwise.SQRT,
             "sin": elementwise.SIN, "cos": elementwise.COS, "tanh": elementwise.TANH,
             "abs": elementwise.ABS, "fabs": elementwise.ABS}


class DerivedScalar:
    """A "scalar" graph input: a symbolic scalar made of runtime scalars only (`f0`,
    `0.1 * 0.5 ** i0`), which Python evaluates from their sources before each run."""

    def __init__(self, scalar, sources: dict, dtype: dtypes.DType):
        self.scalar, self.sources, self.dtype = scalar, sources, dtype
        self.display = str(sources[_single(scalar)].display) if _single(scalar) else \
            _source_text(scalar)

    def value(self, args: tuple):
        binding = {name: source.value(args) for name, source in self.sources.items()}
        return self.scalar.evaluate(binding)

    def read(self, args: tuple) -> np.ndarray:
        return np.array(self.value(args), self.dtype.numpy)

    def __repr__(self) -> str:
        return f"<scalar {self.display} read before each run>"


def _single(scalar):
    """The symbol name when the scalar is one runtime symbol alone, else None."""
    if isinstance(scalar, SymFloat) and scalar.tree[0] == "runtime":
        return scalar.tree[1]
    if isinstance(scalar, SymInt) and len(scalar.poly) == 1 and scalar.poly[0][1] == 1 and \
            len(scalar.poly[0][0]) == 1 and isinstance(scalar.poly[0][0][0], str):
        return scalar.poly[0][0][0]
    return None


def _source_text(scalar) -> str:
    return tree_source(scalar.tree) if isinstance(scalar, SymFloat) else poly_source(scalar.poly)


# How far a float the compiled graph computes may lie from the traced (eager) value when the
# trace specialized on it: kernels reduce in another order than NumPy.
_TOLERANCE = {"float64": 1e-13, "float32": 1e-6, "float16": 2e-3, "bfloat16": 2e-2}


# Values one trace may read from its graph in Python (`.item()`, `.tolist()`, `bool(t)`, ...)
# before the call runs eagerly instead: each read is a leaf and usually a check, so a Python
# loop over a tensor's values (a greedy non-maximum suppression over thousands of boxes) would
# grow the trace without end (27 minutes and 11 GB for torchvision's detection models before).
MAX_READS = 1000


def _python_dtype(kind) -> dtypes.DType:
    return {float: dtypes.float64, int: dtypes.int64, bool: dtypes.bool_}[kind]


class ScalarGraph:
    """The symbolic scalars of one trace (see the module docstring)."""

    def __init__(self, tracer, env):
        self.tracer, self.env = tracer, env
        self.leaf_values: dict = {}  # leaf name -> the graph Value it reads
        self._derived: dict = {}  # (source text, dtype) -> the "scalar" input's Value
        self._memo: dict = {}  # id(Value) -> Tensor, values evaluated while tracing
        self._inputs = None  # id(Value) -> Input, made on first evaluation
        self._draws: dict = {}  # id(generator) -> (generator, state before, state now)
        env.evaluate_leaf = self._leaf_hint

    def release(self) -> None:
        """Forget the values evaluated while tracing (compiler/api.py, once the executable is
        built): the executable's ShapeEnv keeps this graph (`env.evaluate_leaf`), and the memo
        held every array a decision on a graph value needed, the forward's activations behind
        a `loss.item()` (90 MiB for a 512-2048-2048-10 MLP at batch 1024). A hint asked for
        later is evaluated again."""
        self._memo.clear()

    # ---- leaves -----------------------------------------------------------------------------

    def leaf(self, tensor: Tensor, kind):
        """A `g` symbol for the tensor's value read as a Python `kind` (float, int, bool, or
        "tolist") on every run."""
        if len(self.env.leaves) >= MAX_READS:
            graph_break(f"more than {MAX_READS} values read from traced tensors in one call (a "
                        "Python loop over a tensor's values?)", needs_data=False)
        tracer = self.tracer
        value = tracer.value_of(tensor)
        # Its output is added once the trace knows Python reads the value after a run
        # (compiler/tracing.py); one that only feeds ops needs none.
        name = tracer.unique_output("item" if kind != "tolist" else "tolist")
        tracer.reserved_outputs.add(name)
        symbol = self.env.create_leaf(name, kind, _TOLERANCE.get(value.dtype.name, 0.0))
        leaf_name = next(reversed(self.env.leaves))
        self.leaf_values[leaf_name] = value
        return symbol, leaf_name

    def read_array(self, tensor: Tensor, what: str):
        """`tensor.numpy()` while tracing: this call's values (read-only: a write would not
        reach the tensor), which the trace specializes on, checked on every run."""
        _, name = self.leaf(tensor, "array")
        array = self.env.hint_of(name)
        tolerance = self.env.tolerance((name,))
        if tolerance:  # a float array the compiled graph computes: eager's to rounding
            constant = f"E{len(self.env.value_checks)}"
            self.env.record(f"close({name}, {constant}, {tolerance!r})", "value", what,
                            {constant: array})
        else:
            self.env.record(f"digest({name}) == {digest(array)!r}", "value", what)
        array = array.copy()
        array.flags.writeable = False
        return array

    def read_scalar(self, tensor: Tensor, kind):
        """`tensor.item()` (kind float, int or bool by its dtype) or `tensor.tolist()` ("tolist")
        while tracing: a symbolic scalar standing for the value on every run."""
        if kind != "tolist":
            category = tensor.dtype.category
            kind = float if category == dtypes.FLOATING else (
                bool if category == dtypes.BOOL else int)
        symbol, name = self.leaf(tensor, kind)
        return TracedList(tensor, name, self.env) if kind == "tolist" else symbol

    def _leaf_hint(self, name: str):
        leaf = self.env.leaves[name]
        array = self.evaluate(self.leaf_values[name])
        if leaf.kind == "tolist":
            return array.tolist()
        if leaf.kind == "array":
            return np.array(array)
        return leaf.kind(array.reshape(()).item()) if leaf.kind is not float else \
            float(array.reshape(()).item())

    # ---- operands ---------------------------------------------------------------------------

    def operand(self, scalar, dtype: dtypes.DType) -> Value:
        """The symbolic scalar as a 0-d graph value of `dtype`."""
        python = dtypes.float64 if isinstance(scalar, SymFloat) else dtypes.int64
        if isinstance(scalar, SymFloat):
            value = self._tree(scalar.tree)
        else:
            value = self._poly(scalar.poly)
        if not isinstance(value, Value):  # constant after all
            return value
        if value.dtype is not python and value.dtype is not dtype:
            value = self._cast(value, python)
        return value if value.dtype is dtype else self._cast(value, dtype)

    def tensor_of(self, data, dtype: dtypes.DType) -> Tensor:
        """A tensor of `dtype` holding `data`: symbolic scalars, numbers, nested lists."""
        if isinstance(data, (list, tuple)):
            from ..ops.layout import stack

            return stack([self.tensor_of(item, dtype) for item in data])
        if is_runtime(data):
            value = self.operand(data, dtype)
            if isinstance(value, Value):
                return Tensor._symbolic(value)
            data = value
        return Tensor._make(np.array(data, dtype.numpy), dtype)

    def _cast(self, value: Value, dtype: dtypes.DType) -> Value:
        return self.tracer.graph_node(elementwise.CAST, [value], {"dtype": dtype}, (), dtype)

    def _derived_input(self, scalar, dtype: dtypes.DType) -> Value:
        key = (_source_text(scalar), dtype)
        found = self._derived.get(key)
        if found is None:
            names = scalar.names()
            if any(name[:1] == "s" for name in names):
                graph_break("a scalar read on every call combined with a dynamic size",
                            needs_data=False)
            sources = {name: self.env.runtime[name][1] for name in sorted(names)}
            source = DerivedScalar(scalar, sources, dtype)
            found = self._derived[key] = self.tracer.scalar_input(source)
        return found

    def _leaf_value(self, name: str, kind: dtypes.DType) -> Value:
        value = self.leaf_values[name]
        if value.shape != ():
            value = self.tracer.graph_node(_reshape_op(), [value], {"shape": ()}, (),
                                           value.dtype)
        leaf_kind = self.env.leaves[name].kind
        python = _python_dtype(leaf_kind if leaf_kind in (float, int, bool) else float)
        if value.dtype is not python:
            value = self._cast(value, python)
        return value if value.dtype is kind or python is kind else self._cast(value, kind)

    def _tree(self, tree: tuple):
        kind = tree[0]
        if kind == "constant":
            return tree[1]
        names = tree_names(tree)
        if not any(name[:1] == "g" for name in names):
            return self._derived_input(SymFloat(tree, None, self.env), dtypes.float64)
        if kind == "runtime":
            return self._leaf_value(tree[1], dtypes.float64)
        if kind == "int":
            value = self._poly(tree[1])
            return self._cast(value, dtypes.float64) if isinstance(value, Value) else \
                float(value)
        if kind == "call":
            op = _CALL_OPS.get(tree[1])
            if op is None or len(tree[2]) != 1:
                graph_break(f"math.{tree[1]}() of a value read with Tensor.item() in a tensor "
                            "op", needs_data=False)
            argument = self._tree(tree[2][0])
            return self.tracer.graph_node(op, [argument], {}, (), dtypes.float64)
        left, right = self._tree(tree[1]), self._tree(tree[2])
        if not isinstance(left, Value) and not isinstance(right, Value):
            return evaluate_tree(tree, {})
        return self.tracer.graph_node(_FLOAT_OPS[kind], [left, right], {}, (), dtypes.float64)

    def _poly(self, poly: tuple):
        names = poly_names(poly)
        if not names:
            return evaluate_poly(poly, {})
        if not any(name[:1] == "g" for name in names):
            return self._derived_input(SymInt(poly, None, self.env), dtypes.int64)
        total = None
        for monomial, coefficient in poly:
            term = coefficient if coefficient != 1 or not monomial else None
            for atom in monomial:
                factor = self._atom(atom)
                term = factor if term is None else self._binary(elementwise.MUL, term, factor)
            total = term if total is None else self._binary(elementwise.ADD, total, term)
        return total

    def _atom(self, atom):
        if isinstance(atom, str):
            if atom[:1] == "g":
                return self._leaf_value(atom, dtypes.int64)
            return self._poly((((atom,), 1),))
        operation, left, right = atom
        if not any(name[:1] == "g" for name in poly_names(left) | poly_names(right)):
            return self._derived_input(SymInt((((atom,), 1),), None, self.env), dtypes.int64)
        return self._binary(_ATOM_OPS[operation], self._poly(left), self._poly(right))

    def _binary(self, op, left, right):
        if not isinstance(left, Value) and not isinstance(right, Value):
            # Two known sizes: the op's own NumPy reference on them (a size is an int64).
            return int(op.impl(np.asarray(left, np.int64), np.asarray(right, np.int64)))
        dtype = next(operand.dtype for operand in (left, right) if isinstance(operand, Value))
        return self.tracer.graph_node(op, [left, right], {}, (), dtype)

    # ---- evaluating while tracing -----------------------------------------------------------

    def evaluate(self, value: Value) -> np.ndarray:
        """The array `value` holds in the call being traced (see the module docstring)."""
        data = self._value(value)._payload
        return data if data.__class__ is np.ndarray else data.to_host()

    def _value(self, value: Value) -> Tensor:
        found = self._memo.get(id(value))
        if found is not None:
            return found
        stack = [value]
        while stack:  # the values it depends on, each before its readers
            current = stack[-1]
            if id(current) in self._memo:
                stack.pop()
                continue
            pending = [] if current.producer is None else [
                operand for operand in current.producer.inputs
                if isinstance(operand, Value) and id(operand) not in self._memo]
            if pending:
                stack.extend(pending)
                continue
            stack.pop()
            self._memo[id(current)] = self._compute(current)
        return self._memo[id(value)]

    def _compute(self, value: Value) -> Tensor:
        node = value.producer
        if node is None:
            return Tensor._make(self._input_array(value), value.dtype)
        hints = self.env.size_hints()
        operands = tuple(self._memo[id(operand)] if isinstance(operand, Value) else
                         (substitute(operand, hints) if hints else operand)
                         for operand in node.inputs)
        attrs = substitute(node.attrs, hints) if hints else node.attrs
        return run_eager(node.op, operands, attrs)

    def _input_array(self, value: Value):
        if self._inputs is None:
            self._inputs = {}
        entry = self._inputs.get(id(value))
        if entry is None:
            self._inputs = {id(item.value): item for item in self.tracer.graph.inputs}
            entry = self._inputs[id(value)]
        tracer = self.tracer
        if entry.kind == "arg":
            return tracer.real_input(entry)
        if entry.kind == "captured":
            return entry.tensor._payload
        if entry.kind == "scalar":
            return entry.tensor.read(tracer.call_args)
        if entry.kind == "random":
            return self._draw(entry)
        graph_break(f"a decision on a value computed from the {entry.kind} input "
                    f"{entry.name}", needs_data=False)
        return None

    def _draw(self, entry) -> np.ndarray:
        """The draws of every random input up to `entry`, in the order the function drew them,
        from the generators' state before the call; the generators are left where they
        were, and the run of this call draws the same numbers."""
        randoms = [item for item in self.tracer.graph.inputs if item.kind == "random"]
        for item in randoms:
            if id(item.value) in self._memo:
                continue
            draw = item.tensor
            if contains_symbolic(draw.shape):  # drawn at the traced call's sizes
                draw = copy.copy(draw)
                draw.shape = substitute(draw.shape, self.env.size_hints())
            generator = draw.generator
            found = self._draws.get(id(generator))
            if found is None:
                start = generators.position(generator)
                found = self._draws[id(generator)] = [generator, start, start]
            generators.set_position(generator, found[2])
            try:
                array = draw.draw()
                found[2] = generators.position(generator)
            finally:
                generators.set_position(generator, found[1])
            self._memo[id(item.value)] = Tensor._make(array, item.value.dtype)
            if item is entry:
                return array
        return self._memo[id(entry.value)]._payload


def _reshape_op():
    from ..ops.layout import RESHAPE

    return RESHAPE


def _format_symbolic(value, spec: str) -> str:
    """How a symbolic scalar formats while tracing (tensor/symbolic.py's FORMATTER): a token
    filled in with each run's value where the text only reaches places that take each run's
    text (source_uses.py), else the text of this call's value, which the trace then
    specializes on (checked on every run)."""
    tracer = state.tracer
    if tracer is not None and tracer.prints is not None and reaches_sinks():
        return tracer.format_symbolic(value, spec)
    return value.specialize_text(spec)


def reaches_sinks() -> bool:
    """Whether the value being formatted in the user's frame reaches only places that take
    each run's text (source_uses.py)."""
    frame = user_frame()
    return frame is not None and formatted_reaches_sinks(frame)


def _format_for_print(value, spec: str) -> str:
    """A symbolic scalar given to print() itself: a token, filled in by each run."""
    tracer = state.tracer
    if tracer is not None and tracer.prints is not None:
        return tracer.format_symbolic(value, spec)
    return value.specialize_text(spec)


FORMATTER.append(_format_symbolic)
FORMATTER.append(_format_for_print)


# The math module's functions a symbolic scalar passes through (`math.exp(loss.item())`):
# while a trace runs, they are wrapped to stay symbolic on the tracing thread.
_MATH_CALLS = ("exp", "expm1", "log", "log1p", "log2", "log10", "sqrt", "sin", "cos", "tan",
               "asin", "acos", "atan", "sinh", "cosh", "tanh", "fabs", "erf", "erfc", "atan2",
               "pow", "hypot", "copysign", "fmod")
_MATH_PREDICATES = ("isfinite", "isnan", "isinf")
_INSTALLED: list = []  # the SymbolicMath instances installed, outermost first


class SymbolicMath:
    """Installed around a trace: math functions of symbolic scalars stay symbolic (their value
    computed by Python on each run, or by graph ops where it reaches a tensor op), and
    `math.isfinite(x)` and its kin are decisions, checked on each run. A math function met
    another way (`from math import exp`) needs a real float: the value specializes."""

    def __init__(self):
        self._thread = threading.get_ident()
        self._originals: dict = {}

    def __enter__(self):
        for name in (*_MATH_CALLS, *_MATH_PREDICATES):
            original = self._originals[name] = getattr(math, name)
            setattr(math, name, self._wrap(name, original))
        _INSTALLED.append(self)
        return self

    def _wrap(self, name: str, original):
        thread = self._thread

        def wrapped(*arguments):
            if threading.get_ident() != thread or not any(is_runtime(argument)
                                                          for argument in arguments):
                return original(*arguments)
            if name in _MATH_PREDICATES:
                return predicate(name, arguments[0])
            return call_symbolic(name, *arguments)

        wrapped.__name__ = name
        wrapped.__wrapped__ = original
        return wrapped

    def __exit__(self, *exc) -> None:
        for name, original in self._originals.items():
            setattr(math, name, original)
        if self in _INSTALLED:
            _INSTALLED.remove(self)


@contextlib.contextmanager
def real_math():
    """math's own functions for the duration, where a trace has wrapped them (SymbolicMath).
    numba, compiling a kernel while a trace runs (the first launch of an eager CUDA op the
    traced code calls), finds `math.fabs` and its kin by identity in its own lowerings and
    cannot lower a wrapper ("No definition for lowering wrapped(float64,)")."""
    if not _INSTALLED:
        yield
        return
    wrapped = {name: getattr(math, name) for name in _INSTALLED[0]._originals}
    for name, original in _INSTALLED[0]._originals.items():
        setattr(math, name, original)
    try:
        yield
    finally:
        for name, function in wrapped.items():
            setattr(math, name, function)
