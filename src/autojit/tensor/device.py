"""Devices: `autojit.device("cpu")`, `device("cuda:0")`, the default device, the check of
device= arguments, the runtimes of the devices other than the CPU, and the errors a device
raises (OutOfMemoryError, AcceleratorError).

A tensor's device is not stored: it follows from its data (an ndarray on the CPU, a CudaArray
from autojit/cuda/array.py on a GPU), see Tensor.device. `check_device` turns a device=
argument into a device, checking that CUDA is usable when it is asked for; a factory given no
device gets the default device, which set_default_device sets and `with device(...):` sets
for a block (per thread, as torch's).

The tensor layer reaches a GPU only through the runtime its package registers here when it is
imported (autojit/cuda/runtime.py registers "cuda"): copying host data there, moving a tensor,
DLPack exchange. The runtime's package sits above this one and is never imported from it.
"""

from __future__ import annotations

from .state import state

# Eager's error for an op on CUDA tensors with a CPU tensor of one or more dimensions among
# its operands (cuda/eager.py), raised by a trace for a GPU too (ir/trace_devices.py).
MIXED_DEVICES = ("Expected all tensors to be on the same device, but found at least two "
                 "devices, {} and cpu!")


class OutOfMemoryError(RuntimeError):
    """torch.OutOfMemoryError (torch.cuda.OutOfMemoryError too): a device allocation that
    found no memory, even once the allocator's cached buffers were released."""


class AcceleratorError(RuntimeError):
    """torch.AcceleratorError: an error an accelerator's runtime reported."""


# The device types torch's device strings name, in its order. Tensors live on the CPU, on CUDA
# GPUs and on "meta" (shapes only); a device of another type can be made, compared and asked
# for (`x.device.type == "mps"`), and putting a tensor there raises torch's error for a torch
# built without that backend (check_device).
DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip", "ve",
                "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                "privateuseone")


class device:  # noqa: N801 - torch's name
    """A device such as ``device(type='cpu')``; compared by type and index."""

    __slots__ = ("type", "index")

    def __init__(self, type: str = "cpu", index: int | None = None):  # noqa: A002
        if isinstance(type, device):
            type, index = type.type, type.index  # noqa: A001
        if ":" in type:
            type, index_text = type.split(":", 1)  # noqa: A001
            index = int(index_text)
        if type not in DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(DEVICE_TYPES)} device type at start "
                               f"of device string: {type}")
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

    def __enter__(self):
        """`with autojit.device("cuda"):` makes this the default device of the block."""
        state.replaced_devices.append(state.default_device)
        state.default_device = self
        return self

    def __exit__(self, *exc):
        state.default_device = state.replaced_devices.pop()
        return False


CPU = device("cpu")


def _as_device(requested) -> device:
    if isinstance(requested, device):
        return requested
    if isinstance(requested, int) and not isinstance(requested, bool):
        return device("cuda", requested)
    return device(requested)


def set_default_device(requested) -> None:
    """Make `requested` (a device, a string, a CUDA index, or None for the CPU) the device of
    the tensors factories make when they are given no device=, in this thread."""
    state.default_device = None if requested is None else _as_device(requested)


def get_default_device() -> device:
    """The device factories put tensors on when they are given no device= (the CPU at first).

    >>> import autojit
    >>> autojit.get_default_device()
    device(type='cpu')
    """
    found = state.default_device
    if found is None:
        return CPU
    if found.type == "cuda":
        runtime("cuda").check(found.index or 0)
        return cuda_device(found.index)
    return found

RUNTIMES: dict = {}  # device type -> its runtime (a module), registered by its package
# device type -> a function importing the package that registers its runtime (the package
# loads on first use: autojit/__init__.py installs these).
RUNTIME_LOADERS: dict = {}


def register_runtime(device_type: str, runtime) -> None:
    """Make `runtime` the one tensors on `device_type` use (called by the device's package)."""
    RUNTIMES[device_type] = runtime


def runtime(device_type: str):
    """The registered runtime of a device type other than the CPU (its package imported
    first if it has not been)."""
    found = RUNTIMES.get(device_type)
    if found is None and device_type in RUNTIME_LOADERS:
        RUNTIME_LOADERS[device_type]()
        found = RUNTIMES.get(device_type)
    if found is None:
        raise RuntimeError(f"device '{device_type}' is not available: no runtime is registered "
                           "for it")
    return found


def cuda_device(index: int | None = 0) -> device:
    return device("cuda", index or 0)


def check_device(requested) -> device:
    """Validate a device= argument: None is the default device (the CPU unless
    set_default_device or `with device(...)` says otherwise); 'cuda' needs a GPU or the
    simulator."""
    if requested is None:
        requested = state.default_device
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
    if resolved.type == "meta":
        return runtime("meta").META  # tensor/meta.py: shapes and dtypes, no data
    if resolved.type != "cpu":
        raise RuntimeError(f"PyTorch is not linked with support for {resolved.type} devices")
    return resolved
