"""LayerNorm, GroupNorm and BatchNorm1d/2d: normalization layers over functional/norm.py.

Affine weights start at ones and biases at zeros. Batch norm layers keep running_mean (zeros),
running_var (ones) and num_batches_tracked (an int64 count) as buffers, so they are saved in
state_dict and move with the module. In training mode forward normalizes by the batch
statistics and, with track_running_stats, counts the batch and updates the running statistics
in place; in eval mode it normalizes by the running statistics. momentum=None averages all
batches seen so far with equal weight: the factor 1 / num_batches_tracked is a tensor computed
from the count, so a compiled step reads no value and needs no guard on the count.
"""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..tensor import dtypes
from ..tensor.creation import empty, ones, tensor, zeros
from . import init
from .functional.norm import batch_norm, group_norm, layer_norm
from .module import Module
from .parameter import Parameter

__all__ = ["LayerNorm", "GroupNorm", "BatchNorm1d", "BatchNorm2d"]


class LayerNorm(Module):
    """Normalize over the trailing normalized_shape dims, then an elementwise affine map.

        >>> import autojit
        >>> norm = autojit.nn.LayerNorm(4)
        >>> norm
        LayerNorm((4,), eps=1e-05, elementwise_affine=True, bias=True)
        >>> norm(autojit.tensor([[1.0, 2.0, 3.0, 4.0]])).sum().abs().item() < 1e-6
        True
    """

    def __init__(self, normalized_shape, eps: float = 1e-5, elementwise_affine: bool = True,
                 bias: bool = True, device=None, dtype=None) -> None:
        super().__init__()
        if isinstance(normalized_shape, int):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(n) for n in normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, self.normalized_shape, elementwise_affine, bias, dtype, device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input):  # noqa: A002
        return layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


def _affine_parameters(module: Module, shape: tuple, affine: bool, bias: bool, dtype,
                       device) -> None:
    """Register weight and bias of `shape` (uninitialized: reset_parameters fills them), or
    None where the layer has none."""
    weight = Parameter(empty(shape, dtype=dtype, device=device)) if affine else None
    module.register_parameter("weight", weight)
    module.register_parameter("bias", Parameter(empty(shape, dtype=dtype, device=device))
                              if affine and bias else None)


def _reset_affine(module: Module) -> None:
    if module.weight is not None:
        init.ones_(module.weight)
    if module.bias is not None:
        init.zeros_(module.bias)


class GroupNorm(Module):
    """Normalize each group of num_channels / num_groups channels, then a per-channel affine."""

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        if num_channels % num_groups != 0:
            raise ValueError("num_channels must be divisible by num_groups")
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, (num_channels,), affine, bias, dtype, device)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input):  # noqa: A002
        return group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


class _NormBase(Module):
    """What the batch and instance norm layers share: their parameters, running statistics
    and repr (torch.nn.modules.batchnorm's base class, for isinstance checks)."""

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, device=None,
                 dtype=None, *, bias: bool = True) -> None:
        super().__init__()
        self.num_features = num_features
        self.eps = eps
        self.momentum = momentum
        self.affine = affine
        self.track_running_stats = track_running_stats
        _affine_parameters(self, (num_features,), affine, bias, dtype, device)
        if track_running_stats:
            self.register_buffer("running_mean", zeros(num_features, dtype=dtype,
                                                       device=device))
            self.register_buffer("running_var", ones(num_features, dtype=dtype, device=device))
            self.register_buffer("num_batches_tracked", tensor(0, dtype=dtypes.int64,
                                                               device=device))
        else:
            self.register_buffer("running_mean", None)
            self.register_buffer("running_var", None)
            self.register_buffer("num_batches_tracked", None)
        self.reset_parameters()

    def reset_running_stats(self) -> None:
        if self.track_running_stats:
            with no_grad():
                self.running_mean.zero_()
                self.running_var.fill_(1)
                self.num_batches_tracked.zero_()

    def reset_parameters(self) -> None:
        self.reset_running_stats()
        _reset_affine(self)

    def _check_input_dim(self, input) -> None:  # noqa: A002
        raise NotImplementedError

    def extra_repr(self) -> str:
        return (f"{self.num_features}, eps={self.eps}, momentum={self.momentum}, "
                f"affine={self.affine}, bias={self.bias is not None}, "
                f"track_running_stats={self.track_running_stats}")


class _BatchNorm(_NormBase):
    """What the batch norm layers share; subclasses check the input's number of dims."""

    def forward(self, input):  # noqa: A002
        self._check_input_dim(input)
        factor = self._count_batch()
        use_batch_statistics = self.training or (self.running_mean is None
                                                 and self.running_var is None)
        # The running statistics are read in eval mode and written only when tracked.
        update = not self.training or self.track_running_stats
        return batch_norm(input, self.running_mean if update else None,
                          self.running_var if update else None, self.weight, self.bias,
                          use_batch_statistics, factor, self.eps)

    def _count_batch(self):
        """Count a training batch in num_batches_tracked; the running statistics' factor."""
        factor = 0.0 if self.momentum is None else self.momentum
        if self.training and self.track_running_stats and self.num_batches_tracked is not None:
            with no_grad():
                self.num_batches_tracked.add_(1)
            if self.momentum is None:  # a cumulative average of every batch so far
                # torch's 1.0 / float(count), as a tensor op: reading the count as a Python
                # number would make a compiled step depend on a value that changes every call.
                statistics = self.running_mean if self.running_mean is not None else self.weight
                dtype = statistics.dtype if statistics is not None else dtypes.float32
                factor = 1.0 / self.num_batches_tracked.to(dtype)
        return factor


class BatchNorm1d(_BatchNorm):
    """Batch norm over (N, C) or (N, C, L) inputs, per channel C.

        >>> import autojit
        >>> norm = autojit.nn.BatchNorm1d(2)
        >>> norm
        BatchNorm1d(2, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
        >>> _ = norm(autojit.tensor([[5.0, 10.0], [15.0, 30.0]]))
        >>> norm.running_mean.tolist(), norm.num_batches_tracked.item()
        ([1.0, 2.0], 1)
    """

    def _check_input_dim(self, input) -> None:  # noqa: A002
        if input.ndim not in (2, 3):
            raise ValueError(f"expected 2D or 3D input (got {input.ndim}D input)")


class BatchNorm2d(_BatchNorm):
    """Batch norm over (N, C, H, W) inputs, per channel C."""

    def _check_input_dim(self, input) -> None:  # noqa: A002
        if input.ndim != 4:
            raise ValueError(f"expected 4D input (got {input.ndim}D input)")
