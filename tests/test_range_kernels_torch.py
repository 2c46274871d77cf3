"""linspace's values are torch's bit for bit (tensor/range_kernels.py): the step in the dtype,
each half counted from its own bound with one fused multiply-add in float32 and float64, each
operation rounded in float16 and bfloat16; and the float64 fused multiply-add is correctly
rounded (against exact rational arithmetic)."""

from __future__ import annotations

import random
from fractions import Fraction

import numpy as np
import pytest

import autojit
from autojit.tensor.range_kernels import fma64

torch = pytest.importorskip("torch")

_RANDOM = random.Random(3)
CASES = [(-1.2, 1.2, 128), (0.1, 7.3, 1000), (-3, 5, 7), (0, 1, 2), (5, -5, 11),
         (-1e3, 3e4, 100001), (-1.3714286088943481, 1.3714286088943481, 16)] + [
    (_RANDOM.uniform(-100, 100), _RANDOM.uniform(-100, 100), _RANDOM.randint(2, 5000))
    for _ in range(12)]


@pytest.mark.parametrize("name", ["float32", "float64", "float16", "bfloat16"])
def test_linspace_values_are_torchs_bit_for_bit(name):
    for start, end, steps in CASES:
        expected = torch.linspace(start, end, steps, dtype=getattr(torch, name)).double()
        actual = autojit.linspace(start, end, steps, dtype=getattr(autojit, name)).double()
        assert np.array_equal(actual.numpy(), expected.numpy()), (start, end, steps)


def test_the_float64_fused_multiply_add_rounds_once():
    generator = np.random.default_rng(0)
    a, b, c = (generator.standard_normal(2000) * 10.0 ** generator.integers(-8, 8, 2000)
               for _ in range(3))
    found = fma64(a, b, c)
    exact = [float(Fraction(x) * Fraction(y) + Fraction(z)) for x, y, z in zip(a, b, c)]
    assert np.array_equal(found, np.array(exact))
