"""The Tracer: while a Python function runs on symbolic tensors, it records every primitive into
a Graph.

`make_graph(fn, *example_inputs)` (make_graph.py) and autojit.compile's trace stage
(compiler/tracing.py) install one: the example tensors become symbolic "arg" inputs and
`state.tracer` is set, so ops.registry.bind hands each primitive to `Tracer.bind`, which
appends a Node instead of running NumPy. Autograd recording happens in bind after the
tracer returns, exactly as in eager mode, so a `loss.backward()` or
`autograd.grad(..., create_graph=True)` inside the function appends the adjoint ops to the same
graph: gradients are graphs too.

Concrete tensors the function reads (parameters, optimizer state, constants such as the ones
tensor backward seeds) are lifted once each, memoized by their storage, as "captured" inputs.
Tracing has no side effects on real tensors: an in-place write to a captured tensor becomes an
"update" output (the new value, to be written back by whoever runs the graph), a `.grad`
assigned during the trace becomes a "grad" output, and the real `.grad`, version counter and
data are left as they were. A tensor argument written in place gets an "update" output too.
Views and aliases (detach) of traced tensors are tracked by aliasing.py: a write through one
becomes a new value of the tensor whose storage it is, and readers of that storage see it.
The writes and the side-effect outputs are trace_effects.py's (the Tracer's EffectsMixin).

What tracing cannot capture (`.item()`, `bool(tensor)`, `.numpy()`, data-dependent Python
control flow) calls `graph_break`, which raises GraphBreak naming the user's source line.
"""

from __future__ import annotations

import linecache

import numpy as np

from ..ops.registry import infer
from ..tensor import dtypes
from ..tensor.graph_break import GraphBreak, graph_break, user_location
from ..tensor.memory_format import laid_out
from ..tensor.symbolic import (
    ShapeEnv,
    contains_runtime,
    is_runtime,
    specialize_values,
)
from ..tensor.tensor import Tensor
from ..tensor.traced_scalar import TracedList
from .aliasing import make_alias, make_view, stand_in_of
from .graph import Graph, Input, Value
from .printing import LIST_SPEC
from .scalars import ScalarGraph, reaches_sinks
from .trace_devices import Placement
from .trace_effects import EffectsMixin, storage_root

# ---- the tracer -------------------------------------------------------------------------------

class _Touched:
    """The state of a real tensor before the trace first saw it, restored afterwards."""

    __slots__ = ("tensor", "grad", "value", "version", "entry", "history")

    def __init__(self, tensor: Tensor, entry: Input):
        self.tensor, self.entry = tensor, entry
        self.grad, self.value = tensor._grad, tensor._value
        self.version = tensor._version_counter.value
        self.history = (tensor.grad_fn, tensor._output_nr, tensor._requires_grad)

    def history_changed(self) -> bool:
        tensor = self.tensor
        return (tensor.grad_fn, tensor._output_nr, tensor._requires_grad) != self.history

    def restore(self) -> None:
        tensor = self.tensor
        tensor._grad, tensor._value = self.grad, self.value
        tensor._version_counter.value = self.version
        tensor.grad_fn, tensor._output_nr, tensor._requires_grad = self.history


class Tracer(EffectsMixin):
    """Appends one Node per primitive to `graph`; installed as `state.tracer` by make_graph."""

    def __init__(self, graph: Graph, captured_names: dict | None = None,
                 env: ShapeEnv | None = None):
        self.graph = graph
        # The symbols of the trace (tensor/symbolic.py), and the symbolic scalars it reads and
        # feeds to ops (scalars.py); `call_args` are the real arguments of the call traced.
        self.env = env if env is not None else ShapeEnv()
        self.scalars = ScalarGraph(self, self.env)
        # What the tensor layer asks of a trace for `.item()`, `.tolist()`, `.numpy()` and
        # `autojit.tensor(loss.item())` (scalars.py).
        self.read_scalar, self.read_array = self.scalars.read_scalar, self.scalars.read_array
        self.tensor_from_scalars = self.scalars.tensor_of
        self.call_args: tuple = ()
        # The device of the call's tensors when they are not on the CPU (None when they are):
        # graph values have no data, and the compiled graph runs on that device.
        self.device = None
        # With a device: which values eager keeps on the CPU (trace_devices.py).
        self.placement = None
        self.host_outputs: set = set()  # the names of the outputs eager returns on the CPU
        # Whether a graph value can be evaluated for a decision (a compiled function's trace
        # has the call's real inputs; make_graph has not: a decision there breaks the graph).
        self.evaluates = True
        self.reserved_outputs: set = set()  # output names given to values not yet outputs
        self._output_suffixes: dict = {}  # name -> the suffix unique_output last gave it
        self._real_inputs: dict = {}  # id(Value) of an "arg" input -> the real array
        self._names = captured_names or {}  # id(ndarray) -> a name from the function's scope
        self._used_names = {entry.name for entry in graph.inputs}
        self._known: set = {id(entry.value) for entry in graph.inputs}  # this trace's values
        self._current: dict = {}  # id(ndarray) -> the Value a captured storage holds now
        self._entries: dict = {}  # id(ndarray) -> its captured Input
        self._touched: dict = {}  # id(Tensor) -> _Touched, for every real tensor seen
        self._updates: dict = {}  # id(ndarray) -> (Input, Value) written in place
        self._unnamed = 0  # captured tensors with no name in the function's scope: c0, c1, ...
        # The compiler's read recorder's trace function while it runs (compiler/recorder.py,
        # Python 3.10 and 3.11), which the ops layer turns off while it traces a primitive.
        self.quiet_trace = None
        self.cleared_grads: list = []
        self.version_bumps: list = []  # (Input, count) set by finish
        self.ran_backward = False  # set by the autograd engine when it runs during the trace
        self.backward_depth = 0  # > 0 while the autograd engine runs a backward pass
        # > 0 while a checkpointed segment is recomputed for its backward (utils/checkpoint.py):
        # the values recorded then go into Graph.recompute_ids (those of its forward go into
        # Graph.checkpoint_ids). Its forward's random inputs are
        # collected in draw_log, and handed out again from draw_replay by the recomputation.
        self.recomputing = 0
        self.checkpointing = 0  # > 0 while a checkpointed segment's forward runs
        # The saving nodes eager's run of the function makes (compiler/tracing.py counts
        # them): the places its call takes in a checkpoint's early stop.
        self.saving_nodes: int | None = None
        self.draw_log: list | None = None
        self.draw_replay: list | None = None
        # ids of tensors whose .grad the function read or assigned: compiler/api.py guards those.
        self.grad_accessed: set = set()
        # ids of tensors whose .grad the function assigned (or deleted): eager then leaves a
        # new tensor in .grad, never the one from before the call. Of those, the ones whose
        # first .grad access was that assignment: what .grad held before cannot matter.
        self.grad_assigned: set = set()
        self.grad_overwritten: set = set()
        self.fresh_grads: dict = {}  # "grad" output name of an assigned .grad -> its tensor
        # id(Tensor) -> the tensor the function last assigned to its .grad (None: deleted),
        # seen at the next .grad access or at finish: an assigned .grad keeps the assigned
        # tensor's layout, where one backward makes follows the parameter's.
        self.assigned_grads: dict = {}
        self._assigning: dict = {}  # id(Tensor) -> tensor, assigned and not yet seen
        # "grad" output name -> the .grad a tensor from outside the call is left with: a call
        # returning it returns the very tensor each run leaves there, as eager does.
        self.grads_left: dict = {}
        # (gradient, node, output position) that anomaly mode checks for nan on every run.
        self.nan_checks: list = []
        # "grad" output name -> the real tensor whose .grad it is (the captured input's tensor,
        # or another tensor sharing its storage, such as a detached alias).
        self.grad_owners: dict = {}
        # ids of the concrete tensors created while tracing (leaves the function made itself,
        # detached aliases): their .grad does not outlive the call.
        self.made: set = set()
        # id(Tensor) -> tensor, for the tensors a factory filled with new memory while tracing
        # (zeros, ones, full, arange, tensor([...]), ...): eager makes them anew on every call,
        # so the graph reads a written one's factory values from a copy (_read_factory_values),
        # and autograd history written into one does not stop the trace.
        self.fresh: dict = {}
        self._fresh_storages: set = set()  # ids of the captured storages of those tensors
        self._fresh_targets: dict = {}  # ... written: id -> the Input the write goes back to
        self.fresh_history: list = []  # ... given autograd history by a write (set by finish)
        # id(Tensor) -> (tensor, what) for each real tensor whose values Python read while
        # tracing (bool(t), t.numpy(), ...): compiler/tracing.py guards their values.
        self.data_read: dict = {}
        self._aliased: set = set()  # ids of captured storages a write made stale
        self._sharing: dict = {}  # id of a storage's root buffer -> captured storages on it
        self.grads_before: dict = {}  # id(Tensor) -> (tensor, its .grad before the trace)
        # id(symbolic argument) -> the real argument's array: how eager lays out its views.
        self.real_arrays: dict = {}
        # How eager lays out values computed while tracing (ir/eager_layout.py): id(Value) ->
        # its stand-in, and id(symbolic tensor written in place) -> (the tensor, its value
        # before the first write), whose layout its storage keeps.
        self.eager_layouts: dict = {}
        self.first_values: dict = {}
        # id(Value) -> Value of each argument or captured input whose array's layout such a
        # walk read: compiler/guards.py's layout_conditions keep it (a new layout is a new
        # trace); and output name -> eager_layout.OutputLayout of each returned value that
        # eager lays out other than row-major (compiler/executable.py lays it out so).
        self.layout_reads: dict = {}
        self.output_layouts: dict = {}
        self.output_leaves: set = set()  # output names of leaves the call made that require grad
        # Output names of results with the conjugate bit (docs/notes/complex.md): each run's
        # tensor gets it, the graph's values being the conjugated values themselves.
        self.conj_outputs: set = set()
        self._argument_entries: dict = {}  # id(symbolic argument) -> its "arg" Input
        # id(symbolic argument) -> the real argument; and id(Value) -> the real base of each
        # argument view whose base's storage as_strided read (guards.py's base_conditions).
        self._argument_tensors: dict = {}
        self.base_reads: dict = {}
        # id(Input) of an argument or captured tensor -> how many graph nodes existed when it
        # was first written: reads of other inputs from there on see eager's written memory.
        self.first_writes: dict = {}
        self._locations: dict = {}  # id(Value) -> (filename, line) of the op that made it
        self.prints = None  # ir/printing.PrintCapture while compiler/api.py traces
        # compiler/result_template.Flattening of the traced call's result, once flattened
        self.result_flattening = None

    def note_grad_access(self, tensor: Tensor, assigning: bool = False) -> None:
        """Called before .grad is read or assigned while tracing: the first time, remember
        the .grad a real tensor had, so that it can be restored (a `zero_grad()` that runs
        before the trace reads the tensor) and guarded."""
        if self._assigning.pop(id(tensor), None) is not None:
            self.assigned_grads[id(tensor)] = tensor._grad
        if assigning:
            self._assigning[id(tensor)] = tensor
            self.grad_assigned.add(id(tensor))
            if id(tensor) not in self.grad_accessed:
                self.grad_overwritten.add(id(tensor))
        self.grad_accessed.add(id(tensor))
        if tensor._payload is not None and id(tensor) not in self.made:
            self.grads_before.setdefault(id(tensor), (tensor, tensor._grad))
            grad = tensor._grad
            if grad is not None and grad._payload is not None and \
                    id(grad._payload) not in self._names:
                # A .grad captured later (backward adds into it in place) is named after its
                # owner, as the user names it: `weight.grad`, not `c1`.
                owner = self._names.get(id(tensor._payload))
                if owner is not None:
                    self._names[id(grad._payload)] = f"{owner}.grad"

    def random_input(self, draw) -> Value:
        """A "random" graph input standing for `draw` (tensor/random.RandomDraw), drawn anew each
        time the graph runs; a recomputed segment's draw is the one its forward made."""
        if self.draw_replay:
            value = self.draw_replay.pop(0)
            if value.shape == tuple(draw.shape) and value.dtype is draw.dtype:
                return value
        value = self.graph.add_input(tuple(draw.shape), draw.dtype, "random",
                                     self.unique_name(draw.kind), draw)
        self._known.add(id(value))
        if self.draw_log is not None:
            self.draw_log.append(value)
        return value

    def scalar_input(self, source) -> Value:
        """A "scalar" graph input: a 0-d value of `source.dtype` that `source.read(args)` gives
        afresh before every run (a runtime float or int, or an expression of them:
        scalars.DerivedScalar)."""
        value = self.graph.add_input((), source.dtype, "scalar",
                                     self.unique_name(getattr(source, "display", "scalar")),
                                     source)
        self._known.add(id(value))
        return value

    def graph_node(self, op, operands: list, attrs: dict, shape: tuple, dtype) -> Value:
        """A node the tracer adds itself (the arithmetic of a symbolic scalar)."""
        value = self.graph.add_node(op, operands, attrs, shape, dtype)
        self._known.add(id(value))
        self._locations[id(value)] = user_location()
        return value

    def real_input(self, entry: Input):
        """The real array of an "arg" input in the call being traced."""
        return self._real_inputs[id(entry.value)]

    def know(self, value: Value) -> None:
        """Accept `value` (an input added after the trace began) as this trace's own."""
        self._known.add(id(value))

    def touched_tensors(self) -> list:
        """(captured Input, real Tensor) for every real tensor the trace has read so far."""
        return [(touched.entry, touched.tensor) for touched in self._touched.values()]

    def unique_name(self, name: str) -> str:
        candidate, suffix = name, 1
        while candidate in self._used_names:
            candidate, suffix = f"{name}_{suffix}", suffix + 1
        self._used_names.add(candidate)
        return candidate

    def value_of(self, tensor: Tensor) -> Value:
        """The graph value `tensor` stands for, lifting a concrete tensor on first use."""
        data = tensor._payload
        if data is None:
            value = tensor._value
            if id(value) not in self._known:
                raise RuntimeError("a symbolic tensor from another trace was used while tracing; "
                                   "tensors made while tracing do not outlive their trace")
            if tensor._traced_view is not None:
                return self._refreshed_view(tensor)
            return value
        key = id(data)
        value = self._current.get(key)
        if key in self._aliased:
            graph_break("reading a tensor that shares memory with a tensor written in place "
                        "earlier in the function (compiled code would read its old values)",
                        needs_data=False)
        if value is None:
            sharing = self._sharing.setdefault(storage_root(data), set())
            if any(np.may_share_memory(data, self._entries[other].tensor._payload)
                   for other in sharing if other in self._updates):
                graph_break("reading a view of a tensor written in place earlier in the "
                            "function (compiled code would read its old values)",
                            needs_data=False)
            if tensor._value is not None and id(tensor._value) in self._known:
                # A copy of a captured tensor taken after an in-place write (autograd's
                # snapshot of the old value): it stands for the value it was copied from.
                return tensor._value
            name = self._names.get(key)
            if name is None:
                name, self._unnamed = f"c{self._unnamed}", self._unnamed + 1
            name = self.unique_name(name)
            value = self.graph.add_input(tuple(data.shape), tensor._dtype, "captured", name,
                                         tensor)
            self._known.add(id(value))
            if self.device is None and data.__class__ is not np.ndarray:
                self._place_from(tensor, value)
            self._current[key] = value
            self._entries[key] = self.graph.inputs[-1]
            sharing.add(key)
            if id(tensor) in self.fresh:
                self._fresh_storages.add(key)
        if id(tensor) not in self._touched:
            entry = self._entries[key]
            touched = self._touched[id(tensor)] = _Touched(tensor, entry)
            before = self.grads_before.get(id(tensor))
            if before is not None:  # .grad assigned before the tensor itself was read
                touched.grad = before[1]
            if id(entry.tensor) in self.made and id(tensor) not in self.made and \
                    entry.tensor._payload is data:
                # The storage was first read through an alias the call made (`p.detach()`
                # for torch.func's functional_call): the input stands for the tensor that
                # outlives the call, whose .grad and version its outputs are written to.
                entry.tensor = tensor
        return value

    def _place_from(self, tensor: Tensor, value: Value) -> None:
        """The first device tensor a trace whose call has none captures (a model's parameter
        on a GPU): the graph runs on its device, and every value made before it was made from
        CPU tensors alone, so it is one eager keeps on the CPU (trace_devices.py)."""
        self.device = tensor.device
        self.placement = Placement(self.device)
        self.placement.host_values = self._known - {id(value)}

    def bind(self, op, inputs: tuple, attrs: dict) -> Tensor:
        """The node of `op` on `inputs`, appended to the graph, as a symbolic tensor. The ops
        layer calls this with the read recorder's trace function off (ops/registry.py
        `_run`, `quiet_trace`): it runs none of the program's code."""
        operands = [self.value_of(x) if isinstance(x, Tensor) else x for x in inputs]
        if any(contains_runtime(value) for value in attrs.values()):
            # An attribute is a constant of the graph (a dim, a size, a slope): a symbolic
            # scalar there is specialized, guarded by its value.
            attrs = specialize_values(attrs)
        if any(is_runtime(x) for x in inputs):
            compute, out_dtype = op.dtype(inputs, attrs)
            operands = [self.scalars.operand(x, compute or out_dtype) if is_runtime(x) else x
                        for x in operands]
        shape, dtype = infer(op, inputs, attrs)
        value = self.graph.add_node(op, operands, attrs, shape, dtype)
        if self.placement is not None:
            self.placement.place(op, inputs, operands, value)
        if self.backward_depth:
            self.graph.backward_ids.add(value.id)
        if self.recomputing:
            self.graph.recompute_ids.add(value.id)
        elif self.checkpointing:
            self.graph.checkpoint_ids.add(value.id)
        self._known.add(id(value))
        self._locations[id(value)] = user_location()
        out = Tensor._symbolic(value)
        if op.view and isinstance(inputs[0], Tensor):
            if inputs[0]._is_conj and out._dtype.category == dtypes.COMPLEX:
                out._is_conj = True  # eager's views keep the bit (ops/registry.py)
            if inputs[0]._is_neg:
                out._is_neg = True  # and the negative bit
            # A view shares its root's storage in eager: once the root is written in place,
            # reading the view must see the new values, and a write through the view must
            # reach the root (aliasing.py).
            make_view(self, inputs[0], op, attrs, out)
        return out

    def format_tensor(self, tensor: Tensor, spec: str | None) -> str | None:
        """A token standing for `tensor` formatted (ir/printing.py), its value a "print"
        output of the graph; None when nothing collects prints (make_graph). Text that
        Python may decide on (source_uses.py) is a graph break."""
        if self.prints is None:
            return None
        if not reaches_sinks():
            where = user_location()
            raise GraphBreak("a tensor formatted into a string that is not printed (only "
                             "print(), logging, a return or a store into Python state take "
                             "each call's values)", *(where or (None, None)),
                             linecache.getline(*where).strip() if where else "",
                             needs_data=False)
        name = self.unique_output("print")
        self.graph.add_output(self.value_of(tensor), name, "print")
        history = f"grad_fn=<{tensor.grad_fn.name()}>" if tensor.grad_fn is not None else (
            "requires_grad=True" if tensor._requires_grad else "")
        return self.prints.token(name, spec, history, user_location())

    def was_written(self, tensor: Tensor) -> bool:
        """Whether the trace wrote into a concrete tensor's storage: its array no longer holds
        its value (the graph does), so Python reads it from the graph."""
        return id(tensor._payload) in self._updates

    def written_or_aliased(self, tensor: Tensor) -> bool:
        """Whether the trace wrote into a concrete tensor's memory so far (its own storage, or
        one sharing memory with it): its array no longer holds the values the graph reads."""
        key = id(tensor._payload)
        return key in self._updates or key in self._aliased or any(
            np.may_share_memory(tensor._payload, self._entries[other].tensor._payload)
            for other in self._updates)

    def note_data_read(self, tensor: Tensor, what: str) -> None:
        """A real tensor's values read in Python while tracing (Tensor._concrete)."""
        if self.written_or_aliased(tensor):
            graph_break(f"{what} of a tensor the function wrote in place (the trace would read "
                        "its old values)", needs_data=False)
        self.data_read.setdefault(id(tensor), (tensor, what))

    def format_symbolic(self, scalar, spec: str) -> str | None:
        """A token standing for a symbolic scalar (or a TracedList) formatted with `spec`,
        printed with each run's value (printing.py); None when nothing collects prints."""
        if self.prints is None:
            return None
        return self.prints.token(None, LIST_SPEC if isinstance(scalar, TracedList) else spec,
                                 "", user_location(), scalar)

    def location(self, tensor: Tensor):
        """(filename, line) of the user's code that made a symbolic tensor, if known."""
        return self._locations.get(id(tensor._value))

    def add_argument(self, entry: Input, symbolic: Tensor, array, tensor=None) -> None:
        """Register a tensor argument: its graph input, the symbolic tensor standing for it,
        and the real argument's array (and the real argument)."""
        self.real_arrays[id(symbolic)] = array
        self._argument_tensors[id(symbolic)] = tensor
        self._real_inputs[id(entry.value)] = array
        self._argument_entries[id(symbolic)] = entry

    def argument_array(self, symbolic: Tensor):
        """The real array of a symbolic tensor argument (None for any other tensor), whose
        layout eager's view decisions read: the trace depends on it, so its layout is guarded
        (eager_layout.layout_signature)."""
        array = self.real_arrays.get(id(symbolic))
        entry = self._argument_entries.get(id(symbolic))
        if entry is not None and array.__class__ is np.ndarray and array.ndim >= 2:
            self.layout_reads[id(entry.value)] = entry.value
        return array

    def argument_view(self, symbolic: Tensor):
        """The real argument a symbolic tensor argument stands for when it is a view of
        another tensor (None for any other tensor), for as_strided, which reads the base's
        storage beyond the view's elements as eager does: the trace then depends on that base
        and the view's place in it, guarded by compiler/guards.py's base_conditions."""
        entry = self._argument_entries.get(id(symbolic))
        tensor = self._argument_tensors.get(id(symbolic))
        if entry is None or tensor is None or tensor._base is None or \
                tensor._payload.__class__ is not np.ndarray:
            return None
        self.base_reads[id(entry.value)] = tensor._base
        return tensor

    def eager_layout(self, tensor: Tensor):
        """An array laid out as eager's array for `tensor` (values and dtype not eager's), for
        factories that keep a tensor's layout (zeros_like's preserve_format); None for a
        tensor that is not a value of this graph (a batched one inside vmap)."""
        if tensor._batched or id(tensor._value) not in self._known:
            return None
        return stand_in_of(tensor, self)

    def note_eager_layout(self, tensor: Tensor, order) -> None:
        """`tensor`, a value this call computed, is one eager lays out with its dims in `order`
        (outermost first; None: row-major) whatever its operands' layout: a copy made in a
        layout of its own (contiguous()), an op whose trace records primitives that follow
        their operands' layout where eager's routine does not (softmax). Other values are
        laid out by the walk of eager_layout.py."""
        value = tensor._value
        if value is None or value.producer is None or id(value) not in self._known:
            return
        stand_in = None
        if order is not None:
            stand_in = laid_out(np.empty(tuple(getattr(extent, "hint", extent)
                                               for extent in value.shape), np.uint8), order)
        self.eager_layouts[id(value)] = None if stand_in is None or \
            stand_in.flags.c_contiguous else stand_in

    def alias(self, source: Tensor, alias: Tensor) -> None:
        """`alias` (detach(), .data of a symbolic tensor) shares all of source's storage."""
        make_alias(self, source, alias)

    def root_value(self, root: Tensor):
        """The graph value a view's root holds now."""
        if root._payload is None:
            return root._value
        return self._current.get(id(root._payload))

    def _refreshed_view(self, tensor: Tensor) -> Value:
        """The view's value, made again from its source if its root was written since."""
        link = tensor._traced_view
        current = self.root_value(link.root)
        if current is link.root_value:
            return tensor._value
        source = self.value_of(link.source)
        if link.op is None:
            value = source
        else:
            value = self.graph.add_node(link.op, [source], link.attrs, tensor._value.shape,
                                        tensor._value.dtype)
            self._known.add(id(value))
        tensor._value = value
        link.root_value = current
        return value

    def unique_output(self, name: str) -> str:
        taken = {output.name for output in self.graph.outputs} | self.reserved_outputs
        # From the suffix last given for `name`: reads of many values ask for one name often.
        suffix = self._output_suffixes.get(name, 0)
        candidate = name if suffix == 0 else f"{name}_{suffix}"
        while candidate in taken:
            suffix += 1
            candidate = f"{name}_{suffix}"
        self._output_suffixes[name] = suffix
        return candidate

    def restore(self) -> None:
        """Put every real tensor the trace touched back as it was."""
        # Newest first: of tensors sharing a version counter, the first one seen holds the
        # counter's value from before the trace, and must be the one restored last.
        for touched in reversed(list(self._touched.values())):
            touched.restore()
