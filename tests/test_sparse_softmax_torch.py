"""torch.sparse.softmax and torch.sparse.log_softmax (ops/sparse/softmax.py) against torch: the
values and indices along every dim, sparse and dense, of coalesced and uncoalesced COO tensors,
the gradients to the stored values, dtype=, and torch's errors. torch's gradient of a sparse
softmax is not differentiable again (it comes back without a graph), so second derivatives are
checked against torch's dense softmax of the same tensor with its unstored entries at -inf."""

from __future__ import annotations

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(4)
# (indices, values shape, size): duplicates at (0, 2); a 3-D tensor of two sparse dims; one
# with a dense dim; an empty one
CASES = [
    ([[0, 1, 1, 0, 2, 2], [2, 0, 2, 2, 1, 0]], (6,), (3, 3)),
    ([[0, 1, 1, 2], [1, 0, 3, 3], [0, 1, 1, 2]], (4,), (3, 4, 3)),
    ([[0, 2, 2], [1, 0, 1]], (3, 4), (3, 2, 4)),
    ([[], []], (0,), (2, 3)),
]


def _sparse(lib, case, values, requires_grad=False):
    indices, _, size = case
    leaf = lib.tensor(values, dtype=lib.float64, requires_grad=requires_grad)
    return lib.sparse_coo_tensor(lib.tensor(indices, dtype=lib.int64).reshape(len(size) - (
        1 if len(np.shape(values)) > 1 else 0), -1), leaf, size), leaf


def _dense_reference(case, leaf, dim, log):
    """torch's dense (log_)softmax of the tensor, its unstored entries -inf, and 0 there."""
    indices, _, size = case
    where = tuple(torch.tensor(row, dtype=torch.int64) for row in indices)
    dense = torch.zeros(size, dtype=torch.float64).index_put(where, leaf, accumulate=True)
    stored = torch.zeros(size, dtype=torch.bool).index_put(
        where, torch.ones(leaf.shape, dtype=torch.bool))
    scores = torch.where(stored, dense, float("-inf"))
    out = torch.log_softmax(scores, dim) if log else torch.softmax(scores, dim)
    return torch.where(stored, out, 0.0)


@pytest.mark.parametrize("log", [False, True], ids=["softmax", "log_softmax"])
@pytest.mark.parametrize("case", range(len(CASES)))
def test_values_and_gradients_are_torchs(case, log):
    case = CASES[case]
    values = _rng.standard_normal(case[1]) * 2
    weights = np.linspace(-1, 2, int(np.prod(case[2]))).reshape(case[2])
    for dim in range(-len(case[2]), len(case[2])):
        results = []
        # torch's backward of a negative dim is wrong (its values are right): autojit's
        # gradients are checked against torch's dense softmax there instead
        for lib in (torch, autojit) if dim >= 0 else (autojit,):
            sparse, leaf = _sparse(lib, case, values, requires_grad=True)
            out = getattr(lib.sparse, "log_softmax" if log else "softmax")(sparse, dim)
            assert out.is_coalesced()
            total = (out.to_dense() * lib.tensor(weights)).sum()
            (gradient,) = lib.autograd.grad(total, leaf, create_graph=lib is autojit)
            results.append([out.indices().numpy(), out.values().detach().numpy(),
                            gradient.detach().numpy()])
            if lib is autojit and leaf.numel():
                (second,) = lib.autograd.grad((gradient * gradient).sum(), leaf)
                reference = torch.tensor(values, requires_grad=True)
                (first,) = torch.autograd.grad((_dense_reference(
                    case, reference, dim, log) * torch.tensor(weights)).sum(), reference,
                    create_graph=True)
                (expected,) = torch.autograd.grad((first * first).sum(), reference)
                np.testing.assert_allclose(gradient.detach().numpy(), first.detach().numpy(),
                                           rtol=1e-9, atol=1e-12, err_msg=f"dim {dim}")
                np.testing.assert_allclose(second.numpy(), expected.numpy(), rtol=1e-9,
                                           atol=1e-12, err_msg=f"second derivative, dim {dim}")
        if dim < 0:
            continue
        for expected, got in zip(*results, strict=True):
            assert expected.shape == got.shape, dim
            np.testing.assert_allclose(got, expected, rtol=1e-10, atol=1e-12, err_msg=str(dim))


def test_dtype_and_errors_are_torchs():
    for lib in (torch, autojit):
        sparse = lib.tensor([[1.0, 0.0], [2.0, 3.0]], dtype=lib.float64).to_sparse()
        assert lib.sparse.softmax(sparse, 1, dtype=lib.float32).dtype is lib.float32
    calls = [lambda lib: lib.sparse.softmax(lib.ones(2, 3), 1),
             lambda lib: lib.sparse.log_softmax(lib.ones(2, 3).to_sparse_csr(), 1),
             lambda lib: lib.sparse.softmax(lib.ones(2, 3).to_sparse(), 2),
             lambda lib: lib.sparse.softmax(lib.ones(2, 3, dtype=lib.int64).to_sparse(), 1)]
    for call in calls:
        seen = []
        for lib in (torch, autojit):
            with pytest.raises((NotImplementedError, IndexError)) as caught:
                call(lib)
            seen.append((caught.type, str(caught.value).split(" This could be")[0]))
        assert seen[0] == seen[1]
