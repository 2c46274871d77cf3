"""torch's `__torch_dispatch__` protocol, for wrapper subclasses: a Tensor subclass that defines
`__torch_dispatch__` and makes its instances with `Tensor._make_wrapper_subclass` (declaring a
shape, dtype, strides and device, and holding its real data itself, as torch_geometric's
EdgeIndex and Index do) sees each of its ops as an aten operator, `aten.index_select.default`,
with aten's arguments, and returns what it likes.

It sits in the tensor layer, beside the `__torch_function__` protocol (torch_function.py),
whose wrappers find the instances among a call's arguments; the aten operators and the
translation of each public call into them (`x[0]` is `aten.select.int(x, 0, 0)`) are the op
layer's (ops/torch_dispatch.py installs `TO_ATEN`). The instances' data is a WrapperArray
(meta.py): a shape and no elements, so nothing but the subclass's handler reads it.
"""

from __future__ import annotations

from . import dtypes
from .device import device as _device
from .meta import WrapperArray
from .tensor import Tensor

# Installed by ops/torch_dispatch.py: TO_ATEN(name, impl, *args, **kwargs) runs the public call
# `name` (torch's name, "torch.Tensor.index_select") as the aten operators torch dispatches it
# to, handing those to the subclass's __torch_dispatch__ (impl: the call itself, for what torch
# answers from the declared metadata: sizes, dtype, device).
TO_ATEN = None
# Whether an instance of a dispatching subclass was ever made: until then no aten operator
# looks at its arguments' types.
ACTIVE = False
# type -> whether it dispatches (a Tensor subclass defining __torch_dispatch__)
_KINDS: dict = {}
_WARNED: set = set()  # the classes warn_not_wrapped warned of


def dispatches(kind: type) -> bool:
    """Whether instances of `kind` hand their ops to its `__torch_dispatch__`."""
    known = _KINDS.get(kind)
    if known is None:
        known = _KINDS[kind] = kind is not Tensor and isinstance(kind, type) and \
            issubclass(kind, Tensor) and getattr(kind, "__torch_dispatch__", None) is not None
    return known


def dispatching_arguments(values, found=None, nested=True):
    """The values (and, with `nested`, the items of list and tuple values) that are instances
    of wrapper subclasses (their data a WrapperArray; an instance of a dispatching subclass
    holding its own data runs autojit's ops, warn_not_wrapped), a subclass before its bases,
    one per type; or None."""
    for value in values:
        kind = value.__class__
        if kind is list or kind is tuple:
            if nested:
                found = dispatching_arguments(value, found, False)
        elif isinstance(value, Tensor) and value._payload.__class__ is WrapperArray:
            if found is None:
                found = [value]
            elif all(other.__class__ is not kind for other in found):
                position = next((index for index, other in enumerate(found)
                                 if issubclass(kind, other.__class__)), len(found))
                found.insert(position, value)
    return found


def call(overload, found, args, kwargs):
    """`overload` (an aten OpOverload) handed to the first dispatching argument's
    `__torch_dispatch__`, then the next's while a handler returns NotImplemented."""
    kinds = tuple(value.__class__ for value in found)
    for value in found:
        result = value.__class__.__torch_dispatch__(overload, kinds, args, kwargs)
        if result is not NotImplemented:
            return result
    listed = "".join(f"  - tensor subclass {kind!r}\n" for kind in kinds)
    raise TypeError(f"Multiple dispatch failed for '{overload}'; all __torch_dispatch__ "
                    f"handlers returned NotImplemented:\n\n{listed}")


def _make_wrapper_subclass(cls, size, strides=None, storage_offset=None, memory_format=None,
                           dtype=None, layout=None, device=None, pin_memory=False,
                           requires_grad=False, dispatch_sizes_strides_policy=None,
                           dispatch_device=False, dispatch_layout=False,
                           _extra_dispatch_keys=None, storage_size=None):
    """An instance of `cls` with the given metadata and no data (torch's
    Tensor._make_wrapper_subclass): its ops go to `cls.__torch_dispatch__`."""
    global ACTIVE
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError(f"cls must be a type (got {type(cls).__name__})")
    dtype = dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype)
    size = tuple(int(extent) for extent in size)
    if strides is None:
        strides, step = [], 1
        for extent in reversed(size):
            strides.insert(0, step)
            step *= max(extent, 1)
    place = _device("cpu") if device is None else _device(device)
    if place.type == "cuda" and place.index is None:
        place = _device("cuda", 0)
    ACTIVE = True
    Tensor._arm_subclass(cls, True)
    made = object.__new__(cls)
    made._init(WrapperArray(size, dtype.numpy, strides, place, layout), dtype)
    if requires_grad:
        refuse_grad(cls)
    return made


def refuse_grad(cls) -> None:
    """A wrapper subclass's instance may not require grad: autograd runs above
    __torch_dispatch__ in torch, and autojit's does not record the handler's operators, so the
    gradients would be silently missing."""
    raise NotImplementedError(
        f"autojit: {cls.__name__} (a __torch_dispatch__ wrapper subclass) cannot require grad: "
        "autojit's autograd does not record the operators its __torch_dispatch__ runs, so its "
        "gradients would be missing")


Tensor._make_wrapper_subclass = staticmethod(_make_wrapper_subclass)


def warn_not_wrapped(cls) -> None:
    """An instance of a subclass defining __torch_dispatch__ that holds its own data
    (as_subclass, _make_subclass, its constructor): autojit calls the handler of wrapper
    subclasses only, so this one's ops run as a plain subclass's (warned once per class)."""
    if cls in _WARNED:
        return
    _WARNED.add(cls)
    import warnings

    warnings.warn(f"autojit: {cls.__name__} defines __torch_dispatch__, which autojit calls "
                  "for wrapper subclasses only (made by Tensor._make_wrapper_subclass); this "
                  "instance holds its own data, and its ops run as a plain Tensor subclass's, "
                  "without the handler", UserWarning, stacklevel=3)


def _reduce_wrapper(self, protocol=2):
    """pickle's reduction of a wrapper subclass's instance, as torch's: the declared metadata
    and the instance's attributes (which hold its data)."""
    args = (type(self), self._dtype, tuple(self.shape), self._payload.element_strides, 0,
            self._payload.layout, self._payload.device, self._requires_grad)
    return (_rebuild_from_type_v2, (_rebuild_wrapper_subclass, type(self), args,
                                    dict(vars(self))))


def _rebuild_wrapper_subclass(cls, dtype, size, stride, storage_offset, layout, device,
                              requires_grad):
    """torch._utils._rebuild_wrapper_subclass: the instance, before its attributes."""
    return _make_wrapper_subclass(cls, size, strides=stride, storage_offset=storage_offset,
                                  dtype=dtype, layout=layout, device=device,
                                  requires_grad=requires_grad)


def _rebuild_from_type_v2(function, new_type, args, state):
    """torch._tensor._rebuild_from_type_v2: `function(*args)` as `new_type`, with `state` (an
    attribute dict, or torch's (dict, slots) pair) set on it."""
    made = function(*args)
    if type(made) is not new_type:
        made = made.as_subclass(new_type)
    own = getattr(new_type, "__setstate__", None)
    if own is not None and own is not getattr(Tensor, "__setstate__", None):
        made.__setstate__(state)
        return made
    if isinstance(state, tuple):
        state, slots = state
        for key, value in (slots or {}).items():
            setattr(made, key, value)
    for key, value in (state or {}).items():
        setattr(made, key, value)
    return made


__all__ = ["ACTIVE", "TO_ATEN", "call", "dispatches", "dispatching_arguments"]
