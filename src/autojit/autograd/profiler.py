"""The autograd profiler: times every op, backward node and user range while it is active.

    with autojit.autograd.profiler.profile(record_shapes=True) as prof:
        loss = model(x).sum()
        loss.backward()
    print(prof.key_averages().table(sort_by="self_cpu_time_total"))
    prof.export_chrome_trace("trace.json")

Where it sits in the flow: `profile` makes itself `state.profiler` (thread-local) for the
duration of the `with` block. The public functions, methods and operators hand each call to
`forward_event` under torch's name ("aten::linear": tensor/torch_function.py switches its
wrappers on while a profiler runs), ops.registry.bind hands it each primitive the call runs
(named "autojit::<op>"), and the engine hands each backward node to `backward_event` (named
like the node, "MulBackward0", "torch::autograd::AccumulateGrad", inside torch's
"autograd::engine::evaluate_function: MulBackward0"). When no profiler is active, bind and the
engine pay one `is None` test and nothing else. Events nest by a stack: an op run inside a
backward node or a `record_function` range is that event's child, so an event's self time is
its total time minus its children's.

Forward and backward are tied by sequence numbers, as torch's emit_nvtx describes: an op that
created an autograd node carries that node's `sequence_nr`, and the node's backward event
carries the same number (AccumulateGrad and ops that created no node carry -1). Under
`create_graph=True` the ops a backward node runs create nodes of their own and carry their
numbers, which the double backward's events carry in turn.

Other producers of events (the compiler reports each compiled kernel it runs) use
`profile.record_event(name, start_ns, end_ns, input_shapes=None)`, with times from
`time.perf_counter_ns()`, on the active profiler:

    profiler = state.profiler
    if profiler is not None:
        profiler.record_event("kernel fused_add_mul", start_ns, end_ns, [[256, 10]])

The event becomes a child of the innermost open range (the op or node that ran the kernel).
Results are formatted by profiler_util.py (EventList, tables, Chrome trace).
"""

from __future__ import annotations

import functools
import sys
import threading
import time
import traceback
from pathlib import Path

import numpy as np

from ..ops.aten_namespace import define_builtin
from ..tensor import torch_function
from ..tensor.dtypes import c_type_name
from ..tensor.state import state
from ..tensor.tensor import Tensor
from .nodes import AccumulateGrad
from .profiler_util import EventList, FunctionEvent, FunctionEventAvg, Interval

__all__ = ["profile", "record_function", "emit_nvtx", "emit_itt", "EventList", "FunctionEvent",
           "FunctionEventAvg"]

_clock = time.perf_counter_ns
_PACKAGE_ROOT = str(Path(__file__).resolve().parents[1])
_UNFINISHED = "Profiler didn't finish running"


class profile:
    """Context manager that records the cost of autojit ops, forward and backward.

    Args:
        enabled: False makes the context manager a no-op (it records nothing).
        record_shapes: record the shapes of each op's inputs (`Input Shapes`, `Input Dims`).
        with_stack: record the user's source location of each op (`Source Location`).

        profile_memory: record the bytes of host memory each op's results newly hold
            (`CPU Mem`, `Self CPU Mem`); memory freed is not counted.

    The other keyword arguments of torch's profiler are accepted for compatibility: `use_cuda`,
    `use_device` and `use_cpu` (times are CPU times), and `with_flops`, `with_modules`,
    `use_kineto`, `experimental_config`, `acc_events`, `custom_trace_id_callback`, which are
    ignored.

    Only the thread that entered the profiler is recorded (the profiler state is
    thread-local); entering a second profiler on the same thread raises.
    """

    def __init__(self, enabled=True, *, use_cuda=False, use_device=None, record_shapes=False,
                 with_flops=False, profile_memory=False, with_stack=False, with_modules=False,
                 use_kineto=False, use_cpu=True, experimental_config=None, acc_events=False,
                 custom_trace_id_callback=None, post_processing_timeout_s=None,
                 activity_filters=None):
        self.enabled = enabled
        self.use_cuda = use_cuda
        self.use_device = use_device
        self.record_shapes = record_shapes
        self.with_stack = with_stack
        self.profile_memory = profile_memory
        self.with_flops = with_flops
        self.entered = False
        self._function_events = None
        self._events: list = []
        self._stack: list = []
        self._next_id = 1
        self._start_ns = 0
        self._wall_start_ns = 0  # time.time_ns() when it started: the trace's base time
        self._thread = 0
        self._finished = False

    # ---- context manager ------------------------------------------------------------------

    def __enter__(self):
        if not self.enabled:
            # torch returns None here; the profiler itself, with no events, is more useful
            # and behaves the same in a `with` block that ignores it.
            self._function_events = EventList()
            return self
        if self.entered:
            raise RuntimeError("Profiler context manager is not reentrant")
        if state.profiler is not None:
            raise RuntimeError("Profiler is already enabled on this thread")
        self.entered = True
        self._thread = threading.get_native_id()
        self._wall_start_ns = time.time_ns()
        self._start_ns = _clock()
        state.profiler = self
        torch_function.start_profiling()  # public calls are events too (aten::linear)
        return self

    def __exit__(self, exc_type, exc_value, exc_traceback):
        if not self.enabled:
            return False
        end = _clock()
        if state.profiler is self:
            state.profiler = None
        torch_function.stop_profiling()
        # Ranges still open (a record_function entered inside and left outside) end here.
        for event in self._stack:
            event.time_range.end = end
        self._stack.clear()
        self._finished = True
        self._function_events = self._finish_events()
        return False

    def _finish_events(self) -> EventList:
        """Turn the recorded nanosecond clocks into microseconds since the profiler started."""
        origin = self._start_ns
        for event in self._events:
            if event.name.startswith("ProfilerStep#"):
                # torch's names: one wildcard name groups the steps in tables; the trace
                # keeps each step's own.
                event.trace_name, event.name = event.name, "ProfilerStep*"
            span = event.time_range
            event.time_range = Interval((span.start - origin) / 1000.0,
                                        (span.end - origin) / 1000.0)
        events = sorted(self._events, key=lambda e: (e.time_range.start, -e.time_range.end))
        for event in events:
            event.cpu_children.sort(key=lambda e: e.time_range.start)
        self._events = []
        return EventList(events, profile_memory=self.profile_memory,
                         base_time_ns=self._wall_start_ns)

    # ---- recording (called by bind, the engine, record_function and the compiler) --------

    def forward_event(self, name: str, inputs, run):
        """Time `run()`, an op applied to `inputs`; returns what run() returns."""
        shapes = dtypes = None
        if self.record_shapes:
            shapes = [_shape_of(x) for x in inputs]
            dtypes = [c_type_name(x.dtype) if isinstance(x, Tensor) else "Scalar" for x in inputs]
        # Which nodes existed before the call: the result's node counts as created by this
        # call only when it is none of them (a custom Function may return an input as is).
        before = [x.grad_fn for x in inputs if isinstance(x, Tensor)]
        event = self._open(name, shapes, dtypes)
        event.fwd_thread = 0  # (torch's: a backward node's event names its forward's thread)
        try:
            out = run()
        finally:
            self._close(event)
        event.sequence_nr = _created_sequence_nr(out, before)
        if self.profile_memory:
            event.self_allocated = _allocated_bytes(out, inputs)
        return out

    def backward_event(self, node, run):
        """Time `run()`, the backward node `node` applied to its gradients: as torch's engine,
        an event named "autograd::engine::evaluate_function: <node>" around the node's own.
        Both carry the node's sequence number and, as `fwd_thread`, the thread its forward
        ran on (this thread: the profiler records one) where it has a forward op."""
        name = node.name()
        sequence_nr = -1 if isinstance(node, AccumulateGrad) else node.sequence_nr
        outer = self._open(f"autograd::engine::evaluate_function: {name}", None, None,
                           with_stack=False)
        event = self._open(name, None, None, with_stack=False)
        for opened in (outer, event):
            opened.is_backward = True
            opened.sequence_nr = sequence_nr
            opened.fwd_thread = self._thread if sequence_nr >= 0 else 0
        try:
            return run()
        finally:
            self._close(event)
            self._close(outer)

    def record_event(self, name: str, start_ns: int, end_ns: int, input_shapes=None, *,
                     sequence_nr: int = -1, category: str = "kernel") -> FunctionEvent:
        """Add an event timed elsewhere (a compiled kernel), with `time.perf_counter_ns()`
        times; it nests under the innermost range open now."""
        if end_ns < start_ns:
            raise ValueError(f"profile.record_event: event {name!r} ends ({end_ns}) before "
                             f"it starts ({start_ns})")
        event = FunctionEvent(self._next_id, name, self._thread, start_ns, end_ns,
                              input_shapes=input_shapes, sequence_nr=sequence_nr,
                              category=category)
        self._next_id += 1
        if self._finished:
            return event
        if self._stack:
            parent = self._stack[-1]
            parent.cpu_children.append(event)
            event.cpu_parent = parent
        self._events.append(event)
        return event

    def _open(self, name: str, shapes, dtypes, *, user_range: bool = False,
              with_stack: bool = True) -> FunctionEvent:
        stack = _user_stack() if self.with_stack and with_stack else None
        event = FunctionEvent(self._next_id, name, self._thread, 0, 0, input_shapes=shapes,
                              input_dtypes=dtypes, is_user_annotation=user_range, stack=stack,
                              category="user_annotation" if user_range else "cpu_op")
        self._next_id += 1
        if self._stack:
            parent = self._stack[-1]
            parent.cpu_children.append(event)
            event.cpu_parent = parent
        self._events.append(event)
        self._stack.append(event)
        # Read the clock last so that the bookkeeping above is not counted in the event.
        event.time_range.start = _clock()
        return event

    def _close(self, event: FunctionEvent) -> None:
        end = _clock()
        if self._finished:
            return
        event.time_range.end = end
        stack = self._stack
        # Pop down to this event: a range closed out of order closes the ones above it too.
        while stack:
            top = stack.pop()
            if top is event:
                break
            top.time_range.end = end

    # ---- results --------------------------------------------------------------------------

    def _results(self) -> EventList:
        if self._function_events is None:
            raise RuntimeError(_UNFINISHED)
        return self._function_events

    @property
    def function_events(self) -> EventList:
        return self._results()

    def events(self) -> EventList:
        return self._results()

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None) -> str:
        return self._results().table(
            sort_by=sort_by, row_limit=row_limit, max_src_column_width=max_src_column_width,
            max_name_column_width=max_name_column_width,
            max_shapes_column_width=max_shapes_column_width, header=header,
            top_level_events_only=top_level_events_only, time_unit=time_unit)

    table.__doc__ = EventList.table.__doc__

    def key_averages(self, group_by_input_shape=False, group_by_stack_n=0,
                     group_by_overload_name=False) -> EventList:
        return self._results().key_averages(group_by_input_shape, group_by_stack_n,
                                            group_by_overload_name)

    key_averages.__doc__ = EventList.key_averages.__doc__

    def total_average(self) -> FunctionEventAvg:
        return self._results().total_average()

    total_average.__doc__ = EventList.total_average.__doc__

    @property
    def self_cpu_time_total(self) -> float:
        """The sum of all events' self CPU times, in microseconds."""
        return self._results().self_cpu_time_total

    def export_chrome_trace(self, path, metadata=None, use_python_export=False) -> None:
        """Write the events to `path` as a Chrome trace (chrome://tracing, Perfetto), with the
        entries of `metadata` at its top level; gzipped when `path` ends in ".gz"."""
        self._results().export_chrome_trace(path, metadata)

    def export_stacks(self, path, metric: str = "self_cpu_time_total") -> None:
        """Write the stacks recorded with `with_stack=True` for a flame graph, one line per
        event: its frames, outermost first, joined by ";", and the metric's value."""
        self._results().export_stacks(path, metric)

    def __str__(self):
        if self._function_events is None:
            return "<unfinished autojit.autograd.profile>"
        return str(self._function_events)

    def __repr__(self):
        if self._function_events is None:
            return "<unfinished autojit.autograd.profile>"
        return repr(self._function_events)


# ir/printing.py installs its `defer(function, args, kwargs)` here: while a function is traced
# on this thread it makes the call an effect of the executable, which each run makes again.
DEFER = None


class _ReplayedRange:
    """A record_function range met while a function was traced: each run of its executable
    opens it (in the profiler active then, if any) and closes it again, in the order of the
    function's other effects."""

    __slots__ = ("name", "args", "_open")

    def __init__(self, name: str, args):
        self.name, self.args, self._open = name, args, []

    def open(self) -> None:
        profiler = state.profiler
        event = None
        if profiler is not None:
            event = profiler._open(self.name, None, None, user_range=True)
            event.record_args = self.args
        self._open.append((profiler, event))

    def close(self) -> None:
        if self._open:
            profiler, event = self._open.pop()
            if event is not None:
                profiler._close(event)


class record_function:
    """Context manager and decorator that marks a range of user code as one profiler event.

    The ops run inside the range become its children. With no active profiler it does
    nothing. `args` is kept on the event (`event.record_args`) and shown nowhere else. Inside a
    function being traced (autojit.compile, torch.jit.trace) the range is an effect of the
    executable: each call opens and closes it in the profiler active then (the compiled
    call's ops are not its children).
    """

    def __init__(self, name: str, args: str | None = None):
        self.name = name
        self.args = args
        self._profiler = None
        self._event = None
        self._replayed = None

    def __enter__(self):
        if state.tracer is not None and DEFER is not None:
            replayed = _ReplayedRange(self.name, self.args)
            if DEFER(replayed.open, (), {}):
                self._replayed = replayed
                return self
        profiler = state.profiler
        if profiler is not None:
            self._profiler = profiler
            self._event = profiler._open(self.name, None, None, user_range=True)
            self._event.record_args = self.args
        return self

    def __exit__(self, exc_type, exc_value, exc_traceback):
        if self._replayed is not None:
            if not DEFER(self._replayed.close, (), {}):
                self._replayed.close()  # (the trace ended inside the range)
            self._replayed = None
        if self._event is not None:
            self._profiler._close(self._event)
            self._profiler = self._event = None
        return False

    def __call__(self, function):
        # A fresh range per call, so that recursive and concurrent calls each get their own.
        @functools.wraps(function)
        def wrapper(*args, **kwargs):
            with record_function(self.name, self.args):
                return function(*args, **kwargs)

        return wrapper


# ---- helpers ----------------------------------------------------------------------------------

class emit_nvtx:  # noqa: N801 - torch's name
    """Accepted for torch's API, and runs its block as it is: NVIDIA's profilers read NVTX
    ranges, which autojit does not emit (its CUDA kernels are launched through Numba). Use
    `profile` for autojit's own timings."""

    def __init__(self, enabled: bool = True, record_shapes: bool = False):
        self.enabled, self.record_shapes = enabled, record_shapes

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class emit_itt(emit_nvtx):  # noqa: N801 - torch's name
    """Accepted for torch's API, and runs its block as it is: Intel's VTune reads ITT ranges,
    which autojit does not emit (`torch.profiler.itt.is_available()` is False)."""


def _shape_of(value) -> list:
    if isinstance(value, Tensor):
        # .shape works for symbolic tensors while tracing too.
        return [int(extent) for extent in value.shape]
    return []


def _allocated_bytes(out, inputs) -> int:
    """The bytes of host memory an op's results newly hold: profile_memory's measure. A result
    sharing memory with an input (a view) holds none."""
    results = out if isinstance(out, (tuple, list)) else (out,)
    operands = [x._payload for x in inputs if isinstance(x, Tensor) and x._payload is not None]
    total = 0
    for result in results:
        data = result._payload if isinstance(result, Tensor) else None
        if data is None or not hasattr(data, "nbytes") or \
                any(np.may_share_memory(data, operand) for operand in operands):
            continue
        total += data.nbytes
    return total


def _created_sequence_nr(out, before: list) -> int:
    if isinstance(out, (tuple, list)):
        candidates = [x for x in out if isinstance(x, Tensor)]
    else:
        candidates = [out] if isinstance(out, Tensor) else []
    for tensor in candidates:
        node = tensor.grad_fn
        if node is not None and all(node is not old for old in before):
            return node.sequence_nr
    return -1


def _user_stack() -> list:
    """The calling user code's frames, innermost first, as torch prints them: file(line): fn."""
    frames = traceback.extract_stack(sys._getframe(2))
    return [f"{frame.filename}({frame.lineno}): {frame.name}" for frame in reversed(frames)
            if not frame.filename.startswith(_PACKAGE_ROOT)]


# ---- torch.ops.profiler ---------------------------------------------------------------------

def _record_function_enter(name: str, args: str | None = None) -> record_function:
    """torch.ops.profiler._record_function_enter(_new): a record_function range opened, its
    handle given to _record_function_exit to close it (the operators torch's record_function
    is built on, which code written before the context manager calls)."""
    handle = record_function(name, args)
    handle.__enter__()
    return handle


def _record_function_exit(handle: record_function) -> None:
    if not isinstance(handle, record_function):
        raise TypeError(f"_record_function_exit() expected the handle _record_function_enter "
                        f"returned, got {type(handle).__name__}")
    handle.__exit__(None, None, None)


define_builtin("profiler", "_record_function_enter", default=_record_function_enter)
define_builtin("profiler", "_record_function_enter_new", default=_record_function_enter)
define_builtin("profiler", "_record_function_exit", default=_record_function_exit,
               _RecordFunction=_record_function_exit)
