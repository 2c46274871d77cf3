"""What the profiler reports: events, their averages, the summary table and the Chrome trace.

autograd/profiler.py records one FunctionEvent per op, backward node or user range while a
`profile` is active; this module holds those events once recorded and formats them, with
torch.autograd.profiler_util's names: EventList (a list of events with `table`,
`key_averages`, `total_average`, `export_chrome_trace`), FunctionEvent and FunctionEventAvg.
Times are microseconds (floats), measured on the CPU; device columns are accepted by name and
read zero.
"""

from __future__ import annotations

import gzip
import json
import os
from collections import defaultdict

SORT_KEYS = ("cpu_time", "cpu_time_total", "self_cpu_time_total", "count", "cuda_time",
             "cuda_time_total", "self_cuda_time_total", "device_time", "device_time_total",
             "self_device_time_total")


class Interval:
    """A start and an end time in microseconds since the profiler started."""

    __slots__ = ("start", "end")

    def __init__(self, start: float, end: float):
        self.start = start
        self.end = end

    def elapsed_us(self) -> float:
        return self.end - self.start

    def __repr__(self):
        return f"Interval(start={self.start:.3f}, end={self.end:.3f})"


class _TimeColumns:
    """Formatted views of the times; shared by events and their averages."""

    # Device times: this profiler measures the CPU only, so they are zero; they exist so
    # that code sorting or reading by torch's device keys keeps working.
    cuda_time = cuda_time_total = self_cuda_time_total = 0.0
    device_time = device_time_total = self_device_time_total = 0.0
    cuda_memory_usage = self_cuda_memory_usage = 0
    device_memory_usage = self_device_memory_usage = 0
    flops = 0
    is_async = False
    is_remote = False
    is_legacy = False
    node_id = -1
    overload_name = ""
    use_device = None

    @property
    def cpu_time_str(self) -> str:
        return format_time(self.cpu_time)

    @property
    def cpu_time_total_str(self) -> str:
        return format_time(self.cpu_time_total)

    @property
    def self_cpu_time_total_str(self) -> str:
        return format_time(self.self_cpu_time_total)


EVALUATE_FUNCTION = "autograd::engine::evaluate_function: "  # the engine's event per node


class FunctionEvent(_TimeColumns):
    """One timed range: an op, a backward node, a user range or a compiled kernel.

    `sequence_nr` ties forward and backward together: an op that created an autograd node
    carries that node's number, the node's backward event carries the same number; events
    that created no node, and AccumulateGrad, carry -1.
    """

    count = 1
    is_backward = False  # set on the events of backward nodes
    record_args = None  # record_function's `args`
    self_allocated = 0  # with profile_memory: the bytes its own results newly hold
    trace_name = None  # the name in a Chrome trace where it is not `name` ("ProfilerStep#3")

    def __init__(self, id: int, name: str, thread: int, start_us: float, end_us: float,
                 input_shapes=None, input_dtypes=None, sequence_nr: int = -1,
                 is_user_annotation: bool = False, stack=None, category: str = "cpu_op", *,
                 node_id: int = -1, overload_name=None, fwd_thread=None, scope: int = 0,
                 is_async: bool = False, is_remote: bool = False, flops=None,
                 trace_name=None):
        # node_id ... trace_name: torch's FunctionEvent's fields that code making events
        # passes (a distributed node's id, an aten overload, ...), kept as given.
        self.node_id, self.overload_name, self.fwd_thread = node_id, overload_name, fwd_thread
        self.scope, self.is_async, self.is_remote, self.flops = scope, is_async, is_remote, flops
        if trace_name is not None:
            self.trace_name = trace_name
        self.id = id
        self.name = name
        self.thread = thread
        self.time_range = Interval(start_us, end_us)
        self.input_shapes = input_shapes if input_shapes is not None else []
        self.input_dtypes = input_dtypes if input_dtypes is not None else []
        self.sequence_nr = sequence_nr
        self.is_user_annotation = is_user_annotation
        self.stack = stack if stack is not None else []
        self.category = category
        self.cpu_children: list = []
        self.cpu_parent = None

    @property
    def key(self) -> str:
        return self.name

    def append_cpu_child(self, child: FunctionEvent) -> None:
        self.cpu_children.append(child)

    def set_cpu_parent(self, parent: FunctionEvent) -> None:
        self.cpu_parent = parent

    @property
    def cpu_time_total(self) -> float:
        return self.time_range.elapsed_us()

    @property
    def self_cpu_time_total(self) -> float:
        return self.cpu_time_total - sum(child.cpu_time_total for child in self.cpu_children)

    @property
    def cpu_time(self) -> float:
        return self.cpu_time_total

    @property
    def cpu_memory_usage(self) -> int:
        """The bytes allocated while it ran, its children's included (profile_memory)."""
        return self.self_allocated + sum(child.cpu_memory_usage for child in self.cpu_children)

    @property
    def self_cpu_memory_usage(self) -> int:
        return self.self_allocated

    def __repr__(self):
        return (f"<FunctionEvent id={self.id} name={self.name} cpu_time={self.cpu_time_str} "
                f"start_us={self.time_range.start:.3f} end_us={self.time_range.end:.3f} "
                f"cpu_children={[child.id for child in self.cpu_children]} "
                f"thread={self.thread} input_shapes={self.input_shapes} "
                f"seq_nr={self.sequence_nr}>")


class FunctionEventAvg(_TimeColumns):
    """The sum of the events sharing a key (a name, or a name and input shapes)."""

    def __init__(self):
        self.key = None
        self.count = 0
        self.cpu_time_total = 0.0
        self.self_cpu_time_total = 0.0
        self.cpu_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.input_shapes = None
        self.is_user_annotation = False
        self.stack = None
        self.cpu_parent = None
        self.cpu_children = None

    def add(self, other) -> FunctionEventAvg:
        if not isinstance(other, (FunctionEvent, FunctionEventAvg)):
            raise TypeError(f"FunctionEventAvg.add: expected an event, got {type(other).__name__}")
        if self.key is None:
            # The first event sets the group's identity; later ones only add times.
            self.key = other.key
            self.is_user_annotation = other.is_user_annotation
            self.cpu_parent = other.cpu_parent
        self.cpu_time_total += other.cpu_time_total
        self.self_cpu_time_total += other.self_cpu_time_total
        self.cpu_memory_usage += other.cpu_memory_usage
        self.self_cpu_memory_usage += other.self_cpu_memory_usage
        self.count += other.count
        return self

    def __iadd__(self, other):
        return self.add(other)

    @property
    def cpu_time(self) -> float:
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    def __repr__(self):
        return (f"<FunctionEventAvg key={self.key} self_cpu_time={self.self_cpu_time_total_str} "
                f"cpu_time={self.cpu_time_str} count={self.count} "
                f"input_shapes={self.input_shapes if self.input_shapes is not None else []}>")


class EventList(list):
    """A list of FunctionEvents (or of FunctionEventAvgs), printable as torch's table."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args)
        self._profile_memory = kwargs.get("profile_memory", False)
        self._base_time_ns = kwargs.get("base_time_ns", 0)

    def __str__(self):
        return self.table()

    def _populate_cpu_children(self) -> None:
        """Make each event a child of the innermost event of its thread (and node) whose time
        range holds it, as torch's EventList does for events made outside a profiler; events
        that overlap only partly stay unrelated, async ones are left out."""
        groups: dict = {}
        for event in self:
            if not getattr(event, "is_async", False):
                groups.setdefault((event.thread, getattr(event, "node_id", -1)), []).append(event)
        for events in groups.values():
            events.sort(key=lambda event: (event.time_range.start, -event.time_range.end))
            open_events: list = []
            for event in events:
                while open_events:
                    parent = open_events[-1]
                    if event.time_range.start >= parent.time_range.end or \
                            event.time_range.end > parent.time_range.end:
                        open_events.pop()
                        continue
                    parent.append_cpu_child(event)
                    event.set_cpu_parent(parent)
                    break
                open_events.append(event)

    @property
    def self_cpu_time_total(self) -> float:
        return sum(event.self_cpu_time_total for event in self)

    def table(self, sort_by=None, row_limit=100, max_src_column_width=75,
              max_name_column_width=55, max_shapes_column_width=80, header=None,
              top_level_events_only=False, time_unit=None) -> str:
        """The events as a text table; `sort_by` names an event attribute (largest first)."""
        return build_table(self, sort_by=sort_by, header=header, row_limit=row_limit,
                           max_src_column_width=max_src_column_width,
                           max_name_column_width=max_name_column_width,
                           max_shapes_column_width=max_shapes_column_width,
                           top_level_events_only=top_level_events_only, time_unit=time_unit,
                           profile_memory=self._profile_memory)

    def key_averages(self, group_by_input_shapes=False, group_by_stack_n=0,
                     group_by_overload_name=False) -> EventList:
        """One FunctionEventAvg per event name (and per input shapes when asked)."""
        stats: dict = defaultdict(FunctionEventAvg)
        for event in self:
            key = [event.key, str(event.is_user_annotation)]
            if group_by_input_shapes:
                key.append(str(event.input_shapes))
            if group_by_stack_n > 0:
                key += event.stack[:group_by_stack_n]
            average = stats[tuple(key)]
            average.add(event)
            if group_by_input_shapes:
                average.input_shapes = event.input_shapes
            if group_by_stack_n > 0 and average.stack is None:
                average.stack = event.stack[:group_by_stack_n]
        return EventList(stats.values(), profile_memory=self._profile_memory,
                         base_time_ns=self._base_time_ns)

    def total_average(self) -> FunctionEventAvg:
        """All events summed into one FunctionEventAvg whose key is "Total"."""
        total = FunctionEventAvg()
        for event in self:
            total.add(event)
        total.key = "Total"
        return total

    def export_chrome_trace(self, path, metadata=None) -> None:
        """Write the events as a Chrome trace (chrome://tracing, Perfetto, ui.perfetto.dev),
        with `metadata`'s entries at its top level; gzipped when `path` ends in ".gz"."""
        trace = chrome_trace(self, metadata, self._base_time_ns, str(path))
        opener = gzip.open if str(path).endswith(".gz") else open
        with opener(path, "wt") as file:
            json.dump(trace, file)

    def supported_export_stacks_metrics(self) -> list:
        return ["self_cpu_time_total", "self_cuda_time_total", "self_xpu_time_total",
                "self_privateuse1_time_total"]

    def export_stacks(self, path, metric: str) -> None:
        """One line per event with a recorded stack: its frames outermost first, joined by ";"
        (spaces, semicolons and tabs in a frame become "_"), then the metric as an integer,
        for flame graph tools; events whose metric is 0 are left out, as torch does."""
        if metric not in self.supported_export_stacks_metrics():
            raise ValueError("metric should be one of: " +
                             str(self.supported_export_stacks_metrics()))
        table = str.maketrans(" ;\t\n", "____")
        with open(path, "w") as file:
            for event in self:
                value = int(_sort_value(event, metric))
                if event.stack and value > 0:
                    frames = ";".join(entry.translate(table) for entry in reversed(event.stack))
                    file.write(f"{frames} {value}\n")


# ---- formatting -------------------------------------------------------------------------------

def format_time(time_us: float) -> str:
    if time_us >= 1e6:
        return f"{time_us / 1e6:.3f}s"
    if time_us >= 1e3:
        return f"{time_us / 1e3:.3f}ms"
    return f"{time_us:.3f}us"


def format_time_share(time_us: float, total_us: float) -> str:
    if total_us == 0:
        return "NaN"
    return f"{time_us * 100.0 / total_us:.2f}%"


# torch's private names of the same helpers, which its tests and some tools import
_format_time = format_time
_format_time_share = format_time_share


def _in_unit(time_us: float, time_unit) -> str:
    if time_unit == "s":
        return f"{time_us / 1e6:.3f}s"
    if time_unit == "ms":
        return f"{time_us / 1e3:.3f}ms"
    if time_unit == "us":
        return f"{time_us:.3f}us"
    return format_time(time_us)


def _sort_value(event, sort_by: str):
    attribute = sort_by.replace("cuda", "device")
    try:
        return getattr(event, attribute)
    except AttributeError:
        raise AttributeError(f"'{type(event).__name__}' object has no attribute '{sort_by}' "
                             f"(sort_by accepts {', '.join(SORT_KEYS)})") from None


def format_memory(nbytes: int) -> str:
    """A byte count as torch's table prints it: "1.50 KB", "2.00 MB", "96 B"."""
    for unit, size in (("GB", 1024 ** 3), ("MB", 1024 ** 2), ("KB", 1024)):
        if abs(nbytes) >= size:
            return f"{nbytes / size:.2f} {unit}"
    return f"{nbytes} B"


def build_table(events, sort_by=None, header=None, row_limit=100, max_src_column_width=75,
                max_name_column_width=55, max_shapes_column_width=80,
                top_level_events_only=False, time_unit=None, profile_memory=False) -> str:
    """torch's profiler table: one row per event, percentages of the summed self CPU time."""
    if len(events) == 0:
        return ""
    if sort_by is not None:
        events = sorted(events, key=lambda event: _sort_value(event, sort_by), reverse=True)
    has_input_shapes = any(event.input_shapes for event in events)
    stacks = [event.stack for event in events if event.stack]

    name_width = max(len(event.key) for event in events) + 4
    if max_name_column_width is not None:
        name_width = min(name_width, max_name_column_width)
    headers = ["Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
    headers.append("# of Calls")
    widths = [name_width] + [12] * (len(headers) - 1)
    aligns = [">"] * len(headers)
    if has_input_shapes:
        shapes_width = max(len(str(event.input_shapes)) for event in events) + 4
        if max_shapes_column_width is not None:
            shapes_width = min(shapes_width, max_shapes_column_width)
        headers.append("Input Shapes")
        widths.append(shapes_width)
        aligns.append(">")
    if stacks:
        source_width = max(len(entry) for stack in stacks for entry in stack) + 4
        if max_src_column_width is not None:
            source_width = min(source_width, max_src_column_width)
        headers.append("Source Location")
        widths.append(source_width)
        aligns.append("<")
    row_format = "".join("{: " + align + str(width) + "}  " for align, width in
                         zip(aligns, widths))
    separator = "".join("-" * width + "  " for width in widths)
    line_length = sum(width + 2 for width in widths) - 2

    total_self = sum(event.self_cpu_time_total for event in events)
    lines = []
    if header is not None:
        lines += ["=" * line_length, header]
    if top_level_events_only:
        lines += ["=" * line_length, "This report only display top-level ops statistics"]
    lines += [separator, row_format.format(*headers), separator]
    shown = 0
    for event in events:
        if shown == row_limit:
            break
        if top_level_events_only and event.cpu_parent is not None:
            continue
        shown += 1
        name = event.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        row = [name,
               format_time_share(event.self_cpu_time_total, total_self),
               _in_unit(event.self_cpu_time_total, time_unit),
               format_time_share(event.cpu_time_total, total_self),
               _in_unit(event.cpu_time_total, time_unit),
               _in_unit(event.cpu_time, time_unit)]
        if profile_memory:
            row += [format_memory(event.cpu_memory_usage),
                    format_memory(event.self_cpu_memory_usage)]
        row.append(event.count)
        if has_input_shapes:
            row.append(str(event.input_shapes)[:widths[len(row)]])
        stack = event.stack or []
        if stacks:
            row.append(_trim_path(stack[0], widths[-1]) if stack else "")
        lines.append(row_format.format(*row))
        if stacks and stack:
            blank = [""] * (len(headers) - 1)
            for entry in stack[1:]:
                lines.append(row_format.format(*blank, _trim_path(entry, widths[-1])))
            lines.append(row_format.format(*blank, ""))
    lines += [separator, f"Self CPU time total: {_in_unit(total_self, time_unit)}"]
    return "\n".join(lines) + "\n"


def _trim_path(path: str, width: int) -> str:
    if len(path) > width:
        path = "..." + path[len(path) - width + 3:]
    return path


# ---- Chrome trace -----------------------------------------------------------------------------

def chrome_trace(events, metadata=None, base_time_ns: int = 0, name: str = "") -> dict:
    """The Trace Event Format dict: one complete ("X") event per range, plus flow arrows from
    each forward op to the backward node it created (matched by sequence number); `ts` counts
    microseconds from `baseTimeNanoseconds`, the wall clock when the profiler started."""
    pid = os.getpid()
    trace = []
    forward_by_sequence: dict = {}
    for event in events:
        args = {}
        if event.sequence_nr >= 0:
            args["Sequence number"] = event.sequence_nr
        if event.input_shapes:
            args["Input Dims"] = event.input_shapes
        if event.input_dtypes:
            args["Input type"] = event.input_dtypes
        trace.append({"ph": "X", "cat": event.category,
                      "name": event.trace_name or event.name, "pid": pid, "tid": event.thread,
                      "ts": round(event.time_range.start, 3),
                      "dur": round(event.cpu_time_total, 3), "args": args})
        if event.sequence_nr >= 0 and not event.is_backward:
            forward_by_sequence.setdefault(event.sequence_nr, event)
    flow_id = 0
    for event in events:
        # One arrow per node, to the engine's event around it (as torch's traces draw it).
        outer = event.is_backward and event.name.startswith(EVALUATE_FUNCTION)
        forward = forward_by_sequence.get(event.sequence_nr) if outer else None
        if forward is None:
            continue
        flow_id += 1
        # Flow arrows bind to the enclosing slices at their timestamps (bp "e": the end
        # point binds to the slice that contains it), which draws forward -> backward.
        trace.append({"ph": "s", "id": flow_id, "pid": pid, "tid": forward.thread,
                      "ts": round(forward.time_range.start, 3), "cat": "fwdbwd",
                      "name": "fwdbwd"})
        trace.append({"ph": "f", "id": flow_id, "pid": pid, "tid": event.thread,
                      "ts": round(event.time_range.start, 3), "cat": "fwdbwd",
                      "name": "fwdbwd", "bp": "e"})
    result = {"schemaVersion": 1, "deviceProperties": [], "displayTimeUnit": "ms",
              "baseTimeNanoseconds": base_time_ns, "traceName": name, "traceEvents": trace}
    result.update(metadata or {})
    return result
