"""A tensor's storage as torch shows it: `x.untyped_storage()` (the bytes of the memory x and
its views share), `x.storage()` (the same memory as elements of x's dtype: torch's deprecated
TypedStorage, with its warning), `x.data_ptr()` (the address of x's first element) and
`x.set_(source)`, which puts x on another tensor's memory or a storage's bytes in place, and
the layout forward AD gives a tangent (same_layout, laid_out_like).

The memory is the NumPy array (or CUDA array) of x's base, the tensor x is a view of, of the
memory set_ put x on, or of x itself; a storage object reads and writes it in place, so a
write through it is seen by every tensor on that memory. A tensor being traced has no memory:
asking for its storage or address breaks the graph, as any read of data does. tensor_names.py
makes these Tensor's methods.
"""

from __future__ import annotations

import numpy as np

from ..tensor import dtypes, sharing
from ..tensor.graph_break import graph_break
from ..tensor.once import warn_once
from ..tensor.state import state
from ..tensor.tensor import Tensor
from . import inplace, registry
from .batching import batched

__all__ = ["TypedStorage", "UntypedStorage", "data_ptr", "laid_out_like", "same_layout", "set_",
           "storage", "storage_owner", "untyped_storage"]


def _address(array) -> int:
    interface = getattr(array, "__array_interface__", None) or getattr(
        array, "__cuda_array_interface__", None)
    return int(interface["data"][0]) if interface is not None else 0


def _owner(x: Tensor) -> Tensor:
    x._concrete("storage()")
    return storage_owner(x)


def storage_owner(x: Tensor) -> Tensor:
    """The tensor whose memory is x's storage: x's base for a view, the memory set_ put x on
    or that x, a detached alias of a view, shares (while x's elements still lie in it), or x
    itself."""
    if x._base is not None and x._base._payload is not None:
        return storage_owner(x._base)
    held = x._storage_base
    if held is not None and x._payload is not None and x._payload.size:
        start, mine = _address(held._payload), _address(x._payload)
        if start <= mine < start + held._payload.nbytes:
            return storage_owner(held)
    return x


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


# ---- set_: a tensor put on other memory in place -----------------------------------------------

def set_(self: Tensor, source=None, storage_offset=None, size=None, stride=None) -> Tensor:
    """Put x on other memory in place, as torch's set_: `x.set_(y)` makes x a tensor over y's
    memory with y's shape and strides (writes through either are seen by both),
    `x.set_(storage, offset, size, stride)` one over a storage's bytes as `size` elements of
    x's dtype `stride` apart from element `offset` (all of the storage, 1-D, by default; a
    tensor given with an offset stands for its storage), and `x.set_()` an empty tensor. x
    keeps its own version counter (one write counted). As torch's, a leaf gets a new gradient
    accumulator: a graph that used x before reaches the old one, which a gradient edge taken
    before still names, and `autograd.grad(..., x)` of that graph finds x unused. torch has no
    derivative for set_: with grad mode on, a result that requires grad gets a
    `NotImplemented` node that raises when a backward reaches it."""
    if state.tracer is not None:
        graph_break("set_() (a tensor put on other memory in place)", needs_data=False)
    if state.grad_levels:
        inplace.CHECK_CAPTURED(self, "set_")
    inplace.check_inplace(self, "set_")
    if self._base is not None or self._batched or isinstance(source, Tensor) and \
            source._batched:
        raise NotImplementedError("set_() of a view or inside vmap: autojit keeps a view on its "
                                  "base's memory")
    given = (storage_offset, size, stride)
    if isinstance(source, Tensor) and all(value is None for value in given):
        payload, owner = _tensor_memory(self, source)
    elif source is None and all(value is None for value in given):
        empty = self._payload.reshape(-1)[:0]  # (of the payload's kind: NumPy, CUDA, meta)
        payload, owner = np.empty(0, empty.dtype) if empty.__class__ is np.ndarray else empty, \
            None
    else:
        payload, owner = _storage_memory(self, source, given)
    old = Tensor._make(self._payload, self._dtype)
    old.grad_fn, old._output_nr = self.grad_fn, self._output_nr
    old._requires_grad = self._requires_grad
    self._payload = payload
    if owner is not None:
        self._storage_base = owner
    elif "_storage_base" in self.__dict__:
        del self._storage_base
    self._grad_accumulator = None
    self._bump_version()
    if state.grad_enabled:
        _no_derivative(self, old, source if isinstance(source, Tensor) else None)
    return self


def _tensor_memory(self: Tensor, source: Tensor):
    """(the array of x set_ to `source`, the tensor whose memory it lies in, or None)."""
    _check_dtype(self, source.dtype)
    if source.device != self.device:
        raise RuntimeError(f'Attempted to set the storage of a tensor on device "{self.device}" '
                           f'to a storage on different device "{source.device}".  This is no '
                           "longer allowed; the devices must match.")
    source._concrete("set_()")
    owner = storage_owner(source)
    if owner is source:
        return source._payload, None
    return source._payload, Tensor._make(owner._payload, owner._dtype)


def _storage_memory(self: Tensor, source, given: tuple):
    """(the array of x set_ to a storage's bytes at (offset, size, stride), the tensor of those
    bytes as x's elements)."""
    offset, size, stride = given
    if isinstance(source, Tensor):
        _check_dtype(self, source.dtype)
        source._concrete("set_()")
        source = UntypedStorage(storage_owner(source))
    if not getattr(source, "_is_storage", False) or size is None and offset is not None:
        raise TypeError(f"set_() received an invalid combination of arguments - got "
                        f"({type(source).__name__}{', int' if offset is not None else ''}), "
                        "but expected one of: (), (Storage source), (Storage source, int "
                        "storage_offset, tuple of ints size, tuple of ints stride = None), "
                        "(Tensor source), (Tensor source, int storage_offset, tuple of ints "
                        "size, tuple of ints stride = None)")
    if isinstance(source, TypedStorage):
        if source.dtype != self.dtype:
            raise RuntimeError(f"Expected a Storage of type {dtypes.C_TYPE_NAMES[self.dtype.name]}"
                               f" or an UntypedStorage, but got type "
                               f"{dtypes.SCALAR_TYPE_NAMES[source.dtype.name]} for argument 1 "
                               "'storage'")
        source = source.untyped()
    if source.device != self.device or self._payload.__class__ is not np.ndarray:
        raise NotImplementedError("set_() to a storage: autojit puts CPU tensors on CPU "
                                  "storages only")
    memory = source._values()
    if not np.shares_memory(memory, source._owner._payload):
        raise NotImplementedError("set_() to the storage of a tensor whose memory is not dense")
    itemsize = self._payload.dtype.itemsize
    elements = memory[:memory.shape[0] // itemsize * itemsize].view(self._payload.dtype)
    offset = 0 if offset is None else int(offset)
    size = (elements.shape[0],) if size is None else tuple(int(n) for n in size)
    stride = _contiguous_strides(size) if stride is None else tuple(int(n) for n in stride)
    if len(size) != len(stride) or any(n < 0 for n in stride) or offset < 0:
        raise RuntimeError(f"set_(): invalid sizes {list(size)}, strides {list(stride)} or "
                           f"storage offset {offset}")
    needed = 0 if 0 in size else offset + 1 + sum((n - 1) * s for n, s in zip(size, stride))
    if needed > elements.shape[0]:
        raise NotImplementedError(
            f"set_(): sizes {list(size)}, strides {list(stride)} and storage offset {offset} "
            f"need {needed} elements of a storage of {elements.shape[0]}: torch grows the "
            "storage, which autojit cannot do to memory other tensors share")
    array = np.lib.stride_tricks.as_strided(elements[offset:], shape=size,
                                            strides=tuple(n * itemsize for n in stride))
    return array, Tensor._make(elements, self._dtype)


def _contiguous_strides(size: tuple) -> tuple:
    strides, step = [], 1
    for extent in reversed(size):
        strides.append(step)
        step *= max(extent, 1)
    return tuple(reversed(strides))


def _check_dtype(self: Tensor, dtype) -> None:
    if dtype != self.dtype:
        raise RuntimeError(f"Could not set tensor of type {dtypes.C_TYPE_NAMES[dtype.name]} to "
                           f"a tensor of type {dtypes.C_TYPE_NAMES[self.dtype.name]}")


def _no_derivative(self: Tensor, old: Tensor, source: Tensor | None) -> None:
    """With grad mode on, x set_ from a history that requires grad (its own, or the source's)
    gets torch's NotImplemented node, which raises when a backward reaches it."""
    origin = source if source is not None and source._requires_grad else old
    if not origin._requires_grad:
        return
    marked = registry.DELAYED_ERROR("derivative for set_ is not implemented", self.detach(),
                                    origin, RuntimeError, "torch::autograd::NotImplemented")
    self.grad_fn, self._output_nr, self._requires_grad = marked.grad_fn, 0, True


# ---- a tangent laid out as its primal (forward AD) ---------------------------------------------

def _layout(x: Tensor):
    """(elements in x's storage, x's offset in it, x's strides in elements) of an eager CPU
    tensor, all counted in x's elements (its storage may be another dtype's: the real parts of
    a complex tensor)."""
    owner = storage_owner(x)
    itemsize = x._payload.itemsize
    offset = (_address(x._payload) - _address(owner._payload)) // itemsize if x._payload.size \
        else 0
    return (owner._payload.nbytes // itemsize, offset,
            tuple(step // itemsize for step in x._payload.strides))


def same_layout(x: Tensor, y: Tensor) -> bool:
    """torch's has_same_meta, which make_dual asks of a tangent and its primal: storages of one
    size, the same conjugate and negative bits, the same sizes and, unless empty, the same
    storage offset and strides (but along dims of size 0 or 1). A tangent batched under vmap
    is compared by its examples' layout, its storage's size left out (torch's vmap has no
    per-example storage). True where either has no CPU memory to compare (symbolic, on a
    device, batched at several levels)."""
    batched = x._batched
    if batched:
        x = x._value.physical
    if x._payload.__class__ is not np.ndarray or y._payload.__class__ is not np.ndarray or \
            x._batched or y._batched:
        return True
    x_numel, x_offset, x_strides = _layout(x)
    y_numel, y_offset, y_strides = _layout(y)
    shape = x._payload.shape[1:] if batched else x._payload.shape
    if x_numel != y_numel and not batched or x._is_conj != y._is_conj or \
            x._is_neg != y._is_neg or shape != y._payload.shape:
        return False
    if x._payload.size == 0 and y._payload.size == 0:
        return True
    return x_offset == y_offset and all(
        a == b or n in (0, 1)
        for a, b, n in zip(x_strides[1:] if batched else x_strides, y_strides, shape))


def laid_out_like(x: Tensor, like: Tensor) -> Tensor:
    """x's values in new memory laid out as `like`'s: a zeroed storage of like's size, x's
    elements at like's offset and strides, like's conjugate and negative bits (torch's
    _new_zeros_with_same_feature_meta followed by copy_). A batched x gets one such storage
    per example, the batch dim outermost."""
    level = None
    if x._batched:
        x, level = x._value.physical, x._value.level
    numel, offset, strides = _layout(like)
    count = x._payload.shape[0] if level is not None else 1
    memory = np.zeros(numel * count, x._payload.dtype)
    itemsize = memory.itemsize
    shape, steps = like._payload.shape, tuple(n * itemsize for n in strides)
    if level is not None:
        shape, steps = (count, *shape), (numel * itemsize, *steps)
    array = np.lib.stride_tricks.as_strided(memory[offset:], shape=shape, strides=steps)
    np.copyto(array, x._payload)
    result = Tensor._make(array, x._dtype)
    result._storage_base = Tensor._make(memory, x._dtype)
    if like._is_conj:
        result._is_conj = True
    if like._is_neg:
        result._is_neg = True
    return result if level is None else batched(result, level)
