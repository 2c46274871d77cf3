"""DataParallel: torch.nn.DataParallel, a module that runs its wrapped module on the batch
split over the devices it is given, on a machine with at most one device.

With no GPU, torch's DataParallel calls the module as it is (it has no device to use), and so
does this one, with torch's attributes (`module`, `device_ids == []`). With one GPU it moves
the module to it and the inputs too, as torch's does for one device. Several GPUs (autojit
has no multi-device replication) raise at construction. The wrapped module is the child
`module`, so state dicts have torch's `module.` prefix. autojit.nn re-exports it.
"""

from __future__ import annotations

from .. import cuda
from ..autograd.profiler import record_function
from ..tensor.device import device as _device
from ..tensor.tensor import Tensor
from .module import Module

__all__ = ["DataParallel"]


def _device_index(value) -> int:
    if isinstance(value, int):
        return value
    parsed = _device(value)
    return parsed.index if parsed.index is not None else cuda.current_device()


def _to_device(value, device):
    """Tensors in nested tuples, lists and dicts moved to `device` (a differentiable copy)."""
    if isinstance(value, Tensor):
        return value.to(device)
    if isinstance(value, tuple) and hasattr(value, "_fields"):  # a named tuple
        return type(value)(*(_to_device(item, device) for item in value))
    if isinstance(value, (tuple, list)):
        return type(value)(_to_device(item, device) for item in value)
    if isinstance(value, dict):
        return {key: _to_device(item, device) for key, item in value.items()}
    return value


class DataParallel(Module):
    """Runs `module` over the devices in `device_ids`, splitting inputs along `dim`.

    Without a GPU it calls `module` on the inputs unchanged (torch's behaviour where no device
    is available); with one GPU, on the inputs moved to that device.

        >>> import autojit
        >>> model = autojit.nn.DataParallel(autojit.nn.Linear(3, 2))
        >>> list(model.state_dict())
        ['module.weight', 'module.bias']
        >>> model(autojit.ones(4, 3)).shape
        autojit.Size([4, 2])
    """

    def __init__(self, module: Module, device_ids=None, output_device=None, dim: int = 0):
        super().__init__()
        if not cuda.is_available():
            self.module = module
            self.device_ids = []
            return
        if device_ids is None:
            device_ids = list(range(cuda.device_count()))
        if output_device is None:
            output_device = device_ids[0]
        self.dim = dim
        self.module = module
        self.device_ids = [_device_index(index) for index in device_ids]
        self.output_device = _device_index(output_device)
        if len(self.device_ids) > 1:
            raise NotImplementedError(
                f"DataParallel over {len(self.device_ids)} devices ({self.device_ids}): "
                "autojit replicates a module on one device only; pass device_ids=[0], or use "
                "autojit.nn.parallel.DistributedDataParallel with one process per device")
        self.src_device_obj = _device("cuda", self.device_ids[0])
        self.module.to(self.src_device_obj)

    def forward(self, *inputs, **kwargs):
        with record_function("DataParallel.forward"):
            if not self.device_ids:
                return self.module(*inputs, **kwargs)
            for tensor in (*self.module.parameters(), *self.module.buffers()):
                if tensor.device != self.src_device_obj:
                    raise RuntimeError(
                        "module must have its parameters and buffers on device "
                        f"{self.src_device_obj} (device_ids[0]) but found one of them on "
                        f"device: {tensor.device}")
            return self.module(*_to_device(inputs, self.src_device_obj),
                               **_to_device(kwargs, self.src_device_obj))
