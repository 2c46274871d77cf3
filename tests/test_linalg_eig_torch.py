"""autojit.linalg.eig and eigvals against torch's: values (eigenvectors compared with each
one's largest entry made real and positive, an eigenvector being unique up to a factor of
modulus 1), dtypes, first and second derivatives, forward mode, errors and out=; and the
complex casts Tensor.cfloat and Tensor.cdouble.

The losses differentiated depend on the eigenvectors through their moduli only, as torch
requires of a loss of eig (the vectors' phases are arbitrary).
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import autojit as aj

rng = np.random.default_rng(11)


def phased(vectors: np.ndarray) -> np.ndarray:
    if vectors.size == 0:
        return vectors
    index = np.argmax(np.abs(vectors), axis=-2)[..., None, :]
    largest = np.take_along_axis(vectors, index, -2)
    return vectors * (np.abs(largest) / largest)


def both(array, requires_grad=False):
    return (aj.tensor(array, requires_grad=requires_grad),
            torch.tensor(array, requires_grad=requires_grad))


@pytest.mark.parametrize("shape", [(4, 4), (2, 3, 3), (0, 2, 2), (0, 0)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_eig_values_and_vectors(shape, dtype):
    a = rng.standard_normal(shape).astype(dtype)
    mine, theirs = aj.linalg.eig(aj.tensor(a)), torch.linalg.eig(torch.tensor(a))
    tolerance = 1e-5 if dtype == "float32" else 1e-12
    for m, t in zip(mine, theirs, strict=True):
        assert str(m.dtype).split(".")[-1] == str(t.dtype).split(".")[-1]
        assert tuple(m.shape) == tuple(t.shape)
    np.testing.assert_allclose(mine.eigenvalues.numpy(), theirs.eigenvalues.numpy(),
                               atol=tolerance)
    np.testing.assert_allclose(phased(mine.eigenvectors.numpy()),
                               phased(theirs.eigenvectors.numpy()), atol=tolerance)
    values = aj.linalg.eigvals(aj.tensor(a))
    np.testing.assert_allclose(values.numpy(), theirs.eigenvalues.numpy(), atol=tolerance)


def _eig_loss(library, a, weights):
    values, vectors = library.linalg.eig(a)
    return ((values.real * weights[0]).sum() + (values.imag * weights[1]).sum()
            + (vectors.abs() * weights[2]).sum())


def _eigvals_loss(library, a, weights):
    values = library.linalg.eigvals(a)
    return (values.real * weights[0]).sum() + (values.imag * weights[1]).sum()


@pytest.mark.parametrize("loss", [_eig_loss, _eigvals_loss])
def test_gradients_to_second_order(loss):
    # A real matrix with a pair of complex eigenvalues and real ones.
    a = rng.standard_normal((2, 4, 4))
    weights = [rng.standard_normal(shape) for shape in ((2, 4), (2, 4), (2, 4, 4))]
    results = []
    for library in (aj, torch):
        x = library.tensor(a, requires_grad=True)
        w = [library.tensor(v) for v in weights]
        (grad,) = library.autograd.grad(loss(library, x, w), x, create_graph=True)
        (second,) = library.autograd.grad((grad * grad).sum(), x)
        results.append((grad.detach().numpy(), second.numpy()))
    (grad, second), (their_grad, their_second) = results
    np.testing.assert_allclose(grad, their_grad, rtol=1e-9, atol=1e-10)
    np.testing.assert_allclose(second, their_second, rtol=1e-8, atol=1e-9)


def test_forward_mode():
    a, tangent = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    results = []
    for library in (aj, torch):
        forward_ad = library.autograd.forward_ad
        with forward_ad.dual_level():
            dual = forward_ad.make_dual(library.tensor(a), library.tensor(tangent))
            values, vectors = library.linalg.eig(dual)
            eigvals = library.linalg.eigvals(dual)
            results.append([forward_ad.unpack_dual(t).tangent.numpy()
                            for t in (values, vectors.abs(), eigvals)])
    for mine, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-9, atol=1e-10)


@pytest.mark.parametrize("function", ["eig", "eigvals"])
def test_errors(function):
    def outcome(library, value):
        try:
            getattr(library.linalg, function)(value)
        except Exception as error:  # noqa: BLE001 - compared
            return type(error).__name__, str(error).splitlines()[0]
        return None

    for value in (np.ones((2, 3)), np.ones(3), np.ones((2, 3), dtype=np.int64),
                  np.ones((2, 2), dtype=np.float16)):
        assert outcome(aj, aj.tensor(value)) == outcome(torch, torch.tensor(value))
    with pytest.raises(RuntimeError, match="input tensor should not contain infs or NaNs"):
        getattr(aj.linalg, function)(aj.tensor([[np.nan, 1.0], [1.0, 1.0]]))


def test_out():
    a = rng.standard_normal((3, 3))
    values, vectors = aj.empty(3, dtype=aj.complex128), aj.empty(3, 3, dtype=aj.complex128)
    result = aj.linalg.eig(aj.tensor(a), out=(values, vectors))
    assert result.eigenvalues is values and result.eigenvectors is vectors
    np.testing.assert_allclose(values.numpy(), torch.linalg.eig(torch.tensor(a))[0].numpy())
    out = aj.empty(3, dtype=aj.complex128)
    assert aj.linalg.eigvals(aj.tensor(a), out=out) is out
    np.testing.assert_allclose(out.numpy(), values.numpy())


def test_complex_casts():
    data = rng.standard_normal(3).astype("float32")
    for method in ("cfloat", "cdouble"):
        x, t = both(data, requires_grad=True)
        mine, theirs = getattr(x, method)(), getattr(t, method)()
        assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
        np.testing.assert_array_equal(mine.detach().numpy(), theirs.detach().numpy())
        (mine * mine).real.sum().backward()
        (theirs * theirs).real.sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy())
