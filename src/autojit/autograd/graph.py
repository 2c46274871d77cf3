"""The autograd graph: Node (a tensor's grad_fn), AccumulateGrad, saved tensors, recording.

`record` is called by ops.registry.bind after an op ran on inputs that require grad: it builds
an OpNode (a per-op subclass named like MulBackward0) holding the op, its attrs, the edges to the
inputs' nodes and the values the op's VJP reads. The engine (engine.py) walks these nodes.
Saved values carry the version they were saved at; reading one after an in-place write raises
torch's error. See docs/notes/saved-tensors.md.
"""

from __future__ import annotations

import itertools
import weakref

from ..ops import registry
from ..ops.batching import BatchValue, batched
from ..tensor import dtypes
from ..tensor.state import state
from ..tensor.symbolic import same_shape
from ..tensor.tensor import Tensor

_sequence = itertools.count()

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward.")


class SavedTensor:
    """A value kept for backward, with the version it had when saved.

    An op's own output is kept as its storage only (not the Tensor object) so that the output
    does not keep itself alive through its grad_fn; unpacking rebuilds a Tensor whose grad_fn is
    the saving node, which double backward needs.
    """

    __slots__ = ("tensor", "data", "value", "dtype", "version", "counter", "output_nr",
                 "tangents")

    def __init__(self, tensor: Tensor, is_output: bool, output_nr: int = 0):
        self.counter = tensor._version_counter
        self.version = self.counter.value
        if is_output:
            self.tensor = None
            self.data, self.value, self.dtype = tensor._data, tensor._value, tensor._dtype
            self.output_nr = output_nr
            # Forward AD sets the output's tangents after it is recorded (forward_ad.py puts
            # them here too): the rebuilt output carries them, as forward-over-reverse needs.
            self.tangents = None
        else:
            self.tensor = tensor

    def unpack(self, node: Node) -> Tensor:
        if self.counter.value != self.version:
            raise RuntimeError(modified_message(self, node))
        if self.tensor is not None:
            return self.tensor
        value = self.value
        if value.__class__ is BatchValue:  # a vmap batched output: rebuilt batched
            rebuilt = batched(value.physical, value.level)
        else:
            rebuilt = Tensor._make(self.data, self.dtype, self.counter)
            rebuilt._value = value
        rebuilt.grad_fn = node
        rebuilt._output_nr = self.output_nr
        rebuilt._requires_grad = True
        if self.tangents is not None:
            rebuilt._tangents = self.tangents
        return rebuilt


# torch's tensor type names in error messages ("autojit.FloatTensor").
TYPE_NAMES = dtypes.SCALAR_TYPE_NAMES


def modified_message(saved: SavedTensor, node: Node) -> str:
    tensor = saved.tensor
    shape = list(tensor.shape) if tensor is not None else list(
        saved.data.shape if saved.data is not None else saved.value.shape)
    dtype = tensor.dtype if tensor is not None else saved.dtype
    kind = TYPE_NAMES[dtype.name]
    if tensor is None:
        producer = f", which is output {saved.output_nr} of {node.name()},"
    elif tensor.grad_fn is not None:
        producer = f", which is output {tensor._output_nr} of {tensor.grad_fn.name()},"
    else:
        producer = ""
    return ("one of the variables needed for gradient computation has been modified by an "
            f"inplace operation: [autojit.{kind}Tensor {shape}]{producer} is at version "
            f"{saved.counter.value}; expected version {saved.version} instead "
            f"(it was saved by {node.name()}). " + (
                "Hint: the backtrace further above shows the operation that failed to compute "
                "its gradient. The variable in question was changed in there or anywhere "
                "later. Good luck!" if state.anomaly else
                "Hint: enable anomaly detection to find the operation that failed to compute "
                "its gradient, with autojit.autograd.set_detect_anomaly(True)."))


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

    def release(self) -> None:
        """Free saved values (called when retain_graph is False)."""

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"

    def __call__(self, *grads):
        return self.apply(list(grads))


class OpNode(Node):
    """The grad_fn of a primitive's output; also the `ctx` its VJP rule reads."""

    __slots__ = ("op", "attrs", "_saved", "_saved_out", "_released", "_scalars")

    @property
    def inputs(self) -> tuple:
        """The inputs the VJP saved (None where it saved nothing), version-checked."""
        if self._released:
            raise RuntimeError(FREED_MESSAGE)
        return tuple(saved.unpack(self) if isinstance(saved, SavedTensor) else saved
                     for saved in self._saved)

    @property
    def out(self) -> Tensor:
        if self._released:
            raise RuntimeError(FREED_MESSAGE)
        return self._saved_out.unpack(self)

    def apply(self, grads):
        if self._released:
            raise RuntimeError(FREED_MESSAGE)
        results = self.op.vjp(self, grads[0])
        conformed = []
        for result, meta in zip(results, self.input_meta):
            if meta is None or result is None:
                conformed.append(None)
                continue
            data = result._data
            if (data.shape != meta[0] if data is not None else
                    not same_shape(result._value.shape, meta[0])) or \
                    result._dtype is not meta[1]:
                result = conform(result, meta)
            conformed.append(result)
        return conformed

    def release(self):
        if self.op.saves:
            self._released = True
            self._saved = None
            self._saved_out = None


class AccumulateGrad(Node):
    """The node of a leaf that requires grad; the engine adds what reaches it into .grad."""

    __slots__ = ("variable",)

    def __init__(self, variable: Tensor):
        super().__init__()
        self.variable = variable
        self.next_functions = ()
        self.input_meta = ()
        self.needs_input_grad = ()

    def apply(self, grads):
        return []


def refresh_view(view: Tensor) -> None:
    """Regenerate a view's grad_fn after its storage was written in place.

    An in-place op on a base (or on another view of it) changes the values the view shows, so
    the view's old grad_fn no longer describes it: it is rebuilt by applying the view op again
    to its (refreshed) source, as torch does for views of modified bases.
    """
    source, op, attrs = view._view_source
    if source._base is not None and source._view_version != source._version_counter.value:
        refresh_view(source)
    view._view_version = view._version_counter.value
    if not source._requires_grad:
        return
    from ..ops.registry import bind

    previous = state.grad_enabled
    state.grad_enabled = True
    try:
        rebuilt = bind(op, (source,), attrs)
    finally:
        state.grad_enabled = previous
    _move_tensor_hooks(view, rebuilt.grad_fn)
    view.grad_fn = rebuilt.grad_fn
    view._output_nr = 0
    view._requires_grad = True


def _move_tensor_hooks(view: Tensor, node: Node) -> None:
    """The view's hooks and retain_grad follow it to its regenerated grad_fn.

    The hook containers move as they are, so that handles returned earlier still remove their
    hooks. A view op's node has one output, so output numbers stay valid.
    """
    old = view.grad_fn
    if old is None or old.output_count != 1:
        return
    if old._tensor_hooks:
        node._tensor_hooks, old._tensor_hooks = old._tensor_hooks, None
    if old._retained:
        node._retained, old._retained = old._retained, None


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


_NO_EDGE = (None, 0)


def record(op, inputs: tuple, attrs: dict, out: Tensor, special: bool = True) -> None:
    """Attach an OpNode for `op` applied to `inputs` as the grad_fn of `out`.

    special=False: bind found state.dispatch RECORDING, so anomaly mode is off and is not read.
    This runs once per recorded op, so it is written as plain loops without helpers, and
    makes its SavedTensors without calling their __init__ (docs/notes/eager-dispatch.md).
    """
    node_class = op.node_class
    if node_class is None:  # the op's first recorded node: its class, named as torch's
        node_class = op.node_class = type(op.grad_name, (OpNode,), {
            "__slots__": (), "_chains": {} if op.static_vjp else None})
    node = _new(node_class)
    node.sequence_nr = next(_sequence)
    node.op = op
    node.attrs = attrs
    node._released = False
    needs, edges, meta, saved = [], [], [], []
    for x in inputs:
        if isinstance(x, Tensor):
            saved.append(None)
            if x._view_source is not None and x._view_version != x._version_counter.value:
                refresh_view(x)
            if x._requires_grad:
                needs.append(True)
                function = x.grad_fn
                edges.append((function, x._output_nr) if function is not None
                             else gradient_edge(x))
                data = x._data
                meta.append((data.shape if data is not None else x._value.shape, x._dtype))
                continue
        else:
            saved.append(x)
        needs.append(False)
        edges.append(_NO_EDGE)
        meta.append(None)
    node.needs_input_grad = tuple(needs)
    node.next_functions = tuple(edges)
    node.input_meta = meta
    node._saved_out = None
    for entry in op.saves:
        if entry == "out":
            entry = node._saved_out = _new(SavedTensor)
            entry.tensor = None
            entry.data, entry.value, entry.dtype = out._data, out._value, out._dtype
            entry.counter = counter = out._version_counter
            entry.version = counter.value
            entry.output_nr = 0
            entry.tangents = None
            continue
        if entry.__class__ is tuple:
            index, needed_by = entry
            if not needs[needed_by]:
                continue
        else:
            index = entry
        tensor = inputs[index]
        if isinstance(tensor, Tensor):
            entry = saved[index] = _new(SavedTensor)
            entry.tensor = tensor
            counter = tensor._counter
            entry.counter = counter if counter is not None else tensor._version_counter
            entry.version = entry.counter.value
    node._saved = saved
    if special and state.anomaly:
        from .anomaly import capture_forward_trace

        capture_forward_trace(node)
    out.grad_fn = node
    out._requires_grad = True


_new = object.__new__


def conform(gradient: Tensor, meta: tuple) -> Tensor:
    """Sum a gradient back to its input's shape and cast it to the input's dtype.

    This is the one place un-broadcasting happens: VJP rules return gradients in the output's
    broadcast shape and never reduce them themselves.
    """
    shape, dtype = meta
    data = gradient._data
    if data.shape != shape if data is not None else not same_shape(gradient._value.shape, shape):
        gradient = sum_to_shape(gradient, shape)
    if gradient._dtype is not dtype:
        gradient = gradient.to(dtype)
    return gradient


def sum_to_shape(gradient: Tensor, shape: tuple) -> Tensor:
    grad_shape = gradient.shape
    lead = len(grad_shape) - len(shape)
    if lead < 0:
        return gradient.reshape(shape)
    dims = tuple(range(lead)) + tuple(
        lead + i for i, extent in enumerate(shape) if extent == 1 and grad_shape[lead + i] != 1)
    if dims:
        gradient = gradient.sum(dim=dims, keepdim=True)
    if not same_shape(gradient.shape, shape):
        gradient = gradient.reshape(shape)
    return gradient


registry.RECORD = record  # bind (ops/registry.py) records autograd nodes through this
