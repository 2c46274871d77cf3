"""The channel-wise and self-normalizing dropouts of autojit.nn.functional: dropout1d,
dropout2d, dropout3d, alpha_dropout and feature_alpha_dropout (layer_functions.py holds the
elementwise dropout).

A channel-wise dropout draws one keep-or-drop per (sample, channel) and broadcasts it over the
spatial dims; alpha dropout sets the dropped values to SELU's negative saturation and applies
the affine correction a * x + b that keeps a unit-normal input's mean and variance, as torch's
kernel does. The draws come from autojit's global generator (compiled: a "random" graph input
drawn anew on every call); they need not match torch's stream. In evaluation, or with p = 0,
every function returns its input.
"""

from __future__ import annotations

import math
import warnings

from ...ops.random import bernoulli_noise
from ...tensor.creation import zeros
from ...tensor.tensor import Tensor
from ..layer_functions import check_dropout_dtype
from .common import check_tensor

__all__ = ["dropout1d", "dropout2d", "dropout3d", "alpha_dropout", "feature_alpha_dropout"]

# -SELU_SCALE * SELU_ALPHA, the value SELU saturates to; torch's constant.
_ALPHA_PRIME = 1.7580993408473766


def _check_probability(p: float) -> None:
    if p < 0.0 or p > 1.0:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")


def _noise(input: Tensor, p: float, feature: bool) -> Tensor:  # noqa: A002
    """1 where an element (or a whole channel, with feature) is kept, 0 where dropped."""
    shape = tuple(input.shape)
    if feature:
        shape = shape[:2] + (1,) * (len(shape) - 2)
    return bernoulli_noise(shape, input.dtype, 1 - p, input.device)


def _dropout(input: Tensor, p: float, training: bool, inplace: bool, *,  # noqa: A002
             feature: bool, alpha: bool) -> Tensor:
    """torch's _dropout_impl: the plain or alpha dropout of elements or channels."""
    if p == 0 or not training or input.numel() == 0:
        return input
    if p == 1:
        # torch's zeros of the input's dtype (a bool input stays bool)
        scale = zeros((), dtype=input.dtype, device=input.device)
        return input.mul_(scale) if inplace else input * scale
    check_dropout_dtype(input, alpha)
    noise = _noise(input, p, feature)
    if not alpha:
        scale = noise / (1.0 - p)  # torch's noise.div_(1 - p)
        return input.mul_(scale) if inplace else input * scale
    a = 1.0 / math.sqrt((_ALPHA_PRIME * _ALPHA_PRIME * p + 1) * (1 - p))
    shift = (noise - 1) * (_ALPHA_PRIME * a) + _ALPHA_PRIME * a * p
    if inplace:
        return input.mul_(noise * a).add_(shift)
    return input * (noise * a) + shift


def _channel_dropout(name: str, input: Tensor, p: float, training: bool,  # noqa: A002
                     inplace: bool, batched: bool) -> Tensor:
    check_tensor(name, "input", input)
    _check_probability(p)
    if batched:
        return _dropout(input, p, training, inplace, feature=True, alpha=False)
    # An unbatched input is one sample: its channels are dim 0.
    result = _dropout(input.unsqueeze(0), p, training, False, feature=True, alpha=False)
    result = result.squeeze(0)
    if inplace and result is not input:
        return input.copy_(result)
    return result


def dropout1d(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """Zero whole channels of a (N, C, L) or (C, L) input with probability p; scale the rest by
    1 / (1 - p)."""
    _check_probability(p)
    if input.ndim not in (2, 3):
        raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D "
                           "input. Note that dropout1d exists to provide channel-wise dropout "
                           "on inputs with 1 spatial dimension, a channel dimension, and an "
                           "optional batch dimension (i.e. 2D or 3D inputs).")
    return _channel_dropout("dropout1d", input, p, training, inplace, input.ndim == 3)


def dropout2d(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """Zero whole channels of a (N, C, H, W) or (C, H, W) input with probability p; scale the
    rest by 1 / (1 - p). A 3-D input is read as (N, C, L), with torch's warning."""
    _check_probability(p)
    if input.ndim not in (3, 4):
        warnings.warn(f"dropout2d: Received a {input.ndim}-D input to dropout2d, which is "
                      "deprecated and will result in an error in a future release. To retain "
                      "the behavior and silence this warning, please use dropout instead. Note "
                      "that dropout2d exists to provide channel-wise dropout on inputs with 2 "
                      "spatial dimensions, a channel dimension, and an optional batch "
                      "dimension (i.e. 3D or 4D inputs).", UserWarning, stacklevel=2)
    if input.ndim == 3:
        warnings.warn("dropout2d: Received a 3D input to dropout2d and assuming that "
                      "channel-wise 1D dropout behavior is desired - input is interpreted as "
                      "shape (N, C, L), where C is the channel dim. This behavior will change "
                      "in a future release to interpret the input as one without a batch "
                      "dimension, i.e. shape (C, H, W). To maintain the 1D channel-wise dropout "
                      "behavior, please switch to using dropout1d instead.", UserWarning,
                      stacklevel=2)
    return _channel_dropout("dropout2d", input, p, training, inplace, True)


def dropout3d(input: Tensor, p: float = 0.5, training: bool = True,  # noqa: A002
              inplace: bool = False) -> Tensor:
    """Zero whole channels of a (N, C, D, H, W) or (C, D, H, W) input with probability p; scale
    the rest by 1 / (1 - p)."""
    _check_probability(p)
    if input.ndim not in (4, 5):
        warnings.warn(f"dropout3d: Received a {input.ndim}-D input to dropout3d, which is "
                      "deprecated and will result in an error in a future release. To retain "
                      "the behavior and silence this warning, please use dropout instead. Note "
                      "that dropout3d exists to provide channel-wise dropout on inputs with 3 "
                      "spatial dimensions, a channel dimension, and an optional batch "
                      "dimension (i.e. 4D or 5D inputs).", UserWarning, stacklevel=2)
    return _channel_dropout("dropout3d", input, p, training, inplace, input.ndim == 5)


def alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,  # noqa: A002
                  inplace: bool = False) -> Tensor:
    """Set elements to SELU's saturation value with probability p, then correct the mean and
    variance of a unit-normal input (for self-normalizing networks)."""
    check_tensor("alpha_dropout", "input", input)
    _check_probability(p)
    return _dropout(input, p, training, inplace, feature=False, alpha=True)


def feature_alpha_dropout(input: Tensor, p: float = 0.5, training: bool = False,  # noqa: A002
                          inplace: bool = False) -> Tensor:
    """alpha_dropout of whole channels (dim 1)."""
    check_tensor("feature_alpha_dropout", "input", input)
    _check_probability(p)
    return _dropout(input, p, training, inplace, feature=True, alpha=True)
