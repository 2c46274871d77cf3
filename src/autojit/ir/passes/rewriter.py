"""What every graph pass shares: the GraphRewriter that builds a pass's new graph, the constants
of a graph (fill outputs), and the structural key of literals and attributes.

Each pass is a pure function `Graph -> Graph`: it builds a new graph and never mutates its
argument. Inputs and outputs keep their names, kinds, order, targets and captured tensors;
values the pass copies keep their ids, values it creates get fresh ones. `GraphRewriter` copies
the inputs, then the pass walks the old nodes in order and, for each, copies it (possibly with
new operands or attributes), emits something else with the same output type, or makes its
output an alias of a value already in the new graph.

A constant here is the output of a `fill` node: its value is the `value` attribute (cast to
the fill's dtype); its operand only supplies the shape and dtype (the "anchor"). Captured
inputs are not constants: the graph reads their tensors' current data each time it runs.
"""

from __future__ import annotations

import numbers
import struct

import numpy as np

from ...ops import elementwise as ew
from ...ops.registry import infer
from ...tensor import dtypes
from ...tensor.tensor import Tensor
from ..graph import Graph, Input, Node, Output, Value


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
        # Copied values keep their ids, and so their phase; see emit for new ones.
        self.graph.backward_ids = set(source.backward_ids)
        self.graph.recompute_ids = set(source.recompute_ids)
        self.graph.checkpoint_ids = set(source.checkpoint_ids)
        self._new: dict = {}  # id(old Value) -> the new Value (or alias) standing for it
        self._inputs: dict = {}  # id(old Input) -> new Input
        self._rewriting: Node | None = None  # the old node whose operands were last asked for
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
        """The new operands of `node`; every pass asks for them first when it rewrites a
        node, so `emit` knows which node what it emits stands for."""
        self._rewriting = node
        new = self._new  # every pass copies every node: operand() inlined
        return [new[id(operand)] if isinstance(operand, Value) else operand
                for operand in node.inputs]

    def copy(self, node: Node, inputs: list | None = None, attrs: dict | None = None,
             op=None) -> Value:
        """Emit `node` (or `op` with new inputs/attrs and the same output type), keeping the
        output's id; later uses of the old output read the new one."""
        old = node.outputs[0]
        new_node = Node(node.op if op is None else op,
                        self.operands(node) if inputs is None else list(inputs),
                        dict(node.attrs if attrs is None else attrs), [])
        value = Value(old.id, old.shape, old.dtype, new_node)
        new_node.outputs.append(value)
        self.graph.nodes.append(new_node)
        self._new[id(old)] = value
        return value

    def emit(self, op, inputs: list, attrs: dict, shape: tuple, dtype: dtypes.DType) -> Value:
        """Emit a node that has no counterpart in the old graph (a fresh id); it belongs to
        the backward pass when an operand does (a rewritten weight gradient), and is a
        checkpoint's recomputation when an operand is or the node it rewrites was (so that CSE
        keeps it apart from the forward's)."""
        value = self.graph.add_node(op, inputs, attrs, shape, dtype)
        backward = self.graph.backward_ids
        if any(isinstance(operand, Value) and operand.id in backward for operand in inputs):
            backward.add(value.id)
        recomputed = self.graph.recompute_ids
        rewriting = self._rewriting
        if (rewriting is not None and rewriting.output.id in recomputed) or any(
                isinstance(operand, Value) and operand.id in recomputed for operand in inputs):
            recomputed.add(value.id)
        return value

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


# ---- structural keys ---------------------------------------------------------------------------

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


def producer_of(value, op) -> Node | None:
    """The node of `op` that made `value`, or None."""
    if isinstance(value, Value) and value.producer is not None and value.producer.op is op:
        return value.producer
    return None


def emit_inferred(rewriter: GraphRewriter, op, inputs: list, attrs: dict) -> Value:
    """A new node of `op`, its shape and dtype given by the op's rules."""
    shape, dtype = infer(op, tuple(symbolic(operand) for operand in inputs), attrs)
    return rewriter.emit(op, inputs, attrs, shape, dtype)


def sum_terms(root: Node, uses: dict) -> list:
    """The terms of the sum `root` (an add) ends: operands reached through adds of the root's
    shape and dtype that nothing else reads, in the order they are added."""
    out = root.output
    terms: list = []

    def walk(value) -> None:
        add = producer_of(value, ew.ADD)
        if add is not None and add is not root and (uses.get(id(value), 0) != 1 or
                                                    value.shape != out.shape or
                                                    value.dtype is not out.dtype):
            add = None
        if add is None:
            terms.append(value)
            return
        for operand in add.inputs:
            walk(operand)

    for operand in root.inputs:
        walk(operand)
    return terms
