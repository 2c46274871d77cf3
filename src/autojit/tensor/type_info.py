"""Type information, as torch's top level has it: finfo and iinfo (the limits of a dtype), and
the questions a program asks of tensors and dtypes before it computes (is_tensor,
is_floating_point, is_complex, numel, result_type, can_cast, promote_types).

The promotion rules themselves are in dtypes.py (docs/notes/type-promotion.md).
"""

from __future__ import annotations

import math

import numpy as np

from . import dtypes
from .tensor import Tensor


def _type_name(value) -> str:
    return "Tensor" if isinstance(value, Tensor) else type(value).__name__


def _check_dtype(value, function: str, argument: str, position: int) -> dtypes.DType:
    if not isinstance(value, dtypes.DType):
        raise TypeError(f"{function}(): argument '{argument}' (position {position}) must be "
                        f"autojit.dtype, not {_type_name(value)}")
    return value


def _check_tensor(value, function: str) -> Tensor:
    if not isinstance(value, Tensor):
        raise TypeError(f"{function}(): argument 'input' (position 1) must be Tensor, not "
                        f"{_type_name(value)}")
    return value


def _short(value: float) -> str:
    """A limit as torch prints it: six significant digits (C's %g)."""
    return f"{value:g}"


class finfo:  # noqa: N801 - torch's name
    """The limits of a floating-point dtype (the default dtype when none is given).

    >>> import autojit
    >>> autojit.finfo(autojit.float32)
    finfo(resolution=1e-06, min=-3.40282e+38, max=3.40282e+38, eps=1.19209e-07, \
smallest_normal=1.17549e-38, tiny=1.17549e-38, dtype=float32)
    """

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution", "dtype")

    def __init__(self, type=None):  # noqa: A002 - torch's name
        dtype = dtypes.get_default_dtype() if type is None else type
        if isinstance(dtype, dtypes.DType) and dtype.is_complex:
            dtype = dtype.to_real()  # torch gives a complex dtype its parts' limits
        if not isinstance(dtype, dtypes.DType) or not dtype.is_floating_point:
            raise TypeError("autojit.finfo() requires a floating point input type. Use "
                            "autojit.iinfo to handle 'autojit.finfo'")
        if dtype is dtypes.bfloat16:
            # Stored as float32 (docs/notes/bfloat16.md): its limits are bfloat16's, 7
            # mantissa bits with float32's exponent range, not the storage's.
            self.bits, self.eps = 16, 2.0 ** -7
            self.max = (2.0 - 2.0 ** -7) * 2.0 ** 127
            self.min, self.tiny = -self.max, 2.0 ** -126
            self.smallest_normal = self.tiny
        elif dtype.float8 is not None:  # stored as float32 too (tensor/float8.py)
            self.bits = 8
            self.eps, self.max, self.min, self.tiny = dtype.float8.limits()
            self.smallest_normal = self.tiny
        else:
            info = np.finfo(dtype.numpy)
            self.bits = int(info.bits)
            self.eps = float(info.eps)
            self.max = float(info.max)
            self.min = float(info.min)
            self.tiny = self.smallest_normal = float(info.smallest_normal)
        self.resolution = 10.0 ** -math.floor(-math.log10(self.eps))
        self.dtype = dtype.name

    def __repr__(self) -> str:
        return (f"finfo(resolution={_short(self.resolution)}, min={_short(self.min)}, "
                f"max={_short(self.max)}, eps={_short(self.eps)}, "
                f"smallest_normal={_short(self.smallest_normal)}, tiny={_short(self.tiny)}, "
                f"dtype={self.dtype})")


class iinfo:  # noqa: N801 - torch's name
    """The limits of an integer dtype.

    >>> import autojit
    >>> autojit.iinfo(autojit.int32).max
    2147483647
    """

    __slots__ = ("bits", "max", "min", "dtype")

    def __init__(self, type):  # noqa: A002 - torch's name
        if type is dtypes.bool_:
            raise TypeError("autojit.bool is not supported by autojit.iinfo")
        if not isinstance(type, dtypes.DType) or type.category != dtypes.INTEGER:
            raise TypeError("autojit.iinfo() requires an integer input type. Use autojit.finfo "
                            "to handle 'autojit.iinfo'")
        info = np.iinfo(type.numpy)
        self.bits, self.max, self.min = int(info.bits), int(info.max), int(info.min)
        self.dtype = type.name

    def __repr__(self) -> str:
        return f"iinfo(min={_short(self.min)}, max={_short(self.max)}, dtype={self.dtype})"


def is_tensor(obj) -> bool:
    """Whether obj is an autojit Tensor (a Parameter is one)."""
    return isinstance(obj, Tensor)


def is_floating_point(input) -> bool:  # noqa: A002 - torch's name
    """Whether the tensor's dtype is a floating-point one."""
    return _check_tensor(input, "is_floating_point").dtype.is_floating_point


def is_complex(input) -> bool:  # noqa: A002 - torch's name
    """Whether the tensor's dtype is complex (complex64 or complex128)."""
    return _check_tensor(input, "is_complex").dtype.is_complex


def numel(input) -> int:  # noqa: A002 - torch's name
    """The number of elements of the tensor."""
    return _check_tensor(input, "numel").numel()


def result_type(tensor1, tensor2) -> dtypes.DType:
    """The dtype an arithmetic op on the two (tensors or Python numbers) computes in.

    >>> import autojit
    >>> autojit.result_type(autojit.tensor([1, 2], dtype=autojit.int32), 1.0)
    autojit.float32
    """
    groups: tuple = ([], [], [])
    for operand in (tensor1, tensor2):
        if isinstance(operand, Tensor):
            groups[0 if operand.ndim else 1].append(operand.dtype)
        elif isinstance(operand, (bool, int, float, complex, np.generic)):
            groups[2].append(operand.item() if isinstance(operand, np.generic) else operand)
        else:
            raise TypeError(f"result_type() received an invalid combination of arguments - "
                            f"got ({_type_name(tensor1)}, {_type_name(tensor2)})")
    return dtypes.result_type(*groups)


def can_cast(from_, to) -> bool:
    """Whether a value of dtype `from_` may be cast to `to` under torch's casting rule: not
    from complex to a real dtype, nor from floating point to an integer, nor from another dtype
    to bool."""
    _check_dtype(from_, "can_cast", "from_", 1)
    _check_dtype(to, "can_cast", "to", 2)
    if from_.category >= dtypes.FLOATING and to.category < from_.category:
        return False
    return not (to is dtypes.bool_ and from_ is not dtypes.bool_)


def promote_types(type1, type2) -> dtypes.DType:
    """The smallest dtype both dtypes convert to without losing their category.

    >>> import autojit
    >>> autojit.promote_types(autojit.int32, autojit.float16)
    autojit.float16
    """
    _check_dtype(type1, "promote_types", "type1", 1)
    _check_dtype(type2, "promote_types", "type2", 2)
    return dtypes.promote(type1, type2)
