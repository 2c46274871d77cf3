"""The caching allocator behind CudaArray (array.py): device buffers pooled for reuse.

A freed CudaArray returns its buffer to a pool keyed by (dtype, rounded element count), and the
next allocation of that size reuses it, so a training step that allocates the same buffers
every call allocates nothing after the first. `autojit.cuda.empty_cache()` drops the pool; its
counters are `autojit.cuda.memory_stats()` and the memory figures of properties.py. See
docs/notes/cuda.md.
"""

from __future__ import annotations

import numpy as np

from ..tensor.device import OutOfMemoryError
from .availability import driver

_CUDA_ERROR_OUT_OF_MEMORY = 2  # the driver API's code

_POOL: dict = {}  # (dtype, capacity) -> [flat device arrays]
# id -> buffer, for each buffer a live CudaArray owns. A buffer stays reachable from here until
# its array's __del__ hands it to the pool: were it reachable only from its array, a cycle
# collected with the array in it would take the buffer too, and numba's own finalizers (its
# OwnedPointer's weakref.finalize) would free the device memory before __del__ put the buffer
# in the pool, which the next allocation of that size would then use.
_IN_USE: dict = {}
# allocated/reused: buffers taken new or from the pool; cached_bytes: held in the pool;
# in_use_bytes: held by live arrays (torch's memory_allocated), and the peaks of in_use_bytes
# and of in_use_bytes + cached_bytes (torch's memory_reserved) since reset_peaks().
_STATS = {"allocated": 0, "reused": 0, "cached_bytes": 0, "in_use_bytes": 0,
          "peak_in_use_bytes": 0, "peak_reserved_bytes": 0}


def _capacity(count: int) -> int:
    """Round an element count up so that buffers of nearby sizes share a pool slot."""
    if count <= 64:
        return 64
    bits = (count - 1).bit_length()
    step = 1 << max(bits - 3, 0)  # eight slots per power of two: at most 12.5% waste
    return (count + step - 1) // step * step


def take(dtype: np.dtype, count: int):
    """A flat device buffer of at least `count` elements of `dtype`, from the pool when one of
    that size is there."""
    key = (dtype, _capacity(count))
    size = key[1] * dtype.itemsize
    free = _POOL.get(key)
    if free:
        _STATS["reused"] += 1
        _STATS["cached_bytes"] -= size
        buffer = free.pop()
    else:
        buffer = _allocate(key[1], dtype, size)
        _STATS["allocated"] += 1
    _IN_USE[id(buffer)] = buffer
    _STATS["in_use_bytes"] += size
    _STATS["peak_in_use_bytes"] = max(_STATS["peak_in_use_bytes"], _STATS["in_use_bytes"])
    _STATS["peak_reserved_bytes"] = max(_STATS["peak_reserved_bytes"],
                                        _STATS["in_use_bytes"] + _STATS["cached_bytes"])
    return buffer


def _allocate(count: int, dtype: np.dtype, size: int):
    """A new device buffer; where the device is out of memory, the cached buffers are released
    and the allocation tried again, and OutOfMemoryError raised if it still fails, as torch's
    caching allocator does."""
    cuda = driver()
    for attempt in (0, 1):
        try:
            return cuda.device_array(count, dtype)
        except Exception as error:  # numba's CudaAPIError; its code says out of memory
            if getattr(error, "code", None) != _CUDA_ERROR_OUT_OF_MEMORY:
                raise
            if attempt:
                reserved = _STATS["in_use_bytes"] + _STATS["cached_bytes"]
                raise OutOfMemoryError(
                    f"CUDA out of memory. Tried to allocate {size / 2 ** 20:.2f} MiB. Of the "
                    f"allocated memory {_STATS['in_use_bytes'] / 2 ** 20:.2f} MiB is held by "
                    f"tensors and {reserved / 2 ** 20:.2f} MiB is reserved by autojit's "
                    "allocator.") from error
            empty_cache()
    raise AssertionError("unreachable")


def give_back(buffer, dtype: np.dtype) -> None:
    """Return a buffer `take` gave (its array died) to the pool."""
    _IN_USE.pop(id(buffer), None)
    key = (dtype, buffer.shape[0])
    _POOL.setdefault(key, []).append(buffer)
    size = key[1] * dtype.itemsize
    _STATS["cached_bytes"] += size
    _STATS["in_use_bytes"] -= size


def empty_cache() -> None:
    """Release the device buffers the allocator keeps for reuse."""
    _POOL.clear()
    _STATS["cached_bytes"] = 0


def memory_stats() -> dict:
    return dict(_STATS)


def reset_counts() -> None:
    """Start the counts of buffers allocated and reused from zero."""
    _STATS["allocated"] = _STATS["reused"] = 0


def reset_peaks() -> None:
    """Start the peaks of memory in use and reserved from their current values."""
    _STATS["peak_in_use_bytes"] = _STATS["in_use_bytes"]
    _STATS["peak_reserved_bytes"] = _STATS["in_use_bytes"] + _STATS["cached_bytes"]
