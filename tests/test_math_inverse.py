"""The compiled atan, asin, acos, atan2, hypot and erfc over their whole range, in ulp.

codegen/cpu/mathlib/atan.py, mathlib_erfc.py and llvm_expression.py's hypot compute in double
(a float32 argument widened, rounded once): against NumPy's float64 functions (glibc's, under
1 ulp) and, for erfc, against mpmath (SciPy's erfc is hundreds of ulp off beyond 20), each in
the dtype, over log-spaced magnitudes of both signs, the edges of each range reduction and
the special values; and the loops stay vectorized (no libm call, table reads as gathers).
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from test_codegen_cpu import ulp_distance

import autojit

LIMITS = {"atan": 1, "asin": 2, "acos": 2, "atan2": 2, "hypot": 2, "erfc": 2}  # ulp


def magnitudes(dtype, low=None, high=None, count=6000) -> np.ndarray:
    info = np.finfo(dtype)
    low = np.log10(float(info.smallest_subnormal)) if low is None else low
    high = np.log10(float(info.max)) if high is None else high
    values = 10.0 ** np.random.default_rng(0).uniform(low, high, count)
    with np.errstate(over="ignore"):
        return np.minimum(values, float(info.max)).astype(dtype)


SPECIAL = [0.0, -0.0, np.inf, -np.inf, np.nan]


def unit_interval(dtype) -> np.ndarray:
    """(-1, 1) densely, near +-1 (the square root's edge), near the eighths where the
    arctangent's table switches, and outside."""
    rng = np.random.default_rng(1)
    edges = 1 - magnitudes(np.float64, -16, 0, 1000)
    eighths = np.arange(1, 8) / 8 + rng.uniform(-1e-3, 1e-3, (300, 7))
    values = np.concatenate([rng.uniform(-1, 1, 4000), edges, eighths.ravel(),
                             magnitudes(np.float64, -300, 0, 1000), [0.5, 1.0, 1.5, 2.0]])
    return np.concatenate([values, -values, SPECIAL]).astype(dtype)


def compiled(function, *arrays):
    return autojit.compile(function)(*[autojit.tensor(a) for a in arrays]).numpy()


def numpy_reference(function, *arrays):
    with np.errstate(all="ignore"):
        return function(*[a.astype(np.float64) for a in arrays]).astype(arrays[0].dtype)


def assert_within(name, actual, expected, dtype, arguments):
    distance = ulp_distance(actual, expected, dtype)
    worst = int(np.argmax(distance))
    assert distance.max() <= LIMITS[name], (name, dtype.__name__, distance.max(),
                                             [a[worst] for a in arguments], actual[worst],
                                             expected[worst])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_atan_asin_acos(dtype):
    x = np.concatenate([unit_interval(dtype), magnitudes(dtype), -magnitudes(dtype)])
    for name, numpy_function in (("atan", np.arctan), ("asin", np.arcsin),
                                 ("acos", np.arccos)):
        actual = compiled(lambda t, name=name: getattr(t, name)(), x)
        assert_within(name, actual, numpy_reference(numpy_function, x), dtype, [x])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_atan2_and_hypot(dtype):
    rng = np.random.default_rng(2)
    y = np.concatenate([magnitudes(dtype), magnitudes(dtype, -5, 5), SPECIAL * 5])
    x = np.concatenate([magnitudes(dtype)[::-1], magnitudes(dtype, -5, 5)[::-1],
                        np.repeat(SPECIAL, 5)])
    signs = rng.choice([-1, 1], size=(2, len(x)))
    y, x = (y * signs[0]).astype(dtype), (x * signs[1]).astype(dtype)
    assert_within("atan2", compiled(autojit.atan2, y, x), numpy_reference(np.arctan2, y, x),
                  dtype, [y, x])
    assert_within("hypot", compiled(autojit.hypot, y, x), numpy_reference(np.hypot, y, x),
                  dtype, [y, x])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_erfc_against_mpmath(dtype):
    mpmath = pytest.importorskip("mpmath")
    rng = np.random.default_rng(3)
    x = np.concatenate([rng.uniform(-6, 27.5, 1500), magnitudes(np.float64, -20, 1.44, 300),
                        -magnitudes(np.float64, -20, 1, 100),
                        [0.5, -0.5, 0.4999999, 26.55, 27.25, 27.3, 28.0, 30.0]]).astype(dtype)
    with mpmath.workdps(30):
        exact = np.array([float(mpmath.erfc(float(v))) for v in x]).astype(dtype)
    x = np.concatenate([x, SPECIAL, [1e300, -1e300]]).astype(dtype)
    exact = np.concatenate([exact, [1.0, 1.0, 0.0, 2.0, np.nan, 0.0, 2.0]]).astype(dtype)
    assert_within("erfc", compiled(lambda t: t.erfc(), x), exact, dtype, [x])


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_special_values_and_signs_of_zero(dtype):
    zeros = np.array([0.0, -0.0], dtype)
    for name in ("atan", "asin"):
        result = compiled(lambda t, name=name: getattr(t, name)(), zeros)
        assert result.tolist() == [0.0, 0.0] and np.signbit(result).tolist() == [False, True]
    # C99's atan2 at the signed zeros and infinities
    y = np.array([0.0, -0.0, 0.0, -0.0, np.inf, np.inf, -np.inf, 1.0, -1.0], dtype)
    x = np.array([0.0, 0.0, -0.0, -0.0, np.inf, -np.inf, 1.0, -np.inf, np.inf], dtype)
    np.testing.assert_array_equal(compiled(autojit.atan2, y, x),
                                  np.arctan2(y, x))
    assert np.signbit(compiled(autojit.atan2, y, x)).tolist() == np.signbit(
        np.arctan2(y, x)).tolist()
    inf_nan = np.array([np.inf, np.nan, -np.inf, np.nan], dtype)
    others = np.array([np.nan, -np.inf, 1.0, 1.0], dtype)  # an infinity wins over a NaN
    np.testing.assert_array_equal(compiled(autojit.hypot, inf_nan, others),
                                  np.hypot(inf_nan, others))
    steps = compiled(autojit.nextafter, np.array([0.0, -0.0, 1.0, 1.0], dtype),
                     np.array([-1.0, 1.0, 2.0, 1.0], dtype))
    np.testing.assert_array_equal(steps, np.nextafter(np.array([0.0, -0.0, 1.0, 1.0], dtype),
                                                      np.array([-1.0, 1.0, 2.0, 1.0], dtype)))


@pytest.mark.parametrize("name", ["atan", "asin", "acos", "atan2", "erfc", "hypot"])
def test_kernels_stay_vectorized(name):
    """Straight-line code only: the loop vectorizer widens the loop (vector operations on
    doubles), and no call of a libm function remains."""
    from autojit.codegen.cpu.jit import compile_kernel
    from autojit.codegen.kernel import Kernel, KernelInput, KernelOutput, Operand, Step
    from autojit.ops.registry import REGISTRY
    from autojit.tensor import dtypes

    op = REGISTRY[name]
    f32 = dtypes.float32
    kernel = Kernel(f"{name}_vectorized", (4096,), [KernelInput(f32, (1,))] * op.arity,
                    [Step(op, tuple(Operand("input", i) for i in range(op.arity)), {}, f32,
                          f32)], [KernelOutput(0, f32)])
    text = compile_kernel(kernel).optimized_ir
    assert re.search(r"<\d+ x double>", text), f"{name}: the loop is not vectorized"
    calls = set(re.findall(r"call [^@]*@([\w.]+)", text))
    assert not {c for c in calls if not c.startswith(("llvm.", "autojit_"))}, calls


@pytest.mark.parametrize("piece", [0, 9, 23])
def test_the_erfc_table_is_what_its_generator_writes(piece):
    """tools/erfc_table.py's polynomials, rounded, are the table the kernel reads (three of
    its 24 pieces: the first, one inside, the last)."""
    mpmath = pytest.importorskip("mpmath")
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tools"))
    import erfc_table

    from autojit.codegen.cpu.mathlib import erfc as mathlib_erfc

    with mpmath.workdps(60):
        exact, _ = erfc_table.piece_polynomial(mpmath.mp, erfc_table.FIRST_EXPONENT + piece // 4,
                                               piece % 4)
        high = float(exact[0])
        row = [high, float(exact[0] - high)] + [float(c) for c in exact[1:]]
    assert row == mathlib_erfc.ERFCX_TABLE[piece]
    assert len(mathlib_erfc.ERFCX_TABLE) == erfc_table.PIECES
    assert math.isclose(mathlib_erfc.ERFCX_TABLE[0][0], 0.5849986214749657)
