"""Values kept for backward: SavedTensor (with the version it was saved at), PackedSavedTensor
(what a saved-tensor hook's pack returned), and torch's errors for a value freed or modified
since.

An OpNode (graph.py) keeps a SavedTensor per value its VJP reads; reading one after an in-place
write raises `modified_message`, after the graph was freed FREED_MESSAGE. Under
autograd.graph.saved_tensors_hooks (graph_api.py) `pack_saved` runs the pack hook on each.
See docs/notes/saved-tensors.md.
"""

from __future__ import annotations

import weakref

from ..ops.batching import BatchValue, batched
from ..tensor import dtypes
from ..tensor.state import state
from ..tensor.tensor import Tensor
from .nodes import Node, gradient_edge

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


DETACHED_MESSAGE = (
    "Trying to use a saved tensor that has been detached in-place, i.e. with .detach_().This is "
    "not supported, please use out-of-place `.detach()` instead")


class SavedTensor:
    """A value kept for backward, with the version it had when saved.

    An op's own output is kept as its storage only (not the Tensor object) so that the output
    does not keep itself alive through its grad_fn; unpacking rebuilds a Tensor whose grad_fn is
    the saving node, which double backward needs.
    """

    __slots__ = ("tensor", "data", "value", "dtype", "version", "counter", "output_nr",
                 "tangents", "saved_fn")

    def __init__(self, tensor: Tensor, is_output: bool, output_nr: int = 0):
        if tensor._is_inference and not is_output:
            raise RuntimeError(INFERENCE_SAVED_MESSAGE)
        self.counter = tensor._version_counter
        self.version = self.counter.value
        if is_output:
            self.tensor = None
            self.data, self.value, self.dtype = tensor._payload, tensor._value, tensor._dtype
            self.output_nr = output_nr
            # Forward AD sets the output's tangents after it is recorded (forward_ad.py puts
            # them here too): the rebuilt output carries them, as forward-over-reverse needs.
            self.tangents = None
        else:
            self.tensor = tensor
            self.saved_fn = tensor.grad_fn  # its history then: detach_ may take it away

    def unpack(self, node: Node) -> Tensor:
        if self.counter.value != self.version:
            raise RuntimeError(modified_message(self, node))
        tensor = self.tensor
        if tensor is not None:
            if tensor.grad_fn is None and self.saved_fn is not None and \
                    not tensor._requires_grad:
                raise RuntimeError(DETACHED_MESSAGE)
            return tensor
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


def holds_own_entries(node) -> bool:
    """Whether an autograd node keeps saved tensors of its own (not ones saved-tensor hooks
    packed): what a non-reentrant checkpoint's early stop counts (utils/checkpoint_stop.py)."""
    for entry in (getattr(node, "_saved_out", None), *(getattr(node, "_saved", None) or ())):
        if isinstance(entry, SavedTensor) and not isinstance(entry, PackedSavedTensor):
            return True
    return False


class SavingCount:
    """A watch of `state.saved_watch` that counts the saving nodes made while it is installed
    (compiler/tracing.py: how many eager's run of a compiled function makes)."""

    def __init__(self):
        self.count = 0

    def __call__(self, node) -> None:
        if holds_own_entries(node):
            self.count += 1

    def stops_within(self, count) -> bool:  # as checkpoint_stop.SavingNodes: it never stops
        return False

    def made(self, count) -> None:
        """A compiled call made `count` saving nodes as one (None: unknown, counted as 0)."""
        self.count += count or 0


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
