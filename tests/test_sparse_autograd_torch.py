"""Sparse COO tensors in autograd against torch: gradcheck of sparse inputs (masked and not),
AccumulateGrad of sparse and dense gradients, sparse and dense gradients summed at one node,
mm's dense and torch.sparse.mm's sparse gradients, to_dense's masked gradient, sparse_mask,
gather with sparse_grad and embedding_bag with sparse=True."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")
warnings.filterwarnings("ignore", message=".*[Ss]parse.*")

LIBS = (torch, autojit)


def _dense(value):
    if value is None:
        return None
    if value.layout != (torch.strided if isinstance(value, torch.Tensor) else autojit.strided):
        value = value.coalesce().to_dense()
    return value.detach().numpy()


def _layout(lib, value):
    return "sparse" if value.layout == lib.sparse_coo else "strided"


def _sparse_leaf(lib):
    x = lib.tensor([[0.0, 1.5], [2.0, 0.0]], dtype=lib.float64).to_sparse()
    return x.requires_grad_()


@pytest.mark.parametrize("fast_mode", [False, True])
def test_gradcheck_sparse_inputs(fast_mode):
    for lib in LIBS:
        gc = lib.autograd.gradcheck
        a = lib.tensor(np.linspace(0.5, 2, 4).reshape(2, 2), requires_grad=True)
        x = _sparse_leaf(lib)
        assert gc(lambda a, x: a * x.coalesce().to_dense(), (a, x), masked=True,
                  fast_mode=fast_mode)
        assert gc(lambda x, lib=lib: lib.sum(x), (x,), masked=False, fast_mode=fast_mode)
        # masked to_dense's gradient lacks the unstored elements: wrong unless masked (the
        # fast mode's direction is zero there, in torch too, so only the slow mode sees it)
        assert gc(lambda x: x.to_dense(), (x,), masked=False, raise_exception=False,
                  fast_mode=fast_mode) == fast_mode
        assert gc(lambda x: x.to_dense(masked_grad=False), (x,), masked=False,
                  fast_mode=fast_mode)


def test_gradcheck_sparse_errors():
    def to_sparse_1(grad):
        return grad.to_dense().to_sparse(1)

    for lib in LIBS:
        def hooked(x):
            y = x.clone()
            y.register_hook(to_sparse_1)
            return y.to_dense()

        with pytest.raises(RuntimeError, match="grad is sparse tensor, but has incorrect "
                                               "sparse_dim 1, expected 2"):
            lib.autograd.gradcheck(hooked, (_sparse_leaf(lib),), masked=True)
        with pytest.raises(RuntimeError, match="failed while testing batched gradient"):
            lib.autograd.gradcheck(lambda x: x.to_dense(), (_sparse_leaf(lib),), masked=True,
                                   check_batched_grad=True)

        class ToSparse(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x.clone()

            @staticmethod
            def backward(ctx, grad):
                return grad.to_sparse()

        x = lib.ones(2, dtype=lib.float64, requires_grad=True)
        with pytest.raises(RuntimeError, match="grad is incorrect layout"):
            lib.autograd.gradcheck(ToSparse.apply, (x,))


def test_accumulate_sparse_and_dense():
    for create_graph in (False, True):
        seen = []
        for lib in LIBS:
            def sparse(lib=lib):
                return lib.sparse_coo_tensor(lib.tensor([[1, 1]]), lib.tensor([1.0, 1.0]), (2,))

            rows = []
            for start, grad in ((sparse(), lib.tensor([1.5, 1.5])), (sparse(), sparse()),
                                (lib.tensor([1.5, 1.5]), sparse())):
                p = lib.tensor([1.5, 1.5]).requires_grad_()
                p.grad = start
                p.backward(grad, create_graph=create_graph)
                rows.append((p.grad is start, _layout(lib, p.grad), _dense(p.grad).tolist()))
            seen.append(rows)
        assert seen[1] == seen[0]


def test_sparse_and_dense_gradients_summed():
    size = (4, 2)
    indices = [[0, 3, 3], [1, 0, 1]]
    seen = []
    for lib in LIBS:
        class Fixed(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, grad):
                ctx.save_for_backward(grad)
                return x.clone()

            @staticmethod
            def backward(ctx, grad):
                return ctx.saved_tensors[0], None

        s = lib.sparse_coo_tensor(lib.tensor(indices), lib.tensor([1.0, 2.0, 3.0]), size)
        d = lib.tensor(np.arange(8.0).reshape(size))
        row = []
        for grads in ((s, d, s), (d, s), (s, s)):
            x = lib.zeros(size, requires_grad=True)
            sum(Fixed.apply(x, g) for g in grads).sum().backward()
            row.append((_layout(lib, x.grad), _dense(x.grad).tolist()))
        seen.append(row)
    assert seen[1] == seen[0]


def test_products_masks_and_gathers():
    seen = []
    rng = np.random.default_rng(0)
    dense = rng.normal(size=(3, 3))
    weights = rng.normal(size=(3, 3))
    for lib in LIBS:
        row = []
        for product in (lambda a, b: a.mm(b), lambda a, b, lib=lib: lib.sparse.mm(a, b)):
            a = lib.tensor(np.triu(dense)).to_sparse().requires_grad_()
            b = lib.tensor(weights, requires_grad=True)
            product(a, b).sum().backward()
            row += [_layout(lib, a.grad), _dense(a.grad).tolist(), _dense(b.grad).tolist()]
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        mask = lib.tensor([1.0, 0.0, 1.0]).to_sparse()
        x.sparse_mask(mask).to_dense().sum().backward()
        row += [_layout(lib, x.grad), _dense(x.grad).tolist()]
        x = lib.tensor(dense, requires_grad=True)
        lib.gather(x, 1, lib.tensor([[0, 0], [2, 1], [1, 1]]), sparse_grad=True).sum().backward()
        row += [_layout(lib, x.grad), _dense(x.grad).tolist()]
        v = lib.tensor(dense[0], requires_grad=True)
        lib.gather(v, 0, lib.tensor(2), sparse_grad=True).backward()
        row += [_layout(lib, v.grad), _dense(v.grad).tolist()]
        w = lib.tensor(weights, requires_grad=True)
        lib.nn.functional.embedding_bag(lib.tensor([0, 2, 2, 1]), w, lib.tensor([0, 2]),
                                        sparse=True).sum().backward()
        row += [_layout(lib, w.grad), _dense(w.grad).tolist()]
        s = lib.sparse_coo_tensor(lib.tensor([[1, 1]]), lib.tensor([1.0, 1.0]), (2,),
                                  requires_grad=True)
        y = s * s
        row += [_layout(lib, y.grad_fn._saved_self)]
        y.to_dense().sum().backward()
        row += [_layout(lib, s.grad), _dense(s.grad).tolist()]
        seen.append(row)
    np.testing.assert_equal(seen[1], seen[0])


def _mm_gradients(lib):
    """a.mm(b) with each of a and b sparse or dense, requiring grad or not (torch's
    test_sparse_mm_backward): the layouts and values of the gradients, which are dense for
    torch.mm even where both operands are sparse."""
    import itertools

    rng = np.random.default_rng(3)
    first, second = rng.standard_normal((3, 3)), rng.standard_normal((3, 3))
    first[0, 1] = second[2, 0] = 0.0
    seen = []
    for a_grad, a_sparse, b_grad, b_sparse in itertools.product([False, True], repeat=4):
        if not ((a_sparse or b_sparse) and (a_grad or b_grad)):
            continue
        a, b = lib.tensor(first), lib.tensor(second)
        a = (a.to_sparse() if a_sparse else a).requires_grad_(a_grad)
        b = (b.to_sparse() if b_sparse else b).requires_grad_(b_grad)
        out = a.mm(b)
        out.sum().backward()
        seen.append((str(out.layout).split(".")[-1],
                     *[(str(t.grad.layout).split(".")[-1], t.grad.to_dense().numpy().round(12)
                        .tolist()) if t.grad is not None else None for t in (a, b)]))
    return seen


def test_mm_of_sparse_operands_gives_dense_gradients_as_torchs():
    assert _mm_gradients(autojit) == _mm_gradients(torch)
