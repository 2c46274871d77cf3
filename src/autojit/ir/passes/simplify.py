"""Algebraic simplification: the pass that removes arithmetic and layout no-ops from a graph.

It runs in the pass pipeline (pipeline.py) with the other passes of this package, on graphs
from the tracer, before fusion. Like every pass it is a pure `Graph -> Graph` function.
"""

from __future__ import annotations

import math

import numpy as np

from ...ops import elementwise as ew
from ...ops import layout, linalg, reduction
from ...ops.registry import Elementwise, broadcast_shapes, infer
from ...tensor import dtypes
from ..graph import Graph, Node, Value
from .rewriter import GraphRewriter, constant_scalar, is_constant, symbolic

REDUCTIONS_WITHOUT_AXES = (reduction.SUM, reduction.PROD, reduction.AMAX, reduction.AMIN,
                           reduction.ANY, reduction.ALL)


# ---- what an operand is ------------------------------------------------------------------------

def _same_type(value, like: Value) -> bool:
    return isinstance(value, Value) and value.shape == like.shape and value.dtype is like.dtype


def _element(operand, dtype):
    """The operand's element in the compute dtype as a Python scalar, if it is a constant or a
    literal; else None. Literals are taken as written (not rounded), which errs on the side of
    not simplifying."""
    constant = constant_scalar(operand)
    if constant is None:
        return None
    if isinstance(constant, np.ndarray):
        return constant.astype(dtype.numpy)[()].item()
    if dtype.is_floating_point and isinstance(constant, (bool, int)):
        return float(constant)
    return constant


def _is_one(operand, dtype) -> bool:
    element = _element(operand, dtype)
    return element is not None and element == 1


def _is_zero(operand, dtype, negative: bool) -> bool:
    """Zero; for floating dtypes, with the sign bit set (`negative`) or clear."""
    element = _element(operand, dtype)
    if element is None or element != 0:
        return False
    if dtype.is_floating_point:
        return (math.copysign(1.0, element) < 0) == negative
    return True


def _producer_op(value):
    return value.producer.op if isinstance(value, Value) and value.producer is not None else None


# ---- the rules ----------------------------------------------------------------------------------
# Each takes the node's operands in the new graph, its attributes, its output and the op's
# compute dtype; it returns a Value to use instead of the node, a (op, operands, attrs) to emit
# instead (same output type), or None.

def _identity(inputs, out, positions, test):
    for position in positions:
        other = inputs[1 - position]
        if test(inputs[position]) and _same_type(other, out):
            return other
    return None


def _mul(inputs, attrs, out, compute):
    if compute.category == dtypes.COMPLEX:
        return None  # (a + bi)(1 + 0i) has a - 0b as real part: NaN for an infinite b
    return _identity(inputs, out, (1, 0), lambda operand: _is_one(operand, compute))


def _div(inputs, attrs, out, compute):
    if compute.category == dtypes.COMPLEX:
        return None  # a complex quotient is not the identity at infinities either
    return _identity(inputs, out, (1,), lambda operand: _is_one(operand, compute))


def _pow(inputs, attrs, out, compute):
    if compute.category in (dtypes.BOOL, dtypes.COMPLEX):
        return None
    found = _identity(inputs, out, (1,), lambda operand: _is_one(operand, compute))
    if found is None and compute.is_floating_point and _element(inputs[1], compute) == 0.5 \
            and _same_type(inputs[0], out):
        # NumPy's power (the reference) takes a scalar exponent of 0.5 as sqrt, as torch does:
        # -inf and -0.0 give nan and -0.0, where the C library's pow gives inf and 0.0.
        return ew.SQRT, [inputs[0]], {}
    if found is None and compute.is_floating_point and not isinstance(inputs[1], Value) and \
            _element(inputs[1], compute) == 2 and _same_type(inputs[0], out):
        # NumPy's power squares for a scalar exponent of 2 (x * x, bitwise), as torch's pow
        # does; a kernel's general pow (exp and log) would take ten times as long.
        return ew.MUL, [inputs[0], inputs[0]], {}
    if found is None and compute.is_floating_point and not isinstance(inputs[1], Value) and \
            _element(inputs[1], compute) == 0 and _same_type(inputs[0], out):
        # x ** 0 is 1 for every x, NaN and infinities included (C's pow, NumPy's, torch's):
        # the second derivative of x ** 2 is 2 * x ** 0.
        return ew.FILL, [inputs[0]], {"value": 1.0}
    return found


def _add(inputs, attrs, out, compute):
    if compute.category == dtypes.COMPLEX:
        return None  # the complex zero of a real literal has a +0.0 imaginary part
    return _identity(inputs, out, (1, 0), lambda operand: _is_zero(operand, compute, True))


def _sub(inputs, attrs, out, compute):
    if compute.category in (dtypes.BOOL, dtypes.COMPLEX):
        return None  # NumPy and torch refuse to subtract bools; complex zeros as in _add
    return _identity(inputs, out, (1,), lambda operand: _is_zero(operand, compute, False))


def _neg(inputs, attrs, out, compute):
    # Negating a bool tensor fails when the graph runs; that failure stays.
    if _producer_op(inputs[0]) is ew.NEG and out.dtype.category != dtypes.BOOL:
        inner = inputs[0].producer.inputs[0]
        return inner if _same_type(inner, out) else None
    return None


def _permute(inputs, attrs, out, compute):
    base, dims = inputs[0], tuple(attrs["dims"])
    if _producer_op(base) is layout.PERMUTE:
        inner = base.producer.attrs["dims"]
        base, dims = base.producer.inputs[0], tuple(inner[axis] for axis in dims)
    if dims == tuple(range(len(dims))):
        return base if _same_type(base, out) else None
    if base is not inputs[0]:
        return layout.PERMUTE, [base], {**attrs, "dims": dims}
    return None


def _collapse_chain(op):
    """reshape(reshape(x)) and expand(expand(x)): one step from x; none if x has the type."""
    def rule(inputs, attrs, out, compute):
        base = inputs[0]
        if _producer_op(base) is op:
            base = base.producer.inputs[0]
        if _same_type(base, out):
            return base
        if base is not inputs[0]:
            return op, [base], attrs
        return None

    return rule


def _expand(inputs, attrs, out, compute):
    """expand(expand(x)) and expand(reshape(x)) where the reshape only prepends size-1 dims
    (a 0-d seed made [1] by a sum's VJP): one expand of x."""
    collapsed = _collapse_chain(layout.EXPAND)(inputs, attrs, out, compute)
    if collapsed is not None:
        return collapsed
    source = _broadcast_source(inputs[0])
    if source is None or infer(layout.EXPAND, (symbolic(source),), attrs) != (out.shape,
                                                                              out.dtype):
        return None
    return layout.EXPAND, [source], attrs


def _cast(inputs, attrs, out, compute):
    return inputs[0] if _same_type(inputs[0], out) else None


def _reduce_nothing(op):
    def rule(inputs, attrs, out, compute):
        if tuple(attrs["dim"]) != () or not _same_type(inputs[0], out):
            return None
        if op is reduction.SUM and out.dtype.category >= dtypes.FLOATING:
            return None  # the sum starts from +0.0: -0.0 comes out as +0.0
        return inputs[0]

    return rule


RULES = {
    ew.MUL: _mul, ew.DIV: _div, ew.POW: _pow, ew.ADD: _add, ew.SUB: _sub, ew.NEG: _neg,
    layout.PERMUTE: _permute, layout.RESHAPE: _collapse_chain(layout.RESHAPE),
    layout.EXPAND: _expand, ew.CAST: _cast,
    **{op: _reduce_nothing(op) for op in REDUCTIONS_WITHOUT_AXES},
}


def _outer_product(rewriter: GraphRewriter, node: Node, inputs: list):
    """matmul over an inner extent of 1 (a [.., m, 1] by a [.., 1, n]: an outer product per
    batch) as the broadcast product it is, which fuses into a kernel where BLAS took 40 us for
    a 128x1 by 1x256 product. A float product adds +0.0, as the sum BLAS starts from zero
    does: -0.0 comes out +0.0. None where the shapes or dtypes would differ."""
    first, second = inputs
    out = node.output
    if not (isinstance(first, Value) and isinstance(second, Value)) or \
            first.shape[-1] != 1 or second.shape[-2] != 1 or \
            out.dtype.category == dtypes.COMPLEX:
        return None
    operands = (symbolic(first), symbolic(second))
    if infer(ew.MUL, operands, {}) != (out.shape, out.dtype):
        return None
    product = rewriter.emit(ew.MUL, [first, second], {}, out.shape, out.dtype)
    if out.dtype.is_floating_point:
        return ew.ADD, [product, 0.0], {}
    return product


def _small_power(rewriter: GraphRewriter, node: Node, inputs: list):
    """x ** 3 -> (x * x) * x and x ** -2 -> 1 / (x * x), for float32 and float64 x and a number
    exponent: what the eager impl computes (ops/elementwise/__init__.py, torch's scalar fast paths),
    bit for bit; None otherwise."""
    base, exponent = inputs
    out = node.output
    if out.dtype not in (dtypes.float32, dtypes.float64) or isinstance(exponent, Value) or \
            not _same_type(base, out) or _element(exponent, out.dtype) not in (3, -2):
        return None
    square = rewriter.emit(ew.MUL, [base, base], {}, out.shape, out.dtype)
    if _element(exponent, out.dtype) == 3:
        return ew.MUL, [square, base], {}
    return ew.DIV, [1, square], {}


def _broadcast_source(value):
    """What a broadcast-only operand broadcasts: the input of an expand, or of a reshape that
    only prepends size-1 dims; None otherwise."""
    op = _producer_op(value)
    if op is layout.EXPAND:
        return value.producer.inputs[0]
    if op is layout.RESHAPE:
        source = value.producer.inputs[0]
        extra = len(value.shape) - len(source.shape)
        if extra > 0 and value.shape == (1,) * extra + source.shape:
            return source
    return None


def _drop_broadcasts(node: Node, inputs: list, anchored: set) -> list:
    """An elementwise op broadcasts its operands itself: read an expand's (or a leading-ones
    reshape's) input directly when the op's shape and dtype stay the same. A broadcast of a
    constant to the type of a graph input (`anchored`) stays: constant folding makes it a fill
    anchored there, and the smaller constant, with what it is anchored on, can go."""
    op, out = node.op, node.output
    if not isinstance(op.lowering, Elementwise) or op.shape is not broadcast_shapes:
        return inputs
    wanted = (out.shape, out.dtype)
    for position in range(len(inputs)):
        while True:
            source = _broadcast_source(inputs[position])
            if source is None or is_constant(source) and (
                    inputs[position].shape, inputs[position].dtype.name) in anchored:
                break
            candidate = inputs[:position] + [source] + inputs[position + 1:]
            if infer(op, tuple(symbolic(operand) for operand in candidate), node.attrs) != wanted:
                break
            inputs = candidate
    return inputs


def _constants_as_numbers(node: Node, inputs: list) -> list:
    """An elementwise op reads a broadcast constant operand of its own floating dtype as the
    number it holds, when that leaves the op's shape and dtype as they were: the 0-d ones that
    seed an implicit gradient (autograd/api.py) would otherwise keep the value they are shaped
    like, the loss, computed for nothing more than its shape. Every operand already has the
    result's dtype, so no promotion reads the number differently; pow is left alone, since
    NumPy's power takes a scalar exponent of 2 or 0.5 by another algorithm than an array's."""
    op, out = node.op, node.output
    if not isinstance(op.lowering, Elementwise) or op.shape is not broadcast_shapes or \
            not out.dtype.is_floating_point or op is ew.POW or any(
                isinstance(operand, Value) and operand.dtype is not out.dtype
                for operand in inputs):
        return inputs
    wanted = (out.shape, out.dtype)
    for position, operand in enumerate(inputs):
        if not is_constant(operand) or operand.shape == out.shape:
            continue
        number = constant_scalar(operand).item()
        candidate = inputs[:position] + [number] + inputs[position + 1:]
        if any(isinstance(other, Value) for other in candidate) and \
                infer(op, tuple(symbolic(item) for item in candidate), node.attrs) == wanted:
            inputs = candidate
    return inputs


def algebraic_simplification(graph: Graph) -> Graph:
    """Remove no-ops, exactly: the result is bitwise what the graph computed before.

    A rewrite never changes a value's shape or dtype: a node is only replaced by a value of its
    own type, so `x * 1` with an int `x` and a float `1.0` (a float result) and `x + 0` where the
    zero tensor broadcasts `x` to a bigger shape stay. A constant is a literal operand or a
    `fill` output (rewriter.py), taken in the op's compute dtype. Floating-point rules follow
    LLVM's InstSimplify without fast-math flags (NaN, infinities and signed zeros kept):

    - `x * 1`, `1 * x` -> x (LLVM: fmul X, 1.0 ==> X). `x * 0` is not 0 (NaN, inf, -0.0).
    - `x / 1` -> x (fdiv X, 1.0 ==> X); `x ** 1` -> x (pow(X, 1.0) ==> X); `x ** 2` with a
      number 2 -> `x * x` for floating x (NumPy's power squares then: the same bits), and with
      a number 0 -> a fill of ones (pow(x, 0) is 1 for every x, NaN included). For float32 and
      float64 x, `x ** 3` -> `(x * x) * x` and `x ** -2` -> `1 / (x * x)`: the eager impl's
      way (torch's), the same bits.
    - `x + (-0.0)`, `(-0.0) + x` -> x (fadd X, -0.0 ==> X). `x + 0.0` stays: -0.0 + 0.0 is
      +0.0. For integer and bool dtypes, `x + 0` and `0 + x` -> x.
    - `x - 0.0` -> x (fsub X, +0.0 ==> X). `x - (-0.0)` stays (it is x + 0.0). For integer
      dtypes, `x - 0` -> x.
    - None of the arithmetic rules above applies to complex dtypes: `x * 1` is `x * (1 + 0i)`,
      whose real part `a - 0b` is NaN for an infinite `b`, and a complex zero's imaginary part
      has its own sign.
    - `neg(neg(x))` -> x (fneg is a sign flip; integer negation wraps both ways).
    - `permute(permute(x, a), b)` -> `permute(x, c)` with c[i] = a[b[i]]; an identity permute
      -> x.
    - `reshape(reshape(x))` -> one reshape of x; a reshape to x's own shape -> x. The same for
      `expand` (broadcasting compatibility is transitive), which also reads through a reshape
      that only prepends size-1 dims (`expand(reshape(s, (1,)), (n,))` -> `expand(s, (n,))`).
    - `cast(x, dtype)` with x already of that dtype -> x.
    - prod/amax/amin/any/all over no axes (`dim=()`) -> x when the type is unchanged; `sum`
      too for integer dtypes only, since a floating or complex sum starts from +0.0 (-0.0 ->
      +0.0).
    - `a @ b` with an inner extent of 1 -> `a * b + 0.0` (ints: `a * b`; complex products
      stay products), the broadcast product: one rounding of the one term either way, and
      BLAS's sum starts from +0.0.
    - Broadcasting no-ops: an elementwise op reading `expand(y)` or `reshape(y)` that only
      prepends size-1 dims reads y instead, when the op's result shape and dtype are the same
      (a 0-d operand promotes differently from a dimensioned one, so that is checked too).
    - A broadcast constant operand of an elementwise op whose operands all have its floating
      result dtype is read as the number it holds where the op's shape and dtype stay the same
      (`x * fill(s, 0.5)` with a 0-d s -> `x * 0.5`): the same value, rounded the same way.
    """
    rewriter = GraphRewriter(graph)
    # The types a fill can be anchored on by constant folding (graph inputs but cotangents).
    anchored = {(entry.value.shape, entry.value.dtype.name) for entry in graph.inputs
                if entry.kind != "cotangent"}
    for node in graph.nodes:
        original = rewriter.operands(node)
        inputs = _constants_as_numbers(node, _drop_broadcasts(node, original, anchored))
        rule = RULES.get(node.op)
        result = None
        if node.op is linalg.MATMUL:
            result = _outer_product(rewriter, node, inputs)
        elif node.op is ew.POW:
            result = _small_power(rewriter, node, inputs)
        if result is None and rule is not None:
            compute = node.op.dtype(tuple(symbolic(operand) for operand in inputs),
                                    node.attrs)[0]
            compute = node.output.dtype if compute is None else compute
            result = rule(inputs, node.attrs, node.output, compute)
        if isinstance(result, Value):
            rewriter.alias(node, result)
        elif result is not None:
            op, operands, attrs = result
            rewriter.copy(node, operands, attrs, op=op)
        else:
            rewriter.copy(node, inputs)
    return rewriter.finish()
