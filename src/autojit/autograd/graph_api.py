"""torch.autograd.graph's hooks over the whole graph: saved-tensor hooks (saved_tensors_hooks,
save_on_cpu, disable_saved_tensors_hooks, allow_mutation_on_saved_tensors) and
register_multi_grad_hook; autojit.autograd.graph (graph.py) re-exports them.

Where they sit in the flow: a `saved_tensors_hooks` block pushes its (pack, unpack) pair on the
thread's `state.saved_tensor_hooks`; when graph.record (or a custom Function) saves a tensor
for backward while a pair is active, the innermost pair's pack hook runs on it and a
PackedSavedTensor (graph.py) keeps what it returned; backward's read runs the unpack hook.
While autojit.compile traces, a save under hooks is a graph break: the call runs eagerly, with
the hooks. docs/notes/saved-tensors.md explains both.
"""

from __future__ import annotations

import contextlib
import functools
import threading
import weakref
from collections import defaultdict

from ..ops import inplace
from ..tensor.state import state
from ..tensor.tensor import Tensor
from .graph_tasks import current_graph_task_id, will_engine_execute_node
from .handles import RemovableHandle
from .nodes import gradient_edge

__all__ = ["saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks",
           "allow_mutation_on_saved_tensors", "register_multi_grad_hook",
           "set_warn_on_accumulate_grad_stream_mismatch"]


class _Disabled(threading.local):
    message = None  # disable_saved_tensors_hooks's error message while it is active


_disabled = _Disabled()


class saved_tensors_hooks:  # noqa: N801 - torch's name
    """Context manager that sets a pair of pack / unpack hooks for saved tensors.

    While it is active, ``pack_hook(tensor)`` runs every time an operation saves a tensor for
    backward (an op's input or output, or a custom Function's ``save_for_backward``), under
    no_grad, and what it returns is kept instead of the tensor. ``unpack_hook(packed)`` runs
    when backward (or ``ctx.saved_tensors``) reads the saved value, and must return a tensor
    with the content of the one packed. Blocks nest: only the innermost pair applies.

        >>> import autojit
        >>> a = autojit.ones(3, requires_grad=True)
        >>> with autojit.autograd.graph.saved_tensors_hooks(
        ...         lambda x: x.to(autojit.float16), lambda x: x.to(autojit.float32)):
        ...     y = (a * a).sum()          # a is saved twice, as float16
        >>> y.backward()
        >>> a.grad
        tensor([2., 2., 2.])
    """

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self) -> None:
        if _disabled.message is not None:
            raise RuntimeError(_disabled.message)
        state.saved_tensor_hooks = (*state.saved_tensor_hooks,
                                    (self.pack_hook, self.unpack_hook))

    def __exit__(self, *exc_info) -> None:
        state.saved_tensor_hooks = state.saved_tensor_hooks[:-1]


class save_on_cpu(saved_tensors_hooks):  # noqa: N801 - torch's name
    """Saved tensors are kept in host memory and copied back to their device when backward
    reads them: a tensor already on the CPU is kept as it is (no copy), as in torch.

    ``pin_memory`` is accepted and changes nothing: autojit's host memory is not page-locked,
    and its copies are synchronous. ``device_type`` names the accelerator, as torch's does.
    """

    def __init__(self, pin_memory: bool = False, device_type: str = "cuda") -> None:
        def pack_to_cpu(tensor: Tensor) -> tuple:
            return (tensor.device, tensor.cpu())

        def unpack_from_cpu(packed: tuple) -> Tensor:
            device, tensor = packed
            return tensor.to(device)

        self.pin_memory, self.device_type = pin_memory, device_type
        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message: str):
    """Context manager under which saved-tensor hooks may not be used: entering one (or this,
    inside one) raises ``RuntimeError(error_message)``. For features that cannot work with
    them."""
    if state.saved_tensor_hooks:
        raise RuntimeError(error_message)
    previous = _disabled.message
    _disabled.message = error_message
    try:
        yield
    finally:
        _disabled.message = previous


def set_warn_on_accumulate_grad_stream_mismatch(enabled: bool) -> None:
    """Accepted for torch's API: the warning is about a gradient produced on another CUDA
    stream than its leaf's, and autojit runs every kernel on the default stream, so there is
    never a mismatch to warn about."""


# ---- register_multi_grad_hook ------------------------------------------------------------------

class _MultiHandle(RemovableHandle):
    """The handle of a multi-grad hook: removing it removes the hook from every tensor."""

    __slots__ = ("handles",)

    def __init__(self, handles: tuple):
        self.handles = handles

    def remove(self) -> None:
        for handle in self.handles:
            handle.remove()


def _node_of(tensor: Tensor):
    return gradient_edge(tensor)[0]


def register_multi_grad_hook(tensors, fn, *, mode: str = "all") -> RemovableHandle:
    """Call ``fn`` once the gradients of several tensors are computed in a backward pass.

    With ``mode="all"``, ``fn(grads)`` runs after the gradient of every tensor of ``tensors``
    that this backward computes (a tensor outside the graph, or not needed for the ``inputs``
    of this ``backward``/``grad`` call, is not waited for, and its entry is None). With
    ``mode="any"``, ``fn(grad)`` runs on the first of those gradients, once per backward pass.
    Returns a handle whose ``remove()`` removes the hook.

        >>> import autojit
        >>> a = autojit.ones(2, requires_grad=True)
        >>> b = autojit.ones(2, requires_grad=True)
        >>> handle = autojit.autograd.graph.register_multi_grad_hook(
        ...     (a, b), lambda grads: print([g is not None for g in grads]))
        >>> (a * 2).sum().backward()
        [True, False]
    """
    if mode not in ("all", "any"):
        raise ValueError(f"Expects mode to be one of ('all', 'any') but got {mode}")
    lock = threading.Lock()
    if mode == "any":
        ran: dict = defaultdict(bool)

        @functools.wraps(fn)
        def first_only(grad):
            task = current_graph_task_id()
            with lock:
                previous, ran[task] = ran[task], True
            if not previous:
                fn(grad)

        return _MultiHandle(tuple(tensor.register_hook(first_only) for tensor in tensors
                                  if tensor.requires_grad))

    count: dict = {}
    buffers: dict = {}
    expected: dict = {}
    nodes = [_node_of(tensor) for tensor in tensors]

    def hook_for(index: int):
        def inner(grad):
            task = current_graph_task_id()
            with lock:
                seen = count.get(task, 0)
                count[task] = seen + 1
                if seen == 0:  # the first call of this backward: how many will come
                    expected[task] = sum(node is not None and will_engine_execute_node(node)
                                         for node in nodes)
                    buffers[task] = [None] * len(nodes)
            buffers[task][index] = grad
            if seen == expected[task] - 1:
                grads = buffers.pop(task)
                del count[task], expected[task]
                fn(grads)

        return inner

    return _MultiHandle(tuple(tensor.register_hook(hook_for(index))
                              for index, tensor in enumerate(tensors)))


# ---- allow_mutation_on_saved_tensors -----------------------------------------------------------

_mutation_allowed = False  # one context at a time, process-wide, as torch's


class _Handle:
    """What the pack hook of allow_mutation_on_saved_tensors keeps for one saved tensor."""


class _AllowMutationOnSavedContext:
    """The state of one allow_mutation_on_saved_tensors block, in torch's fields: the saved
    tensors by (tensor, version counter, version) and by (version counter, version), and the
    clones made of them before a write."""

    def __init__(self) -> None:
        self.cloned = weakref.WeakKeyDictionary()  # handle -> the clone made before a write
        self.original = weakref.WeakKeyDictionary()  # handle -> the saved tensor's data
        # (id(tensor), id(counter), version) -> handle, alive while a graph keeps it
        self.tid_to_weakhandle = weakref.WeakValueDictionary()
        self.sid_to_tid: dict = defaultdict(set)  # (id(counter), version) -> those keys

    def clear(self) -> None:
        self.cloned.clear()
        self.original.clear()
        self.tid_to_weakhandle.clear()
        self.sid_to_tid.clear()

    def pack(self, tensor: Tensor) -> _Handle:
        counter = id(tensor._version_counter)
        key = (id(tensor), counter, tensor._version)
        self.sid_to_tid[(counter, tensor._version)].add(key)
        handle = self.tid_to_weakhandle.get(key)
        if handle is None:  # the same tensor at the same version may be saved several times
            handle = self.tid_to_weakhandle[key] = _Handle()
            # Its data without its history: an op's own output, saved, would otherwise keep
            # its node, and so the handle, alive through this dict (unpack gives the saving
            # node's identity back, saved_tensors.py).
            self.original[handle] = tensor.detach()
        return handle

    def unpack(self, handle: _Handle) -> Tensor:
        if not _mutation_allowed or (handle not in self.cloned and handle not in self.original):
            # torch's message, its missing space included.
            raise AssertionError("Trying to backward outside of the "
                                 "'allow_mutation_on_saved_tensors' contextin which the graph "
                                 "was originally recorded.")
        if handle in self.cloned:
            return self.cloned[handle]
        return self.original[handle]

    def before_write(self, target: Tensor) -> None:
        """Clone every tensor saved at the target's storage and version before it changes
        (views and detached aliases share the version counter, as they share the storage)."""
        if state.tracer is not None:
            from ..tensor.graph_break import graph_break

            graph_break("an in-place write under "
                        "autograd.graph.allow_mutation_on_saved_tensors", needs_data=False)
        keys = self.sid_to_tid.get((id(target._version_counter), target._version))
        for key in keys or ():
            handle = self.tid_to_weakhandle.get(key)
            if handle is None or handle in self.cloned:  # freed by a backward, or done
                continue
            previous = state.grad_enabled
            state.grad_enabled = False
            try:
                self.cloned[handle] = self.original.pop(handle).clone()
            finally:
                state.grad_enabled = previous


@contextlib.contextmanager
def allow_mutation_on_saved_tensors():
    """Context manager under which tensors saved for backward may be modified in place: a
    saved tensor is cloned just before its first in-place write, and backward reads the clone.
    Run the forward and the backward inside the same block. Yields the block's state (cleared
    on exit).

        >>> import autojit
        >>> with autojit.autograd.graph.allow_mutation_on_saved_tensors():
        ...     a = autojit.ones(2, requires_grad=True)
        ...     b = a.clone()
        ...     out = (b ** 2).sum()
        ...     _ = b.mul_(3)
        ...     out.backward()
        >>> a.grad
        tensor([2., 2.])
    """
    global _mutation_allowed

    context = _AllowMutationOnSavedContext()
    with saved_tensors_hooks(context.pack, context.unpack):
        if _mutation_allowed:
            raise RuntimeError("allow_mutation_on_saved_tensors contexts cannot be nested")
        _mutation_allowed = True
        inplace.BEFORE_WRITE = context.before_write
        try:
            yield context
        finally:
            inplace.BEFORE_WRITE = None
            context.clear()
            _mutation_allowed = False
