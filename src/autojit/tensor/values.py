"""Reading a tensor's values into Python: `Tensor.numpy`, `item`, `tolist`, `np.asarray(x)`,
`bool(x)`, `float(x)`, `int(x)` and a tensor used as an index.

Each reads the data through `Tensor._host`/`_concrete` (a CUDA tensor's is copied to the host;
a meta tensor has none to read). While a function is traced, a symbolic tensor's value is read
as a symbolic scalar or this call's array where the tracer can (`_traced_scalar`,
`_traced_array`), and a real tensor's read is guarded. Attached to Tensor when tensor/tensor.py
is imported.
"""

from __future__ import annotations

import numpy as np

from . import dtypes
from . import tensor as tensor_module
from .once import warn_once
from .state import state
from .tensor import Tensor


def numpy(self, *, force: bool = False) -> np.ndarray:
    """The data as a NumPy array sharing its memory; `force` copies a GPU tensor's data and
    allows a tensor that requires grad."""
    if self._payload is None and self._traced_array():
        if self._requires_grad and not force and state.grad_enabled:
            raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                               "Use tensor.detach().numpy() instead.")
        return state.tracer.read_array(self, "Tensor.numpy()")
    data = self._concrete("Tensor.numpy()")
    if self._dtype.numpy.itemsize != self._dtype.itemsize:  # stored wider (bfloat16, ...)
        raise TypeError(f"Got unsupported ScalarType {dtypes.scalar_type_name(self._dtype)}")
    if self._is_conj:
        raise RuntimeError("Can't call numpy() on Tensor that has conjugate bit set. Use "
                           "tensor.resolve_conj().numpy() instead.")
    if self._is_neg:
        raise RuntimeError("Can't call numpy() on Tensor that has negative bit set. Use "
                           "tensor.resolve_neg().numpy() instead.")
    if data.__class__ is not np.ndarray:
        if not force:
            raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use "
                            "Tensor.cpu() to copy the tensor to host memory first.")
        data = data.to_host()
    if self._requires_grad and not force and state.grad_enabled:
        raise RuntimeError("Can't call numpy() on Tensor that requires grad. "
                           "Use tensor.detach().numpy() instead.")
    return data


def item(self):
    """The value of a one-element tensor as a Python number."""
    tracer = state.tracer
    data = self._payload
    if tracer is None and data.__class__ is np.ndarray and tensor_module.VALUE_READ is None:
        # Eager, in host memory, with no VJP being recorded: what _host gives, read now.
        if data.size != 1:
            raise RuntimeError(f"a Tensor with {data.size} elements cannot be converted to "
                               "Scalar")
        return data.item()
    if tracer is not None and not self._batched and (
            self._payload is None or id(self) not in tracer.made or tracer.was_written(self)):
        # While tracing: a symbolic scalar standing for the value the tensor holds now,
        # read on every run (tensor/symbolic.py, ir/scalars.py).
        if self.numel() != 1:
            raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be "
                               "converted to Scalar")
        if self._dtype.category == dtypes.COMPLEX and tracer.evaluates:
            # Symbolic scalars are real: the trace specializes on this call's complex value,
            # a check on every run (a graph break compiled as a split where it fails).
            read = tracer.read_scalar(self.reshape(()), "tolist")
            return read.specialize("the complex number Tensor.item() gives")
        _complex_read(self, "Tensor.item()")
        return tracer.read_scalar(self, None)
    if self.is_meta and self.numel() != 1:
        raise RuntimeError(f"a Tensor with {self.numel()} elements cannot be converted to "
                           "Scalar")
    data = self._host("Tensor.item()")
    if data.size != 1:
        raise RuntimeError(f"a Tensor with {data.size} elements cannot be converted to Scalar")
    return data.reshape(()).item()


def tolist(self):
    """The data as nested Python lists of numbers (a number for a 0-d tensor)."""
    tracer = state.tracer
    data = self._payload
    if tracer is None and data.__class__ is np.ndarray and tensor_module.VALUE_READ is None:
        return data.tolist()
    if tracer is not None and not self._batched and (
            self._payload is None or id(self) not in tracer.made or tracer.was_written(self)):
        if self._dtype.category == dtypes.COMPLEX and tracer.evaluates:
            # Read on every run as a real tensor's (a symbolic scalar is real: a complex
            # number, 0-d or an item, is one specialized where Python computes with it).
            return tracer.read_scalar(self, "tolist")
        _complex_read(self, "Tensor.tolist()")
        return tracer.read_scalar(self, None if self.ndim == 0 else "tolist")
    return self._host("Tensor.tolist()").tolist()


def __array__(self, dtype=None, copy=None):
    """`np.asarray(x)`: the data of a CPU tensor, without a copy."""
    if self._payload is None and self._traced_array():
        array = state.tracer.read_array(self, "np.asarray(Tensor)")
        return array if dtype is None else array.astype(dtype)
    data = self._concrete("np.asarray(Tensor)")
    if self._dtype.numpy.itemsize != self._dtype.itemsize:  # stored wider (bfloat16, ...)
        raise TypeError(f"Got unsupported ScalarType {dtypes.scalar_type_name(self._dtype)}")
    if data.__class__ is not np.ndarray:
        raise TypeError(f"can't convert {self.device} device type tensor to numpy. Use "
                        "Tensor.cpu() to copy the tensor to host memory first.")
    return data if dtype is None else data.astype(dtype, copy=False)


def __array_wrap__(self, array, context=None, return_scalar=False):
    """What NumPy returns for a function of a tensor (`np.sin(x)`, `np.choose(x, choices)`):
    a tensor over the result, as torch's, booleans as uint8 (torch's wrapper predates its bool
    tensors); a 0-d result stays a tensor."""
    if array.dtype == np.bool_:
        array = array.astype(np.uint8)
    array = np.asarray(array)
    found = dtypes._BY_NUMPY.get(array.dtype)
    if found is None:  # a dtype torch has no tensor of (a string, an object)
        return array
    return Tensor._make(array, found)


def __bool__(self) -> bool:
    """`bool(x)` of a one-element tensor."""
    if self._payload is None and self._traced_scalar():
        # While tracing: decided on this call's value, a guard on the branch taken.
        return bool(self.item())
    data = self._host("bool(Tensor)")
    if data.size != 1:
        raise RuntimeError("Boolean value of Tensor with more than one value is ambiguous")
    if self._dtype is dtypes.uint64:  # torch reads its value as an int64 first
        _as_int64(data.reshape(()).item())
    return bool(data.reshape(()))


def __float__(self) -> float:
    """`float(x)` of a one-element tensor."""
    if self._requires_grad and state.grad_enabled:  # torch warns once per process
        warn_once("float_of_grad", "Converting a tensor with requires_grad=True to a scalar may "
                  "lead to unexpected behavior.\nConsider using tensor.detach() first.",
                  UserWarning, stacklevel=2)
    if self._payload is None and self._traced_scalar():
        return float(self.item())  # specialized on this call's value
    return float(_real_number(self._number("float(Tensor)"), "double"))


def __int__(self) -> int:
    """`int(x)` of a one-element tensor."""
    if self._payload is None and self._traced_scalar():
        return int(self.item())
    return _as_int64(int(_real_number(self._number("int(Tensor)"), "int64_t")))


def _as_int64(value: int) -> int:
    """value, where int64 holds it (a uint64 tensor's may not), else torch's error."""
    if value >= 2 ** 63:
        raise RuntimeError("value cannot be converted to type int64_t without overflow")
    return value


def _real_number(value, c_type: str):
    """A number float() or int() converts: a complex one's real part where its imaginary part
    is 0, else torch's error."""
    if value.__class__ is complex:
        if value.imag:
            raise RuntimeError(f"value cannot be converted to type {c_type} without overflow")
        return value.real
    return value


def __complex__(self) -> complex:
    """`complex(x)` of a one-element tensor."""
    if self._payload is None and self._traced_scalar():
        return complex(self.item())
    return complex(self._number("complex(Tensor)"))


def __index__(self) -> int:
    """A one-element integer tensor used as an index (`range(x)`, `seq[x]`)."""
    if self._dtype.category != dtypes.INTEGER or self.numel() != 1:
        raise TypeError("only integer tensors of a single element can be converted to an index")
    if self._payload is None and self._traced_scalar():
        return self.item().__index__()
    return _as_int64(int(self._number("Tensor used as an index")))


def _complex_read(self, what: str) -> None:
    """A complex tensor's values read while tracing: a graph break, since symbolic scalars are
    real (complex ops themselves trace: docs/notes/complex.md)."""
    if self._dtype.category == dtypes.COMPLEX:
        from .graph_break import graph_break

        graph_break(f"{what} of a complex tensor (a trace has no symbolic complex number)",
                    needs_data=False)


def _traced_scalar(self) -> bool:
    """Whether a symbolic tensor's value can be read as a symbolic scalar (inside a compiled
    function's trace, outside vmap), rather than break the graph."""
    tracer = state.tracer
    return tracer is not None and tracer.evaluates and not self._batched and \
        self.numel() == 1 and self._dtype.category != dtypes.COMPLEX


def _traced_array(self) -> bool:
    """Whether a symbolic tensor's data can be read while tracing: this call's values, a
    graph break compiled as a split (the trace specializes on them, checked on every
    run), rather than a graph break that runs the call eagerly."""
    tracer = state.tracer
    return tracer is not None and tracer.evaluates and not self._batched and \
        self._dtype is not dtypes.bfloat16 and self._dtype.category != dtypes.COMPLEX


def _number(self, what: str):
    """The value of a one-element tensor as a Python number, needed now: while tracing,
    a real tensor's is guarded (_concrete)."""
    data = self._host(what)
    if data.size != 1:
        raise RuntimeError(f"a Tensor with {data.size} elements cannot be converted to Scalar")
    return data.reshape(()).item()


for _name in ("numpy", "item", "tolist", "__array__", "__array_wrap__", "__bool__", "__float__",
              "__int__",
              "__complex__", "__index__", "_traced_scalar", "_traced_array", "_number"):
    setattr(Tensor, _name, globals()[_name])
