"""torch._C._functions and torch._C._autograd's Python-visible names: the node classes torch
registers there (AccumulateGrad, DelayedError, UndefinedGrad) and SavedTensor.

DelayedError(message, n) and UndefinedGrad() are nodes that are called on tensors, as torch's
are: each returns its inputs as new tensors whose grad_fn is one node; a backward reaching a
DelayedError's (an Error node) raises `message`, and an UndefinedGrad's passes on no gradient
(torch's undefined one).
"""

from __future__ import annotations

import contextlib
import threading
import types
import weakref

from .nodes import AccumulateGrad, Node
from .once_differentiable import Error, attach_outputs
from .saved_access import SavedTensorHandle


class _CallableNode(Node):
    """A node torch lets Python make and call on tensors (DelayedError, UndefinedGrad): called,
    it returns its inputs as the outputs of a new node of `output_node`'s making."""

    __slots__ = ()

    def __init__(self):
        super().__init__()
        self.next_functions = ()
        self.input_meta = ()
        self.needs_input_grad = ()

    def _output_node(self, count: int) -> Node:
        raise NotImplementedError

    def apply(self, inputs: list) -> list:
        return attach_outputs(self._output_node(len(inputs)), inputs)

    def __call__(self, *tensors):
        outputs = self.apply(list(tensors))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)


class DelayedError(_CallableNode):
    """torch._C._functions.DelayedError(message, num_inputs): its outputs' grad_fn is one Error
    node, which raises `message` when a backward reaches it."""

    __slots__ = ("message",)

    def __init__(self, message, num_inputs: int):
        super().__init__()
        self.message = message.decode() if isinstance(message, bytes) else str(message)
        self.output_count = num_inputs

    def name(self) -> str:
        return "torch::autograd::DelayedError"

    def _output_node(self, count: int) -> Node:
        return Error(self.message, count)


class UndefinedGradBackward(Node):
    """The grad_fn of UndefinedGrad's outputs: it passes no gradient on (torch's undefined
    one), so the nodes below, and their hooks, see None."""

    __slots__ = ()

    def apply(self, grads: list) -> list:
        return [None] * len(self.next_functions)


class UndefinedGrad(_CallableNode):
    """torch._C._functions.UndefinedGrad(): its outputs pass no gradient back."""

    __slots__ = ()

    def name(self) -> str:
        return "torch::autograd::UndefinedGrad"

    def _output_node(self, count: int) -> Node:
        return UndefinedGradBackward()


functions = types.SimpleNamespace(AccumulateGrad=AccumulateGrad, DelayedError=DelayedError,
                                  Error=Error, UndefinedGrad=UndefinedGrad,
                                  UndefinedGradBackward=UndefinedGradBackward)


def _unsafe_set_version_counter(tensors, versions) -> None:
    """Set each tensor's version counter to the given value (torch's escape hatch for code that
    writes in place where autograd must not notice)."""
    for tensor, version in zip(tensors, versions):
        if version < 0:
            raise RuntimeError(f"Cannot set a version_counter to a value below 0: {version}")
        tensor._version_counter.value = int(version)


@contextlib.contextmanager
def unsafe_preserve_version_counter(tensors):
    """torch.autograd._unsafe_preserve_version_counter: in-place writes inside the block leave
    the tensors' versions as they were before it."""
    tensors = (tensors,) if not isinstance(tensors, (tuple, list)) else tuple(tensors)
    versions = [tensor._version for tensor in tensors]
    try:
        yield
    finally:
        _unsafe_set_version_counter(tensors, versions)


class _ViewReplay(threading.local):
    enabled = False


_view_replay = _ViewReplay()


def is_view_replay_enabled() -> bool:
    """torch's setting for how a written view's history is rebuilt (replaying the view ops or
    as_strided). autojit always replays the view ops; the flag is kept as set."""
    return _view_replay.enabled


class force_original_view_tracking:  # noqa: N801 - torch's name
    """torch.autograd._force_original_view_tracking(mode): sets the flag now; as a context
    manager, restores the previous value on exit."""

    def __init__(self, mode: bool):
        self.previous = _view_replay.enabled
        _view_replay.enabled = bool(mode)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        _view_replay.enabled = self.previous
        return False


class WeakTensorRef:
    """torch._C._WeakTensorRef: a weak reference to a tensor, with expired()."""

    def __init__(self, tensor):
        self._ref = weakref.ref(tensor)

    def expired(self) -> bool:
        return self._ref() is None


def _saved_tensors_hooks_is_enabled() -> bool:
    """Whether saved-tensor hooks may be used now (no disable_saved_tensors_hooks block)."""
    from .graph_api import _disabled

    return _disabled.message is None


autograd = types.SimpleNamespace(SavedTensor=SavedTensorHandle,
                                 _saved_tensors_hooks_is_enabled=_saved_tensors_hooks_is_enabled,
                                 _unsafe_set_version_counter=_unsafe_set_version_counter)
