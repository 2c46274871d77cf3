"""The op table driver: every OpInfo row of every tests/opinfo/*.py module, checked four ways.

For each row: the forward against its NumPy reference in each of the row's dtypes; gradcheck
and gradgradcheck in float64; for rows that are not differentiable, that backward raises. The
rows must also name the primitives they run (checked by recording which impls run), and every
registered primitive and public op function must have a row.
"""

from __future__ import annotations

import importlib
import sys
import warnings
import zlib
from pathlib import Path

import numpy as np
import pytest

import autojit
from autojit.autograd import gradcheck, gradgradcheck
from autojit.ops import REGISTRY, functional

sys.path.insert(0, str(Path(__file__).parent))

from opinfo import OpInfo  # noqa: E402

MODULE_NAMES = sorted(path.stem for path in (Path(__file__).parent / "opinfo").glob("*.py")
                      if path.stem != "__init__")
ROWS: list[OpInfo] = []
for _module_name in MODULE_NAMES:
    ROWS.extend(importlib.import_module(f"opinfo.{_module_name}").ROWS)

# Public names that are aliases of a function with its own row.
ALIASES = {
    "clip",         # clamp
    "negative",     # neg
    "multiply",     # mul
    "divide",       # div
    "subtract",     # sub
    "absolute",     # abs
    "greater", "greater_equal", "less", "less_equal", "not_equal",  # gt, ge, lt, le, ne
    "concat", "concatenate",  # cat
    "ger",          # outer
    "row_stack",    # vstack
    # ---- the math ops' aliases
    "arcsin", "arccos", "arctan", "arctan2",  # asin, acos, atan, atan2
    "arcsinh", "arccosh", "arctanh",  # asinh, acosh, atanh
    "fix",  # trunc
    "sgn",  # sign
}

# Forward tolerances (atol, rtol) per result dtype, for a row with OpInfo's default atol/rtol;
# a row that loosens its tolerances loosens every dtype by the same factor.
TOLERANCES = {"float16": (1e-3, 1e-2), "float32": (1e-5, 1e-4), "float64": (1e-10, 1e-7)}
DEFAULT_ATOL, DEFAULT_RTOL = OpInfo.atol, OpInfo.rtol


def row_id(row: OpInfo) -> str:
    return row.name


def rows_where(predicate, check: str | None = None):
    params = []
    for row in ROWS:
        if not predicate(row):
            continue
        reason = getattr(row, "expected_failures", {}).get(check)
        marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
        params.append(pytest.param(row, id=row_id(row), marks=marks))
    return params


def samples_for(row: OpInfo, dtype: str):
    rng = np.random.default_rng(zlib.crc32(f"{row.name}/{dtype}".encode()))
    return row.samples(rng, np.dtype(dtype))


def is_float_array(value) -> bool:
    return isinstance(value, np.ndarray) and value.dtype.kind == "f"


def contains_float_array(value) -> bool:
    if isinstance(value, (list, tuple)):
        return any(contains_float_array(v) for v in value)
    return is_float_array(value)


def to_autojit(value, requires_grad: bool = False):
    """NumPy arrays (also inside lists and tuples) as tensors; everything else as is."""
    if isinstance(value, np.ndarray):
        result = autojit.tensor(value)
        if requires_grad and value.dtype.kind == "f":
            result.requires_grad_(True)
        return result
    if isinstance(value, (list, tuple)):
        return type(value)(to_autojit(v, requires_grad) for v in value)
    return value


def grad_indices(row: OpInfo, args: tuple) -> tuple:
    if row.grad_inputs is not None:
        return tuple(row.grad_inputs)
    return tuple(i for i, arg in enumerate(args) if contains_float_array(arg))


def call_arguments(row: OpInfo, sample, requires_grad: bool):
    differentiate = grad_indices(row, sample.args) if requires_grad else ()
    args = tuple(to_autojit(arg, i in differentiate) for i, arg in enumerate(sample.args))
    kwargs = {key: to_autojit(value) for key, value in sample.kwargs.items()}
    return args, kwargs


def flat_tensors(result) -> list:
    if isinstance(result, autojit.Tensor):
        return [result]
    if isinstance(result, (list, tuple)):
        return [t for item in result for t in flat_tensors(item)]
    return []


# ---- recording which primitives run -----------------------------------------------------------

class RecordPrimitives:
    """Within the block, the names of the primitives whose NumPy impl ran."""

    def __enter__(self):
        self.seen: set = set()
        self.saved = {}
        for name, op in REGISTRY.items():
            self.saved[name] = op.impl
            op.impl = self._wrap(name, op.impl)
        return self.seen

    def _wrap(self, name, impl):
        def recording(*args, **kwargs):
            self.seen.add(name)
            return impl(*args, **kwargs)

        return recording

    def __exit__(self, *exc):
        for name, impl in self.saved.items():
            REGISTRY[name].impl = impl


# ---- the checks -------------------------------------------------------------------------------

def assert_matches(actual, expected, row: OpInfo, where: str) -> None:
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, (tuple, list)), f"{where}: expected a sequence of results"
        assert len(actual) == len(expected), f"{where}: {len(actual)} results, not {len(expected)}"
        for index, (a, e) in enumerate(zip(actual, expected, strict=True)):
            assert_matches(a, e, row, f"{where}[{index}]")
        return
    assert isinstance(actual, autojit.Tensor), f"{where}: got {type(actual).__name__}, not Tensor"
    expected = np.asarray(expected)
    got = np.asarray(actual)
    assert got.shape == expected.shape, f"{where}: shape {got.shape}, expected {expected.shape}"
    kind = {"f": "floating", "i": "integer", "u": "integer", "b": "bool"}
    assert kind[got.dtype.kind] == kind[expected.dtype.kind], (
        f"{where}: dtype {actual.dtype}, expected {expected.dtype}")
    if got.dtype.kind == "f":
        assert got.dtype == expected.dtype, (
            f"{where}: dtype {actual.dtype}, expected {expected.dtype}")
        atol, rtol = TOLERANCES[got.dtype.name]
        atol *= row.atol / DEFAULT_ATOL
        rtol *= row.rtol / DEFAULT_RTOL
        np.testing.assert_allclose(got, expected, atol=atol, rtol=rtol, equal_nan=True,
                                   err_msg=where)
    else:
        np.testing.assert_array_equal(got, expected, err_msg=where)


def reseed(row: OpInfo) -> None:
    """A random op's row draws the same numbers on every call (OpInfo.seed)."""
    if row.seed is not None:
        autojit.manual_seed(row.seed)


def describe(row: OpInfo, dtype: str, index: int, sample) -> str:
    shapes = [getattr(a, "shape", a) for a in sample.args]
    return f"{row.name} [{dtype}] sample {index} (args {shapes}, kwargs {sample.kwargs})"


@pytest.mark.parametrize("row", rows_where(lambda row: True, "forward"))
def test_forward(row: OpInfo):
    for dtype in row.dtypes:
        for index, sample in enumerate(samples_for(row, dtype)):
            args, kwargs = call_arguments(row, sample, requires_grad=False)
            expected = row.reference(*sample.args, **sample.kwargs)
            reseed(row)
            actual = row.function(*args, **kwargs)
            assert_matches(actual, expected, row, describe(row, dtype, index, sample))


def _checked(check, row: OpInfo):
    for index, sample in enumerate(samples_for(row, "float64")):
        args, kwargs = call_arguments(row, sample, requires_grad=True)
        if not any(t.requires_grad for t in flat_tensors(list(args))):
            continue

        def function(*inputs, kwargs=kwargs):
            reseed(row)
            return row.function(*inputs, **kwargs)

        autojit.manual_seed(index)
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", message=".*not a double precision")
            try:
                check(function, args, eps=row.grad_eps, atol=row.grad_atol, rtol=row.grad_rtol)
            except Exception as error:
                raise AssertionError(
                    f"{describe(row, 'float64', index, sample)}: {error}") from error


@pytest.mark.parametrize("row", rows_where(lambda row: row.differentiable, "gradcheck"))
def test_gradcheck(row: OpInfo):
    _checked(gradcheck, row)


@pytest.mark.parametrize("row", rows_where(lambda row: row.differentiable and row.gradgrad,
                                               "gradgradcheck"))
def test_gradgradcheck(row: OpInfo):
    _checked(gradgradcheck, row)


@pytest.mark.parametrize("row", rows_where(lambda row: not row.differentiable))
def test_not_differentiable(row: OpInfo):
    dtype = "float64" if "float64" in row.dtypes else row.dtypes[0]
    for index, sample in enumerate(samples_for(row, dtype)):
        args, kwargs = call_arguments(row, sample, requires_grad=True)
        for output in flat_tensors(row.function(*args, **kwargs)):
            with pytest.raises(RuntimeError):
                autojit.autograd.backward(output, autojit.ones_like(output))
                pytest.fail(f"{describe(row, dtype, index, sample)}: backward did not raise")


@pytest.mark.parametrize("row", rows_where(lambda row: True))
def test_row_runs_its_primitives(row: OpInfo):
    """The primitives a row lists all run in its forward (and, if differentiable, backward)."""
    dtype = "float64" if "float64" in row.dtypes else row.dtypes[0]
    with RecordPrimitives() as seen:
        for sample in samples_for(row, dtype):
            args, kwargs = call_arguments(row, sample, requires_grad=row.differentiable)
            outputs = [t for t in flat_tensors(row.function(*args, **kwargs)) if t.requires_grad]
            if outputs:
                autojit.autograd.backward(outputs, [autojit.ones_like(t) for t in outputs])
    unknown = sorted(set(row.primitives) - set(REGISTRY))
    assert not unknown, f"row {row.name} lists primitives that are not registered: {unknown}"
    missing = sorted(set(row.primitives) - seen)
    assert not missing, f"row {row.name} lists primitives that never ran: {missing}"


# ---- coverage ---------------------------------------------------------------------------------

def test_every_primitive_has_a_row():
    listed = {name for row in ROWS for name in row.primitives}
    missing = sorted(set(REGISTRY) - listed)
    assert not missing, f"registered primitives with no op table row: {missing}"


def test_every_public_op_has_a_row():
    names = {row.name for row in ROWS}
    missing = sorted(name for name in functional.__all__
                     if name not in names and name not in ALIASES)
    assert not missing, f"public op functions with no op table row: {missing}"


def test_aliases_are_aliases():
    for alias in ALIASES:
        function = getattr(functional, alias)
        assert any(getattr(functional, name, None) is function for name in functional.__all__
                   if name not in ALIASES), f"{alias} is not an alias of a function with a row"
