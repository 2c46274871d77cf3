"""autograd.functional: torch.autograd.functional's jacobian, hessian, vjp, jvp, hvp and vhp.

These take `inputs` as a tensor or a tuple of tensors and give results in the same form, as
torch's do, and are computed as torch's are: by plain autograd.grad calls on the graph the
function records. vjp is one backward pass; jvp the double-backward trick (a backward with
grad_outputs that require grad, then the backward of that with respect to those
grad_outputs), so a custom Function needs no jvp staticmethod; vhp and hvp the same on the
gradient; jacobian one backward per output element, or one batched backward over a standard
basis with vectorize=True, or forward mode (strategy="forward-mode"). With create_graph=False
the results are detached; with create_graph=True they are graphs (they require grad), even
under no_grad. _functional_checks.py holds the argument forms and torch's errors.
"""

from __future__ import annotations

import functools

from ..tensor.state import state
from ..tensor.tensor import Tensor
from ._functional_checks import (
    V_NONE_INPUT,
    V_NONE_OUTPUT,
    as_tuple,
    check_requires_grad,
    finish,
    grads_of,
    prepare,
    prepare_v,
    standard_basis_for,
    untuple,
    zeros_for_missing,
)
from .grad_mode import enable_grad, is_grad_enabled, set_grad_enabled


def _plain_autograd(api):
    """`api` run as torch's autograd.functional is, plain autograd: an autograd.Function
    without setup_context works in it, the vmap of the vectorized paths included (torch.func's
    transforms refuse one)."""

    @functools.wraps(api)
    def run(*args, **kwargs):
        if state.func_transforms and not state.plain_autograd:
            from .transform_checks import refuse_functional_in_transform

            refuse_functional_in_transform(api.__name__, args, kwargs)
        state.plain_autograd += 1
        try:
            return api(*args, **kwargs)
        finally:
            state.plain_autograd -= 1

    return run


def _run(func, inputs: tuple, function: str, strict: bool) -> tuple[bool, tuple]:
    """func on the prepared inputs: (whether it returned a tuple, its outputs as a tuple)."""
    outputs_tuple, outputs = as_tuple(func(*inputs), "outputs of the user-provided function",
                                      function)
    check_requires_grad(outputs, "outputs", strict)
    return outputs_tuple, outputs


@_plain_autograd
def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T J): the vector-Jacobian product at inputs."""
    with enable_grad():
        inputs_tuple, inputs = as_tuple(inputs, "inputs", "vjp")
        inputs = prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _run(func, inputs, "vjp", strict)
        v = prepare_v(v, outputs, outputs_tuple, create_graph, "vjp", V_NONE_OUTPUT)
    # The product keeps a graph when asked for, whatever the caller's grad mode.
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = grads_of(outputs, inputs, v, create_graph=create_graph)
        product = zeros_for_missing(grads, inputs, strict, create_graph, "back")
    return (untuple(finish(outputs, create_graph), outputs_tuple),
            untuple(finish(product, create_graph), inputs_tuple))


@_plain_autograd
def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), J v): the Jacobian-vector product at inputs, by the double-backward
    trick: u -> J^T u is linear in u, so differentiating it with respect to u along v gives
    J v, with reverse mode only."""
    from ..tensor.creation import zeros_like

    with enable_grad():
        inputs_tuple, inputs = as_tuple(inputs, "inputs", "jvp")
        inputs = prepare(inputs, create_graph, need_graph=True)
        v = prepare_v(v, inputs, inputs_tuple, create_graph, "jvp", V_NONE_INPUT)
        outputs_tuple, outputs = _run(func, inputs, "jvp", strict)
        # u's value does not matter (the backward is linear in it) as long as it is finite.
        dummies = tuple(zeros_like(out, requires_grad=True) for out in outputs)
        grad_inputs = grads_of(outputs, inputs, dummies, create_graph=True)
        check_requires_grad(grad_inputs, "grad_inputs", strict)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = grads_of(grad_inputs, dummies, v, create_graph=create_graph)
        product = zeros_for_missing(grads, outputs, strict, create_graph, "back_trick")
    return (untuple(finish(outputs, create_graph), outputs_tuple),
            untuple(finish(product, create_graph), outputs_tuple))


def _construct_standard_basis_for(tensors: tuple, tensor_numels: tuple) -> tuple:
    """torch's helper of this name: the identity split into one column block per tensor."""
    return standard_basis_for(tensors, tensor_numels)


@_plain_autograd
def jacobian(func, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian of func at inputs: a Tensor for one input and one output, else tuples
    (per output, then per input), each block shaped output.shape + input.shape."""
    if strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError(
            'Expected strategy to be either "forward-mode" or "reverse-mode". Hint: If your '
            'function has more outputs than inputs, "forward-mode" tends to be more performant. '
            'Otherwise, prefer to use "reverse-mode".')
    if strategy == "forward-mode":
        if create_graph:
            raise NotImplementedError(
                "torch.autograd.functional.jacobian: `create_graph=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`create_graph=False` or `strategy="reverse-mode"`.')
        return _jacobian_forward(func, inputs, strict, vectorize)
    with enable_grad():
        inputs_tuple, inputs = as_tuple(inputs, "inputs", "jacobian")
        inputs = prepare(inputs, create_graph, need_graph=True)
        outputs_tuple, outputs = _run(func, inputs, "jacobian", strict)
        if vectorize:
            if strict:
                raise RuntimeError(
                    "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` "
                    "are not supported together. Please either set `strict=False` or "
                    "`vectorize=False`.")
            blocks = _jacobian_batched(inputs, outputs, create_graph)
        else:
            blocks = tuple(_jacobian_rows(i, out, inputs, create_graph, strict)
                           for i, out in enumerate(outputs))
        return untuple(finish(blocks, create_graph), (outputs_tuple, inputs_tuple))


def _jacobian_rows(i: int, out: Tensor, inputs: tuple, create_graph: bool,
                   strict: bool) -> tuple:
    """Output i's Jacobian blocks, one per input: a backward pass per element of out. Each
    pass starts from out with a one-hot grad_output, the gradient torch's `out.reshape(-1)[j]`
    sends back, without recording an indexing op per element."""
    from ..ops.layout.composites import stack
    from ..tensor.creation import zeros_like

    rows: tuple[list, ...] = tuple([] for _ in inputs)
    numel = out.nelement()
    # A complex (or integer) output's element has no implicit gradient: there autograd.grad
    # on the element itself raises torch's error, which a one-hot start would skip.
    one_hot = out.dtype.is_floating_point
    flat = out.reshape(-1)
    for j in range(numel):
        if not one_hot:
            grads = grads_of((flat[j],), inputs, retain_graph=True, create_graph=create_graph)
        else:
            if j % _ONE_HOT_ROWS == 0:
                one_hots = _one_hot_rows(j, min(j + _ONE_HOT_ROWS, numel), numel, out)
            start = one_hots[j % _ONE_HOT_ROWS].view(out.shape)
            grads = grads_of((out,), inputs, (start,), retain_graph=True,
                             create_graph=create_graph)
        for k, (gradient, x) in enumerate(zip(grads, inputs)):
            if gradient is None:
                if strict:
                    raise RuntimeError(f"Output {i} of the user-provided function is "
                                       f"independent of input {k}. This is not allowed in "
                                       "strict mode.")
                gradient = zeros_like(x)
            elif strict and create_graph and not gradient.requires_grad:
                # torch names the output's index here, not the input's.
                raise RuntimeError(f"The jacobian of the user-provided function is independent "
                                   f"of input {i}. This is not allowed in strict mode when "
                                   "create_graph=True.")
            rows[k].append(gradient)
    return tuple(stack(row, dim=0).view(out.size() + x.size()) for row, x in zip(rows, inputs))


# Rows of the identity made at once for _jacobian_rows: few ops per row, bounded memory.
_ONE_HOT_ROWS = 128


def _one_hot_rows(start: int, stop: int, numel: int, like: Tensor) -> Tensor:
    """Rows start..stop of the numel x numel identity, of like's dtype and device."""
    from ..tensor.creation import arange

    rows = arange(start, stop, device=like.device).unsqueeze(1)
    return (rows == arange(numel, device=like.device).unsqueeze(0)).to(like.dtype)


def _jacobian_batched(inputs: tuple, outputs: tuple, create_graph: bool) -> tuple:
    """All of the Jacobian in one batched backward: the grad_outputs are a standard basis of
    the outputs' elements, row r picking element r of the flattened outputs joined."""
    from ..tensor.creation import zeros_like

    numels = tuple(out.numel() for out in outputs)
    basis = standard_basis_for(outputs, numels)
    flat = tuple(out.reshape(-1) for out in outputs)
    grads = grads_of(flat, inputs, basis, create_graph=create_graph, is_grads_batched=True)
    per_input = [zeros_like(x).expand((sum(numels),) + tuple(x.shape)) if g is None else g
                 for g, x in zip(grads, inputs)]
    # Split each input's rows by output, then regroup per output, then per input.
    split = [[rows.view(out.shape + x.shape) for rows, out in zip(g.split(numels, dim=0),
                                                                    outputs)]
             for g, x in zip(per_input, inputs)]
    return tuple(zip(*split))


def _jacobian_forward(func, inputs, strict: bool, vectorize: bool):
    """strategy="forward-mode": forward mode along every input element at once, the tangents a
    standard basis vmapped over; a result is a list where torch's code builds one."""
    from ..tensor.creation import zeros_like
    from . import forward_ad
    from .vmap import legacy_vmap

    if strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and `strategy=\"forward-mode\"` "
            "are not supported together (yet). Please either set `strict=False` or "
            "`strategy=\"reverse-mode\"`.")
    inputs_tuple, inputs = as_tuple(inputs, "inputs", "jacobian")
    if not vectorize:
        # torch's message, its missing space included.
        raise NotImplementedError(
            "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
            "only implemented for `vectorize=True`.")
    numels = tuple(x.numel() for x in inputs)
    seen = []  # (outputs were a tuple, the outputs' shapes), from inside the vmapped call

    def push(*tangents):
        with forward_ad.dual_level():
            duals = tuple(forward_ad.make_dual(x, tangent.view_as(x))
                          for x, tangent in zip(inputs, tangents))
            outputs_tuple, outputs = as_tuple(func(*duals), "outputs", None)
            unpacked = [forward_ad.unpack_dual(out) for out in outputs]
            seen.append((outputs_tuple, [primal.shape for primal, _ in unpacked]))
            return tuple(zeros_like(primal) if tangent is None else tangent
                         for primal, tangent in unpacked)

    pushed = legacy_vmap(push)(*standard_basis_for(inputs, numels))
    outputs_tuple, shapes = seen[-1]
    # The batch dim runs over the inputs' elements: move it last to get output x input.
    blocks = [[rows.permute(*range(1, rows.ndim), 0).reshape(tuple(shape) + tuple(x.shape))
               for rows, x in zip(jac.split(numels, dim=0), inputs)]
              for jac, shape in zip(pushed, shapes)]
    return untuple(blocks, (outputs_tuple, inputs_tuple))


@_plain_autograd
def hessian(func, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a function with one single-element output: a Tensor for one input,
    else a tuple of tuples (block i, j shaped like inputs i and j joined). It is the jacobian
    of the function's gradient, computed with create_graph=True."""
    inputs_tuple, inputs = as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')

    def scalar(*args):
        output = func(*args)
        outputs_tuple, outputs = as_tuple(output, "outputs of the user-provided function",
                                          "hessian")
        check_requires_grad(outputs, "outputs", strict)
        if outputs_tuple or not isinstance(output, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if output.nelement() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return output.squeeze()

    def gradient(*args):
        if outer_jacobian_strategy == "forward-mode":
            # torch's: so the reverse-mode jacobian inside keeps the inputs' (dual) graph.
            args = tuple(x.requires_grad_(True) for x in args)
        result = jacobian(scalar, args, create_graph=True)
        check_requires_grad(result, "jacobian", strict)
        return result

    blocks = jacobian(gradient, inputs, create_graph=create_graph, strict=strict,
                      vectorize=vectorize, strategy=outer_jacobian_strategy)
    return untuple(blocks, (inputs_tuple, inputs_tuple))


@_plain_autograd
def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T H): the vector-Hessian product of a single-element function, the
    backward of its gradient along v."""
    with enable_grad():
        inputs_tuple, inputs, v, outputs, first = _gradient(func, inputs, v, create_graph,
                                                            strict, "vhp")
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = grads_of(first, inputs, v, create_graph=create_graph)
        product = zeros_for_missing(grads, inputs, strict, create_graph, "double_back")
    return (untuple(finish(outputs, create_graph), False),
            untuple(finish(product, create_graph), inputs_tuple))


@_plain_autograd
def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), H v): the Hessian-vector product of a single-element function, by the
    double-backward trick on its gradient (so H need not be symmetric)."""
    from ..tensor.creation import zeros_like

    with enable_grad():
        inputs_tuple, inputs, v, outputs, first = _gradient(func, inputs, v, create_graph,
                                                            strict, "hvp")
        dummies = tuple(zeros_like(x, requires_grad=True) for x in inputs)
        second = grads_of(first, inputs, dummies, create_graph=True)
        check_requires_grad(first, "hessian", strict)
    with set_grad_enabled(create_graph or is_grad_enabled()):
        grads = grads_of(second, dummies, v, create_graph=create_graph)
        product = zeros_for_missing(grads, inputs, strict, create_graph, "double_back_trick")
    return (untuple(finish(outputs, create_graph), False),
            untuple(finish(product, create_graph), inputs_tuple))


def _gradient(func, inputs, v, create_graph: bool, strict: bool, function: str):
    """vhp and hvp's first half: (inputs were a tuple, prepared inputs, prepared v, func's
    output as a 1-tuple, its gradient with a graph)."""
    inputs_tuple, inputs = as_tuple(inputs, "inputs", function)
    inputs = prepare(inputs, create_graph, need_graph=True)
    v = prepare_v(v, inputs, inputs_tuple, create_graph, function, V_NONE_INPUT)
    outputs_tuple, outputs = _run(func, inputs, function, strict)
    if outputs_tuple or not isinstance(outputs[0], Tensor):
        raise RuntimeError(f"The function given to {function} should return a single Tensor")
    if outputs[0].nelement() != 1:
        raise RuntimeError(f"The Tensor returned by the function given to {function} should "
                           "contain a single element")
    first = grads_of(outputs, inputs, create_graph=True)
    check_requires_grad(first, "jacobian", strict)
    return inputs_tuple, inputs, v, outputs, first


__all__ = ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"]
