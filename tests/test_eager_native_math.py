"""The eager transcendental functions' native loops (ops/elementwise/native_math.py,
codegen/cpu/eager_math.py) against torch: large contiguous float32 and float64 arrays run the
compiled kernels' math library, within 2 ulp of torch over the whole range (a subnormal where torch
flushes the tiniest results to 0), the same bits as a compiled kernel, and NumPy's loops still run
small and strided arrays. The activations built on them (gelu, softplus and their backward
routines, which call exp and log1p in place) are checked at the same sizes, to second order."""

import warnings

import numpy as np
import pytest

import autojit
from autojit.ops.elementwise import native_math

torch = pytest.importorskip("torch")

FLOATS = [np.float32, np.float64]
TORCH = {"exp": torch.exp, "log": torch.log, "log1p": torch.log1p, "expm1": torch.expm1,
         "tanh": torch.tanh, "sigmoid": torch.sigmoid, "erf": torch.erf, "sin": torch.sin,
         "cos": torch.cos}
NUMPY = {"exp": np.exp, "log": np.log, "log1p": np.log1p, "expm1": np.expm1, "tanh": np.tanh,
         "sin": np.sin, "cos": np.cos}


def names(dtype) -> list:
    return sorted(native_math._NAMES[np.dtype(dtype)])


def sample(dtype, size: int = native_math.MIN_ELEMENTS + 77) -> np.ndarray:
    """A dense sweep, normal and log-uniform samples of both signs, and the special values, in
    an array long enough for the native loop (and not a multiple of the vector width)."""
    info = np.finfo(dtype)
    rng = np.random.default_rng(7)
    special = [0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, 1.0, float(info.max), -float(info.max),
               float(info.tiny), -float(info.tiny), float(info.smallest_subnormal), 88.7, -88.7,
               -103.9, 709.8, -709.8, 745.2, -745.2, 20.0, -20.0, 0.55, 1e-8, -1e-8, 1e30,
               -1e30, 6.0, -6.0]
    quarter = (size - len(special)) // 4
    magnitudes = np.exp(rng.uniform(np.log(float(info.smallest_subnormal)), np.log(float(info.max)),
                                    quarter)) * rng.choice([-1.0, 1.0], quarter)
    parts = [special, np.linspace(-30, 30, quarter), rng.standard_normal(quarter) * 4, magnitudes]
    parts.append(rng.uniform(-1e3, 1e3, size - len(special) - 3 * quarter))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # float32 overflows of the specials
        return np.concatenate([np.asarray(part, np.float64) for part in parts]).astype(dtype)


def assert_close(mine: np.ndarray, theirs: np.ndarray, where: str, ulp: float = 2) -> None:
    """Within `ulp` of torch (or below the smallest normal number), NaN and infinities in the
    same places, and zeros of torch's signs."""
    assert mine.dtype == theirs.dtype and mine.shape == theirs.shape, where
    np.testing.assert_array_equal(np.isnan(mine), np.isnan(theirs), err_msg=where)
    info = np.finfo(mine.dtype)
    np.testing.assert_allclose(mine, theirs, rtol=ulp * info.eps, atol=float(info.tiny),
                               equal_nan=True, err_msg=where)
    zeros = (theirs == 0) & (mine == 0)  # torch flushes some subnormal results, as 0 or -0
    np.testing.assert_array_equal(np.signbit(mine[zeros]), np.signbit(theirs[zeros]),
                                  err_msg=f"{where}: signs of zero")


@pytest.mark.parametrize("dtype", FLOATS)
def test_native_loops_are_torchs_within_two_ulp(dtype):
    x = sample(dtype)
    assert native_math.NATIVE is not None
    for name in names(dtype):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            native = native_math.native(name, x)
        assert native is not None, f"{name} {dtype}: no native loop"
        mine = getattr(autojit, name)(autojit.tensor(x)).numpy()
        np.testing.assert_array_equal(mine.view(np.uint8), native.view(np.uint8),
                                      err_msg=f"{name} {dtype}: the impl ran another loop")
        assert_close(mine, TORCH[name](torch.from_numpy(x)).numpy(), f"{name} {dtype}")


def test_exp_below_its_underflow_is_zero_and_subnormals_are_torchs():
    """float32 exp selects 0 below -104 (an underflowing product would take a microcode
    assist per vector): masked scores (-inf, the most negative float) give +0.0, and the
    subnormal results just above keep their values."""
    x = np.concatenate([np.full(native_math.MIN_ELEMENTS, -np.inf),
                        [-3.4e38, -1e30, -110.0, -104.5, -104.0001],
                        np.linspace(-104.0, -85.0, 4001)]).astype(np.float32)
    mine = autojit.exp(autojit.tensor(x)).numpy()
    assert native_math.native("exp", x) is not None
    below = x < -104.0
    assert (mine[below] == 0).all() and not np.signbit(mine[below]).any()
    assert_close(mine, torch.exp(torch.from_numpy(x)).numpy(), "exp near its underflow")


def test_every_native_function_is_the_math_librarys():
    from autojit.codegen.cpu import eager_math, mathlib

    assert eager_math.NAMES == mathlib.UNARY
    assert set().union(*native_math._NAMES.values()) <= set(eager_math.NAMES)


@pytest.mark.parametrize("dtype", FLOATS)
def test_native_loops_are_the_compiled_kernels_bits(dtype):
    """Eager and compiled run one math library: a compiled kernel of every function gives the
    eager results bit for bit."""
    x = sample(dtype)
    functions = names(dtype)
    compiled = autojit.compile(lambda t: [getattr(t, name)() for name in functions])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        results = compiled(autojit.tensor(x))
    for name, result in zip(functions, results, strict=True):
        eager = getattr(autojit, name)(autojit.tensor(x)).numpy()
        result = result.numpy()
        # A NaN's sign and payload are not values: LLVM may give another NaN where a kernel
        # holds other functions too (log1p(-inf) beside log), so NaNs compare by place.
        np.testing.assert_array_equal(np.isnan(eager), np.isnan(result), err_msg=f"{name}")
        numbers = ~np.isnan(eager)
        np.testing.assert_array_equal(eager[numbers].view(np.uint8),
                                      result[numbers].view(np.uint8), err_msg=f"{name} {dtype}")


def test_small_strided_and_other_arrays_keep_numpys_loops():
    """Which loop runs depends on the array alone: below MIN_ELEMENTS, strided, float32 sin
    and cos, and float16 are NumPy's bits; a Fortran-ordered array is the native loop's."""
    x = sample(np.float64, 2 * native_math.MIN_ELEMENTS + 2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        for name, function in NUMPY.items():
            small = x[: native_math.MIN_ELEMENTS - 1]
            assert np.array_equal(getattr(autojit, name)(autojit.tensor(small)).numpy(),
                                  function(small), equal_nan=True), name
            strided = autojit.tensor(x)[::2]
            assert np.array_equal(getattr(autojit, name)(strided).numpy(), function(x[::2]),
                                  equal_nan=True), name
        single = x.astype(np.float32)
        for name in ("sin", "cos"):
            assert np.array_equal(getattr(autojit, name)(autojit.tensor(single)).numpy(),
                                  NUMPY[name](single), equal_nan=True), name
        half = x[:native_math.MIN_ELEMENTS].astype(np.float16)
        assert np.array_equal(autojit.tanh(autojit.tensor(half)).numpy(),
                              np.tanh(half), equal_nan=True)
        square = x[: 256 * 256].reshape(256, 256)
        transposed = autojit.tensor(square).t()
        expected = native_math.native("tanh", np.ascontiguousarray(square.T))
        assert np.array_equal(autojit.tanh(transposed).numpy(), expected, equal_nan=True)


@pytest.mark.parametrize("dtype", FLOATS)
def test_activations_on_the_native_loops_to_second_order(dtype):
    """gelu and softplus (their routines call erf, exp and log1p in place) and tanh at a size
    the native loops run, values, gradients and double backward against torch."""
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(native_math.MIN_ELEMENTS + 5) * 4).astype(dtype)
    x[:4] = [0.0, -30.0, 25.0, 19.999]
    v = rng.standard_normal(x.shape).astype(dtype)
    cases = {"gelu": lambda lib, t: lib.nn.functional.gelu(t),
             "softplus": lambda lib, t: lib.nn.functional.softplus(t),
             "softplus beta 2": lambda lib, t: lib.nn.functional.softplus(t, beta=2,
                                                                          threshold=10),
             "tanh": lambda lib, t: t.tanh(), "silu": lambda lib, t: lib.nn.functional.silu(t)}
    # float32 products and sums of several rounded terms: the op table's looser bound
    ulp = 64 if dtype == np.float32 else 16
    for where, f in cases.items():
        results = []
        for lib, make in ((autojit, autojit.tensor), (torch, torch.tensor)):
            t = make(x, requires_grad=True)
            y = f(lib, t)
            (g,) = lib.autograd.grad((y * make(v)).sum(), t, create_graph=True)
            (h,) = lib.autograd.grad((g * make(v)).sum(), t)
            results.append([r.detach().numpy() for r in (y, g, h)])
        for name, mine, theirs in zip(("value", "gradient", "H v"), *results, strict=True):
            scale = np.max(np.abs(theirs))
            np.testing.assert_allclose(mine, theirs, rtol=ulp * np.finfo(dtype).eps,
                                       atol=ulp * np.finfo(dtype).eps * scale,
                                       err_msg=f"{where} {name} {dtype}")


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("dtype", FLOATS)
def test_gelu_loops_give_the_routines_bits(dtype, threads):
    """gelu and its backward as one native loop each (codegen/cpu/eager_gelu.py, split over
    the cores or not): the bits of ops/nn/activations.py's NumPy calls, whose erf and exp run
    eager_math.py's loops at this size; the special values too."""
    from autojit.codegen.cpu import eager_gelu
    from autojit.ops.nn import activations

    rng = np.random.default_rng(8)
    x = (rng.standard_normal((3, native_math.MIN_ELEMENTS + 37)) * 4).astype(dtype)
    x.flat[:8] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-30, -9.0, 40.0]
    grad = rng.standard_normal(x.shape).astype(dtype)
    hook, before = activations.NATIVE, autojit.get_num_threads()
    assert hook is not None
    try:
        autojit.set_num_threads(threads)
        native = (activations._gelu_impl(x), activations._gelu_backward_impl(grad, x))
        activations.NATIVE = None
        numpy = (activations._gelu_impl(x), activations._gelu_backward_impl(grad, x))
    finally:
        activations.NATIVE = hook
        autojit.set_num_threads(before)
    assert eager_gelu._state.get(np.dtype(dtype)), "the native loops did not run"
    for mine, theirs in zip(native, numpy, strict=True):
        assert mine.tobytes() == theirs.tobytes()
