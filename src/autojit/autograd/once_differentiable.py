"""once_differentiable and the error node it leaves: a custom Function's backward that cannot
itself be differentiated gives results whose grad_fn (torch's "Error" node) raises when a
second backward reaches it; `delayed_error` does the same for an op's gradient
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


class Error(Node):
    """torch's Error node: the grad_fn of a once_differentiable backward's results (and of
    c_functions.DelayedError's outputs); running it raises."""

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


_named: dict = {}  # node name -> Error's subclass of that name (torch names the class so)


def _error_node(message: str, count: int, error, node_name: str) -> Error:
    node_class = Error
    if node_name != "Error":
        node_class = _named.get(node_name)
        if node_class is None:
            # (a C++ node of torch's, "torch::autograd::NotImplemented", is a class without
            # its namespace)
            node_class = _named[node_name] = type(node_name.rsplit("::", 1)[-1], (Error,),
                                                  {"__slots__": ()})
    return node_class(message, count, error, node_name)


def attach_outputs(node: Node, tensors) -> list:
    """`tensors` (None allowed) as new tensors over the same data, the outputs of `node`, whose
    edges go to the tensors' own histories, as torch's wrap_outputs makes them: with grad mode
    on and one of them requiring grad, every output has the node as grad_fn."""
    edges, meta = [], []
    for tensor in tensors:
        if isinstance(tensor, Tensor) and tensor.requires_grad:
            edges.append(gradient_edge(tensor))
            meta.append((tuple(tensor.shape), tensor._dtype))
        else:
            edges.append((None, 0))
            meta.append(None)
    node.next_functions = tuple(edges)
    node.input_meta = tuple(meta)
    node.needs_input_grad = tuple(entry is not None for entry in meta)
    node.output_count = len(edges)
    executable = state.grad_enabled and any(node.needs_input_grad)
    outputs = []
    for index, tensor in enumerate(tensors):
        if tensor is None:
            outputs.append(None)
            continue
        out = tensor.detach()
        if executable:
            out.grad_fn = node
            out._output_nr = index
            out._requires_grad = True
        outputs.append(out)
    return outputs


def delayed_error(message: str, tensor: Tensor, source: Tensor | None = None,
                  error=RuntimeError, node_name: str = "Error") -> Tensor:
    """`tensor` as a new tensor whose grad_fn raises `error(message)` when a backward reaches
    it (ops/registry.py's DELAYED_ERROR): a VJP's result whose derivative torch leaves
    undefined, or, given `source`, an op's result made from it whose derivative torch does not
    implement (unique's), named as torch names that node."""
    origin = tensor if source is None else source
    if not origin._requires_grad:
        return tensor
    node = _error_node(message, 1, error, node_name)
    # linked to the history, so that a backward asked for what lies below reaches it
    node.next_functions = (gradient_edge(origin),)
    node.input_meta = ((tuple(origin.shape), origin._dtype),)
    node.needs_input_grad = (True,)
    wrapped = tensor.detach()
    wrapped.grad_fn = node
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
        # As torch: each result detached and made a leaf requiring grad, so that the Error
        # node, with edges to those leaves, is reached (and raises) from any graph built on
        # the results; what is not a floating tensor passes through as it is.
        floating = [isinstance(item, Tensor) and item._dtype.category >= dtypes.FLOATING
                    for item in items]
        leaves = [item.detach().requires_grad_() if wanted else None
                  for item, wanted in zip(items, floating)]
        wrapped = attach_outputs(Error(ONCE_DIFFERENTIABLE_MESSAGE, len(items)), leaves)
        wrapped = [out if wanted else item for out, item, wanted in zip(wrapped, items, floating)]
        return wrapped[0] if single else tuple(wrapped)

    return wrapper


registry.DELAYED_ERROR = delayed_error
