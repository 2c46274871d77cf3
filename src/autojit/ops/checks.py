"""torch's private checks, which libraries call to state what must hold: `_check` and its
siblings raising another error type (`_check_index`, `_check_value`, `_check_type`,
`_check_not_implemented`, `_check_with`), `_check_tensor_all` on a bool tensor, the deprecated
`_check_is_size`, and `_assert_async` on a one-element tensor (checked at once, as torch checks
a CPU tensor's); and aten's assertion operators (`torch.ops.aten._assert_scalar`,
`_assert_tensor_metadata`, `_assert_async`, `sym_constrain_range_for_size`).

A condition is a Python bool: autojit's symbolic scalars answer a comparison with a bool while
tracing, and record the decision as a guard or a value check (tensor/symbolic.py), so a check
on sizes or `.item()` values under autojit.compile holds for every call the trace serves.
"""

from __future__ import annotations

import warnings

from ..tensor import dtypes
from ..tensor.tensor import Tensor
from .aliases import is_nonzero

_DEFAULT_MESSAGE = ("Expected cond to be True, but got False. (Could this error message be "
                    "improved? If so, please report an enhancement request to PyTorch.)")


def check_with(error_type, cond, message=None) -> None:
    """Raise `error_type` with `message()` (or torch's default text) unless `cond` is True."""
    if not isinstance(cond, bool):
        if isinstance(cond, Tensor):
            raise TypeError("cond must be a bool, but got a Tensor. For tensor conditions, use "
                            "torch._check_tensor_all() to assert that all elements are true.")
        raise TypeError(f"cond must be a bool, but got {type(cond)}")
    if cond:
        return
    if not issubclass(error_type, Exception) or issubclass(error_type, Warning):
        raise AssertionError(f"error_type must be a subclass of Exception but not Warning, got "
                             f"{error_type}")
    if message is None:
        raise error_type(_DEFAULT_MESSAGE)
    if not callable(message):
        raise TypeError("message must be a callable")
    raise error_type(str(message()))


def check(cond, message=None) -> None:
    """torch._check: a RuntimeError unless `cond` (a bool) is True; `message` is a callable
    giving the error's text."""
    check_with(RuntimeError, cond, message)


def check_index(cond, message=None) -> None:
    check_with(IndexError, cond, message)


def check_value(cond, message=None) -> None:
    check_with(ValueError, cond, message)


def check_type(cond, message=None) -> None:
    check_with(TypeError, cond, message)


def check_not_implemented(cond, message=None) -> None:
    check_with(NotImplementedError, cond, message)


def check_tensor_all_with(error_type, cond, message=None) -> None:
    """Raise `error_type` unless every element of the bool tensor `cond` is True."""
    if not isinstance(cond, Tensor):
        raise TypeError(f"cond must be a tensor, but got {type(cond)}")
    if cond.dtype is not dtypes.bool_:
        raise TypeError(f"cond tensor must have dtype torch.bool, but got {cond.dtype}")
    check_with(error_type, bool(cond.all().item()), message)


def check_tensor_all(cond, message=None) -> None:
    check_tensor_all_with(RuntimeError, cond, message)


def check_is_size(i, message=None, *, max=None) -> None:  # noqa: A002 - torch's name
    """Deprecated in torch: `_check(i >= 0)` (and `i <= max`), with torch's FutureWarning."""
    warnings.warn("_check_is_size will be removed in a future PyTorch release along with "
                  "guard_size_oblivious.     Use _check(i >= 0) instead.", FutureWarning,
                  stacklevel=2)
    check(i >= 0, message)
    if max is not None:
        check(i <= max, message)


def assert_async(input: Tensor, assert_msg: str | None = None) -> None:  # noqa: A002
    """torch._assert_async: raise unless the one element of input is nonzero (with assert_msg,
    if given). On the CPU torch checks at once, as this does; under autojit.compile the test
    is a decision on a graph value, checked once the graph has computed it."""
    if not isinstance(input, Tensor):
        raise TypeError(f"_assert_async(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if not is_nonzero(input):
        raise RuntimeError("Expected Tensor with single nonzero value, but got zero"
                           if assert_msg is None else assert_msg)


# ---- aten's assertion operators (torch.ops.aten._assert_scalar, ...), which exported graphs
# hold and libraries name -----------------------------------------------------------------------

def assert_scalar(self, assert_msg: str) -> None:
    """aten._assert_scalar: a RuntimeError with `assert_msg` unless the number is true."""
    if not self:
        raise RuntimeError(assert_msg)


_LAYOUT_NAMES = {"strided": "Strided", "sparse_coo": "Sparse", "sparse_csr": "SparseCsr",
                 "sparse_csc": "SparseCsc", "sparse_bsr": "SparseBsr", "sparse_bsc": "SparseBsc"}


def assert_tensor_metadata(a: Tensor, size=None, stride=None, dtype=None, *, device=None,
                           layout=None) -> None:
    """aten._assert_tensor_metadata: torch's RuntimeError for each of the size, strides, dtype,
    device and layout given that `a` does not have."""
    if size is not None and list(a.shape) != list(size):
        raise RuntimeError(f"Tensor sizes mismatch! Expected: {list(size)}, Got: "
                           f"{list(a.shape)}")
    if stride is not None and list(a.stride()) != list(stride):
        raise RuntimeError(f"Tensor strides mismatch! Expected: {list(stride)}, Got: "
                           f"{list(a.stride())}")
    if dtype is not None and dtype is not a.dtype:
        raise RuntimeError(f"Tensor dtype mismatch! Expected: "
                           f"{dtypes.SCALAR_TYPE_NAMES[dtype.name]}, Got: "
                           f"{dtypes.c_type_name(a.dtype)}")
    if device is not None and str(device) != str(a.device):
        raise RuntimeError(f"Tensor device mismatch! Expected: {device}, Got: {a.device}")
    if layout is not None and layout is not a.layout:
        raise RuntimeError(f"Tensor layout mismatch! Expected: {_LAYOUT_NAMES[layout.name]}, "
                           f"Got: {_LAYOUT_NAMES[a.layout.name]}")


def sym_constrain_range_for_size(size, *, min=None, max=None) -> None:  # noqa: A002
    """aten.sym_constrain_range_for_size: a RuntimeError unless min <= size <= max."""
    low = 0 if min is None else min
    if size < low or (max is not None and size > max):
        raise RuntimeError(f"Invalid value range for {size} between [{low}, "
                           f"{'inf' if max is None else max}].")


# The names torch gives them (torch._check, ...), for autojit/__init__.py.
TORCH_NAMES = {
    "_check": check, "_check_with": check_with, "_check_index": check_index,
    "_check_value": check_value, "_check_type": check_type,
    "_check_not_implemented": check_not_implemented, "_check_tensor_all": check_tensor_all,
    "_check_tensor_all_with": check_tensor_all_with, "_check_is_size": check_is_size,
    "_assert_async": assert_async,
}
