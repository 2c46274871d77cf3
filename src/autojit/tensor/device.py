"""Devices: `autojit.device("cpu")`, `device("cuda:0")`, and the check of device= arguments.

A tensor's device is not stored: it follows from its data (an ndarray on the CPU, a CudaArray
from autojit/cuda/array.py on a GPU), see Tensor.device. `resolve` turns a device= argument
into a device, checking that CUDA is usable when it is asked for.
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
        from .. import cuda

        cuda.driver()  # raises torch's "no NVIDIA driver" error where CUDA is unusable
        count = cuda.device_count()
        if (resolved.index or 0) >= count:
            raise RuntimeError("CUDA error: invalid device ordinal")
        return cuda_device(resolved.index)
    return resolved
