"""What programs ask of a CUDA device before and while they train, with torch.cuda's names: its
properties and free memory, the memory autojit's caching allocator holds (allocator.py) and its
peaks, the current device, and whether bfloat16 runs on it.

The memory counters count the buffers of the allocator: `memory_allocated` the bytes held by
live tensors, `memory_reserved` those plus the buffers cached for reuse, as torch's caching
allocator counts its blocks (sizes rounded as allocator.py rounds them). Without a GPU the
counters are 0, as torch's are before CUDA is initialized; what needs a device (its properties,
free memory, setting it, resetting the peaks) raises torch's error for a machine without one.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from .allocator import memory_stats, reset_peaks
from .availability import device_count, driver, is_simulator


def _index(device, out_of_range: Exception | None = None) -> int:
    """The device index a `device` argument names (None is the current device, 0), checked
    (`out_of_range` is torch's error for an index past the devices there are)."""
    index = getattr(device, "index", device)
    if isinstance(device, str):
        index = int(device.split(":")[1]) if ":" in device else None
    if getattr(device, "type", "cuda") != "cuda" or (isinstance(device, str)
                                                     and not device.startswith("cuda")):
        raise ValueError(f"Expected a cuda device, but got: {device}")
    index = 0 if index is None else index
    driver()  # torch's error where there is no GPU
    if not 0 <= index < device_count():
        raise out_of_range or AssertionError("Invalid device id")
    return index


def current_device() -> int:
    """The index of the current device: autojit runs CUDA tensors on device 0."""
    driver()
    return 0


def set_device(device) -> None:
    """Make `device` current; autojit runs on device 0, the only index it accepts."""
    index = _index(device, RuntimeError("CUDA error: invalid device ordinal"))
    if index != 0:
        raise RuntimeError(f"autojit runs on CUDA device 0; device index {index} is not "
                           "supported")


@dataclass(frozen=True)
class _CudaDeviceProperties:
    """What torch.cuda.get_device_properties tells: the device's name, compute capability,
    memory in bytes and multiprocessor count."""

    name: str
    major: int
    minor: int
    total_memory: int
    multi_processor_count: int

    def __repr__(self) -> str:
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // (1024 * 1024)}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def _host_memory() -> tuple:
    """(free, total) bytes of the host: the simulator's arrays live there."""
    page = os.sysconf("SC_PAGE_SIZE")
    return os.sysconf("SC_AVPHYS_PAGES") * page, os.sysconf("SC_PHYS_PAGES") * page


def mem_get_info(device=None) -> tuple:
    """(free, total) bytes of the device's memory, as the driver reports them."""
    _index(device)
    if is_simulator():
        return _host_memory()
    free, total = driver().current_context().get_memory_info()
    return int(free), int(total)


def get_device_properties(device=None) -> _CudaDeviceProperties:
    _index(device)
    found = driver()
    if is_simulator():
        return _CudaDeviceProperties("CUDA simulator", *found.current_context().device
                                     .compute_capability, _host_memory()[1], os.cpu_count())
    gpu = found.get_current_device()
    name = gpu.name.decode() if isinstance(gpu.name, bytes) else str(gpu.name)
    major, minor = gpu.compute_capability
    return _CudaDeviceProperties(name, major, minor, mem_get_info(device)[1],
                                 int(gpu.MULTIPROCESSOR_COUNT))


def is_bf16_supported(including_emulation: bool = True) -> bool:
    """False: autojit's CUDA runtime does not run bfloat16 (docs/notes/bfloat16.md)."""
    return False


def memory_allocated(device=None) -> int:
    """Bytes of device memory held by live tensors (0 before any is made)."""
    return memory_stats()["in_use_bytes"]


def max_memory_allocated(device=None) -> int:
    """The most memory_allocated has been since the start or reset_peak_memory_stats()."""
    return memory_stats()["peak_in_use_bytes"]


def memory_reserved(device=None) -> int:
    """Bytes the allocator holds: in use, and cached for reuse (empty_cache() frees these)."""
    stats = memory_stats()
    return stats["in_use_bytes"] + stats["cached_bytes"]


def max_memory_reserved(device=None) -> int:
    return memory_stats()["peak_reserved_bytes"]


def reset_peak_memory_stats(device=None) -> None:
    """Start max_memory_allocated and max_memory_reserved from the current values."""
    _index(device)
    reset_peaks()
