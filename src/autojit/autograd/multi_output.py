"""One grad_fn for all the outputs of a composite that torch differentiates as one op: unbind,
split, chunk, unsafe_split and var_mean give each output its own history of primitives here,
torch one node (UnbindBackward0, SplitBackward0, VarMeanBackward0) whose outputs they are; so
do composites with one output whose node torch names and whose saved values it shows
(interpolate's UpsampleLinear1DBackward0 with `_saved_output_size`, addbmm, pdist, ...: the
`saved` values given, an output among them held weakly, a tensor freed with the node).

What depends on that is visible to the user: a hook on one output runs, with None, when a
backward reaches only another output's gradient; a pre-hook on the node sees every output's
gradient at once; `out.grad_fn` is the same object for all of them. `share_node` (installed
as ops/registry.py's SHARE_NODE, which the composites call) puts the outputs on one
SharedNode, whose edges are the inputs' and whose apply runs the outputs' own histories (the
nodes the composite recorded, which no other node of the graph leads to) down to the inputs,
as a small engine pass of its own: only the outputs with a gradient are walked, and the values
add up where they meet, as engine.py adds them. A second-order graph may reach those nodes
directly too (through values their VJPs saved), so they are freed at the end of a backward
pass rather than when they ran (_ReleaseLater).
"""

from __future__ import annotations

import functools
import weakref

from ..ops import registry
from ..tensor.state import PLAIN, state
from ..tensor.tensor import Tensor
from .engine import _add_to_buffer, _embed_into_buffer
from .graph_tasks import _tasks
from .nodes import Node, gradient_edge
from .saved_tensors import FREED_MESSAGE
from .vjp_chain import apply_no_graph

_classes: dict = {}


class SharedNode(Node):
    """The grad_fn of every output of one composite call (a class per torch node name)."""

    __slots__ = ("_roots", "_boundary", "_inner", "_released", "_out_metas", "_shown_values")

    def _output_metadata(self) -> tuple:
        return self._out_metas

    def __getattr__(self, name: str):
        # torch's `_saved_<name>` of the op: the values the composite gave share_node (a
        # tensor, or a tuple of them, raises once the node was freed, as torch's)
        if name.startswith("_saved_"):
            try:
                values = object.__getattribute__(self, "_shown_values")
            except AttributeError:
                values = None
            if values is not None and values.__class__ is not dict:  # computed when asked
                values = self._shown_values = values()
            key = name[len("_saved_"):]
            if values and key in values:
                value = values[key]
                if value is _FREED:
                    raise RuntimeError(FREED_MESSAGE)
                if value.__class__ is weakref.ref:  # an output of the node
                    return value()
                return value
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def apply(self, grads: list) -> list:
        if self._released:
            raise RuntimeError(FREED_MESSAGE)
        plain = state.dispatch == PLAIN and not state.anomaly and state.profiler is None
        boundary = self._boundary
        buffers: dict = {}
        starts = []
        for (node, output_nr), grad in zip(self._roots, grads):
            if node is None or grad is None:
                continue
            _add_to_buffer(buffers, node, output_nr, grad, plain)
            if id(node) not in boundary and node not in starts:  # two outputs of one node
                starts.append(node)
        # How many edges from the nodes this pass runs point at each node it runs.
        dependencies: dict = {}
        stack, seen = list(starts), dict.fromkeys(starts)  # in order: sums add up as always
        while stack:
            for next_node, _ in stack.pop().next_functions:
                if next_node is None or id(next_node) in boundary:
                    continue
                dependencies[next_node] = dependencies.get(next_node, 0) + 1
                if next_node not in seen:
                    seen[next_node] = None
                    stack.append(next_node)
        ready = [node for node in seen if node not in dependencies]
        owned: dict = {}  # the buffers _embed_into_buffer made and may write again
        while ready:
            node = ready.pop()
            node_grads = buffers.pop(node, None)
            if owned and node_grads:
                for grad in node_grads:
                    owned.pop(id(grad), None)
            if not node_grads or all(grad is None for grad in node_grads):
                input_grads = [None] * len(node.next_functions)
            elif plain and node._chains is not None:
                if node.op.embeds_gradient is not None and \
                        _embed_into_buffer(node, node_grads[0], buffers, owned):
                    input_grads = (None,)  # written into its input's buffer
                else:
                    input_grads = apply_no_graph(node, node_grads)
            else:
                input_grads = node.apply(node_grads)
            for (next_node, output_nr), grad in zip(node.next_functions, input_grads):
                if next_node is None:
                    continue
                if grad is not None:
                    _add_to_buffer(buffers, next_node, output_nr, grad, plain)
                if id(next_node) not in boundary:
                    remaining = dependencies[next_node] - 1
                    dependencies[next_node] = remaining
                    if remaining == 0:
                        ready.append(next_node)
        results = []
        given = set()
        for node, output_nr in self.next_functions:
            slots = buffers.get(node) if node is not None else None
            if slots is None or output_nr >= len(slots) or (id(node), output_nr) in given:
                # (an input given twice, `addbmm(m, b, b)`: its buffer holds the sum of both
                # parts, which goes to its first edge only, as the engine adds the edges')
                results.append(None)
                continue
            given.add((id(node), output_nr))
            results.append(slots[output_nr])
        return results

    def release(self) -> None:
        # The outputs' own histories hold what the composite saved; freed with this node, at
        # the end of the pass (_ReleaseLater).
        for node in self._inner:
            node.release()
            if getattr(node, "op", None) is not None and node.op.saves:
                self._released = True  # a later pass through this node raises, as torch's
        values = self._shown_values
        if values is not None:  # the tensors torch's node saved are freed now
            self._shown_values = functools.partial(_freed, values)


def _freed(values) -> dict:
    """A shared node's values after a backward pass freed it: its tensors refuse access."""
    if values.__class__ is not dict:
        values = values()
    return {key: _FREED if _holds_tensor(value) else value for key, value in values.items()}


_FREED = object()  # a saved tensor of a shared node after a backward pass freed it


def _holds_tensor(value) -> bool:
    if value.__class__ is tuple:
        return any(isinstance(item, Tensor) for item in value)
    return isinstance(value, (Tensor, weakref.ref))


class _ReleaseLater:
    """release() of a node of a shared node's own history, put off to the end of the running
    backward pass: a second-order pass reaches such a node directly too (through a value its
    VJP saved), as well as through the shared node; each path runs it once, so it must hold
    its saved values until both have."""

    __slots__ = ("node",)

    def __init__(self, node: Node):
        self.node = weakref.ref(node)

    def __call__(self) -> None:
        node = self.node()
        if node is None:
            return
        running = getattr(_tasks, "running", None)
        if running:
            running[-1].callbacks.append(functools.partial(type(node).release, node))
        else:
            type(node).release(node)


def _inner_nodes(roots: list, boundary: dict) -> list:
    """The nodes between the outputs and the inputs: the composite's own history."""
    stack = [node for node, _ in roots if node is not None and id(node) not in boundary]
    seen = set(stack)
    while stack:
        for next_node, _ in stack.pop().next_functions:
            if next_node is not None and id(next_node) not in boundary and \
                    next_node not in seen:
                seen.add(next_node)
                stack.append(next_node)
    return list(seen)


def share_node(outputs: tuple, inputs: tuple, name: str, saved=None) -> tuple:
    """Make one node, of class `name`, the grad_fn of all of `outputs` (output i its output
    i), with the edges of `inputs`; the outputs are returned. Nothing changes where grad mode
    is off, no output has history, or inside vmap. `saved`: what the node shows as torch's
    `_saved_<name>` (sizes, flags, the tensors torch's node saves), a dict or a function
    giving one when first asked (no sizes read while tracing: a symbolic size is not
    specialized; an output of the node must be in a dict, where it is held weakly)."""
    if not state.grad_enabled or not any(
            isinstance(out, Tensor) and out.grad_fn is not None for out in outputs) or \
            any(isinstance(out, Tensor) and out._batched for out in outputs):
        return outputs
    node_class = _classes.get(name)
    if node_class is None:
        node_class = _classes[name] = type(name, (SharedNode,), {"__slots__": ()})
    node = node_class()
    edges, meta, needs = [], [], []
    for tensor in inputs:
        if isinstance(tensor, Tensor) and tensor._requires_grad:
            edges.append(gradient_edge(tensor))
            meta.append((tuple(tensor.shape), tensor._dtype))
            needs.append(True)
        else:
            edges.append((None, 0))
            meta.append(None)
            needs.append(False)
    node.next_functions = tuple(edges)
    node.input_meta = tuple(meta)
    node.needs_input_grad = tuple(needs)
    node._boundary = {id(edge[0]) for edge in edges if edge[0] is not None}
    node._roots = tuple((out.grad_fn, out._output_nr) if isinstance(out, Tensor) and
                        out.grad_fn is not None else (None, 0) for out in outputs)
    node._inner = _inner_nodes(list(node._roots), node._boundary)
    for inner in node._inner:
        inner.release = _ReleaseLater(inner)
    node._released = False
    if saved and saved.__class__ is dict:
        # An output among them is held weakly: it holds this node (its grad_fn).
        ids = {id(out) for out in outputs}
        saved = {key: weakref.ref(value) if id(value) in ids else value
                 for key, value in saved.items()}
    node._shown_values = saved
    node.output_count = len(outputs)
    node._out_metas = tuple((tuple(out.shape), out._dtype, out.device)
                            if isinstance(out, Tensor) else None for out in outputs)
    for output_nr, out in enumerate(outputs):
        if isinstance(out, Tensor) and out.grad_fn is not None:
            out.grad_fn = node
            out._output_nr = output_nr
    return outputs


registry.SHARE_NODE = share_node
