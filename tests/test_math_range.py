"""sin, cos, tan and exp2 over their whole range, compiled against eager NumPy and torch.

The compiled sin and cos reduce their argument by Payne-Hanek (codegen/cpu/mathlib/__init__.py,
docs/notes/accurate-numerics.md), so they hold their accuracy up to the largest float; exp2
is pow(2, x), not exp(x ln 2). Errors are in ulp against float64 NumPy rounded to the dtype
(NumPy's own float32 loops are a few ulp off in places), over log-spaced magnitudes of both
signs and the special values.
"""

from __future__ import annotations

import math
import re

import numpy as np
import pytest
from test_codegen_cpu import ulp_distance

import autojit

try:
    import torch
except ImportError:  # torch is an optional test reference
    torch = None

LIMITS = {"sin": 2, "cos": 2, "tan": 3, "exp2": 2}  # ulp


def magnitudes(dtype) -> np.ndarray:
    generator = np.random.default_rng(0)
    info = np.finfo(dtype)
    exponents = generator.uniform(np.log10(info.smallest_subnormal), np.log10(info.max), 40000)
    values = np.minimum(10.0 ** exponents, float(info.max))
    values = np.concatenate([values, 10.0 ** np.arange(-40, 39), np.linspace(0, 20, 2001),
                             [float(info.max), float(info.smallest_subnormal), 1e17, 1e25,
                              1e35, math.pi / 4, math.pi / 2, math.pi, 2 ** 54, 2 ** 62]])
    values = np.concatenate([values, -values, [np.inf, -np.inf, np.nan, 0.0, -0.0]])
    with np.errstate(over="ignore"):
        return values.astype(dtype)


def reference(name, x):
    function = np.exp2 if name == "exp2" else getattr(np, name)
    with np.errstate(all="ignore"):
        return function(x.astype(np.float64)).astype(x.dtype)


def exp2_arguments(dtype) -> np.ndarray:
    low, high = (-1080, 1030) if dtype == np.float64 else (-155, 130)
    generator = np.random.default_rng(1)
    values = np.concatenate([generator.uniform(low, high, 40000), np.linspace(-3, 3, 601),
                             [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-300, high - 6.001]])
    return values.astype(dtype)


def arguments(name, dtype):
    return exp2_arguments(dtype) if name == "exp2" else magnitudes(dtype)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["sin", "cos", "tan", "exp2"])
def test_compiled_results_match_numpy_over_the_whole_range(name, dtype):
    x = arguments(name, dtype)
    tensor = autojit.tensor(x)
    compiled = autojit.compile(lambda t: getattr(t, name)())(tensor).numpy()
    expected = reference(name, x)
    distance = ulp_distance(compiled, expected, dtype)
    worst = np.argmax(distance)
    assert distance.max() <= LIMITS[name], (name, distance.max(), x[worst], compiled[worst],
                                            expected[worst])
    # Eager runs NumPy in the dtype: the two differ by at most both errors.
    with np.errstate(all="ignore"):
        eager = getattr(tensor, name)().numpy()
    limit = LIMITS[name] + ulp_distance(eager, expected, dtype).max()
    assert ulp_distance(compiled, eager, dtype).max() <= limit


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
@pytest.mark.parametrize("name", ["sin", "cos", "exp2"])
def test_compiled_results_match_torch(name, dtype):
    x = arguments(name, dtype)
    compiled = autojit.compile(lambda t: getattr(t, name)())(autojit.tensor(x)).numpy()
    theirs = getattr(torch, name)(torch.from_numpy(x)).numpy()
    limit = LIMITS[name] + ulp_distance(theirs, reference(name, x), dtype).max()
    assert ulp_distance(compiled, theirs, dtype).max() <= limit


def test_the_double_closest_to_a_multiple_of_half_pi():
    """6381956970095103 * 2**797 is within 4.7e-19 of a multiple of pi/2 (the closest double
    of all): its cosine needs the reduced argument to 2**-114, where a reduction carrying only
    a double's worth of bits past the point was 405 ulp off (NumPy's cos here: 8 ulp). The
    expected values are the exact ones rounded (mpmath at 3000 bits)."""
    x = np.array([math.ldexp(6381956970095103, 797), math.ldexp(5261692873635770, 499)])
    sine, cosine = autojit.compile(lambda t: (t.sin(), t.cos()))(autojit.tensor(x))
    exact_sine, exact_cosine = [1.0, -0.7635918004606241], [-4.687165924254628e-19,
                                                             0.6456992816081665]
    assert ulp_distance(cosine.numpy(), np.array(exact_cosine), np.float64).max() <= 1
    assert ulp_distance(sine.numpy(), np.array(exact_sine), np.float64).max() <= 1
    # The float32 closest to a multiple of pi/2 (within 1.6e-9), reduced by the float32 path.
    x = np.array([math.ldexp(16367173, 72)], np.float32)
    sine, cosine = autojit.compile(lambda t: (t.sin(), t.cos()))(autojit.tensor(x))
    assert sine.numpy()[0] == 1 and ulp_distance(cosine.numpy(), np.array(
        [-1.6147698e-09], np.float32), np.float32).max() <= 1


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_special_values(dtype):
    tiny = np.finfo(dtype).smallest_subnormal
    x = np.array([0.0, -0.0, tiny, -tiny, np.inf, -np.inf, np.nan], dtype)
    sine, cosine, power = (result.numpy() for result in autojit.compile(
        lambda t: (t.sin(), t.cos(), t.exp2()))(autojit.tensor(x)))
    np.testing.assert_array_equal(sine[:4], x[:4])  # sin x = x, signs of zero kept
    assert np.signbit(sine[1]) and np.isnan(sine[4:]).all()
    np.testing.assert_array_equal(cosine[:4], 1.0)
    assert np.isnan(cosine[4:]).all()
    np.testing.assert_array_equal(power, [1, 1, 1, 1, np.inf, 0, np.nan])


def test_exp2_gradient():
    x = autojit.tensor(np.array([-3.5, 0.0, 10.25]), requires_grad=True)
    function = autojit.compile(lambda x: autojit.autograd.grad(x.exp2().sum(), x)[0])
    np.testing.assert_allclose(function(x).numpy(), np.exp2(x.detach().numpy()) * math.log(2),
                               rtol=1e-15)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sin_and_cos_kernels_stay_vectorized(dtype):
    """Arguments beyond the inline reduction's range call the accurate function, which the
    loop vectorizer reaches through its masked vector variant (inlined after vectorization):
    the loop stays vectorized and calls the Payne-Hanek reduction, lane by lane, only for
    vectors holding such an argument."""
    from autojit.codegen.cpu.jit import compile_kernel
    from autojit.codegen.kernel import Kernel, KernelInput, KernelOutput, Operand, Step
    from autojit.ops.registry import REGISTRY
    from autojit.tensor import dtypes

    dtype_ = dtypes.from_numpy(np.dtype(dtype))
    suffix = "f64" if dtype == np.float64 else "f32"
    for name in ("sin", "cos"):
        kernel = Kernel(f"{name}_vectorized_{suffix}", (4096,), [KernelInput(dtype_, (1,))],
                        [Step(REGISTRY[name], (Operand("input", 0),), {}, dtype_, dtype_)],
                        [KernelOutput(0, dtype_)])
        text = compile_kernel(kernel).optimized_ir
        assert re.search(rf"call (fastcc )?<\d+ x double> @autojit_{name}_{suffix}_lanes\d+\(",
                         text), name
