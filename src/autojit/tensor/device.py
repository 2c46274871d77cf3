"""Devices: `autojit.device("cpu")`, `device("cuda:0")`, the check of device= arguments, and
the runtimes of the devices other than the CPU.

A tensor's device is not stored: it follows from its data (an ndarray on the CPU, a CudaArray
from autojit/cuda/array.py on a GPU), see Tensor.device. `check_device` turns a device=
argument into a device, checking that CUDA is usable when it is asked for.

The tensor layer reaches a GPU only through the runtime its package registers here when it is
imported (autojit/cuda/runtime.py registers "cuda"): copying host data there, moving a tensor,
DLPack exchange. The runtime's package sits above this one and is never imported from it.
"""

from __future__ import annotations


class device:  # noqa: N801 - torch's name
    """A device such as ``device(type='cpu')``; compared by type and index."""

    __slots__ = ("type", "index")

    def __init__(self, type: str = "cpu", index: int | None = None):  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index  # noqa: A001
        if ":" in type:
            type, index_text = type.split(":", 1)  # noqa: A001
            index = int(index_text)
        if type not in ("cpu", "cuda"):
            raise RuntimeError("Expected one of cpu, cuda device type at start of device "
                               f"string: {type}")
        self.type = type
        self.index = index

    def __eq__(self, other):
        if isinstance(other, str):
            other = device(other)
        return isinstance(other, device) and (self.type, self.index) == (other.type, other.index)

    def __hash__(self):
        return hash((self.type, self.index))

    def __str__(self):
        return self.type if self.index is None else f"{self.type}:{self.index}"

    def __repr__(self):
        if self.index is None:
            return f"device(type='{self.type}')"
        return f"device(type='{self.type}', index={self.index})"


CPU = device("cpu")

RUNTIMES: dict = {}  # device type -> its runtime (a module), registered by its package


def register_runtime(device_type: str, runtime) -> None:
    """Make `runtime` the one tensors on `device_type` use (called by the device's package)."""
    RUNTIMES[device_type] = runtime


def runtime(device_type: str):
    """The registered runtime of a device type other than the CPU."""
    found = RUNTIMES.get(device_type)
    if found is None:
        raise RuntimeError(f"device '{device_type}' is not available: no runtime is registered "
                           "for it")
    return found


def cuda_device(index: int | None = 0) -> device:
    return device("cuda", index or 0)


def check_device(requested) -> device:
    """Validate a device= argument: None is the CPU; 'cuda' needs a GPU or the simulator."""
    if requested is None:
        return CPU
    if requested.__class__ is str and requested == "cpu":
        return CPU
    resolved = requested if isinstance(requested, device) else device(
        f"cuda:{requested}" if isinstance(requested, int) else requested)
    if resolved.type == "cuda":
        # Raises torch's "no NVIDIA driver" error where CUDA is unusable, or an invalid ordinal.
        runtime("cuda").check(resolved.index or 0)
        return cuda_device(resolved.index)
    return resolved
