"""More normalization layers: BatchNorm3d, InstanceNorm1d/2d/3d, RMSNorm and
LocalResponseNorm, over functional/norm.py and functional/norm_extra.py.

The instance norm layers share the batch norm layers' parameters and buffers (affine=False
and track_running_stats=False by default, as in torch; num_batches_tracked is kept but, as in
torch, not counted). They take batched or unbatched inputs.
"""

from __future__ import annotations

import warnings

from ..tensor.creation import empty
from . import init
from .functional.norm_extra import instance_norm, local_response_norm, rms_norm
from .module import Module
from .normalization import _BatchNorm, _NormBase
from .parameter import Parameter

__all__ = ["BatchNorm3d", "InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d", "RMSNorm",
           "LocalResponseNorm"]


class BatchNorm3d(_BatchNorm):
    """Batch norm over (N, C, D, H, W) inputs, per channel C."""

    def _check_input_dim(self, input) -> None:  # noqa: A002
        if input.ndim != 5:
            raise ValueError(f"expected 5D input (got {input.ndim}D input)")


class _InstanceNorm(_NormBase):
    """What the instance norm layers share; _spatial is the number of spatial dims."""

    _spatial = 1

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = False, track_running_stats: bool = False, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def forward(self, input):  # noqa: A002
        batched_dims = self._spatial + 2
        if input.ndim not in (batched_dims - 1, batched_dims):
            raise ValueError(f"expected {batched_dims - 1}D or {batched_dims}D input (got "
                             f"{input.ndim}D input)")
        feature_dim = input.ndim - self._spatial - 1
        if input.shape[feature_dim] != self.num_features:
            if self.affine:
                raise ValueError(f"expected input's size at dim={feature_dim} to match "
                                 f"num_features ({self.num_features}), but got: "
                                 f"{input.shape[feature_dim]}.")
            warnings.warn(f"input's size at dim={feature_dim} does not match num_features. You "
                          "can silence this warning by not passing in num_features, which is "
                          "not used because affine=False", stacklevel=2)
        unbatched = input.ndim == batched_dims - 1
        x = input.unsqueeze(0) if unbatched else input
        result = instance_norm(x, self.running_mean, self.running_var, self.weight, self.bias,
                               self.training or not self.track_running_stats,
                               self.momentum if self.momentum is not None else 0.0, self.eps)
        return result.squeeze(0) if unbatched else result


class InstanceNorm1d(_InstanceNorm):
    """Normalize each channel of each sample of (N, C, L) or (C, L) over L."""

    _spatial = 1


class InstanceNorm2d(_InstanceNorm):
    """Normalize each channel of each sample of (N, C, H, W) or (C, H, W) over H and W."""

    _spatial = 2


class InstanceNorm3d(_InstanceNorm):
    """Normalize each channel of each sample of (N, C, D, H, W) or (C, D, H, W)."""

    _spatial = 3


class RMSNorm(Module):
    """Divide by the root mean square over the trailing normalized_shape dims, then scale.

        >>> import autojit
        >>> autojit.nn.RMSNorm(2)
        RMSNorm((2,), eps=None, elementwise_affine=True)
    """

    def __init__(self, normalized_shape, eps=None, elementwise_affine: bool = True,
                 device=None, dtype=None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(n) for n in normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        if elementwise_affine:
            self.weight = Parameter(empty(self.normalized_shape, dtype=dtype, device=device))
        else:
            self.register_parameter("weight", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        if self.weight is not None:
            init.ones_(self.weight)

    def forward(self, input):  # noqa: A002
        return rms_norm(input, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}")


class LocalResponseNorm(Module):
    """Divide each channel by a power of the mean square over `size` neighbouring channels."""

    def __init__(self, size: int, alpha: float = 1e-4, beta: float = 0.75,
                 k: float = 1.0) -> None:
        super().__init__()
        self.size = size
        self.alpha = alpha
        self.beta = beta
        self.k = k

    def forward(self, input):  # noqa: A002
        return local_response_norm(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self) -> str:
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
