"""The softmax family as ops: softmax and log_softmax over a dim (autojit.softmax,
Tensor.softmax, ...), with an optional dtype the input is converted to first.

Composites computed around the maximum along `dim` (detached: the result does not depend on
the shift), so exp never overflows; a dim with no entries gives an empty result. nn.functional
(softmax, log_softmax, softmin, cross_entropy) builds on these, adding the implicit-dim rule
of its older signature.
"""

from __future__ import annotations

from ..tensor import dtypes
from ..tensor.tensor import Tensor, normalize_dim
from . import elementwise as ew
from .autocast import FP32_SET_OPT_DTYPE, autocast_op, float32_inside
from .composite import reduces_nothing
from .elementwise_math import not_implemented, tensor_argument
from .reduction import amax, sum_


def _floating_input(name: str, input, dim: int, dtype) -> Tensor:  # noqa: A002 - torch's names
    input = tensor_argument(input, name, "input", 1)
    if dtype is not None:
        input = input.to(dtypes.to_dtype(dtype))
    if not input.dtype.is_floating_point:
        last = input.ndim == 0 or normalize_dim(dim, input.ndim) == input.ndim - 1
        raise not_implemented(f"{name}_{'lastdim_' if last else ''}kernel_impl", input.dtype)
    return input


def _shifted(input: Tensor, dim: int) -> Tensor:  # noqa: A002
    # The max is detached: softmax does not depend on the shift, so no gradient flows through it.
    if reduces_nothing(input, (dim,)):
        return input  # no entries along dim: the result is empty, with nothing to shift
    return input - amax(input, dim, keepdim=True).detach()


@autocast_op(cuda=FP32_SET_OPT_DTYPE)
@float32_inside()
def softmax(input, dim: int, dtype=None) -> Tensor:  # noqa: A002
    """Softmax over `dim`, `exp(x) / sum(exp(x))`, computed around the maximum (no overflow)."""
    input = _floating_input("softmax", input, dim, dtype)
    dim = normalize_dim(dim, input.ndim)
    if input.ndim == 0:  # a single element along dim: reduce it as a length-1 vector
        return softmax(input.reshape(1), 0).reshape(())
    exponentials = ew.exp(_shifted(input, dim))
    return exponentials / sum_(exponentials, dim, keepdim=True)


@autocast_op(cuda=FP32_SET_OPT_DTYPE)
def log_softmax(input, dim: int, dtype=None) -> Tensor:  # noqa: A002
    """Log of softmax over `dim`, `x - logsumexp(x)`, computed around the maximum."""
    input = _floating_input("log_softmax", input, dim, dtype)
    dim = normalize_dim(dim, input.ndim)
    if input.ndim == 0:
        return log_softmax(input.reshape(1), 0).reshape(())
    shifted = _shifted(input, dim)
    return shifted - ew.log(sum_(ew.exp(shifted), dim, keepdim=True))
