"""Parameter: a leaf Tensor that requires grad by default and marks a module's weights; Buffer,
the mark of a tensor to be registered as a module's buffer; and the uninitialized parameters
and buffers of lazy modules (nn/lazy.py), which have no shape until their module's first call
materializes them.

Assigning a Parameter or a Buffer to a Module attribute registers it (nn/module.py), so that
parameters(), buffers(), state_dict() and optimizers find it.
"""

from __future__ import annotations

from ..interop import serialization
from ..ops.registry import OpError
from ..tensor import dtypes, sharing, torch_function
from ..tensor.device import check_device
from ..tensor.tensor import Tensor

__all__ = ["Buffer", "Parameter", "UninitializedParameter", "UninitializedBuffer", "is_lazy"]


class Parameter(Tensor):
    """A Tensor that is a module parameter: a leaf, requires_grad=True unless told otherwise.

    It shares storage with the tensor it is made from.

        >>> import autojit
        >>> weight = autojit.nn.Parameter(autojit.zeros(2))
        >>> weight.requires_grad, weight.is_leaf
        (True, True)
    """

    __slots__ = ()
    # Ops on it give plain Tensors, as torch's Parameter opts out of __torch_function__.
    __torch_function__ = torch_function.disabled_torch_function_impl

    def __new__(cls, data=None, requires_grad: bool = True):
        from ..tensor.creation import empty

        source = empty(0) if data is None else data
        self = object.__new__(cls)
        self._init(source._concrete("Parameter()"), source.dtype)
        if requires_grad:
            self.requires_grad_(True)
        return self

    def __init__(self, data=None, requires_grad: bool = True):
        pass

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()

    __str__ = __repr__  # print(parameter) shows the header too, as torch's

    def __deepcopy__(self, memo):
        if id(self) in memo:
            return memo[id(self)]
        copied = type(self)(Tensor._make(self._concrete("deepcopy").copy(), self._dtype),
                            self._requires_grad)
        if self._grad is not None:
            copied._grad = self._grad.__deepcopy__(memo)
        memo[id(self)] = copied
        return copied

    def __reduce_ex__(self, protocol):
        return (_rebuild_parameter, (self._concrete("pickle"), self._dtype.name,
                                     self._requires_grad))


class _BufferMeta(type):
    def __instancecheck__(cls, instance):
        # Buffer(...) returns a plain tensor, marked: that mark is what makes it a Buffer.
        if cls is Buffer:
            return isinstance(instance, Tensor) and getattr(instance, "_is_buffer", False)
        return super().__instancecheck__(instance)


class Buffer(Tensor, metaclass=_BufferMeta):
    """A tensor marked to become a buffer when assigned to a Module attribute, as torch's
    `self.running_mean = nn.Buffer(torch.zeros(3))`: the assignment registers it, persistent
    (in state_dict) unless `persistent=False`.

    Buffer(data) returns `data` detached, keeping its requires_grad, marked with `persistent`
    (it is a plain Tensor, as torch's is; isinstance(t, Buffer) reads the mark).

        >>> import autojit
        >>> module = autojit.nn.Module()
        >>> module.total = autojit.nn.Buffer(autojit.zeros(2))
        >>> [name for name, _ in module.named_buffers()], list(module.state_dict())
        (['total'], ['total'])
    """

    def __new__(cls, data=None, *, persistent: bool = True):
        from ..tensor.creation import empty

        if data is None:
            data = empty(0)
        tensor = data.detach().requires_grad_(data.requires_grad)
        tensor.persistent = persistent
        tensor._is_buffer = True
        return tensor


# multiprocessing sends a Parameter by its shared memory, as a Tensor (tensor/sharing.py)
sharing.register(Parameter)


def _rebuild_parameter(data, dtype_name, requires_grad):
    from ..tensor import dtypes

    return Parameter(Tensor._make(data.copy(), dtypes.from_name(dtype_name)), requires_grad)


def _use_message(kind: str, what: str) -> str:
    return (f"Attempted to use an uninitialized parameter in {what}. This error happens when you "
            "are using a `LazyModule` or explicitly manipulating "
            f"`autojit.nn.parameter.{kind}` objects. When using LazyModules Call `forward` with "
            "a dummy batch to initialize the parameters before calling autojit functions")


class _UninitializedUse(OpError, ValueError):
    """torch's ValueError for a use of an uninitialized tensor; an OpError too, so that the op
    dispatch raises its ValueError as it stands instead of a shape error."""

    def __init__(self, kind: str, what: str) -> None:
        super().__init__(ValueError(_use_message(kind, what)))


class _NoData:
    """The data of an uninitialized tensor: whatever reads it raises torch's ValueError."""

    __slots__ = ("kind",)

    def __init__(self, kind: str) -> None:
        self.kind = kind

    def __array__(self, *args, **kwargs):
        raise _UninitializedUse(self.kind, "an op")

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        raise _UninitializedUse(self.kind, f"an op (which read its .{name})")


class UninitializedTensorMixin:
    """What uninitialized parameters and buffers share: a dtype and a device but no shape or
    data, until `materialize(shape)` gives them both and turns them into `cls_to_become` (the
    same object, so an optimizer built before the first call still holds it)."""

    cls_to_become: type = Tensor

    def _init_uninitialized(self, device, dtype) -> None:
        self._init(_NoData(type(self).__name__),
                   dtypes.get_default_dtype() if dtype is None else dtypes.to_dtype(dtype))
        self._placeholder_device = None if device is None else check_device(device)

    def materialize(self, shape, device=None, dtype=None) -> None:
        """Give the tensor `shape` (its values are uninitialized, as `empty`'s) and make it a
        Parameter (or a Tensor, for a buffer) in place."""
        from ..tensor.creation import empty

        device = self._placeholder_device if device is None else device
        dtype = self._dtype if dtype is None else dtype
        data = empty(tuple(shape), dtype=dtype, device=device)
        self._payload, self._dtype = data._payload, data._dtype
        self.__dict__.pop("_placeholder_device", None)
        self.__class__ = self.cls_to_become

    def _convert_placeholder(self, convert) -> None:
        """Module.to() on an uninitialized tensor: the dtype and device `convert` would give an
        empty tensor like it are kept for materialize."""
        from ..tensor.creation import empty

        converted = convert(empty(0, dtype=self._dtype, device=self._placeholder_device))
        if converted is not None:
            self._dtype = converted._dtype
            self._placeholder_device = converted.device

    @property
    def shape(self):
        raise RuntimeError(
            "Can't access the shape of an uninitialized parameter or buffer. This error usually "
            "happens in `load_state_dict` when trying to load an uninitialized parameter into an "
            "initialized one. Call `forward` to initialize the parameters before accessing their "
            "attributes.")

    @property
    def device(self):
        from ..tensor.device import CPU

        return CPU if self._placeholder_device is None else self._placeholder_device

    @property
    def is_cuda(self) -> bool:
        return self.device.type == "cuda"

    @property
    def is_cpu(self) -> bool:
        return self.device.type == "cpu"

    def _concrete(self, what: str):
        raise ValueError(_use_message(type(self).__name__, what))

    def _empty(self):
        from ..tensor.creation import empty

        return empty(0, dtype=self._dtype)

    def size(self, dim=None):
        """Size([0]), as torch's, whose uninitialized tensor holds an empty one (.shape
        raises)."""
        return self._empty().size() if dim is None else self._empty().size(dim)

    def copy_(self, src, non_blocking: bool = False):
        """Copy `src` as into an empty tensor, as torch's: another uninitialized tensor (or an
        empty one) copies nothing, what is not broadcastable to size 0 raises torch's
        error."""
        if not isinstance(src, UninitializedTensorMixin):
            self._empty().copy_(src)
        return self

    def share_memory_(self):
        raise RuntimeError("Can't share memory on an uninitialized parameter or buffer. Call "
                           "`forward` to initialize the parameters before calling "
                           "`module.share_memory()`.")

    def __repr__(self) -> str:
        return f"<{type(self).__name__}>"

    __str__ = __repr__

    def __deepcopy__(self, memo):
        copied = type(self)(self._requires_grad, self._placeholder_device, self._dtype)
        memo[id(self)] = copied
        return copied

    def __reduce_ex__(self, protocol):
        return (_rebuild_uninitialized, (type(self), self._requires_grad, self._dtype.name))


def _rebuild_uninitialized(cls, requires_grad, dtype_name):
    return cls(requires_grad, dtype=dtypes.from_name(dtype_name))


class UninitializedParameter(UninitializedTensorMixin, Parameter):
    """A parameter of a lazy module before its first call: no shape and no data yet.

        >>> import autojit
        >>> autojit.nn.LazyLinear(3).weight
        <UninitializedParameter>
    """

    __slots__ = ()
    cls_to_become = Parameter

    def __new__(cls, requires_grad: bool = True, device=None, dtype=None):
        self = object.__new__(cls)
        self._init_uninitialized(device, dtype)
        if requires_grad:
            self.requires_grad_(True)
        return self

    def __init__(self, requires_grad: bool = True, device=None, dtype=None):
        pass


class UninitializedBuffer(UninitializedTensorMixin, Tensor):
    """A buffer of a lazy module before its first call (a lazy batch norm's running stats)."""

    __slots__ = ()
    __torch_function__ = torch_function.disabled_torch_function_impl
    cls_to_become = Tensor

    def __new__(cls, requires_grad: bool = False, device=None, dtype=None):
        self = object.__new__(cls)
        self._init_uninitialized(device, dtype)
        if requires_grad:
            self.requires_grad_(True)
        return self

    def __init__(self, requires_grad: bool = False, device=None, dtype=None):
        pass


def is_lazy(tensor) -> bool:
    """Whether `tensor` is an uninitialized parameter or buffer."""
    return isinstance(tensor, UninitializedTensorMixin)


serialization.register_tensor_class("parameter", Parameter)  # autojit.save keeps the kind
