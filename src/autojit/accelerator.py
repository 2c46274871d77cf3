"""autojit.accelerator: the device-neutral questions torch.accelerator answers, for autojit's one
kind of accelerator, a CUDA GPU (autojit.cuda; Numba's CUDA simulator counts as one).

A program asks these before it starts (`device = autojit.accelerator.current_accelerator()`),
so each answer is the truth for this process: no GPU, no accelerator.
"""

from __future__ import annotations

from . import cuda
from .tensor.device import device as _device

__all__ = ["current_accelerator", "current_device_index", "device_count", "is_available",
           "set_device_index", "synchronize"]


def is_available() -> bool:
    """Whether an accelerator (a CUDA GPU) can run tensors here."""
    return cuda.is_available()


def current_accelerator(check_available: bool = False):
    """The accelerator's device type, `device(type='cuda')`, or None when there is none."""
    return _device("cuda") if cuda.is_available() else None


def device_count() -> int:
    """How many accelerator devices there are (0 without one)."""
    return cuda.device_count()


def _require() -> None:
    if not cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")


def current_device_index() -> int:
    """The index of the current accelerator device (autojit uses device 0)."""
    _require()
    return cuda.current_device()


def set_device_index(device) -> None:  # noqa: A002 - torch's name
    """Make `device` current: autojit runs on device 0, the only index it accepts."""
    _require()
    index = device.index if isinstance(device, _device) else device
    if index not in (None, 0):
        raise RuntimeError(f"autojit runs on CUDA device 0; device index {index} is not "
                           "supported")


def synchronize(device=None) -> None:  # noqa: A002 - torch's name
    """Wait for the accelerator's kernels to finish (nothing to wait for without one)."""
    if cuda.is_available():
        cuda.synchronize()


def get_device_module(device=None):
    """The module of a device type (torch.get_device_module): `autojit.cuda` for "cuda",
    `autojit.cpu` for "cpu"; the accelerator's, or the CPU's without one, for None."""
    import importlib

    if isinstance(device, _device):
        name = device.type
    elif isinstance(device, str):
        name = _device(device).type
    elif device is None:
        accelerator = current_accelerator()
        name = "cpu" if accelerator is None else accelerator.type
    else:
        raise RuntimeError(f"Invalid value of device '{device}', expect torch.device, str, or "
                           "None")
    package = __name__.rpartition(".")[0]
    try:
        return importlib.import_module(f"{package}.{name}")
    except ImportError:
        raise RuntimeError(f"Device '{name}' does not have a corresponding module registered "
                           f"as 'torch.{name}'.") from None
