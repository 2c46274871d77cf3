"""Bitwise primitives of integer and bool tensors: bitwise_and, bitwise_or, bitwise_xor,
bitwise_not, bitwise_left_shift and bitwise_right_shift, the operators `&`, `|`, `^`, `~`, `<<`
and `>>` of integer tensors (tensor_methods.py sends bool operands of `&`, `|`, `^` and `~` to
the logical ops, which give the same values).

Each is one `define_op`, as in elementwise/__init__.py: the NumPy impl is the reference, and the
expression template calls a function of the expression language (`bitwise_and({0}, {1})`),
emitted by codegen/cpu/llvm/expression.py and codegen/cuda/render.py. Operands promote as
torch's do (`uint8 & int8` is int16; a Python int takes the tensor's dtype, wrapped). A shift
by a negative amount or by the dtype's width or more, which C leaves undefined, is torch's:
a left shift gives 0, a right shift of a signed value its sign (0 or -1), of uint8 0.
Floating-point operands raise torch's NotImplementedError.

hash_tensor, torch's xor reduction (its one mode), is here too: each element upcast to its
64-bit float or integer type and read as uint64 bits, the bits xor-ed together along `dim`;
the result is uint64 and has no gradient.
"""

from __future__ import annotations

import numpy as np

from ...tensor import dtypes
from ...tensor.tensor import Tensor
from .. import batching
from ..dtype_rules import promoted_dtype
from ..limited_rules import UNSIGNED
from ..registry import NOT_DIFFERENTIABLE, Elementwise, Extern, bind, define_op
from ..shape_rules import broadcast_shapes, normalize_dims, reduced_shape
from . import NO_ATTRS, operand
from .math_primitives import not_implemented


def _rule_integer(kernel: str, bool_allowed: bool):
    """Type promotion, refusing floats (and bools for the shifts) as torch's kernels do."""
    def rule(inputs, attrs):
        dtype = promoted_dtype(inputs)
        if dtype.is_floating_point or (dtype is dtypes.bool_ and not bool_allowed):
            raise not_implemented(kernel, dtype)
        return dtype, dtype

    return rule


def _shift_amounts(x, y):
    """The shift amounts that C defines (the others replaced by 0), and where they were not."""
    x, y = np.asarray(x), np.asarray(y)
    outside = (y < 0) | (y >= 8 * x.dtype.itemsize)
    return x, np.where(outside, 0, y).astype(x.dtype), outside


def _left_shift_impl(x, y):
    x, amounts, outside = _shift_amounts(x, y)
    return np.where(outside, 0, np.left_shift(x, amounts)).astype(x.dtype)


def _right_shift_impl(x, y):
    x, amounts, outside = _shift_amounts(x, y)
    if x.dtype.kind == "i":  # by the width or more: the sign, as a shift by width - 1 gives
        return np.right_shift(x, np.where(outside, 8 * x.dtype.itemsize - 1, amounts))
    return np.where(outside, 0, np.right_shift(x, amounts)).astype(x.dtype)


def _binary(name: str, kernel: str, impl, bool_allowed: bool = True, limited=()):
    return define_op(name=name, arity=2, shape=broadcast_shapes,
                     dtype=_rule_integer(kernel, bool_allowed), impl=impl,
                     vjp=NOT_DIFFERENTIABLE, saves=(),
                     lowering=Elementwise(f"{name}({{0}}, {{1}})", exact=True),
                     limited=limited, kernel=kernel)


# torch's and, or and xor take uint16, uint32 and uint64; its shifts and not do not.
BITWISE_AND = _binary("bitwise_and", "bitwise_and_cpu", np.bitwise_and, limited=UNSIGNED)
BITWISE_OR = _binary("bitwise_or", "bitwise_or_cpu", np.bitwise_or, limited=UNSIGNED)
BITWISE_XOR = _binary("bitwise_xor", "bitwise_xor_cpu", np.bitwise_xor, limited=UNSIGNED)
LEFT_SHIFT = _binary("bitwise_left_shift", "lshift_cpu", _left_shift_impl, bool_allowed=False)
RIGHT_SHIFT = _binary("bitwise_right_shift", "rshift_cpu", _right_shift_impl,
                      bool_allowed=False)
BITWISE_NOT = define_op(name="bitwise_not", arity=1, shape=broadcast_shapes,
                        dtype=_rule_integer("bitwise_not_cpu", True), impl=np.invert,
                        vjp=NOT_DIFFERENTIABLE, saves=(),
                        lowering=Elementwise("bitwise_not({0})", exact=True),
                        kernel="bitwise_not_cpu")


def _call2(op, summary: str):
    def function(input, other):  # noqa: A002 - torch's name
        x, y = operand(input, op.name), operand(other, op.name)
        if not isinstance(x, Tensor) and not isinstance(y, Tensor):
            raise TypeError(f"{op.name}(): at least one argument must be a Tensor, "
                            f"got {type(x).__name__} and {type(y).__name__}")
        return bind(op, (x, y), NO_ATTRS)

    function.__name__ = function.__qualname__ = op.name
    function.__doc__ = summary
    return function


bitwise_and = _call2(BITWISE_AND, "Elementwise bitwise AND of integer (or bool) tensors, "
                                  "`x & y`, broadcasting.")
bitwise_or = _call2(BITWISE_OR, "Elementwise bitwise OR of integer (or bool) tensors (the "
                                "operator `|`), broadcasting.")
bitwise_xor = _call2(BITWISE_XOR, "Elementwise bitwise XOR of integer (or bool) tensors, "
                                  "`x ^ y`, broadcasting.")
bitwise_left_shift = _call2(LEFT_SHIFT, "Elementwise `x << y` of integer tensors; a shift by a "
                                        "negative amount or by the width or more gives 0.")
bitwise_right_shift = _call2(RIGHT_SHIFT, "Elementwise `x >> y` of integer tensors, arithmetic "
                                          "for signed dtypes; a shift by a negative amount or by "
                                          "the width or more gives the sign (0 or -1).")


def bitwise_not(input) -> Tensor:  # noqa: A002 - torch's name
    """Elementwise bitwise NOT of an integer tensor, `~x` (logical NOT of a bool tensor)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"bitwise_not(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    return bind(BITWISE_NOT, (input,), NO_ATTRS)


# ---- hash_tensor ------------------------------------------------------------------------------

def _hash_dtype(inputs, attrs):
    """uint64, from the real dtypes torch's xor_sum kernel takes (a complex input raises
    through Op.complex; the registry lets the op make uint64, and this refuses it as input)."""
    dtype = inputs[0]._dtype
    if dtype.limited:
        raise not_implemented("xor_sum_cpu", dtype)
    return None, dtypes.uint64


_QUIET = np.uint64(1 << 51)  # float64's quiet-NaN bit


def _hash_bits(x: np.ndarray) -> np.ndarray:
    """x's elements as torch's hash reads them: floats upcast to float64 (float16 and the
    float32 storage of bfloat16 exactly; a NaN keeps its payload and, as a hardware
    conversion makes it, is quiet: NumPy's float16 conversion keeps a signaling one),
    integers to int64 and bools to 0 or 1, each read as the uint64 of its bits."""
    if x.dtype.kind == "f":
        bits = x.astype(np.float64).view(np.uint64)
        if x.dtype != np.float64:
            bits = np.where(np.isnan(x), bits | _QUIET, bits)
        return bits
    return x.astype(np.int64).view(np.uint64)


def _hash_impl(x, dim, keepdim):
    return np.bitwise_xor.reduce(_hash_bits(x), axis=dim, keepdims=keepdim)


HASH_TENSOR = define_op(
    name="hash_tensor", arity=1, shape=lambda shape, dim, keepdim: reduced_shape(
        shape, dim, keepdim), dtype=_hash_dtype, impl=_hash_impl, vjp=NOT_DIFFERENTIABLE,
    saves=(), lowering=Extern("xor_reduce", ("data",)), limited=(dtypes.uint64,),
    batch=batching.reduction_rule,
    complex="\"xor_sum_cpu\" not implemented for '{type}'", kernel="xor_sum_cpu")


def hash_tensor(input, dim=(), *, keepdim: bool = False, mode: int = 0) -> Tensor:  # noqa: A002
    """A uint64 hash of x's elements over `dim` (all of them by default): each upcast to its
    64-bit float or integer type, its bits read as uint64 and xor-ed together (torch's
    mode 0, its only one). Not differentiable."""
    if not isinstance(input, Tensor):
        raise TypeError(f"hash_tensor(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if dim is not None and not isinstance(dim, (int, tuple, list)) or isinstance(dim, bool):
        raise TypeError(f"hash_tensor(): argument 'dim' (position 2) must be tuple of ints, "
                        f"not {type(dim).__name__}")
    if mode != 0:
        raise RuntimeError(f"Unknown hash_tensor mode: {mode}")
    every = dim is None or (isinstance(dim, (tuple, list)) and not dim)
    dims = normalize_dims(dim, input.ndim)
    if every and input.numel() == 0:
        raise RuntimeError("hash_tensor: Expected reduction dim to be specified for "
                           "input.numel() == 0. Specify the reduction dim with the 'dim' "
                           "argument.")
    for axis in dims:
        if input.ndim and input.shape[axis] == 0:
            raise IndexError(f"hash_tensor: Expected reduction dim {axis} to have non-zero "
                             "size.")
    return bind(HASH_TENSOR, (input,), {"dim": dims, "keepdim": bool(keepdim)})
