"""Product simplification: the pass that gives matrix products the layout and size their
consumers want. It runs in the pass pipeline (pipeline.py) after algebraic simplification.

Two rewrites of 2-D `matmul` nodes, both common in adjoint graphs:

- `permute(a @ b, (1, 0))` -> `b.T @ a.T` when the product has no other use. Autodiff makes
  these for weight gradients (`(h.T @ g).T`); a kernel adding such a gradient to another one
  read the product's result across its rows: 92 us for a 256x256 add in the gradient-penalty
  step, against ~15 us for two row-major operands. BLAS reads the transposed operands through
  their strides, so the product costs the same.
- A product with an operand broadcast along the inner dimension (the adjoint of `sum()` or
  `mean()` is an expanded scalar, and its weight gradient `h.T @ expand(g)` a product) is a
  sum times the broadcast value: `expand(s, (m, k)) @ b` with s of shape (m, 1) or (1, 1) is
  `s * b.sum(0, keepdim=True)`, expanded to (m, n) where s has one row; the same on the right.
  A product with an operand broadcast along its outer dimension is one row (or column) of
  products, expanded. The reductions then fuse into the kernels that make their operands,
  where BLAS took 24-28 us for a 1x128 by 128x256 product through a stride-0 view.

Unlike algebraic simplification (simplify.py) these are not bitwise: a sum taken before a
multiplication by a broadcast factor, or a product of transposes, rounds as another order of
the same sum would, which is the freedom BLAS already takes inside every product.
"""

from __future__ import annotations

from ...ops import elementwise as ew
from ...ops import layout, linalg, reduction
from ...ops.registry import infer
from ..graph import Graph, Node, Value
from .rewriter import GraphRewriter, symbolic

TRANSPOSE = {"dims": (1, 0)}


def _producer(value, op):
    """The node of `op` that made `value`, or None."""
    if isinstance(value, Value) and value.producer is not None and value.producer.op is op:
        return value.producer
    return None


def _emit(rewriter: GraphRewriter, op, inputs: list, attrs: dict) -> Value:
    shape, dtype = infer(op, tuple(symbolic(operand) for operand in inputs), attrs)
    return rewriter.emit(op, inputs, attrs, shape, dtype)


def _transpose(rewriter: GraphRewriter, value: Value) -> Value:
    """value.T (2-D), reading through a permute rather than stacking a second one."""
    permute = _producer(value, layout.PERMUTE)
    if permute is not None and tuple(permute.attrs["dims"]) == (1, 0):
        return permute.inputs[0]
    return _emit(rewriter, layout.PERMUTE, [value], dict(TRANSPOSE))


def _as_2d(rewriter: GraphRewriter, value: Value) -> Value:
    if len(value.shape) == 2:
        return value
    shape = (1,) * (2 - len(value.shape)) + tuple(value.shape)
    return _emit(rewriter, layout.RESHAPE, [value], {"shape": shape})


def _broadcast(value) -> tuple | None:
    """For a 2-D operand made by broadcasting (an expand, or a transposed expand): (the
    expand's input, whether it is read transposed, its shape as 2-D); else None."""
    if not isinstance(value, Value):
        return None
    transposed = False
    permute = _producer(value, layout.PERMUTE)
    if permute is not None and tuple(permute.attrs["dims"]) == (1, 0):
        value, transposed = permute.inputs[0], True
    expand = _producer(value, layout.EXPAND)
    if expand is None or not isinstance(expand.inputs[0], Value) or \
            len(expand.inputs[0].shape) > 2:
        return None
    source = expand.inputs[0]
    shape = (1,) * (2 - len(source.shape)) + tuple(source.shape)
    return source, transposed, shape[::-1] if transposed else shape


def _source(rewriter: GraphRewriter, broadcast: tuple) -> Value:
    """The broadcast operand's source as the 2-D value that broadcasts to it."""
    source, transposed, _ = broadcast
    source = _as_2d(rewriter, source)
    return _transpose(rewriter, source) if transposed else source


def _sum(rewriter: GraphRewriter, value: Value, axis: int) -> Value:
    """value.sum(axis, keepdim=True) for a 2-D value; a transposed value is summed in its
    source's order and the small result transposed, so the sum fuses with the kernel that
    makes the source."""
    permute = _producer(value, layout.PERMUTE)
    if permute is not None and tuple(permute.attrs["dims"]) == (1, 0):
        total = _emit(rewriter, reduction.SUM, [permute.inputs[0]],
                      {"dim": (1 - axis,), "keepdim": True})
        return _transpose(rewriter, total)
    return _emit(rewriter, reduction.SUM, [value], {"dim": (axis,), "keepdim": True})


def _broadcast_product(rewriter: GraphRewriter, node: Node, inputs: list) -> Value | None:
    """The product of a broadcast operand without BLAS (see the module docstring), or None.
    Floating dtypes only: an integer sum widens to int64."""
    first, second = inputs
    out = node.output
    if not out.dtype.is_floating_point or first.dtype is not out.dtype or \
            second.dtype is not out.dtype:
        return None
    (rows, inner), columns = first.shape, second.shape[1]
    left, right = _broadcast(first), _broadcast(second)
    # A source broadcast along both dims is one of the first kind, unless the inner dim has
    # no entries (an empty batch): the one row or column kept must then span the inner dim.
    if left is not None and left[2][1] == 1 and inner > 1:
        result = _emit(rewriter, ew.MUL, [_source(rewriter, left), _sum(rewriter, second, 0)], {})
    elif left is not None and left[2] == (1, inner) and rows > 1:
        result = _emit(rewriter, linalg.MATMUL, [_source(rewriter, left), second], {})
    elif right is not None and right[2][0] == 1 and inner > 1:
        result = _emit(rewriter, ew.MUL, [_sum(rewriter, first, 1), _source(rewriter, right)], {})
    elif right is not None and right[2] == (inner, 1) and columns > 1:
        result = _emit(rewriter, linalg.MATMUL, [first, _source(rewriter, right)], {})
    else:
        return None
    if result.shape != out.shape:
        result = _emit(rewriter, layout.EXPAND, [result], {"shape": out.shape})
    return result


def _transposed_product(rewriter: GraphRewriter, node: Node, inputs: list, uses: dict):
    """`permute(a @ b, (1, 0))` with the product used nowhere else -> `b.T @ a.T`."""
    product = _producer(node.inputs[0], linalg.MATMUL)
    if product is None or tuple(node.attrs["dims"]) != (1, 0) or \
            uses.get(id(product.output), 0) != 1 or \
            any(len(x.shape) != 2 for x in product.inputs):
        return None
    first, second = rewriter.operands(product)
    return _emit(rewriter, linalg.MATMUL, [_transpose(rewriter, second),
                                           _transpose(rewriter, first)], {})


def _uses(graph: Graph) -> dict:
    """id(value) -> how many node operands and graph outputs read it."""
    uses: dict = {}
    for node in graph.nodes:
        for operand in node.inputs:
            if isinstance(operand, Value):
                uses[id(operand)] = uses.get(id(operand), 0) + 1
    for entry in graph.outputs:
        uses[id(entry.value)] = uses.get(id(entry.value), 0) + 1
    return uses


def product_simplification(graph: Graph) -> Graph:
    """Transposed products computed as products of transposes, and products of broadcast
    operands as sums (see the module docstring). Values keep their shapes and dtypes; nodes
    made dead are left to dead-code elimination."""
    rewriter = GraphRewriter(graph)
    uses = _uses(graph)
    for node in graph.nodes:
        inputs = rewriter.operands(node)
        result = None
        if node.op is linalg.MATMUL and all(isinstance(x, Value) and len(x.shape) == 2
                                            for x in inputs):
            result = _broadcast_product(rewriter, node, inputs)
        elif node.op is layout.PERMUTE:
            result = _transposed_product(rewriter, node, inputs, uses)
        if result is not None:
            rewriter.alias(node, result)
        else:
            rewriter.copy(node, inputs)
    return rewriter.finish()
