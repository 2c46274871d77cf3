"""The meta device: tensors with a shape and a dtype and no data, as torch's `device="meta"`.

A meta tensor's `_payload` is a MetaArray, which has the shape, dtype and strides of the array it
stands for and holds nothing. Factories make them (`empty(2, 3, device="meta")`, without
allocating or drawing random numbers), `x.to("meta")` and `Module.to("meta")` turn tensors into
them; ops on them give meta results whose shapes and dtypes are the ops' own rules (the
dispatch in ops/meta.py, installed on first use through `DISPATCH`); reading their values
(`item()`, `tolist()`, `numpy()`, `.cpu()`) raises torch's errors. The use torch documents, a
module's structure without its memory (`copy.deepcopy(model).to("meta")` as the template of
`functional_call`, or `to_empty()` afterwards), follows.

The meta device's runtime (tensor/device.py's RUNTIMES["meta"]: `check`, `from_host` and
`move`, as autojit/cuda/runtime.py is CUDA's) is meta_runtime.py, above Tensor, which it makes.
"""

from __future__ import annotations

import numpy as np

from .device import device

META = device("meta")

# Installed by ops/meta.py: makes the op registry dispatch ops on meta tensors (called once,
# when the first meta tensor is made, so that programs without one pay nothing).
DISPATCH = None
_ACTIVE: list = []

_ITEM = ("Tensor.item()", "float(Tensor)", "int(Tensor)", "bool(Tensor)",
         "Tensor used as an index")


class _Flags:
    c_contiguous = True
    writeable = True


class MetaArray:
    """The data of a meta tensor: a shape and a dtype (NumPy's), no elements."""

    __slots__ = ("shape", "dtype")
    flags = _Flags()

    def __init__(self, shape, dtype):
        self.shape = tuple(int(extent) for extent in shape)
        self.dtype = np.dtype(dtype)
        if not _ACTIVE:
            _ACTIVE.append(True)
            if DISPATCH is not None:
                DISPATCH()

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        count = 1
        for extent in self.shape:
            count *= extent
        return count

    @property
    def itemsize(self) -> int:
        return self.dtype.itemsize

    @property
    def nbytes(self) -> int:
        return self.size * self.dtype.itemsize

    @property
    def strides(self) -> tuple:
        steps, step = [], self.dtype.itemsize
        for extent in reversed(self.shape):
            steps.append(step)
            step *= max(extent, 1)
        return tuple(reversed(steps))

    def copy(self, order="C") -> MetaArray:
        return MetaArray(self.shape, self.dtype)

    def astype(self, dtype, copy=True) -> MetaArray:
        return MetaArray(self.shape, dtype)

    def __setitem__(self, key, value) -> None:
        """A write: there is nothing to write to (torch's in-place ops on meta tensors do
        nothing but check shapes)."""

    def __array__(self, *args, **kwargs):
        raise TypeError("can't convert meta device type tensor to numpy. Use Tensor.cpu() to "
                        "copy the tensor to host memory first.")

    def to_host(self):
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")

    def __repr__(self) -> str:
        return f"MetaArray(shape={self.shape}, dtype={self.dtype})"


class WrapperArray:
    """The data of an instance of a `__torch_dispatch__` wrapper subclass
    (`Tensor._make_wrapper_subclass`, tensor/torch_dispatch.py): the shape, dtype, element
    strides and device the subclass declares, and no elements. Its ops go to the subclass's
    `__torch_dispatch__`, which holds the real data itself (torch_geometric's EdgeIndex keeps a
    plain tensor)."""

    __slots__ = ("shape", "dtype", "element_strides", "device", "layout")
    flags = _Flags()

    def __init__(self, shape, dtype, element_strides, device, layout):
        self.shape = tuple(int(extent) for extent in shape)
        self.dtype = np.dtype(dtype)
        self.element_strides = tuple(int(step) for step in element_strides)
        self.device, self.layout = device, layout

    ndim, size, itemsize, nbytes = MetaArray.ndim, MetaArray.size, MetaArray.itemsize, \
        MetaArray.nbytes

    @property
    def strides(self) -> tuple:
        return tuple(step * self.dtype.itemsize for step in self.element_strides)

    def __array__(self, *args, **kwargs):
        raise RuntimeError("Cannot access data pointer of Tensor that doesn't have storage "
                           "(an instance of a __torch_dispatch__ wrapper subclass)")

    def __repr__(self) -> str:
        return f"WrapperArray(shape={self.shape}, dtype={self.dtype}, device={self.device})"


def read_error(what: str) -> Exception:
    """torch's error for reading a meta tensor's values in `what`."""
    if what in _ITEM:
        return RuntimeError("Tensor.item() cannot be called on meta tensors")
    return NotImplementedError("Cannot copy out of meta tensor; no data!")
