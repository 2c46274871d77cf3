"""autojit.utils.benchmark against torch.utils.benchmark: what Timer runs and counts, the
thread count it times on, and Measurement's and Compare's text, character for character."""

import pytest

import autojit
from autojit.utils.benchmark import Compare, Measurement, TaskSpec, Timer, select_unit

torch = pytest.importorskip("torch")
from torch.utils import benchmark as torch_benchmark  # noqa: E402


def _specs(module):
    first = module.TaskSpec(stmt="f(x)", setup="pass", label="L", sub_label="s",
                            description="d", num_threads=2)
    second = module.TaskSpec(stmt="g(x)", setup="y = 1\nz = 2", label="L", sub_label="s2",
                             description="e", num_threads=1)
    third = module.TaskSpec(stmt="f(x)", setup="pass", label="L", sub_label="s",
                            description="e", num_threads=2)
    fourth = module.TaskSpec(stmt="h", setup="pass", label="M", description="d")
    return first, second, third, fourth


def _measurements(module):
    first, second, third, fourth = _specs(module)
    return [
        module.Measurement(10, [1e-3, 1.2e-3, 1.1e-3, 3e-3, 1.05e-3], first),
        module.Measurement(1, [2e-6], second),
        module.Measurement(100, [5e-4, 5.1e-4, 4.9e-4, 5e-4], third),
        module.Measurement(1, [7e-6] * 5, fourth),
    ]


def _without_address(text: str) -> str:
    return "\n".join(text.splitlines()[1:])


def test_a_measurement_summarizes_and_prints_as_torch_s():
    ours, theirs = _measurements(autojit.utils.benchmark), _measurements(torch_benchmark)
    for mine, reference in zip(ours, theirs):
        assert _without_address(repr(mine)) == _without_address(repr(reference))
        for name in ("median", "mean", "iqr", "significant_figures", "has_warnings", "times"):
            assert getattr(mine, name) == pytest.approx(getattr(reference, name)), name
        assert mine.title == reference.title and mine.as_row_name == reference.as_row_name
    assert "WARNING: Interquartile range is" in repr(ours[0])
    merged = Measurement.merge([ours[0], ours[0]])
    assert len(merged) == 1 and merged[0].number_per_run == 1 and len(merged[0].times) == 10


@pytest.mark.parametrize("options", [(), ("trim", "highlight"), ("trim", "colorize"),
                                     ("highlight", "rowwise")])
def test_compare_prints_torch_s_tables(options):
    tables = []
    for module in (autojit.utils.benchmark, torch_benchmark):
        compare = module.Compare(_measurements(module))
        if "trim" in options:
            compare.trim_significant_figures()
        if "highlight" in options:
            compare.highlight_warnings()
        if "colorize" in options:
            compare.colorize()
        if "rowwise" in options:
            compare.colorize(rowwise=True)
        tables.append(str(compare))
    assert tables[0] == tables[1]
    assert "2 threads: " in tables[0] and "Times are in microseconds (us)." in tables[0]


def test_select_unit_matches_torch():
    for seconds in (3e-10, 2e-8, 5e-5, 0.3, 12.0):
        assert select_unit(seconds) == torch_benchmark.select_unit(seconds)


def test_timeit_runs_the_statement_number_times_after_a_warm_up():
    calls = []
    measurement = Timer(stmt="calls.append(1)", setup="calls.clear()",
                        globals={"calls": calls}).timeit(500)
    # A warm-up block of max(500 // 100, 2) = 5 runs, then the timed block.
    assert len(calls) == 500
    assert measurement.number_per_run == 500 and len(measurement.raw_times) == 1
    assert measurement.times[0] == measurement.raw_times[0] / 500


def test_a_timer_times_autojit_code_on_its_thread_count_and_restores_the_setting():
    seen = []
    before = autojit.get_num_threads()
    timer = Timer(stmt="seen.append(torch.get_num_threads()); (x * 2).sum()",
                  globals={"seen": seen, "x": autojit.ones(100)}, num_threads=1,
                  label="double", sub_label="100", description="eager")
    measurement = timer.blocked_autorange(min_run_time=0.02)
    assert set(seen) == {1} and autojit.get_num_threads() == before
    assert measurement.number_per_run >= 1 and sum(measurement.raw_times) >= 0.02
    assert measurement.label == "double" and measurement.num_threads == 1
    adaptive = timer.adaptive_autorange(min_run_time=0.01, max_run_time=0.1)
    assert len(adaptive.raw_times) >= 1
    table = str(Compare([measurement, adaptive])).splitlines()
    # The two blocks merge into one row named by the sub-label, in the description's column.
    assert table[0].startswith("[") and " double " in table[0] and "eager" in table[1]
    assert table[3].split("|")[0].strip() == "100"


def test_a_tutorial_s_timer_over_globals_times_a_transform():
    from autojit.func import jacrev

    weight, x = autojit.randn(4, 4), autojit.randn(4)
    namespace = {"jacrev": jacrev, "predict": lambda w, x: (w @ x).tanh(), "weight": weight,
                 "x": x}
    measurement = Timer(stmt="jacrev(predict, argnums=1)(weight, x)", globals=namespace).timeit(3)
    assert measurement.times[0] > 0
    assert "jacrev(predict, argnums=1)(weight, x)" in repr(measurement)
    assert "torch" not in namespace  # the Timer's namespace is a copy


def test_torch_s_errors():
    with pytest.raises(ValueError, match="Currently only a `str` stmt is supported."):
        Timer(stmt=lambda: None)
    with pytest.raises(ValueError, match="global_setup is C\\+\\+ only"):
        Timer(global_setup="int x;")
    with pytest.raises(NotImplementedError, match="Python statements only"):
        Timer(language="cpp")
    with pytest.raises(ValueError, match="Expected an instance of `Measurement`"):
        Compare([1])
    with pytest.raises(NotImplementedError, match="See `Timer.blocked_autorange.`"):
        Timer().repeat()
    spec = TaskSpec(stmt="pass", setup="pass")
    assert Measurement(1, [1.0], spec).env == "Unspecified env"


def test_utils_hooks_handle_removes_a_hook_registered_through_it():
    # torch.utils.hooks' path; the handle is the one every register_*hook returns.
    from collections import OrderedDict

    from autojit.utils.hooks import RemovableHandle, unserializable_hook

    hooks = OrderedDict()
    handle = RemovableHandle(hooks)
    hooks[handle.id] = print
    with handle:
        assert list(hooks) == [handle.id]
    assert not hooks
    layer = autojit.nn.Linear(2, 2)
    assert isinstance(layer.register_forward_hook(lambda *args: None), RemovableHandle)
    def hook(grad):
        return grad

    assert unserializable_hook(hook).__torch_unserializable__ is True
