"""Complex elementwise chains fuse into CPU kernels: complex64 and complex128 values are pairs
of float32 or float64 in the generated code (codegen/cpu/llvm/complex.py, docs/notes/complex.md).
Each op is checked compiled against eager (bitwise where the op is exactly rounded: sums,
products, quotients, conjugates, the parts stored by complex(); within a few ulp for the
functions of mathlib) and eager against torch, and the plan is checked to run the chain as
one kernel rather than op by op. Gradients of the fused chains are checked by gradcheck on the
compiled function. One compiled function per dtype carries all the ops, so that the file
costs a few kernel compilations.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import autojit

rng = np.random.default_rng(54)
N = 37  # not a multiple of a vector width: the loops' remainders run too

# name -> (function of complex a, b and real x, in autojit or torch alike; exactly rounded)
OPS = {
    "add": (lambda a, b, x, m: a + b, True),
    "sub": (lambda a, b, x, m: a - b, True),
    "mul": (lambda a, b, x, m: a * b, True),
    "div": (lambda a, b, x, m: a / b, True),
    "neg": (lambda a, b, x, m: -(a * b), True),
    "conj": (lambda a, b, x, m: (a * b).conj_physical(), True),
    "reciprocal": (lambda a, b, x, m: (a + b).reciprocal(), True),
    "square": (lambda a, b, x, m: (a - b).square(), True),
    "real scalar": (lambda a, b, x, m: (a * 2.5 + 1.5) / 3.0, True),
    "complex scalar": (lambda a, b, x, m: a * (0.5 - 2j) + 1j, True),
    "real tensor": (lambda a, b, x, m: (a + x) * x - x / b, True),
    "complex": (lambda a, b, x, m: m.complex(x * 2, x - 1) * a, True),
    "eq": (lambda a, b, x, m: (a + b) == m.where(x > 0, b + a, a), True),
    "ne": (lambda a, b, x, m: (a * b) != (a + b), True),
    "where": (lambda a, b, x, m: m.where(x > 0, a * b, a - b), True),
    # a[1] * b[1] is imaginary only (true), a[0] * b[0] zero (false)
    "bool": (lambda a, b, x, m: (a * b).bool(), True),
    "abs": (lambda a, b, x, m: (a * b).abs(), False),
    "angle": (lambda a, b, x, m: (a * b).angle(), False),
    "sgn": (lambda a, b, x, m: (a * b).sgn(), False),
    "exp": (lambda a, b, x, m: (a * b).exp(), False),
    "log": (lambda a, b, x, m: (a * b).log(), False),
    "sqrt": (lambda a, b, x, m: (a * b).sqrt(), False),
    "polar": (lambda a, b, x, m: m.polar(x.abs(), x) * a, False),
    "sin": (lambda a, b, x, m: (a * b).sin(), False),
    "cos": (lambda a, b, x, m: (a * b).cos(), False),
    "tanh": (lambda a, b, x, m: (a * b).tanh(), False),
    "pow": (lambda a, b, x, m: (a * b) ** 5 + a ** -3 + b.pow(2) - (a + b) ** 1.0, True),
}
PART = {np.complex64: np.float32, np.complex128: np.float64}


def _inputs(dtype):
    def draw():
        return (rng.standard_normal(N) + 1j * rng.standard_normal(N)).astype(dtype)

    a, b = draw(), draw()
    # Parts that stress the formulas: a zero divisor's part, moduli near 1 (log), a negative
    # real axis (sqrt), exact zeros (sgn, angle).
    b[:4] = [3 + 0j, 1e-3j, -2 + 1e-9j, 0.6 + 0.8j]
    a[:4] = [0j, -4 + 0j, 1 + 0j, -1e-3 + 0j]
    return a, b, rng.standard_normal(N).astype(PART[dtype])


def _all_ops(a, b, x, module):
    return tuple(function(a, b, x, module) for function, _ in OPS.values())


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_ops_fuse_and_equal_eager_and_torch(dtype):
    a, b, x = _inputs(dtype)
    args = [autojit.tensor(v) for v in (a, b, x)]
    compiled = autojit.compile(lambda a, b, x: _all_ops(a, b, x, autojit))
    results = compiled(*args)
    eager = _all_ops(*args, autojit)
    with np.errstate(all="ignore"):
        reference = _all_ops(*(torch.tensor(v) for v in (a, b, x)), torch)
    ulp = np.finfo(PART[dtype]).eps
    for name, got, want, theirs in zip(OPS, results, eager, reference):
        exact = OPS[name][1]
        assert got.dtype is want.dtype and tuple(got.shape) == tuple(want.shape), name
        got, want = got.numpy(), want.numpy()
        assert got.strides == want.strides, name
        if exact:
            np.testing.assert_array_equal(got, want, err_msg=name)
        else:
            np.testing.assert_allclose(got, want, rtol=4 * ulp, atol=4 * ulp, err_msg=name)
        # torch's complex pow is exp(n log z), eager's NumPy's repeated products.
        loose = 256 if name == "pow" else 8
        np.testing.assert_allclose(want, theirs.numpy(), rtol=loose * ulp, atol=loose * ulp,
                                   err_msg=name)
    groups = compiled.fusion_groups()
    # Every op ran in a kernel: the plan has no single-node step.
    assert not re.search(r"^\d+: node", groups, re.MULTILINE), groups


def test_special_values_follow_numpy():
    # Infinities, NaN and signed zeros through the quotient, exp, log and sqrt, as NumPy's
    # loops and C99's cexp, clog and csqrt give them.
    values = np.array([0j, -0.0 + 0j, complex(0, -0.0), complex(np.inf, 0), complex(-np.inf, 1),
                       complex(1, np.inf), complex(np.nan, 1), complex(-3, 0), complex(-3, -0.0),
                       complex(1e308, 1e308), complex(5e-324, 0), 1 + 1e-12j, 2 + 3j,
                       1000j, complex(-0.0, -1000), complex(25, 3), complex(-400, 1),
                       complex(0.5, 710.2), complex(1e-320, 2)])

    def function(z, w):
        return (z / w, z.exp(), z.log(), z.sqrt(), z.abs(), z * w, z.sin(), z.cos(),
                z.tanh())

    args = [autojit.tensor(values), autojit.tensor(values[::-1].copy())]
    compiled = autojit.compile(function)
    with np.errstate(all="ignore"):
        for got, want in zip(compiled(*args), function(*args)):
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-15, atol=0)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_a_rotary_embedding_runs_in_kernels(dtype):
    # view_as_complex at the kernel's input, the rotation by polar(1, theta), view_as_real at
    # its output: the rotation and the product are kernels over the complex pairs (two: the
    # rotation has theta's shape, the product x's).
    part = PART[dtype]
    x = autojit.tensor(rng.standard_normal((2, 6, 8)).astype(part))
    theta = autojit.tensor(rng.standard_normal((6, 4)).astype(part))

    def rotate(x, theta):
        z = autojit.view_as_complex(x.reshape(2, 6, 4, 2))
        rotated = z * autojit.polar(autojit.ones_like(theta), theta)
        return autojit.view_as_real(rotated).reshape(2, 6, 8)

    compiled = autojit.compile(rotate, fullgraph=True)
    got, want = compiled(x, theta), rotate(x, theta)
    reference = torch.view_as_real(torch.view_as_complex(
        torch.tensor(x.numpy()).reshape(2, 6, 4, 2)) * torch.polar(
        torch.ones(6, 4, dtype=torch.tensor(theta.numpy()).dtype),
        torch.tensor(theta.numpy()))).reshape(2, 6, 8)
    eps = np.finfo(part).eps
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=4 * eps, atol=4 * eps)
    np.testing.assert_allclose(want.numpy(), reference.numpy(), rtol=8 * eps, atol=8 * eps)
    groups = compiled.fusion_groups()
    assert re.search(r"kernel k\d+_mul\[2, 6, 4\]", groups), groups
    assert not re.search(r"node (mul|complex|cos|sin)\b", groups), groups


def test_gradients_of_a_fused_complex_chain_pass_gradcheck_compiled():
    # Backward graphs of complex ops are autojit ops (conjugates, quotients, sgn), so they
    # fuse too; gradcheck compares the compiled gradients with finite differences.
    a = autojit.tensor(rng.standard_normal(3) + 1j * rng.standard_normal(3), requires_grad=True)
    b = autojit.tensor(rng.standard_normal(3) + 1j * rng.standard_normal(3), requires_grad=True)
    x = autojit.tensor(rng.uniform(0.5, 1.5, 3), requires_grad=True)

    def function(a, b, x):
        z = (a * b + x).exp() / (b.conj() + 2) + autojit.polar(x, x) * a.sqrt()
        return z.abs() + (z * a).log().angle(), z.sgn() * x

    compiled = autojit.compile(function)
    assert autojit.autograd.gradcheck(compiled, (a, b, x))
    # ... and equal eager's gradients of the same loss.
    loss = sum((part.real if part.is_complex() else part).sum() for part in compiled(a, b, x))
    grads = autojit.autograd.grad(loss, (a, b, x))
    eager_loss = sum((part.real if part.is_complex() else part).sum()
                     for part in function(a, b, x))
    for got, want in zip(grads, autojit.autograd.grad(eager_loss, (a, b, x))):
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_sums_and_means_fuse_with_their_chain(dtype):
    # Over the innermost axis (totals in registers, complex64's in double), over an outer
    # axis (accumulated in the output row, as a gradient's un-broadcasting sums) and whole.
    values = rng.standard_normal((4, 2, 19, 23)) + 1j * rng.standard_normal((4, 2, 19, 23))
    a, b = values[0].astype(dtype), values[1].astype(dtype)

    def function(a, b, m):
        product = a * b
        return (product.sum(-1), (a - b).sum(0), (a / b).mean(1), product.sum(),
                (a + b).mean())

    args = [autojit.tensor(a), autojit.tensor(b)]
    compiled = autojit.compile(lambda a, b: function(a, b, autojit))
    reference = function(torch.tensor(a), torch.tensor(b), torch)
    eps = np.finfo(PART[dtype]).eps
    for got, want, theirs in zip(compiled(*args), function(*args, autojit), reference):
        assert got.dtype is want.dtype and tuple(got.shape) == tuple(want.shape)
        scale = np.abs(want.numpy()).max()
        np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=0, atol=64 * eps * scale)
        np.testing.assert_allclose(want.numpy(), theirs.numpy(), rtol=0, atol=64 * eps * scale)
    groups = compiled.fusion_groups()
    assert not re.search(r"^\d+: node", groups, re.MULTILINE), groups
