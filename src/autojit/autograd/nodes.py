"""The autograd graph's structure: Node (a tensor's grad_fn), AccumulateGrad (a leaf's), and
the edges between them (`gradient_edge`, GradientEdge).

Every tensor that requires grad reaches the graph through `gradient_edge`: its grad_fn and
output number, or its leaf's AccumulateGrad, made on first use and kept weakly on the tensor.
The nodes of ops (OpNode) and their recording are graph.py's; the values they save,
saved_tensors.py's; hooks.py attaches the hook registrations to Node; the engine (engine.py)
walks the nodes. autojit.autograd.graph re-exports the names torch.autograd.graph has.
"""

from __future__ import annotations

import itertools
import weakref
from typing import NamedTuple

from ..tensor import dtypes
from ..tensor.device import CPU
from ..tensor.tensor import Tensor
from .view_history import refresh_view

_sequence = itertools.count()


class Node:
    """A backward function: grad_fn of a non-leaf tensor, or AccumulateGrad of a leaf."""

    __slots__ = ("next_functions", "sequence_nr", "input_meta", "needs_input_grad",
                 "__weakref__", "__dict__")
    output_count = 1  # custom Functions have several outputs
    # An OpNode class's recorded VJP chains by signature (vjp_chain.py), None where the op's
    # VJP may not be replayed (Op.static_vjp) or the node is not an OpNode.
    _chains = None
    # Set per node only when used (autograd/hooks.py): Tensor.register_hook on an output,
    # retain_grad, Node.register_prehook, Node.register_hook.
    _tensor_hooks = None
    _retained = None
    _pre_hooks = None
    _hooks = None
    # Set on Node itself when any of those is first registered (hooks.py): until then the
    # engine does not look for them on each node.
    hooked = False
    _forward_trace = None  # the forward call's traceback, captured in anomaly mode
    _packed = False  # whether values were saved under saved-tensor hooks (graph_api.py)

    def __init__(self):
        self.sequence_nr = next(_sequence)

    def name(self) -> str:
        return type(self).__name__

    @property
    def metadata(self) -> dict:
        """A dict for the user's own annotations of this node."""
        found = self.__dict__.get("_metadata")
        if found is None:
            found = self._metadata = {}
        return found

    def apply(self, grads: list) -> list:
        """Gradients w.r.t. the inputs (one per next_functions entry) from output gradients."""
        raise NotImplementedError

    @property
    def _input_metadata(self) -> tuple:
        """torch's metadata of the gradients this node takes, one per output of the forward
        (shape, dtype, device): an InputMetadata each."""
        return tuple(InputMetadata(*meta) if meta is not None else InputMetadata()
                     for meta in self._output_metadata())

    def _output_metadata(self) -> tuple:
        """(shape, dtype[, device]) per forward output, None for one that is not a tensor;
        each kind of node answers from what it keeps (a custom Function's node its
        `_output_meta`)."""
        return getattr(self, "_output_meta", ())

    def release(self) -> None:
        """Free saved values (called when retain_graph is False)."""

    def __repr__(self):
        # (a node torch writes in C++ names itself with its namespace, its class without)
        return f"<{self.name().rsplit('::', 1)[-1]} object at {id(self):#x}>"

    def __call__(self, *grads):
        if len(grads) != self.output_count:
            raise TypeError(f"expected {self.output_count} arguments, got {len(grads)} instead")
        return self.apply(list(grads))


class AccumulateGrad(Node):
    """The node of a leaf that requires grad; the engine adds what reaches it into .grad."""

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor):
        super().__init__()
        self.variable = variable
        self.next_functions = ()
        self.input_meta = ()
        self.needs_input_grad = ()

    def name(self) -> str:
        return "torch::autograd::AccumulateGrad"  # torch's name of its C++ node

    def apply(self, grads):
        return []

    def _output_metadata(self) -> tuple:
        variable = self.variable
        return ((tuple(variable.shape), variable._dtype, variable.device),)


class InputMetadata:
    """torch._C._autograd._InputMetadata: the shape (a list), dtype and device of a gradient
    a node takes, and whether it is a nested tensor's."""

    __slots__ = ("shape", "dtype", "device", "is_nested_tensor", "is_cpp_nested_tensor")

    def __init__(self, shape=(), dtype=None, device=None):
        self.shape = list(shape)
        self.dtype = dtype if dtype is not None else dtypes.float32
        self.device = device if device is not None else CPU
        # autojit's nested tensors are Tensors over a flat buffer (autojit/nested.py): a node
        # sees the buffer's gradient
        self.is_nested_tensor = self.is_cpp_nested_tensor = False


InputMetadata.__name__ = InputMetadata.__qualname__ = "_InputMetadata"  # torch's name


def gradient_edge(tensor: Tensor) -> tuple:
    """(node, output_nr) through which gradient flows into `tensor`."""
    if tensor._view_source is not None and \
            tensor._view_version != tensor._version_counter.value:
        refresh_view(tensor)
    if tensor.grad_fn is not None:
        return (tensor.grad_fn, tensor._output_nr)
    if not tensor._requires_grad:
        return (None, 0)
    accumulator = tensor._grad_accumulator() if tensor._grad_accumulator is not None else None
    if accumulator is None:
        accumulator = AccumulateGrad(tensor)
        tensor._grad_accumulator = weakref.ref(accumulator)
    return (accumulator, 0)


class GradientEdge(NamedTuple):
    """One gradient edge of the autograd graph: the node a gradient flows into and which of
    its outputs it is for. `autograd.grad` and `backward` take one wherever they take a tensor
    (autograd/api.py), as torch's do."""

    node: Node
    output_nr: int
    ownership_token: Node | None = None  # torch's: keeps a Python node's graph alive


def get_gradient_edge(tensor: Tensor) -> GradientEdge:
    """The edge through which the gradient of `tensor` is computed: `autograd.grad(loss,
    get_gradient_edge(x))` is `autograd.grad(loss, x)`, and keeps working after `x` is
    modified in place or gone."""
    if not tensor.requires_grad:
        raise RuntimeError("It is not possible to get the gradient edge for a Tensor that does "
                           "not require gradients")
    node, output_nr = gradient_edge(tensor)
    if node.__class__ is not AccumulateGrad:
        # what torch reads from the node's input metadata: the shape and dtype a gradient
        # given for the edge must have (autograd/api.py)
        node.__dict__.setdefault("_edge_meta", {})[output_nr] = (
            tuple(tensor.shape), tensor._dtype, tensor.device)
    return GradientEdge(node, output_nr)


def edge_metadata(edge: GradientEdge) -> tuple | None:
    """(shape, dtype, device or None) of the gradient that flows through `edge`, None where
    unknown (an edge made by hand on a node whose outputs were never asked for)."""
    node = edge.node
    if node.__class__ is AccumulateGrad:
        variable = node.variable
        return tuple(variable.shape), variable._dtype, variable.device
    meta = getattr(node, "_output_meta", None)  # a custom Function's node knows each output's
    if meta and edge.output_nr < len(meta) and meta[edge.output_nr] is not None:
        return (*meta[edge.output_nr], None)
    return node.__dict__.get("_edge_meta", {}).get(edge.output_nr)


def increment_version(tensor) -> None:
    """Count an in-place write to `tensor` (or to each tensor of an iterable) that autograd
    did not see, so that a backward reading it as saved before the write raises. Inference
    tensors have no version to count, as in torch."""
    for item in (tensor,) if isinstance(tensor, Tensor) else tensor:
        if not item._is_inference:
            item._bump_version()
