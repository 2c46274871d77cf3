"""A tensor's storage as torch shows it: `x.untyped_storage()` (the bytes of the memory x and
its views share), `x.storage()` (the same memory as elements of x's dtype: torch's deprecated
TypedStorage, with its warning) and `x.data_ptr()` (the address of x's first element).

The memory is the NumPy array (or CUDA array) of x's base, the tensor x is a view of, or of x
itself; a storage object reads and writes it in place, so a write through it is seen by every
tensor on that memory. A tensor being traced has no memory: asking for its storage or address
breaks the graph, as any read of data does. tensor_names.py makes these Tensor's methods.
"""

from __future__ import annotations

import numpy as np

from ..tensor import dtypes
from ..tensor.once import warn_once
from ..tensor.tensor import Tensor

__all__ = ["TypedStorage", "UntypedStorage", "data_ptr", "storage", "untyped_storage"]


def _address(array) -> int:
    interface = getattr(array, "__array_interface__", None) or getattr(
        array, "__cuda_array_interface__", None)
    return int(interface["data"][0]) if interface is not None else 0


def _owner(x: Tensor) -> Tensor:
    x._concrete("storage()")
    return x._base if x._base is not None and x._base._data is not None else x


def data_ptr(self: Tensor) -> int:
    """The address of the tensor's first element (0 for a meta tensor or an empty one, as
    torch's)."""
    self._concrete("data_ptr()")
    if self.is_meta or self._data.size == 0:
        return 0
    return _address(self._data)


class UntypedStorage:
    """The bytes of a tensor's memory (torch.UntypedStorage)."""

    def __init__(self, owner: Tensor):
        self._owner = owner

    def _bytes(self) -> np.ndarray:
        data = self._owner._data
        if self._owner.is_meta:
            return np.zeros(0, np.uint8)
        if data.__class__ is not np.ndarray:
            data = self._owner._host("untyped_storage()")
        return data.reshape(-1).view(np.uint8) if data.flags.c_contiguous else \
            np.ascontiguousarray(data).reshape(-1).view(np.uint8)

    def nbytes(self) -> int:
        if self._owner.is_meta:
            return self._owner.numel() * self._owner.dtype.itemsize
        return int(self._owner._data.nbytes)

    size = nbytes

    def __len__(self) -> int:
        return self.nbytes()

    def element_size(self) -> int:
        return 1

    @property
    def dtype(self):
        return dtypes.uint8

    @property
    def device(self):
        return self._owner.device

    @property
    def is_cuda(self) -> bool:
        return self._owner.is_cuda

    def data_ptr(self) -> int:
        return 0 if self._owner.is_meta else _address(self._owner._data)

    def __getitem__(self, index):
        return self._bytes()[index].tolist()

    def tolist(self) -> list:
        return self._bytes().tolist()

    def is_shared(self) -> bool:
        return self._owner.is_shared()

    def __repr__(self) -> str:
        values = "\n".join(f" {value}" for value in self.tolist())
        return f"{values}\n[torch.storage.UntypedStorage(device={self.device}) of size " \
            f"{self.nbytes()}]"


class TypedStorage:
    """A tensor's memory as elements of its dtype (torch's deprecated TypedStorage)."""

    def __init__(self, owner: Tensor):
        self._owner = owner
        self._untyped = UntypedStorage(owner)

    def _elements(self) -> np.ndarray:
        data = self._owner._data
        if self._owner.is_meta:
            return np.zeros(0, self._owner.dtype.numpy)
        if data.__class__ is not np.ndarray:
            data = self._owner._host("storage()")
        # In memory order: the element at each offset from the first.
        if data.flags.c_contiguous:
            return data.reshape(-1)
        order = sorted(range(data.ndim), key=lambda d: -abs(data.strides[d]))
        return np.transpose(data, order).reshape(-1)

    def size(self) -> int:
        return self._owner.numel()

    def __len__(self) -> int:
        return self.size()

    def element_size(self) -> int:
        return self._owner.dtype.itemsize

    def nbytes(self) -> int:
        return self.size() * self.element_size()

    @property
    def dtype(self):
        return self._owner.dtype

    @property
    def device(self):
        return self._owner.device

    @property
    def is_cuda(self) -> bool:
        return self._owner.is_cuda

    def data_ptr(self) -> int:
        return self._untyped.data_ptr()

    def untyped(self) -> UntypedStorage:
        return self._untyped

    _untyped_storage = property(untyped)

    def __getitem__(self, index):
        return self._elements()[index].tolist()

    def __setitem__(self, index, value) -> None:
        if not self._owner._data.flags.c_contiguous:
            raise RuntimeError("setting an element of the storage of a tensor whose memory is "
                               "not in row-major order")
        self._owner._data.reshape(-1)[index] = value
        self._owner._bump_version()

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self) -> list:
        return self._elements().tolist()

    def fill_(self, value) -> TypedStorage:
        self._owner._data[...] = value
        self._owner._bump_version()
        return self

    def is_shared(self) -> bool:
        return self._owner.is_shared()

    def __repr__(self) -> str:
        values = "\n".join(f" {value}" for value in self.tolist())
        return f"{values}\n[torch.storage.TypedStorage(dtype={self.dtype}, device=" \
            f"{self.device}) of size {self.size()}]"


def untyped_storage(self: Tensor) -> UntypedStorage:
    """The bytes of the memory this tensor (and its base, for a view) lives in."""
    return UntypedStorage(_owner(self))


def storage(self: Tensor) -> TypedStorage:
    """The memory this tensor lives in, as elements of its dtype (deprecated, as torch warns)."""
    warn_once("typed storage",
              "TypedStorage is deprecated. It will be removed in the future and UntypedStorage "
              "will be the only storage class. This should only matter to you if you are using "
              "storages directly.  To access UntypedStorage directly, use "
              "tensor.untyped_storage() instead of tensor.storage()", UserWarning, stacklevel=2)
    return TypedStorage(_owner(self))
