"""autojit.utils.checkpoint: activation checkpointing, torch.utils.checkpoint's `checkpoint`
and `checkpoint_sequential`, at torch's module path.

A checkpointed segment keeps only its inputs for backward. Its forward records the autograd
graph as usual, then every value a node of that graph saved (the SavedTensors of
autograd/graph.py) is replaced by a _RecomputedTensor that holds no data, so the segment's
intermediate values are freed as soon as it returns. The first time backward reads one, the
segment runs again with grad mode on and the random generators put back where they were (a
dropout draws the same mask), and every saved entry is filled from the recomputation. The
graph backward walks is the one the forward recorded, so gradients, second-order ones
included, are bit-equal to a run without checkpointing; this is torch's non-reentrant
checkpoint, which torch builds from saved-tensor hooks.

While autojit.compile traces (ir/trace.py), the same code runs on symbolic tensors: the
recomputation appends its ops to the graph a second time, marked in `Graph.recompute_ids`, so
that common-subexpression elimination does not merge them with the forward's and the
partition (ir/partition.py) places them in the backward graph. docs/notes/checkpointing.md
explains both.
"""

from __future__ import annotations

import contextlib
import warnings

import numpy as np

from ..amp.autocast_mode import autocast
from ..autograd.grad_mode import no_grad
from ..autograd.graph_tasks import current_graph_task_id, running_with_inputs
from ..autograd.nodes import AccumulateGrad, Node
from ..autograd.once_differentiable import delayed_error
from ..autograd.saved_tensors import PackedSavedTensor, SavedTensor
from ..ops.autocast import (
    DEVICE_TYPES,
    get_autocast_dtype,
    is_autocast_cache_enabled,
    is_autocast_enabled,
)
from ..tensor.device import CPU, cuda_device
from ..tensor.generator import default_generator, device_generators
from ..tensor.state import state
from ..tensor.tensor import Tensor
from .checkpoint_stop import SavingNodes, StopRecomputation
from .selective_checkpoint import (
    CheckpointPolicy,
    SelectiveCheckpointContext,
    _SelectiveForward,
    create_selective_checkpoint_contexts,
)

__all__ = ["CheckpointError", "CheckpointPolicy", "SelectiveCheckpointContext", "checkpoint",
           "checkpoint_sequential", "create_selective_checkpoint_contexts", "noop_context_fn",
           "set_checkpoint_early_stop"]

_DETERMINISM_CHECKS = ("default", "none")


_early_stop: bool | None = None  # set_checkpoint_early_stop's setting, None outside it


@contextlib.contextmanager
def set_checkpoint_early_stop(enable: bool):
    """Whether the non-reentrant checkpoints made inside stop their recomputation once it has
    saved as many tensors as their forward did (torch's default, checkpoint's `early_stop`),
    whenever their backward runs (checkpoint_stop.py)."""
    global _early_stop
    previous, _early_stop = _early_stop, enable
    try:
        yield
    finally:
        _early_stop = previous


class CheckpointError(RuntimeError):
    """The recomputation of a checkpointed segment did not match its forward."""


def noop_context_fn():
    """The default `context_fn`: no context around the forward or the recomputation."""
    return contextlib.nullcontext(), contextlib.nullcontext()


def checkpoint(function, *args, use_reentrant: bool | None = None, context_fn=noop_context_fn,
               determinism_check: str = "default", debug: bool = False,
               early_stop: bool = True, **kwargs):
    """Run `function(*args, **kwargs)` without keeping its intermediate values for backward;
    backward runs it again to recompute them.

    As in torch, `use_reentrant` should be given (omitting it warns and picks True);
    `preserve_rng_state=True` (the default) replays the random draws of the forward in the
    recomputation. Both variants give the same gradients here; use_reentrant=True keeps
    torch's restrictions on its arguments, and its outputs require grad only when a tensor
    argument does. `early_stop` (overridden by set_checkpoint_early_stop): the non-reentrant
    recomputation stops once it has saved every tensor backward needs, as torch's; else, as
    the reentrant one always does, it runs the whole function.

    >>> import autojit
    >>> from autojit.utils.checkpoint import checkpoint
    >>> w = autojit.tensor([0.5, -1.0], requires_grad=True)
    >>> x = autojit.tensor([1.0, 2.0])
    >>> y = checkpoint(lambda x: (x * w).tanh(), x, use_reentrant=False)
    >>> y.sum().backward()   # runs the lambda again, then differentiates it
    >>> w.grad
    tensor([0.7864, 0.1413])
    """
    if use_reentrant is None:
        warnings.warn(
            "autojit.utils.checkpoint: the use_reentrant parameter should be passed "
            "explicitly. Starting in PyTorch 2.9, calling checkpoint without use_reentrant "
            "will raise an exception. use_reentrant=False is recommended, but if you need to "
            "preserve the current default behavior, you can pass use_reentrant=True. Refer to "
            "docs for more details on the differences between the two variants.",
            stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs and use_reentrant:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if use_reentrant:
        if context_fn is not noop_context_fn or debug is not False:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        if not any(isinstance(a, Tensor) and a._requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          stacklevel=2)
            with no_grad():
                return function(*args)
        determinism_check = "none"
    elif determinism_check not in _DETERMINISM_CHECKS:
        raise ValueError(f"determinism_check should be one of {list(_DETERMINISM_CHECKS)}, "
                         f"but got {determinism_check}")
    elif debug and context_fn is not noop_context_fn:
        raise ValueError("debug=True is incompatible with non-default context_fn")
    forward_context, recompute_context = context_fn()
    if not state.grad_enabled:
        with forward_context:
            return function(*args, **kwargs)
    segment = _Segment(function, args, kwargs, preserve, recompute_context,
                       determinism_check == "default")
    segment.reentrant = use_reentrant
    segment.early_stop = early_stop if _early_stop is None else _early_stop
    if isinstance(forward_context, _SelectiveForward):  # selective_checkpoint.py
        segment.selective = forward_context
    with forward_context:
        result = segment.run_forward()
    if use_reentrant:
        result = _refuse_needless(result, args)
    return result


_NEEDLESS = "none of output has requires_grad=True, this checkpoint() is not necessary"


def _refuse_needless(result, args: tuple):
    """The reentrant variant's outputs when none requires grad (the function ran under
    no_grad, say): torch's outputs of CheckpointFunction require grad all the same, and a
    backward reaching them raises that the checkpoint was not necessary; so do these."""
    outputs = result if isinstance(result, tuple) else (result,)
    if any(isinstance(out, Tensor) and out._requires_grad for out in outputs):
        return result
    source = next(a for a in args if isinstance(a, Tensor) and a._requires_grad)
    refused = tuple(
        delayed_error(_NEEDLESS, out, source, node_name="CheckpointFunctionBackward")
        if isinstance(out, Tensor) and out.dtype.is_floating_point else out for out in outputs)
    return refused if isinstance(result, tuple) else refused[0]


def checkpoint_sequential(functions, segments: int, input, use_reentrant: bool | None = None,
                          **kwargs):
    """Run `functions` (a Sequential or a list of callables) one after the other on `input`,
    split into `segments` chunks of which all but the last are checkpointed."""
    if use_reentrant is None:
        warnings.warn(
            "autojit.utils.checkpoint.checkpoint_sequential: the use_reentrant parameter "
            "should be passed explicitly. In version 2.9 we will raise an exception if "
            "use_reentrant is not passed. use_reentrant=False is recommended, but if you need "
            "to preserve the current default behavior, you can pass use_reentrant=True. Refer "
            "to docs for more details on the differences between the two variants.",
            stacklevel=2)
        use_reentrant = True
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))

    def run_function(start, end, functions):
        def forward(input):
            for j in range(start, end + 1):
                input = functions[j](input)
            return input
        return forward

    if hasattr(functions, "children"):  # a Sequential (nn is not imported by this layer)
        functions = list(functions.children())
    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end, functions), input,
                           use_reentrant=use_reentrant, preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1, functions)(input)


# ---- the segment ------------------------------------------------------------------------------

def _tensors_in(structure) -> list:
    """The tensors of a result, in order, through tuples, lists and dicts."""
    if isinstance(structure, Tensor):
        return [structure]
    if isinstance(structure, (tuple, list)):
        return [t for item in structure for t in _tensors_in(item)]
    if isinstance(structure, dict):
        return [t for item in structure.values() for t in _tensors_in(item)]
    return []


def _internal(node, start: int) -> bool:
    """Whether an autograd node was made by the segment's run that began at `start`."""
    return node is not None and node.sequence_nr > start and node.__class__ is not AccumulateGrad


def _segment_nodes(outputs: list, start: int) -> list:
    """The nodes of the segment's autograd graph reachable from its outputs."""
    stack, seen = [], set()
    for tensor in outputs:  # outputs of one node (a custom Function's) share their grad_fn
        if _internal(tensor.grad_fn, start) and id(tensor.grad_fn) not in seen:
            seen.add(id(tensor.grad_fn))
            stack.append(tensor.grad_fn)
    nodes = []
    while stack:
        node = stack.pop()
        nodes.append(node)
        # a node several outputs share (autograd/multi_output.py) holds their own histories
        for next_node, _ in (*node.next_functions, *((inner, 0) for inner in
                                                     getattr(node, "_inner", ()))):
            if _internal(next_node, start) and id(next_node) not in seen:
                seen.add(id(next_node))
                stack.append(next_node)
    return nodes


def _sequence_mark() -> int:
    """A sequence number below every autograd node made from now on."""
    return Node().sequence_nr


class _Segment:
    """One checkpointed call: what its forward saw, and how backward runs it again."""

    def __init__(self, function, args: tuple, kwargs: dict, preserve: bool, recompute_context,
                 check: bool):
        self.function, self.args, self.kwargs = function, args, kwargs
        self.recompute_context, self.check = recompute_context, check
        self.tracer = state.tracer
        # The autocast settings the forward runs under: the recomputation runs under them too,
        # wherever backward is called, or it would compute (and save) values of other dtypes.
        self.autocast = _autocast_settings()
        self.generator_states = None
        self.draws = None  # while tracing: the random graph inputs the forward drew
        if preserve and self.tracer is None:
            self.generator_states = [(generator, generator.get_state()) for generator in
                                     (default_generator, *device_generators())]
        elif preserve:
            self.draws = []
        self.selective = None  # selective checkpointing's forward context: what it keeps
        self.metadata = None  # per saved entry, in order: (shape, dtype, device), checked
        self.recomputed = None  # per saved entry, in order: the recomputed (data, value, dtype)
        self.reentrant = False  # use_reentrant=True: torch's refusals of autograd.grad
        self.recomputed_task = None  # the backward pass (engine graph task) that recomputed
        self.taken: set = set()  # the entries that pass's nodes have unpacked
        self.early_stop = False  # stop the recomputation once it has saved what backward needs
        # (place among the forward's saving nodes, slot) per saved entry, and how many saving
        # nodes the forward made: where the early stop finds the recomputed entries
        self.places = None
        self.saving_count = 0

    def run_forward(self):
        tracer = self.tracer
        start = _sequence_mark()
        if tracer is not None:
            tracer.checkpointing += 1
            if self.draws is not None:
                previous_log, tracer.draw_log = tracer.draw_log, self.draws
        # The segment's saved tensors are the checkpoint's own: hooks entered outside do not
        # pack them (torch's checkpoint pushes its hooks innermost); hooks entered inside the
        # function do, and those entries are left to them (_saved_entries).
        outer_hooks, state.saved_tensor_hooks = state.saved_tensor_hooks, ()
        watch = None
        if self.early_stop and not self.reentrant and self.selective is None:
            watch = SavingNodes()  # where the recomputation will find the saved entries
        try:
            with watch if watch is not None else contextlib.nullcontext():
                result = self.function(*self.args, **self.kwargs)
        finally:
            state.saved_tensor_hooks = outer_hooks
            if tracer is not None:
                tracer.checkpointing -= 1
            if tracer is not None and self.draws is not None:
                tracer.draw_log = previous_log
                if previous_log is not None:  # an enclosing segment replays these too
                    previous_log.extend(self.draws)
        arguments = {id(a) for a in self.args if isinstance(a, Tensor)}
        for node in _segment_nodes(_tensors_in(result), start):
            if hasattr(node, "before_backward"):
                # A compiled function's call (compiler/compiled_backward.py): it keeps its
                # residuals, and runs the function again before its backward all the same
                # (stopping where eager's would: checkpoint_stop.py).
                node.before_backward = self._recompute_once
        entries = _saved_entries(_tensors_in(result), start)
        if watch is not None:
            self.places, self.saving_count = watch.places(entries), len(watch.nodes)
        self.metadata = []
        for node, slot, entry in entries:
            index = len(self.metadata)
            self.metadata.append(_metadata(entry))
            producer = node if slot == "out" else getattr(entry.tensor, "grad_fn", None)
            if self.selective is not None and self.selective.saves_result_of(producer):
                continue  # selective checkpointing keeps this op's result
            # An op's node unpacks each of its saved values once per run (graph.py's
            # OpNode._apply_unpacked_once), as torch's nodes do: the once-only rule of `take`
            # then holds for the VJP rules, which may read a value several times.
            node._packed = True
            if slot == "out":
                node._saved_out = _placeholder(self, index, entry, arguments, start)
            else:
                saved = node._saved
                replaced = list(saved)
                replaced[slot] = _placeholder(self, index, entry, arguments, start)
                node._saved = type(saved)(replaced)
        return result

    def _recompute_once(self) -> None:
        self._current()

    def _current(self) -> list:
        """The recomputed entries of the running backward pass: as torch's, a recomputation
        serves the backward pass (graph task) that made it; another pass, or a read outside
        backward (`grad_fn._saved_result`), runs the function again."""
        task = current_graph_task_id()
        if self.recomputed is None or task == -1 or task != self.recomputed_task:
            self.recomputed = self._recompute()
            self.recomputed_task = task
            self.taken = set()
        return self.recomputed

    def take(self, index: int) -> tuple:
        """unpacked(index) for a node of the graph: as torch's non-reentrant checkpoint, a
        backward pass unpacks each saved entry once (a custom Function's backward reading
        ctx.saved_tensors twice raises), since torch frees a recomputed value once unpacked."""
        values = self._current()
        if not self.reentrant and self.recomputed_task != -1:
            if index in self.taken:
                raise CheckpointError(
                    "autojit.utils.checkpoint: Unpack is being triggered for a tensor that was "
                    "already unpacked once. If you are calling ctx.saved_tensors in backward, "
                    "make sure to do so only once. Otherwise please open an issue with details "
                    "on your use case.")
            self.taken.add(index)
        return values[index]

    def unpacked(self, index: int) -> tuple:
        """The recomputed (data, value, dtype) of saved entry `index`; the first read in a
        backward pass recomputes the whole segment."""
        return self._current()[index]

    def _recompute(self) -> list:
        if self.reentrant and running_with_inputs():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() or "
                "passing an `inputs` parameter to .backward(). To resolve this error, you can "
                "either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument.")
        tracer = state.tracer
        previous_grad = state.grad_enabled
        forked = None
        if self.generator_states is not None:
            forked = [(generator, generator.get_state()) for generator, _ in
                      self.generator_states]
            for generator, saved_state in self.generator_states:
                generator.set_state(saved_state)
        if tracer is not None:
            tracer.recomputing += 1
            previous_replay = tracer.draw_replay
            tracer.draw_replay = list(self.draws) if self.draws is not None else None
        state.grad_enabled = True
        start = _sequence_mark()
        outer_hooks, state.saved_tensor_hooks = state.saved_tensor_hooks, ()
        watch = None
        if self.early_stop and self.places is not None and self.selective is None:
            watch = SavingNodes(stop_after=self.saving_count)
        try:
            with contextlib.ExitStack() as regions:
                for region in _autocast_regions(self.autocast):
                    regions.enter_context(region)
                regions.enter_context(self.recompute_context)
                if watch is not None:
                    regions.enter_context(watch)
                result = self.function(*self.args, **self.kwargs)
        except StopRecomputation as stop:
            if stop.args[0] is not watch:  # another recomputation's, running inside this one
                raise
            result = None
        finally:
            state.saved_tensor_hooks = outer_hooks
            state.grad_enabled = previous_grad
            if tracer is not None:
                tracer.recomputing -= 1
                tracer.draw_replay = previous_replay
            if forked is not None:
                for generator, saved_state in forked:
                    generator.set_state(saved_state)
        if watch is not None:  # the entries at the forward's places, as far as they were made
            entries = watch.entries(self.places)
        else:
            entries = [entry for _, _, entry in _saved_entries(_tensors_in(result), start)]
        # As torch with early stop: more entries than the forward's are not an error.
        if len(entries) < len(self.metadata):
            raise CheckpointError(
                "autojit.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.metadata)}\n"
                f"Number of tensors saved during recomputation: {len(entries)}.\n")
        entries = entries[:len(self.metadata)]
        if self.check:
            different = [(index, saved, _metadata(entry)) for index, (saved, entry) in
                         enumerate(zip(self.metadata, entries)) if saved != _metadata(entry)]
            if different:
                raise CheckpointError(
                    "autojit.utils.checkpoint: Recomputed values for the following tensors "
                    "have different metadata than during the forward pass.\n" + "".join(
                        f"tensor at position {index}:\nsaved metadata: {_shown(saved)}\n"
                        f"recomputed metadata: {_shown(recomputed)}\n"
                        for index, saved, recomputed in different) + ".\n")
        return [_contents(entry) for entry in entries]


def _autocast_settings() -> tuple:
    """The autocast state now: (device type, enabled, dtype) per device type, and whether
    weights' casts are cached (torch's checkpoint records the same, _get_autocast_kwargs)."""
    return (tuple((device, is_autocast_enabled(device), get_autocast_dtype(device))
                  for device in DEVICE_TYPES), is_autocast_cache_enabled())


def _autocast_regions(settings: tuple) -> list:
    """Autocast regions that, entered, put back the state `_autocast_settings` returned; a
    device type that was off is entered as off, so an autocast region around backward does not
    leak into the recomputation of a forward that ran outside one."""
    devices, cache_enabled = settings
    return [autocast(device, dtype=dtype, enabled=enabled, cache_enabled=cache_enabled)
            for device, enabled, dtype in devices]


def _saved_entries(outputs: list, start: int) -> list:
    """(node, slot, entry) for every SavedTensor of the segment's nodes, nodes in the order
    they were made: `slot` indexes the node's `_saved`, or is "out" for its `_saved_out`."""
    found = []
    for node in sorted(_segment_nodes(outputs, start), key=lambda node: node.sequence_nr):
        for slot, entry in enumerate(getattr(node, "_saved", None) or ()):
            if isinstance(entry, SavedTensor) and not isinstance(entry, PackedSavedTensor):
                found.append((node, slot, entry))
        saved_out = getattr(node, "_saved_out", None)
        if isinstance(saved_out, SavedTensor) and not isinstance(saved_out, PackedSavedTensor):
            found.append((node, "out", node._saved_out))
    return found


def _metadata(entry: SavedTensor) -> tuple:
    """(shape, dtype, device) of a saved entry: what the determinism check compares, as
    torch's does."""
    if isinstance(entry, _RecomputedTensor):  # a nested checkpoint's: it knows
        return entry.segment.metadata[entry.index]
    data, value, dtype = _contents(entry)
    if data is None:  # symbolic, while tracing: device-neutral
        return tuple(value.shape), dtype, CPU
    device = CPU if data.__class__ is np.ndarray else cuda_device(data.device_index)
    return tuple(data.shape), dtype, device


def _shown(metadata: tuple) -> str:
    shape, dtype, device = metadata
    return (f"{{'shape': autojit.Size({list(shape)}), 'dtype': autojit.{dtype.name}, "
            f"'device': {device!r}}}")


def _contents(entry: SavedTensor) -> tuple:
    """(data, value, dtype) of a saved entry, without the tensor (and graph) around it."""
    if isinstance(entry, _RecomputedTensor):  # a checkpoint nested in the one recomputed
        return entry.segment.unpacked(entry.index)
    tensor = entry.tensor
    if tensor is None:
        return entry.data, entry.value, entry.dtype
    return tensor._payload, tensor._value, tensor._dtype


def _placeholder(segment: _Segment, index: int, entry: SavedTensor, arguments: set,
                 start: int) -> SavedTensor:
    """What a segment node keeps of one saved entry: the entry itself when it is kept alive
    anyway (an argument, a parameter, a tensor made before the segment), else a
    _RecomputedTensor that holds no data."""
    if isinstance(entry, _RecomputedTensor):
        # A checkpoint nested in this one replaced it already: the same autograd identity (an
        # input's producer, or the node's own output), recomputed by this segment.
        return _RecomputedTensor(segment, index, entry.is_output, entry.output_nr,
                                 entry.grad_fn)
    tensor = entry.tensor
    if tensor is None:  # the node's own output
        return _RecomputedTensor(segment, index, True, entry.output_nr, None)
    if id(tensor) in arguments or (tensor.grad_fn is None and tensor._requires_grad) or (
            tensor.grad_fn is not None and not _internal(tensor.grad_fn, start)):
        return entry
    return _RecomputedTensor(segment, index, False, tensor._output_nr, tensor.grad_fn)


class _RecomputedTensor(SavedTensor):
    """A saved tensor of a checkpointed segment, recomputed when backward first reads it.

    Unpacked, it is the recomputed data with the autograd identity of the tensor the forward
    saved (its grad_fn and output number), so the graph the forward recorded is the one that
    backward, and a second backward, walk: gradients sum in the same nodes, in the same
    order, as without checkpointing.
    """

    __slots__ = ("segment", "index", "is_output", "grad_fn")

    def __init__(self, segment: _Segment, index: int, is_output: bool, output_nr: int,
                 grad_fn):
        self.segment, self.index, self.is_output = segment, index, is_output
        self.output_nr, self.grad_fn = output_nr, grad_fn
        self.tensor, self.data, self.value, self.dtype = None, None, None, None
        self.counter, self.version = None, 0

    def unpack(self, node: Node) -> Tensor:
        data, value, dtype = self.segment.take(self.index)
        rebuilt = Tensor._make(data, dtype)
        rebuilt._value = value
        owner = node if self.is_output else self.grad_fn
        if owner is not None:
            rebuilt.grad_fn = owner
            rebuilt._output_nr = self.output_nr
            rebuilt._requires_grad = True
        return rebuilt
