"""autojit.profiler against torch.profiler, structurally: the schedule's actions, when
on_trace_ready runs, the files tensorboard_trace_handler writes and the Chrome trace's shape,
the ProfilerStep ranges, the summary table's columns, and torch's errors."""

from __future__ import annotations

import glob
import json
import os
import re
import warnings

import pytest

import autojit
import autojit.profiler

torch = pytest.importorskip("torch")


def outcome(function):
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = function()
    except Exception as error:  # noqa: BLE001 - the outcome compared
        return type(error).__name__, str(error)
    return result, [str(w.message) for w in caught]


@pytest.mark.parametrize("arguments", [
    dict(wait=1, warmup=1, active=2), dict(wait=1, warmup=0, active=2, repeat=2, skip_first=1),
    dict(wait=2, warmup=1, active=1, repeat=1, skip_first=3, skip_first_wait=1),
    dict(wait=0, warmup=1, active=0), dict(wait=-1, warmup=1, active=1)])
def test_schedule_as_torch(arguments):
    def run(t):
        function = t.profiler.schedule(**arguments)
        return [function(step).name for step in range(14)]

    assert outcome(lambda: run(autojit)) == outcome(lambda: run(torch))


def _train(t, tmp_path, name, **options):
    """Six steps under a wait-1/warmup-1/active-2 schedule: the steps at which on_trace_ready
    ran, the trace files written, the ProfilerStep ranges and the table's header line."""
    x = t.ones(8, 4, requires_grad=True)
    ready = []
    directory = str(tmp_path / name)
    handler = t.profiler.tensorboard_trace_handler(directory, worker_name="worker")

    def on_trace_ready(prof):
        ready.append(prof.step_num)
        handler(prof)

    activity = t.profiler.ProfilerActivity
    with t.profiler.profile(activities=[activity.CPU], on_trace_ready=on_trace_ready,
                            schedule=t.profiler.schedule(wait=1, warmup=1, active=2, repeat=1),
                            **options) as prof:
        for _ in range(6):
            with t.profiler.record_function("forward"):
                y = (x * 2).relu().sum()
            y.backward()
            prof.step()
    files = sorted(glob.glob(os.path.join(directory, "*")))
    steps = sorted({e.name for e in prof.events() if e.name.startswith("ProfilerStep")})
    table = prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=5)
    return ready, files, steps, table.splitlines()[1].split("  "), prof


@pytest.mark.parametrize("options", [{}, {"record_shapes": True, "profile_memory": True}])
def test_scheduled_profile_and_trace_handler_as_torch(tmp_path, options):
    theirs = _train(torch, tmp_path, "torch", **options)
    ours = _train(autojit, tmp_path, "autojit", **options)
    assert ours[0] == theirs[0] == [4]
    assert len(ours[1]) == len(theirs[1]) == 1
    assert re.fullmatch(r"worker\.\d+\.pt\.trace\.json", os.path.basename(ours[1][0]))
    assert ours[2] == theirs[2] == ["ProfilerStep*"]
    assert [c.strip() for c in ours[3] if c.strip()] == [c.strip() for c in theirs[3]
                                                         if c.strip()]
    with open(theirs[1][0]) as file:
        their_trace = json.load(file)
    with open(ours[1][0]) as file:
        our_trace = json.load(file)
    assert {"schemaVersion", "deviceProperties", "displayTimeUnit", "baseTimeNanoseconds",
            "traceName", "traceEvents"} <= set(our_trace)
    assert set(their_trace) - set(our_trace) <= {"host_name", "trace_id"}
    slices = [e for e in our_trace["traceEvents"] if e["ph"] == "X"]
    assert {"ph", "cat", "name", "pid", "tid", "ts", "dur", "args"} <= set(slices[0])
    assert {e["cat"] for e in slices} == {"cpu_op", "user_annotation"}
    steps = sorted(e["name"] for e in slices if e["cat"] == "user_annotation")
    assert steps == sorted(e["name"] for e in their_trace["traceEvents"]
                           if e.get("cat") == "user_annotation")
    if options:
        mul = next(e for e in slices if e["name"] == "autojit::mul")
        their_mul = next(e for e in their_trace["traceEvents"] if e.get("name") == "aten::mul")
        assert mul["args"]["Input Dims"] == their_mul["args"]["Input Dims"] == [[8, 4], []]
        assert mul["args"]["Input type"][0] == their_mul["args"]["Input type"][0] == "float"
        mul_row = next(r for r in ours[4].key_averages() if r.key == "autojit::mul")
        assert mul_row.self_cpu_memory_usage == mul_row.count * 8 * 4 * 4  # float32 results


def test_profile_without_schedule_records_everything_and_calls_on_trace_ready():
    def run(t):
        ready = []
        with t.profiler.profile(on_trace_ready=lambda prof: ready.append(prof.step_num)) as prof:
            with t.profiler.record_function("block"):
                t.ones(3) * 2
            prof.step()
            t.ones(3) + 1
        names = {e.name for e in prof.events()}
        return ready, "block" in names, any(n.startswith("ProfilerStep") for n in names)

    assert run(autojit) == run(torch)


def test_accumulated_events_and_errors_as_torch():
    def run(t):
        results = [outcome(lambda: t.profiler.profile().key_averages())]
        activity = t.profiler.ProfilerActivity
        results.append(outcome(lambda: t.profiler.profile(activities=[activity.CPU,
                                                                      activity.CPU])))
        counts = []
        with t.profiler.profile(schedule=t.profiler.schedule(wait=0, warmup=1, active=1),
                                on_trace_ready=lambda p: counts.append(len(
                                    [e for e in p.events() if e.name == "aten::mul"])),
                                acc_events=True) as prof:
            for _ in range(4):
                t.ones(2) * 3
                prof.step()
        results.append(counts)
        return results

    assert run(autojit) == run(torch)


def test_cuda_activity_without_a_gpu_is_dropped_with_torchs_warning():
    if autojit.cuda.is_available() or torch.cuda.is_available():
        pytest.skip("a GPU is present")

    def run(t):
        activity = t.profiler.ProfilerActivity

        def both():
            with t.profiler.profile(activities=[activity.CPU, activity.CUDA]):
                t.ones(2) * 2
            return "ok"

        return outcome(both)[1][:1], outcome(lambda: t.profiler.profile(
            activities=[activity.CUDA]).__enter__())[0]

    assert run(autojit) == run(torch)


def test_export_stacks_and_gzip(tmp_path):
    with autojit.profiler.profile(with_stack=True) as prof:
        autojit.ones(64, 64) * 2
    path = tmp_path / "stacks.txt"
    prof.export_stacks(str(path), "self_cpu_time_total")
    line = path.read_text().splitlines()[0]
    frames, value = line.rsplit(" ", 1)
    assert "test_profiler_torch.py" in frames and int(value) >= 0
    with pytest.raises(ValueError, match="metric should be one of"):
        prof.export_stacks(str(path), "count")
    prof.export_chrome_trace(str(tmp_path / "trace.json.gz"))
    import gzip

    with gzip.open(tmp_path / "trace.json.gz", "rt") as file:
        assert json.load(file)["traceEvents"]


def _public_events(t):
    """The events of torch's names (aten::...) of a few calls, in order, with their shapes."""
    x = t.ones(10, 10)
    first, second = t.nn.Linear(20, 30), t.nn.Linear(30, 40)
    data = t.ones(128, 20)
    with t.autograd.profiler.profile(record_shapes=True) as prof:
        with t.autograd.profiler.record_function("outer"):
            y = x * 2 + 4
            with t.autograd.profiler.record_function("inner"):
                y = y - 1
        y = y / 1
        t.relu(second(first(data)))
    wanted = ("outer", "inner", "aten::mul", "aten::add", "aten::sub", "aten::div",
              "aten::linear", "aten::relu")
    return [(event.name, event.input_shapes if event.name == "aten::linear" else None)
            for event in prof.function_events if event.name in wanted]


def test_public_calls_are_events_of_torchs_names_in_torchs_order():
    from autojit.tensor import torch_function

    assert _public_events(autojit) == _public_events(torch) == [
        ("outer", None), ("aten::mul", None), ("aten::add", None), ("inner", None),
        ("aten::sub", None), ("aten::div", None), ("aten::linear", [[128, 20], [30, 20], [30]]),
        ("aten::linear", [[128, 30], [40, 30], [40]]), ("aten::relu", None)]
    # The wrappers the profiler switched on are off again: later calls pay nothing for them.
    assert not torch_function.ACTIVE and torch_function.MODES == 0


def test_events_made_outside_a_profiler_nest_and_average_as_torchs():
    def run(t):
        util = t.autograd.profiler_util
        events = util.EventList()
        ranges = [(1, 0, 1), (1, 1, 2), (0, 0, 2), (0, 1, 2), (0, 1, 3), (0, 2, 5), (0, 3, 4)]
        for number, (thread, start, end) in enumerate(ranges, 1):
            events.append(util.FunctionEvent(id=number, node_id=0, name="op",
                                             thread=thread, start_us=start, end_us=end))
        events._populate_cpu_children()
        average = util.FunctionEventAvg()
        for event in events[:2]:
            average.add(event)
        return ([[child.id for child in event.cpu_children] for event in events],
                [event.node_id for event in events], average.count, average.cpu_time_total,
                average.cpu_time)

    assert run(autojit) == run(torch)


def test_the_record_function_operators_open_and_close_a_range_as_torchs():
    def run(t):
        x = t.ones(10, 10)
        with t.autograd.profiler.profile() as prof:
            handle = t.ops.profiler._record_function_enter("bar", None)
            x * 2 + 4
            t.ops.profiler._record_function_exit(handle)
            handle = t.ops.profiler._record_function_enter_new("baz", None)
            x - 1
            t.ops.profiler._record_function_exit._RecordFunction(handle)
        arithmetic = ("aten::mul", "aten::add", "aten::sub")  # (torch's has an aten::empty)
        return [(event.name, event.count, [child.name for child in event.cpu_children
                                           if child.name in arithmetic])
                for event in prof.function_events if event.name in ("bar", "baz")]

    assert run(autojit) == run(torch) == [("bar", 1, ["aten::mul", "aten::add"]),
                                          ("baz", 1, ["aten::sub"])]


def test_record_function_ranges_of_a_traced_function_are_torchs():
    # torch's test_profiler_propagation: a traced function's record_function ranges (nested,
    # around a fork of another traced function) are events of each call of it.
    def ranges(t):
        def inner(x):
            with t.autograd.profiler.record_function("inner"):
                return x * 2

        def outer(x):
            with t.autograd.profiler.record_function("outer"):
                y = t.jit._wait(t.jit._fork(traced_inner, x))
                with t.autograd.profiler.record_function("after_wait"):
                    return y * 2

        x = t.ones(3, 4)
        traced_inner = t.jit.trace(inner, x)
        traced_outer = t.jit.trace(outer, x)
        names = []
        for _ in range(2):
            with t.autograd.profiler.profile() as profile:
                traced_outer(x)
            names.append({event.name for event in profile.function_events} &
                         {"inner", "outer", "after_wait"})
        return names

    assert ranges(autojit) == ranges(torch) == [{"inner", "outer", "after_wait"}] * 2


def test_record_function_range_of_a_compiled_function_is_one_event_per_call():
    def step(x):
        with autojit.autograd.profiler.record_function("range"):
            return (x * 2).sum()

    compiled = autojit.compile(step)
    x = autojit.ones(3)
    for _ in range(3):  # the tracing call, then the executable's
        with autojit.autograd.profiler.profile() as profile:
            compiled(x)
        assert [event.name for event in profile.function_events].count("range") == 1
