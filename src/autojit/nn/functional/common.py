"""What the functional modules of autojit.nn share: torch's argument checks and reductions.

activation.py, loss.py, margin.py, ctc.py,
distance.py, channel_dropout.py and functional_embedding.py check their
arguments with torch's messages and reduce their losses through these helpers; none of them
computes anything a gradient flows through except `reduce_loss`, a sum or a mean. This module
imports nothing from nn/functional/__init__.py, which re-exports those modules.
"""

from __future__ import annotations

import warnings

from ...ops.reduction import sum_
from ...tensor import dtypes
from ...tensor.creation import as_tensor
from ...tensor.tensor import Tensor

REDUCTIONS = ("none", "mean", "sum")
# torch names dtypes by their scalar type in errors ("not implemented for 'Long'").
SCALAR_TYPE_NAMES = dtypes.SCALAR_TYPE_NAMES


def scalar_type(dtype) -> str:
    """torch's name of a dtype's scalar type: Float, Double, Long, ..."""
    return SCALAR_TYPE_NAMES[dtype.name]


def check_tensor(name: str, argument: str, value) -> None:
    """torch's TypeError for an argument that is not a tensor."""
    if not isinstance(value, Tensor):
        raise TypeError(f"{name}(): argument '{argument}' must be Tensor, not "
                        f"{type(value).__name__}")


def check_floating(kernel: str, input: Tensor) -> None:  # noqa: A002
    """torch's error for a kernel that has no integer version: '"elu_cpu" not implemented for
    'Long''."""
    check_tensor(kernel, "input", input)
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"{kernel}_cpu" not implemented for '
                                  f"'{scalar_type(input.dtype)}'")


def as_operand(value) -> Tensor:
    """A tensor for a loss operand given as a tensor, a number or a nested list."""
    return value if isinstance(value, Tensor) else as_tensor(value)


def legacy_reduction(size_average, reduce, reduction: str, stacklevel: int = 3) -> str:
    """The reduction in effect: the one the deprecated (size_average, reduce) pair names, with
    torch's warning, when either is given; else `reduction`."""
    if size_average is None and reduce is None:
        return reduction
    size_average = True if size_average is None else size_average
    reduce = True if reduce is None else reduce
    reduction = "none" if not reduce else ("mean" if size_average else "sum")
    warnings.warn(f"size_average and reduce args will be deprecated, please use "
                  f"reduction='{reduction}' instead.", UserWarning, stacklevel=stacklevel + 1)
    return reduction


def check_reduction(reduction: str) -> None:
    """torch's error for a reduction other than 'none', 'mean' and 'sum'."""
    if reduction not in REDUCTIONS:
        raise ValueError(f"{reduction} is not a valid value for reduction")


def reduce_loss(loss: Tensor, reduction: str) -> Tensor:
    """The per-element loss, its mean or its sum; the mean of no elements is NaN, as in torch."""
    if reduction == "mean":
        return sum_(loss) / loss.numel()
    if reduction == "sum":
        return sum_(loss)
    return loss
