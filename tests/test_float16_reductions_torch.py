"""float16 norms, normalizations, losses, softplus and lerp against torch: they compute in
float32 and round once (`float32_inside`, ops/autocast.py), as torch's kernels accumulate
float16 in float32.
Computed in float16 they overflowed: the norm of four 200s was inf, softplus(15) inf."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")

CASES = {
    "norm": lambda L, y: y.norm(),
    "vector_norm": lambda L, y: L.linalg.vector_norm(y),
    "mse_loss": lambda L, y: L.nn.functional.mse_loss(y, y * 0),
    "l1_loss": lambda L, y: L.nn.functional.l1_loss(y, y * 0),
    "smooth_l1_loss": lambda L, y: L.nn.functional.smooth_l1_loss(y * 100, y * 0),
    "normalize": lambda L, y: L.nn.functional.normalize(y, dim=0),
    "cosine_similarity": lambda L, y: L.nn.functional.cosine_similarity(y[None], y[None] * 2),
    "softplus": lambda L, y: L.nn.functional.softplus(y / 20 + 10),
    "mean": lambda L, y: (y * y).mean(),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_float16_results_are_torchs(name):
    data = np.array([200.0, 180.0, -150.0, 220.0], dtype=np.float16)
    results = []
    for library in (autojit, torch):
        with warnings.catch_warnings():
            warnings.simplefilter("error", RuntimeWarning)  # no overflow on the way
            result = CASES[name](library, library.tensor(data))
        assert str(result.dtype).endswith("float16")
        results.append(np.asarray(result.tolist(), dtype=np.float64))
    assert np.all(np.isfinite(results[0]))
    np.testing.assert_allclose(results[0], results[1], rtol=2 ** -10)


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("weight", [0.05, 0.7, "tensor"])
def test_lerp_of_lower_precision_rounds_once_as_torchs(dtype, weight):
    """lerp (and lerp_, an optimizer's moving average) of bfloat16 and float16 computes in
    float32 and rounds once, as torch's kernel; rounded after each of its ops, 5% of a bfloat16
    lerp's elements differed from torch's. What still differs is at ties: torch's fused
    multiply-add rounds once where float32 ops round twice (float32 lerps differ so too)."""
    rng = np.random.default_rng(0)
    start, end, weights = (rng.standard_normal(20000).astype(np.float32) for _ in range(3))
    results = []
    for lib in (torch, autojit):
        low = getattr(lib, dtype)
        x, y = lib.tensor(start).to(low), lib.tensor(end).to(low)
        w = lib.tensor(np.abs(weights)).to(low) if weight == "tensor" else weight
        out = lib.lerp(x, y, w)
        in_place = x.clone().lerp_(y, w)
        assert out.dtype is low and in_place.dtype is low
        results.append((out.float().numpy(), in_place.float().numpy()))
        if lib is autojit:  # exactly the float32 lerp rounded once
            wide = lib.lerp(x.float(), y.float(), w.float() if weight == "tensor" else w)
            np.testing.assert_array_equal(out.float().numpy(), wide.to(low).float().numpy())
    for expected, got in zip(results[0], results[1], strict=True):
        assert (expected != got).mean() <= 0.002
        # one rounding of the operands' size apart (a result near 0 comes from cancellation)
        scale = np.maximum(np.abs(start), np.abs(end)) + np.abs(expected)
        spacing = scale * (2.0 ** -7 if dtype == "bfloat16" else 2.0 ** -10)
        assert np.all(np.abs(expected - got) <= spacing)


ONE_KERNEL = {
    "sinh": lambda L, x, y, z: L.sinh(x), "cosh": lambda L, x, y, z: L.cosh(x),
    "asinh": lambda L, x, y, z: L.asinh(x), "atanh": lambda L, x, y, z: L.atanh(x.tanh()),
    "sinc": lambda L, x, y, z: L.sinc(x), "rsqrt": lambda L, x, y, z: L.rsqrt(z),
    "log2": lambda L, x, y, z: L.log2(z), "log10": lambda L, x, y, z: L.log10(z),
    "addcmul": lambda L, x, y, z: L.addcmul(x, y, z, value=0.3),
    "addcdiv": lambda L, x, y, z: L.addcdiv(x, y, z, value=0.3),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("name", sorted(ONE_KERNEL))
def test_one_kernel_ops_of_lower_precision_round_once_as_torchs(name, dtype):
    """Ops that are one kernel in torch, composites here, compute bfloat16 and float16 in
    float32 and round once (`float32_inside`): rounded after each of their ops, 16-63% of the
    elements of a bfloat16 sinh, cosh, sinc, log2, log10, rsqrt or addcmul differed."""
    rng = np.random.default_rng(1)
    values = [(rng.standard_normal(4000) * 2).astype(np.float32),
              (rng.standard_normal(4000) * 2).astype(np.float32),
              (rng.random(4000) + 0.5).astype(np.float32)]
    results = []
    for lib in (torch, autojit):
        low = getattr(lib, dtype)
        out = ONE_KERNEL[name](lib, *(lib.tensor(v).to(low) for v in values))
        assert out.dtype is low
        results.append(out.float().numpy())
    assert ((results[0] != results[1]) & ~np.isnan(results[0])).mean() <= 0.005


ALPHA_FORMS = {
    "add": lambda L, x, y: L.add(x, y, alpha=0.3),
    "add_": lambda L, x, y: x.clone().add_(y, alpha=-0.01),
    "sub": lambda L, x, y: L.sub(x, y, alpha=0.3),
    "sub_": lambda L, x, y: x.clone().sub_(y, alpha=0.7),
    "rsub": lambda L, x, y: L.rsub(x, y, alpha=0.3),
    "number": lambda L, x, y: L.add(x, 2.5, alpha=0.3),
    "zero_dim": lambda L, x, y: L.add(x, L.tensor(1.7), alpha=0.3),
}


@pytest.mark.parametrize("dtype", ["bfloat16", "float16"])
@pytest.mark.parametrize("form", sorted(ALPHA_FORMS))
def test_add_and_sub_with_alpha_of_lower_precision_are_torchs_bits(form, dtype):
    """x + alpha * y of bfloat16 or float16 as torch's kernel: in float32 from the operands
    and alpha rounded to the dtype, rounded once (`p.add_(update, alpha=-lr)` of bfloat16
    parameters); the product and the sum rounded each differed in 2-31% of the elements."""
    rng = np.random.default_rng(2)
    first, second = ((rng.standard_normal(4000) * 2).astype(np.float32) for _ in range(2))
    results = []
    for lib in (torch, autojit):
        low = getattr(lib, dtype)
        out = ALPHA_FORMS[form](lib, lib.tensor(first).to(low), lib.tensor(second).to(low))
        assert out.dtype is low
        results.append(out.float().numpy())
    np.testing.assert_array_equal(results[1], results[0])
