"""The autograd graph: OpNode (the grad_fn of an op's output) and `record`, which makes them;
also torch.autograd.graph's namespace.

`record` is called by ops.registry.bind after an op ran on inputs that require grad: it builds
an OpNode (a per-op subclass named like MulBackward0) holding the op, its attrs, the edges to the
inputs' nodes and the values the op's VJP reads. The engine (engine.py) walks these nodes.
Saved values (saved_tensors.py) carry the version they were saved at; reading one after an
in-place write raises torch's error. See docs/notes/saved-tensors.md. Node, AccumulateGrad and
the edges are nodes.py's; the hooks over the whole graph graph_api.py's, re-exported here with
the rest of torch.autograd.graph's names.
"""

from __future__ import annotations

import abc

import numpy as np

from ..ops import registry
from ..tensor import dtypes
from ..tensor.state import state
from ..tensor.symbolic import same_shape
from ..tensor.tensor import Tensor
from .graph_api import (
    allow_mutation_on_saved_tensors,
    disable_saved_tensors_hooks,
    register_multi_grad_hook,
    save_on_cpu,
    saved_tensors_hooks,
    set_warn_on_accumulate_grad_stream_mismatch,
)
from .nodes import (
    GradientEdge,
    _sequence,
    get_gradient_edge,
    gradient_edge,
    increment_version,
)
from .nodes import Node as _GraphNode
from .saved_access import op_node_attribute
from .saved_tensors import (
    FREED_MESSAGE,
    INFERENCE_SAVED_MESSAGE,
    SavedTensor,
    _Unpacked,
    pack_saved,
)
from .view_history import refresh_view


class OpNode(_GraphNode):
    """The grad_fn of a primitive's output; also the `ctx` its VJP rule reads."""

    __slots__ = ("op", "attrs", "_saved", "_saved_out", "_released", "_scalars", "_out_meta")

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
            data = result._payload
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

    def _output_metadata(self) -> tuple:
        try:
            return (self._out_meta,)
        except AttributeError:  # a node not made by record
            return ()

    def __getattr__(self, name: str):
        # torch's per-node accessors of saved values (_saved_self, _raw_saved_result, ...)
        if name.startswith(("_saved_", "_raw_saved_")):
            return op_node_attribute(self, name)
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def release(self):
        if self.op.saves:
            self._released = True
            self._saved = None
            self._saved_out = None


class Node(abc.ABC):
    """torch.autograd.graph.Node: what every backward node is, as a virtual base class, as in
    torch: isinstance and issubclass hold for each node class (an op's, AccumulateGrad, a
    custom Function's, which is also its ctx) though Node is not among their bases (the nodes'
    own base is nodes.py's). Its methods are the ones each node has."""

    @abc.abstractmethod
    def name(self) -> str:
        """The node's name (`MulBackward0`)."""

    @property
    @abc.abstractmethod
    def next_functions(self) -> tuple:
        """(node, output number) per input of the op: where the gradients go."""

    @property
    @abc.abstractmethod
    def metadata(self) -> dict:
        """A dict for the user's own annotations of this node."""

    @abc.abstractmethod
    def register_hook(self, fn):
        """`fn(grad_inputs, grad_outputs)` after the node ran."""

    @abc.abstractmethod
    def register_prehook(self, fn):
        """`fn(grad_outputs)` before the node runs."""

    @classmethod
    def __subclasshook__(cls, subclass) -> bool:
        if cls is Node and isinstance(subclass, type) and issubclass(subclass, _GraphNode):
            return True
        return NotImplemented


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
                data = x._payload
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
    data = out._payload  # the output's (shape, dtype[, device]): its _input_metadata
    node._out_meta = _meta_table[data.shape, out._dtype] if data.__class__ is _NDARRAY else \
        (tuple(out.shape), out._dtype, out.device)
    node._saved_out = None
    for index in op.saves:
        if index.__class__ is tuple:  # (what, j): kept only when input j needs a gradient
            index, needed_by = index
            if not needs[needed_by]:
                continue
        if index == "out":
            entry = node._saved_out = _new(SavedTensor)
            entry.tensor = None
            entry.data, entry.value, entry.dtype = out._payload, out._value, out._dtype
            entry.counter = counter = out._version_counter
            entry.version = counter.value
            entry.output_nr = 0
            entry.tangents = None
            continue
        tensor = inputs[index]
        if isinstance(tensor, Tensor):
            if tensor._is_inference:
                raise RuntimeError(INFERENCE_SAVED_MESSAGE)
            entry = saved[index] = _new(SavedTensor)
            entry.tensor = tensor
            entry.saved_fn = tensor.grad_fn
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
    if special and op.saves:
        if state.saved_tensor_hooks:  # autograd.graph.saved_tensors_hooks
            saved_out = node._saved_out
            outputs = {id(saved_out): (out, 0)} if saved_out is not None else {}
            packed = pack_saved([saved_out, *saved], outputs)
            node._saved_out, node._saved = packed[0], packed[1:]
            node._packed = True
        for watch in state.saved_watch:  # a checkpoint's (utils/checkpoint.py)
            watch(node)


_new = object.__new__
_NDARRAY = np.ndarray


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
    data = gradient._payload
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


__all__ = [
    "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
    "register_multi_grad_hook", "allow_mutation_on_saved_tensors", "Node", "GradientEdge",
    "get_gradient_edge", "increment_version", "set_warn_on_accumulate_grad_stream_mismatch",
]


def _refresh_view_lenient(view: Tensor, snapshot: Tensor | None = None,
                          strict: bool = False) -> None:
    """refresh_view for the tensor layer (the requires_grad of a written view, an in-place
    write, printing): torch reads those without raising, except printing, which asks for
    strict and prints what torch prints when its grad_fn raises."""
    refresh_view(view, snapshot, strict)


Tensor._refresh_view = staticmethod(_refresh_view_lenient)
