"""Constant folding: nodes whose operands are all constants are evaluated once, through the
ops' NumPy impls, and a uniform result becomes a fill (a pass of pipeline.py). A view of a
constant (a reshape, a broadcast, a slice) is one too, however large: the ones an implicit
gradient seeds a backward with, broadcast by a sum's VJP to the summed tensor's shape, become a
fill the simplifier then takes out of the arithmetic (`g * 1` is g)."""

from __future__ import annotations

import math

import numpy as np

from ...ops import elementwise as ew
from ...ops.registry import Elementwise, Layout, communicates, run_eager
from ...tensor import dtypes
from ...tensor.tensor import Tensor
from ..graph import Graph, Node, Value
from .rewriter import GraphRewriter, constant_scalar, fill_anchor, is_constant

# Constant folding evaluates an op on real arrays only when every operand and the result have
# at most this many elements; larger uniform results of exactly rounded elementwise ops
# (registry.Elementwise.exact) are evaluated on one element instead.
FOLD_LIMIT = 1024


def _numel(shape) -> int:
    return math.prod(shape)


def _complex(output: Value, inputs: list) -> bool:
    """Whether a complex value is involved: NumPy's complex loops (a product's two roundings
    per part, fused or not) are not known to give one element alone what they give it within
    an array, so a large complex result is not evaluated on one element."""
    return output.dtype.category == dtypes.COMPLEX or any(
        isinstance(operand, Value) and operand.dtype.category == dtypes.COMPLEX
        for operand in inputs)


def _evaluate(node: Node, inputs: list):
    """The folded result of `node` over constant operands as a 0-d array, or None when it
    cannot be folded (too large, not uniform, or the op fails and must fail at run time)."""
    op, output = node.op, node.output
    small = _numel(output.shape) <= FOLD_LIMIT and all(
        _numel(operand.shape) <= FOLD_LIMIT for operand in inputs if isinstance(operand, Value))
    if not small and (not (isinstance(op.lowering, Elementwise) and op.lowering.exact)
                      or _complex(output, inputs)):
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
        result = run_eager(op, tuple(operands), node.attrs)._payload
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


def _moves_elements(op) -> bool:
    """A layout that reads its source through strides (a view: reshape, expand, permute,
    slice, diagonal): every element of its result is an element of its source."""
    return isinstance(op.lowering, Layout) and op.lowering.fold is not None


def constant_folding(graph: Graph) -> Graph:
    """Evaluate nodes whose value operands are all constants; a uniform result becomes a fill.

    A node is folded when every Value operand is a `fill` output (literals may appear too),
    its op is deterministic and does not communicate (a collective), and the result has all
    elements bitwise equal: it becomes `fill(anchor, value)`, with an anchor of the result's
    shape and dtype taken from the operands' anchors or the graph inputs (a non-uniform
    result, or one with no anchor, is left alone, since the IR has no literal-tensor node).
    Every fill is re-anchored on a graph input of its type (not a cotangent) when there is
    one, else on the first non-constant value of its chain of fills, so whatever computed its
    old anchor can become dead.
    Evaluation goes through the op's NumPy impl (ops.registry.run_eager), as the interpreter
    does, so folding is exact. A view of a constant (`_moves_elements`) is the constant's
    element without evaluating anything, folded when a graph input of its type can anchor it.
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
        # A collective is run by every process when the graph runs, never here: the others
        # would wait for this process's part of it (docs/notes/distributed.md).
        if not values or communicates(node.op) or \
                not all(is_constant(operand) for operand in values):
            rewriter.copy(node, inputs)
            continue
        output = node.output
        candidates = [fill_anchor(operand) for operand in values]
        if _moves_elements(node.op) and len(values) == 1 and _numel(output.shape):
            # Uniform whatever its size; folded only onto an anchor of its type, since a fill
            # anchored on a view of the constant would be the same view again.
            anchor = anchors.get((output.shape, output.dtype.name))
            if anchor is None:
                rewriter.copy(node, inputs)
            else:
                rewriter.copy(node, [anchor], {"value": constant_scalar(values[0]).item()},
                              op=ew.FILL)
            continue
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
