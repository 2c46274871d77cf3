"""The pieces every elementwise op is made of: operand conversion, `_elementwise` (define_op
with an Elementwise lowering), the VJP and JVP helpers, and the user-facing functions `_call1`
and `_call2` make from an op, with their docstrings.

The ops themselves are in the package's other modules (__init__.py: math, arithmetic,
comparisons, logic; where_cast.py, math_primitives.py, bitwise.py), which import these from
here; __init__.py re-exports the names other families read as `ew.<name>`.
"""

from __future__ import annotations

import numpy as np

from ...tensor.symbolic import SymFloat, SymInt
from ...tensor.tensor import Tensor
from ..registry import Elementwise, bind, define_op
from ..shape_rules import broadcast_shapes

NO_ATTRS: dict = {}
# Sizes from a dynamic trace (tensor/symbolic.py) are numbers too: `x.sum() / x.shape[0]`.
_NUMBER_TYPES = (float, int, bool, complex, SymInt, SymFloat)
_OPERAND_TYPES = (Tensor, *_NUMBER_TYPES)


def operand(x, op_name: str):
    """A Tensor or Python number as an op input; NumPy values are converted, others refused."""
    if x.__class__ is Tensor or isinstance(x, _OPERAND_TYPES):
        return x
    if isinstance(x, np.generic):
        return x.item()
    if isinstance(x, np.ndarray):
        from ...tensor.creation import as_tensor

        return as_tensor(x)
    raise TypeError(f"{op_name}(): expected a Tensor or a number, but got {type(x).__name__}")


# The ops whose torch functions take two Python numbers, the first made a tensor
# (`torch.mul(5, 3)` is tensor(15)); torch's other binary functions refuse them.
NUMBERS_AS_TENSORS = frozenset({"add", "sub", "mul", "div", "floor_divide"})


def numbers_operands(x, y, op_name: str):
    """(x, y) where neither is a Tensor: x as a 0-dim tensor of its default dtype where torch's
    function takes two numbers, else a TypeError."""
    if op_name not in NUMBERS_AS_TENSORS:
        raise TypeError(f"{op_name}(): at least one argument must be a Tensor, got "
                        f"{type(x).__name__} and {type(y).__name__}")
    from ...tensor.creation import as_tensor

    return as_tensor(x), y


def _elementwise(name, arity, dtype, impl, vjp, saves, expression, grad_name=None,
                 exact=False, float32_scalars=(), jvp=None, uncast=(), companions=(),
                 complex=None, complex_expression=False,  # noqa: A002
                 limited=None, kernel=None):
    """exact: the op is exactly rounded (IEEE arithmetic, compares, logic, selects), see
    registry.Elementwise; transcendental functions are not. companions, complex_expression:
    see registry.Elementwise. float32_scalars, uncast, complex, limited, kernel: see
    define_op."""
    return define_op(name=name, arity=arity, shape=broadcast_shapes, dtype=dtype, impl=impl,
                     vjp=vjp, jvp=jvp, saves=saves,
                     lowering=Elementwise(expression, exact, companions, complex_expression),
                     grad_name=grad_name, float32_scalars=float32_scalars, uncast=uncast,
                     complex=complex, limited=limited, kernel=kernel)


def _needs(index, rule):
    """Compute an input's gradient only when that input needs one."""
    return lambda ctx, g: rule(ctx, g) if ctx.needs_input_grad[index] else None


def _binary_vjp(rule_x, rule_y):
    first, second = _needs(0, rule_x), _needs(1, rule_y)
    return lambda ctx, g: (first(ctx, g), second(ctx, g))


# ---- forward mode: the pieces of the JVP rules --------------------------------------------------
# Each rule is torch's JVP formula in autojit ops (docs/notes/forward-mode.md). Mostly that is
# the VJP's formula with the cotangent replaced by the tangent, so the two stay transposes at
# the special points too; where torch writes it otherwise (div, maximum, minimum, atan2), the
# tangents at those points are torch's.

def tangent_sum(*parts):
    """The sum of a JVP rule's per-input parts; None (a zero tangent) where every part is."""
    total = None
    for part in parts:
        if part is not None:
            total = part if total is None else total + part
    return total


def unary_jvp(derivative):
    """The JVP rule `t * derivative(x, out)` of an elementwise function of one input (a rule
    runs only where some input has a tangent, so a one-input op's is always there)."""
    return lambda inputs, tangents, out, attrs: tangents[0] * derivative(inputs[0], out)


def binary_jvp(part_x, part_y):
    """The JVP rule `part_x(x, y, tx, out) + part_y(x, y, ty, out)` of a function of two
    inputs, each part computed only where its input has a tangent (part_y None: y's is 0)."""
    def rule(inputs, tangents, out, attrs):
        (x, y), (tx, ty) = inputs, tangents
        return tangent_sum(None if tx is None else part_x(x, y, tx, out),
                           None if ty is None or part_y is None else part_y(x, y, ty, out))

    return rule


_DIRECT = frozenset((Tensor, float, int, bool, complex))  # operand kinds that need no conversion


# The docstrings of the functions _call1 and _call2 make, by op name: they are generated, so
# each needs its own line here (a primitive missing from this table fails at import).
_SUMMARIES = {
    "neg": "Elementwise negation, `-x`.",
    "abs": "Elementwise absolute value, `abs(x)`.",
    "sign": "Elementwise sign: -1, 0 or 1 (0 for NaN; a bool is its own sign).",
    "exp": "Elementwise natural exponential, `e^x`.",
    "log": "Elementwise natural logarithm, `ln(x)`.",
    "sqrt": "Elementwise square root.",
    "sin": "Elementwise sine (radians).",
    "cos": "Elementwise cosine (radians).",
    "tanh": "Elementwise hyperbolic tangent.",
    "sigmoid": "Elementwise logistic sigmoid, `1 / (1 + e^-x)`, without overflow.",
    "erf": "Elementwise Gauss error function.",
    "log1p": "Elementwise `ln(1 + x)`, accurate for small x.",
    "expm1": "Elementwise `e^x - 1`, accurate for small x.",
    "floor": "Elementwise floor: the largest integer not above x (integers unchanged).",
    "add": "Elementwise sum `x + y`, broadcasting; either may be a Python number.",
    "sub": "Elementwise difference `x - y`, broadcasting; either may be a Python number.",
    "mul": "Elementwise product `x * y`, broadcasting; either may be a Python number.",
    "div": "Elementwise true division `x / y`, broadcasting; integers give a float result.",
    "pow": "Elementwise power `x ** y`, broadcasting; either may be a Python number.",
    "maximum": "Elementwise maximum of x and y, broadcasting; NaN where either is NaN.",
    "minimum": "Elementwise minimum of x and y, broadcasting; NaN where either is NaN.",
    "floor_divide": "Elementwise `x // y`, rounded toward negative infinity (not differentiable).",
    "remainder": "Elementwise remainder `x % y`, with the sign of the divisor, as in Python.",
    "eq": "Elementwise `x == y`, broadcasting, as a bool tensor.",
    "ne": "Elementwise `x != y`, broadcasting, as a bool tensor.",
    "lt": "Elementwise `x < y`, broadcasting, as a bool tensor.",
    "le": "Elementwise `x <= y`, broadcasting, as a bool tensor.",
    "gt": "Elementwise `x > y`, broadcasting, as a bool tensor.",
    "ge": "Elementwise `x >= y`, broadcasting, as a bool tensor.",
    "logical_and": "Elementwise logical AND of the truth values of x and y (nonzero is True).",
    "logical_or": "Elementwise logical OR of the truth values of x and y (nonzero is True).",
    "logical_xor": "Elementwise logical XOR of the truth values of x and y (nonzero is True).",
    "logical_not": "Elementwise logical NOT of the truth value of x, as a bool tensor.",
    "isnan": "Elementwise test for NaN, as a bool tensor.",
    "clone": "A copy of x in storage of its own; the gradient passes through unchanged.",
}


def _call1(op):
    def function(x):
        if x.__class__ not in _DIRECT:
            x = operand(x, op.name)
        return bind(op, (x,), NO_ATTRS)

    function.__name__ = function.__qualname__ = op.name
    function.__doc__ = _SUMMARIES[op.name]
    return function


def _call2(op):
    def function(x, y):
        if x.__class__ not in _DIRECT:
            x = operand(x, op.name)
        if y.__class__ not in _DIRECT:
            y = operand(y, op.name)
        if not isinstance(x, Tensor) and not isinstance(y, Tensor):
            x, y = numbers_operands(x, y, op.name)
        return bind(op, (x, y), NO_ATTRS)

    function.__name__ = function.__qualname__ = op.name
    function.__doc__ = _SUMMARIES[op.name]
    # Its op, for the Tensor operators that bind it in their own frame (tensor_methods.py);
    # named beside the function, since functools.wraps copies it onto any wrapper of it.
    function.binds = (function, op)
    return function
