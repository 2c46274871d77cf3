"""Graph passes: dead-code elimination, common-subexpression elimination, constant folding.

Each pass is a pure function `Graph -> Graph`: it builds a new graph and never mutates its
argument. Inputs and outputs keep their names, kinds, order, targets and captured tensors;
values the pass copies keep their ids, values it creates get fresh ones. Algebraic
simplification lives in simplify.py; pipeline.py runs the passes in order, verifies and times
each one, and repeats them to a fixed point. The passes sit between tracing (trace.py) and
fusion (codegen/schedule.py).

`GraphRewriter` is the machinery every pass shares: it copies the inputs, then the pass walks
the old nodes in order and, for each, copies it (possibly with new operands or attributes),
emits something else with the same output type, or makes its output an alias of a value
already in the new graph.

A constant here is the output of a `fill` node: its value is the `value` attribute (cast to
the fill's dtype); its operand only supplies the shape and dtype (the "anchor"). Captured
inputs are not constants: the graph reads their tensors' current data each time it runs.
"""

from __future__ import annotations

import math
import numbers
import struct

import numpy as np

from ..ops import elementwise as ew
from ..ops.registry import Elementwise, _run_eager
from ..tensor import dtypes
from ..tensor.tensor import Tensor
from .graph import Graph, Input, Node, Output, Value

# Constant folding evaluates an op on real arrays only when every operand and the result have
# at most this many elements; larger uniform results of exactly rounded elementwise ops
# (registry.Elementwise.exact) are evaluated on one element instead.
FOLD_LIMIT = 1024


# ---- rewriting --------------------------------------------------------------------------------

def next_free_id(graph: Graph) -> int:
    """An id above every value of `graph` (hand-built graphs may not keep `_next_id` right)."""
    highest = max([entry.value.id for entry in graph.inputs] +
                  [value.id for node in graph.nodes for value in node.outputs], default=-1)
    return max(highest + 1, graph._next_id)


class GraphRewriter:
    """Builds a new graph from `source`: inputs are copied at once, nodes as the pass says."""

    def __init__(self, source: Graph):
        self.source = source
        self.graph = Graph()
        self.graph._next_id = next_free_id(source)
        self._new: dict = {}  # id(old Value) -> the new Value (or alias) standing for it
        self._inputs: dict = {}  # id(old Input) -> new Input
        for entry in source.inputs:
            old = entry.value
            value = Value(old.id, old.shape, old.dtype)
            copied = Input(value, entry.kind, entry.name, entry.tensor)
            self.graph.inputs.append(copied)
            self._new[id(old)] = value
            self._inputs[id(entry)] = copied

    def operand(self, operand):
        """The new graph's counterpart of an old operand (a Value or a literal)."""
        if isinstance(operand, Value):
            return self._new[id(operand)]
        return operand

    def operands(self, node: Node) -> list:
        return [self.operand(operand) for operand in node.inputs]

    def copy(self, node: Node, inputs: list | None = None, attrs: dict | None = None,
             op=None) -> Value:
        """Emit `node` (or `op` with new inputs/attrs and the same output type), keeping the
        output's id; later uses of the old output read the new one."""
        old = node.output
        new_node = Node(node.op if op is None else op,
                        self.operands(node) if inputs is None else list(inputs),
                        dict(node.attrs if attrs is None else attrs), [])
        value = Value(old.id, old.shape, old.dtype, new_node)
        new_node.outputs.append(value)
        self.graph.nodes.append(new_node)
        self._new[id(old)] = value
        return value

    def emit(self, op, inputs: list, attrs: dict, shape: tuple, dtype: dtypes.DType) -> Value:
        """Emit a node that has no counterpart in the old graph (a fresh id)."""
        return self.graph.add_node(op, inputs, attrs, shape, dtype)

    def alias(self, node: Node, value: Value) -> None:
        """Drop `node`: later uses of its output read `value` (same shape and dtype)."""
        old = node.output
        if value.shape != old.shape or value.dtype is not old.dtype:
            raise AssertionError(f"a pass replaced %{old.id}:{old.type_text} by "
                                 f"%{value.id}:{value.type_text}")
        self._new[id(old)] = value

    def finish(self) -> Graph:
        for entry in self.source.outputs:
            target = entry.target
            if target is not None:
                target = self._inputs.get(id(target), target)
            self.graph.outputs.append(Output(self._new[id(entry.value)], entry.name, entry.kind,
                                             target))
        return self.graph


def symbolic(operand):
    """A Value as a symbolic Tensor (for the shape and dtype rules); literals pass through."""
    return Tensor._symbolic(operand) if isinstance(operand, Value) else operand


# ---- constants --------------------------------------------------------------------------------

def is_constant(operand) -> bool:
    """A value made by `fill` (its elements are known without running the graph)."""
    return isinstance(operand, Value) and operand.producer is not None and \
        operand.producer.op is ew.FILL


def constant_scalar(operand):
    """The element of a constant or a literal as a 0-d array of its own dtype; else None.

    Literals are returned as the Python scalars they are (NumPy casts them to the other
    operand's dtype when the op runs)."""
    if isinstance(operand, Value):
        if not is_constant(operand):
            return None
        return np.full((), operand.producer.attrs["value"], operand.dtype.numpy)
    if isinstance(operand, numbers.Number):
        return operand
    return None


def fill_anchor(value: Value) -> Value:
    """The value whose shape and dtype a constant copies, through chains of fills."""
    while is_constant(value):
        value = value.producer.inputs[0]
    return value


# ---- dead-code elimination --------------------------------------------------------------------

def dead_code_elimination(graph: Graph) -> Graph:
    """Drop the nodes no graph output depends on (the graph has no side effects to keep)."""
    live = {id(entry.value) for entry in graph.outputs}
    kept = []
    for node in reversed(graph.nodes):
        if any(id(value) in live for value in node.outputs):
            kept.append(node)
            live.update(id(operand) for operand in node.inputs if isinstance(operand, Value))
    rewriter = GraphRewriter(graph)
    for node in reversed(kept):
        rewriter.copy(node)
    return rewriter.finish()


# ---- common-subexpression elimination ---------------------------------------------------------

class _Unique:
    """Stands for an attribute that cannot be compared structurally: equal to nothing else."""

    __slots__ = ()


def structural_key(item):
    """A hashable key equal for two attributes or literals exactly when they are the same.

    Types are part of the key (True, 1 and 1.0 differ: they promote differently); floats are
    compared by their bits, so -0.0 and 0.0 differ and a NaN matches only the same NaN.
    Values are compared by identity. Anything else unknown is never equal to anything.
    """
    if item is None or isinstance(item, (bool, str)):
        return (type(item).__name__, item)
    if isinstance(item, Value):
        return ("value", id(item))
    if isinstance(item, int):
        return (type(item).__name__, item)
    if isinstance(item, float):
        return (type(item).__name__, struct.pack("<d", item))
    if isinstance(item, dtypes.DType):
        return ("dtype", item.name)
    if isinstance(item, (tuple, list)):
        return (type(item).__name__, tuple(structural_key(element) for element in item))
    if isinstance(item, dict):
        return ("dict", tuple(sorted((repr(name), structural_key(element))
                                     for name, element in item.items())))
    if isinstance(item, (np.generic, np.ndarray)):
        array = np.ascontiguousarray(item)
        return ("array", array.dtype.str, array.shape, array.tobytes())
    return ("unique", _Unique())


def common_subexpression_elimination(graph: Graph) -> Graph:
    """Merge nodes applying the same op to the same operands with the same attributes.

    Operands are compared after earlier merges (so chains of duplicates collapse in one walk),
    values by identity and literals and attributes structurally (`structural_key`). Every
    primitive is deterministic (random numbers enter a graph as inputs drawn per call).
    """
    rewriter = GraphRewriter(graph)
    seen: dict = {}
    for node in graph.nodes:
        inputs = rewriter.operands(node)
        output = node.output
        key = (node.op, structural_key(inputs), structural_key(node.attrs), output.shape,
               output.dtype.name)
        found = seen.get(key)
        if found is not None:
            rewriter.alias(node, found)
        else:
            seen[key] = rewriter.copy(node, inputs)
    return rewriter.finish()


# ---- constant folding -------------------------------------------------------------------------

def _numel(shape) -> int:
    return math.prod(shape)


def _evaluate(node: Node, inputs: list):
    """The folded result of `node` over constant operands as a 0-d array, or None when it
    cannot be folded (too large, not uniform, or the op fails and must fail at run time)."""
    op, output = node.op, node.output
    small = _numel(output.shape) <= FOLD_LIMIT and all(
        _numel(operand.shape) <= FOLD_LIMIT for operand in inputs if isinstance(operand, Value))
    if not small and not (isinstance(op.lowering, Elementwise) and op.lowering.exact):
        return None
    operands = []
    for operand in inputs:
        if isinstance(operand, Value):
            # One element stands for all of a uniform operand; keeping the number of dims
            # keeps dtype promotion (which treats 0-d tensors apart) the same.
            shape = operand.shape if small else (1,) * len(operand.shape)
            data = np.full(shape, constant_scalar(operand)[()], operand.dtype.numpy)
            operands.append(Tensor._make(data, operand.dtype))
        else:
            operands.append(operand)
    try:
        result = _run_eager(op, tuple(operands), node.attrs)._data
    except Exception:  # an op that fails on these operands is left to fail when the graph runs
        return None
    if result.dtype != output.dtype.numpy or (small and result.shape != output.shape):
        return None
    flat = np.ascontiguousarray(result).reshape(-1)
    if flat.size == 0:
        return np.zeros((), result.dtype)
    element = flat[:1]
    if not np.all(flat.view(np.uint8).reshape(flat.size, -1) == element.view(np.uint8)):
        return None
    return element.reshape(())


def constant_folding(graph: Graph) -> Graph:
    """Evaluate nodes whose value operands are all constants; a uniform result becomes a fill.

    A node is folded when every Value operand is a `fill` output (literals may appear too),
    its op is deterministic and the result has all elements bitwise equal: it becomes
    `fill(anchor, value)`, with an anchor of the result's shape and dtype taken from the
    operands' anchors or the graph inputs (a non-uniform result, or one with no anchor, is
    left alone, since the IR has no literal-tensor node). Every fill is re-anchored on a graph
    input of its type (not a cotangent) when there is one, else on the first non-constant
    value of its chain of fills, so whatever computed its old anchor can become dead.
    Evaluation goes through the op's NumPy impl (ops.registry._run_eager), as the interpreter
    does, so folding is exact.
    """
    rewriter = GraphRewriter(graph)
    anchors: dict = {}  # (shape, dtype name) -> a value usable as a fill's anchor
    for entry in rewriter.graph.inputs:
        # Not a cotangent: a forward constant anchored there would depend on the backward's
        # input, and partition.py could not put it in the forward graph.
        if entry.kind != "cotangent":
            anchors.setdefault((entry.value.shape, entry.value.dtype.name), entry.value)
    for node in graph.nodes:
        inputs = rewriter.operands(node)
        if node.op is ew.FILL:
            # Any value of the right type will do; a graph input costs nothing to keep.
            output = node.output
            anchor = anchors.get((output.shape, output.dtype.name)) or fill_anchor(inputs[0])
            rewriter.copy(node, [anchor])
            continue
        values = [operand for operand in inputs if isinstance(operand, Value)]
        if not values or not all(is_constant(operand) for operand in values):
            rewriter.copy(node, inputs)
            continue
        output = node.output
        candidates = [fill_anchor(operand) for operand in values]
        anchor = next((value for value in candidates if value.shape == output.shape and
                       value.dtype is output.dtype), None)
        if anchor is None:
            anchor = anchors.get((output.shape, output.dtype.name))
        element = _evaluate(node, inputs) if anchor is not None else None
        if element is None:
            rewriter.copy(node, inputs)
            continue
        scalar = element.item()
        if np.full((), scalar, element.dtype).tobytes() != element.tobytes():
            rewriter.copy(node, inputs)  # the scalar does not round-trip (a NaN payload)
            continue
        rewriter.copy(node, [anchor], {"value": scalar}, op=ew.FILL)
    return rewriter.finish()
