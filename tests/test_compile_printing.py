"""Printing inside a compiled function prints each call's values, as eager does; a formatted
tensor that is not printed is a graph break; without a code generator, compile warns once."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

import autojit
from autojit.compiler.api import CompileWarning
from autojit.tensor.graph_break import GraphBreak


def _printed(capsys, function, calls):
    for call in calls:
        function(*call())
    return capsys.readouterr().out


def test_print_in_a_compiled_function_prints_every_calls_values(capsys):
    weight = autojit.nn.Parameter(autojit.tensor([1.0, 2.0]))

    def step(x):
        loss = (x * weight).sum()
        print("step", loss, x, sep=" | ")
        print(f"loss {loss:.3f} {x}", end="!\n")
        print("no tensor here")
        with autojit.no_grad():
            weight.sub_(0.5)
        print(weight)  # a captured tensor, after its update in this call
        return loss

    calls = [lambda i=i: (autojit.ones(2) * i,) for i in range(3)]
    eager = _printed(capsys, step, calls)
    weight.data = autojit.tensor([1.0, 2.0])
    compiled = autojit.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        got = _printed(capsys, compiled, calls)
    assert got == eager
    assert "step | tensor(2., grad_fn=<SumBackward0>) | tensor([1., 1.])" in got
    assert len(compiled.executables) == 1 and compiled.executables[0].calls == 3


def test_a_formatted_tensor_that_is_not_printed_is_a_graph_break():
    def describe(x):
        label = f"{x}"  # kept as a string: no run can fill in each call's values there
        return x * len(label)

    with pytest.warns(CompileWarning, match=r"formatted into a string that is not printed.*"
                                            r"label = f\"\{x\}\""):
        result = autojit.compile(describe)(autojit.ones(2))
    assert result.tolist() == describe(autojit.ones(2)).tolist()
    with pytest.raises(GraphBreak, match="formatted into a string that is not printed"):
        autojit.compile(describe, fullgraph=True)(autojit.ones(2))


def test_a_graph_break_after_a_print_prints_once(capsys):
    def step(x):
        print("before", x)
        return x * x.sum().item()

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        autojit.compile(step)(autojit.ones(2))
    assert capsys.readouterr().out == "before tensor([1., 1.])\n"


def test_without_a_code_generator_compile_warns_once_and_runs_the_interpreter():
    program = (
        "import sys, warnings\n"
        "sys.modules['llvmlite'] = sys.modules['llvmlite.binding'] = None\n"
        "import autojit\n"
        "with warnings.catch_warnings(record=True) as caught:\n"
        "    warnings.simplefilter('always')\n"
        "    f = autojit.compile(lambda x: x * 2 + 1)\n"
        "    print(f(autojit.ones(2)).tolist(), f(autojit.ones(3)).tolist())\n"
        "print(len(caught), 'code generator cannot be loaded' in str(caught[0].message))\n")
    output = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                            check=True).stdout
    assert output.splitlines() == ["[3.0, 3.0] [3.0, 3.0, 3.0]", "1 True"]
