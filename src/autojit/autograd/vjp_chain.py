"""An OpNode's backward as a chain of NumPy calls, for backward passes that build no graph.

With create_graph=False, a node's VJP rule (written in autojit ops) and the engine's conform
step only compute arrays: nothing is recorded, so the dispatch around each op (dtype rule,
Tensor objects, checks) is pure overhead. The second time a node of a given signature runs
(its op, attrs, needs_input_grad, the shapes and dtypes of its gradient, saved values and
inputs, its saved Python numbers; the first time is only noted, so that shapes seen once cost
no recording), `record` runs it as usual while ops/registry.py reports every op the rule runs
(`registry.STEP`), and keeps the sequence of impl calls as a `Chain`; later nodes of the same
signature run the chain on their arrays directly (`run`).

A chain is kept only when it is a faithful copy: every operand is the gradient, a saved value,
a Python constant or an earlier step's result; no operand was cast or converted by the
dispatch (those steps are not copied, the signature would have to say more); no step's
result is bfloat16 (rounded after the impl) or off the CPU; no step recorded autograd history;
no Python code read a tensor's values (`Tensor._concrete`). Otherwise the signature is marked
and its nodes run the rule as usual. Only ops whose VJP runs the same primitives for any values
of the same shapes, dtypes and attrs (`Op.static_vjp`) are recorded at all.
See docs/notes/eager-dispatch.md.
"""

from __future__ import annotations

import math
import threading
from operator import itemgetter

import numpy as np

from ..ops import registry
from ..tensor import dtypes
from ..tensor import tensor as tensor_module
from ..tensor.tensor import Tensor, plain_tensor
from .graph import OpNode
from .saved_tensors import FREED_MESSAGE, SavedTensor, modified_message

_ndarray = np.ndarray
_DEFAULT_FLOAT = dtypes._default_float  # [the default dtype]: results of int ops promoted
_asarray = np.asarray
_BFLOAT16 = dtypes.bfloat16
_COMPLEX32 = dtypes.complex32
# The entries of a node class's table besides chains: a signature seen once (recorded when it
# comes again, so that shapes seen once cost no recording), and one whose chain would not be
# faithful (its nodes run the rule as usual).
_SEEN, _UNFAITHFUL = object(), object()
# A node class keeps at most this many signatures; past it, its table starts afresh (shapes
# that change every step would otherwise grow it without bound).
_LIMIT = 256


class Chain:
    """The recorded backward of one node signature.

    constants: the Python values the rule passed to ops, in slots after the sources.
    steps: (op, attrs or None, fetch, arity, numpy dtype) per op: the op's impl (read from
        the op each time, as run_eager does) runs on the operands `fetch` picks from the slots,
        the result is cast to the dtype when the impl returned another (as run_eager does), and
        appended to the slots.
    results: per input, None (no gradient), 0 (the incoming gradient itself, as the rule
        returned it) or (slot, dtype) of the step result wrapped as the gradient.
    """

    __slots__ = ("constants", "steps", "results")

    def __init__(self, constants, steps, results):
        self.constants, self.steps, self.results = constants, steps, results

    def run(self, values: list, grad: Tensor) -> list:
        values += self.constants
        append = values.append
        for op, attrs, fetch, arity, wanted in self.steps:
            impl = op.impl
            if attrs is None:
                if arity == 1:
                    result = impl(fetch(values))
                else:
                    result = impl(*fetch(values)) if arity else impl()
            elif arity == 1:
                result = impl(fetch(values), **attrs)
            else:
                result = impl(*fetch(values), **attrs) if arity else impl(**attrs)
            if result.__class__ is not _ndarray:
                result = _asarray(result)
            if result.dtype is not wanted and result.dtype != wanted:
                result = result.astype(wanted)
            append(result)
        gradients = []
        for entry in self.results:
            if entry is None:
                gradients.append(None)
            elif entry == 0:
                gradients.append(grad)
            else:
                gradients.append(plain_tensor(values[entry[0]], entry[1]))
        return gradients


def apply_no_graph(node: OpNode, grads: list) -> list:
    """node.apply(grads) for a backward pass that records no graph: the node's chain when its
    signature has one, else the rule as usual (recording a chain the first time)."""
    if node._released:
        raise RuntimeError(FREED_MESSAGE)
    grad = grads[0]
    if grad is None:
        return node.apply(grads)
    data = grad._payload
    if data.__class__ is not _ndarray:
        return node.apply(grads)
    # The signature and the source arrays: the gradient, then each saved tensor's data.
    values = [data]
    tensors = [grad]  # the sources the rule sees as tensors: the gradient, the saved inputs
    attrs = node.attrs
    # needs_input_grad is in it too: an input's meta is None exactly where it is false.
    signature = [_DEFAULT_FLOAT[0], grad._dtype, data.shape,
                 tuple(attrs.items()) if attrs else None]
    for saved in node._saved:
        if saved is None:
            signature.append(None)
        elif saved.__class__ is SavedTensor:
            if saved.counter.value != saved.version:
                raise RuntimeError(modified_message(saved, node))
            tensor = saved.tensor
            if tensor.grad_fn is None and saved.saved_fn is not None and \
                    not tensor._requires_grad:  # detach_()ed since: unpack raises torch's error
                return node.apply(grads)
            data = tensor._payload
            if data.__class__ is not _ndarray:
                return node.apply(grads)
            values.append(data)
            tensors.append(tensor)
            signature.append(tensor._dtype)
            signature.append(data.shape)
        elif isinstance(saved, SavedTensor):  # a checkpoint's stand-in: it unpacks itself
            return node.apply(grads)
        else:  # a Python number, a constant of the chain: its type, value and sign of zero
            signature.append(saved.__class__)
            signature.append(saved)
            if saved == 0 and saved.__class__ is float:
                signature.append(math.copysign(1.0, saved))
    saved = node._saved_out
    if saved is not None:
        if saved.__class__ is not SavedTensor:
            return node.apply(grads)
        if saved.counter.value != saved.version:
            raise RuntimeError(modified_message(saved, node))
        data = saved.data
        if data.__class__ is not _ndarray:
            return node.apply(grads)
        values.append(data)
        signature.append(data.shape)
        signature.append(saved.dtype)
    signature += node.input_meta
    count = len(tensors)
    if count > 1 and (tensors[0] is tensors[1] if count == 2 else len(set(tensors)) < count):
        # One tensor in two places (x * x): the chain recorded for it reads one slot for both,
        # so it is kept apart from the chain of distinct tensors.
        ids = [id(tensor) for tensor in tensors]
        signature.append(tuple(ids.index(each) for each in ids))
    chains = node._chains
    key = tuple(signature)
    try:
        chain = chains.get(key)
    except TypeError:  # an attr that is not hashable (a list): no signature
        return node.apply(grads)
    if chain.__class__ is Chain:
        try:
            return chain.run(values, grad)
        except Exception:  # noqa: BLE001 - the rule as usual raises the error it should
            return node.apply(grads)
    if chain is None:  # a signature seen for the first time: recorded if it comes again
        if len(chains) >= _LIMIT:
            chains.clear()
        chains[key] = _SEEN
        return node.apply(grads)
    if chain is _SEEN and _recording.acquire(blocking=False):  # (one thread records at a time)
        try:
            chain, gradients = record(node, grads)
        finally:
            _recording.release()
        chains[key] = chain if chain is not None else _UNFAITHFUL
        return gradients
    return node.apply(grads)


class _Pinned:
    """A stand-in for a node's saved output while its chain is recorded: every `ctx.out`
    returns the same tensor, so the recorder knows it."""

    __slots__ = ("tensor",)

    def __init__(self, tensor: Tensor):
        self.tensor = tensor

    def unpack(self, node) -> Tensor:
        return self.tensor


class _Recorder:
    """Collects the steps the rule runs (through registry.STEP) in this thread."""

    def __init__(self, sources: list):
        self.thread = threading.get_ident()
        self.slots = {id(tensor): ("source", index) for index, tensor in enumerate(sources)}
        self.keep = list(sources)  # alive while recording, so that ids stay unique
        self.count = len(sources)
        self.constants: list = []
        self.steps: list = []  # (op, attrs, operand references, arity, dtype)
        self.faithful = True

    def step(self, op, inputs: tuple, attrs: dict, arrays, out: Tensor) -> None:
        if threading.get_ident() != self.thread or not self.faithful:
            return
        references = []
        for x, array in zip(inputs, arrays):
            if isinstance(x, Tensor):
                slot = self.slots.get(id(x))
                if slot is None or array is not x._payload:  # unknown origin, or cast
                    self.faithful = False
                    return
                references.append(slot)
            else:
                if array is not x:  # converted (bfloat16 rounding, integer wrapping)
                    self.faithful = False
                    return
                references.append(("constant", len(self.constants)))
                self.constants.append(x)
        if out._dtype is _BFLOAT16 or out._dtype is _COMPLEX32 or \
                out._payload.__class__ is not _ndarray:  # (rounded after the impl)
            self.faithful = False
            return
        self.steps.append((op, attrs or None, references, len(references), out._dtype.numpy))
        self.slots[id(out)] = ("step", len(self.steps) - 1)
        self.keep.append(out)

    def value_read(self) -> None:
        if threading.get_ident() == self.thread:
            self.faithful = False

    def chain(self, results: list) -> Chain | None:
        """The chain giving `results`, or None when it would not be faithful."""
        if not self.faithful:
            return None
        for tensor in self.keep[self.count:]:
            if tensor.grad_fn is not None:  # a step ran under grad mode: history recorded
                return None
        sources, constants = self.count, len(self.constants)

        def slot_of(reference) -> int:
            kind, index = reference
            if kind == "constant":
                return sources + index
            if kind == "step":
                return sources + constants + index
            return index

        steps = []
        for op, attrs, references, arity, wanted in self.steps:
            slots = [slot_of(reference) for reference in references]
            steps.append((op, attrs, itemgetter(*slots) if slots else None, arity, wanted))
        outcome = []
        for result in results:
            if result is None:
                outcome.append(None)
                continue
            reference = self.slots.get(id(result)) if isinstance(result, Tensor) else None
            if reference == ("source", 0):
                outcome.append(0)
            elif reference is not None and reference[0] == "step":
                outcome.append((slot_of(reference), result._dtype))
            else:  # a saved value returned as it is, or a tensor of unknown origin
                return None
        return Chain(tuple(self.constants), tuple(steps), tuple(outcome))


_recording = threading.Lock()


def record(node: OpNode, grads: list) -> tuple:
    """Run the node's rule as usual while recording the ops it runs: (the chain, or None when
    it would not be faithful; the gradients). The rule's errors propagate."""
    pinned = node._saved_out
    sources = [grads[0]]
    for saved in node._saved:
        if saved.__class__ is SavedTensor:
            sources.append(saved.unpack(node))
    if pinned is not None:
        out = pinned.unpack(node)
        sources.append(out)
        node._saved_out = _Pinned(out)
    recorder = _Recorder(sources)
    registry.STEP = recorder.step
    tensor_module.VALUE_READ = recorder.value_read
    try:
        gradients = OpNode.apply(node, grads)
    finally:
        registry.STEP = None
        tensor_module.VALUE_READ = None
        node._saved_out = pinned
    return recorder.chain(gradients), gradients
