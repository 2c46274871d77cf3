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

# (dtype, capacity) -> {element count: {id: flat device buffer}}: the free buffers of a size,
# by the element count of the array that last held each (whose view of that many elements the
# buffer keeps: `prefix`), so that an array of that count gets such a buffer back first.
_POOL: dict = {}
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


def take(dtype: np.dtype, count: int) -> tuple:
    """(buffer, flat): a flat device buffer of at least `count` elements of `dtype`, from the
    pool when one of that size is there, and its first `count` elements as a flat array (the
    buffer itself where it has exactly that many: `prefix`). A free buffer last held by an
    array of `count` elements is taken first, so a step that allocates the same sizes every
    call finds its views made."""
    key = (dtype, _capacity(count))
    size = key[1] * dtype.itemsize
    free = _POOL.get(key)
    if free:
        _STATS["reused"] += 1
        _STATS["cached_bytes"] -= size
        held = count if count in free else next(iter(free))
        by_id = free[held]
        buffer = by_id.pop(next(reversed(by_id)))  # the last returned
        if not by_id:
            del free[held]
            if not free:
                del _POOL[key]
    else:
        buffer = _allocate(key[1], dtype, size)
        _STATS["allocated"] += 1
    _IN_USE[id(buffer)] = buffer
    _STATS["in_use_bytes"] += size
    _STATS["peak_in_use_bytes"] = max(_STATS["peak_in_use_bytes"], _STATS["in_use_bytes"])
    _STATS["peak_reserved_bytes"] = max(_STATS["peak_reserved_bytes"],
                                        _STATS["in_use_bytes"] + _STATS["cached_bytes"])
    return buffer, (buffer if buffer.shape[0] == count else prefix(buffer, count))


def prefix(buffer, count: int):
    """`buffer[:count]`, made once per buffer and count. Slicing a numba device array builds a
    new array object in Python, tens of microseconds of host time on a GPU (43 slicings a step
    of the MLP benchmark on an H100, docs/notes/cuda.md). The views hold the buffer's memory,
    not the buffer object, so keeping them on the buffer makes no cycle."""
    views = getattr(buffer, "_autojit_prefixes", None)
    if views is None:
        views = {}
        try:
            buffer._autojit_prefixes = views
        except AttributeError:  # a device array class with slots: slice every time
            pass
    view = views.get(count)
    if view is None:
        view = views[count] = buffer[:count]
    return view


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


def give_back(buffer, dtype: np.dtype, count: int) -> None:
    """Return a buffer `take` gave to an array of `count` elements (the array died) to the
    pool."""
    _IN_USE.pop(id(buffer), None)
    key = (dtype, buffer.shape[0])
    _POOL.setdefault(key, {}).setdefault(count, {})[id(buffer)] = buffer
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
