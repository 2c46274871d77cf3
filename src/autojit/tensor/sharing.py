"""Shared memory: Tensor.share_memory_ and Tensor.is_shared.

A CPU tensor's data is a NumPy array in the process's private memory. share_memory_ moves it
into an anonymous shared mapping (`mmap.mmap(-1, n)`, MAP_SHARED) in place, as torch moves a
storage, so that processes forked afterwards (multiprocessing's "fork" start method, a
DataLoader's workers on Linux) read and write the same memory: the Hogwild pattern of
`model.share_memory()` and then `mp.Process`. Pickling a tensor (a "spawn" child's arguments, a
Queue) still copies its values: autojit has no torch.multiprocessing to pass the mapping itself.
A view moves with its base (the base's memory is moved and the view made again over it); other
views made before the call keep the memory they had. CUDA tensors are left as they are (a
no-op, as in torch), and is_shared() is False for them: autojit cannot pass device memory to
another process.
"""

from __future__ import annotations

import mmap

import numpy as np


def is_shared(x) -> bool:
    """Whether x's data lives in shared memory (share_memory_, or a mapped file)."""
    data = x._payload
    if data is None or data.__class__ is not np.ndarray:
        return False
    while isinstance(data, np.ndarray) and data.base is not None:
        data = data.base
    if isinstance(data, memoryview):
        data = data.obj
    return isinstance(data, mmap.mmap)


def _shared_copy(data: np.ndarray) -> np.ndarray:
    buffer = mmap.mmap(-1, max(data.nbytes, 1))
    shared = np.frombuffer(buffer, data.dtype, data.size).reshape(data.shape)
    shared[...] = data
    return shared


def share_memory_(x):
    """Move x's data to shared memory, in place (no-op when it is there already, or on a
    GPU); returns x."""
    data = x._concrete("Tensor.share_memory_()")
    if data.__class__ is not np.ndarray or is_shared(x):
        return x
    base = x._base
    if base is not None and base._payload.__class__ is np.ndarray and \
            base._payload.flags.c_contiguous:
        # The base's memory moves, and the view is made again over it at the same offset.
        old = base._payload
        offset = data.__array_interface__["data"][0] - old.__array_interface__["data"][0]
        if not is_shared(base):
            base._payload = _shared_copy(old)
        x._payload = np.ndarray(data.shape, data.dtype, buffer=base._payload, offset=offset,
                             strides=data.strides)
        return x
    x._payload = _shared_copy(data)
    return x
