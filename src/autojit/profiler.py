"""autojit.profiler: torch.profiler's API (profile with activities, a schedule and
on_trace_ready, record_function, ProfilerActivity, schedule, tensorboard_trace_handler) on
autograd's profiler.

    with autojit.profiler.profile(activities=[ProfilerActivity.CPU],
                                  schedule=schedule(wait=1, warmup=1, active=2),
                                  on_trace_ready=tensorboard_trace_handler("./log")) as prof:
        for batch in loader:
            train_step(batch)
            prof.step()

Where it sits: each recording cycle of the schedule is one autograd.profiler.profile
(autograd/profiler.py), entered when the cycle's active steps begin and left when they end; ops,
backward nodes and record_function ranges become its events, and a "ProfilerStep#N" range
marks each step. When a cycle ends, on_trace_ready gets this profiler, whose events,
key_averages() and export_chrome_trace() are the cycle's (profiler_util.py formats them).
"""

from __future__ import annotations

import enum
import os
import socket
import time
import warnings

from . import cuda
from .autograd.profiler import profile as _autograd_profile
from .autograd.profiler import record_function

__all__ = ["profile", "schedule", "supported_activities", "tensorboard_trace_handler",
           "ProfilerAction", "ProfilerActivity", "kineto_available", "record_function"]


class ProfilerActivity(enum.Enum):
    """What a profiler collects: torch's activity groups. autojit measures CPU time; see
    `profile`."""

    CPU = 0
    XPU = 1
    MTIA = 2
    CUDA = 3
    HPU = 4
    PrivateUse1 = 5

    def __repr__(self) -> str:
        return f"<ProfilerActivity.{self.name}: {self.value}>"

    def __str__(self) -> str:
        return f"ProfilerActivity.{self.name}"


class ProfilerAction(enum.Enum):
    """What a schedule asks of the profiler at a step."""

    NONE = 0
    WARMUP = 1
    RECORD = 2
    RECORD_AND_SAVE = 3


def supported_activities() -> set:
    """The activities autojit's profiler collects: the CPU's."""
    return {ProfilerActivity.CPU}


def kineto_available() -> bool:
    """False: autojit's profiler is its own, not Kineto."""
    return False


def schedule(*, wait: int, warmup: int, active: int, repeat: int = 0, skip_first: int = 0,
             skip_first_wait: int = 0):
    """A profiler schedule: after `skip_first` steps, cycles of `wait` idle steps, `warmup`
    steps and `active` recorded steps (the last one saves: on_trace_ready runs), `repeat`
    times (0: until profiling ends). With `skip_first_wait`, the first cycle has no wait."""

    def schedule_fn(step: int) -> ProfilerAction:
        if step < 0:
            raise AssertionError(f"Step must be non-negative. Got {step}.")
        if step < skip_first:
            return ProfilerAction.NONE
        step -= skip_first
        if skip_first_wait != 0:
            step += wait
        cycle = wait + warmup + active
        if repeat > 0 and step / cycle >= repeat:
            return ProfilerAction.NONE
        position = step % cycle
        if position < wait:
            return ProfilerAction.NONE
        if position < wait + warmup:
            return ProfilerAction.WARMUP
        return ProfilerAction.RECORD if position < cycle - 1 else ProfilerAction.RECORD_AND_SAVE

    if wait < 0 or warmup < 0 or active <= 0 or repeat < 0 or skip_first < 0:
        raise AssertionError(
            f"Invalid profiler schedule arguments. Got wait={wait} (need >= 0), warmup={warmup} "
            f"(need >= 0), active={active} (need > 0), repeat={repeat} (need >= 0), "
            f"skip_first={skip_first} (need >= 0).")
    if warmup == 0:
        warnings.warn("Profiler won't be using warmup, this can skew profiler results",
                      stacklevel=2)
    return schedule_fn


def _record_always(step: int) -> ProfilerAction:
    return ProfilerAction.RECORD


def tensorboard_trace_handler(dir_name: str, worker_name: str | None = None,
                              use_gzip: bool = False, use_python_export: bool = False):
    """An on_trace_ready handler that writes each cycle's Chrome trace into `dir_name`, as
    `<worker_name>.<time in ns>.pt.trace.json` (`.gz` with use_gzip), which TensorBoard's
    profiler plugin and Perfetto read; `worker_name` is "<hostname>_<pid>" by default."""

    def handler_fn(prof) -> None:
        nonlocal worker_name
        if not os.path.isdir(dir_name):
            try:
                os.makedirs(dir_name, exist_ok=True)
            except Exception as error:
                raise RuntimeError("Can't create directory: " + dir_name) from error
        if not worker_name:
            worker_name = f"{socket.gethostname()}_{os.getpid()}"
        file_name = f"{worker_name}.{time.time_ns()}.pt.trace.json"
        if use_gzip:
            file_name += ".gz"
        prof.export_chrome_trace(os.path.join(dir_name, file_name))

    return handler_fn


_warned_cycles = False  # torch warns once that events are cleared at each cycle


class profile:  # noqa: N801 - torch's name
    """torch.profiler.profile: a context manager recording the ops, backward nodes and
    record_function ranges of the thread that enters it, in the cycles `schedule` asks for
    (every step is recorded without one); `step()` marks the end of a training step.

    Times are CPU times of the entering thread (ProfilerActivity.CUDA is accepted; device
    kernels are not timed apart). `record_shapes`, `with_stack` and `profile_memory` are
    autograd.profiler.profile's; `with_flops` and `with_modules` are accepted and add nothing.
    """

    def __init__(self, *, activities=None, schedule=None, on_trace_ready=None,
                 record_shapes: bool = False, profile_memory: bool = False,
                 with_stack: bool = False, with_flops: bool = False, with_modules: bool = False,
                 experimental_config=None, execution_trace_observer=None,
                 acc_events: bool = False, use_cuda: bool | None = None,
                 custom_trace_id_callback=None, post_processing_timeout_s=None) -> None:
        self.activities = _parse_activities(activities, use_cuda)
        self.record_shapes, self.profile_memory = record_shapes, profile_memory
        self.with_stack, self.with_flops, self.with_modules = with_stack, with_flops, with_modules
        self.experimental_config = experimental_config
        self.execution_trace_observer = execution_trace_observer
        self.acc_events = acc_events
        self.custom_trace_id_callback = custom_trace_id_callback
        self.use_device = "cuda" if ProfilerActivity.CUDA in self.activities else None
        self.schedule = schedule or _record_always
        self.record_steps = schedule is not None
        self.on_trace_ready = on_trace_ready
        self.step_num = 0
        self.step_rec_fn = None
        self.profiler = None  # the autograd profiler of the current (or last) cycle
        self._previous_events: list = []  # with acc_events: the events of earlier cycles
        self._metadata: dict = {}
        self.current_action = self.schedule(self.step_num)

    # ---- the cycle's state machine (torch's transitions) --------------------------------

    def _transit(self, previous, current) -> None:
        """What moving from one schedule action to the next does: torch's table."""
        for action in self._actions(previous, current):
            action()

    def _actions(self, previous, current) -> list:
        none, warmup = ProfilerAction.NONE, ProfilerAction.WARMUP
        record, save = ProfilerAction.RECORD, ProfilerAction.RECORD_AND_SAVE
        prepare, start, stop, ready = (self.prepare_trace, self.start_trace, self.stop_trace,
                                       self._trace_ready)

        def warn(text):
            return lambda: warnings.warn(text, stacklevel=5)

        if previous == none:
            return {warmup: [prepare], record: [prepare, start], save: [prepare, start]}.get(
                current, [])
        if previous == warmup:
            return {none: [warn("Incorrect schedule: WARMUP followed by NONE"), start, stop],
                    record: [start], save: [start], None: [start, stop]}.get(current, [])
        if previous == record:
            return {none: [warn("Incorrect schedule: RECORD followed by NONE"), stop],
                    warmup: [warn("Incorrect schedule: RECORD followed by WARMUP"), stop],
                    None: [stop, ready]}.get(current, [])
        return {none: [stop, ready], warmup: [stop, ready, prepare],
                record: [stop, ready, prepare, start], save: [stop, ready, prepare, start],
                None: [stop, ready]}[current]

    def prepare_trace(self) -> None:
        global _warned_cycles
        if self.profiler is not None and not self.acc_events and not _warned_cycles:
            _warned_cycles = True
            warnings.warn("Warning: Profiler clears events at the end of each cycle. Only "
                          "events from the current cycle will be reported. To keep events "
                          "across cycles, set acc_events=True.", stacklevel=4)
        if self.profiler is not None and self.acc_events:
            self._previous_events += list(self.profiler.function_events)
        self.profiler = _autograd_profile(record_shapes=self.record_shapes,
                                          profile_memory=self.profile_memory,
                                          with_stack=self.with_stack,
                                          with_flops=self.with_flops)

    def start_trace(self) -> None:
        self.profiler.__enter__()
        for flag in ("profile_memory", "with_stack", "record_shapes", "with_modules",
                     "with_flops"):
            if getattr(self, flag):
                self._metadata[flag] = 1

    def stop_trace(self) -> None:
        self.profiler.__exit__(None, None, None)

    def _trace_ready(self) -> None:
        if self.on_trace_ready:
            self.on_trace_ready(self)

    # ---- the public steps ------------------------------------------------------------------

    def start(self) -> None:
        self._transit(ProfilerAction.NONE, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function(f"ProfilerStep#{self.step_num}")
            self.step_rec_fn.__enter__()

    def stop(self) -> None:
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        self._transit(self.current_action, None)

    def step(self) -> None:
        """Signal that the next profiling step has started."""
        if self.record_steps and self.step_rec_fn:
            self.step_rec_fn.__exit__(None, None, None)
            self.step_rec_fn = None
        previous = self.current_action
        self.step_num += 1
        self.current_action = self.schedule(self.step_num)
        self._transit(previous, self.current_action)
        if self.record_steps:
            self.step_rec_fn = record_function(f"ProfilerStep#{self.step_num}")
            self.step_rec_fn.__enter__()

    def __enter__(self):
        self.start()
        return self

    def __exit__(self, exc_type, exc_value, traceback) -> None:
        self.stop()

    # ---- results -------------------------------------------------------------------------

    def _results(self, what: str):
        if self.profiler is None:
            raise AssertionError(f"Profiler must be initialized before {what}")
        events = self.profiler.function_events
        if self._previous_events:
            events = type(events)(self._previous_events + list(events),
                                  profile_memory=self.profile_memory,
                                  base_time_ns=events._base_time_ns)
        return events

    def events(self):
        """The recorded events (FunctionEvents) of the last cycle (all cycles with
        acc_events)."""
        return self._results("getting events")

    def key_averages(self, group_by_input_shape: bool = False, group_by_stack_n: int = 0,
                     group_by_overload_name: bool = False):
        """The events averaged by name (and input shapes, and stack), as an EventList whose
        table() prints torch's summary."""
        return self._results("getting key averages").key_averages(
            group_by_input_shape, group_by_stack_n, group_by_overload_name)

    def export_chrome_trace(self, path: str, use_python_export: bool = False) -> None:
        """Write the last cycle's events as a Chrome trace JSON file (gzipped for ".gz")."""
        self._results("exporting chrome trace").export_chrome_trace(path, self._metadata)

    def export_stacks(self, path: str, metric: str = "self_cpu_time_total") -> None:
        """Write the stacks recorded with with_stack=True for a flame graph."""
        self._results("exporting stacks").export_stacks(path, metric)

    def add_metadata(self, key: str, value: str) -> None:
        """Add a string entry to the top level of the exported trace."""
        self._metadata[key] = value

    def add_metadata_json(self, key: str, value: str) -> None:
        """Add an entry, given as JSON text, to the top level of the exported trace."""
        import json

        self._metadata[key] = json.loads(value)

    def set_custom_trace_id_callback(self, callback) -> None:
        self.custom_trace_id_callback = callback

    def get_trace_id(self):
        """The trace id of the current cycle: autojit's traces have none (None)."""
        return None


def _parse_activities(activities, use_cuda) -> set:
    if activities is None:
        parsed = supported_activities()
    else:
        parsed = set()
        for item in activities:
            keys = list(item) if isinstance(item, dict) else [item]
            for key in keys:
                if not isinstance(key, ProfilerActivity):
                    raise TypeError(f"Expected ProfilerActivity or dict, got {type(item)}")
                if key in parsed:
                    raise ValueError(f"Activity {key} specified more than once")
                parsed.add(key)
    if use_cuda is not None:
        warnings.warn("`use_cuda` is deprecated, use `activities` argument instead",
                      FutureWarning, stacklevel=3)
        (parsed.add if use_cuda else parsed.discard)(ProfilerActivity.CUDA)
    if ProfilerActivity.CUDA in parsed and not cuda.is_available():
        warnings.warn("CUDA is not available, disabling CUDA profiling", stacklevel=3)
        parsed.discard(ProfilerActivity.CUDA)
    if not parsed:
        raise AssertionError("No activities specified for the profiler")
    return parsed


def _itt_module():
    """torch.profiler.itt: Intel ITT range markers. autojit emits none, so is_available() is
    False and the markers do nothing, as torch's do in a build without ITT."""
    import sys
    import types

    module = types.ModuleType(__name__ + ".itt", _itt_module.__doc__)
    module.is_available = lambda: False
    module.range_push = lambda msg: None
    module.range_pop = lambda: None
    module.mark = lambda msg: None

    def range(msg, *args, **kwargs):  # noqa: A001 - torch's name
        import contextlib
        return contextlib.nullcontext()
    module.range = range
    sys.modules[module.__name__] = module
    return module


itt = _itt_module()
