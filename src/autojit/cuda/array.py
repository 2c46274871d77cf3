"""CudaArray: the data of a CUDA tensor, over a buffer of the caching allocator (allocator.py).

A CUDA tensor keeps its data in the same `_payload` field a CPU tensor keeps its ndarray in; for
a CUDA tensor that field holds a CudaArray: a logical shape and dtype over a flat, C-contiguous
numba device array (`flat`). Kernels (kernels.py) always receive flat arrays and index them
through element strides, so every CUDA array is contiguous and 0-d arrays need no special case.
The class offers the few ndarray members the shared code touches (shape, ndim, size, dtype,
copy, `[...] =`, `+=`) so autograd and the executable's write-back work unchanged; anything
else that would treat device memory as host memory fails loudly (`__array__` raises).

Device buffers come from a caching allocator (allocator.py): a freed CudaArray returns its
buffer to a pool for the next allocation of that size. The members that compute (`[...] =`
with a conversion or a fill, `+=`, min/max, a strided view's copy and write-back) run kernels
made by the layers above, which install them here when autojit.cuda is imported (eager.py,
conversions.py, views.py), as the autograd layer installs Tensor's hooks. See
docs/notes/cuda.md.
"""

from __future__ import annotations

import numpy as np

from .allocator import give_back, prefix, take
from .availability import is_simulator
from .counters import COUNTS

_DEVICE_TO_DEVICE: list = []  # [numba's driver.device_to_device on a GPU, else None], once


def device_copy(target, source) -> None:
    """Copy the flat device array `source` into `target` (same dtype and size, both
    contiguous, as every flat array autojit makes is). On a GPU this is the driver's copy that
    numba's `copy_to_device` ends in, without its checks, which slice both arrays (its
    `array_core`): hundreds of microseconds of host time a copy on an H100. COUNTS it."""
    COUNTS["device_copies"] += 1
    if not _DEVICE_TO_DEVICE:
        function = None
        if not is_simulator():
            try:
                from numba.cuda.cudadrv.driver import device_to_device as function
            except ImportError:
                function = None
        _DEVICE_TO_DEVICE.append(function)
    function = _DEVICE_TO_DEVICE[0]
    if function is None:
        target.copy_to_device(source)
    else:
        function(target, source, target.shape[0] * target.dtype.itemsize)


class _Flags:
    """ndarray.flags as the shared code reads them: device arrays are contiguous (a strided
    view keeps a contiguous copy), and writeable unless elements of a view overlap."""
    c_contiguous = True

    def __init__(self, writeable: bool):
        self.writeable = writeable


_WRITEABLE, _READ_ONLY = _Flags(True), _Flags(False)


class CudaArray:
    """A C-contiguous array in device memory: `flat[:size]` viewed with `shape`."""

    # _buffer: the pooled allocation this array owns and returns to the pool when it dies;
    # None for a view made by reshape or an alias, which keeps its owner alive through _base.
    # _owner: for wrap(), the foreign object whose memory this array shares (kept alive).
    # _generation: writes to this array's memory so far (counted on the root array);
    # _view, _synced: for a strided view (views.py), (source, strides, offset) and the
    # source root's generation its own copy was made at.
    __slots__ = ("shape", "dtype", "_flat", "_buffer", "_base", "_owner", "device_index",
                 "_generation", "_view", "_synced", "__weakref__")

    # The kernels behind the members that compute, installed by the layers above when
    # autojit.cuda is imported: eager.dispatch and eager.add_arrays (eager.py),
    # conversions.convert_array and fill_array (conversions.py), views.refresh and
    # views.write_through (views.py).
    _dispatch = None
    _add_arrays = None
    _convert_array = None
    _fill_array = None
    _refresh_view = None
    _write_through = None

    def __init__(self, shape: tuple, dtype, device_index: int = 0):
        self.shape = tuple(shape)
        self.dtype = np.dtype(dtype)
        count = 1
        for extent in self.shape:
            count *= extent
        # The pooled buffer, and its first `count` elements (the buffer itself where it has
        # exactly that many; a view made once per buffer and count otherwise).
        self._buffer, self._flat = take(self.dtype, count)
        self._base = None
        self._generation, self._view, self._synced = 0, None, 0
        self.device_index = device_index

    def __del__(self):
        buffer = self._buffer
        if buffer is not None:
            give_back(buffer, self.dtype, self._flat.shape[0])

    # ---- what the shared code reads ------------------------------------------------------------

    @property
    def flat(self):
        """The elements as a flat device array (a strided view copies them again first when
        its source was written since)."""
        view = self._view
        if view is not None and self._synced != view[0]._root()._generation:
            CudaArray._refresh_view(self)
        return self._flat

    @property
    def flags(self) -> _Flags:
        view = self._view
        if view is not None and any(stride == 0 and extent > 1
                                    for stride, extent in zip(view[1], self.shape)):
            return _READ_ONLY
        return _WRITEABLE

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        return self._flat.shape[0]

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    def min(self):
        """The smallest element, as a NumPy scalar on the host (a reduction, then a copy):
        what the shared code's bounds checks read."""
        from ..ops.reduction import AMIN

        return self._extreme(AMIN)

    def max(self):
        from ..ops.reduction import AMAX

        return self._extreme(AMAX)

    def _extreme(self, op):
        from ..tensor import dtypes
        from ..tensor.tensor import Tensor

        if not self.size:
            raise ValueError(f"zero-size array to reduction operation {op.lowering.kind}imum which "
                             "has no identity")
        x = Tensor._make(self, dtypes.from_numpy(self.dtype))
        attrs = {"dim": tuple(range(self.ndim)), "keepdim": False}
        return CudaArray._dispatch(op, (x,), attrs)._payload.to_host()[()]

    def __int__(self) -> int:
        return int(self._scalar())

    def __float__(self) -> float:
        return float(self._scalar())

    def __index__(self) -> int:
        return int(self._scalar())

    def _scalar(self):
        if self.size != 1:
            raise TypeError("only one element tensors can be converted to Python scalars")
        return self.to_host().reshape(())[()]

    def __array__(self, dtype=None, copy=None):
        raise TypeError(f"can't convert cuda:{self.device_index} device type tensor to numpy. "
                        "Use Tensor.cpu() to copy the tensor to host memory first.")

    def __array_function__(self, function, types, args, kwargs):
        # The NumPy functions the shared code applies to tensor data (in-place write-back,
        # aliasing checks) work on device arrays; any other one is refused like __array__.
        if function is np.copyto:
            args[0][...] = args[1]
            return None
        if function in (np.may_share_memory, np.shares_memory):
            first, second = args[0], args[1]
            return isinstance(first, CudaArray) and isinstance(second, CudaArray) and \
                first._root() is second._root()
        return self.__array__()

    def _root(self):
        """The array that owns the memory this one reads (itself, unless a view)."""
        if self._view is not None:
            return self._view[0]._root()
        return self if self._base is None else self._base._root()

    def __repr__(self):
        return f"CudaArray(shape={self.shape}, dtype={self.dtype}, device=cuda:{self.device_index})"

    # ---- transfers and copies --------------------------------------------------------------

    @classmethod
    def from_host(cls, array: np.ndarray, device_index: int = 0) -> CudaArray:
        array = np.asarray(array, order="C")  # not ascontiguousarray: it makes 0-d arrays 1-d
        if array.dtype.kind == "c":
            # The kernels are generated for real values (docs/notes/complex.md): refused here,
            # where every complex array would reach the device.
            raise RuntimeError(f"autojit's CUDA device has no complex tensors: a {array.dtype} "
                               "tensor cannot be copied to a GPU (complex tensors stay on the "
                               "CPU)")
        if array.dtype.kind == "u" and array.dtype.itemsize > 1:
            # uint16, uint32, uint64: torch's limited support, which the CUDA kernels do not
            # render (docs/notes/unsigned-integers.md); they stay on the CPU as complex ones do.
            raise RuntimeError(f"autojit's CUDA device has no {array.dtype} tensors: they cannot "
                               "be copied to a GPU (uint16, uint32 and uint64 tensors stay on "
                               "the CPU)")
        result = cls(array.shape, array.dtype, device_index=device_index)
        if array.size:
            COUNTS["uploads"] += 1
            result.flat.copy_to_device(array.reshape(-1))
        return result

    @classmethod
    def wrap(cls, flat, shape: tuple, owner=None, device_index: int = 0) -> CudaArray:
        """A CudaArray over an existing flat device array (no copy, never pooled)."""
        array = cls.__new__(cls)
        array.shape, array.dtype, array.device_index = tuple(shape), np.dtype(flat.dtype), \
            device_index
        array._buffer, array._base, array._owner, array._flat = None, None, owner, flat
        array._generation, array._view, array._synced = 0, None, 0
        return array

    @classmethod
    def alias(cls, source: CudaArray, shape: tuple, offset: int, count: int) -> CudaArray:
        """`count` elements of the contiguous `source` from `offset` on, with `shape`: a view
        sharing its memory."""
        array = cls.__new__(cls)
        array.shape, array.dtype, array.device_index = tuple(shape), source.dtype, \
            source.device_index
        flat = source._flat
        if offset:
            flat = flat[offset:offset + count]
        elif count != flat.shape[0]:  # a reshape of the whole array slices nothing
            flat = prefix(flat, count)
        array._buffer, array._base, array._flat = None, source, flat
        array._generation, array._view, array._synced = 0, None, 0
        return array

    def to_host(self) -> np.ndarray:
        if not self.size:
            return np.empty(self.shape, self.dtype)
        COUNTS["readbacks"] += 1
        return self.flat.copy_to_host().reshape(self.shape)

    def copy(self) -> CudaArray:
        result = CudaArray(self.shape, self.dtype, device_index=self.device_index)
        if self.size:
            device_copy(result.flat, self.flat)
        return result

    def reshape(self, *shape) -> CudaArray:
        """The same memory with another shape (a view: both see writes); a strided view's
        elements are not one block of memory, so it is copied first."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        if self._view is not None:
            return self.copy().reshape(shape)
        return CudaArray.alias(self, shape, 0, self.size)

    def __setitem__(self, key, value) -> None:
        if key is not Ellipsis:
            raise NotImplementedError("CudaArray supports only whole-array assignment [...] = ")
        if isinstance(value, CudaArray):
            if value.shape != self.shape or value.dtype != self.dtype:
                value = CudaArray._convert_array(value, self.shape, self.dtype)
            if self.size:
                device_copy(self._flat, value.flat)
            self._written()
        elif isinstance(value, np.ndarray):
            self[...] = CudaArray.from_host(np.broadcast_to(value, self.shape).astype(self.dtype),
                                            self.device_index)
        else:
            CudaArray._fill_array(self, value)

    def _written(self) -> None:
        """Count a write to this array's memory; a strided view passes it on to its source."""
        if self._view is not None:
            CudaArray._write_through(self)
        else:
            self._root()._generation += 1

    def __iadd__(self, other: CudaArray) -> CudaArray:
        self[...] = CudaArray._add_arrays(self, other)
        return self

