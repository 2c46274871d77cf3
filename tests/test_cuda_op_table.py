"""Every op table row on CUDA tensors, eager and compiled, against the CPU's results.

For each OpInfo row of tests/opinfo/ and each of its dtypes (float16 aside: the CUDA target
refuses it, see docs/cuda.md), the row's samples run on CUDA tensors and must match the same
call on CPU tensors, which tests/test_op_table.py checks against NumPy: the forward in every
dtype, and in float64 the first-order gradients and the second-order ones (a
`create_graph=True` gradient differentiated again, which also compares the first ones; a row
without a second derivative has its first-order check), each eagerly (one generated kernel per
op) and through `autojit.compile` (fused CUDA kernels), on the row's plain sample. Every
result must stay on the device.
Where the CPU raises, CUDA must raise the same error.

Under Numba's CUDA simulator (tests/cuda_simulator.py) this is the CI's check of the CUDA
target; with NUMBA_ENABLE_CUDASIM=0 the same tests run on a real GPU. The cases are those of
tests/test_compile_op_table.py (a few samples per row, the plain case first), for the rows not
marked `cuda=False` (a large family's rows that representative rows of it cover here). A
factory row's call with no tensor to follow is made with device="cuda" (forward_cases); a row's
documented graph break on a GPU (OpInfo.graph_breaks["cuda"]) is checked as
tests/test_compile_op_table.py checks one on the CPU.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from cuda_simulator import MARKS  # before autojit: it enables the simulator
from test_compile_op_table import KNOWN_FAILURES, ROWS, assert_same, forward_cases, gradient_cases

import autojit
from autojit import CompileWarning

pytestmark = MARKS

DTYPES = ("float32", "float64", "int32", "int64", "bool")


def params(predicate, kind: str):
    """(row, dtype, compiled) params where predicate(row, dtype, compiled); the rows the
    compiler cannot compile today marked as in tests/test_compile_op_table.py."""
    found = []
    for row in ROWS:
        if not row.cuda:
            continue
        for dtype in row.dtypes:
            for compiled in (False, True):
                if dtype not in DTYPES or not predicate(row, dtype, compiled):
                    continue
                reason = compiled and (KNOWN_FAILURES.get((kind, row.name, dtype))
                                       or KNOWN_FAILURES.get((kind, row.name, None)))
                marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
                found.append(pytest.param(row, dtype, compiled, marks=marks, id=(
                    f"{row.name}-{dtype}-{'compiled' if compiled else 'eager'}")))
    return found


def on_host(value, where: str, on_device: bool = True):
    """The CUDA result copied to the host, checking that every tensor in it is on the GPU
    where `on_device` (a call with no tensor arguments that is not a factory's has no device to
    follow: eagerly it makes its result on the CPU, as torch's functions do)."""
    if isinstance(value, (tuple, list)):
        items = [on_host(item, where, on_device) for item in value]
        # A named tuple (torch.return_types) takes its fields as arguments.
        return type(value)(*items) if hasattr(value, "_fields") else type(value)(items)
    if isinstance(value, autojit.Tensor):
        assert value.is_cuda or not on_device, f"{where}: a result is on {value.device}"
        return value.cpu()
    return value


def run(function, make_tensors, compiled: bool, where: str, row=None):
    """(CPU eager result, CUDA result), or None when both raise the same error."""
    graph_break = compiled and row is not None and (
        getattr(function, "graph_break", None) or row.graph_breaks.get("cuda"))
    if compiled:
        function_on_device = autojit.compile(function, backend="cuda")
    else:
        function_on_device = function
    try:
        expected = function(*make_tensors("cpu"))
    except Exception as error:  # noqa: BLE001 - CUDA must raise the same
        with pytest.raises(type(error)) as raised:
            function_on_device(*make_tensors("cuda"))
        essential = str(error).split(": ", 1)[-1]
        assert essential in str(raised.value), f"{where}: {raised.value!r} vs CPU {error!r}"
        return None
    tensors = make_tensors("cuda")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always" if graph_break else "error", CompileWarning)
        actual = function_on_device(*tensors)
    if graph_break:
        said = [str(w.message) for w in caught if issubclass(w.category, CompileWarning)]
        assert any(graph_break in message for message in said), (
            f"{where}: no CompileWarning naming {graph_break!r}: {said}")
    elif compiled:
        assert function_on_device.eager_reason is None, function_on_device.eager_reason
        assert len(function_on_device.executables) == 1, "no compiled executable ran"
    factory = row is not None and row.factory
    return expected, on_host(actual, where, on_device=bool(tensors) or factory)


def check(row, cases, compiled: bool) -> None:
    for where, function, make_tensors in cases:
        both = run(function, make_tensors, compiled, where, row)
        if both is not None:
            assert_same(both[1], both[0], row, where)


def differentiable(row, dtype, compiled=False) -> bool:
    return row.differentiable and dtype == "float64"


def twice_differentiable(row, dtype, compiled=False) -> bool:
    return differentiable(row, dtype) and row.gradgrad


def once_differentiable(row, dtype, compiled=False) -> bool:
    # A twice-differentiable row's first gradients are compared by its second-order check.
    return differentiable(row, dtype) and not row.gradgrad


# Samples per row for the gradient checks on the GPU: the plain case. The CPU op table checks
# the rest of a row's samples; each simulated CUDA gradient takes seconds.
GRADIENT_SAMPLES = 1


def forward_only(row, dtype, compiled) -> bool:
    # Compiled, differentiable rows' float64 outputs are checked with their gradients.
    return not (compiled and differentiable(row, dtype))


@pytest.mark.parametrize(("row", "dtype", "compiled"), params(forward_only, "forward"))
def test_forward(row, dtype, compiled):
    check(row, forward_cases(row, dtype), compiled)


@pytest.mark.parametrize(("row", "dtype", "compiled"), params(once_differentiable, "grad"))
def test_gradient(row, dtype, compiled):
    check(row, gradient_cases(row, dtype, second_order=False, limit=GRADIENT_SAMPLES), compiled)


@pytest.mark.parametrize(("row", "dtype", "compiled"), params(twice_differentiable, "gradgrad"))
def test_second_order_gradient(row, dtype, compiled):
    """The first gradients (create_graph=True) and the second ones, against the CPU."""
    check(row, gradient_cases(row, dtype, second_order=True, limit=GRADIENT_SAMPLES), compiled)


def test_cpu_factories_in_a_function_compiled_for_the_gpu_stay_on_the_cpu():
    """zeros(3) without device= is a CPU tensor in a compiled function too, as in torch, and
    so is what ops compute from CPU tensors alone; a tensor of the call's reports its GPU."""
    def made(x):
        # Decided while tracing: the call's tensors, and what ops make of them, are on cuda.
        on_gpu = x.is_cuda and not x.is_cpu and (x + 1).device == autojit.device("cuda:0")
        positions = autojit.arange(x.shape[0])
        on_device = autojit.zeros(3, device=x.device)
        return (x + 1 if on_gpu else x - 1, autojit.zeros(3), positions, positions * 2 + 1,
                on_device + 1, x[positions] * autojit.tensor(2.0), x.sum() + autojit.ones(()))

    x = autojit.ones(2, 3, device="cuda")
    compiled = autojit.compile(made, backend="cuda")
    expected = made(x)
    with warnings.catch_warnings():
        warnings.simplefilter("error", autojit.CompileWarning)  # compiled, no graph break
        for _ in range(2):
            results = compiled(x)
            assert [t.device for t in results] == [t.device for t in expected]
            for mine, eager in zip(results, expected, strict=True):
                np.testing.assert_array_equal(mine.cpu().numpy(), eager.cpu().numpy())
    assert len(compiled.executables) == 1

    def mixed(x):
        return x + autojit.zeros(2, 3)

    with pytest.raises(RuntimeError, match="Expected all tensors to be on the same device"):
        autojit.compile(mixed, backend="cuda")(x)
