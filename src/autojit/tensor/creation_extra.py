"""More factories of torch's top level, beside creation.py's: logspace, empty_strided (with
Tensor's new_empty_strided), scalar_tensor, asarray, the deprecated range, and the window
functions (hann_window, hamming_window, bartlett_window, blackman_window, kaiser_window).

logspace computes its points as torch's kernel does (powers of the base at start + step i for
the first half, end - step (steps - 1 - i) for the second, in double precision, the ends read
in the result's dtype), so integer and float results are torch's. empty_strided lays the new
CPU tensor out with the given strides over a buffer of the size they need, as torch's does; a
CUDA tensor is always contiguous (docs/differences.md). The windows are computed in the
result's dtype in the order of torch's kernels (arange, a scale, cos, ...), and the periodic
ones as the symmetric window one longer, with its last point dropped.
"""

from __future__ import annotations

import builtins
import math
import warnings

import numpy as np

from . import dtypes
from .creation import _finish, as_tensor, check_space_arguments, empty, tensor
from .device import check_device
from .tensor import Tensor


def _scalar(value, dtype: dtypes.DType):
    """A start or end as torch reads it into the result's dtype (an integer truncates)."""
    if isinstance(value, Tensor):
        value = value.item()
    if dtype.category == dtypes.INTEGER or dtype is dtypes.uint8:
        return int(value)
    if dtype.is_complex:
        return complex(np.asarray(value, dtype=dtype.numpy))
    return float(np.asarray(value, dtype=dtype.numpy))


def _is_complex(value) -> bool:
    if isinstance(value, Tensor):
        return value.dtype.is_complex
    return isinstance(value, complex)


def _complex_exponents(first: complex, last: complex, steps: int, dtype) -> np.ndarray:
    first, last = dtype.type(first), dtype.type(last)
    if steps == 1:
        return np.array([first], dtype)
    step = (last - first) / dtype.type(steps - 1)
    i = np.arange(steps).astype(dtype)
    return np.where(np.arange(steps) < steps // 2, first + step * i,
                    last - step * (dtype.type(steps - 1) - i))


def logspace(start, end, steps: int, base: float = 10.0, *, dtype=None, layout=None,
             device=None, requires_grad: bool = False) -> Tensor:
    """`steps` points from base**start to base**end, evenly spaced in the exponent."""
    device = check_device(device)
    check_space_arguments("logspace", start, end, steps)
    if dtype is not None:
        dtype = dtypes.dtype_argument(dtype, "logspace")
    elif any(_is_complex(bound) for bound in (start, end)):
        dtype = dtypes.get_default_dtype().to_complex()
    else:
        dtype = dtypes.get_default_dtype()
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    if dtype.limited and steps >= 2:  # (fewer steps are a fill, which takes uint64)
        raise dtypes.kernel_error("logspace_cpu", dtype)
    first, last = _scalar(start, dtype), _scalar(end, dtype)
    base = float(base)
    with np.errstate(all="ignore"):
        if dtype.is_complex:
            # torch's complex kernel steps in the result's dtype, not in double.
            exponents = _complex_exponents(first, last, steps, dtype.numpy)
        elif steps == 1:
            exponents = np.array([first], np.float64)
        else:
            step = (last - first) / (steps - 1)
            i = np.arange(steps, dtype=np.float64)
            half = steps // 2
            exponents = np.where(i < half, first + step * i, last - step * (steps - i - 1))
        values = np.power(base, exponents)
        if dtype.category == dtypes.INTEGER or dtype is dtypes.uint8:
            values = np.trunc(values)
    return _finish(values[:steps].astype(dtype.numpy), dtype, requires_grad, device)


def _storage_size(size: tuple, stride: tuple) -> int:
    if any(extent == 0 for extent in size):
        return 0
    return 1 + sum((extent - 1) * step for extent, step in zip(size, stride))


def empty_permuted(size, physical_layout, *, dtype=None, layout=None, device=None,
                   requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """An uninitialized tensor of `size` laid out in memory in the dim order
    `physical_layout` (outermost first): empty_strided with those dims' strides."""
    size, order = tuple(int(s) for s in size), tuple(int(d) for d in physical_layout)
    if len(size) != len(order):
        raise RuntimeError(f"Number of dimensions in size does not match the length of the "
                           f"physical_layout; i.e. len(size) = {len(size)} is not equal to "
                           f"len(physical_layout) = {len(order)}")
    for index, dim in enumerate(order):
        if not 0 <= dim < len(size):
            raise RuntimeError(f"Dimension out of range (expected to be between 0 and "
                               f"{len(size) - 1}, but got {dim} at index {index}).  NB: "
                               f"negative dims not currently supported; file an issue if you "
                               f"want it.")
    if sorted(order) != list(builtins.range(len(size))):
        raise RuntimeError("Duplicate dim not allowed")
    stride = [0] * len(size)
    step = 1
    for dim in reversed(order):
        stride[dim] = step
        step *= max(size[dim], 1)
    return empty_strided(size, tuple(stride), dtype=dtype, layout=layout, device=device,
                         requires_grad=requires_grad, pin_memory=pin_memory)


def empty_strided(size, stride, *, dtype=None, layout=None, device=None,
                  requires_grad: bool = False, pin_memory: bool = False) -> Tensor:
    """An uninitialized tensor of `size` with the element strides `stride` (a CPU tensor's
    storage is as large as those strides need)."""
    size, stride = tuple(int(s) for s in size), tuple(int(s) for s in stride)
    if len(size) != len(stride):
        raise RuntimeError("mismatch in length of strides and shape")
    for extent in size:
        if extent < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {extent}: "
                               f"{list(size)}")
    if any(step < 0 for step in stride):
        raise RuntimeError(f"as_strided: Negative strides are not supported at the moment, got "
                           f"strides: {list(stride)}")
    device = check_device(device)
    flat = empty(_storage_size(size, stride), dtype=dtype, device=device)
    data = flat._payload
    if data.__class__ is np.ndarray:
        strides = tuple(step * data.itemsize for step in stride)
        flat._payload = np.lib.stride_tricks.as_strided(data, size, strides)
    else:  # a GPU array is contiguous
        flat = empty(size, dtype=dtype, device=device)
    if requires_grad:
        flat.requires_grad_(True)
    return flat


def scalar_tensor(s, *, dtype=None, layout=None, device=None, requires_grad: bool = False,
                  pin_memory: bool = False) -> Tensor:
    """A 0-d tensor holding the number s, in the default float dtype unless `dtype`."""
    dtype = dtype or dtypes.get_default_dtype()
    return tensor(s, dtype=dtype, device=device, requires_grad=requires_grad)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad: bool = False) -> Tensor:
    """obj as a tensor, sharing its memory where it can (a tensor or a NumPy array of a fitting
    dtype and device) unless copy=True; copy=False refuses to copy."""
    storage_bytes = getattr(type(obj), "_asarray_bytes", None)
    if storage_bytes is not None:  # a storage (ops/storage.py): its bytes as `dtype`, shared
        obj = _storage_array(storage_bytes(obj), dtype)
        dtype = None
    result = as_tensor(obj, dtype=dtype, device=device)
    shared = isinstance(obj, Tensor) and result is obj or (
        isinstance(obj, np.ndarray) and result._payload is not None
        and np.may_share_memory(result._payload, obj))
    if copy and (shared or result is obj):
        result = result.clone()
    elif copy is False and not shared:
        raise ValueError("can't alias tensor from a different device, dtype or a non-buffer "
                         "object without copying")
    if requires_grad:
        result = result.detach().requires_grad_(True) if result is obj else \
            result.requires_grad_(True)
    return result


def _storage_array(values: np.ndarray, dtype) -> np.ndarray:
    """A storage's bytes seen as `dtype` (int64 when none is given, as torch reads one)."""
    target = dtypes.dtype_argument(dtype, "asarray") if dtype is not None else dtypes.int64
    if target.numpy.itemsize != target.itemsize:
        raise NotImplementedError(f"asarray(): autojit holds {target} in another width, so a "
                                  "storage's bytes cannot be read as it in place")
    if values.nbytes % target.itemsize:
        raise ValueError(f"asarray(): a storage of {values.nbytes} bytes is not a whole number "
                         f"of {target} elements ({target.itemsize} bytes each)")
    return values.view(target.numpy)


_READ_ONLY_WARNED: list = []


def frombuffer(buffer, *, dtype, count: int = -1, offset: int = 0,
               requires_grad: bool = False) -> Tensor:
    """A 1-D tensor of `dtype` over an object of the buffer protocol (bytearray, memoryview,
    array.array, ...), sharing its memory, from byte `offset` on, `count` elements (all that
    fit when -1). A read-only buffer (bytes) is copied, with torch's warning, where torch
    shares it still (NumPy cannot write through a read-only buffer)."""
    dtype = dtypes.dtype_argument(dtype, "frombuffer")
    try:
        view = memoryview(buffer)
    except TypeError:
        raise ValueError("object does not implement Python buffer protocol.") from None
    length, size = view.nbytes, dtype.itemsize
    if dtype.numpy.itemsize != size:
        raise NotImplementedError(f"frombuffer(): autojit holds {dtype} in another width")
    if length <= 0 or count == 0:
        raise ValueError(f"both buffer length ({length}) and count ({count}) must not be 0")
    if not 0 <= offset < length:
        raise ValueError(f"offset ({offset} bytes) must be non-negative and no greater than "
                         f"buffer length ({length} bytes) minus 1")
    if count < 0:
        if (length - offset) % size:
            raise ValueError(f"buffer length ({length - offset} bytes) after offset ({offset} "
                             f"bytes) must be a multiple of element size ({size})")
        count = (length - offset) // size
    elif offset + count * size > length:
        raise ValueError(f"requested buffer length ({count} * {size} bytes) after offset "
                         f"({offset} bytes) must not be greater than actual buffer length "
                         f"({length} bytes)")
    array = np.frombuffer(view.cast("B"), dtype=dtype.numpy, count=count, offset=offset)
    if not array.flags.writeable:
        if not _READ_ONLY_WARNED:
            _READ_ONLY_WARNED.append(True)
            warnings.warn("The given buffer is not writable, and PyTorch does not support "
                          "non-writable tensors. This means you can write to the underlying "
                          "(supposedly non-writable) buffer using the tensor. You may want to "
                          "copy the buffer to protect its data or make it writable before "
                          "converting it to a tensor. This type of warning will be suppressed "
                          "for the rest of this program.", UserWarning, stacklevel=2)
        array = array.copy()
    result = Tensor._make(array, dtype)
    if requires_grad:
        result.requires_grad_(True)
    return result


def range(start=0, end=None, step=1, *, dtype=None, layout=None,  # noqa: A001 - torch's name
          device=None, requires_grad: bool = False) -> Tensor:
    """The numbers from start to end inclusive, step apart (deprecated in torch for arange,
    whose end is exclusive)."""
    warnings.warn("torch.range is deprecated and will be removed in a future release because "
                  "its behavior is inconsistent with Python's range builtin. Instead, use "
                  "torch.arange, which produces values in [start, end).", UserWarning,
                  stacklevel=2)
    if end is None:
        start, end = 0, start
    if step == 0:
        raise RuntimeError("step must be nonzero")
    if (step > 0 and start > end) or (step < 0 and start < end):
        raise RuntimeError("upper bound and lower bound inconsistent with step sign")
    dtype = dtypes.dtype_argument(dtype, "range") if dtype is not None else \
        dtypes.get_default_dtype()
    count = int(math.floor((end - start) / step)) + 1
    values = start + step * np.arange(count, dtype=np.float64)
    return _finish(values.astype(dtype.numpy), dtype, requires_grad, check_device(device))


def _window_dtype(name: str, dtype):
    dtype = dtypes.dtype_argument(dtype, name) if dtype is not None else \
        dtypes.get_default_dtype()
    if not dtype.is_floating_point:
        raise RuntimeError(f"{name} expects floating point dtypes, got: TensorOptions(dtype="
                           f"{dtypes.C_TYPE_NAMES[dtype.name]}, device=cpu, layout=Strided "
                           "(default), requires_grad=false (default), pinned_memory=false, "
                           "memory_format=(nullopt))")
    return dtype


def _window(name: str, window_length: int, periodic: bool, dtype, device, requires_grad,
            points):
    """torch's window factories: the window of `points(n, numpy dtype)` over n points (n + 1
    for a periodic one, whose last point is dropped)."""
    dtype = _window_dtype(name, dtype)
    if window_length < 0:
        raise RuntimeError(f"{name} requires non-negative window_length, got "
                           f"window_length={window_length}")
    kind = np.float32 if dtype in (dtypes.float16, dtypes.bfloat16) else np.dtype(dtype.numpy).type
    if window_length <= 1:
        values = np.ones(window_length, kind)
    else:
        length = window_length + 1 if periodic else window_length
        values = points(length, kind)[:window_length]
    return _finish(values.astype(dtype.numpy), dtype, requires_grad, check_device(device))


def _cosine_window(alpha: float, beta: float):
    def points(n, kind):
        scale = kind(math.pi * 2.0 / (n - 1))
        return (np.cos(np.arange(n, dtype=kind) * scale) * kind(-beta) + kind(alpha)).astype(kind)

    return points


def hamming_window(window_length: int, periodic: bool = True, alpha: float = 0.54,
                   beta: float = 0.46, *, dtype=None, layout=None, device=None,
                   requires_grad: bool = False) -> Tensor:
    """The Hamming window, `alpha - beta cos(2 pi n / (N - 1))`."""
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_window(alpha, beta))


def hann_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                device=None, requires_grad: bool = False) -> Tensor:
    """The Hann window, `0.5 - 0.5 cos(2 pi n / (N - 1))`."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   _cosine_window(0.5, 0.5))


def _bartlett(n, kind):
    window = np.arange(n, dtype=kind) * kind(2.0 / (n - 1))
    half = ((n - 1) >> 1) + 1
    window[half:] = window[half:] * kind(-1) + kind(2)
    return window


def bartlett_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, requires_grad: bool = False) -> Tensor:
    """The Bartlett (triangular) window, `1 - |2n / (N - 1) - 1|`."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   _bartlett)


def _blackman(n, kind):
    window = np.arange(n, dtype=kind) * kind(math.pi / (n - 1))
    return (np.cos(window * kind(4)) * kind(0.08) - np.cos(window * kind(2)) * kind(0.5)
            + kind(0.42)).astype(kind)


def blackman_window(window_length: int, periodic: bool = True, *, dtype=None, layout=None,
                    device=None, requires_grad: bool = False) -> Tensor:
    """The Blackman window, `0.42 - 0.5 cos(2 pi n / (N - 1)) + 0.08 cos(4 pi n / (N - 1))`."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   _blackman)


def kaiser_window(window_length: int, periodic: bool = True, beta: float = 12.0, *,
                  dtype=None, layout=None, device=None, requires_grad: bool = False) -> Tensor:
    """The Kaiser window, `I0(beta sqrt(1 - ((n - a) / a)^2)) / I0(beta)`, a = (N - 1) / 2."""
    def points(n, kind):
        a = (n - 1) / 2.0
        ratio = (np.arange(n, dtype=np.float64) - a) / a
        return (np.i0(beta * np.sqrt(np.abs(1 - ratio ** 2))) / np.i0(beta)).astype(kind)

    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   points)
