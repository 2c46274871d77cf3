"""A public call on an instance of a `__torch_dispatch__` wrapper subclass, run as the aten
operators torch dispatches it to (tensor/torch_dispatch.py has the protocol): `x[0]` is
`aten.select.int(x, 0, 0)`, `x[:, i]` is `aten.index.Tensor(x, [None, i])`, `x.long()` is
`aten._to_copy.default(x, dtype=torch.int64)` (or `x` itself when nothing changes), `x + y`
is `aten.add.Tensor(x, y)`; the subclass's handler gets each operator and its arguments.

What torch answers from the declared metadata without dispatching (`size()`, `dim()`,
`stride()`, `dtype`, `device`, `requires_grad`) runs the call itself. A call torch dispatches
to an operator of its own name uses the aten namespace's operator where it is registered
(aten_namespace.py), and otherwise an operator of that name made here, which runs autojit's
public function (so that a handler's fallback, `func(*unwrapped_args)`, works).
"""

from __future__ import annotations

import sys

from ..tensor import dtypes, torch_dispatch
from ..tensor.device import device as _device
from ..tensor.memory_format import contiguous_format
from ..tensor.state import state
from ..tensor.tensor import Tensor
from .aten_namespace import _PACKETS, OpOverloadPacket, aten

# Answered from the wrapper's declared metadata, without an operator (torch's sizes, strides,
# dtype and device of a wrapper subclass, and the autograd flags).
_METADATA = frozenset((
    "size", "dim", "ndimension", "numel", "nelement", "stride", "storage_offset",
    "is_contiguous", "element_size", "is_floating_point", "is_complex", "is_signed",
    "get_device", "requires_grad_", "retain_grad", "register_hook",
    "register_post_accumulate_grad_hook", "__len__", "is_inference", "__dir__", "is_pinned",
    "shape", "dtype", "device", "ndim", "is_cuda", "is_cpu", "is_meta", "requires_grad",
    "grad", "grad_fn", "is_leaf", "layout", "is_sparse", "is_sparse_csr", "itemsize",
    "nbytes", "names", "is_quantized", "is_nested", "is_mkldnn", "output_nr", "retains_grad",
    "is_xpu", "is_mps", "__setstate__", "__format__", "dim_order", "is_set_to"))

# name -> the operator made here for a public call with no registered aten operator
_MADE: dict = {}


def _operator(name: str, impl, overloads=("default",)):
    """The aten operator torch dispatches `name` to: the registered one, or one made here whose
    `overloads` run `impl`."""
    packet = _PACKETS.get(name)
    if packet is None:
        packet = _MADE.get(name)
        if packet is None:
            packet = _MADE[name] = OpOverloadPacket(name, dict.fromkeys(overloads, impl))
    return packet


def _dtype_target(self, dtype):
    return aten._to_copy.default(self, dtype=dtype) if dtype != self.dtype else self


def _to(self, *args, **kwargs):
    """Tensor.to: aten._to_copy with what changes, or self (torch's to() returns the tensor
    itself when dtype and device are its own and copy is not asked)."""
    dtype = kwargs.pop("dtype", None)
    device = kwargs.pop("device", None)
    copy = kwargs.pop("copy", False)
    memory_format = kwargs.pop("memory_format", None)
    kwargs.pop("non_blocking", None)
    flags = []  # positional (non_blocking, copy), after the device or dtype
    for arg in args:
        if isinstance(arg, bool):
            flags.append(arg)
        elif isinstance(arg, Tensor):
            dtype, device = arg.dtype, arg.device
        elif isinstance(arg, dtypes.DType):
            dtype = arg
        elif isinstance(arg, (str, int, _device)):
            device = arg
    if len(flags) > 1:
        copy = flags[1]
    options = {}
    if dtype is not None and (dtype != self.dtype or copy):
        options["dtype"] = dtype
    if device is not None:
        device = _device(device)
        if device.type != self.device.type or (
                device.index is not None and device.index != self.device.index):
            options["device"] = device
    if memory_format is not None:
        options["memory_format"] = memory_format
    if not options and not copy:
        return self
    return aten._to_copy.default(self, **options)


def _to_device(kind):
    def move(self, device=None, non_blocking=False, **kwargs):
        return _to(self, device=kind if device is None or kind == "cpu" else device)
    return move


def _cast(dtype_name):
    def cast(self, memory_format=None):
        return _dtype_target(self, getattr(dtypes, dtype_name))
    return cast


def _type(self, dtype=None, non_blocking=False, **kwargs):
    if dtype is None:
        return Tensor.type(self)
    return _dtype_target(self, dtypes.to_dtype(dtype))


def _contiguous(self, memory_format=contiguous_format):
    if self.is_contiguous():
        return self
    return aten.clone.default(self, memory_format=contiguous_format)


def _slice_args(self, dim: int, item: slice):
    start = 0 if item.start is None else item.start
    end = sys.maxsize if item.stop is None else item.stop
    step = 1 if item.step is None else item.step
    if start == 0 and end >= self.shape[dim] and step == 1:
        return None  # the whole dim: torch's indexing takes no slice
    return (start, end) if step == 1 else (start, end, step)  # (aten's default step left out)


def _getitem(self, key):
    """x[key]: the basic indexing (select.int, slice.Tensor, unsqueeze.default) first, then
    one index.Tensor with an index per dim (None where there is none), as torch's indexing."""
    key = key if isinstance(key, tuple) else (key,)
    used = sum(item.ndim if isinstance(item, Tensor) and item.dtype == dtypes.bool_ else 1
               for item in key if item is not None and item is not Ellipsis)
    result, dim, indices = self, 0, []
    for item in key:
        if item is Ellipsis:
            skipped = self.ndim - used
            dim += skipped
            indices.extend([None] * skipped)
        elif item is None:
            result = aten.unsqueeze.default(result, dim)
            dim += 1
            indices.append(None)
        elif isinstance(item, slice):
            bounds = _slice_args(result, dim, item)
            if bounds is not None:
                result = aten.slice.Tensor(result, dim, *bounds)
            dim += 1
            indices.append(None)
        elif isinstance(item, int) and not isinstance(item, bool) or isinstance(item, Tensor) \
                and item.ndim == 0 and item.dtype.category < dtypes.FLOATING \
                and item.dtype != dtypes.bool_:
            result = aten.select.int(result, dim, int(item))
        else:  # an advanced index: a tensor, a list, a bool
            item = item if isinstance(item, Tensor) else _as_index(item)
            indices.append(item)
            dim += item.ndim if item.dtype == dtypes.bool_ else 1
    while indices and indices[-1] is None:
        indices.pop()
    if indices:
        result = aten.index.Tensor(result, indices)
    elif result is self:
        result = aten.alias.default(self)
    return result


def _as_index(item):
    from .factories import tensor

    return tensor(item)


def _setitem(self, key, value):
    """x[key] = value: index_put_ with the key's tensors, or copy_/fill_ into the view."""
    if isinstance(key, Tensor) and key.ndim > 0 or isinstance(key, list):
        key = _as_index(key) if isinstance(key, list) else key
        values = value if isinstance(value, Tensor) else _as_index(value).to(self.dtype)
        _operator("index_put_", Tensor.index_put_).default(self, [key], values)
        return
    target = _getitem(self, key)
    if isinstance(value, Tensor):
        _operator("copy_", Tensor.copy_).default(target, value)
    else:
        _operator("fill_", Tensor.fill_, ("Scalar",)).Scalar(target, value)


def _binary(name, scalar_overload=False):
    """An operator of two operands: aten's `.Tensor` overload; with `scalar_overload`
    (comparisons and bitwise ops), `.Scalar` where the other operand is a number, as torch
    hands it over (its arithmetic takes a number as a tensor: `x + 1` is add.Tensor)."""
    def call(self, other, *, alpha=None):
        packet = _operator(name, getattr(Tensor, name), ("Tensor", "Scalar"))
        overload = packet.Scalar if scalar_overload and not isinstance(other, Tensor) \
            else packet.Tensor
        return overload(self, other) if alpha is None else overload(self, other, alpha=alpha)
    return call


def _rsub(self, other, alpha=1):
    packet = _operator("rsub", Tensor.__rsub__, ("Tensor", "Scalar"))
    return (packet.Tensor if isinstance(other, Tensor) else packet.Scalar)(self, other)


def _matmul(self, other):
    if self.ndim == 2 and other.ndim == 2:
        return aten.mm.default(self, other)
    return _operator("matmul", Tensor.matmul).default(self, other)


def _sort(self, dim=-1, descending=False, stable=None):
    if stable is None:  # (aten's trailing defaults left out, as torch hands them over)
        return aten.sort.default(self, *((dim, descending) if descending else
                                         (dim,) if dim != -1 else ()))
    keywords = {"dim": dim} if dim != -1 else {}
    if descending:
        keywords["descending"] = True
    return aten.sort.stable(self, stable=stable, **keywords)


def _flip(self, *dims):
    dims = list(dims[0]) if len(dims) == 1 and isinstance(dims[0], (list, tuple)) \
        else list(dims)
    return aten.flip.default(self, dims)


def _cat(tensors, dim=0, *, out=None):
    return aten.cat.default(list(tensors), dim)


def _narrow(self, dim, start, length):
    start = int(start)
    return aten.slice.Tensor(self, dim, start, start + int(length))


def _view(self, *shape, dtype=None):
    if dtype is not None or shape and isinstance(shape[0], dtypes.DType):
        return _operator("view", Tensor.view, ("default", "dtype")).dtype(
            self, dtype if dtype is not None else shape[0])
    shape = list(shape[0]) if len(shape) == 1 and isinstance(shape[0], (list, tuple)) \
        else list(shape)
    return _operator("view", Tensor.view, ("default", "dtype")).default(self, shape)


def _clone(self, *, memory_format=None):
    if memory_format is None:
        return aten.clone.default(self)
    return aten.clone.default(self, memory_format=memory_format)


def _iterate(self):
    if self.ndim == 0:
        raise TypeError("iteration over a 0-d tensor")
    return iter(aten.unbind.int(self))


def _deepcopy(self, memo):
    """copy.deepcopy: a clone (which must be of the same subclass) under no_grad, with the
    instance's attributes deep-copied, as torch's Tensor.__deepcopy__ copies a wrapper."""
    import copy

    if id(self) in memo:
        return memo[id(self)]
    enabled, state.grad_enabled = state.grad_enabled, False
    try:
        new = aten.clone.default(self)
    finally:
        state.grad_enabled = enabled
    if type(new) is not type(self):
        raise RuntimeError(
            "The default implementation of __deepcopy__() for wrapper subclasses only works "
            "for subclass types that implement clone() and for which cloning returns another "
            "instance of the same subclass. You should either properly implement clone() for "
            "your subclass or override __deepcopy__() if it is intended behavior for clone() "
            "to return an instance of a different type.")
    if self.requires_grad:
        new.requires_grad_(True)
    memo[id(self)] = new
    for key, value in copy.deepcopy(dict(vars(self)), memo).items():
        setattr(new, key, value)
    return new


def _repr(self) -> str:
    """repr of an instance whose class prints as a tensor: its values read through the
    operators torch's printing uses (a flat view, then each element), printed as a tensor
    with the class's name in front."""
    from ..tensor.creation import tensor

    flat = _operator("view", Tensor.view).default(self, [-1])
    if torch_dispatch.dispatching_arguments((flat,)) is not None:
        values = [aten.select.int(flat, 0, index) for index in range(self.numel())]
        values = [value.item() if isinstance(value, Tensor) else value for value in values]
        flat = tensor(values, dtype=self.dtype)
    text = repr(flat.reshape(tuple(self.shape)))
    body = text[len("tensor("):] if text.startswith("tensor(") else text
    return f"{type(self).__name__}(" + body.replace("\n" + " " * len("tensor("),
                                                    "\n" + " " * (len(type(self).__name__) + 1))


def _squeeze(self, dim=None):
    """x.squeeze(), x.squeeze(d) and x.squeeze((d, e)) as aten's three overloads."""
    if dim is None:
        return aten.squeeze.default(self)
    if isinstance(dim, (tuple, list)):
        return aten.squeeze.dims(self, list(dim))
    return aten.squeeze.dim(self, dim)


RULES = {
    "__deepcopy__": _deepcopy, "squeeze": _squeeze, "__reduce_ex__": torch_dispatch._reduce_wrapper,
    "__getitem__": _getitem, "__setitem__": _setitem, "to": _to, "cpu": _to_device("cpu"),
    "cuda": _to_device("cuda"), "type": _type, "contiguous": _contiguous,
    "narrow": _narrow, "sort": _sort, "flip": _flip, "cat": _cat, "concat": _cat,
    "concatenate": _cat, "clone": _clone, "__iter__": _iterate,
    "index_select": lambda self, dim, index: aten.index_select.default(self, dim, index),
    "select": lambda self, dim, index: aten.select.int(self, dim, index),
    "unbind": lambda self, dim=0: tuple(aten.unbind.int(self, *((dim,) if dim else ()))),
    "view": _view,
    "detach": lambda self: aten.detach.default(self),
    "data": lambda self: aten.detach.default(self),
    "pin_memory": lambda self, device=None: aten._pin_memory.default(self),
    "matmul": _matmul, "__matmul__": _matmul, "mm": lambda self, other: aten.mm.default(
        self, other),
    "__add__": _binary("add"), "__radd__": _binary("add"), "add": _binary("add"),
    "__sub__": _binary("sub"), "sub": _binary("sub"), "add_": _binary("add_"),
    "sub_": _binary("sub_"), "__rsub__": _rsub,
    "__mul__": _binary("mul"), "__rmul__": _binary("mul"), "__truediv__": _binary("div"),
    "__floordiv__": _binary("floor_divide"), "__mod__": _binary("remainder"),
    "__eq__": _binary("eq", True), "__ne__": _binary("ne", True), "__lt__": _binary("lt", True),
    "__le__": _binary("le", True), "__gt__": _binary("gt", True), "__ge__": _binary("ge", True),
    "__and__": _binary("bitwise_and", True), "__or__": _binary("bitwise_or", True),
    "__xor__": _binary("bitwise_xor", True), "eq": _binary("eq", True),
    "ne": _binary("ne", True), "lt": _binary("lt", True), "le": _binary("le", True),
    "gt": _binary("gt", True), "ge": _binary("ge", True), "mul": _binary("mul"),
    "div": _binary("div"), "__repr__": lambda self, **kwargs: _repr(self),
    "item": lambda self: _operator("_local_scalar_dense", Tensor.item).default(self),
    **{name: _cast(dtype) for name, dtype in (
        ("double", "float64"), ("float", "float32"), ("half", "float16"),
        ("bfloat16", "bfloat16"), ("long", "int64"), ("int", "int32"), ("short", "int16"),
        ("char", "int8"), ("byte", "uint8"), ("bool", "bool"))},
}


def to_aten(name: str, impl, *args, **kwargs):
    """Run the public call `name` (torch's name: "torch.Tensor.index_select", "torch.cat",
    "torch.Tensor.shape.__get__") on arguments that include a wrapper subclass's instance."""
    parts = name.split(".")
    short = parts[-2] if parts[-1] in ("__get__", "__set__") else parts[-1]
    if short in _METADATA:
        if short == "requires_grad_" and (args[1:2] or (kwargs.get("requires_grad", True),))[0]:
            torch_dispatch.refuse_grad(type(args[0]))
        return impl(*args, **kwargs)
    if state.tracer is not None:  # the handler would run once, at trace time
        from ..tensor.graph_break import graph_break

        graph_break(f"{name} on a Tensor subclass with __torch_dispatch__")
    if kwargs.get("out") is not None:  # aten's out= overload; the call returns `out` itself
        packet = _MADE.get(short + ".out")
        if packet is None:
            packet = _MADE[short + ".out"] = OpOverloadPacket(short, {"out": impl})
        packet.out(*args, **kwargs)
        return kwargs["out"]
    rule = RULES.get(short)
    if rule is not None:
        return rule(*args, **kwargs)
    return _operator(short, impl).default(*args, **kwargs)


torch_dispatch.TO_ATEN = to_aten
