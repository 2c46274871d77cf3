"""torch's legacy constructors: Tensor(...), FloatTensor(...) and the other typed ones.

`autojit.Tensor(2, 3)` is an uninitialized (here zero) tensor of shape [2, 3], not data:
integers (or an autojit.Size) are sizes, a sequence or an ndarray is data, a tensor is
aliased, and nothing gives an empty tensor. `Tensor` makes the default dtype and aliases a
tensor as it is; `FloatTensor`, `DoubleTensor`, `HalfTensor`, `LongTensor`, `IntTensor`,
`ShortTensor`, `CharTensor` (int8), `ByteTensor` (uint8), `BoolTensor` and `BFloat16Tensor`
make their own dtype and alias only a tensor of it. Every other argument raises torch's
TypeError: a lone number is not data (`Tensor(2.5)`), and `dtype=` and `requires_grad=` are not
accepted. The typed names are not classes of their own:
they make Tensors, and `isinstance(x, autojit.FloatTensor)` asks whether x is a float32 CPU
tensor. `autojit.cuda.FloatTensor` and its siblings (CUDA_TYPES, re-exported by autojit.cuda) do
the same on the GPU: they make CUDA tensors (on the current device unless `device=` says) and
test for them.

Tensor.__new__ calls `legacy_new` through the hook this module installs at import
(`Tensor._legacy_new`), since building an alias needs an op (ops/layout/__init__.py), a layer above
tensor/tensor.py.
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence

import numpy as np

from ..tensor import dtypes
from ..tensor.creation import tensor as make_tensor
from ..tensor.creation import zeros
from ..tensor.device import check_device
from ..tensor.symbolic import SymInt
from ..tensor.tensor import Size, Tensor
from .layout import PERMUTE
from .registry import bind

# torch's names of the element types, in type names ("autojit.FloatTensor") and in the
# TensorOptions of its alias error ("dtype=double").
_TYPE_NAMES = dtypes.SCALAR_TYPE_NAMES
_C_NAMES = dtypes.C_TYPE_NAMES
_SIGNATURES = ("but expected one of:\n"
               " * (*, autojit.device device = None)\n"
               " * (Tensor other)\n"
               " * (tuple of ints size, *, autojit.device device = None)\n"
               " * (object data, *, autojit.device device = None)\n")


def _type_name(value) -> str:
    """How torch names an argument's type: builtins bare, others with their module."""
    if isinstance(value, Tensor):
        return "Tensor"
    if isinstance(value, dtypes.DType):
        return "autojit.dtype"
    kind = type(value)
    module = kind.__module__.split(".")[0]
    return kind.__qualname__ if module == "builtins" else f"{module}.{kind.__qualname__}"


def _invalid(args: tuple, kwargs: dict) -> TypeError:
    # torch names the keywords it does not know first.
    ordered = sorted(kwargs.items(), key=lambda item: item[0] in ("device", "size", "data",
                                                                   "other"))
    got = [_type_name(a) for a in args] + [f"{k}={_type_name(v)}" for k, v in ordered]
    listed = ", ".join(got) + (", " if len(got) == 1 and kwargs and not args else "")
    return TypeError(f"new() received an invalid combination of arguments - got ({listed}), "
                     + _SIGNATURES)


def _is_size(value, first: bool) -> bool:
    """An int a size can hold: Python and NumPy integers, 0-d integer arrays, symbolic sizes;
    a bool only after the first size, as in torch."""
    if isinstance(value, SymInt):
        return True
    if isinstance(value, bool):
        return not first
    if isinstance(value, numbers.Integral):
        return True
    return isinstance(value, np.ndarray) and value.ndim == 0 and value.dtype.kind in "iu"


def _sizes(dtype: dtypes.DType, shape: tuple, device) -> Tensor:
    shape = tuple(s if isinstance(s, SymInt) else int(s) for s in shape)
    for extent in shape:
        if extent < 0:
            raise RuntimeError(f"Trying to create tensor with negative dimension {extent}: "
                               f"{list(shape)}")
    # torch leaves the memory uninitialized; zeros are one of the values it could hold.
    return zeros(shape, dtype=dtype, device=device)


def _alias(dtype: dtypes.DType | None, other: Tensor, device_type: str = "cpu") -> Tensor:
    """other itself under a new name: a view sharing storage, version counter and autograd
    history (torch's alias), for a tensor of the constructor's dtype and device."""
    if dtype is not None and (other.dtype is not dtype or other.device.type != device_type):
        raise TypeError(
            f"expected TensorOptions(dtype={_C_NAMES[dtype.name]}, device={device_type}) (got "
            f"TensorOptions(dtype={_C_NAMES[other.dtype.name]}, device={other.device}))")
    return bind(PERMUTE, (other,), {"dims": tuple(range(other.ndim))})


def legacy_new(dtype: dtypes.DType | None, args: tuple, kwargs: dict,
               device_type: str = "cpu") -> Tensor:
    """A tensor as torch's legacy constructor makes it; dtype None means Tensor's: the
    default dtype for sizes and data, the tensor's own when aliasing. device_type "cuda" is
    autojit.cuda's typed constructors: their tensors are on the GPU."""
    keywords = dict(kwargs)
    device = keywords.pop("device", None)
    if device_type == "cuda" and device is None:
        device = "cuda"
    if len(keywords) > 1 or (keywords and args) or (set(keywords) - {"size", "data", "other"}):
        raise _invalid(args, kwargs)
    if "other" in keywords:
        if device is not None or not isinstance(keywords["other"], Tensor):
            raise _invalid(args, kwargs)
        return _alias(dtype, keywords["other"], device_type)
    made = dtype or dtypes.get_default_dtype()
    if "size" in keywords:
        size = keywords["size"]
        if not isinstance(size, (tuple, list)) or not all(_is_size(s, False) for s in size):
            raise _invalid(args, kwargs)
        return _sizes(made, tuple(size), check_device(device))
    if "data" in keywords:
        args = (keywords["data"],)
    device = check_device(device)
    if not args:
        return zeros(0, dtype=made, device=device)
    first = args[0]
    if len(args) > 1 or _is_size(first, True) or isinstance(first, Size):
        if len(args) == 1 and isinstance(first, Size):
            return _sizes(made, tuple(first), device)
        if not _is_size(first, True):
            raise _invalid(args, kwargs)
        for position, value in enumerate(args[1:], 2):
            if not _is_size(value, False):
                raise TypeError(f"new(): argument 'size' failed to unpack the object at pos "
                                f"{position} with error \"type must be tuple of ints,but got "
                                f"{_type_name(value)}\"")
        return _sizes(made, args, device)
    if isinstance(first, Tensor):
        if kwargs.get("device") is not None:
            raise _invalid(args, kwargs)
        return _alias(dtype, first, device_type)
    storage_bytes = getattr(type(first), "_asarray_bytes", None)
    if storage_bytes is not None:  # a storage (ops/storage.py): a 1-D tensor over its bytes
        values = storage_bytes(first)
        if made.numpy.itemsize != made.itemsize or values.nbytes % made.itemsize:
            raise RuntimeError(f"new(): a storage of {values.nbytes} bytes cannot hold "
                               f"{made} elements")
        return Tensor._make(values.view(made.numpy), made)
    if isinstance(first, (str, bytes)):
        raise TypeError(f"new(): invalid data type '{type(first).__name__}'")
    if not isinstance(first, (Sequence, np.ndarray)):
        raise TypeError(f"new(): data must be a sequence (got {_type_name(first)})")
    data = list(first) if isinstance(first, range) else first
    return make_tensor(data, dtype=made, device=device)


class _LegacyTensorType(type):
    """The type of FloatTensor and its siblings: calling one makes a Tensor of its dtype, and
    isinstance tests a tensor's dtype and device."""

    def __call__(cls, *args, **kwargs):
        return legacy_new(cls.dtype, args, kwargs, "cuda" if cls.is_cuda else "cpu")

    def __instancecheck__(cls, instance) -> bool:
        return (isinstance(instance, Tensor) and instance.dtype is cls.dtype
                and instance.device.type == ("cuda" if cls.is_cuda else "cpu"))

    def __repr__(cls) -> str:
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _legacy_type(dtype: dtypes.DType, cuda: bool = False) -> type:
    name = f"{_TYPE_NAMES[dtype.name]}Tensor"
    module = "autojit.cuda" if cuda else "autojit"
    where = "CUDA" if cuda else "CPU"
    doc = (f"{name}(*sizes), {name}(data), {name}(tensor): a {dtype.name} {where} tensor, "
           f"torch's legacy constructor; isinstance(x, {module}.{name}) tests x's dtype and "
           "device.")
    return _LegacyTensorType(name, (), {"dtype": dtype, "is_cuda": cuda, "__doc__": doc,
                                        "__module__": module, "__slots__": ()})


FloatTensor = _legacy_type(dtypes.float32)
DoubleTensor = _legacy_type(dtypes.float64)
HalfTensor = _legacy_type(dtypes.float16)
LongTensor = _legacy_type(dtypes.int64)
IntTensor = _legacy_type(dtypes.int32)
ShortTensor = _legacy_type(dtypes.int16)
CharTensor = _legacy_type(dtypes.int8)
ByteTensor = _legacy_type(dtypes.uint8)
BoolTensor = _legacy_type(dtypes.bool_)
BFloat16Tensor = _legacy_type(dtypes.bfloat16)
LEGACY_TYPES = (FloatTensor, DoubleTensor, HalfTensor, LongTensor, IntTensor, ShortTensor,
                CharTensor, ByteTensor, BoolTensor, BFloat16Tensor)
_BY_NAME = {kind.__name__: kind for kind in LEGACY_TYPES}
# autojit.cuda's: the same names, making and testing for tensors on the GPU.
CUDA_TYPES = {kind.__name__: _legacy_type(kind.dtype, cuda=True) for kind in LEGACY_TYPES}


def tensor_type(self: Tensor, dtype=None, non_blocking: bool = False, **kwargs):
    """x.type(): the type name ("autojit.FloatTensor"); x.type(t): x converted to t, a dtype,
    a legacy type or its name, "autojit.DoubleTensor" or torch's "torch.DoubleTensor" (a
    ".cuda." name or an autojit.cuda type moves x to the GPU, another name or type to the CPU,
    as torch's do); x itself when it already is one."""
    if dtype is None:
        # "torch.FloatTensor" under the drop-in, where old code compares x.type() with it
        prefix = dtypes.REPR_PREFIX[0] + (".cuda." if self.device.type == "cuda" else ".")
        return f"{prefix}{_TYPE_NAMES[self.dtype.name]}Tensor"
    device = None
    if isinstance(dtype, str):
        module, _, name = dtype.rpartition(".")
        found = _BY_NAME.get(name) if module in ("autojit", "torch", "autojit.cuda",
                                                  "torch.cuda") else None
        if found is None:
            raise ValueError(f"invalid type: '{dtype}'")
        dtype = found.dtype
        wanted = "cuda" if module.endswith(".cuda") else "cpu"
        device = wanted if self.device.type != wanted else None
    elif isinstance(dtype, _LegacyTensorType):
        wanted = "cuda" if dtype.is_cuda else "cpu"
        device = wanted if self.device.type != wanted else None
        dtype = dtype.dtype
    target = dtypes.to_dtype(dtype)
    if device is not None:
        return self.to(device, target)
    return self if self.dtype is target else self.to(target)


Tensor._legacy_new = staticmethod(legacy_new)
Tensor.type = tensor_type
