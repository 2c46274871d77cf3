"""torch.compiler's and torch._dynamo's names on autojit's compiler: compile's mode, options,
disable and torch's backend names; disable, is_compiling, reset, allow_in_graph,
assume_constant_result and list_backends; the _dynamo.config settings autojit honours
(docs/compiler.md).
"""

from __future__ import annotations

import warnings

import pytest
from torch_compare import torch

import autojit

dynamo_config = autojit._dynamo.config


def _outcome(framework, **options):
    try:
        compiled = framework.compile(lambda x: x * 2 + 1, **options)
        return "ok", compiled(framework.ones(2)).tolist()
    except (RuntimeError, AttributeError) as error:
        return type(error).__name__, str(error)


@pytest.mark.parametrize("options", [
    {"mode": "default"}, {"mode": "reduce-overhead"}, {"mode": "max-autotune"},
    {"mode": "max-autotune-no-cudagraphs"}, {"mode": None}, {"mode": "fast"},
    {"mode": "default", "options": {}}, {"options": {"max_autotune": True}}, {"options": 3},
    {"backend": "inductor"}, {"backend": "aot_eager"}, {"backend": "eager"},
    {"disable": True}, {"fullgraph": True, "dynamic": True, "backend": "inductor"},
], ids=str)
def test_compile_takes_torchs_mode_options_and_backends(options):
    assert _outcome(autojit, **options) == _outcome(torch, **options)


def test_torch_backend_names_map_to_autojits():
    assert autojit.compile(lambda x: x, backend="inductor").backend == "cpu"
    assert autojit.compile(lambda x: x, backend="aot_eager").backend == "eager"
    assert autojit.compile(lambda x: x, disable=True).backend == "eager"
    with pytest.raises(ValueError, match="unknown backend 'cudagraphs'"):
        autojit.compile(lambda x: x, backend="cudagraphs")
    assert autojit.compiler.list_backends() == ["cpu", "cuda", "inductor"]
    assert {"eager", "aot_eager", "interpreter"} <= set(autojit._dynamo.list_backends(()))


def test_disable_runs_eagerly_and_breaks_the_graph_of_a_caller():
    seen = []

    @autojit.compiler.disable(reason="logs")
    def log(x):
        seen.append(autojit.compiler.is_compiling())
        return x * 2

    @autojit.compile
    def step(x):
        return log(x + 1).sum()

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert step(autojit.ones(2)).item() == 8.0
    assert seen == [False]  # it ran eagerly, once, with the rest of the call
    assert step.stats().graph_breaks == 1
    assert "log is disabled for compilation (autojit.compiler.disable: logs)" in \
        str(caught[0].message)
    direct = autojit.compile(log)
    assert direct(autojit.ones(1)).tolist() == [2.0] and direct.stats().traces == 0
    layer = autojit.nn.Linear(2, 3)
    disabled = autojit._dynamo.disable(layer)
    assert disabled(autojit.ones(2)).shape == (3,) and disabled.weight is layer.weight


def test_is_compiling_is_true_while_tracing():
    @autojit.compile
    def branch(x):
        return x + 1 if autojit.compiler.is_compiling() else x - 1

    assert not autojit.compiler.is_compiling() and not autojit._dynamo.is_compiling()
    assert branch(autojit.zeros(1)).tolist() == [1.0]
    assert autojit.compiler.is_dynamo_compiling() is False
    assert autojit.compiler.is_exporting() is False


def test_reset_forgets_every_compiled_function():
    compiled = autojit.compile(lambda x: x + 1)
    module = autojit.compile(autojit.nn.Linear(2, 2))
    compiled(autojit.ones(2))
    module(autojit.ones(2))
    assert compiled.stats().traces == 1 and compiled.executables
    autojit.compiler.reset()
    assert compiled.stats().calls == 0 and not compiled.executables
    compiled(autojit.ones(2))
    assert compiled.stats().traces == 1
    autojit._dynamo.reset()
    assert module(autojit.ones(2)).shape == (2,)


def test_allow_in_graph_and_assume_constant_result():
    def double(x):
        return x * 2

    assert autojit.compiler.allow_in_graph(double) is double
    weight = autojit.tensor([3.0])

    @autojit.compiler.assume_constant_result
    def factor():
        return weight.item()

    @autojit.compile
    def scale(x):
        return double(x) * factor()

    assert scale(autojit.ones(1)).tolist() == [6.0]
    weight.fill_(5.0)  # the constant was taken when traced, and is not guarded
    assert scale(autojit.ones(1)).tolist() == [6.0] and scale.stats().traces == 1
    assert factor() == 5.0


def test_dynamo_config_recompile_limit_and_suppress_errors():
    assert dynamo_config.cache_size_limit == dynamo_config.recompile_limit == \
        torch._dynamo.config.cache_size_limit
    with dynamo_config.patch(cache_size_limit=2):
        assert dynamo_config.recompile_limit == 2
        assert autojit.compile(lambda x: x).recompile_limit == 2
    assert autojit.compile(lambda x: x).recompile_limit == 8
    with pytest.raises(AttributeError, match="autojit._dynamo.config.no_such_flag does not "
                                             "exist"):
        dynamo_config.no_such_flag = True
    dynamo_config.capture_scalar_outputs = True
    dynamo_config.capture_scalar_outputs = False

    def broken(x):
        raise ValueError("a bug in the program")

    with pytest.raises(ValueError, match="a bug"):
        autojit.compile(broken)(autojit.ones(1))
    with dynamo_config.patch(suppress_errors=True):
        compiled = autojit.compile(broken)
        with warnings.catch_warnings(record=True) as caught, pytest.raises(ValueError):
            warnings.simplefilter("always")
            compiled(autojit.ones(1))  # gives up compiling; eager raises the program's error
    assert compiled.eager_reason is not None
    assert "suppress_errors" in str(caught[0].message)
