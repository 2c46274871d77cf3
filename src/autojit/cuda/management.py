"""The rest of what training scripts and libraries call on torch.cuda around a device: its
errors (`torch.cuda.OutOfMemoryError`, which `except` clauses name), the device context
(`with torch.cuda.device(0):`, `device_of(tensor)`), whether CUDA is initialized, the compute
capability, the deprecated memory names (`memory_cached`, `reset_max_memory_allocated`) with
torch's FutureWarnings, a text summary of the allocator's counters, and `ipc_collect`, which
transformers calls between tests. Above properties.py and random.py, whose functions these
build on; autojit/cuda/__init__.py exports them.
"""

from __future__ import annotations

import warnings

from ..tensor.device import AcceleratorError, OutOfMemoryError  # noqa: F401 - torch.cuda's too
from .allocator import memory_stats, reset_counts
from .availability import device_count, driver, initialized
from .properties import (
    _index,
    get_device_properties,
    max_memory_reserved,
    memory_reserved,
    reset_peak_memory_stats,
)
from .random import get_rng_state, set_rng_state


class CudaError(RuntimeError):
    """torch.cuda.CudaError: a CUDA runtime error, with its code."""

    def __init__(self, code: int) -> None:
        super().__init__(f"CUDA error {code}")
        self.code = code


class DeferredCudaCallError(Exception):
    """torch.cuda.DeferredCudaCallError: a call queued before CUDA's initialization failed."""


def is_initialized() -> bool:
    """Whether CUDA has been set up in this process (by its first use)."""
    return initialized()


def init() -> None:
    """Set CUDA up now rather than at its first use (raises where there is no GPU)."""
    driver()


class device:  # noqa: N801 - torch's name
    """`with torch.cuda.device(index):` the current device inside (autojit runs on device 0;
    a negative index or None leaves it as it is, as torch's does)."""

    def __init__(self, device) -> None:
        index = getattr(device, "index", device)
        self.idx = -1 if index is None else index
        self.prev_idx = -1

    def __enter__(self):
        if self.idx >= 0:
            self.prev_idx = _index(self.idx)
        return self

    def __exit__(self, *exc) -> bool:
        return False


class device_of(device):  # noqa: N801 - torch's name
    """The device context of a tensor's device: a CPU tensor's leaves it as it is."""

    def __init__(self, obj) -> None:
        super().__init__(obj.get_device() if obj.is_cuda else -1)


def get_device_capability(device=None) -> tuple:
    """(major, minor) compute capability of the device."""
    properties = get_device_properties(device)
    return properties.major, properties.minor


def get_arch_list() -> list:
    """The architectures kernels are built for: the device's own (Numba compiles each kernel
    for the GPU it runs on), none without one."""
    if device_count() == 0:
        return []
    major, minor = get_device_capability()
    return [f"sm_{major}{minor}"]


def get_gencode_flags() -> str:
    """nvcc's -gencode flags of get_arch_list(), as torch formats them."""
    return " ".join(f"-gencode compute=compute_{arch[3:]},code={arch}"
                    for arch in get_arch_list())


def is_tf32_supported() -> bool:
    """False: autojit's CUDA products compute float32 in float32 (no TF32)."""
    return False


def get_rng_state_all() -> list:
    """Every CUDA device's default generator's state, in device order."""
    return [get_rng_state(index) for index in range(device_count())]


def set_rng_state_all(new_states) -> None:
    """Restore the states get_rng_state_all() gave, device by device."""
    for index, state in enumerate(new_states):
        set_rng_state(state, index)


def memory_cached(device=None) -> int:
    """Deprecated: memory_reserved()."""
    warnings.warn("`torch.cuda.memory_cached` has been renamed to `torch.cuda.memory_reserved`",
                  FutureWarning, stacklevel=2)
    return memory_reserved(device)


def max_memory_cached(device=None) -> int:
    """Deprecated: max_memory_reserved()."""
    warnings.warn("`torch.cuda.max_memory_cached` has been renamed to "
                  "`torch.cuda.max_memory_reserved`", FutureWarning, stacklevel=2)
    return max_memory_reserved(device)


def reset_max_memory_allocated(device=None) -> None:
    """Deprecated: reset_peak_memory_stats(), which resets every peak."""
    warnings.warn("torch.cuda.reset_max_memory_allocated now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def reset_max_memory_cached(device=None) -> None:
    """Deprecated: reset_peak_memory_stats(), which resets every peak."""
    warnings.warn("torch.cuda.reset_max_memory_cached now calls "
                  "torch.cuda.reset_peak_memory_stats, which resets /all/ peak memory stats.",
                  FutureWarning, stacklevel=2)
    reset_peak_memory_stats(device)


def reset_accumulated_memory_stats(device=None) -> None:
    """Start the allocator's counts of buffers allocated and reused from zero."""
    _index(device)
    reset_counts()


def memory_stats_as_nested_dict(device=None) -> dict:
    """The allocator's counters (memory_stats(); autojit's are not nested)."""
    return memory_stats()


def memory_summary(device=None, abbreviated: bool = False) -> str:
    """A readable table of the allocator's counters."""
    _index(device)
    stats = memory_stats()
    mebibyte = 1024 * 1024
    rows = (("memory allocated (in use)", f"{stats['in_use_bytes'] / mebibyte:.2f} MiB"),
            ("peak allocated", f"{stats['peak_in_use_bytes'] / mebibyte:.2f} MiB"),
            ("memory reserved (in use + cached)",
             f"{(stats['in_use_bytes'] + stats['cached_bytes']) / mebibyte:.2f} MiB"),
            ("peak reserved", f"{stats['peak_reserved_bytes'] / mebibyte:.2f} MiB"),
            ("buffers allocated", str(stats["allocated"])),
            ("allocations served from the cache", str(stats["reused"])))
    width = max(len(name) for name, _ in rows)
    lines = ["autojit CUDA memory summary, device 0", "-" * (width + 16)]
    lines += [f"{name:<{width}}  {value:>12}" for name, value in rows]
    return "\n".join(lines) + "\n"


def ipc_collect() -> None:
    """Free memory shared with other processes once they released it: autojit shares no CUDA
    memory between processes, so there is none to free (raises where there is no GPU)."""
    driver()
