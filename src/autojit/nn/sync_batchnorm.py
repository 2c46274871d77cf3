"""SyncBatchNorm: batch norm whose training statistics are those of the whole batch spread over
the processes of a group (autojit.distributed), torch.nn.SyncBatchNorm's layer.

In training, with a process group of more than one process, each process sums its channels
and counts its values, an all_reduce adds them up, and the centered squares are summed the
same way: every process normalizes by the mean and biased variance of the union of the
batches and moves its running statistics towards that mean and unbiased variance. The
all_reduce is the differentiable one (distributed/nn/functional.py), whose gradient is the
all_reduce of the gradients, so the input's gradient is that of batch norm over the union
batch, as torch's hand-written backward gives; it runs eagerly and compiled alike. Otherwise
(eval mode, no group initialized, a group of one) it is BatchNorm. Unlike torch's, any device
synchronizes (torch's requires an accelerator).
"""

from __future__ import annotations

from ..autograd.grad_mode import no_grad
from ..distributed import process_group as groups
from ..distributed.nn.functional import all_reduce
from ..ops.composite import rsqrt
from ..ops.layout import cat
from ..tensor.creation import tensor
from ..tensor.tensor import Tensor
from .functional.norm import batch_norm
from .normalization import _BatchNorm

__all__ = ["SyncBatchNorm"]


def _sync_batch_norm(input: Tensor, weight, bias, running_mean, running_var,  # noqa: A002
                     eps: float, factor, group) -> Tensor:
    """Batch norm of `input` by the statistics of every process's batch in `group`."""
    channels = input.shape[1]
    dims = (0, *range(2, input.ndim))
    shape = (1, channels) + (1,) * (input.ndim - 2)
    count = tensor([input.numel() // channels], dtype=input.dtype, device=input.device)
    totals = all_reduce(cat([input.sum(dims), count]), group=group)
    total_count = totals[channels]
    mean = totals[:channels] / total_count
    centered = input - mean.reshape(shape)
    variance = all_reduce((centered * centered).sum(dims), group=group) / total_count
    if running_mean is not None or running_var is not None:
        with no_grad():
            if running_mean is not None:
                running_mean.copy_(running_mean * (1 - factor)
                                   + mean.to(running_mean.dtype) * factor)
            if running_var is not None:
                unbiased = variance * total_count / (total_count - 1)
                running_var.copy_(running_var * (1 - factor)
                                  + unbiased.to(running_var.dtype) * factor)
    result = centered * rsqrt(variance + eps).reshape(shape)
    if weight is not None:
        result = result * weight.reshape(shape)
    if bias is not None:
        result = result + bias.reshape(shape)
    return result


class SyncBatchNorm(_BatchNorm):
    """Batch norm over (N, C, *) inputs whose training statistics are those of the batches of
    every process of `process_group` (the default group when None).

        >>> import autojit
        >>> autojit.nn.SyncBatchNorm(3)
        SyncBatchNorm(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)
    """

    def __init__(self, num_features: int, eps: float = 1e-5, momentum: float | None = 0.1,
                 affine: bool = True, track_running_stats: bool = True, process_group=None,
                 device=None, dtype=None, *, bias: bool = True) -> None:
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)
        self.process_group = process_group

    def _check_input_dim(self, input) -> None:  # noqa: A002
        if input.dim() < 2:
            raise ValueError(f"expected at least 2D input (got {input.dim()}D input)")

    def _check_non_zero_input_channels(self, input) -> None:  # noqa: A002
        if input.size(1) == 0:
            raise ValueError("SyncBatchNorm number of input channels should be non-zero")

    def forward(self, input):  # noqa: A002
        self._check_input_dim(input)
        self._check_non_zero_input_channels(input)
        factor = self._count_batch()
        use_batch_statistics = self.training or (self.running_mean is None
                                                 and self.running_var is None)
        update = not self.training or self.track_running_stats
        running_mean = self.running_mean if update else None
        running_var = self.running_var if update else None
        group = None
        if use_batch_statistics and self.training and groups.is_initialized():
            group = self.process_group if self.process_group else groups.group.WORLD
            if groups.get_world_size(group) <= 1:
                group = None
        if group is None:
            return batch_norm(input, running_mean, running_var, self.weight, self.bias,
                              use_batch_statistics, factor, self.eps)
        return _sync_batch_norm(input, self.weight, self.bias, running_mean, running_var,
                                self.eps, factor, group)

    @classmethod
    def convert_sync_batchnorm(cls, module, process_group=None):
        """`module` with every batch norm layer in it (itself included) replaced by a
        SyncBatchNorm that shares its parameters and buffers."""
        converted = module
        if isinstance(module, _BatchNorm):
            converted = SyncBatchNorm(module.num_features, module.eps, module.momentum,
                                      module.affine, module.track_running_stats, process_group,
                                      bias=module.bias is not None)
            if module.affine:
                with no_grad():
                    converted.weight = module.weight
                    converted.bias = module.bias
            converted.running_mean = module.running_mean
            converted.running_var = module.running_var
            converted.num_batches_tracked = module.num_batches_tracked
            converted.training = module.training
            if hasattr(module, "qconfig"):
                converted.qconfig = module.qconfig
        for name, child in module.named_children():
            converted.add_module(name, cls.convert_sync_batchnorm(child, process_group))
        del module
        return converted
