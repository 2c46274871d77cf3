"""once_differentiable and the error node it leaves: a custom Function's backward that cannot
itself be differentiated gives results whose grad_fn (DelayedError, torch's "Error" node)
raises when a second backward reaches it; `delayed_error` does the same for an op's gradient
whose own derivative torch leaves undefined (ops/registry.py's DELAYED_ERROR)."""

from __future__ import annotations

import functools

from ..ops import registry
from ..tensor import dtypes
from ..tensor.state import state
from ..tensor.tensor import Tensor
from .nodes import Node, gradient_edge

ONCE_DIFFERENTIABLE_MESSAGE = ("trying to differentiate twice a function that was marked with "
                               "@once_differentiable")


class DelayedError(Node):
    """The grad_fn of a once_differentiable backward's results; running it raises."""

    __slots__ = ("message", "error", "node_name")

    def __init__(self, message: str, output_count: int, error=RuntimeError,
                 node_name: str = "Error"):
        super().__init__()
        self.message, self.error, self.node_name = message, error, node_name
        self.output_count = output_count
        self.next_functions = ()
        self.input_meta = ()
        self.needs_input_grad = ()

    def name(self) -> str:
        return self.node_name

    def apply(self, grads: list) -> list:
        raise self.error(self.message)


def delayed_error(message: str, tensor: Tensor, source: Tensor | None = None,
                  error=RuntimeError, node_name: str = "Error") -> Tensor:
    """`tensor` as a new tensor whose grad_fn raises `error(message)` when a backward reaches
    it (ops/registry.py's DELAYED_ERROR): a VJP's result whose derivative torch leaves
    undefined, or, given `source`, an op's result made from it whose derivative torch does not
    implement (unique's), named as torch names that node."""
    origin = tensor if source is None else source
    if not origin._requires_grad:
        return tensor
    error = DelayedError(message, 1, error, node_name)
    # linked to the history, so that a backward asked for what lies below reaches it
    error.next_functions = (gradient_edge(origin),)
    error.input_meta = ((tuple(origin.shape), origin._dtype),)
    error.needs_input_grad = (True,)
    wrapped = tensor.detach()
    wrapped.grad_fn = error
    wrapped._output_nr = 0
    wrapped._requires_grad = True
    return wrapped


def once_differentiable(backward):
    """Decorate a Function's backward that cannot itself be differentiated.

    The backward runs with grad mode off. When a graph of the gradients is being built
    (create_graph=True) and a gradient reaching it requires grad, its results get a grad_fn
    that raises when a second backward reaches it, instead of silently giving zero.
    """

    @functools.wraps(backward)
    def wrapper(ctx, *args):
        previous = state.grad_enabled
        state.grad_enabled = False
        try:
            outputs = backward(ctx, *args)
        finally:
            state.grad_enabled = previous
        if not previous or not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            return outputs
        single = not isinstance(outputs, tuple)
        items = (outputs,) if single else outputs
        error = DelayedError(ONCE_DIFFERENTIABLE_MESSAGE, len(items))
        wrapped = []
        for index, item in enumerate(items):
            if isinstance(item, Tensor) and item._dtype.category >= dtypes.FLOATING:
                item = item.detach()
                item.grad_fn = error
                item._output_nr = index
                item._requires_grad = True
            wrapped.append(item)
        return wrapped[0] if single else tuple(wrapped)

    return wrapper


registry.DELAYED_ERROR = delayed_error
