"""autograd.profiler: events of public calls (torch's names, `aten::mul`), of the primitives they
run (`autojit::mul`) and of backward nodes, nesting, sequence numbers, record_function, the
summary tables and the Chrome trace export."""

import contextlib
import io
import json
import threading

import pytest

import autojit as aj
from autojit import autograd
from autojit.autograd import profiler
from autojit.autograd.profiler_util import format_time, format_time_share
from autojit.ir import make_graph
from autojit.tensor.state import state


def named(events, name):
    return [event for event in events if event.name == name]


def test_reference_example_prints_forward_op_and_its_backward():
    # torch-autograd-en.txt, Profiler: x ** 2 and its backward, printed as a table.
    x = aj.randn((1, 1), requires_grad=True)
    with autograd.profiler.profile() as prof:
        y = x ** 2
        y.backward()
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        print(prof)
    text = out.getvalue()
    for column in ("Name", "Self CPU %", "Self CPU", "CPU total %", "CPU total",
                   "CPU time avg", "# of Calls"):
        assert column in text
    assert "Input Shapes" not in text  # only with record_shapes
    rows = text.rstrip("\n").splitlines()
    names = [row.split()[0] for row in rows[3:-2]]
    assert names[:2] == ["aten::pow", "autojit::pow"]  # torch's call, then its primitive
    assert "PowBackward0" in names and "torch::autograd::AccumulateGrad" in names
    assert names.index("PowBackward0") < names.index("torch::autograd::AccumulateGrad")
    assert rows[-1].startswith("Self CPU time total: ")
    assert rows[0] == rows[2] == rows[-2] and set(rows[0]) == {"-", " "}


def test_sequence_numbers_link_backward_nodes_to_their_forward_ops():
    x = aj.tensor([1.0, 2.0], requires_grad=True)
    with profiler.profile() as prof:
        y = x * 3.0
        z = y.sum()
        z.backward()
    events = prof.function_events
    mul, = named(events, "autojit::mul")[:1]
    total, = named(events, "autojit::sum")
    assert mul.sequence_nr == y.grad_fn.sequence_nr
    assert total.sequence_nr == z.grad_fn.sequence_nr
    mul_backward, = named(events, "MulBackward0")
    sum_backward, = named(events, "SumBackward0")
    assert mul_backward.sequence_nr == mul.sequence_nr
    assert sum_backward.sequence_nr == total.sequence_nr
    assert mul_backward.is_backward and not mul.is_backward
    accumulate, = named(events, "torch::autograd::AccumulateGrad")
    assert accumulate.sequence_nr == -1
    # Without create_graph the ops a backward node runs create no nodes.
    for node_event in (mul_backward, sum_backward):
        assert node_event.cpu_children
        for child in node_event.cpu_children:
            assert child.sequence_nr == -1 and child.cpu_parent is node_event


def test_ops_that_create_no_node_carry_minus_one():
    x = aj.tensor([1.0, 2.0])
    with profiler.profile() as prof:
        x * 2.0
        with aj.no_grad():
            aj.tensor([1.0], requires_grad=True) * 2.0
    assert {event.name for event in prof.function_events} >= {"aten::mul", "autojit::mul"}
    assert {event.sequence_nr for event in prof.function_events} == {-1}


def test_double_backward_events_carry_the_backward_ops_numbers():
    x = aj.tensor([1.5, 2.0], requires_grad=True)
    with profiler.profile() as prof:
        y = (x * x * x).sum()
        first, = autograd.grad(y, x, create_graph=True)
        first.sum().backward()
    events = prof.function_events
    forward_numbers = {event.sequence_nr for event in events
                       if not event.is_backward and event.sequence_nr >= 0}
    inside_backward = [event for event in events
                       if not event.is_backward and event.cpu_parent is not None
                       and event.cpu_parent.is_backward]
    # With create_graph=True the ops inside backward nodes create nodes and say so.
    assert inside_backward and any(event.sequence_nr >= 0 for event in inside_backward)
    backward_events = [event for event in events if event.is_backward
                       and "AccumulateGrad" not in event.name]
    nodes = [event for event in backward_events
             if not event.name.startswith("autograd::engine::evaluate_function: ")]
    assert len(nodes) >= 6  # the first backward's nodes, then the second's
    for event in backward_events:
        assert event.sequence_nr in forward_numbers
    for event in nodes:  # each inside the engine's event for it, as torch's
        parent = event.cpu_parent
        assert parent.name == f"autograd::engine::evaluate_function: {event.name}"
        assert parent.sequence_nr == event.sequence_nr and parent.is_backward


def test_backward_events_are_torchs_engine_events_with_the_forward_thread():
    """torch's test_profiler_seq_nr: each node runs inside "autograd::engine::evaluate_function:
    <node>"; both carry the forward op's sequence number and its thread as `fwd_thread`
    (forward events 0); sum given a dim is SumBackward1; randn is aten::empty then
    aten::normal_, neither with a sequence number."""
    with profiler.profile() as prof:
        x = aj.randn(10, 10, requires_grad=True)
        y = aj.randn(10, 10, requires_grad=True)
        (x + y).sum(dim=None).backward()
    events = prof.function_events
    for forward, node in (("aten::add", "AddBackward0"), ("aten::sum", "SumBackward1")):
        op, = named(events, forward)
        outer, = named(events, f"autograd::engine::evaluate_function: {node}")
        inner, = named(events, node)
        assert op.sequence_nr >= 0 and op.fwd_thread == 0
        assert outer.sequence_nr == inner.sequence_nr == op.sequence_nr
        assert outer.fwd_thread == inner.fwd_thread == op.thread
        assert inner.cpu_parent is outer
    randn = named(events, "aten::randn")
    assert len(randn) == 2
    for event in randn:
        assert [child.name for child in event.cpu_children] == ["aten::empty", "aten::normal_"]
        assert all(child.sequence_nr == -1 for child in event.cpu_children)
    accumulate = named(events, "autograd::engine::evaluate_function: "
                               "torch::autograd::AccumulateGrad")
    assert len(accumulate) == 2 and all(event.fwd_thread == 0 for event in accumulate)


def bits(tensor) -> bytes:
    """A tensor's bytes, read through an integer view of its element size (NumPy has no
    bfloat16)."""
    integer = {2: aj.int16, 4: aj.int32, 8: aj.int64}[tensor.dtype.itemsize]
    return tensor.view(integer).numpy().tobytes()


def test_a_profiled_draw_is_the_same_draw():
    """The factories' draws split into allocation and fill while profiling give the numbers
    of an unprofiled draw from the same seed, in every dtype they draw."""
    cases = [("randn", aj.float32), ("randn", aj.float16), ("randn", aj.bfloat16),
             ("randn", aj.complex64), ("rand", aj.float64), ("randint", aj.int32)]
    for kind, dtype in cases:
        def draw(kind=kind, dtype=dtype):
            aj.manual_seed(5)
            if kind == "randint":
                return aj.randint(0, 7, (3, 4), dtype=dtype)
            return getattr(aj, kind)(3, 4, dtype=dtype)
        plain = draw()
        with profiler.profile():
            profiled = draw()
        assert profiled.dtype == plain.dtype
        assert bits(profiled) == bits(plain), (kind, dtype)


def test_events_nest_and_self_time_excludes_children():
    x = aj.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    with profiler.profile() as prof:
        with profiler.record_function("outer"):
            with profiler.record_function("inner"):
                y = (x * x).sum()
        y.backward()
    events = prof.function_events
    outer, = named(events, "outer")
    inner, = named(events, "inner")
    assert outer.is_user_annotation and inner.cpu_parent is outer
    assert {child.name for child in inner.cpu_children} == {"aten::mul", "aten::sum"}
    assert {child.cpu_children[0].name for child in inner.cpu_children} == {"autojit::mul",
                                                                             "autojit::sum"}
    for event in events:
        children_total = sum(child.cpu_time_total for child in event.cpu_children)
        assert event.self_cpu_time_total == pytest.approx(event.cpu_time_total - children_total)
        assert event.self_cpu_time_total >= 0
        for child in event.cpu_children:
            assert event.time_range.start <= child.time_range.start
            assert child.time_range.end <= event.time_range.end
    starts = [event.time_range.start for event in events]
    assert starts == sorted(starts)
    assert prof.self_cpu_time_total == pytest.approx(
        sum(event.self_cpu_time_total for event in events))
    top_level = [event for event in events if event.cpu_parent is None]
    assert prof.self_cpu_time_total == pytest.approx(
        sum(event.cpu_time_total for event in top_level))


def test_record_function_as_decorator_and_without_profiler():
    @profiler.record_function("step")
    def step(tensor, depth):
        if depth:
            return step(tensor * 2.0, depth - 1)
        return tensor + 1.0

    x = aj.tensor([1.0])
    assert step(x, 1).tolist() == [3.0]  # no profiler: a no-op
    with profiler.record_function("nothing", "args") as marker:
        assert marker.name == "nothing"
    with profiler.profile() as prof:
        step(x, 2)
    steps = named(prof.function_events, "step")
    assert len(steps) == 3
    assert steps[1].cpu_parent is steps[0] and steps[2].cpu_parent is steps[1]
    assert prof.key_averages()[0].key == "step" and prof.key_averages()[0].count == 3


def test_nesting_reentry_and_disabled_profilers():
    with profiler.profile() as outer:
        with pytest.raises(RuntimeError, match="Profiler is already enabled on this thread"):
            with profiler.profile():
                pass
        with pytest.raises(RuntimeError, match="not reentrant"):
            with outer:
                pass
        assert state.profiler is outer
    assert state.profiler is None
    with pytest.raises(ValueError):
        with profiler.profile():
            raise ValueError("user error")
    assert state.profiler is None
    with profiler.profile(enabled=False, use_cuda=True, profile_memory=True) as off:
        assert state.profiler is None
        aj.ones(2) * 2.0
    assert len(off.function_events) == 0 and str(off) == ""


def test_results_before_the_profiler_finished():
    prof = profiler.profile()
    assert str(prof) == "<unfinished autojit.autograd.profile>"
    with pytest.raises(RuntimeError, match="Profiler didn't finish running"):
        prof.events()
    with prof:
        with pytest.raises(RuntimeError, match="didn't finish"):
            prof.key_averages()


def test_nothing_is_recorded_after_exit_or_on_other_threads():
    x = aj.tensor([1.0, 2.0], requires_grad=True)
    with profiler.profile() as prof:
        worker = threading.Thread(target=lambda: (x * 2.0).sum())
        worker.start()
        worker.join()
        x + 1.0
    (x * 5.0).sum().backward()
    assert [event.name for event in prof.function_events] == ["aten::add", "autojit::add"]


def test_failed_op_closes_its_event():
    with profiler.profile(record_shapes=True) as prof:
        with pytest.raises(Exception, match=r"add"):
            aj.ones(2) + aj.ones(3)
        aj.ones(2) * 2.0
    failed, = named(prof.function_events, "autojit::add")
    after, = named(prof.function_events, "aten::mul")
    assert failed.input_shapes == [[2], [3]] and failed.cpu_parent.name == "aten::add"
    assert after.cpu_parent is None and failed.cpu_children == []
    assert failed.time_range.end >= failed.time_range.start


def test_record_shapes_and_grouping_by_input_shape():
    with profiler.profile(record_shapes=True) as prof:
        aj.ones(2, 3) * 2.0
        aj.ones(2, 3) * 3.0
        aj.ones(4) * aj.ones(4)
    muls = named(prof.function_events, "autojit::mul")
    assert [event.input_shapes for event in muls] == [[[2, 3], []], [[2, 3], []], [[4], [4]]]
    assert muls[0].input_dtypes == ["float", "Scalar"]  # torch's C type names
    grouped = prof.key_averages(group_by_input_shape=True)
    assert sorted((event.key, str(event.input_shapes), event.count) for event in grouped
                  if event.key.endswith("::mul")) == [
        ("aten::mul", "[[2, 3], []]", 2), ("aten::mul", "[[4], [4]]", 1),
        ("autojit::mul", "[[2, 3], []]", 2), ("autojit::mul", "[[4], [4]]", 1)]
    assert "Input Shapes" in grouped.table()
    assert "[[2, 3], []]" in grouped.table()
    plain = {event.key: event for event in prof.key_averages()}
    assert plain["autojit::mul"].count == plain["aten::mul"].count == 3
    assert "Input Shapes" not in prof.key_averages().table()


def test_table_sorting_limits_and_totals():
    x = aj.tensor([1.0, 2.0], requires_grad=True)
    with profiler.profile() as prof:
        for _ in range(3):
            (x * 2.0).sum().backward()
    averages = prof.key_averages()
    counts = {event.key: event.count for event in averages}
    assert counts["autojit::mul"] >= 3 and counts["MulBackward0"] == 3
    by_count = averages.table(sort_by="count", row_limit=2)
    rows = by_count.splitlines()[3:-2]
    assert len(rows) == 2
    assert int(rows[0].split()[-1]) == max(counts.values())
    for key in ("cpu_time", "cpu_time_total", "self_cpu_time_total", "cuda_time_total",
                "self_cuda_time_total", "device_time_total"):
        assert "Self CPU time total" in averages.table(sort_by=key)
    self_sorted = averages.table(sort_by="self_cpu_time_total").splitlines()[3:-2]
    assert rows and self_sorted[0].split()[0] == max(
        averages, key=lambda event: event.self_cpu_time_total).key
    with pytest.raises(AttributeError, match="bogus"):
        averages.table(sort_by="bogus")
    total = prof.total_average()
    assert total.key == "Total" and total.count == len(prof.function_events)
    assert total.self_cpu_time_total == pytest.approx(prof.self_cpu_time_total)
    assert "===" in prof.table(header="my header") and "my header" in prof.table(header="my header")
    top = prof.table(top_level_events_only=True)
    assert "This report only display top-level ops statistics" in top
    long_name = averages.table(max_name_column_width=10).splitlines()[3]
    assert "..." in long_name
    assert prof.table(time_unit="ms").splitlines()[-1].endswith("ms")


def test_time_formatting_follows_torch():
    assert format_time(12.3456) == "12.346us"
    assert format_time(1500.0) == "1.500ms"
    assert format_time(2_500_000.0) == "2.500s"
    assert format_time_share(25.0, 100.0) == "25.00%"
    assert format_time_share(0.0, 0.0) == "NaN"


def test_chrome_trace_fields_nesting_and_forward_backward_links(tmp_path):
    x = aj.tensor([[1.0, 2.0]], requires_grad=True)
    with profiler.profile(record_shapes=True) as prof:
        with profiler.record_function("forward"):
            y = (x.exp() * x).sum()
        y.backward()
    path = tmp_path / "trace.json"
    prof.export_chrome_trace(str(path))
    trace = json.loads(path.read_text())
    complete = [event for event in trace["traceEvents"] if event["ph"] == "X"]
    assert len(complete) == len(prof.function_events)
    for event in complete:
        assert set(event) >= {"name", "ph", "ts", "dur", "pid", "tid", "cat", "args"}
        assert isinstance(event["ts"], (int, float)) and event["dur"] >= 0
        assert isinstance(event["pid"], int) and isinstance(event["tid"], int)
    by_name = {}
    for event in complete:
        by_name.setdefault(event["name"], event)
    assert by_name["forward"]["cat"] == "user_annotation"
    assert by_name["autojit::exp"]["args"]["Input Dims"] == [[1, 2]]
    # Nesting by time: each op of the forward range lies inside it.
    outer = by_name["forward"]
    for name in ("autojit::exp", "autojit::mul", "autojit::sum"):
        inner = by_name[name]
        assert outer["ts"] <= inner["ts"]
        assert inner["ts"] + inner["dur"] <= outer["ts"] + outer["dur"] + 0.002
    forward_numbers = {event["args"]["Sequence number"]: event["name"] for event in complete
                       if "Backward" not in event["name"] and "Sequence number" in event["args"]}
    backward = [event for event in complete if event["name"].endswith("Backward0")
                and not event["name"].startswith("autograd::engine::evaluate_function: ")]
    assert {event["name"] for event in backward} == {"ExpBackward0", "MulBackward0",
                                                     "SumBackward0"}
    for event in backward:
        forward_name = forward_numbers[event["args"]["Sequence number"]]
        assert forward_name == "autojit::" + event["name"][:-len("Backward0")].lower()
    flows = [event for event in trace["traceEvents"] if event["ph"] in ("s", "f")]
    assert len(flows) == 2 * len(backward)
    assert all(event["cat"] == "fwdbwd" for event in flows)
    # Each arrow ends at the engine's event around its node.
    engine_starts = {event["ts"] for event in complete
                     if event["name"].startswith("autograd::engine::evaluate_function: ")}
    assert {event["ts"] for event in flows if event["ph"] == "f"} <= engine_starts


def test_symbolic_tensors_while_tracing():
    def f(a, b):
        with profiler.record_function("traced"):
            return (a * b).sum()

    with profiler.profile(record_shapes=True) as prof:
        make_graph(f, aj.ones(3, 4, requires_grad=True), aj.ones(4))
    traced, = named(prof.function_events, "traced")
    mul, = named(prof.function_events, "autojit::mul")
    assert mul.cpu_parent.name == "aten::mul" and mul.cpu_parent.cpu_parent is traced
    assert mul.input_shapes == [[3, 4], [4]]
    assert mul.sequence_nr >= 0


def test_record_event_for_externally_timed_kernels(tmp_path):
    with profiler.profile() as prof:
        with profiler.record_function("compiled call"):
            start = profiler._clock()
            aj.ones(2) * 2.0
            end = profiler._clock()
            prof.record_event("kernel fused_mul", start, end, [[2]])
        with pytest.raises(ValueError, match="ends .* before it starts"):
            prof.record_event("backwards", 10, 5)
    kernel, = named(prof.function_events, "kernel fused_mul")
    call, = named(prof.function_events, "compiled call")
    assert kernel.cpu_parent is call and kernel.input_shapes == [[2]]
    assert call.time_range.start <= kernel.time_range.start <= kernel.time_range.end \
        <= call.time_range.end
    prof.export_chrome_trace(str(tmp_path / "kernels.json"))
    trace = json.loads((tmp_path / "kernels.json").read_text())
    assert [event["cat"] for event in trace["traceEvents"]
            if event["name"] == "kernel fused_mul"] == ["kernel"]


def test_with_stack_records_user_source_locations():
    with profiler.profile(with_stack=True) as prof:
        aj.ones(2) * 2.0
    for name in ("aten::mul", "autojit::mul"):
        mul, = named(prof.function_events, name)
        assert mul.stack and __file__ in mul.stack[0]
        assert "test_with_stack_records_user_source_locations" in mul.stack[0]
    assert "Source Location" in prof.table()


def test_forward_event_sequence_number_for_functions_returning_tuples():
    # Custom Functions report through forward_event with tuple results; an input returned as
    # is did not create its node.
    x = aj.tensor([1.0], requires_grad=True)
    y = x * 2.0
    with profiler.profile() as prof:
        same = prof.forward_event("Identity", (y,), lambda: y)
        pair = prof.forward_event("Pair", (x,), lambda: (x.detach(), x * 3.0))
    identity, pair_event = (event for event in prof.function_events
                            if event.name in ("Identity", "Pair"))
    assert same is y and identity.sequence_nr == -1
    assert pair_event.name == "Pair" and pair_event.sequence_nr == pair[1].grad_fn.sequence_nr


def test_custom_function_events_link_to_their_backward():
    from custom_function_cases import Exp

    x = aj.ones(2, requires_grad=True)
    with profiler.profile() as prof:
        y = Exp.apply(x)
        y.sum().backward()
    forward, = named(prof.function_events, "Exp")
    backward, = [event for event in prof.function_events if event.is_backward
                 and event.name == y.grad_fn.name()]
    assert forward.sequence_nr == y.grad_fn.sequence_nr == backward.sequence_nr
    assert [child.name for child in forward.cpu_children] == ["aten::exp"]
    assert [child.name for child in forward.cpu_children[0].cpu_children] == ["autojit::exp"]
