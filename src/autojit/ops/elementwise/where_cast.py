"""Elementwise primitives that select, convert and copy: where (a branchless select on large
arrays), cast (torch's conversions, its uint8 and float16 roundings), clone and fill.

Each `define_op` block is the whole story of one primitive, as in elementwise/__init__.py; the
helpers (`_elementwise`, `operand`, the call wrappers) are common.py's. elementwise/__init__.py
re-exports every name here (and zero_jvp, the JVP of piecewise-constant ops), and its importers
read them from there.
"""

from __future__ import annotations

import warnings

import numpy as np

from ...tensor import dtypes
from ...tensor.once import warn_once
from ...tensor.tensor import Tensor
from .. import api
from ..complex_rules import user_stacklevel
from ..dtype_rules import rule_promote
from ..limited_rules import ALL_LIMITED, BOTH
from ..registry import Elementwise, bind, define_op
from .common import NO_ATTRS, _call1, _elementwise, operand

__all__ = ["CAST", "CLONE", "COMPLEX_TO_REAL", "FILL", "WHERE", "cast", "clone", "fill_like",
           "where"]

_COMPLEX = dtypes.COMPLEX


# ---- where and cast ---------------------------------------------------------------------------

def _where_dtype(inputs, attrs):
    dtype = rule_promote(inputs[1:], attrs)[0]
    return dtype, dtype


# Bit patterns of the item sizes a branchless select handles, and the signed type whose -1
# is an all-ones mask of that size.
_BITS = {4: (np.uint32, np.int32), 8: (np.uint64, np.int64)}
_BRANCHLESS_FROM = 4096  # elements: below this np.where's fewer passes cost less


def _where_impl(condition, x, y):
    """np.where's result, chosen without branches on large arrays: np.where branches per
    element, which costs several times more on a mask without pattern (a ReLU's) than a
    bitwise select on the values' bit patterns, which is exact: y ^ ((x ^ y) & mask), or one
    AND where a side is a zero scalar (a ReLU and its gradient), each in as few passes over
    the result as it takes."""
    dtype = np.result_type(x, y)
    bits = _BITS.get(dtype.itemsize)
    if bits is None or dtype.kind not in "fiu" or np.size(condition) < _BRANCHLESS_FROM and \
            np.size(x) < _BRANCHLESS_FROM and np.size(y) < _BRANCHLESS_FROM:
        return np.where(condition, x, y)
    unsigned, signed = bits
    condition = np.asarray(condition)
    if condition.dtype != np.bool_:
        condition = condition != 0
    chosen = condition.view(np.uint8)
    x_bits = np.asarray(x, dtype=dtype).view(unsigned)
    y_bits = np.asarray(y, dtype=dtype).view(unsigned)
    shape = np.broadcast_shapes(condition.shape, x_bits.shape, y_bits.shape)
    if x_bits.ndim == 0 and not x_bits:  # 0 where chosen: y's bits under not-chosen's mask
        kept, mask = y_bits, np.subtract(chosen, 1, dtype=signed).view(unsigned)
    elif y_bits.ndim == 0 and not y_bits:  # x's bits under chosen's mask (all ones: -1)
        kept, mask = x_bits, np.negative(chosen, dtype=signed).view(unsigned)
    else:
        mask = np.negative(chosen, dtype=signed).view(unsigned)
        mixed = np.bitwise_xor(x_bits, y_bits)
        if mixed.shape == shape:
            np.bitwise_and(mixed, mask, out=mixed)
        else:
            mixed = np.bitwise_and(mixed, mask)
        return np.bitwise_xor(mixed, y_bits, out=mixed).view(dtype)
    if mask.shape == shape:
        return np.bitwise_and(kept, mask, out=mask).view(dtype)
    return np.bitwise_and(kept, mask).view(dtype)


def _where_jvp(inputs, tangents, out, attrs):
    _, tx, ty = tangents
    if tx is None and ty is None:
        return None
    return where(inputs[0], 0 if tx is None else tx, 0 if ty is None else ty)


WHERE = _elementwise(
    "where", 3, _where_dtype, _where_impl,
    lambda ctx, g: (None,
                    where(ctx.inputs[0], g, 0) if ctx.needs_input_grad[1] else None,
                    where(ctx.inputs[0], 0, g) if ctx.needs_input_grad[2] else None),
    (0,), "select({0}, {1}, {2})", exact=True, jvp=_where_jvp, uncast=(0,),
    complex=True, complex_expression=True, limited=BOTH)


def where(condition, input=None, other=None):  # noqa: A002 - torch's names
    """x where `condition` holds, else y, broadcasting (torch.where); with the condition alone,
    the indices of its True entries, one tensor per dim (torch.nonzero(as_tuple=True))."""
    if input is None and other is None:
        return api.nonzero(condition, as_tuple=True)
    condition = operand(condition, "where")
    if isinstance(condition, Tensor) and condition.dtype is dtypes.uint8:
        warnings.warn("where received a uint8 condition tensor. This behavior is deprecated and "
                      "will be removed in a future version of autojit. Use a boolean condition "
                      "instead.", UserWarning, stacklevel=2)
        condition = cast(condition, dtypes.bool_)
    if not isinstance(condition, Tensor):
        raise TypeError(f"where(): expected condition to be a bool Tensor, got "
                        f"{type(condition).__name__}")
    if condition.dtype is not dtypes.bool_:
        raise RuntimeError("where expected condition to be a boolean tensor, but got a tensor "
                           f"with dtype {dtypes.scalar_type_name(condition.dtype)}")
    return bind(WHERE, (condition, operand(input, "where"), operand(other, "where")), NO_ATTRS)


def _cast_dtype(inputs, attrs):
    return None, attrs["dtype"]


def _cast_vjp(ctx, g):
    return (g,)  # the engine casts the gradient back to the input's dtype


def _cast_impl(x, dtype):
    if x.dtype.kind == "c" and dtype.category != _COMPLEX:
        if dtype is dtypes.bool_:  # nonzero in either part, as torch (and NumPy) convert
            return x.astype(np.bool_)
        # (the warning is cast()'s, where the user asked for the conversion). Contiguous, so
        # that NumPy converts it with the loop of a float array's cast (np.require keeps a
        # 0-d array 0-d, where np.ascontiguousarray makes it 1-d).
        x = np.require(x.real, requirements="C")
    if dtype is dtypes.uint8 and x.dtype.kind == "f":
        # torch's uint8 takes the low byte of the int64 conversion (the signed narrow dtypes
        # that of the int32 one, as NumPy's casts do).
        return x.astype(np.int64).astype(np.uint8)
    if dtype is dtypes.float16 and x.dtype == np.float64:
        # torch's c10::Half of a double is of its float: rounded twice, where NumPy's
        # conversion rounds once (1 + 2**-11 + 2**-24 is 1 in torch)
        x = x.astype(np.float32)
    return x.astype(dtype.numpy)


CAST = define_op(name="cast", arity=1, shape=lambda shape, dtype: shape, dtype=_cast_dtype,
                 impl=_cast_impl, vjp=_cast_vjp, saves=(),
                 # The tangent cast as the value is: forward_ad's cast to the output's dtype.
                 jvp=lambda inputs, tangents, out, attrs: tangents[0],
                 lowering=Elementwise("cast({0})", exact=True, complex_expression=True),
                 grad_name="ToCopyBackward0",
                 complex=True, traces_bfloat16=True, limited=ALL_LIMITED)


COMPLEX_TO_REAL = "complex to real cast"  # tensor/once.py's key of cast's warning


def cast(x: Tensor, dtype) -> Tensor:
    """x converted to `dtype` (differentiable between floating dtypes)."""
    dtype = dtypes.to_dtype(dtype)
    if x.dtype is dtype:
        return x
    if (x._dtype.category == _COMPLEX and dtype.category != _COMPLEX
            and dtype is not dtypes.bool_):
        # torch's TORCH_WARN_ONCE: once per process
        warn_once(COMPLEX_TO_REAL, "Casting complex values to real discards the imaginary part",
                  UserWarning, stacklevel=user_stacklevel())
    return bind(CAST, (x,), {"dtype": dtype})




# ---- copies -------------------------------------------------------------------------------------

# The clone's tangent is a clone of the input's, not the same tensor: an in-place write to one
# must not change the other, as in torch.
CLONE = define_op(name="clone", arity=1, shape=lambda shape: shape, dtype=lambda inputs, attrs: (
    None, inputs[0].dtype), impl=lambda x: x.copy(), vjp=lambda ctx, g: (g,), saves=(),
    jvp=lambda inputs, tangents, out, attrs: clone(tangents[0]),
    lowering=Elementwise("{0}", exact=True, complex_expression=True), complex=True,
    limited=ALL_LIMITED)
clone = _call1(CLONE)


def zero_jvp(inputs, tangents, out, attrs):
    """The JVP of a piecewise-constant op: zeros, a tensor rather than None, as torch gives."""
    return fill_like(next(t for t in tangents if t is not None), 0)


# fill's output does not depend on its input's values, only its shape and dtype; the zero VJP
# keeps an in-place fill_ / zero_ on a tensor in the graph (torch's FillBackward0).
FILL = define_op(name="fill", arity=1, shape=lambda shape, value: shape,
                 dtype=lambda inputs, attrs: (None, inputs[0].dtype),
                 impl=lambda x, value: np.full_like(x, value),
                 vjp=lambda ctx, g: (fill_like(g, 0),), saves=(), jvp=zero_jvp,
                 lowering=Elementwise("{value}", complex_expression=True), complex=True,
                 limited=ALL_LIMITED)


def fill_like(x: Tensor, value) -> Tensor:
    """A tensor shaped and typed like x, every element `value`."""
    if isinstance(value, Tensor):
        value = value.item()
    if type(value) is int and x.dtype.category == dtypes.INTEGER:
        value = dtypes.wrap_integer(value, x.dtype)  # as torch converts it: -1 is 255
    return bind(FILL, (x,), {"value": value})
