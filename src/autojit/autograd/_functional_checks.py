"""The plumbing of autograd.functional: argument forms, input preparation, and torch's errors.

functional.py computes its products with plain autograd.grad calls, as torch's does; what is
here turns arguments into tuples of tensors and back, prepares inputs so their graphs are the
ones asked for, and raises torch's messages (word for word, as tests match them) when a
function's outputs, a vector v or a strict-mode dependency is not what the API takes.
"""

from __future__ import annotations

from ..tensor.tensor import Tensor


def as_tuple(value, argument: str, function: str) -> tuple[bool, tuple]:
    """(whether value was a tuple, value as a tuple of Tensors). Only a tuple is a tuple here:
    a list is refused as one value, as torch refuses it."""
    is_tuple = isinstance(value, tuple)
    items = value if is_tuple else (value,)
    for index, item in enumerate(items):
        if not isinstance(item, Tensor):
            where = (f"value at index {index}" if is_tuple else f"given {argument}")
            raise TypeError(f"The {argument} given to {function} must be either a Tensor or a "
                            f"tuple of Tensors but the {where} has type {type(item)}.")
    return is_tuple, items


def untuple(result, was_tuple):
    """Undo as_tuple: `was_tuple` is one flag, or two (outer, inner) for a nested result."""
    if isinstance(was_tuple, tuple):
        outer, inner = was_tuple
        if not inner:
            result = tuple(blocks[0] for blocks in result)
        return result if outer else result[0]
    return result if was_tuple else result[0]


def prepare(tensors: tuple, create_graph: bool, need_graph: bool) -> tuple:
    """New tensor objects for the function to run on. With create_graph an input that requires
    grad stays connected (a view of itself), so the results differentiate back to it; any
    other is a detached leaf requiring grad when a graph is needed. A new object always, so
    the function's use of these is told from its capture of the caller's own tensors."""
    return tuple(x.view_as(x) if create_graph and x.requires_grad and not x.is_sparse else
                 x.clone() if create_graph and x.requires_grad else
                 x.detach().requires_grad_(need_graph) for x in tensors)


def finish(results, create_graph: bool):
    """Results detached unless a graph was asked for (nested tuples too)."""
    if isinstance(results[0], Tensor):
        return results if create_graph else tuple(r.detach() for r in results)
    return tuple(finish(group, create_graph) for group in results)


def check_v(v: tuple, others: tuple, others_tuple: bool) -> None:
    """v must match `others` (the outputs for vjp, the inputs otherwise) one to one in size."""
    if len(v) != len(others):
        if others_tuple:
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(others)} but "
                               f"got {len(v)}.")
        raise RuntimeError("The given v should contain a single Tensor.")
    for index, (vector, other) in enumerate(zip(v, others)):
        if vector.size() != other.size():
            where = f"Entry {index} in " if others_tuple else ""
            raise RuntimeError(f"{where}v has invalid size: should be {other.size()} but got "
                               f"{vector.size()}.")


def prepare_v(v, others: tuple, others_tuple: bool, create_graph: bool, function: str,
              none_message: str) -> tuple | None:
    """v checked and prepared; None stays None where `others` is one single-element tensor
    (autograd.grad then fills in the ones), else it is torch's error."""
    if v is None:
        if len(others) != 1 or others[0].nelement() != 1:
            raise RuntimeError(none_message)
        return None
    _, vectors = as_tuple(v, "v", function)
    vectors = prepare(vectors, create_graph, need_graph=False)
    check_v(vectors, others, others_tuple)
    return vectors


V_NONE_OUTPUT = ("The vector v can only be None if the user-provided function returns a "
                 "single Tensor with a single element.")
V_NONE_INPUT = ("The vector v can only be None if the input to the user-provided function is "
                "a single Tensor with a single element.")


def check_requires_grad(tensors: tuple, kind: str, strict: bool) -> None:
    """Strict mode's checks that each of `tensors` (of `kind`) depends on the inputs."""
    if not strict:
        return
    for i, tensor in enumerate(tensors):
        if tensor is None:  # an unused input's gradient
            raise RuntimeError(f"The output of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode.")
        if tensor.requires_grad:
            continue
        if kind == "hessian":
            raise RuntimeError(
                f"The hessian of the user-provided function with respect to input {i} is "
                "independent of the input. This is not allowed in strict mode. You should "
                "ensure that your function is thrice differentiable and that the hessian "
                "depends on the inputs.")
        if kind == "jacobian":
            raise RuntimeError(
                "While computing the hessian, found that the jacobian of the user-provided "
                f"function with respect to input {i} is independent of the input. This is not "
                "allowed in strict mode. You should ensure that your function is twice "
                "differentiable and that the jacobian depends on the inputs (this would be "
                "violated by a linear function for example).")
        if kind == "grad_inputs":
            raise RuntimeError(
                f"The gradient with respect to input {i} is independent of the inputs of the "
                "user-provided function. This is not allowed in strict mode.")
        raise RuntimeError(
            f"Output {i} of the user-provided function does not require gradients. The "
            "outputs must be computed in a differentiable manner from the input when running "
            "in strict mode.")


def grads_of(outputs: tuple, inputs: tuple, grad_outputs: tuple | None = None,
             create_graph: bool = False, retain_graph: bool | None = None,
             is_grads_batched: bool = False) -> tuple:
    """autograd.grad over the outputs that require grad (None for every input when none
    does: the products are then zeros, not an error), unused inputs answering None."""
    from .api import grad

    if grad_outputs is None:
        grad_outputs = (None,) * len(outputs)
    kept = [(out, g) for out, g in zip(outputs, grad_outputs)
            if out is not None and out.requires_grad]
    if not kept:
        return (None,) * len(inputs)
    return grad(tuple(out for out, _ in kept), inputs, tuple(g for _, g in kept),
                allow_unused=True, create_graph=create_graph, retain_graph=retain_graph,
                is_grads_batched=is_grads_batched)


_MISSING = {
    "back": "The output of the user-provided function is independent of input {i}. This is "
            "not allowed in strict mode.",
    "back_trick": "The gradient with respect to the input is independent of entry {i} in the "
                  "grad_outputs when using the double backward trick to compute forward mode "
                  "gradients. This is not allowed in strict mode.",
    "double_back": "The jacobian of the user-provided function is independent of input {i}. "
                   "This is not allowed in strict mode.",
    "double_back_trick": "The hessian of the user-provided function is independent of entry "
                         "{i} in the grad_jacobian. This is not allowed in strict mode as it "
                         "prevents from using the double backward trick to replace forward "
                         "mode AD.",
}


def zeros_for_missing(grads: tuple, refs: tuple, strict: bool, create_graph: bool,
                      stage: str) -> tuple:
    """Zeros shaped like refs[i] where grads[i] is None, or strict mode's error for `stage`
    (which backward pass found the missing dependency)."""
    from ..tensor.creation import zeros_like

    filled = []
    for i, (gradient, ref) in enumerate(zip(grads, refs)):
        if gradient is None:
            if strict:
                raise RuntimeError(_MISSING[stage].format(i=i))
            gradient = zeros_like(ref)
        elif strict and create_graph and not gradient.requires_grad:
            what = "hessian" if "double" in stage else "jacobian"
            raise RuntimeError(f"The {what} of the user-provided function is independent of "
                               f"input {i}. This is not allowed in strict mode when "
                               "create_graph=True.")
        filled.append(gradient)
    return tuple(filled)


def standard_basis_for(tensors: tuple, numels: tuple) -> tuple:
    """The identity of size sum(numels) split by columns into one block per tensor (of its
    dtype and device): block k is (total, numels[k]) with ones where row offset_k + j meets
    column j. Stacked as grad_outputs, row r of the blocks selects element r of the flattened
    outputs, so one batched backward gives every row of a Jacobian."""
    if len(tensors) != len(numels):
        raise AssertionError(f"Expected tensors and tensor_numels to have the same length, but "
                             f"got {len(tensors)} and {len(numels)}")
    if not tensors:
        raise AssertionError("Expected at least one tensor")
    from ..tensor.creation import arange

    total = sum(numels)
    blocks, start = [], 0
    for tensor, numel in zip(tensors, numels):
        rows = arange(total, device=tensor.device).unsqueeze(1)
        columns = arange(start, start + numel, device=tensor.device).unsqueeze(0)
        blocks.append((rows == columns).to(tensor.dtype))
        start += numel
    return tuple(blocks)
