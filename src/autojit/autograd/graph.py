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
from typing import NamedTuple

from ..ops import registry
from ..ops.batching import BatchValue, batched
from ..tensor import dtypes
from ..tensor.state import state
from ..tensor.symbolic import same_shape
from ..tensor.tensor import Tensor
from .view_history import refresh_view

_sequence = itertools.count()

FREED_MESSAGE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward.")


INFERENCE_SAVED_MESSAGE = (
    "Inference tensors cannot be saved for backward. Please do not use Tensors created in "
    "inference mode in computation tracked by autograd. To work around this, you can make a "
    "clone to get a normal tensor and use it in autograd, or use `autojit.no_grad()` instead "
    "of `autojit.inference_mode()`.")


class SavedTensor:
    """A value kept for backward, with the version it had when saved.

    An op's own output is kept as its storage only (not the Tensor object) so that the output
    does not keep itself alive through its grad_fn; unpacking rebuilds a Tensor whose grad_fn is
    the saving node, which double backward needs.
    """

    __slots__ = ("tensor", "data", "value", "dtype", "version", "counter", "output_nr",
                 "tangents")

    def __init__(self, tensor: Tensor, is_output: bool, output_nr: int = 0):
        if tensor._is_inference and not is_output:
            raise RuntimeError(INFERENCE_SAVED_MESSAGE)
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


PACK_INPLACE_MESSAGE = (
    "A saved tensor pack hook is modifying its input in place. Tensors provided as input to "
    "pack hook cannot be modified by in-place operations as this can lead to unexpected "
    "side-effects. Please open an issue if you need to perform in-place operations on the "
    "input to a pack hook.")


class PackedSavedTensor(SavedTensor):
    """A value saved while saved-tensor hooks were active (autograd/saved_hooks.py): what the
    pack hook returned, given to the unpack hook when backward reads it.

    The unpacked tensor gets the autograd identity the saved tensor had when it was saved (its
    grad_fn and output number, or the leaf's AccumulateGrad), so double backward and the
    leaves' gradients are what they would be without hooks. As in torch there is no version
    check: the hooks own the value. See docs/notes/saved-tensors.md.
    """

    __slots__ = ("packed", "unpack_hook", "is_output", "grad_fn", "accumulator")

    def __init__(self, tensor: Tensor, is_output: bool, output_nr: int, hooks: tuple):
        pack_hook, self.unpack_hook = hooks
        counter = tensor._version_counter
        version = counter.value
        previous = state.grad_enabled
        state.grad_enabled = False  # torch packs under no_grad
        try:
            self.packed = pack_hook(tensor)
        finally:
            state.grad_enabled = previous
        if counter.value != version:
            raise RuntimeError(PACK_INPLACE_MESSAGE)
        self.tensor = self.data = self.value = self.dtype = self.counter = None
        self.version = version
        self.tangents = None
        self.is_output = is_output
        self.accumulator = None
        if is_output:  # its grad_fn is the saving node, given to unpack (no cycle kept)
            self.grad_fn, self.output_nr = None, output_nr
        else:
            self.grad_fn, self.output_nr = tensor.grad_fn, tensor._output_nr
            if self.grad_fn is None and tensor._requires_grad:
                self.accumulator = gradient_edge(tensor)[0]

    def unpack(self, node: Node) -> Tensor:
        value = self.unpack_hook(self.packed)
        if not isinstance(value, Tensor):
            raise TypeError("Output of saved tensor unpack_hook expected to be a Tensor but got "
                            f"result of type {type(value).__name__}")
        rebuilt = value.detach()
        owner = node if self.is_output else self.grad_fn
        if owner is not None:
            rebuilt.grad_fn = owner
            rebuilt._output_nr = self.output_nr
            rebuilt._requires_grad = True
        elif self.accumulator is not None:  # a leaf: gradients reach its AccumulateGrad
            rebuilt._requires_grad = True
            rebuilt._grad_accumulator = weakref.ref(self.accumulator)
        if self.tangents is not None:
            rebuilt._tangents = self.tangents
        return rebuilt


class _Unpacked:
    """A saved output already unpacked, for the length of one OpNode.apply."""

    __slots__ = ("tensor",)

    def __init__(self, tensor: Tensor):
        self.tensor = tensor

    def unpack(self, node: Node) -> Tensor:
        return self.tensor


def pack_saved(entries, outputs: dict):
    """The entries of a node's saved values (SavedTensors, None, Python scalars) with each
    SavedTensor packed by the innermost saved-tensor hooks; `outputs` maps id(entry) of the
    saved outputs to (tensor, output_nr). Called right after the node was attached to its
    outputs, so a pack hook sees an output with its grad_fn, as in torch."""
    if state.tracer is not None:
        from ..tensor.graph_break import graph_break

        graph_break("a tensor saved for backward under autograd.graph.saved_tensors_hooks "
                    "(its hooks run eagerly)", needs_data=False)
    hooks = state.saved_tensor_hooks[-1]
    packed = []
    for entry in entries:
        if entry.__class__ is SavedTensor:
            output = outputs.get(id(entry))
            entry = PackedSavedTensor(output[0], True, output[1], hooks) if output else \
                PackedSavedTensor(entry.tensor, False, 0, hooks)
        packed.append(entry)
    return packed


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

    def release(self) -> None:
        """Free saved values (called when retain_graph is False)."""

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"

    def __call__(self, *grads):
        if len(grads) != self.output_count:
            raise TypeError(f"expected {self.output_count} arguments, got {len(grads)} instead")
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
        if self._packed:
            return self._apply_unpacked_once(grads)
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

    def _apply_unpacked_once(self, grads):
        """apply, with the values saved under saved-tensor hooks unpacked once for the VJP
        (which may read ctx.inputs several times): one unpack call per saved value and
        application, as torch makes."""
        saved, saved_out = self._saved, self._saved_out
        self._saved = tuple(entry.unpack(self) if isinstance(entry, SavedTensor) else entry
                            for entry in saved)
        if saved_out is not None:
            self._saved_out = _Unpacked(saved_out.unpack(self))
        self._packed = False
        try:
            return self.apply(grads)
        finally:
            if not self._released:
                self._saved, self._saved_out, self._packed = saved, saved_out, True

    def __getattr__(self, name: str):
        # torch's per-node accessors of saved values (_saved_self, _raw_saved_result, ...)
        if name.startswith(("_saved_", "_raw_saved_")):
            from .saved_access import op_node_attribute

            return op_node_attribute(self, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

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
    return GradientEdge(node, output_nr)


def increment_version(tensor) -> None:
    """Count an in-place write to `tensor` (or to each tensor of an iterable) that autograd
    did not see, so that a backward reading it as saved before the write raises. Inference
    tensors have no version to count, as in torch."""
    for item in (tensor,) if isinstance(tensor, Tensor) else tensor:
        if not item._is_inference:
            item._bump_version()


_NO_EDGE = (None, 0)


def record(op, inputs: tuple, attrs: dict, out: Tensor, special: bool = True) -> None:
    """Attach an OpNode for `op` applied to `inputs` as the grad_fn of `out`.

    special=False: bind found state.dispatch RECORDING, so anomaly mode and saved-tensor hooks
    are off and are not read.
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
    symbolic = False  # an input's shape is traced: its meta is not shared (_Interned)
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
                if data is not None:
                    meta.append(_meta_table[data.shape, x._dtype])
                else:
                    symbolic = True
                    meta.append((x._value.shape, x._dtype))
                continue
        else:
            saved.append(x)
        needs.append(False)
        edges.append(_NO_EDGE)
        meta.append(None)
    node.needs_input_grad = _needs_table[tuple(needs)]
    node.next_functions = tuple(edges)
    node.input_meta = meta if symbolic else _meta_table[tuple(meta)]
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
            if tensor._is_inference:
                raise RuntimeError(INFERENCE_SAVED_MESSAGE)
            entry = saved[index] = _new(SavedTensor)
            entry.tensor = tensor
            counter = tensor._counter
            entry.counter = counter if counter is not None else tensor._version_counter
            entry.version = entry.counter.value
    if saved.count(None) == len(saved) < len(_NONES):
        saved = _NONES[len(saved)]
    node._saved = saved
    if special and state.anomaly:
        from .anomaly import capture_forward_trace

        capture_forward_trace(node)
    out.grad_fn = node
    out._requires_grad = True
    if special and state.saved_tensor_hooks and op.saves:  # autograd.graph.saved_tensors_hooks
        saved_out = node._saved_out
        outputs = {id(saved_out): (out, 0)} if saved_out is not None else {}
        packed = pack_saved([saved_out, *saved], outputs)
        node._saved_out, node._saved = packed[0], packed[1:]
        node._packed = True


_new = object.__new__


class _Interned(dict):
    """Equal immutable tuples shared between nodes: each one a node keeps alive is one more
    object for the cyclic garbage collector to count and to promote while the graph lives
    (docs/notes/eager-dispatch.md, "Eager loops of small ops"). Bounded: cleared when
    full, which only ends the sharing."""

    __slots__ = ()

    def __missing__(self, key):
        if len(self) > 4096:
            self.clear()
        self[key] = key
        return key


# input_meta and its entries (shape, dtype) in one table (an entry never equals a tuple of
# entries); needs_input_grad, tuples of bools, in another; the saved values of a node that
# saves nothing.
_meta_table, _needs_table = _Interned(), _Interned()
_NONES = tuple((None,) * n for n in range(9))


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
        if gradient._dtype.category == _COMPLEX and dtype.category != _COMPLEX:
            # A real input of a complex result: its gradient is the real part (torch's
            # handle_r_to_c), dL/dx of the complex gradient dL/dx + i dL/dy.
            gradient = gradient.real
        if gradient._dtype is not dtype:
            gradient = gradient.to(dtype)
    return gradient


_COMPLEX = dtypes.COMPLEX


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


# torch.autograd.graph's other public names: graph_api.py reads this module's names, so it is
# imported once they exist.
from .graph_api import (  # noqa: E402
    allow_mutation_on_saved_tensors,
    disable_saved_tensors_hooks,
    register_multi_grad_hook,
    save_on_cpu,
    saved_tensors_hooks,
    set_warn_on_accumulate_grad_stream_mismatch,
)

__all__ = [
    "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
    "register_multi_grad_hook", "allow_mutation_on_saved_tensors", "Node", "GradientEdge",
    "get_gradient_edge", "increment_version", "set_warn_on_accumulate_grad_stream_mismatch",
]


Tensor._refresh_view = staticmethod(refresh_view)  # the requires_grad of a written view
