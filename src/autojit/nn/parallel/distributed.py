"""DistributedDataParallel, at torch.nn.parallel.distributed's path: a module replicated in
every process of a process group, each process training it on its share of the batch.

At construction, the parameters and buffers of rank 0 are broadcast to every process, so all
start equal. Each forward runs the wrapped module (`ddp.module`) on this process's inputs, after
broadcasting rank 0's buffers when `forward_sync_buffers` (a BatchNorm's running statistics);
the backward that follows averages every gradient over the processes, bucket by bucket, while it
runs (reducer.py). So after `optimizer.step()` every process holds the same parameters, those
one process would reach on the combined batch. Inside autojit.compile the same step compiles to
one executable whose graph holds the all-reduces, overlapped with the rest of the backward
(docs/distributed.md, docs/notes/distributed.md).
"""

from __future__ import annotations

import contextlib
import warnings

from ... import distributed as dist
from ...autograd import is_grad_enabled
from ..module import Module
from .reducer import DEFAULT_BUCKET_CAP_MB, DEFAULT_FIRST_BUCKET_BYTES, Reducer

_MB = 1024 * 1024


class DistributedDataParallel(Module):
    """Data parallelism over a process group: wrap the model once every process has called
    `autojit.distributed.init_process_group()`, then train the wrapper as the model.

    bucket_cap_mb: the size of the gradient buckets (25 MiB; the first holds 1 MiB unless
    given); find_unused_parameters: find the parameters a forward did not use, so that the
    backward does not wait for their gradients; gradient_as_bucket_view: the .grads become
    views of the averaged buckets (no copy); forward_sync_buffers (broadcast_buffers, deprecated
    in torch): broadcast rank 0's buffers before each forward; init_sync: broadcast rank 0's
    parameters and buffers now. `no_sync()` accumulates gradients locally.
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0,
                 broadcast_buffers=None, init_sync: bool = True, process_group=None,
                 bucket_cap_mb=None, find_unused_parameters: bool = False,
                 check_reduction: bool = False, gradient_as_bucket_view: bool = False,
                 static_graph: bool = False, delay_all_reduce_named_params=None,
                 param_to_hook_all_reduce=None, mixed_precision=None, device_mesh=None,
                 skip_all_reduce_unused_params: bool = False, bucket_cap_mb_list=None,
                 batched_grad_copy: bool = False, forward_sync_buffers=None):
        super().__init__()
        for name, value in (("delay_all_reduce_named_params", delay_all_reduce_named_params),
                            ("param_to_hook_all_reduce", param_to_hook_all_reduce),
                            ("mixed_precision", mixed_precision), ("device_mesh", device_mesh)):
            if value is not None:
                raise NotImplementedError(f"DistributedDataParallel: {name} is not supported "
                                          "by autojit yet")
        if check_reduction:
            warnings.warn("The `check_reduction` argument in `DistributedDataParallel` module "
                          "is deprecated. Please avoid using it.", FutureWarning, stacklevel=2)
        self.process_group = dist.process_group.default_group() if process_group is None \
            else process_group
        ignored = set(getattr(module, "_ddp_params_and_buffers_to_ignore", ()))
        self.parameters_to_ignore = ignored
        self._module_parameters = [param for name, param in module.named_parameters()
                                   if name not in ignored]
        if not any(param.requires_grad for param in self._module_parameters):
            raise RuntimeError("DistributedDataParallel is not needed when a module doesn't "
                               "have any parameter that requires a gradient.")
        if device_ids is not None and len(device_ids) > 1:
            raise ValueError("device_ids can only be None or contain a single element.")
        device_types = {param.device.type for param in self._module_parameters}
        if len(device_types) != 1:
            raise ValueError("DistributedDataParallel's input module must be on the same type "
                             f"of devices, but input module parameters locate in "
                             f"{device_types}.")
        self.device_type = next(iter(device_types))
        self.device_ids = None if not device_ids or self.device_type == "cpu" else \
            list(device_ids)
        self.output_device = output_device
        self.dim = dim
        self.module = module
        self.device = self._module_parameters[0].device
        if broadcast_buffers is not None and forward_sync_buffers is None:
            warnings.warn("`broadcast_buffers` is deprecated. Use `forward_sync_buffers` "
                          "instead.", FutureWarning, stacklevel=2)
        init_sync_buffers = True
        if forward_sync_buffers is not None:
            self.forward_sync_buffers = bool(forward_sync_buffers)
        else:
            self.forward_sync_buffers = True if broadcast_buffers is None else \
                bool(broadcast_buffers)
            init_sync_buffers = self.forward_sync_buffers
        self.find_unused_parameters = find_unused_parameters
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.static_graph = static_graph
        self.require_backward_grad_sync = True
        self.require_forward_param_sync = True
        self.skip_all_reduce_unused_params = skip_all_reduce_unused_params
        self.bucket_bytes_cap = int((DEFAULT_BUCKET_CAP_MB if bucket_cap_mb is None
                                     else bucket_cap_mb) * _MB)
        if bucket_cap_mb_list:
            caps = [int(cap * _MB) for cap in bucket_cap_mb_list]
        elif bucket_cap_mb is None:
            caps = [DEFAULT_FIRST_BUCKET_BYTES, self.bucket_bytes_cap]
        else:
            caps = [self.bucket_bytes_cap]
        trained = [param for param in self._module_parameters if param.requires_grad]
        if init_sync:
            self._verify_shapes(trained)
            self._broadcast([*self._module_parameters,
                             *(self._buffers_to_sync() if init_sync_buffers else [])])
        self.reducer = Reducer(trained, self.process_group, caps, find_unused_parameters,
                               gradient_as_bucket_view)

    # ---- construction ------------------------------------------------------------------

    def _verify_shapes(self, params: list) -> None:
        """Every process must wrap the same model: the shapes and dtypes of its parameters are
        compared (torch's _verify_param_shape_across_processes)."""
        mine = [(tuple(param.shape), str(param.dtype)) for param in params]
        everyone = [None] * dist.get_world_size(self.process_group)
        dist.all_gather_object(everyone, mine, group=self.process_group)
        for rank, theirs in enumerate(everyone):
            if theirs != mine:
                raise RuntimeError(
                    f"DDP expects same model across all ranks, but Rank "
                    f"{dist.get_rank(self.process_group)} has {len(mine)} params, while rank "
                    f"{rank} has inconsistent {len(theirs)} params (shapes and dtypes "
                    f"{mine} against {theirs}).")

    def _buffers_to_sync(self) -> list:
        return [buffer for name, buffer in self.module.named_buffers()
                if name not in self.parameters_to_ignore and buffer is not None]

    def _broadcast(self, tensors: list) -> None:
        """Rank 0's values of `tensors` into every process's, in place."""
        if dist.get_world_size(self.process_group) == 1:
            return
        source = dist.get_global_rank(self.process_group, 0)
        works = [dist.broadcast(tensor.detach(), src=source, group=self.process_group,
                                async_op=True) for tensor in tensors]
        for work in works:
            work.wait()

    # ---- training ----------------------------------------------------------------------

    def forward(self, *inputs, **kwargs):
        reducer = self.reducer
        sync = is_grad_enabled() and self.require_backward_grad_sync
        if sync:
            reducer.ensure_prior_reduction_finished()
        if self.forward_sync_buffers:
            self._broadcast(self._buffers_to_sync())
        output = self.module(*inputs, **kwargs)
        if sync:
            self.require_forward_param_sync = True
            reducer.prepare_for_backward(output)
        else:
            self.require_forward_param_sync = False
            reducer.skip_backward()
        return output

    @contextlib.contextmanager
    def no_sync(self):
        """Accumulate gradients in each process without averaging them: the backward of a
        forward run inside this context does not synchronize; the first one after it averages
        everything accumulated.

        >>> # with ddp.no_sync():
        >>> #     for x in micro_batches[:-1]:
        >>> #         loss_fn(ddp(x)).backward()      # local accumulation
        >>> # loss_fn(ddp(micro_batches[-1])).backward()  # averaged here
        """
        previous = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = previous

    def train(self, mode: bool = True):
        super().train(mode)
        return self


__all__ = ["DistributedDataParallel"]
