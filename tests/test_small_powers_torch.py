"""x ** 3 and x ** -2 of float tensors are torch's bits: torch computes them as (x * x) * x and
1 / (x * x) (its scalar fast paths), and so do the eager impl (ops/elementwise/__init__.py) and,
through the simplifier (ir/passes/simplify.py), compiled kernels; NumPy's power, which eager called
before, is a last bit away in a fifth of the values. x ** 4 (torch's pow) is two squares eagerly,
within 2 ulp of torch's.
"""

from __future__ import annotations

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")


def values(dtype):
    generator = np.random.default_rng(7)
    x = generator.standard_normal(4096) * generator.choice([1e-30, 1e-3, 1.0, 1e3, 1e30], 4096)
    x[:6] = [0.0, -0.0, np.inf, -np.inf, np.nan, 1e-40]
    return x.astype(dtype)


@pytest.mark.parametrize("exponent", [3, -2, 3.0])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_small_powers_are_torchs_bits_eager_and_compiled(dtype, exponent):
    x = values(dtype)
    want = torch.tensor(x).pow(exponent).numpy()
    eager = (autojit.tensor(x) ** exponent).numpy()
    compiled = autojit.compile(lambda t: t ** exponent)(autojit.tensor(x)).numpy()
    assert eager.dtype == want.dtype and eager.tobytes() == want.tobytes()
    assert compiled.tobytes() == want.tobytes()


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fourth_powers_are_within_torchs_ulps(dtype):
    """torch's x ** 4 is SLEEF's pow (1 ulp); eager squares twice (float32 in float64, rounded
    once): at most 2 ulp from torch's float64 values and 1 from its float32 ones, with its
    infinities, NaN and zeros."""
    x = values(dtype)
    want = torch.tensor(x).pow(4).numpy()
    eager = (autojit.tensor(x) ** 4).numpy()
    assert eager.dtype == want.dtype
    finite = np.isfinite(want)
    assert np.array_equal(eager[~finite], want[~finite], equal_nan=True)
    ulps = np.abs(eager - want)[finite] / np.spacing(np.abs(want[finite]))
    assert ulps.max() <= (2 if dtype == np.float64 else 1)
    # a 0-d base (a norm's gradient raises a scalar to the p - 1 = 4th power)
    scalar = autojit.tensor(x[7]) ** 4
    assert scalar.shape == () and scalar.item() == pytest.approx(float(want[7]), rel=1e-6)


def test_the_second_derivative_of_a_quartic_is_torchs():
    x = values(np.float64)[6:]
    x = np.clip(x, -1e3, 1e3)

    def hvp(lib, x, v):
        x = x.detach().requires_grad_(True)
        (g,) = lib.autograd.grad((x ** 4).sum(), x, create_graph=True)
        return lib.autograd.grad((g * v).sum(), x)[0]

    v = np.linspace(-1, 1, x.size)
    want = hvp(torch, torch.tensor(x), torch.tensor(v)).numpy()
    eager = hvp(autojit, autojit.tensor(x), autojit.tensor(v)).numpy()
    compiled = autojit.compile(lambda a, b: hvp(autojit, a, b))
    got = compiled(autojit.tensor(x), autojit.tensor(v)).numpy()
    np.testing.assert_allclose(eager, want, rtol=1e-15, atol=0)
    np.testing.assert_allclose(got, eager, rtol=1e-15, atol=0)
