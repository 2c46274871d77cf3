"""torch.nn.parallel.scatter_gather: the splitting of a batch over devices and the joining of
the results that DataParallel does, for libraries that call it themselves (captum splits its
inputs over the `device_ids` it is given).

`scatter` splits each tensor inside nested tuples, lists and dicts into one chunk per device
along `dim` (as torch.chunk does) and moves each chunk to its device, copying other objects
once per device; `gather` concatenates the per-device results along `dim` on one device
(-1 or "cpu": the CPU). Devices are CUDA devices (ints or "cuda:N"), as torch's, whose
functions raise for CPU tensors; autojit runs on one GPU (nn/data_parallel.py), so more than
one device in `target_gpus` raises.
"""

from __future__ import annotations

from ...ops.layout.joining import cat
from ...tensor.device import device as _device
from ...tensor.tensor import Tensor

__all__ = ["scatter", "scatter_kwargs", "gather"]


def _devices(target_gpus) -> list:
    devices = [_device("cuda", gpu) if isinstance(gpu, int) else _device(gpu)
               for gpu in target_gpus]
    if not devices:
        raise RuntimeError("scatter needs at least one CUDA device in target_gpus (got none)")
    if len(devices) > 1:
        raise NotImplementedError(
            f"scatter over {len(devices)} devices ({[str(d) for d in devices]}): autojit runs "
            "a module on one device only")
    return devices


def scatter(inputs, target_gpus, dim: int = 0):
    """`inputs` split over the devices: a list with one copy of its structure per device,
    each tensor replaced by its chunk there."""
    devices = _devices(target_gpus)

    def split(value):
        if isinstance(value, Tensor):
            chunks = value.chunk(len(devices), dim)
            return [chunk.to(device) for chunk, device in zip(chunks, devices)]
        if isinstance(value, tuple) and hasattr(value, "_fields") and value:
            return [type(value)(*items) for items in zip(*map(split, value))]
        if isinstance(value, (tuple, list)) and value:
            return [type(value)(items) for items in zip(*map(split, value))]
        if isinstance(value, dict) and value:
            return [type(value)(zip(value, items)) for items in zip(*map(split, value.values()))]
        return [value for _ in devices]

    try:
        return split(inputs)
    finally:
        split = None  # a closure over itself: no cycle left behind


def scatter_kwargs(inputs, kwargs, target_gpus, dim: int = 0) -> tuple:
    """`inputs` and `kwargs` scattered, each padded to as many entries as the other."""
    scattered = scatter(inputs, target_gpus, dim) if inputs else []
    scattered_kwargs = scatter(kwargs, target_gpus, dim) if kwargs else []
    if len(scattered) < len(scattered_kwargs):
        scattered.extend(() for _ in range(len(scattered_kwargs) - len(scattered)))
    elif len(scattered_kwargs) < len(scattered):
        scattered_kwargs.extend({} for _ in range(len(scattered) - len(scattered_kwargs)))
    return tuple(scattered), tuple(scattered_kwargs)


def gather(outputs, target_device, dim: int = 0):
    """The per-device `outputs` joined: tensors concatenated along `dim` on `target_device`,
    tuples, lists and dicts joined item by item."""
    device = _device("cpu") if target_device in (-1, "cpu") else (
        _device("cuda", target_device) if isinstance(target_device, int)
        else _device(target_device))

    def join(values):
        first = values[0]
        if isinstance(first, Tensor):
            if any(value.device.type == "cpu" for value in values):
                raise AssertionError("Gather function not implemented for CPU tensors")
            return cat([value.to(device) for value in values], dim)
        if first is None:
            return None
        if isinstance(first, dict):
            if not all(len(value) == len(first) for value in values):
                raise ValueError("All dicts must have the same number of keys")
            return type(first)((key, join([value[key] for value in values])) for key in first)
        if isinstance(first, tuple) and hasattr(first, "_fields"):
            return type(first)(*map(join, zip(*values)))
        return type(first)(map(join, zip(*values)))

    return join(outputs)
