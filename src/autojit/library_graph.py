"""A custom operator's call inside a compiled function: one graph node that runs the operator's
kernel on the call's values, as torch.compile keeps a custom operator opaque.

library.py's operators run their custom_op (or register_kernel) function below autograd. Traced
through, such a function's reads of its tensors' values (`x.numpy()`, as torch's own custom-op
tutorial wraps NumPy) would be graph breaks the trace specializes on, so that every call with
new values traced again. `graph_form` instead gives the call one primitive per operator
(`custom::<namespace>::<name>`): its shape and dtype come from the operator's fake impl run on
meta tensors of the inputs' shapes and dtypes, its NumPy impl calls the kernel on tensors over
the arrays, and the backends run it as an extern routine, through that impl. Gradients are the
registered backward's, which library.py's autograd Function around the call records as with
any kernel.

A result that is a tuple or list of tensors of one dtype (a backward operator's gradients) is
one node too: the primitive's output is their elements one after the other, and the call
returns views of it in the results' shapes.

A call keeps being traced through where it cannot be one node: an operator without a fake
impl, one that mutates an argument, a result that is neither one tensor nor a tuple or list
of tensors of one dtype, a fake impl that asks for
a data-dependent size (`get_ctx().new_dynamic_size()`), inputs with symbolic sizes, or
arguments other than tensors, numbers, strings, None, dtypes and devices (and lists of them).
"""

from __future__ import annotations

import math

import numpy as np

from .autograd.grad_mode import no_grad
from .ops.lowering import Extern
from .ops.registry import NOT_DIFFERENTIABLE, REGISTRY, RUNTIME, bind, define_op
from .tensor import dtypes
from .tensor.creation import empty
from .tensor.state import state
from .tensor.symbolic import contains_symbolic
from .tensor.symbolic_scalars import SymBool, SymFloat, SymInt
from .tensor.tensor import Tensor

ROUTINE = "custom_operator"  # backends run it through the impl (steps.NodeStep)

_OPS: dict = {}  # (id(operator), number of tensor inputs) -> (operator, primitive)


class _NotOneNode(Exception):
    """The call cannot be one graph node."""


def graph_form(operator, function, args: tuple, kwargs: dict):
    """A stand-in for `function` that binds the operator's primitive for this call, or None
    when the call cannot be one graph node (the module docstring says when)."""
    if operator.schema.mutated() or (operator.fake is None and "Meta" not in operator.kernels):
        return None
    tensors: list = []
    try:
        arguments = tuple(_encode(value, tensors) for value in args)
        keywords = tuple((name, _encode(value, tensors)) for name, value in kwargs.items())
    except _NotOneNode:
        return None
    if any(contains_symbolic(tuple(tensor.shape)) for tensor in tensors) or any(
            tensor.is_cuda for tensor in tensors):
        return None
    attrs = {"arguments": arguments, "keywords": keywords,
             "dtypes": tuple(tensor.dtype.name for tensor in tensors)}
    try:
        layout = _result_meta(operator, tuple(tuple(tensor.shape) for tensor in tensors),
                              attrs)[2]
    except _NotOneNode:
        return None
    primitive = _primitive(operator, len(tensors))

    def one_node(*_args, **_kwargs):
        result = bind(primitive, tuple(tensors), attrs)
        if layout is None:
            return result
        kind, shapes = layout
        parts, start = [], 0
        for shape in shapes:
            count = math.prod(shape)
            parts.append(result[start:start + count].view(shape))
            start += count
        return tuple(parts) if kind == "tuple" else parts

    return one_node


def _encode(value, tensors: list):
    """An argument as a hashable attribute, tensors as positions among the node's inputs."""
    if isinstance(value, Tensor):
        tensors.append(value)
        return ("tensor", len(tensors) - 1)
    if isinstance(value, (SymInt, SymFloat, SymBool)):
        raise _NotOneNode
    if isinstance(value, (list, tuple)):
        kind = "list" if isinstance(value, list) else "tuple"
        return (kind, tuple(_encode(item, tensors) for item in value))
    if value is None or isinstance(value, (bool, int, float, complex, str, dtypes.DType)) or \
            type(value).__name__ == "device":
        return ("value", value)
    raise _NotOneNode


def _decode(encoded, tensors: list):
    kind, content = encoded
    if kind == "tensor":
        return tensors[content]
    if kind == "value":
        return content
    items = [_decode(item, tensors) for item in content]
    return items if kind == "list" else tuple(items)


def _call(function, tensors: list, attrs: dict):
    args = [_decode(encoded, tensors) for encoded in attrs["arguments"]]
    kwargs = {name: _decode(encoded, tensors) for name, encoded in attrs["keywords"]}
    return function(*args, **kwargs)


_META: dict = {}  # (operator, shapes, attrs) -> (shape, dtype, layout) of the result


def _result_meta(operator, shapes: tuple, attrs: dict) -> tuple:
    """(shape, dtype, layout) of the primitive's output, from the fake impl on meta tensors:
    one tensor's (layout None), or for a tuple or list of tensors of one dtype their elements
    one after the other, layout ("tuple" or "list", their shapes); _NotOneNode where the
    result is neither, or a size is not known from the inputs'."""
    key = (operator, shapes, tuple(sorted(attrs.items())))
    found = _META.get(key)
    if found is None:
        def fake():
            tensors = [empty(shape, dtype=dtypes.from_name(name), device="meta")
                       for shape, name in zip(shapes, attrs["dtypes"], strict=True)]
            return _call(lambda *a, **k: operator._fake(a, k), tensors, attrs)

        try:  # a data-dependent size (new_dynamic_size) raises here too
            result = _untraced(fake)
        except Exception:
            raise _NotOneNode from None
        if isinstance(result, Tensor):
            if contains_symbolic(tuple(result.shape)):
                raise _NotOneNode
            found = (tuple(result.shape), result.dtype, None)
        else:
            found = _parts_meta(result)
        _META[key] = found
    return found


def _parts_meta(result) -> tuple:
    """_result_meta's answer for a result that is several tensors."""
    if not isinstance(result, (tuple, list)) or not result or not all(
            isinstance(part, Tensor) and part.dtype == result[0].dtype for part in result):
        raise _NotOneNode
    shapes = tuple(tuple(part.shape) for part in result)
    if contains_symbolic(shapes):
        raise _NotOneNode
    total = sum(math.prod(shape) for shape in shapes)
    return (total,), result[0].dtype, ("tuple" if isinstance(result, tuple) else "list", shapes)


def _primitive(operator, arity: int):
    """The operator's primitive for calls with `arity` tensors, made on its first call inside
    a compiled function."""
    entry = _OPS.get((id(operator), arity))
    if entry is not None and entry[0] is operator:
        return entry[1]

    def shape(*shapes, arguments, keywords, dtypes):  # noqa: A002 - the attribute's name
        return _result_meta(operator, shapes, {"arguments": arguments, "keywords": keywords,
                                               "dtypes": dtypes})[0]

    def dtype(inputs, attrs):
        shapes = tuple(tuple(tensor.shape) for tensor in inputs)
        result = _result_meta(operator, shapes, attrs)[1]
        return None, result

    def impl(*arrays, arguments, keywords, dtypes):  # noqa: A002
        names = dtypes
        tensors = [Tensor._make(array, _dtype(name)) for array, name in zip(arrays, names,
                                                                           strict=True)]
        function, _ = operator.kernel("CPU")
        result = _untraced(_call, function, tensors, {"arguments": arguments,
                                                      "keywords": keywords})
        shape, dtype, layout = _result_meta(operator, tuple(array.shape for array in arrays),
                                            {"arguments": arguments, "keywords": keywords,
                                             "dtypes": names})
        if layout is None:
            _expect(operator, result, shape, dtype)
            return result._concrete(operator.name)
        kind, shapes = layout
        if not isinstance(result, (tuple, list)) or len(result) != len(shapes):
            raise RuntimeError(f"{operator.name}: its kernel returned {type(result).__name__}, "
                               f"where its fake impl gives a {kind} of {len(shapes)} tensors")
        for part, part_shape in zip(result, shapes, strict=True):
            _expect(operator, part, part_shape, dtype)
        return np.concatenate([np.asarray(part._concrete(operator.name)).reshape(-1)
                               for part in result]) if shapes else np.empty(0)

    name = f"custom::{operator.name}"
    if name in RUNTIME or name in REGISTRY:  # another arity, or the name defined again
        name = f"{name}.{len(_OPS)}"
    primitive = define_op(
        name=name, arity=arity, shape=shape, dtype=dtype, impl=impl, vjp=NOT_DIFFERENTIABLE,
        saves=(), lowering=Extern(ROUTINE, ("data",) * arity), complex=True, runtime=True)
    _OPS[(id(operator), arity)] = (operator, primitive)
    return primitive


def _expect(operator, result, shape: tuple, dtype) -> None:
    """The kernel's result is a tensor of the shape and dtype its fake impl gives."""
    if not isinstance(result, Tensor) or (tuple(result.shape), result.dtype) != (shape, dtype):
        got = (f"a tensor of shape {list(result.shape)} and dtype {result.dtype}"
               if isinstance(result, Tensor) else type(result).__name__)
        raise RuntimeError(f"{operator.name}: its kernel returned {got}, where its fake impl "
                           f"gives shape {list(shape)} and dtype {dtype}")


def _untraced(function, *args):
    """function(*args) with no trace recording its ops and grad mode off: a fake impl runs
    on meta tensors while the call is traced, and the kernel on the call's values."""
    tracer = state.tracer
    state.tracer = None
    try:
        with no_grad():
            return function(*args)
    finally:
        state.tracer = tracer


def _dtype(name: str):
    return dtypes.from_name(name)
