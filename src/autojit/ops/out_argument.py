"""torch's `out=` argument: the result written into a given tensor, which is returned.

`with_out(function)` gives a top-level op function torch's keyword-only `out`: the op runs as
usual, then its result is cast to out's dtype (an error where torch's casting rule forbids it:
a float result into an integer tensor) and copied into out's storage, which is resized first
when its shape differs (with torch's deprecation warning unless out is empty); out's version
counter is bumped, as an in-place op's. As in torch, a call with `out` records no autograd
history and refuses inputs or an out that require grad while grad mode is on. Tensor methods
take no `out`, as in torch.
"""

from __future__ import annotations

import functools
import inspect
import warnings

import numpy as np

from ..tensor import dtypes
from ..tensor.state import state
from ..tensor.tensor import Tensor
from .elementwise_math import SCALAR_TYPE_NAMES
from .inplace import write_storage

_RESIZED = ("An output with one or more elements was resized since it had shape {}, which does "
            "not match the required output shape {}. This behavior is deprecated, and in a "
            "future PyTorch release outputs will not be resized unless they have zero "
            "elements. You can explicitly reuse an out tensor t by resizing it, inplace, to "
            "zero elements with t.resize_(0).")


# C++'s names of the dtypes, as some of torch's out= messages print them.
_C_NAMES = dtypes.C_TYPE_NAMES


def _scalar(dtype) -> str:
    return SCALAR_TYPE_NAMES[dtype.name]


# The ops whose out torch checks beyond the casting rule, by kind: kind -> (name, result dtype,
# out dtype) -> the RuntimeError's message or another exception, or None where out is
# accepted. Most want the result's dtype; a reduction computes in out's dtype, where torch's
# kernels may have no loop. The others cast within torch's casting rule.
def _unless_same(message):
    return lambda name, result, out: None if out is result else message(result, out)


OUT_CHECKS = {
    "expected": _unless_same(lambda result, out: (
        f"Expected out tensor to have dtype {_C_NAMES[result.name]}, but got "
        f"{_C_NAMES[out.name]} instead")),
    "found": _unless_same(lambda result, out: (
        f"Found dtype {_scalar(out)} but expected {_scalar(result)}")),
    "mat2": _unless_same(lambda result, out: (
        f"self and mat2 must have the same dtype, but got {_scalar(out)} and "
        f"{_scalar(result)}")),
    "heaviside": _unless_same(lambda result, out: (
        "heaviside is not yet implemented for tensors with different dtypes.")),
    "nan_to_num": _unless_same(lambda result, out: (
        f"nan_to_num: dtype of out: {_scalar(out)} should be same as input: {_scalar(result)}")),
    "boolean": lambda name, result, out: (
        None if out.category == 0 else f"{name} does not support non-boolean outputs."),
    "reduction": lambda name, result, out: (
        None if out.is_floating_point or not result.is_floating_point
        else NotImplementedError(f'"{name}_cpu" not implemented for \'{_scalar(out)}\'')),
}


def write_out(name: str, result: Tensor, out, check: str | None = None) -> Tensor:
    """Write `result` (what op `name` returned) into `out`, with torch's checks; `check` names
    the OUT_CHECKS entry of an op whose out torch checks further."""
    if not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")
    if state.grad_enabled and (result.requires_grad or out.requires_grad):
        raise RuntimeError(f"{name}(): functions with out=... arguments don't support automatic "
                           "differentiation, but one of the arguments requires grad.")
    refusal = check and OUT_CHECKS[check](name, result.dtype, out.dtype)
    if refusal:
        raise refusal if isinstance(refusal, Exception) else RuntimeError(refusal)
    if result.dtype.category > out.dtype.category:
        raise RuntimeError(f"result type {SCALAR_TYPE_NAMES[result.dtype.name]} can't be cast "
                           f"to the desired output type {SCALAR_TYPE_NAMES[out.dtype.name]}")
    shape = tuple(result.shape)
    if tuple(out.shape) != shape:
        _resize(out, shape)
    if result.dtype is not out.dtype:
        result = result.to(out.dtype)
    write_storage(out, result.detach())
    return out


def _resize(out: Tensor, shape: tuple) -> None:
    if out._data is None or out._base is not None:
        raise RuntimeError(f"out= with shape {list(out.shape)} where the result has shape "
                           f"{list(shape)}: resizing is supported for a tensor with data of its "
                           "own, outside a compiled function")
    if out.numel() != 0:
        warnings.warn(_RESIZED.format(list(out.shape), list(shape)), UserWarning, stacklevel=4)
    data = out._data
    if isinstance(data, np.ndarray):
        out._data = np.empty(shape, dtype=data.dtype)
    else:  # device memory: a fresh buffer on the same device
        out._data = type(data)(shape, data.dtype, device_index=data.device_index)


def with_out(function, check: str | None = None, name: str | None = None):
    """`function` with a keyword-only `out=None`; its signature shows it. `check`: see
    write_out; `name`: the op's name in torch's messages, where it is not the function's
    (torch.special's own functions are special_entr, ...)."""
    name = name or function.__name__

    @functools.wraps(function)
    def wrapper(*args, out=None, **kwargs):
        result = function(*args, **kwargs)
        return result if out is None else write_out(name, result, out, check)

    parameters = list(inspect.signature(function).parameters.values())
    parameters.append(inspect.Parameter("out", inspect.Parameter.KEYWORD_ONLY, default=None))
    wrapper.__signature__ = inspect.Signature(parameters)
    return wrapper
