"""How the walk over a compiled function's state (reachability.py) keeps the NumPy arrays it may
compare after a trace or on each call: a copy of small arrays, a digest of large ones, and the
bytes a comparison reads (a masked array's data and mask).
"""

from __future__ import annotations

import hashlib

import numpy as np


class ArrayDigest:
    """A large array's shape, dtype and a hash of its bytes: a copy would double the memory
    it takes (a data set, say)."""

    __slots__ = ("shape", "dtype", "digest")

    def __init__(self, array_: np.ndarray):
        self.shape, self.dtype, self.digest = array_.shape, array_.dtype, _digest(array_)


def _digest(array_: np.ndarray) -> bytes:
    return hashlib.blake2b(np.ascontiguousarray(array_).reshape(-1).view(np.uint8)).digest()


def same_array(array_: np.ndarray, copy) -> bool:
    """Whether an array still has the shape, dtype and bytes of its copy or digest (NaNs
    included)."""
    if array_.shape != copy.shape or array_.dtype != copy.dtype:
        return False
    if isinstance(copy, ArrayDigest):
        return _digest(array_) == copy.digest
    return array_bytes(array_) == array_bytes(copy)


def array_bytes(array_: np.ndarray) -> bytes:
    """An array's bytes, as the guards compare them. A masked array's are its data's and its
    mask's: MaskedArray.tobytes() fills the masked places, and np.ma.masked refuses the
    fill_value it would set for that."""
    if isinstance(array_, np.ma.MaskedArray):
        return np.ndarray.tobytes(array_) + np.ma.getmaskarray(array_).tobytes()
    return array_.tobytes()
