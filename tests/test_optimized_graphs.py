"""compiler/optimized_graphs.py: the pass pipeline's results kept by the traced graph, in this
process and across processes through the disk cache."""

from __future__ import annotations

import pickle
import textwrap
from pathlib import Path

import numpy as np
import pytest
from fresh_processes import twice_with_one_cache

import autojit
from autojit import config
from autojit.compiler import optimized_graphs
from autojit.ir.graph import Graph
from autojit.ir.passes import optimize
from autojit.ir.printer import format_graph
from autojit.ops import elementwise as ew

nn = autojit.nn


@pytest.fixture
def fresh(monkeypatch):
    """An empty cache in this process, no disk store, and a record of each (traced graph,
    optimized graph) the passes made."""
    made = []

    def recording(graph):
        result = optimize(graph)
        made.append((graph, result))
        return result

    monkeypatch.setattr(optimized_graphs, "_GRAPHS", optimized_graphs.OrderedDict())
    monkeypatch.setattr(optimized_graphs.config, "CODE_STORE", {})
    monkeypatch.setattr(optimized_graphs, "optimize", recording)
    return made


def _mlp():
    autojit.manual_seed(0)
    model = nn.Sequential(nn.Linear(5, 8), nn.BatchNorm1d(8), nn.ReLU(), nn.Dropout(0.2),
                          nn.Linear(8, 3))
    optimizer = autojit.optim.Adam(model.parameters(), lr=1e-2)
    scheduler = autojit.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.5)

    def step(x, y):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        scheduler.step()  # the learning rate is a runtime scalar input
        return loss.detach()

    x = autojit.randn(6, 5)
    y = autojit.tensor([0, 1, 2, 0, 1, 2])
    return step, (x, y), model


def _cnn():
    autojit.manual_seed(0)
    model = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.BatchNorm2d(4), nn.ReLU(),
                          nn.MaxPool2d(2), nn.Flatten(), nn.Linear(4 * 2 * 2, 3))
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.1, momentum=0.9, weight_decay=1e-4)

    def step(x, y):
        optimizer.zero_grad()
        loss = nn.functional.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.detach()

    return step, (autojit.randn(5, 1, 4, 4), autojit.tensor([0, 1, 2, 1, 0])), model


def _checkpointed():
    autojit.manual_seed(0)
    first, second = nn.Linear(4, 4), nn.Linear(4, 1)

    def step(x):
        hidden = autojit.utils.checkpoint.checkpoint(
            lambda t: first(t).tanh().clamp(-0.0, 0.75), x, use_reentrant=False)
        loss = second(hidden).square().mean()
        loss.backward()
        return loss.detach()

    return step, (autojit.randn(3, 4),), None


@pytest.mark.parametrize("program", [_mlp, _cnn, _checkpointed])
def test_a_kept_graph_is_the_graph_the_passes_made(fresh, program):
    """Each graph the passes made comes back from its encoding with the same text, around the
    traced graph's own inputs (the same captured tensors); a second compiled function over
    the same program runs no passes and computes what the first did."""
    step, arguments, _ = program()
    first = autojit.compile(step)
    values = [first(*arguments).item() for _ in range(3)]
    assert fresh
    for traced, optimized in fresh:
        rebuilt = optimized_graphs.decode(optimized_graphs.encode(optimized, traced), traced)
        assert format_graph(rebuilt) == format_graph(optimized)
        assert [entry.tensor for entry in rebuilt.inputs] == \
            [entry.tensor for entry in traced.inputs]
        assert (rebuilt.backward_ids, rebuilt.recompute_ids, rebuilt.checkpoint_ids,
                rebuilt._next_id) == (optimized.backward_ids, optimized.recompute_ids,
                                      optimized.checkpoint_ids, optimized._next_id)
        targets = [None if entry.target is None else entry.target.name
                   for entry in optimized.outputs]
        assert [None if entry.target is None else entry.target.name
                for entry in rebuilt.outputs] == targets
    passes_run = len(fresh)
    step, arguments, _ = program()
    second = autojit.compile(step)
    assert [second(*arguments).item() for _ in range(3)] == values
    assert len(fresh) == passes_run  # every graph came from the cache


def _graph(literal, attrs=None, share_shape=True):
    graph = Graph()
    shape = (2, 3)
    x = graph.add_input(shape, autojit.float32, "arg", "x")
    y = graph.add_node(ew.MUL, [x, literal], dict(attrs or {}), shape if share_shape else
                       tuple(list(shape)), autojit.float32)
    graph.add_output(y, "out")
    return graph


def test_the_encoding_tells_apart_what_the_passes_tell_apart():
    """Literals of another type or sign, or another attribute, give other bytes (other keys);
    equal graphs give equal bytes whichever of their tuples are one object."""
    encode = optimized_graphs.encode
    encodings = {encode(_graph(literal)) for literal in (0.0, -0.0, 0, False, float("nan"))}
    assert len(encodings) == 5
    assert encode(_graph(2.0, share_shape=True)) == encode(_graph(2.0, share_shape=False))
    assert encode(_graph(2.0, {"mode": "a"})) != encode(_graph(2.0, {"mode": "b"}))
    assert encode(_graph(2.0, {"dtype": autojit.float32})) != \
        encode(_graph(2.0, {"dtype": autojit.float64}))


def test_numpy_values_in_a_graph_are_encoded_exactly_and_callables_refused():
    """NumPy arrays, scalars and dtypes (which pickle writes through NumPy's reconstructors)
    come back equal, of their dtype and order, and tell their graphs apart; a function, a
    class or NumPy's own functions make a graph uncacheable."""
    encode = optimized_graphs.encode
    values = [np.arange(6, dtype=np.float32).reshape(2, 3), np.arange(6.0).reshape(2, 3).T,
              np.float32(1.5), np.int64(3), np.dtype("float32"), np.bool_(True)]
    for value in values:
        graph = _graph(2.0, {"extra": value})
        data = encode(graph)
        stored = optimized_graphs.decode(data, graph).nodes[0].attrs["extra"]
        assert type(stored) is type(value)
        if isinstance(value, np.ndarray):
            assert stored.dtype == value.dtype and stored.strides == value.strides
            np.testing.assert_array_equal(stored, value)
        else:
            assert stored == value
    assert len({encode(_graph(2.0, {"extra": value})) for value in
                (np.float32(1.5), np.float64(1.5), 1.5, np.arange(3), np.arange(3.0))}) == 5
    for refused in (print, len, lambda: 0, type, np.sum, object()):
        with pytest.raises(optimized_graphs.Uncacheable):
            encode(_graph(2.0, {"extra": refused}))


def test_a_graph_holding_an_object_it_cannot_name_runs_the_passes(fresh, monkeypatch):
    class Opaque:
        pass

    with pytest.raises(optimized_graphs.Uncacheable):
        optimized_graphs.encode(_graph(2.0, {"how": Opaque()}))
    refused = []

    def refusing(graph, source=None):
        refused.append(graph)
        raise optimized_graphs.Uncacheable("a test")

    monkeypatch.setattr(optimized_graphs, "encode", refusing)
    graph = _graph(2.0)
    result = optimized_graphs.optimize_cached(graph)
    assert format_graph(result) == format_graph(optimize(graph))
    assert refused == [graph] and len(fresh) == 1 and not optimized_graphs._GRAPHS


def test_an_entry_naming_anything_else_is_refused_and_the_passes_run(fresh, monkeypatch):
    """A damaged or foreign entry in the store is a miss: the restricted unpickler refuses a
    pickle that names a function outside NumPy's constructors, which never runs."""
    calls = []

    class Evil:
        def __reduce__(self):
            return (calls.append, ("ran",))

    graph = _graph(3.0)
    key = optimized_graphs._key(optimized_graphs.encode(graph))
    stored = {key: pickle.dumps(Evil())}
    monkeypatch.setattr(optimized_graphs.config, "CODE_STORE",
                        {"load": stored.get, "store": stored.__setitem__})
    result = optimized_graphs.optimize_cached(graph)
    assert not calls
    assert format_graph(result) == format_graph(optimize(graph))
    assert len(fresh) == 1
    assert optimized_graphs.decode(stored[key], graph) is not None  # replaced by a good one


def test_every_pass_and_what_it_calls_is_in_the_fingerprint():
    hashed = set(config.package_files(optimized_graphs._PASS_SOURCES))
    root = Path(optimized_graphs.__file__).resolve().parents[1]
    for folder, pattern in (("ir", "*.py"), ("ir/passes", "*.py"), ("ops", "**/*.py"),
                            ("tensor", "*.py")):
        for path in (root / folder).glob(pattern):
            assert path.relative_to(root).as_posix() in hashed


def test_optimized_graphs_come_back_from_the_disk_cache_in_another_process(tmp_path):
    """A fresh process finds the graphs another one stored (AUTOJIT_CACHE_DIR): it runs no
    passes, and its steps compute what the first process's did."""
    script = textwrap.dedent("""
        import sys
        sys.path.insert(0, {tests!r})
        import autojit
        from autojit.compiler import optimized_graphs
        runs = []
        real = optimized_graphs.optimize
        def counting(graph):
            runs.append(1)
            return real(graph)
        optimized_graphs.optimize = counting
        from test_optimized_graphs import _cnn
        step, arguments, _ = _cnn()
        step = autojit.compile(step)
        losses = [step(*arguments).item() for _ in range(3)]
        print(len(runs), *losses)
    """).format(tests=str(Path(__file__).resolve().parent))
    first, second = twice_with_one_cache(script, tmp_path)
    assert first[0] >= 1 and second[0] == 0
    np.testing.assert_equal(first[1:], second[1:])


def test_another_pass_list_never_meets_the_default_lists_results(fresh, monkeypatch):
    from autojit.ir.passes import pipeline

    graph = _graph(2.0)
    key = optimized_graphs._key(optimized_graphs.encode(graph))
    passes = pipeline.DEFAULT_PASSES
    monkeypatch.setattr(pipeline, "DEFAULT_PASSES", passes[:-1])
    assert optimized_graphs._key(optimized_graphs.encode(graph)) != key
    monkeypatch.setattr(pipeline, "DEFAULT_PASSES", passes)
    assert optimized_graphs._key(optimized_graphs.encode(graph)) == key
    monkeypatch.setattr(pipeline, "MAX_ROUNDS", 1)
    assert optimized_graphs._key(optimized_graphs.encode(graph)) != key


@pytest.mark.parametrize("seed", range(30000, 30012))
def test_random_programs_compiled_again_from_kept_graphs_match_eager(fresh, seed):
    """tests/random_programs.py's training programs, compiled twice: the second run builds
    its optimized graphs from the kept ones (each program's objects are new, its traced
    graphs the same) and must still leave what eager leaves after every call."""
    from program_runs import differences, first_warned_call, run
    from random_programs import UNFIXED_NAMES, random_spec

    kept = []
    decode = optimized_graphs.decode

    def counting(data, source):
        kept.append(1)
        return decode(data, source)

    spec = random_spec(seed, UNFIXED_NAMES)
    eager, _ = run(spec, compiled=False)
    run(spec, compiled=True)
    passes_run = len(fresh)
    optimized_graphs.decode = counting
    try:
        compiled, _ = run(spec, compiled=True)
    finally:
        optimized_graphs.decode = decode
    warned = first_warned_call(compiled)
    silent = [item for item in differences(spec, eager, compiled)
              if warned is None or item[0] < warned]
    assert not silent, silent[:3]
    if passes_run:
        assert kept and len(fresh) == passes_run  # every graph of the second run was kept
