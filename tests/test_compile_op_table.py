"""Every op table row compiled: forward, first and second order gradients against eager.

For each OpInfo row of every tests/opinfo/*.py module and each of its float dtypes, the row's
function is compiled with `autojit.compile(backend="cpu")`, and its results must equal eager's
(which tests/test_op_table.py checks against NumPy, and which runs each node through the same
NumPy impls as the reference interpreter). For differentiable rows, in float64, the gradient of
a weighted sum of the outputs is computed inside the compiled function with `autograd.grad`,
and so is the second order (a `create_graph=True` gradient differentiated again). A subset of
rows also runs through backend="interpreter", so every backend is tested against the reference.

Compiled must compile: a call that fell back to eager (a graph break, a CompileWarning) fails
the test, but for a documented graph break (Sample.graph_break, OpInfo.graph_breaks), whose
warning must come and whose result must still be eager's. Rows that cannot compile for a known
reason are listed in KNOWN_FAILURES and marked xfail(strict=True), so they fail again, loudly,
once fixed. A factory row (OpInfo.factory) is called with no tensor at all where its samples
have none: its result is a constant of the compiled graph; make_tensors(device) says the device
its call makes its result on. The forwards of the complex dtypes' rows run with
AUTOJIT_COMPILE_COMPLEX_ROWS=1 (compiled complex ops: docs/notes/complex.md).
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest

import autojit
from autojit import CompileWarning, autograd

sys.path.insert(0, str(Path(__file__).parent))

import opinfo  # noqa: E402
from opinfo import FLOATING, OpInfo  # noqa: E402

MODULE_NAMES = sorted(path.stem for path in (Path(__file__).parent / "opinfo").glob("*.py")
                      if path.stem != "__init__")
ROWS: list[OpInfo] = []
for _module_name in MODULE_NAMES:
    ROWS.extend(importlib.import_module(f"opinfo.{_module_name}").ROWS)

# Compiled against eager, per result dtype, for a row with OpInfo's default atol/rtol (the
# vectorized math is within a few ulp, and reductions may sum in another order).
TOLERANCES = {"float16": (1e-3, 1e-2), "float32": (1e-5, 1e-4), "float64": (1e-10, 1e-7),
              "complex64": (1e-5, 1e-4), "complex128": (1e-10, 1e-7)}
DEFAULT_ATOL, DEFAULT_RTOL = OpInfo.atol, OpInfo.rtol
# Samples per row and dtype, spread over the row's list (the first is the plain case, the last
# ones are edge cases): each new shape compiles new kernels (10-70 ms each), so a few suffice.
SAMPLES = {"forward": 3, "forward-integer": 2, "grad": 2, "gradgrad": 2}
# The forward also runs in the integer and bool dtypes a row has, for the integer lowering, and
# with AUTOJIT_COMPILE_COMPLEX_ROWS=1 in the complex ones (2 s more of CPU: the complex rows'
# real-input forms, polar, fft.rfft, stft, ..., compile in every run).
ALL_DTYPES = FLOATING + ("int32", "int64", "bool") + (
    ("complex64", "complex128") if os.environ.get("AUTOJIT_COMPILE_COMPLEX_ROWS") else ())

# (check, row name, dtype or None for every dtype) -> why compiled differs from eager today.
# check is "forward", "grad", "gradgrad" or "interpreter".
KNOWN_FAILURES: dict = {
    # ---- sorting: results whose size depends on the data ----
    ("forward", "unique", None):
        "unique along a dim (the row's last sample) is a graph break, the call runs eagerly; "
        "without one it compiles (tests/test_sorting_scans.py)",
}

# Rows that also run through backend="interpreter": one or two per family.
INTERPRETER_ROWS = {"exp", "add", "where", "sum", "amax", "matmul", "__getitem__", "cat",
                    "permute", "nn.functional.cross_entropy", "nn.functional.softmax",
                    "logsumexp", "linalg.det"}


def row_dtype_params(predicate, check: str):
    """(row, dtype) params for the row's dtypes where predicate(row, dtype), known failures
    marked."""
    params = []
    for row in ROWS:
        for dtype in row.dtypes:
            if not predicate(row, dtype):
                continue
            reason = (KNOWN_FAILURES.get((check, row.name, dtype))
                      or KNOWN_FAILURES.get((check, row.name, None)))
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            params.append(pytest.param(row, dtype, id=f"{row.name}-{dtype}", marks=marks))
    return params


def samples_for(row: OpInfo, dtype: str, check: str, limit: int | None = None) -> list:
    """(index, sample) pairs: up to SAMPLES[check] (or `limit`) of the row's samples, spread
    evenly."""
    rng = np.random.default_rng(zlib.crc32(f"{row.name}/{dtype}".encode()))
    samples = row.samples(rng, np.dtype(dtype))
    if check == "forward" and dtype not in FLOATING:
        check = "forward-integer"
    count = min(SAMPLES[check] if limit is None else limit, len(samples))
    chosen = sorted({round(i * (len(samples) - 1) / max(count - 1, 1)) for i in range(count)})
    return [(index, samples[index]) for index in chosen]


# ---- a sample as a function of its tensors --------------------------------------------------

class Leaf:
    """Where the sample's k-th array goes, in the structure of its args and kwargs."""

    def __init__(self, index: int):
        self.index = index


def split_sample(sample):
    """(structure of args, structure of kwargs, arrays): the arrays become tensor arguments of
    the compiled function, everything else stays a constant of its closure."""
    arrays: list = []

    def mark(value):
        if isinstance(value, np.ndarray):
            arrays.append(value)
            return Leaf(len(arrays) - 1)
        if isinstance(value, (list, tuple)):
            return type(value)(mark(item) for item in value)
        return value

    args = tuple(mark(arg) for arg in sample.args)
    kwargs = {key: mark(value) for key, value in sample.kwargs.items()}
    return args, kwargs, arrays


def fill(structure, tensors):
    if isinstance(structure, dict):
        return {key: fill(value, tensors) for key, value in structure.items()}
    if isinstance(structure, Leaf):
        return tensors[structure.index]
    if isinstance(structure, (list, tuple)):
        return type(structure)(fill(item, tensors) for item in structure)
    return structure


def leaves_in(structure) -> list:
    if isinstance(structure, Leaf):
        return [structure.index]
    if isinstance(structure, (list, tuple)):
        return [index for item in structure for index in leaves_in(item)]
    return []


def differentiated_leaves(row: OpInfo, args, arrays) -> list:
    """Indices of the arrays to differentiate: float arrays in the row's grad inputs."""
    positions = row.grad_inputs if row.grad_inputs is not None else range(len(args))
    return [index for position in positions for index in leaves_in(args[position])
            if arrays[index].dtype.kind == "f"]


def flat_tensors(result) -> list:
    if isinstance(result, autojit.Tensor):
        return [result]
    if isinstance(result, (list, tuple)):
        return [t for item in result for t in flat_tensors(item)]
    return []


def forward_function(row: OpInfo, args, kwargs, placed: dict | None = None,
                     graph_break: str | None = None):
    """f(*tensors): the row's call. A factory whose call has no tensor to follow makes its
    result on placed["device"] (set by make_tensors) where that is not the CPU. The
    function's `graph_break` is the sample's documented break, if any."""
    function = row.function

    def forward(*tensors):
        where = {}
        if row.factory and not tensors and placed and placed["device"] != "cpu":
            where = {"device": placed["device"]}
        return function(*fill(args, tensors), **{**fill(kwargs, tensors), **where})

    forward.graph_break = graph_break
    return forward


def weighted_sum(outputs, weights):
    total = None
    for output, weight in zip(outputs, weights, strict=True):
        if weight is None:
            continue
        term = (output * weight).sum()
        total = term if total is None else total + term
    return total


def gradient_function(row: OpInfo, args, kwargs, count: int, chosen: list,
                      second_order: bool):
    """f(*tensors, *weights): the outputs and the gradients with respect to the chosen tensors
    of sum(output * weight), computed inside the function; with `second_order`, the first
    gradients (create_graph=True) and the gradients of sum(first_gradient * direction)."""
    function = row.function

    def gradients(*everything):
        tensors, weights = everything[:count], everything[count:]
        outputs = flat_tensors(function(*fill(args, tensors), **fill(kwargs, tensors)))
        output_weights = list(weights[:len(outputs)])
        loss = weighted_sum(outputs, output_weights)
        inputs = [tensors[index] for index in chosen]
        first = autograd.grad(loss, inputs, create_graph=second_order, allow_unused=True)
        if not second_order:
            return tuple(output.detach() for output in outputs), tuple(first)
        directions = weights[len(outputs):]
        pairs = [(g, d) for g, d in zip(first, directions, strict=True)
                 if g is not None and g.requires_grad]
        second = (None,) * len(inputs)
        if pairs:
            total = sum(((g * d).sum() for g, d in pairs[1:]), (pairs[0][0] * pairs[0][1]).sum())
            second = autograd.grad(total, inputs, allow_unused=True)
        return tuple(g.detach() if g is not None else None for g in first), tuple(second)

    return gradients


# ---- running and comparing --------------------------------------------------------------------

def run_compiled(function, tensors, backend: str, graph_break: str | None = None):
    """The function's result through autojit.compile, which must really compile, or, for a
    documented graph break, give a CompileWarning that names it (and run eagerly)."""
    compiled = autojit.compile(function, backend=backend)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always" if graph_break else "error", CompileWarning)
        result = compiled(*tensors)
    if graph_break:
        said = [str(w.message) for w in caught if issubclass(w.category, CompileWarning)]
        assert any(graph_break in message for message in said), (
            f"no CompileWarning naming {graph_break!r}: {said}")
        return result
    assert compiled.eager_reason is None, compiled.eager_reason
    assert len(compiled.executables) == 1, "the call did not run a compiled executable"
    if backend == "cpu":  # no fused group fell back to running node by node
        assert "unfused" not in compiled.fusion_groups(), compiled.fusion_groups()
    return result


def run_both(function, make_tensors, backend: str, where: str, graph_break: str | None = None):
    """(eager result, compiled result); when eager raises, compiled must raise the same. The
    function's own graph_break (a sample's) is expected, or else `graph_break` (a row's)."""
    graph_break = getattr(function, "graph_break", None) or graph_break
    try:
        expected = function(*make_tensors())
    except Exception as error:  # noqa: BLE001 - the same error is expected from compiled
        with pytest.raises(type(error)) as raised:
            run_compiled(function, make_tensors(), backend, graph_break)
        # The message without eager's "op failed on input shapes ...: " prefix, which a kernel
        # does not know.
        essential = str(error).split(": ", 1)[-1]
        assert essential in str(raised.value), f"{where}: {raised.value!r} vs eager {error!r}"
        return None
    return expected, run_compiled(function, make_tensors(), backend, graph_break)


def assert_same(actual, expected, row: OpInfo, where: str) -> None:
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)) and len(actual) == len(expected), (
            f"{where}: {actual!r} vs {expected!r}")
        for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_same(a, e, row, f"{where}[{index}]")
        return
    if not isinstance(expected, autojit.Tensor):
        assert actual == expected, f"{where}: {actual!r}, expected {expected!r}"
        return
    assert isinstance(actual, autojit.Tensor), f"{where}: got {type(actual).__name__}"
    assert actual.dtype == expected.dtype, f"{where}: dtype {actual.dtype} vs {expected.dtype}"
    assert actual.is_conj() == expected.is_conj(), f"{where}: conjugate bit"
    got, want = actual.detach().resolve_conj().numpy(), expected.detach().resolve_conj().numpy()
    assert got.shape == want.shape, f"{where}: shape {got.shape}, expected {want.shape}"
    if got.dtype.kind in "fc":  # complex results may come from real kernels (polar's parts)
        atol, rtol = TOLERANCES[got.dtype.name]
        np.testing.assert_allclose(got, want, atol=atol * row.atol / DEFAULT_ATOL,
                                   rtol=rtol * row.rtol / DEFAULT_RTOL, equal_nan=True,
                                   err_msg=where)
    else:
        np.testing.assert_array_equal(got, want, err_msg=where)


def reseed(row: OpInfo) -> None:
    """A random op's row draws the same numbers on every call (OpInfo.seed): make_tensors
    reseeds the generators, and each call (eager, compiled, on CUDA) follows it."""
    if row.seed is not None:
        opinfo.reseed(row.seed)


def describe(row: OpInfo, dtype: str, index: int, sample) -> str:
    shapes = [getattr(a, "shape", a) for a in sample.args]
    return f"{row.name} [{dtype}] sample {index} (args {shapes}, kwargs {sample.kwargs})"


def forward_cases(row: OpInfo, dtype: str, check: str = "forward"):
    """(where, function, make_tensors) per chosen sample: function(*tensors) is the row's call
    and make_tensors(device) its tensors on `device`."""
    for index, sample in samples_for(row, dtype, check):
        args, kwargs, arrays = split_sample(sample)
        placed = {"device": "cpu"}

        def make_tensors(device="cpu", arrays=arrays, placed=placed):
            tensors = [autojit.tensor(a, device=device) for a in arrays]
            placed["device"] = device
            reseed(row)
            return tensors

        yield (describe(row, dtype, index, sample),
               forward_function(row, args, kwargs, placed, sample.graph_break), make_tensors)


def gradient_cases(row: OpInfo, dtype: str, second_order: bool, limit: int | None = None):
    """(where, function, make_tensors) per chosen sample (up to `limit`) with an input to
    differentiate: function (gradient_function) returns the outputs and the gradients, and
    make_tensors(device) builds its tensors, output weights and directions on `device`."""
    checked = 0
    for index, sample in samples_for(row, dtype, "gradgrad" if second_order else "grad",
                                     limit):
        args, kwargs, arrays = split_sample(sample)
        chosen = differentiated_leaves(row, args, arrays)
        if not chosen:
            continue
        where = describe(row, dtype, index, sample)
        rng = np.random.default_rng(zlib.crc32(where.encode()))
        with autojit.no_grad():
            outputs = flat_tensors(row.function(*fill(args, [autojit.tensor(a) for a in arrays]),
                                                **fill(kwargs, [autojit.tensor(a)
                                                                for a in arrays])))
        weights = [rng.uniform(0.5, 1.5, o.shape).astype(o.dtype.numpy)
                   if o.dtype.is_floating_point else None for o in outputs]
        directions = [rng.uniform(0.5, 1.5, arrays[i].shape).astype(arrays[i].dtype)
                      for i in chosen] if second_order else []

        def make_tensors(device="cpu", arrays=arrays, chosen=chosen, weights=weights,
                         directions=directions):
            tensors = [autojit.tensor(a, requires_grad=i in chosen, device=device)
                       for i, a in enumerate(arrays)]
            extra = [autojit.tensor(w, device=device) if w is not None else None
                     for w in weights]
            made = tensors + extra + [autojit.tensor(d, device=device) for d in directions]
            reseed(row)
            return made

        yield where, gradient_function(row, args, kwargs, len(arrays), chosen,
                                       second_order), make_tensors
        checked += 1
    assert checked, f"{row.name}: no sample has an input to differentiate"


def check_forward(row: OpInfo, dtype: str, backend: str) -> None:
    # "cpu forward": a break only where autograd records (None: the forward compiles)
    graph_break = row.graph_breaks.get("cpu forward", row.graph_breaks.get("cpu"))
    for where, function, make_tensors in forward_cases(row, dtype):
        both = run_both(function, make_tensors, backend, where, graph_break)
        if both is not None:
            assert_same(both[1], both[0], row, where)


def check_gradients(row: OpInfo, dtype: str, second_order: bool, backend: str = "cpu") -> None:
    for where, function, make_tensors in gradient_cases(row, dtype, second_order):
        both = run_both(function, make_tensors, backend, where, row.graph_breaks.get("cpu"))
        if both is not None:
            assert_same(both[1], both[0], row, where)


# ---- the tests --------------------------------------------------------------------------------

@pytest.mark.parametrize(("row", "dtype"), row_dtype_params(
    lambda row, dtype: dtype in ALL_DTYPES and not (dtype == "float64" and row.differentiable),
    "forward"))
def test_forward_compiled(row: OpInfo, dtype: str):
    """Without gradients (in float64 too for differentiable rows: test_gradient_compiled checks
    the forward outputs of its graph)."""
    check_forward(row, dtype, "cpu")


@pytest.mark.parametrize(("row", "dtype"), row_dtype_params(
    lambda row, dtype: row.differentiable and dtype == "float64", "grad"))
def test_gradient_compiled(row: OpInfo, dtype: str):
    check_gradients(row, dtype, second_order=False)


@pytest.mark.parametrize(("row", "dtype"), row_dtype_params(
    lambda row, dtype: row.differentiable and row.gradgrad and dtype == "float64", "gradgrad"))
def test_second_order_gradient_compiled(row: OpInfo, dtype: str):
    check_gradients(row, dtype, second_order=True)


@pytest.mark.parametrize(("row", "dtype"), row_dtype_params(
    lambda row, dtype: row.name in INTERPRETER_ROWS and dtype == "float64", "interpreter"))
def test_interpreter_backend(row: OpInfo, dtype: str):
    check_forward(row, dtype, "interpreter")
    if row.differentiable:
        check_gradients(row, dtype, second_order=row.gradgrad, backend="interpreter")


def test_factory_result_requires_grad_compiled():
    """zeros(2, requires_grad=True) returned from a compiled function is a leaf that requires
    grad, as eagerly (the values are checked by test_forward_compiled)."""
    checked = []
    for row in ROWS:
        if not row.factory:
            continue
        for dtype in row.dtypes:
            for where, function, make_tensors in forward_cases(row, dtype):
                if function.graph_break:
                    continue
                both = run_both(function, make_tensors, "cpu", where)
                if both is not None and both[0].requires_grad:
                    checked.append(where)
                    assert both[1].requires_grad and both[1].grad_fn is None, where
    assert checked


def test_prod_second_order_with_two_zeros_matches_eager():
    """The second derivative of prod where a slice holds two zeros is not the first
    derivative's constant 0 differentiated (torch gives [2, 2, 0] here)."""
    def hessian_row_sums(x):
        (first,) = autograd.grad(x.prod(), x, create_graph=True)
        return autograd.grad(first.sum(), x)

    expected, actual = run_both(hessian_row_sums, lambda: [autojit.tensor(
        [0.0, 0.0, 2.0], dtype=autojit.float64, requires_grad=True)], "cpu", "prod")
    assert expected[0].tolist() == [2.0, 2.0, 0.0]
    assert actual[0].tolist() == [2.0, 2.0, 0.0]


@pytest.mark.parametrize("function", [lambda x: -(x > 0), lambda x: (x > 0) - (x < 2),
                                      lambda x: (x > 0).sign()], ids=["neg", "sub", "sign"])
def test_bool_negation_subtraction_and_sign_like_eager(function):
    """neg and sub of bools raise while tracing as in eager, not later in the renderer."""
    def make_tensors():
        return [autojit.tensor([1, -2, 3])]

    both = run_both(function, make_tensors, "cpu", "bool")
    if both is not None:  # sign: a bool's sign is itself, as in torch
        assert both[1].tolist() == both[0].tolist() and both[1].dtype == both[0].dtype


def test_integer_power_with_negative_exponent_is_torchs_compiled():
    """An integer base to a negative integer tensor exponent is torch's (0, or +-1 for a base
    of +-1), compiled as eagerly; an integer divided by zero, the kernel's error code, becomes
    eager's RuntimeError, not another exception type."""
    def power(x, y):
        return x ** y

    def make_tensors():
        return [autojit.tensor([2, 3, -1, 1, 4]), autojit.tensor([1, -1, -3, -2, 2])]

    assert power(*make_tensors()).tolist() == [2, 0, -1, 1, 16]
    expected, actual = run_both(power, make_tensors, "cpu", "pow")
    np.testing.assert_array_equal(np.asarray(actual.tolist()), np.asarray(expected.tolist()))

    def divide(x, y):
        return x // y

    def make_divided():
        return [autojit.tensor([4, 5, 6]), autojit.tensor([2, 0, 3])]

    with pytest.raises(RuntimeError, match="ZeroDivisionError"):
        divide(*make_divided())
    assert run_both(divide, make_divided, "cpu", "floor_divide") is None


def test_compiled_math_far_outside_the_usual_range_matches_eager():
    """sin/cos of huge arguments (the argument reduction) and pow with huge exponents (the
    rounding error of y * log|x| must not leak into exp's reduced argument)."""
    far = np.array([1e5, 1e10, 1e16, 1e18, 1e20, -1e20, 3.0, -7.5])
    bases = np.array([0.0, 0.5, 2.0, 0.5, 2.0, 0.0, 1.5, 0.9])
    exponents = np.array([1e20, 1e20, -1e20, -1e20, 1e20, 3.0, 2.5, 1e300])
    for function, arrays in [(lambda x: x.sin(), [far]), (lambda x: x.cos(), [far]),
                             (lambda x, y: x ** y, [bases, exponents])]:
        expected, actual = run_both(function, lambda arrays=arrays: [
            autojit.tensor(a) for a in arrays], "cpu", "math")
        np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-9, atol=1e-11)


def test_negative_zero_literal_is_not_served_a_positive_zero_kernel():
    x = autojit.tensor(np.array([1.0, -1.0, 0.0]))
    autojit.compile(lambda t: 1.0 / (t * 0.0))(x)
    expected = 1.0 / (x * -0.0)
    actual = autojit.compile(lambda t: 1.0 / (t * -0.0))(x)
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())


def test_negative_zero_scalar_argument_retraces():
    x = autojit.tensor(np.array([1.0, -1.0]))
    compiled = autojit.compile(lambda t, c: 1.0 / (t * c))
    compiled(x, 0.0)
    np.testing.assert_array_equal(compiled(x, -0.0).numpy(), (1.0 / (x * -0.0)).numpy())
