"""Process settings and questions of torch's top level beside the dtype defaults (dtypes.py):
set_default_tensor_type (deprecated in torch for set_default_dtype and set_default_device),
set_flush_denormal, is_storage and typename. set_warn_always and is_warn_always_enabled are
once.py's, which reads them.
"""

from __future__ import annotations

import warnings

from . import dtypes
from .device import set_default_device
from .tensor import Tensor


def set_default_tensor_type(t) -> None:
    """Make the dtype (and device, for a CUDA type) of the legacy tensor type `t` (a class
    such as autojit.DoubleTensor, or its name) the defaults."""
    warnings.warn("torch.set_default_tensor_type() is deprecated as of PyTorch 2.1, please use "
                  "torch.set_default_dtype() and torch.set_default_device() as alternatives.",
                  UserWarning, stacklevel=2)
    if isinstance(t, dtypes.DType):
        raise TypeError("invalid type object: only floating-point types are supported as the "
                        "default type")
    if isinstance(t, str):
        name = t
    else:
        name = f"{getattr(t, '__module__', '')}.{getattr(t, '__name__', '')}"
    short = name.rsplit(".", 1)[-1]
    # A legacy type's name is its scalar type's and "Tensor" (DoubleTensor for float64).
    dtype = next((d for d in dtypes.ALL
                  if f"{dtypes.SCALAR_TYPE_NAMES[d.name]}Tensor" == short), None)
    if dtype is None:
        raise TypeError(f"invalid type: '{t}'")
    if not dtype.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    dtypes.set_default_dtype(dtype)
    if ".cuda." in name:
        set_default_device("cuda")


def set_flush_denormal(mode: bool) -> bool:
    """Whether flushing subnormal floats to zero could be set: False, NumPy offers no switch
    for it (torch's answer on a CPU without the instructions)."""
    return False


def is_storage(obj) -> bool:
    """Whether obj is a storage object (`x.untyped_storage()`, ops/storage.py's classes, which
    say so by a class attribute: they sit in a layer above this one)."""
    return getattr(type(obj), "_is_storage", False) is True


def typename(obj) -> str:
    """The type of obj as torch names it: 'autojit.FloatTensor' for a tensor, the qualified
    class name otherwise."""
    if isinstance(obj, Tensor):
        return obj.type()
    cls = type(obj)
    module = cls.__module__
    return cls.__qualname__ if module in ("builtins", None) else f"{module}.{cls.__qualname__}"
