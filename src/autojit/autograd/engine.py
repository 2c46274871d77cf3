"""The differentiation pass: walks the autograd graph backwards and emits the adjoint.

One iterative walk, no recursion: a first pass counts, for every node reachable from the roots,
how many reachable edges point at it; the second pass runs a node once all of its consumers
have run, with their gradients summed in its buffer. VJP rules run under grad mode equal to
create_graph, so with create_graph=True the adjoint is itself recorded (eagerly as autograd
nodes, or as IR while tracing) and can be differentiated again.

`run_backward` serves Tensor.backward, autograd.backward and autograd.grad alike: with `inputs`
it captures the gradient reaching each input's edge instead of accumulating into .grad.
"""

from __future__ import annotations

import sys
import threading

import numpy as np

from ..ops.sparse.coo import SparseTensor, to_dense
from ..tensor import dtypes, torch_function
from ..tensor.memory_format import is_dense, new_grad_array
from ..tensor.meta import MetaArray
from ..tensor.state import PLAIN, state
from ..tensor.tensor import Tensor, plain_tensor
from .grad_mode import no_grad
from .graph_tasks import _Task, _tasks
from .hooks import run_leaf_hooks, run_tensor_hooks
from .nodes import AccumulateGrad, GradientEdge, Node, gradient_edge
from .vjp_chain import apply_no_graph

# Backward passes nested in one thread before the next runs on a fresh thread (each level
# takes about five Python frames).
MAX_REENTRANT_DEPTH = 32


def _on_fresh_thread(run):
    """run() on a new thread that starts with this thread's execution state (grad mode,
    autocast, the tracer, ...), waited for; its exception is raised here."""
    parent = dict(vars(state))
    found: list = []

    def body():
        for name, value in parent.items():  # the flags and their summary, as they are
            threading.local.__setattr__(state, name, value)
        try:
            found.append((True, run()))
        except BaseException as error:  # noqa: BLE001 - handed to the waiting thread
            found.append((False, error))

    worker = threading.Thread(target=body, name="autojit-reentrant-backward")
    worker.start()
    worker.join()
    ok, value = found[0]
    if not ok:
        raise value
    return value


def run_backward(roots: list, root_grads: list, *, retain_graph: bool, create_graph: bool,
                 inputs: list | None = None, accumulate: bool = True,
                 stop_at: frozenset = frozenset(), partial: bool = False) -> list | None:
    """Backpropagate `root_grads` from `roots`.

    accumulate=True: add gradients into leaves' .grad (all leaves, or only `inputs`).
    accumulate=False (autograd.grad): return the gradient reaching each of `inputs`, or None.
    stop_at: ids of nodes the backward ends at: their gradients are captured (they are the
    grad_fn of some of `inputs`) but they do not run, nor anything below them (a compiled
    function's traced backward ends at the history its inputs came with).
    partial: the user's autograd.grad or backward(inputs=...) asked for some inputs' gradients
    only (torch's reentrant checkpoint refuses to run under such a pass; the compiler's own
    passes with inputs are not refused).
    """
    running = getattr(_tasks, "running", None)
    if running is not None and len(running) >= MAX_REENTRANT_DEPTH:
        # A backward called from a backward (a Function whose backward differentiates, a
        # reentrant checkpoint) this deep: the next levels run on a thread of their own, so
        # thousands of levels fit in no one thread's stack, as torch's engine does.
        return _on_fresh_thread(lambda: run_backward(
            roots, root_grads, retain_graph=retain_graph, create_graph=create_graph,
            inputs=inputs, accumulate=accumulate, stop_at=stop_at, partial=partial))
    if torch_function.ACTIVE and state.torch_function != torch_function.ALL_DISABLED:
        # The rules' ops on saved Tensor-subclass values must reach no __torch_function__
        # (nor a TorchFunctionMode): torch's engine runs below them
        # (docs/notes/eager-dispatch.md).
        with torch_function.DisableTorchFunction():
            return run_backward(roots, root_grads, retain_graph=retain_graph,
                                create_graph=create_graph, inputs=inputs, accumulate=accumulate,
                                stop_at=stop_at, partial=partial)
    tracer = state.tracer
    if tracer is not None:
        tracer.ran_backward = True  # compiler/api.py: the traced function differentiates
    root_edges = [_edge_of(t) for t in roots]
    for index, (node, _) in enumerate(root_edges):
        if node is None:
            raise RuntimeError(f"element {index} of tensors does not require grad and does not "
                               "have a grad_fn")

    capture: dict = {}  # (node, output_nr) -> position in inputs
    if inputs is not None:
        for position, tensor in enumerate(inputs):
            edge = _edge_of(tensor)
            if edge[0] is not None:
                capture.setdefault((id(edge[0]), edge[1]), []).append(position)
    dependencies, needed = _count_dependencies(root_edges, capture if inputs is not None else None,
                                               stop_at)

    buffers: dict = {}
    for (node, output_nr), grad in zip(root_edges, root_grads):
        _add_to_buffer(buffers, node, output_nr, grad)
    captured: list = [None] * len(inputs) if inputs is not None else []

    ready = [node for node in _unique(n for n, _ in root_edges) if dependencies.get(node, 0) == 0]
    captured_nodes = {key[0] for key in capture}
    tasks = _tasks.__dict__.setdefault("running", [])
    tasks.append(_Task(root_edges, dependencies, needed if inputs is not None else None,
                       captured_nodes, partial, returns=not accumulate, stop_at=stop_at))
    # Anomaly mode and the profiler wrap each node's run; read once so that the common case
    # pays nothing per node.
    instrumented = state.anomaly or state.profiler is not None
    previous_mode = state.grad_enabled
    # The saved-tensor hooks active now are the backward's, as torch's engine runs its nodes
    # under the thread-local state it captured: hooks a node enters (an unpack hook may) end
    # with the backward.
    previous_hooks = state.saved_tensor_hooks
    if previous_mode != create_graph:
        state.grad_enabled = create_graph
    # No graph is built and no mode changes how ops run: a node may run its VJP as a recorded
    # chain of NumPy calls (vjp_chain.py).
    plain = state.dispatch == PLAIN and not instrumented
    owned: dict = {}  # id -> the buffers' gradients _embed_into_buffer made (written in place)
    if tracer is not None:
        tracer.backward_depth += 1  # the nodes it records now are the adjoint's
    try:
        while ready:
            node = ready.pop()
            grads = buffers.pop(node, None)
            if grads is None:  # no gradient reached it: its hooks see None, as torch's
                grads = [None] * node.output_count
            if owned:  # handed on now (a rule may pass it on as it is): no longer written
                for grad in grads:
                    owned.pop(id(grad), None)
            if inputs is not None and node not in needed and id(node) not in captured_nodes:
                # Outside the part of the graph autograd.grad asked for: neither the node nor
                # its hooks run, but its consumers' counts still drop.
                _release_edges(node, dependencies, ready)
                continue
            hooked = Node.hooked  # a hook registered by a hook that ran counts at once
            is_leaf_node = node.__class__ is AccumulateGrad
            # As torch: the tensor's hooks before the node's pre-hooks, and a node that
            # autograd.grad only captures (not backward(inputs=)) runs its tensors' hooks alone.
            if is_leaf_node and node.variable._backward_hooks:
                grads = [run_leaf_hooks(node.variable, grads[0])]
            if hooked and (node._tensor_hooks or node._retained):
                grads = run_tensor_hooks(node, grads)
            if capture:  # what the tensors' hooks left, before the node's pre-hooks
                for output_nr, grad in enumerate(grads):
                    for position in capture.get((id(node), output_nr), ()):
                        captured[position] = grad
            if hooked and node._pre_hooks and (inputs is None or accumulate or node in needed):
                grads = _run_pre_hooks(node, grads)
            if stop_at and id(node) in stop_at:
                continue  # its children were not counted (_count_dependencies)
            if is_leaf_node:
                if inputs is None and grads and grads[0] is not None:
                    fresh = node.variable._grad is None
                    if instrumented:
                        _instrumented_accumulate(node, grads[0], create_graph)
                    else:
                        # Whether the gradient is held by this pass alone (`grads` and the
                        # call's argument: the earlier iterations' names let go of it first),
                        # so that a new .grad may take its array, as torch's AccumulateGrad
                        # steals a gradient no one else holds.
                        input_grads = grad = None
                        alone = fresh and _getrefcount(grads[0]) == _HELD_BY_PASS
                        _accumulate(node.variable, grads[0], create_graph, tracer, alone)
                    if hooked and node._hooks:  # the AccumulateGrad's own post hooks
                        # a new .grad is the gradient itself in torch (it steals the buffer)
                        _run_hooks(node, [], [node.variable._grad] if fresh else grads)
                continue
            if (inputs is not None and node not in needed) or (
                    grads[0] is None if len(grads) == 1 else all(g is None for g in grads)):
                input_grads = [None] * len(node.next_functions)
                if hooked and node._hooks and (inputs is None or node in needed):
                    input_grads = _run_hooks(node, input_grads, grads)  # with None, as torch
            else:
                if plain and node._chains is not None:
                    if node.op.embeds_gradient is not None and not hooked and \
                            _embed_into_buffer(node, grads[0], buffers, owned):
                        input_grads = _NONE  # written: its consumer's count still drops
                    else:
                        input_grads = apply_no_graph(node, grads)
                else:
                    input_grads = _apply_instrumented(node, grads) if instrumented else \
                        node.apply(grads)
                if hooked and node._hooks:
                    input_grads = _run_hooks(node, input_grads, grads)
                if not retain_graph:
                    node.release()
            for (next_node, output_nr), grad in zip(node.next_functions, input_grads):
                if next_node is None:
                    continue
                if grad is not None:
                    if next_node.__class__ is AccumulateGrad and \
                            grad._payload.__class__ is not next_node.variable._payload.__class__:
                        grad = _on_leaf_device(next_node.variable, grad)
                    if output_nr == 0 and next_node.output_count == 1 and \
                            next_node not in buffers:
                        buffers[next_node] = [grad]
                    else:
                        _add_to_buffer(buffers, next_node, output_nr, grad, plain)
                remaining = dependencies[next_node] - 1
                dependencies[next_node] = remaining
                if remaining == 0:
                    ready.append(next_node)
        callbacks = tasks[-1].callbacks
        while callbacks:  # queue_callback's, in order, those they queue included
            callbacks.pop(0)()
    finally:
        tasks.pop()
        if state.grad_enabled != previous_mode:
            state.grad_enabled = previous_mode
        if state.saved_tensor_hooks is not previous_hooks:
            state.saved_tensor_hooks = previous_hooks
        if tracer is not None:
            tracer.backward_depth -= 1

    if inputs is None:
        return None
    if accumulate:
        for tensor, grad in zip(inputs, captured):
            if grad is not None and tensor.__class__ is GradientEdge:
                # An edge gives a gradient to accumulate only when it is a leaf's.
                tensor = tensor.node.variable if isinstance(tensor.node, AccumulateGrad) else None
            if grad is not None and tensor is not None:
                fresh = tensor._grad is None
                _accumulate(tensor, grad, create_graph)
                accumulator = tensor._grad_accumulator() if tensor.grad_fn is None and \
                    tensor._grad_accumulator is not None else None
                if accumulator is not None and accumulator._hooks:  # as the loop's leaves
                    _run_hooks(accumulator, [], [tensor._grad] if fresh else [grad])
        return None
    return captured


def _edge_of(value) -> tuple:
    """(node, output_nr) of a tensor, or of an autograd.graph.GradientEdge given instead."""
    if value.__class__ is GradientEdge:
        return (value.node, value.output_nr)
    return gradient_edge(value)


_UNREAD = object()


def _unique(nodes):
    seen = set()
    for node in nodes:
        if node not in seen:
            seen.add(node)
            yield node


def _count_dependencies(root_edges, capture, stop_at=frozenset()):
    """In-degree of every node reachable from the roots (not through the `stop_at` nodes), and
    the nodes worth running.

    With a capture set (autograd.grad, backward(inputs=...)), a node is worth running only when
    some captured edge lies below it; the rest of the graph is left untouched.
    """
    dependencies: dict = {}
    stack = list(_unique(n for n, _ in root_edges))
    roots = set(stack)
    order: list = []  # discovery order; reversed, it lists children before parents
    track = capture is not None
    while stack:
        node = stack.pop()
        if track:
            order.append(node)
        if stop_at and id(node) in stop_at:
            continue
        for next_node, _ in node.next_functions:
            if next_node is None:
                continue
            count = dependencies.get(next_node)
            if count is None:  # seen for the first time (a root is walked from the start)
                dependencies[next_node] = 1
                if next_node not in roots:
                    stack.append(next_node)
            else:
                dependencies[next_node] = count + 1
    if not track:
        return dependencies, None
    # A node is needed when one of its edges is captured or leads to a needed node. Iterate to
    # a fixed point in reverse discovery order, which converges in one or two sweeps.
    needed: set = set()
    changed = True
    while changed:
        changed = False
        for node in reversed(order):
            if node in needed or (stop_at and id(node) in stop_at):
                continue
            for next_node, output_nr in node.next_functions:
                if next_node is None:
                    continue
                if (id(next_node), output_nr) in capture or next_node in needed:
                    needed.add(node)
                    changed = True
                    break
    return dependencies, needed


def _on_leaf_device(variable: Tensor, grad: Tensor) -> Tensor:
    """A 0-d CPU leaf used with CUDA tensors (or the reverse) gets its gradient on its own
    device, as in torch; gradients of any other shape already are."""
    data, grad_data = variable._payload, grad._payload
    if data is None or grad_data is None or data.__class__ is grad_data.__class__:
        return grad
    return grad.to(variable.device)


def _add_to_buffer(buffers: dict, node: Node, output_nr: int, grad: Tensor,
                   plain: bool = False) -> None:
    slots = buffers.get(node)
    if slots is None:
        slots = buffers[node] = [None] * max(_output_count(node), output_nr + 1)
    elif output_nr >= len(slots):
        slots.extend([None] * (output_nr + 1 - len(slots)))
    current = slots[output_nr]
    if current is None:
        slots[output_nr] = grad
    elif plain:
        slots[output_nr] = _sum_without_graph(current, grad)
    else:
        slots[output_nr] = _sum_grads(current, grad)


_NONE = (None,)


def _embed_into_buffer(node: Node, grad: Tensor, buffers: dict, owned: dict) -> bool:
    """Run the VJP of a view op with Op.embeds_gradient (slice: zeros of the input's shape
    with `grad` written at the slices) into its input's gradient buffer, where no graph is
    built: a new buffer is that VJP's value, made by the embedding op's impl, and one made
    here earlier (the other pieces of a chunk) takes the addition in place at the view, the
    only elements the sum of two such values adds anything but zeros to. The pieces of an
    LSTM's gates then cost one zero table and no full-size sums. False (the rule runs as
    usual) where that does not hold: another gradient in the buffer, a bfloat16 or complex32
    one (sums are rounded), a gradient of another dtype or shape than the conform step would
    leave, or one off the CPU. See docs/notes/eager-dispatch.md ("Eager loops of small
    ops")."""
    next_node, output_nr = node.next_functions[0]
    shape, dtype = node.input_meta[0]
    data = grad._payload
    if next_node is None or output_nr != 0 or next_node.output_count != 1 or \
            data.__class__ is not _ndarray or grad._dtype is not dtype or \
            dtype is _BFLOAT16 or dtype is _COMPLEX32 or (
                next_node.__class__ is AccumulateGrad and
                next_node.variable._payload.__class__ is not _ndarray):
        return False
    op, attrs = node.op, node.attrs
    slots = buffers.get(next_node)
    current = slots[0] if slots is not None else None
    if current is None:
        try:
            full = op.embeds_gradient.impl(data, shape, **attrs)
        except ValueError:  # a gradient of another shape: the rule raises what it should
            return False
        if op.impl(full, **attrs).shape != data.shape:
            return False
        made = plain_tensor(full, dtype)
        owned[id(made)] = made
        buffers[next_node] = [made]
        return True
    if owned.get(id(current)) is not current:
        return False
    region = op.impl(current._payload, **attrs)
    if region.shape != data.shape:
        return False
    _add(region, data, out=region)
    return True


def _sum_without_graph(current: Tensor, grad: Tensor) -> Tensor:
    """current + grad where no graph is built: two CPU arrays of one shape and dtype add with
    NumPy directly, as the add op would (bfloat16 sums are rounded: the op does that)."""
    data, other = current._payload, grad._payload
    dtype = current._dtype
    if data.__class__ is _ndarray and other.__class__ is _ndarray and \
            grad._dtype is dtype and dtype is not _BFLOAT16 and dtype is not _COMPLEX32 and \
            data.shape == other.shape:
        total = _add(data, other)
        if total.__class__ is not _ndarray:  # 0-d operands give a NumPy scalar
            total = _asarray(total)
        return plain_tensor(total, dtype)
    return _sum_grads(current, grad)


def _sum_grads(current: Tensor, grad: Tensor) -> Tensor:
    """current + grad, where either may be a sparse gradient: a sparse and a dense one sum to
    a dense one whichever came first (sparse + dense has no kernel; torch's InputBuffer adds
    them so too), two sparse ones to a sparse one."""
    if current.__class__ is _SparseTensor and grad.__class__ is not _SparseTensor:
        return grad + current
    return current + grad


_ndarray, _asarray, _add, _BFLOAT16 = np.ndarray, np.asarray, np.add, dtypes.bfloat16
_getrefcount = sys.getrefcount
# The references sys.getrefcount counts to a gradient the backward pass alone holds: its
# `grads` list and the count's own argument; to the array of a tensor that alone holds it: the
# tensor, a local name and the argument.
_HELD_BY_PASS, _ARRAY_HELD_BY_TENSOR = 2, 3
_COMPLEX32 = dtypes.complex32
_SparseTensor = SparseTensor


def _output_count(node: Node) -> int:
    return node.output_count


def _accumulate(variable: Tensor, grad: Tensor, create_graph: bool, tracer=_UNREAD,
                alone: bool = False) -> None:
    """Add into .grad: in place when no graph is built, out of place (differentiable) else.

    The tensor's hooks have already run (the engine runs them before capture, too). `tracer`:
    state.tracer, when the caller has read it. `alone`: the engine holds the only references
    to `grad`; a new .grad then takes its array where nothing else holds that either (a fresh
    array, not a view, not another tensor's), instead of a copy.
    """
    if tracer is _UNREAD:
        tracer = state.tracer
    if tracer is not None:
        tracer.note_grad_access(variable)  # read: its .grad now decides the result
    current = variable._grad
    if grad.__class__ is _SparseTensor or current.__class__ is _SparseTensor:
        _accumulate_sparse(variable, current, grad, create_graph)
    elif create_graph:
        # A copy, as torch's AccumulateGrad makes (differentiable): the gradient may be a view
        # (of the ones a sum's backward expands), and a .grad that is a view could not be
        # detached in place by zero_grad.
        variable._grad = _first_grad_with_history(variable, grad) if current is None \
            else current + grad
    elif current is None:
        data = grad._payload
        # Laid out as torch's AccumulateGrad lays out a new .grad: a later `w.grad.view(-1)`
        # aliases it or raises as torch's does.
        if data is None:
            variable._grad = grad.detach()
        else:
            # The array is held by `grad` and the name `data` alone (and the count's argument)
            owned = alone and data.__class__ is _ndarray and data.base is None and \
                _getrefcount(data) == _ARRAY_HELD_BY_TENSOR and data.flags.writeable
            variable._grad = Tensor._make(new_grad_array(data, variable._payload, owned),
                                          grad._dtype)
    elif current._payload is not None and grad._payload is not None and not current.requires_grad \
            and current._payload.__class__ is not MetaArray:  # meta arrays hold nothing to add to
        current._payload += grad._payload
        if current._dtype is dtypes.bfloat16:  # float32 storage of bfloat16 numbers
            current._payload[...] = dtypes.round_to_bfloat16(current._payload)
        elif current._dtype is _COMPLEX32:  # complex64 storage of float16 parts
            current._payload[...] = dtypes.round_to_complex32(current._payload)
        current._bump_version()
    elif tracer is not None and current._payload is not None and not current.requires_grad:
        # Traced: added into the tensor .grad holds, in place, as eager adds: a .grad the
        # caller set keeps the sum even where the call sets .grad to None afterwards.
        with no_grad():
            current.add_(grad)
    else:
        variable._grad = (current + grad).detach()
    post_hooks = variable._post_accumulate_hooks
    if post_hooks:
        for hook in list(post_hooks.values()):
            returned = hook(variable)
            if returned is not None:  # torch's errors: such a hook acts on the tensor itself
                if not isinstance(returned, Tensor):
                    raise TypeError(f"expected Variable, but hook returned "
                                    f"'{type(returned).__name__}'")
                raise RuntimeError("Tensor post accumulate grad hooks should return None.")


class CopyBackwards(Node):
    """torch's node of `empty.copy_(source)`: the history of a leaf's first .grad under
    create_graph, which torch's AccumulateGrad makes as a copy laid out as the leaf
    (clone_obey_contract); the gradient goes on to the source, none to the empty tensor."""

    __slots__ = ()

    def name(self) -> str:
        return "torch::autograd::CopyBackwards"  # torch's name of its C++ node

    def apply(self, grads: list) -> list:
        return [None, grads[0]]


def _first_grad_with_history(variable: Tensor, grad: Tensor) -> Tensor:
    """A copy of `grad` for a new .grad under create_graph, as torch's AccumulateGrad makes
    it: for a dense leaf, a tensor laid out as the leaf into which the gradient is copied
    (a CopyBackwards node); otherwise (or while tracing) a clone."""
    data, param = grad._payload, variable._payload
    if data is None or param is None or data.__class__ is not np.ndarray or \
            not is_dense(param):
        return grad.clone()
    copy = Tensor._make(new_grad_array(data, param), grad._dtype)
    if grad._requires_grad:
        node = CopyBackwards()
        node.next_functions = ((None, 0), gradient_edge(grad))
        node.input_meta = (None, (tuple(grad.shape), grad._dtype))
        node.needs_input_grad = (False, True)
        copy.grad_fn = node
        copy._requires_grad = True
    return copy


def _accumulate_sparse(variable: Tensor, current, grad: Tensor, create_graph: bool) -> None:
    """_accumulate where the gradient or .grad is sparse, as torch's AccumulateGrad: a new
    sparse gradient becomes .grad (the gradient itself the first time it is handed on with
    contiguous parts, else a copy); a sparse gradient adds into a dense .grad in place; a
    dense gradient and a sparse .grad make a new dense .grad; two sparse ones add in place
    (uncoalesced, their elements side by side). With create_graph, all out of place."""
    if current is None:
        if create_graph:
            variable._grad = grad.clone()
        elif grad.__class__ is not _SparseTensor:
            variable._grad = grad.detach().clone()
        else:
            variable._grad = _taken_or_copied(grad)
        return
    if create_graph or current.requires_grad:
        variable._grad = _sum_grads(current, grad)
        return
    grad = grad.detach()
    if current.__class__ is not _SparseTensor:  # a dense .grad: adds in place
        if current._payload.__class__ is not _ndarray:
            variable._grad = current + grad
            return
        current._payload += to_dense(grad)._payload
        current._bump_version()
    elif grad.__class__ is not _SparseTensor:  # a sparse .grad, a dense gradient: new, dense
        variable._grad = grad + current
    else:
        total = current + grad
        current._sparse_indices, current._sparse_values = total._sparse_indices, \
            total._sparse_values
        current._coalesced = False
        current._bump_version()


def _taken_or_copied(grad: SparseTensor) -> SparseTensor:
    """A new sparse .grad: the gradient's own indices and values where this is the first
    leaf it reaches and they are contiguous (torch steals the buffer when nothing else holds
    it), else a copy: a gradient two leaves receive is not shared between their .grads."""
    indices, values = grad._sparse_indices, grad._sparse_values
    if grad.__dict__.get("_taken") or not (indices.is_contiguous() and
                                           values.is_contiguous()):
        return SparseTensor._build(indices.clone(), values.detach().clone(), grad.shape,
                                   grad._coalesced)
    grad._taken = True
    return grad.detach()


def _run_pre_hooks(node: Node, grads: list) -> list:
    """Node.register_prehook hooks: each sees the node's output gradients and may replace them."""
    for hook in list(node._pre_hooks.values()):
        replaced = hook(tuple(grads))
        if replaced is not None:
            grads = list(replaced)
    return grads


def _run_hooks(node: Node, input_grads: list, grads: list) -> list:
    """Node.register_hook hooks: (grad_inputs, grad_outputs) -> new grad_inputs or None."""
    for hook in list(node._hooks.values()):
        replaced = hook(tuple(input_grads), tuple(grads))
        if replaced is not None:
            input_grads = list(replaced)
    return input_grads


def _release_edges(node: Node, dependencies: dict, ready: list) -> None:
    for next_node, _ in node.next_functions:
        if next_node is None:
            continue
        remaining = dependencies[next_node] - 1
        dependencies[next_node] = remaining
        if remaining == 0:
            ready.append(next_node)


# ---- anomaly mode and profiling ---------------------------------------------------------------

def _apply_instrumented(node: Node, grads: list) -> list:
    profiler = state.profiler
    if profiler is not None:
        return profiler.backward_event(node, lambda: _apply_checked(node, grads))
    return _apply_checked(node, grads)


def _apply_checked(node: Node, grads: list) -> list:
    if state.anomaly:
        from .anomaly import apply_with_anomaly_checks

        return apply_with_anomaly_checks(node, grads)
    return node.apply(grads)


def _instrumented_accumulate(node: AccumulateGrad, grad: Tensor, create_graph: bool) -> None:
    profiler = state.profiler
    if profiler is None:
        _accumulate(node.variable, grad, create_graph)
        return
    profiler.backward_event(node, lambda: _accumulate(node.variable, grad, create_graph))
