"""Diagnostics and conveniences of autojit.compile: the recompile reason (what changed since
the call before, with both values), errors for unknown AUTOJIT_LOG topics and pass names,
autojit.compiler.explain, `stats()`, the compiled-module proxy and Module.compile (against
torch's OptimizedModule), and pickling a compiled function by reference."""

from __future__ import annotations

import copy
import pickle
import warnings

import numpy as np
import pytest

import autojit
from autojit import nn
from autojit.compiler import CompileStats, ExplainOutput, explain
from autojit.ir.passes import optimize
from autojit.ir.passes.pipeline import run_pipeline

torch = pytest.importorskip("torch")


def _double(x):
    return x * 2


@autojit.compile
def _triple(x):
    return x * 3


def _sgd_step(dynamic):
    w = autojit.ones(3, requires_grad=True)
    optimizer = autojit.optim.SGD([w], lr=0.0031)

    def step(x):
        optimizer.zero_grad()
        (w * x.sum()).sum().backward()
        optimizer.step()

    return autojit.compile(step, dynamic=dynamic), optimizer


# ---- recompile reasons ------------------------------------------------------------------------

def test_a_recompile_names_what_changed_since_the_last_call(monkeypatch, capsys):
    """Two executables (sizes 3 and 4): the lr changes while size-4 calls run, so the reason is
    the lr of the size-4 executable, not the shape the size-3 one (the oldest) fails on."""
    step, optimizer = _sgd_step(dynamic=False)
    for size in (3, 3, 4, 4):
        step(autojit.ones(size))
    assert len(step.executables) == 2
    optimizer.param_groups[0]["lr"] = 0.0029
    monkeypatch.setenv("AUTOJIT_LOG", "recompiles")
    step(autojit.ones(4))
    expected = "optimizer.param_groups[0]['lr']: 0.0031 -> 0.0029"
    assert step.recompile_reasons == ["args[0].shape: [3] -> [4]", expected]
    assert f"step: recompiling because {expected}" in capsys.readouterr().err


def test_the_recompile_limit_warning_names_the_change():
    scale = {"factor": 2}
    step = autojit.compile(lambda x: x * scale["factor"], recompile_limit=1)
    step(autojit.ones(2))
    scale["factor"] = 5
    with pytest.warns(autojit.CompileWarning, match=r"scale\['factor'\]: 2 -> 5"):
        assert step(autojit.ones(2)).tolist() == [5.0, 5.0]


# ---- unknown names ----------------------------------------------------------------------------

def test_unknown_log_topics_and_pass_names_are_errors_listing_the_known_ones(monkeypatch):
    monkeypatch.setenv("AUTOJIT_LOG", "recompiles,recompile")
    with pytest.raises(ValueError, match="AUTOJIT_LOG: unknown topic recompile; the topics are "
                                         "recompiles, graph_breaks, guards, kernels, stages"):
        autojit.compile(_double)
    monkeypatch.setenv("AUTOJIT_LOG", "all")
    autojit.compile(_double)
    monkeypatch.delenv("AUTOJIT_LOG")
    monkeypatch.setenv("AUTOJIT_DUMP_PASSES", "cse,fusion")
    with pytest.raises(ValueError, match="AUTOJIT_DUMP_PASSES: unknown pass fusion; the passes "
                                         "are simplify, slices, products, fold, cse, dce"):
        autojit.compile(_double)
    monkeypatch.delenv("AUTOJIT_DUMP_PASSES")
    graph = autojit.make_graph(_double, autojit.ones(2))
    with pytest.raises(ValueError, match="unknown pass 'fusion'; the passes are simplify"):
        optimize(graph, passes=["cse", "fusion"])
    with pytest.raises(ValueError, match=r"dump=...\): unknown pass dcee; the passes are"):
        run_pipeline(graph, dump=["dcee"])


# ---- explain and stats ------------------------------------------------------------------------

def _breaking(x):
    y = x.sin() * 2
    if y.sum().numpy() > 0:  # a graph break: compiled as a split of the graph
        return y.cos()
    return y


def _eager_breaking(x):
    y = x.sin() * 2
    autojit.manual_seed(0)  # a graph break that runs the call eagerly
    return y


def test_explain_lists_graphs_ops_guards_and_graph_breaks():
    report = explain(lambda x, y: (x * y).exp().sum() * 2, autojit.ones(3), autojit.ones(3))
    assert isinstance(report, ExplainOutput)
    assert report.graph_count == 1 and report.graph_break_count == 0
    assert report.ops_per_graph == [{"mul": 2, "exp": 1, "sum": 1}] and report.op_count == 4
    assert "args[1]._payload.shape == (3,)" in report.out_guards[0]
    assert report.result.item() == pytest.approx(6 * np.e)
    text = str(report)
    assert "Graph Count: 1" in text and "Ops 1: mul x2, exp, sum" in text

    report = explain(_breaking)(autojit.ones(3))  # torch's form: explain(fn)(*args)
    assert report.graph_count == 2 and report.graph_break_count == 1
    record = report.break_reasons[0]
    assert (record.filename, record.lineno) == (__file__, _breaking.__code__.co_firstlineno + 2)
    assert record.split and "Tensor.numpy()" in record.reason
    assert f"User Line: {__file__}:{record.lineno}: if y.sum().numpy() > 0:" in str(report)
    assert report.stats.eager_calls == 0 and report.stats.segments == 2

    report = explain(_eager_breaking, autojit.ones(3))
    assert report.graph_count == 0 and report.graph_break_count == 1
    assert not report.break_reasons[0].split and report.stats.eager_calls == 1
    with pytest.raises(TypeError, match="explain expects a callable, got int"):
        explain(3)


def test_explain_of_a_compiled_function_leaves_it_alone_and_reports_recompiles():
    compiled = autojit.compile(_double)
    compiled(autojit.ones(2))
    report = explain(compiled, autojit.ones(2, dtype=autojit.float64))
    assert len(compiled.executables) == 1 and report.graph_count == 1
    assert "autojit.float64" in report.out_guards[0]

    scale = {"factor": 2.0}

    def keyworded(x, power=2):
        return x ** power * scale["factor"]

    report = explain(keyworded, autojit.ones(2), power=3)
    assert report.ops_per_graph == [{"pow": 1, "mul": 1}] and report.stats.calls == 1


def test_stats_count_calls_traces_and_graph_breaks():
    scale = {"factor": 2.0}
    step = autojit.compile(lambda x: x * scale["factor"], dynamic=False)
    assert step.stats() == CompileStats()
    for size in (2, 2, 3, 3):
        step(autojit.ones(size))
    step(x=autojit.ones(2))  # a keyword call is counted with the others
    assert step.stats().as_dict() == {"calls": 5, "compiled_calls": 5, "eager_calls": 0,
                                      "state_calls": 0, "traces": 3, "recompiles": 1,
                                      "graph_breaks": 0, "split_breaks": 0,
                                      "value_check_failures": 0, "segments": 1}
    breaking = autojit.compile(_eager_breaking)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", autojit.CompileWarning)
        for _ in range(3):
            breaking(autojit.ones(2))
    assert breaking.stats() == CompileStats(calls=3, compiled_calls=0, eager_calls=3,
                                            traces=2, recompiles=0, graph_breaks=2)
    # A branch on a graph value is checked between two segments, not a graph break.
    branching = autojit.compile(lambda x: x * 2 if x.sum().item() > 0 else x * 3)
    for value in (1.0, 2.0, -1.0):
        branching(autojit.tensor([value]))
    assert branching.stats() == CompileStats(calls=3, compiled_calls=3, traces=2,
                                             recompiles=1, value_check_failures=1, segments=2)
    assert autojit.compile(_double, backend="eager")(autojit.ones(2)) is not None


# ---- the compiled module ----------------------------------------------------------------------

def test_a_compiled_module_is_a_proxy_as_torchs_optimized_module():
    mine = nn.Linear(2, 3)
    theirs = torch.nn.Linear(2, 3)
    compiled, optimized = autojit.compile(mine), torch.compile(theirs)
    assert type(compiled).__name__ == type(optimized).__name__ == "OptimizedModule"
    assert isinstance(compiled, nn.Module) and compiled._orig_mod is mine
    assert list(compiled.state_dict()) == list(optimized.state_dict())  # "_orig_mod.weight"
    assert [name for name, _ in compiled.named_parameters()] == [
        name for name, _ in optimized.named_parameters()]
    assert repr(compiled) == repr(optimized).replace("torch", "autojit")
    for module in (compiled, optimized):
        assert module.eval() is module and not module.training
        assert not module._orig_mod.training
        module.training = True
        assert module._orig_mod.training
        module.scale = 3  # attributes are the module's
        assert module._orig_mod.scale == 3 and "scale" not in module.__dict__
        assert module.weight is module._orig_mod.weight
    assert compiled.to(autojit.float64) is compiled and mine.weight.dtype is autojit.float64

    state = {key: value * 0 + 1 for key, value in compiled.state_dict().items()}
    compiled.load_state_dict(state)
    with pytest.raises(RuntimeError, match="Missing key"):
        compiled.load_state_dict(mine.state_dict())  # unprefixed keys, refused as torch does
    x = autojit.ones(4, 2, dtype=autojit.float64)
    assert compiled(x).tolist() == [[3.0] * 3] * 4
    compiled(x)
    assert compiled.stats().compiled_calls == 2 and len(compiled.executables) == 1


def test_module_compile_compiles_in_place():
    mine = nn.Sequential(nn.Linear(2, 2), nn.Tanh())
    theirs = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Tanh())
    theirs.load_state_dict({key: torch.tensor(value.numpy())
                            for key, value in mine.state_dict().items()})
    for module in (mine, theirs):  # hooks run in the compiled call
        module.register_forward_hook(lambda module, args, out: out * 2)
    x = np.linspace(-1, 1, 6).reshape(3, 2).astype(np.float32)
    expected = theirs(torch.tensor(x)).detach().numpy()  # torch's eager values
    assert mine.compile(dynamic=False) is None and theirs.compile() is None
    assert list(mine.state_dict()) == list(theirs.state_dict())
    for _ in range(2):
        out = mine(autojit.tensor(x))
    np.testing.assert_allclose(out.detach().numpy(), expected, rtol=1e-6)
    assert mine._compiled_call_impl.stats().compiled_calls == 2


# ---- pickling ---------------------------------------------------------------------------------

def test_a_compiled_function_pickles_by_reference():
    assert pickle.loads(pickle.dumps(_triple)) is _triple
    compiled = autojit.compile(_double, backend="interpreter", dynamic=False)
    compiled(autojit.ones(2))
    loaded = pickle.loads(pickle.dumps(compiled))
    assert loaded is not compiled and loaded.fn is _double and not loaded.executables
    assert (loaded.backend, loaded.dynamic) == ("interpreter", False)
    assert loaded(autojit.ones(2)).tolist() == [2.0, 2.0]
    with pytest.raises(pickle.PicklingError, match=r"cannot pickle the compiled function "
                                                   r".*<lambda>: it compiles test_compile_"):
        pickle.dumps(autojit.compile(lambda x: x))
    copied = copy.deepcopy(autojit.compile(lambda x: x + 1))  # a copy compiles anew
    assert copied(autojit.ones(2)).tolist() == [2.0, 2.0] and len(copied.executables) == 1

    model = autojit.compile(nn.Linear(2, 1))
    model(autojit.ones(1, 2))
    for loaded in (pickle.loads(pickle.dumps(model)), copy.deepcopy(model)):
        assert list(loaded.state_dict()) == ["_orig_mod.weight", "_orig_mod.bias"]
        assert loaded._compiled_function.fn is loaded._orig_mod is not model._orig_mod
        assert loaded(autojit.ones(1, 2)).tolist() == model(autojit.ones(1, 2)).tolist()
