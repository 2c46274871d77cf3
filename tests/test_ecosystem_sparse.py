"""Sparse COO tensors (ops/sparse/coo.py) against torch's: construction, the products of graph
networks (torch.sparse.mm, mm, matmul, spmm, addmm, dense @ sparse), to_dense, coalesce,
to_sparse, sums, scaling and sums of sparse tensors, with the gradients to the values, the
dense operand and a sparse leaf; and the errors of dense ops on them.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(3)
# (0, 2) stored twice: an uncoalesced tensor, as graph code builds them from edge lists.
INDICES = np.array([[0, 1, 1, 3, 0], [2, 0, 2, 1, 2]])
VALUES = _rng.normal(size=5)
DENSE = _rng.normal(size=(4, 3))
WEIGHT = _rng.normal(size=(4, 3))


def _sparse(lib, requires_grad=False, leaf=False):
    values = lib.tensor(VALUES, requires_grad=requires_grad and not leaf)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's note on its invariant checks
        sparse = lib.sparse_coo_tensor(lib.tensor(INDICES), values, (4, 4),
                                       requires_grad=leaf)
    return sparse, values


def _numpy(value):
    if value is None:
        return None
    if value.layout != (torch.strided if isinstance(value, torch.Tensor) else autojit.strided):
        value = value.coalesce().to_dense()
    return value.detach().numpy()


PRODUCTS = {
    "sparse.mm": lambda L, s, d: L.sparse.mm(s, d),
    "mm": lambda L, s, d: L.mm(s, d),
    "matmul": lambda L, s, d: L.matmul(s, d),
    "@": lambda L, s, d: s @ d,
    "spmm": lambda L, s, d: L.spmm(s, d),
    "dsmm": lambda L, s, d: L.dsmm(s, d),
    "method": lambda L, s, d: s.mm(d),
    "sparse.addmm": lambda L, s, d: L.sparse.addmm(d[:, :3].t().t(), s, d, beta=0.5, alpha=2),
    "dense @ sparse": lambda L, s, d: L.mm(d.t(), s),
    "vector": lambda L, s, d: L.mv(s.to_dense(), d[:, 0]) + L.mm(s, d)[:, 0],
}


@pytest.mark.parametrize("name", PRODUCTS)
def test_products_and_gradients(name):
    results = []
    for lib in (torch, autojit):
        sparse, values = _sparse(lib, requires_grad=True)
        dense = lib.tensor(DENSE, requires_grad=True)
        out = PRODUCTS[name](lib, sparse, dense)
        weight = np.linspace(-1, 2, out.numel()).reshape(tuple(out.shape))
        (out * lib.tensor(weight)).sum().backward()
        results.append((out.detach().numpy(), values.grad.numpy(), dense.grad.numpy()))
    for mine, theirs in zip(results[1], results[0]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12, atol=1e-12)


def test_sparse_leaf_gradient_of_sparse_mm():
    """torch.sparse.mm's gradient of a sparse leaf: sparse, the dense gradient at each stored
    position (once where the position is stored twice)."""
    grads = []
    for lib in (torch, autojit):
        sparse, _ = _sparse(lib, leaf=True)
        assert sparse.requires_grad and sparse.is_leaf
        (lib.sparse.mm(sparse, lib.tensor(DENSE)) * lib.tensor(WEIGHT)).sum().backward()
        assert sparse.grad.layout == lib.sparse_coo
        grads.append(_numpy(sparse.grad))
    np.testing.assert_allclose(grads[1], grads[0], rtol=1e-12)


CONVERSIONS = {
    "to_dense": lambda L, s: s.to_dense(),
    "coalesce values": lambda L, s: s.coalesce().values(),
    "coalesce indices": lambda L, s: s.coalesce().indices(),
    "_values": lambda L, s: s._values(),
    "_indices": lambda L, s: s._indices(),
    "t": lambda L, s: s.t().to_dense(),
    "sum": lambda L, s: s.sum(),
    "sparse.sum dim": lambda L, s: L.sparse.sum(s, 1).to_dense(),
    "times number": lambda L, s: (s * 3).to_dense(),
    "divided": lambda L, s: (s / 2).to_dense(),
    "negated": lambda L, s: (-s).to_dense(),
    "times dense": lambda L, s: (s.coalesce() * L.tensor(DENSE[:, [0, 1, 2, 0]])).to_dense(),
    "sparse + sparse": lambda L, s: (s + s).to_dense(),
    "dense + sparse": lambda L, s: L.ones(4, 4, dtype=L.float64) + s,
    "to_sparse": lambda L, s: L.tensor(DENSE).to_sparse().values(),
    "to_sparse indices": lambda L, s: L.tensor(np.where(DENSE > 0, DENSE, 0)).to_sparse()
    .indices(),
    "to_sparse(1)": lambda L, s: L.tensor(np.where(DENSE > 0.5, DENSE, 0)).to_sparse(1)
    .values(),
    "to float32": lambda L, s: s.to(L.float32).to_dense(),
    "nnz": lambda L, s: L.tensor(s._nnz()),
    "dims": lambda L, s: L.tensor([s.sparse_dim(), s.dense_dim(), s.dim(), len(s)]),
    "size inferred": lambda L, s: L.tensor(L.sparse_coo_tensor(s._indices(), s._values())
                                           .shape),
    "legacy": lambda L, s: L.sparse.FloatTensor(L.tensor(INDICES), L.tensor(VALUES).float(),
                                                L.Size([4, 4])).to_dense(),
}


@pytest.mark.parametrize("name", CONVERSIONS)
def test_conversions(name):
    results = []
    for lib in (torch, autojit):
        sparse, values = _sparse(lib, requires_grad=True)
        out = CONVERSIONS[name](lib, sparse)
        if out.layout != (torch.strided if lib is torch else autojit.strided):
            out = out.to_dense()
        results.append((_numpy(out), str(out.dtype).split(".")[-1]))
        if out.requires_grad:
            (out * lib.tensor(np.linspace(1, 2, out.numel()).reshape(tuple(out.shape)),
                              dtype=out.dtype)).sum().backward()
            results.append(values.grad.numpy() if values.grad is not None else None)
    assert results[len(results) // 2:][0][1] == results[0][1]
    for mine, theirs in zip(results[len(results) // 2:], results[:len(results) // 2]):
        if isinstance(theirs, tuple):
            mine, theirs = mine[0], theirs[0]
        np.testing.assert_allclose(mine, theirs, rtol=1e-6, atol=1e-12)


@pytest.mark.parametrize("call, error, message", [
    (lambda L, s: s.exp(), NotImplementedError, "Could not run 'aten::exp'"),
    (lambda L, s: s.numpy(), TypeError, "can't convert Sparse layout tensor to numpy"),
    (lambda L, s: s.indices(), RuntimeError, "Cannot get indices on an uncoalesced tensor"),
    (lambda L, s: L.ones(2).indices(), RuntimeError,
     "indices expected sparse coordinate tensor layout but got Strided"),
    (lambda L, s: s + L.ones(4, 4), RuntimeError, "add\\(sparse, dense\\) is not supported"),
    (lambda L, s: L.sparse_coo_tensor(L.tensor(INDICES), L.ones(3), (4, 4)), RuntimeError,
     "indices and values must have same nnz"),
])
def test_errors_as_torch(call, error, message):
    for lib in (torch, autojit):
        sparse, _ = _sparse(lib)
        with pytest.raises(error, match=message):
            call(lib, sparse)


def test_what_a_sparse_tensor_says():
    sparse, values = _sparse(autojit)
    assert isinstance(sparse, autojit.Tensor) and sparse.is_sparse
    assert sparse.layout is autojit.sparse_coo and autojit.ones(1).layout is autojit.strided
    assert not autojit.ones(1).is_sparse
    assert tuple(sparse.shape) == (4, 4) and sparse.dtype is autojit.float64
    assert str(sparse.device) == "cpu"
    empty = autojit.zeros(2, 3, layout=autojit.sparse_coo)
    assert empty.is_sparse and empty._nnz() == 0 and tuple(empty.shape) == (2, 3)
    assert repr(sparse).startswith("tensor(indices=tensor([[0, 1, 1, 3, 0],\n"
                                   "                       [2, 0, 2, 1, 2]]),\n"
                                   "       values=tensor([")
    assert repr(sparse).endswith("size=(4, 4), nnz=5, dtype=autojit.float64, "
                                 "layout=autojit.sparse_coo)")
    assert not values.requires_grad  # requires_grad_ on the sparse tensor leaves it
    sparse.requires_grad_()
    assert not values.requires_grad and sparse.requires_grad


def _permuted(lib) -> list:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # torch's note on its invariant checks
        hybrid = lib.sparse_coo_tensor(lib.tensor([[0, 1, 1], [2, 0, 2]]),
                                       lib.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]]),
                                       (2, 3, 2))
        batched = lib.sparse_coo_tensor(lib.tensor([[0, 1], [1, 0], [0, 2]]),
                                        lib.tensor([1.0, 2.0]), (2, 2, 3))
    found = []
    for tensor, order in ((hybrid, (1, 0, 2)), (hybrid, (0, 1, 2)), (batched, (2, 0, 1))):
        permuted = tensor.permute(*order)
        found.append((permuted.to_dense().tolist(), tuple(permuted.shape)))
    found.append(batched.mT.to_dense().tolist())
    for order in ((2, 0, 1), (0, 1)):  # a sparse dim among the dense ones; too few dims
        try:
            hybrid.permute(*order)
        except RuntimeError as error:
            found.append(str(error).replace("torch.", "").replace("autojit.", ""))
    return found


def test_permute_and_mT_of_a_sparse_tensor_are_torchs():
    assert _permuted(autojit) == _permuted(torch)
