"""autograd.functional: torch.autograd.functional's jacobian, hessian, vjp, jvp, hvp and vhp.

These take `inputs` as a tensor or a tuple of tensors and give results in the same form, as
torch's do. They are written on the transforms of transforms.py: vjp and vhp/hvp on reverse
mode, jvp on forward mode, jacobian by reverse mode (one vjp per output element) or forward
mode (one jvp per input element). With create_graph=False the results are detached; with
create_graph=True they stay differentiable with respect to inputs that require grad.
"""

from __future__ import annotations

import functools

from ..tensor.state import state
from ..tensor.tensor import Tensor
from . import transforms


def _plain_autograd(api):
    """`api` run as torch's autograd.functional is, plain autograd: it is written on the
    transforms of transforms.py, but an autograd.Function without setup_context works in it,
    its backward too (the transforms refuse one, as torch.func's do)."""

    @functools.wraps(api)
    def run(*args, **kwargs):
        state.plain_autograd += 1
        try:
            return api(*args, **kwargs)
        finally:
            state.plain_autograd -= 1

    return run


def _as_tuple(value, argument: str, function: str) -> tuple[bool, tuple]:
    """(whether value was a tuple, value as a tuple), checking it holds only Tensors."""
    is_tuple = isinstance(value, (tuple, list))
    items = tuple(value) if is_tuple else (value,)
    for item in items:
        if not isinstance(item, Tensor):
            if is_tuple:
                raise TypeError(f"The {argument} given to {function} must be either a Tensor "
                                f"or a tuple of Tensors but the value at index "
                                f"{items.index(item)} has type {type(item)}.")
            raise TypeError(f"The {argument} given to {function} must be either a Tensor or "
                            f"a tuple of Tensors but the given {argument} has type "
                            f"{type(item)}.")
    return is_tuple, items


def _detached(values, keep: bool):
    if keep:
        return values
    if isinstance(values, (tuple, list)):
        return type(values)(_detached(value, keep) for value in values)
    return values.detach() if isinstance(values, Tensor) else values


def _prepare_inputs(inputs: tuple, create_graph: bool) -> tuple:
    """Inputs as torch's functional API sees them: aliases keeping their history only when a
    graph is wanted; with create_graph, an input that does not require grad becomes a fresh
    leaf that does, so the results are differentiable graphs (they require grad) as torch's
    are."""
    return tuple(x.view_as(x) if create_graph and x.requires_grad else
                 x.detach().requires_grad_(True) if create_graph else x.detach()
                 for x in inputs)


def _check_strict(func, inputs: tuple) -> None:
    """torch's strict mode: every output must depend, differentiably, on every input."""
    from .api import grad
    from .grad_mode import enable_grad

    aliases = tuple(x.detach().requires_grad_(True) for x in inputs)
    with enable_grad():
        outputs = func(*aliases)
    outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
    for i, output in enumerate(outputs):
        if not output.requires_grad:
            raise RuntimeError(f"Output {i} of the user-provided function does not require "
                               "gradients. The outputs must be computed in a differentiable "
                               "manner from the input when running in strict mode.")
        grads = grad(output.sum(), list(aliases), retain_graph=True, allow_unused=True)
        for j, gradient in enumerate(grads):
            if gradient is None:
                raise RuntimeError(f"Output {i} of the user-provided function is independent "
                                   f"of input {j}. This is not allowed in strict mode.")


def _input_vectors(items: tuple, v, function: str) -> tuple:
    """The `v` of jvp, hvp and vhp, one per input and shaped like it; ones for a single
    one-element input when v is None, as torch allows."""
    if v is None:
        if len(items) != 1 or items[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the input to the user-provided "
                               "function is a single Tensor with a single element.")
        from ..tensor.creation import ones_like

        return (ones_like(items[0]),)
    _, vectors = _as_tuple(v, "v", function)
    if len(vectors) != len(items):
        raise RuntimeError(f"v is a tuple of invalid length: should be {len(items)} but got "
                           f"{len(vectors)}.")
    for index, (x, vector) in enumerate(zip(items, vectors)):
        if tuple(x.shape) != tuple(vector.shape):
            raise RuntimeError(f"Entry {index} in v has invalid size: should be "
                               f"{tuple(x.shape)} but got {tuple(vector.shape)}.")
    return vectors


@_plain_autograd
def vjp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T J): the vector-Jacobian product at inputs."""
    inputs_tuple, items = _as_tuple(inputs, "inputs", "vjp")
    items = _prepare_inputs(items, create_graph)
    output, pull = transforms.vjp(func, *items)
    outputs_tuple, outputs = _as_tuple(output, "outputs of the user-provided function", "vjp")
    if v is None:
        if len(outputs) != 1 or outputs[0].numel() != 1:
            raise RuntimeError("The vector v can only be None if the user-provided function "
                               "returns a single Tensor with a single element.")
        from ..tensor.creation import ones_like

        vectors = (ones_like(outputs[0]),)
    else:
        _, vectors = _as_tuple(v, "v", "vjp")
        if len(vectors) != len(outputs):
            raise RuntimeError(f"v is a tuple of invalid length: should be {len(outputs)} but "
                               f"got {len(vectors)}.")
    if strict:
        _check_strict(func, items)
    cotangents = vectors if outputs_tuple else vectors[0]
    if outputs_tuple and isinstance(output, list):
        cotangents = list(cotangents)
    grads = pull(cotangents, create_graph=create_graph)
    result = grads if inputs_tuple else grads[0]
    return _detached(output, create_graph), _detached(result, create_graph)


@_plain_autograd
def jvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), J v): the Jacobian-vector product at inputs, by forward mode."""
    inputs_tuple, items = _as_tuple(inputs, "inputs", "jvp")
    items = _prepare_inputs(items, create_graph)
    vectors = _input_vectors(items, v, "jvp")
    if strict:
        _check_strict(func, items)
    output, pushed = transforms.jvp(func, items, tuple(vectors))
    return _detached(output, create_graph), _detached(pushed, create_graph)


@_plain_autograd
def jacobian(func, inputs, create_graph: bool = False, strict: bool = False,
             vectorize: bool = False, strategy: str = "reverse-mode"):
    """The Jacobian of func at inputs: a Tensor for one input and one output, else tuples
    (per output, then per input), each block shaped output.shape + input.shape."""
    _check_jacobian_options(strategy, create_graph, strict, vectorize)
    inputs_tuple, items = _as_tuple(inputs, "inputs", "jacobian")
    items = _prepare_inputs(items, create_graph)
    if strict:
        _check_strict(func, items)
    argnums = tuple(range(len(items)))
    transform = transforms.jacrev if strategy == "reverse-mode" else transforms.jacfwd
    result = transform(func, argnums=argnums)(*items)
    output_tuple = isinstance(result, (tuple, list)) and result and isinstance(
        result[0], tuple)
    per_output = tuple(result) if output_tuple else (result,)
    # torch's forward-mode jacobian answers tuple inputs with lists (outer ones too).
    container = list if strategy == "forward-mode" and inputs_tuple else tuple
    shaped = container(container(blocks) if inputs_tuple else blocks[0]
                       for blocks in per_output)
    final = shaped if output_tuple else shaped[0]
    return _detached(final, create_graph)


def _check_jacobian_options(strategy, create_graph, strict, vectorize) -> None:
    """torch's errors for the combinations of jacobian's options it does not take."""
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
        if strict:
            raise RuntimeError(
                "torch.autograd.functional.jacobian: `strict=True` and "
                '`strategy="forward-mode"` are not supported together (yet). Please either set '
                '`strict=False` or `strategy="reverse-mode"`.')
        if not vectorize:
            # torch's message, its missing space included.
            raise NotImplementedError(
                "Computing Jacobian using forward-AD or forward-over-reverse Hessian is"
                "only implemented for `vectorize=True`.")
    elif vectorize and strict:
        raise RuntimeError(
            "torch.autograd.functional.jacobian: `strict=True` and `vectorized=True` are not "
            "supported together. Please either set `strict=False` or `vectorize=False`.")


@_plain_autograd
def hessian(func, inputs, create_graph: bool = False, strict: bool = False,
            vectorize: bool = False, outer_jacobian_strategy: str = "reverse-mode"):
    """The Hessian of a function with one single-element output: a Tensor for one input,
    else a tuple of tuples (block i, j shaped like inputs i and j joined)."""
    inputs_tuple, items = _as_tuple(inputs, "inputs", "hessian")
    if outer_jacobian_strategy not in ("forward-mode", "reverse-mode"):
        raise AssertionError('Expected strategy to be either "forward-mode" or "reverse-mode".')
    if outer_jacobian_strategy == "forward-mode":
        _check_jacobian_options("forward-mode", create_graph, strict, vectorize)

    def scalar(*args):
        output = func(*args)
        if not isinstance(output, Tensor):
            raise RuntimeError("The function given to hessian should return a single Tensor")
        if output.numel() != 1:
            raise RuntimeError("The Tensor returned by the function given to hessian should "
                               "contain a single element")
        return output.reshape(())

    if strict:
        _check_strict(func, items)
    items = _prepare_inputs(items, create_graph)
    argnums = tuple(range(len(items)))
    inner = transforms.jacrev(scalar, argnums=argnums)
    outer = transforms.jacrev if outer_jacobian_strategy == "reverse-mode" else \
        transforms.jacfwd
    blocks = outer(inner, argnums=argnums)(*items)
    result = blocks if inputs_tuple else blocks[0][0]
    return _detached(result, create_graph)


@_plain_autograd
def vhp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), v^T H): the vector-Hessian product of a single-element function."""
    return _hessian_product(func, inputs, v, create_graph, strict, "vhp")


@_plain_autograd
def hvp(func, inputs, v=None, create_graph: bool = False, strict: bool = False):
    """(func(inputs), H v): the Hessian-vector product of a single-element function (H is
    symmetric, so this is v^T H transposed)."""
    return _hessian_product(func, inputs, v, create_graph, strict, "hvp")


def _hessian_product(func, inputs, v, create_graph: bool, strict: bool, function: str):
    from .api import grad

    inputs_tuple, items = _as_tuple(inputs, "inputs", function)
    if strict:
        _check_strict(func, items)
    vectors = _input_vectors(items, v, function)
    aliases = tuple(x.view_as(x) if create_graph and x.requires_grad else
                    x.detach().requires_grad_(True) for x in items)
    from .grad_mode import enable_grad

    with enable_grad():
        output = func(*aliases)
        if not isinstance(output, Tensor):
            raise RuntimeError(f"The function given to {function} should return a single Tensor")
        if output.numel() != 1:
            raise RuntimeError(f"The Tensor returned by the function given to {function} should "
                               "contain a single element")
        first = grad(output, aliases, create_graph=True, allow_unused=True)
        pairs = [(g, vector) for g, vector in zip(first, vectors) if g is not None]
        if pairs:
            second = grad([g for g, _ in pairs], aliases, [vector for _, vector in pairs],
                          create_graph=create_graph, allow_unused=True)
        else:
            second = (None,) * len(aliases)
    from ..tensor.creation import zeros_like

    second = tuple(zeros_like(x) if g is None else g for g, x in zip(second, items))
    result = second if inputs_tuple else second[0]
    return _detached(output, create_graph), _detached(result, create_graph)


__all__ = ["jacobian", "hessian", "vjp", "jvp", "hvp", "vhp"]
