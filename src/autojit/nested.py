"""autojit.nested: torch.nested's nested tensors in torch's default (strided) layout: a batch of
tensors of one dimensionality whose sizes differ, made with `nested_tensor` (a copy) or
`as_nested_tensor` (keeping autograd history), and padded back with `to_padded_tensor`.

A NestedTensor is a Tensor subclass over one flat buffer, its components' values one after
the other (what `values()` returns, sharing memory), with each component's size beside it.
Its `__torch_function__` answers the questions about its sizes as torch does (`dim()`,
`size(0)`, a regular dimension's size; `size()` of an irregular one raises), unbinds into
views of the buffer, and runs elementwise ops on the buffer, with numbers, 0-d tensors or
nested tensors of the same sizes; other ops raise torch's NotImplementedError for the nested
backend; `sum` reduces the last dim (keepdim=True, as torch requires), saving its input for
backward as torch does. Autograd runs through the buffer: gradients reach the tensors a nested
tensor was made of, and come out of `unbind`, `values`, `sum` and `to_padded_tensor`. Nested
tensors do not go through autojit.compile (a compiled function takes dense tensors), and
torch's jagged layout is not here.
"""

from __future__ import annotations

import math

from .autograd.function import Function
from .nn import functional as F
from .ops.functional import cat, stack
from .tensor import dtypes
from .tensor.creation import as_tensor, tensor
from .tensor.layouts import strided
from .tensor.tensor import Tensor
from .tensor.torch_function import DisableTorchFunctionSubclass

__all__ = ["as_nested_tensor", "nested_tensor", "to_padded_tensor"]

_NO_SIZES = "Internal error: NestedTensorImpl doesn't support sizes. Please file an issue."

# Elementwise ops: run on the buffer, the result nested with the same sizes; torch's set for
# its strided nested tensors (others raise its NotImplementedError, as its kernels do).
_ELEMENTWISE = frozenset((
    "add", "sub", "mul", "div", "true_divide", "neg", "abs", "sqrt", "relu", "gelu", "silu",
    "tanh", "sin", "cos", "logical_not", "eq", "gt", "ge", "dropout", "__add__", "__radd__",
    "__sub__", "__mul__", "__rmul__", "__truediv__", "__neg__", "__abs__", "__eq__", "__gt__",
    "__ge__", "add_", "mul_", "fill_", "zero_", "relu_", "neg_", "abs_", "__iadd__",
    "__imul__", "to", "type", "float", "double", "half", "bfloat16", "long", "int", "bool",
    "clone", "detach", "cpu"))
# Comparisons take no nested tensor as their other operand, nor a tensor that is not nested.
_COMPARISONS = frozenset(("eq", "gt", "ge", "__eq__", "__gt__", "__ge__"))
# What a nested tensor answers as its buffer does.
_AS_BUFFER = frozenset((
    "dtype", "device", "requires_grad", "grad_fn", "is_leaf", "layout", "is_cuda",
    "is_cpu", "is_meta", "is_sparse", "is_quantized", "is_mkldnn", "_version", "data",
    "backward", "retain_grad", "retains_grad", "register_hook", "element_size",
    "is_floating_point", "is_complex", "is_signed", "get_device", "data_ptr", "numel",
    "nelement", "untyped_storage", "storage_offset", "__hash__", "__reduce_ex__",
    "__deepcopy__", "is_inference", "names", "name", "output_nr", "_base", "is_shared",
    "share_memory_", "itemsize", "nbytes", "requires_grad_", "requires_grad.__set__",
    "grad.__set__"))


class NestedTensor(Tensor):
    """A nested tensor: a flat buffer of its components' values and their sizes."""

    @classmethod
    def _over(cls, buffer: Tensor, sizes: tuple) -> NestedTensor:
        made = buffer.as_subclass(cls)
        made._nested_sizes = sizes
        return made

    def _buffer(self) -> Tensor:
        with DisableTorchFunctionSubclass():
            return self.as_subclass(Tensor)

    # torch's methods of nested tensors that plain tensors lack
    def to_padded_tensor(self, padding: float, output_size=None) -> Tensor:
        """The components padded with `padding` to one size and stacked (to_padded_tensor)."""
        return to_padded_tensor(self, padding, output_size)

    def _nested_tensor_size(self) -> Tensor:
        return _nested_size(self)

    def _nested_tensor_strides(self) -> Tensor:
        return _nested_strides(self)

    def _nested_tensor_storage_offsets(self) -> Tensor:
        return _storage_offsets(self)

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = _name_of(func)
        handler = _HANDLERS.get(name)
        if handler is not None:
            return handler(*args, **kwargs)
        if name in _AS_BUFFER:
            with DisableTorchFunctionSubclass():
                return func(*args, **kwargs)
        if name in _ELEMENTWISE:
            return _elementwise(func, name, args, kwargs)
        raise _not_implemented(name)


def _not_implemented(name: str) -> NotImplementedError:
    return NotImplementedError(
        f"Could not run 'aten::{name}' with arguments from the 'NestedTensorCPU' backend. "
        "This could be because the operator doesn't exist for this backend, or was omitted "
        "during the selective/custom build process (if using custom build).")


# id(property) -> (the property, its name on Tensor). The property is kept with its name: a
# property that dispatch replaced and dropped can free its id for another one, which must not
# inherit the old name (is_nested read as another attribute, order-dependently).
_PROPERTIES: dict = {}


def _name_of(func) -> str:
    owner = getattr(func, "__self__", None)
    if isinstance(owner, property) and getattr(func, "__name__", "") in ("__get__", "__set__"):
        known = _PROPERTIES.get(id(owner))
        if known is None or known[0] is not owner:
            # The properties Tensor holds now (dispatch may have replaced the originals).
            _PROPERTIES.update({id(value): (value, key) for key, value in vars(Tensor).items()
                                if isinstance(value, property)})
            known = _PROPERTIES.get(id(owner))
        name = known[1] if known is not None and known[0] is owner else \
            getattr(owner.fget, "__name__", "property")
        return name + ("" if func.__name__ == "__get__" else ".__set__")
    return getattr(func, "__name__", str(func))


def _elementwise(func, name: str, args: tuple, kwargs: dict):
    sizes = next(arg._nested_sizes for arg in args if isinstance(arg, NestedTensor))
    plain = []
    for position, arg in enumerate(args):
        if isinstance(arg, NestedTensor):
            if position > 0 and name in _COMPARISONS:
                raise RuntimeError(f"{name.strip('_')} does not support nested tensor as other "
                                   "value.")
            if arg._nested_sizes != sizes:
                raise RuntimeError(f"{name}(): nested tensors of different sizes: "
                                   f"{[list(s) for s in sizes]} and "
                                   f"{[list(s) for s in arg._nested_sizes]}")
            plain.append(arg._buffer())
        elif isinstance(arg, Tensor) and name in _COMPARISONS:
            raise NotImplementedError(
                f"Could not run 'aten::{name.strip('_')}.Tensor' with arguments from the "
                "'NestedTensorCPU' backend.")
        elif isinstance(arg, Tensor) and arg.dim() > 0:
            raise RuntimeError("Expected both self and other to be nested, but got a nested "
                               "self and non-nested other")
        else:
            plain.append(arg)
    with DisableTorchFunctionSubclass():
        result = func(*plain, **kwargs)
    if isinstance(result, Tensor) and result.dim() == 1 and \
            result.numel() == sum(math.prod(size) for size in sizes):
        if name.endswith("_") and name != "requires_grad_" or name.startswith("__i"):
            return args[0]  # written in place: the nested tensor itself
        return NestedTensor._over(result.as_subclass(Tensor), sizes)
    return result


# ---- the questions about sizes ---------------------------------------------------------------

def _wrapped_dim(self: NestedTensor, dim: int) -> int:
    """dim counted from 0, with torch's IndexError where it is out of range."""
    ndim = _dim(self)
    if not -ndim <= dim < ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-ndim}, "
                         f"{ndim - 1}], but got {dim})")
    return dim % ndim


def _size(self: NestedTensor, dim=None):
    if dim is None:
        raise RuntimeError(_NO_SIZES)
    dim = _wrapped_dim(self, dim)
    if dim == 0:
        return len(self._nested_sizes)
    found = {size[dim - 1] for size in self._nested_sizes}
    if len(found) != 1:
        raise RuntimeError(f"Given dimension {dim} is irregular and does not have a size.")
    return found.pop()


def _shape(self: NestedTensor):
    raise RuntimeError(_NO_SIZES)


def _dim(self: NestedTensor) -> int:
    return 1 + (len(self._nested_sizes[0]) if self._nested_sizes else 0)


def _offsets(sizes: tuple) -> list:
    offsets, at = [], 0
    for size in sizes:
        offsets.append(at)
        at += math.prod(size)
    return offsets


def _unbind(self: NestedTensor, dim: int = 0) -> tuple:
    if dim != 0:
        raise RuntimeError(f"NestedTensor can only be unbound along dimension 0 got dimension "
                           f"{dim} instead.")
    return tuple(_pieces(self._buffer(), self._nested_sizes))


def _getitem(self: NestedTensor, index):
    if isinstance(index, int):
        count = len(self._nested_sizes)
        if not -count <= index < count:
            raise IndexError(f"index {index} is out of bounds for dimension 0 with size {count}")
        return _unbind(self)[index]
    raise NotImplementedError("autojit: a nested tensor is indexed by one integer only")


def _values(self: NestedTensor) -> Tensor:
    return self._buffer()


def _nested_size(self: NestedTensor) -> Tensor:
    return tensor([list(size) for size in self._nested_sizes], dtype=dtypes.int64)


def _nested_strides(self: NestedTensor) -> Tensor:
    strides = []
    for size in self._nested_sizes:
        stride, at = [], 1
        for extent in reversed(size):
            stride.append(at)
            at *= extent
        strides.append(stride[::-1])
    return tensor(strides, dtype=dtypes.int64)


def _storage_offsets(self: NestedTensor) -> Tensor:
    return tensor(_offsets(self._nested_sizes), dtype=dtypes.int64)


def to_padded_tensor(input: NestedTensor, padding: float, output_size=None) -> Tensor:  # noqa: A002
    """A dense tensor of the components, each padded with `padding` at the end of each dim to
    the largest size (or to `output_size`), stacked along a new dim 0."""
    sizes = input._nested_sizes
    ndim = len(sizes[0]) if sizes else 0
    target = [max(size[d] for size in sizes) for d in range(ndim)] if sizes else []
    if output_size is not None:
        output_size = list(output_size)
        if len(output_size) != ndim + 1 or any(
                want < have for want, have in zip(output_size[1:], target)):
            raise RuntimeError(f"Value in output_size is less than NestedTensor padded size: "
                               f"{output_size}")
        count, target = output_size[0], output_size[1:]
    else:
        count = len(sizes)
    padded = []
    for component in _unbind(input):
        widths = []
        for d in reversed(range(ndim)):
            widths += [0, target[d] - component.shape[d]]
        padded.append(F.pad(component, widths, value=padding) if any(widths) else component)
    while len(padded) < count:
        padded.append(padded[0].new_full(target, padding) if padded else
                      input._buffer().new_full(target, padding))
    return stack(padded)


def _contiguous(self: NestedTensor, memory_format=None) -> NestedTensor:
    return self


def _is_contiguous(self: NestedTensor, memory_format=None) -> bool:
    return True


def _repr(self: NestedTensor, *, tensor_contents=None) -> str:
    parts = [repr(component).replace("\n", "\n  ") for component in _unbind(self)]
    return "nested_tensor([\n" + ",\n".join("  " + part for part in parts) + "\n])"


def _grad(self: NestedTensor):
    """The gradient of a nested leaf, nested as it is (autograd accumulates its buffer's)."""
    with DisableTorchFunctionSubclass():
        grad = Tensor.grad.__get__(self)
    if isinstance(grad, Tensor) and not isinstance(grad, NestedTensor):
        return NestedTensor._over(grad, self._nested_sizes)
    return grad


# ---- sum over the last dim -------------------------------------------------------------------

_ONE_DIM = "NestedTensor only allows reduction of a single dimension for now."
_NO_SUM = frozenset(("bool", "complex64", "complex128", "complex32"))


class _SumLastDim(Function):
    """The sum of each component over its last dim, keeping it, on the flat buffer. The input
    is saved for backward, as torch's nested kernel saves it: writing it in place afterwards
    makes backward raise "modified by an inplace operation"."""

    @staticmethod
    def forward(ctx, buffer: Tensor, sizes: tuple) -> Tensor:
        ctx.save_for_backward(buffer)
        ctx.sizes = sizes
        parts = [piece.sum(-1, keepdim=True, dtype=piece.dtype).reshape(-1)
                 for piece in _pieces(buffer, sizes)]
        return cat(parts) if parts else buffer.new_zeros(0)

    @staticmethod
    def backward(ctx, grad: Tensor):
        ctx.saved_tensors  # noqa: B018 - the version check of the saved input
        if isinstance(grad, NestedTensor):
            grad = grad._buffer()
        kept = tuple(size[:-1] + (1,) for size in ctx.sizes)
        parts = [piece.expand(size).reshape(-1)
                 for piece, size in zip(_pieces(grad, kept), ctx.sizes)]
        return (cat(parts) if parts else grad.new_zeros(0)), None


# torch's name of the node (grad_fn=<SumBackwardAutogradNestedTensor1>)
_SumLastDim._backward_cls.__name__ = "SumBackwardAutogradNestedTensor1"
_SumLastDim._backward_cls.__qualname__ = "SumBackwardAutogradNestedTensor1"


def _pieces(buffer: Tensor, sizes: tuple) -> list:
    """The components of a flat buffer of these sizes, as views of it."""
    return [buffer.narrow(0, start, math.prod(size)).view(size)
            for start, size in zip(_offsets(sizes), sizes)]


def _sum(self: NestedTensor, dim=_ONE_DIM, keepdim: bool = False, *, dtype=None,
         **kwargs):
    """torch's sum of a strided nested tensor: over the last dim only, with keepdim=True and
    no dtype, each component summed in its own dtype (no promotion of integers)."""
    if dim is _ONE_DIM:  # sum() over everything: torch has no nested kernel for it
        raise _not_implemented("sum")
    if kwargs:
        raise TypeError(f"sum() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if isinstance(dim, (tuple, list)):
        if len(dim) != 1:
            raise RuntimeError(_ONE_DIM)
        dim = dim[0]
    if dim is None:
        raise RuntimeError(_ONE_DIM)
    dim = _wrapped_dim(self, dim)
    if dim != _dim(self) - 1:
        raise RuntimeError(f"NestedTensor can only be reduced across the last dimension for "
                           f"now got dimension {dim} instead.")
    if not keepdim:
        raise RuntimeError("NestedTensor always requires keepdim=True for now.")
    if dtype is not None:
        raise RuntimeError("NestedTensor does not support dtype argument for now.")
    kind = self.dtype
    if kind.name in _NO_SUM:
        raise NotImplementedError(f'"nested_sum_dim_cpu" not implemented for '
                                  f"'{dtypes.SCALAR_TYPE_NAMES[kind.name]}'")
    sizes = self._nested_sizes
    if sizes and not sizes[0]:
        raise IndexError(f"select(): index -1 out of range for tensor of size [{len(sizes)}, "
                         "0] at dimension 1")
    summed = _SumLastDim.apply(self._buffer(), sizes)
    # The Function's own result, nested in place: its grad_fn is the sum's node, as torch's.
    summed.__class__ = NestedTensor
    summed._nested_sizes = tuple(size[:-1] + (1,) for size in sizes)
    return summed


def _refuse_len(self: NestedTensor):
    raise RuntimeError(_NO_SIZES)


_HANDLERS = {
    "size": _size, "shape": _shape, "dim": _dim, "ndim": _dim, "ndimension": _dim,
    "unbind": _unbind, "__getitem__": _getitem, "values": _values,
    "_nested_tensor_size": _nested_size, "_nested_tensor_strides": _nested_strides,
    "_nested_tensor_storage_offsets": _storage_offsets, "to_padded_tensor": to_padded_tensor,
    "contiguous": _contiguous, "is_contiguous": _is_contiguous, "__repr__": _repr,
    "__str__": _repr, "__len__": _refuse_len, "is_nested": lambda self: True,
    "__format__": lambda self, spec: _repr(self), "grad": _grad, "sum": _sum,
}


# ---- making nested tensors -------------------------------------------------------------------

def _components(tensor_list, dtype, device, copy: bool) -> list:
    if isinstance(tensor_list, Tensor):
        return list(tensor_list.unbind(0))
    if not isinstance(tensor_list, (list, tuple)):
        raise TypeError(f"nested_tensor(): expected a list of tensors, got "
                        f"{type(tensor_list).__name__}")
    made = [item if isinstance(item, Tensor) else as_tensor(item, dtype=dtype, device=device)
            for item in tensor_list]
    if copy:
        made = [item.detach() for item in made]
    if dtype is not None or device is not None:
        made = [item.to(device=device, dtype=dtype) for item in made]
    for index, item in enumerate(made[1:], 1):
        if item.dim() != made[0].dim():
            raise RuntimeError(f"All Tensors given to nested_tensor must have the same "
                               f"dimension. Found dimension {item.dim()} for Tensor at index "
                               f"{index} and dimension {made[0].dim()} for Tensor at index 0.")
        if item.dtype != made[0].dtype:
            raise RuntimeError("All Tensors given to nested_tensor must have the same dtype")
    return made


def _layout(layout) -> None:
    if layout is not None and layout is not strided:
        raise NotImplementedError(f"autojit: nested tensors of layout {layout} are not "
                                  "supported (the strided layout is)")


def _made(components: list) -> NestedTensor:
    sizes = tuple(tuple(component.shape) for component in components)
    buffer = cat([component.reshape(-1) for component in components]) if components else \
        tensor([])
    return NestedTensor._over(buffer, sizes)


def nested_tensor(tensor_list, *, dtype=None, layout=None, device=None,
                  requires_grad: bool = False, pin_memory: bool = False) -> NestedTensor:
    """A nested tensor of copies of the tensors (or nested lists) in `tensor_list`: a leaf,
    requiring grad with `requires_grad`."""
    _layout(layout)
    made = _made(_components(tensor_list, dtype, device, copy=True))
    return made.requires_grad_(requires_grad) if requires_grad else made


def as_nested_tensor(ts, dtype=None, device=None, layout=None) -> NestedTensor:
    """A nested tensor of the tensors in `ts` (a list, or a tensor's slices along dim 0),
    keeping their autograd history: gradients flow back to them."""
    _layout(layout)
    if isinstance(ts, NestedTensor):
        return ts
    return _made(_components(ts, dtype, device, copy=False))
