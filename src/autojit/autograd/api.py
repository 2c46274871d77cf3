"""autograd.backward and autograd.grad: argument checks, implicit gradients, then the engine.

These follow the reference semantics: an implicit gradient only for scalar outputs,
retain_graph defaulting to create_graph, allow_unused and materialize_grads for inputs the
outputs do not depend on, and grad_outputs shape-checked against their outputs.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from ..tensor.creation import ones
from ..tensor.once import warn_once
from ..tensor.state import SPECIAL, state
from ..tensor.symbolic import same_shape
from ..tensor.tensor import Size, Tensor, plain_tensor
from .engine import run_backward
from .nodes import GradientEdge, edge_metadata


def _as_tuple(value) -> tuple:
    if value is None:
        return ()
    if isinstance(value, (Tensor, GradientEdge)):  # an edge is a tuple: not a sequence here
        return (value,)
    return tuple(value)


def _implicit_grad(output: Tensor) -> Tensor:
    """The ones an implicit gradient is. While tracing, a `fill` of the graph: a constant the
    graph's passes fold into the gradient's arithmetic (`x * 1` is x), where a tensor of ones
    made here would be a captured input read on every call, opaque to them."""
    data = output._payload
    if data.__class__ is np.ndarray and output.__class__ is Tensor and \
            state.dispatch != SPECIAL:
        # One element in the output's storage dtype: the ones_like below, directly (a
        # subclass's goes through ones_like, which its __torch_function__ may override).
        return plain_tensor(np.ones(data.shape, data.dtype), output._dtype)
    if state.tracer is not None and data is None:
        from ..ops.elementwise import fill_like

        return fill_like(output.detach(), 1)
    from ..tensor.creation import ones_like

    return ones_like(output)


def _make_root_grads(outputs: tuple, grad_outputs: tuple, create_graph: bool) -> list:
    if len(grad_outputs) == 0:
        grad_outputs = (None,) * len(outputs)
    if len(grad_outputs) != len(outputs):
        raise RuntimeError(f"got {len(outputs)} tensors and {len(grad_outputs)} gradients")
    grads = []
    for index, (output, grad) in enumerate(zip(outputs, grad_outputs)):
        if output.__class__ is GradientEdge:
            shape, dtype, device = edge_metadata(output) or (None, None, None)
        else:
            shape, dtype = output.shape, output.dtype
        if grad is None:
            if output.__class__ is GradientEdge:
                if shape is None or math.prod(shape) != 1:
                    raise RuntimeError("grad can be implicitly created only for scalar outputs")
                grads.append(ones(shape, dtype=dtype, device=device))
                continue
            if output.requires_grad and output.numel() != 1:
                raise RuntimeError("grad can be implicitly created only for scalar outputs")
            if output.requires_grad and not output.dtype.is_floating_point:
                raise RuntimeError("grad can be implicitly created only for real scalar outputs "
                                   f"but got {output.dtype}")
            grad = _implicit_grad(output)
        elif not isinstance(grad, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got "
                            f"{type(grad).__name__}")
        else:
            if shape is not None and not same_shape(grad.shape, shape):
                raise RuntimeError(
                    f"Mismatch in shape: grad_output[{index}] has a shape of {grad.shape} and "
                    f"output[{index}] has a shape of {Size(shape)}.")
            if dtype is not None and grad.dtype.is_complex != dtype.is_complex:
                raise RuntimeError(
                    "For complex Tensors, both grad_output and output are required to have the "
                    f"same dtype. Mismatch in dtype: grad_output[{index}] has a dtype of "
                    f"{grad.dtype} and output[{index}] has a dtype of {dtype}.")
            if dtype is not None and grad.dtype is not dtype:
                grad = grad.to(dtype)
            if not create_graph:
                grad = grad.detach()
        grads.append(grad)
    return grads


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None) -> None:
    """Accumulate the gradients of `tensors` into the .grad of the graph's leaves.

    >>> import autojit
    >>> x = autojit.tensor([1.0, 2.0], requires_grad=True)
    >>> autojit.autograd.backward((x * x).sum())
    >>> x.grad
    tensor([2., 4.])
    """
    outputs = _as_tuple(tensors)
    if grad_variables is not None:
        grad_tensors = grad_variables
    grads = _make_root_grads(outputs, _as_tuple(grad_tensors), create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    input_list = None
    if inputs is not None:
        input_list = list(_as_tuple(inputs))
        if not input_list:
            raise RuntimeError("'inputs' argument to backward() cannot be empty.")
        for tensor in input_list:
            if tensor.__class__ is not GradientEdge and not tensor.requires_grad:
                raise RuntimeError("One of the differentiated Tensors does not require grad")
    if create_graph:
        warn_once("backward create_graph", CREATE_GRAPH_WARNING, stacklevel=2)
    run_backward(list(outputs), grads, retain_graph=retain_graph, create_graph=create_graph,
                 inputs=input_list, accumulate=True, partial=input_list is not None)


CREATE_GRAPH_WARNING = (
    "Using backward() with create_graph=True will create a reference cycle between the parameter "
    "and its gradient which can cause a memory leak. We recommend using autograd.grad when "
    "creating the graph to avoid this. If you have to use this function, make sure to reset the "
    ".grad fields of your parameters to None after use to break the cycle and avoid the leak.")


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False,
         materialize_grads=False) -> tuple:
    """The gradients of `outputs` with respect to `inputs`, returned, not accumulated.

    With `create_graph=True` the gradient has a history of its own, so it can be
    differentiated again:

    >>> import autojit
    >>> x = autojit.tensor(2.0, requires_grad=True)
    >>> (dx,) = autojit.autograd.grad(x ** 3, x, create_graph=True)
    >>> dx
    tensor(12., grad_fn=<MulBackward0>)
    >>> autojit.autograd.grad(dx, x)
    (tensor(12.),)
    >>> x.grad is None
    True
    """
    from ..tensor.creation import zeros_like

    if is_grads_batched:
        return _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph,
                             allow_unused, materialize_grads)
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    output_tuple = _as_tuple(outputs)
    input_tuple = _as_tuple(inputs)
    if not input_tuple:
        raise RuntimeError("`inputs` argument to `grad()` cannot be empty.")
    for tensor in input_tuple:
        if tensor.__class__ is GradientEdge:
            continue
        if not isinstance(tensor, Tensor):
            raise TypeError(f"grad expects Tensors as inputs, got {type(tensor).__name__}")
        if not tensor.requires_grad:
            raise RuntimeError("One of the differentiated Tensors does not require grad")
    grads = _make_root_grads(output_tuple, _as_tuple(grad_outputs), create_graph)
    if retain_graph is None:
        retain_graph = create_graph
    results = run_backward(list(output_tuple), grads, retain_graph=retain_graph,
                           create_graph=create_graph, inputs=list(input_tuple), accumulate=False,
                           partial=True)
    final = []
    for index, (tensor, result) in enumerate(zip(input_tuple, results)):
        if result is None:
            if not allow_unused:
                raise RuntimeError(f"The differentiated Tensor at index {index} appears to not "
                                   "have been used in the graph. Set allow_unused=True if this "
                                   "is the desired behavior.")
            if materialize_grads and tensor.__class__ is GradientEdge:
                # an edge has no tensor to take the zeros' shape from
                raise RuntimeError("materialize_grads cannot be used when the given input is a "
                                   "GradientEdge")
            if materialize_grads:
                # torch's zeros require grad under create_graph (a leaf of the next graph)
                result = zeros_like(tensor, requires_grad=create_graph)
        final.append(result)
    return tuple(final)


def _batched_grad(outputs, inputs, grad_outputs, retain_graph, create_graph, allow_unused,
                  materialize_grads) -> tuple:
    """autograd.grad with is_grads_batched: the first dim of every grad_output is a batch of
    vector-Jacobian products, computed by one vmapped backward pass."""
    from ..tensor.creation import zeros_like
    from .vmap import legacy_vmap

    batched_outputs = _as_tuple(grad_outputs)
    if not batched_outputs or any(g is None for g in batched_outputs):
        raise RuntimeError("autograd.grad: is_grads_batched=True needs a batched Tensor in "
                           "grad_outputs for every output")
    input_tuple = _as_tuple(inputs)
    for index, (output, batch) in enumerate(zip(_as_tuple(outputs), batched_outputs)):
        if isinstance(batch, Tensor) and tuple(batch.shape[1:]) != tuple(output.shape):
            # torch checks each vmapped sample and names its shape less one more dim
            raise RuntimeError(
                "If `is_grads_batched=True`, we interpret the first dimension of each grad_output "
                "as the batch dimension. The sizes of the remaining dimensions are expected to "
                "match the shape of corresponding output, but a mismatch was detected: "
                f"grad_output[{index}] has a shape of {batch.shape[2:]} and output[{index}] has "
                f"a shape of {output.shape}. If you only want some tensors in `grad_output` to "
                "be considered batched, consider using vmap.")
    unused: set = set()

    def one(*gradients):
        results = grad(outputs, inputs, gradients, retain_graph=True, create_graph=create_graph,
                       allow_unused=allow_unused, materialize_grads=materialize_grads)
        # vmap returns tensors only: an unused input's None (the same for every vector) is
        # put back after.
        for index, result in enumerate(results):
            if result is None:
                unused.add(index)
        return tuple(zeros_like(x) if result is None else result
                     for x, result in zip(input_tuple, results))

    results = legacy_vmap(one)(*batched_outputs)
    return tuple(None if index in unused else result for index, result in enumerate(results))


Tensor._backward = staticmethod(backward)  # Tensor.backward (tensor/tensor.py) calls it

__all__: Sequence[str] = ("backward", "grad")
