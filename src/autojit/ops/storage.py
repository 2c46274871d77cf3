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

from ..tensor import dtypes, sharing
from ..tensor.once import warn_once
from ..tensor.tensor import Tensor

__all__ = ["TypedStorage", "UntypedStorage", "data_ptr", "storage", "untyped_storage"]


def _address(array) -> int:
    interface = getattr(array, "__array_interface__", None) or getattr(
        array, "__cuda_array_interface__", None)
    return int(interface["data"][0]) if interface is not None else 0


def _owner(x: Tensor) -> Tensor:
    x._concrete("storage()")
    return x._base if x._base is not None and x._base._payload is not None else x


def data_ptr(self: Tensor) -> int:
    """The address of the tensor's first element (0 for a meta tensor or an empty one, as
    torch's)."""
    self._concrete("data_ptr()")
    if self.is_meta or self._payload.size == 0:
        return 0
    return _address(self._payload)


class _Storage:
    """What both kinds of storage share: the tensor whose memory it is, its device, its
    length (`size()` items of `element_size()` bytes), its values (`_values()`, in memory
    order, read from the host)."""

    _is_storage = True  # torch.is_storage's answer (tensor/settings.py)

    def __init__(self, owner: Tensor):
        self._owner = owner

    def _array(self, what: str) -> np.ndarray:
        """The memory as a flat NumPy array in memory order (empty for a meta tensor)."""
        owner = self._owner
        if owner.is_meta:
            return np.zeros(0, owner.dtype.numpy)
        data = owner._payload if owner._payload.__class__ is np.ndarray else owner._host(what)
        if data.flags.c_contiguous:
            return data.reshape(-1)
        order = sorted(range(data.ndim), key=lambda d: -abs(data.strides[d]))
        return np.ascontiguousarray(np.transpose(data, order)).reshape(-1)

    def __len__(self) -> int:
        return self.size()

    def nbytes(self) -> int:
        return self.size() * self.element_size()

    @property
    def device(self):
        return self._owner.device

    @property
    def is_cuda(self) -> bool:
        return self._owner.is_cuda

    def data_ptr(self) -> int:
        return 0 if self._owner.is_meta else _address(self._owner._payload)

    def __getitem__(self, index):
        return self._values()[index].tolist()

    def __iter__(self):
        return iter(self.tolist())

    def tolist(self) -> list:
        return self._values().tolist()

    def is_shared(self) -> bool:
        return self._owner.is_shared()

    def __repr__(self) -> str:
        values = "\n".join(f" {value}" for value in self.tolist())
        return f"{values}\n[torch.storage.{type(self).__name__}({self._described()}) of size " \
            f"{self.size()}]"


class UntypedStorage(_Storage):
    """The bytes of a tensor's memory (torch.UntypedStorage): `x.untyped_storage()`, a new
    storage of `size` zero bytes (`UntypedStorage(size)`, or of a list of byte values), or a
    file's bytes mapped into memory (`UntypedStorage.from_file`, as safetensors' `safe_open`
    reads a checkpoint). A slice (`storage[a:b]`) is a storage over those bytes, and
    `torch.asarray(storage, dtype=...)` a tensor over them, both sharing the memory."""

    def __init__(self, *args, device=None):
        if len(args) == 1 and isinstance(args[0], Tensor):
            owner = args[0]
        else:
            if device is not None and str(device) != "cpu":
                raise NotImplementedError(f"UntypedStorage on {device}: autojit makes storages "
                                          "on the CPU only")
            if not args:
                values = np.zeros(0, np.uint8)
            elif len(args) == 1 and isinstance(args[0], int):
                values = np.zeros(args[0], np.uint8)
            elif len(args) == 1:
                values = np.array(list(args[0]), dtype=np.uint8)
            else:
                raise TypeError(f"UntypedStorage(): expected a size or a sequence of bytes, "
                                f"got {len(args)} arguments")
            owner = Tensor._make(values, dtypes.uint8)
        super().__init__(owner)

    @classmethod
    def from_file(cls, filename, shared: bool = False, nbytes: int = 0) -> UntypedStorage:
        """A storage over the file's first `nbytes` bytes (all of them for 0), mapped into
        memory: writes reach the file where `shared`, else they stay in this process."""
        mapped = np.memmap(filename, dtype=np.uint8, mode="r+" if shared else "c",
                           shape=(nbytes,) if nbytes else None)
        return cls(Tensor._make(mapped.view(np.ndarray), dtypes.uint8))

    def untyped(self) -> UntypedStorage:
        return self

    def _new_shared(self, size: int, *, device=None) -> UntypedStorage:
        """A new storage of `size` zero bytes in shared memory, for a DataLoader worker to
        collate into (torch_geometric's collate writes a batch there), which multiprocessing
        then sends by its memory (tensor/sharing.py)."""
        if device is not None and str(device) != "cpu":
            raise NotImplementedError(f"UntypedStorage on {device}: autojit makes storages "
                                      "on the CPU only")
        return UntypedStorage(Tensor._make(sharing.shared_empty(int(size)), dtypes.uint8))

    def _values(self) -> np.ndarray:
        return self._array("untyped_storage()").view(np.uint8)

    def _asarray_bytes(self) -> np.ndarray:
        """The bytes, sharing the memory (torch.asarray's view of a storage)."""
        return self._values()

    def __getitem__(self, index):
        if isinstance(index, slice):
            return UntypedStorage(Tensor._make(self._values()[index], dtypes.uint8))
        return int(self._values()[index])

    def size(self) -> int:
        return self._owner.numel() * self._owner.dtype.itemsize if self._owner.is_meta else \
            int(self._owner._payload.nbytes)

    def element_size(self) -> int:
        return 1

    @property
    def dtype(self):
        return dtypes.uint8

    def _described(self) -> str:
        return f"device={self.device}"


class TypedStorage(_Storage):
    """A tensor's memory as elements of its dtype (torch's deprecated TypedStorage)."""

    def _values(self) -> np.ndarray:
        return self._array("storage()")

    def size(self) -> int:
        return self._owner.numel()

    def element_size(self) -> int:
        return self._owner.dtype.itemsize

    @property
    def dtype(self):
        return self._owner.dtype

    def _described(self) -> str:
        return f"dtype={self.dtype}, device={self.device}"

    def untyped(self) -> UntypedStorage:
        return UntypedStorage(self._owner)

    _untyped_storage = property(untyped)

    def __setitem__(self, index, value) -> None:
        if not self._owner._payload.flags.c_contiguous:
            raise RuntimeError("setting an element of the storage of a tensor whose memory is "
                               "not in row-major order")
        self._owner._payload.reshape(-1)[index] = value
        self._owner._bump_version()

    def fill_(self, value) -> TypedStorage:
        self._owner._payload[...] = value
        self._owner._bump_version()
        return self


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
