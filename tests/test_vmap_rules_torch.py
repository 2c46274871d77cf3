"""The batching rules of advanced indexing, the linalg primitives, searchsorted, histc,
nonzero_static and the keyed samplers, against torch.func.vmap: values, per-sample gradients,
and no primitive falling back to one run per index (its warning is an error here).

Where torch's vmap runs an op one index at a time (histc), or the placement of the index
dims is the question, the reference is autojit's op on one example at a time (itself tested
against torch elsewhere)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit
from autojit import func as F
from autojit.ops import batching
from autojit.ops.indexing import index_put, index_tensor
from autojit.tensor import once

torch = pytest.importorskip("torch")
TF = torch.func

RNG = np.random.default_rng(3)
# torch's vmap runs some of these ops one index at a time, and says so.
pytestmark = [pytest.mark.filterwarnings("ignore:There is a performance drop"),
              pytest.mark.filterwarnings("ignore:torch.searchsorted")]


@pytest.fixture(autouse=True)
def no_fallback(monkeypatch):
    """Every fallback warns again (the warning is given once per op in a process), as an
    error."""
    monkeypatch.setattr(once, "given", set())
    with warnings.catch_warnings():
        warnings.filterwarnings("error", message="vmap: there is no batching rule")
        yield


def _numpy(value):
    if isinstance(value, (tuple, list)):
        return [_numpy(item) for item in value]
    if isinstance(value, torch.Tensor):
        return value.detach().numpy()
    if isinstance(value, autojit.Tensor):
        return np.asarray(value.detach())
    return value


def _assert_close(actual, expected, atol=1e-10):
    actual, expected = _numpy(actual), _numpy(expected)
    if isinstance(expected, list):
        assert len(actual) == len(expected)
        for a, e in zip(actual, expected):
            _assert_close(a, e, atol)
        return
    assert actual.shape == expected.shape and actual.dtype == expected.dtype
    np.testing.assert_allclose(actual, expected, rtol=1e-8, atol=atol)


def _vmap_both(function_of, arrays, in_dims=0, atol=1e-10, **extra):
    """vmap(function_of(lib)) on the arrays as autojit and torch tensors; an array whose
    in_dim is None passes its first example, unbatched."""
    if isinstance(in_dims, tuple):
        arrays = [a if dim is not None else a[0] for a, dim in zip(arrays, in_dims)]
    ours = F.vmap(function_of(autojit), in_dims, **extra)(*[autojit.tensor(a) for a in arrays])
    theirs = TF.vmap(function_of(torch), in_dims, **extra)(*[torch.tensor(a) for a in arrays])
    _assert_close(ours, theirs, atol)
    return ours


# ---- index and index_put ----------------------------------------------------------------------

X = RNG.standard_normal((3, 4, 5, 6))
ROWS = RNG.integers(0, 4, (3, 2, 3))
COLUMNS = RNG.integers(0, 6, (3, 2, 3))

# Keys whose index dims sit first, in place (adjacent, after dim 0) and first again
# (not adjacent), with the data and the indices each batched or not.
KEYS = {
    "first": lambda x, i, j: x[i],
    "in place": lambda x, i, j: x[:, i % 5, j],
    "apart": lambda x, i, j: x[i, :, j],
}


@pytest.mark.parametrize("in_dims", [(0, 0, 0), (0, None, None), (None, 0, 0), (0, 0, None)])
@pytest.mark.parametrize("key", KEYS)
def test_advanced_indexing(key, in_dims):
    _vmap_both(lambda lib: KEYS[key], (X, ROWS, COLUMNS), in_dims)


def test_advanced_indexing_in_nested_vmaps():
    """The data batched at the outer level, the index at the inner one, or both at both."""
    def function_of(lib):
        vmap = TF.vmap if lib is torch else F.vmap

        def run(x, rows):
            inner = vmap(lambda a, j: a[j % 3, :, j], in_dims=(None, 0))
            both = vmap(vmap(lambda a, j: a[j, j % 2]))
            return vmap(inner, in_dims=(0, None))(x, rows), both(x[:, :2], rows[:2, :, 0])
        return run

    ours = function_of(autojit)(autojit.tensor(X[:2]), autojit.tensor(ROWS))
    theirs = function_of(torch)(torch.tensor(X[:2]), torch.tensor(ROWS))
    _assert_close(list(ours), list(theirs))


def test_compiled_vmap_of_indexing():
    def write(x, rows):
        y = x.clone()
        y[rows, 1] = 2.0
        return y[:, rows, 1:3], autojit.histc(x, bins=3)

    mapped = F.vmap(write)
    args = (autojit.tensor(X), autojit.tensor(ROWS % 4))
    for compiled, eager in zip(autojit.compile(mapped)(*args), mapped(*args)):
        _assert_close(compiled, eager)


@pytest.mark.parametrize("in_dims", [(0, 0, 0), (0, None, None), (None, 0, 0)])
def test_advanced_indexing_per_sample_gradients(in_dims):
    weights = RNG.standard_normal((2, 3, 5))

    def function_of(lib):
        w = lib.tensor(weights)

        def loss(x, i, j):
            return (x[i, :, j] * w).sum() ** 2
        return lambda x, i, j: lib.func.grad(loss)(x, i, j) if lib is torch else \
            F.grad(loss)(x, i, j)

    _vmap_both(function_of, (X, ROWS, COLUMNS), in_dims, atol=1e-9)


def test_index_put_through_setitem_and_index_put():
    values = RNG.standard_normal((3, 2, 3))

    def function_of(lib):
        def write(x, i, v):
            y = x.clone()
            y[i, 1] = v
            return y.index_put((i % 2,), v[0, 0], accumulate=True)
        return write

    _vmap_both(function_of, (X[:, :, :, 0], ROWS, values), (0, 0, 0))
    _vmap_both(function_of, (X[:, :, :, 0], ROWS, values), (0, None, 0))
    _vmap_both(function_of, (X[:, :, :, 0], ROWS, values), (0, 0, None))


@pytest.mark.parametrize("dims", [(0,), (1, 2), (0, 2)])
@pytest.mark.parametrize("accumulate", [False, True])
def test_index_put_primitive_places_values(dims, accumulate):
    """The primitive's values laid out as one example's indexed result, with every
    combination of batched data, values and indices, against one example at a time."""
    x = RNG.standard_normal((3, 4, 5, 6))
    indices = np.stack([RNG.integers(0, x.shape[1 + d], (3, 2)) for d in dims], 1)
    target = index_tensor(autojit.tensor(x[0]), autojit.tensor(indices[0]), dims).shape
    values = RNG.standard_normal((3, *target))
    for in_dims in [(0, 0, 0), (0, None, None), (None, 0, None), (None, None, 0), (0, None, 0)]:
        args = [autojit.tensor(a if dim == 0 else a[0])
                for a, dim in zip((x, values, indices), in_dims)]
        out = F.vmap(lambda a, v, i: index_put(a, v, i, dims, accumulate), in_dims)(*args)
        expected = [index_put(*[arg[b] if dim == 0 else arg for arg, dim in zip(args, in_dims)],
                              dims, accumulate) for b in range(3)]
        _assert_close(out, autojit.stack(expected))


# ---- linalg -----------------------------------------------------------------------------------

def _spd(count, n):
    a = RNG.standard_normal((count, n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


LINALG = {
    "inv": lambda L: L.linalg.inv,
    "det": lambda L: L.linalg.det,
    "slogdet": lambda L: lambda a: tuple(L.linalg.slogdet(a)),
    "cholesky": lambda L: lambda a: L.linalg.cholesky(a, upper=True),
    "svdvals": lambda L: L.linalg.svdvals,
    "eigvalsh": lambda L: lambda a: L.linalg.eigvalsh(a, UPLO="U"),
    "pinv": lambda L: lambda a: L.linalg.pinv(a, hermitian=True),
    # Products of the factors: free of the factors' signs.
    "qr": lambda L: lambda a: (lambda q, r: (q @ r, r.abs()))(*L.linalg.qr(a)),
    "svd": lambda L: lambda a: (lambda u, s, vh: (u * s) @ vh)(*L.linalg.svd(a, False)),
    "eigh": lambda L: lambda a: (lambda w, v: (v * w) @ v.mT)(*L.linalg.eigh(a)),
}


@pytest.mark.parametrize("name", LINALG)
def test_matrix_routines(name):
    _vmap_both(LINALG[name], (_spd(3, 3),), atol=1e-9)


@pytest.mark.parametrize("name", ["inv", "slogdet", "eigh"])
def test_matrix_routines_per_sample_gradients(name):
    def function_of(lib):
        func = lib.func if lib is torch else F

        def loss(a):
            out = LINALG[name](lib)(a)
            return sum((part ** 2).sum() for part in (out if isinstance(out, tuple) else (out,)))
        return func.grad(loss)

    _vmap_both(function_of, (_spd(2, 3),), atol=1e-8)


def _vmap_against_torch_loop(function_of, arrays, in_dims, atol=1e-9):
    """vmap(function_of(autojit)) against torch's function run on one example at a time."""
    arrays = [a if dim is not None else a[0] for a, dim in zip(arrays, in_dims)]
    ours = F.vmap(function_of(autojit), in_dims)(*[autojit.tensor(a) for a in arrays])
    theirs = torch.stack([function_of(torch)(*[torch.tensor(a[b] if dim is not None else a)
                                               for a, dim in zip(arrays, in_dims)])
                          for b in range(3)])
    _assert_close(ours, theirs, atol)


@pytest.mark.parametrize("in_dims", [(0, 0), (None, 0), (0, None)])
@pytest.mark.parametrize("right", ["vector", "matrix", "batched matrix"])
def test_solve(right, in_dims):
    # torch's own vmap fails on one A for a batch of batched right-hand sides: the reference
    # is torch one example at a time.
    shapes = {"vector": (3, 3), "matrix": (3, 3, 2), "batched matrix": (3, 2, 3, 2)}
    a = _spd(3, 3)
    b = RNG.standard_normal(shapes[right])
    _vmap_against_torch_loop(lambda L: L.linalg.solve, (a, b), in_dims)
    # left=False solves X A = B: B's rows against A.
    _vmap_against_torch_loop(lambda L: lambda a, b: L.linalg.solve(a, b.mT, left=False),
                             (a, b if right != "vector" else b[..., None]), in_dims)


@pytest.mark.parametrize("in_dims", [(0, 0), (None, 0), (0, None)])
@pytest.mark.parametrize("upper", [False, True])
@pytest.mark.parametrize("left", [False, True])
def test_solve_triangular(left, upper, in_dims):
    a = _spd(3, 3)
    b = RNG.standard_normal((3, 2, 3, 3))

    def function_of(L):
        return lambda a, b: L.linalg.solve_triangular(a, b, upper=upper, left=left,
                                                      unitriangular=not upper)

    _vmap_both(function_of, (a, b), in_dims, atol=1e-9)


def test_solve_per_sample_gradients():
    def function_of(lib):
        func = lib.func if lib is torch else F
        return func.grad(lambda a, b: (lib.linalg.solve(a, b) ** 2).sum(), argnums=(0, 1))

    _vmap_both(function_of, (_spd(3, 3), RNG.standard_normal((3, 3))), (0, None), atol=1e-9)


# ---- searching, counting, nonzero_static ------------------------------------------------------

@pytest.mark.parametrize("in_dims", [(0, 0), (None, 0), (0, None)])
@pytest.mark.parametrize("rows", [False, True])
def test_searchsorted(rows, in_dims):
    sorted_sequence = np.sort(RNG.standard_normal((3, 2, 5) if rows else (3, 5)), -1)
    values = RNG.standard_normal((3, 2, 4))
    _vmap_both(lambda L: lambda s, v: L.searchsorted(s, v, right=True),
               (sorted_sequence, values), in_dims)
    _vmap_both(lambda L: lambda v, s: L.bucketize(v, s[0] if rows else s),
               (values, sorted_sequence), in_dims[::-1])


def test_histc_one_histogram_per_example():
    x = RNG.standard_normal((3, 2, 4))
    x[1, 0, 0] = 9.0  # one example's own range is wider
    for bins, low, high in [(4, 0.0, 0.0), (3, -1.0, 1.0)]:
        got = F.vmap(lambda e, bins=bins, low=low, high=high: autojit.histc(
            e, bins=bins, min=low, max=high))(autojit.tensor(x))
        expected = np.stack([torch.histc(torch.tensor(e), bins=bins, min=low, max=high).numpy()
                             for e in x])
        _assert_close(got, expected)


def test_histc_error_of_an_example():
    x = np.ones((2, 3))
    x[1, 2] = np.inf
    with pytest.raises(RuntimeError) as ours:
        F.vmap(lambda e: autojit.histc(e, bins=2))(autojit.tensor(x))
    with pytest.raises(RuntimeError) as theirs:
        TF.vmap(lambda e: torch.histc(e, bins=2))(torch.tensor(x))
    assert str(ours.value) == str(theirs.value).split("\n")[0]


@pytest.mark.parametrize("shape", [(3, 4), (3, 2, 3)])
def test_nonzero_static(shape):
    x = RNG.integers(0, 2, shape).astype(np.float64)
    _vmap_both(lambda L: lambda e: L.nonzero_static(e, size=3, fill_value=-7), (x,))


def test_masked_scatter_with_batched_masks():
    x, source = RNG.standard_normal((3, 2, 3)), RNG.standard_normal((3, 6))
    mask = RNG.integers(0, 2, (3, 2, 3)).astype(bool)
    _vmap_both(lambda L: lambda x, m, s: x.masked_scatter(m, s), (x, mask, source))


# ---- random samplers --------------------------------------------------------------------------

SAMPLERS = {"poisson": lambda L: lambda r: L.poisson(r),
            "multinomial": lambda L: lambda p: L.multinomial(p, 3, replacement=True)}


@pytest.mark.parametrize("name", SAMPLERS)
def test_sampler_randomness(name):
    rates = np.abs(RNG.standard_normal((4, 2, 5))) * 3
    for lib, func in ((autojit, F), (torch, TF)):
        sample = SAMPLERS[name](lib)
        data = lib.tensor(rates)
        different = func.vmap(sample, randomness="different")(data)
        def first(_, sample=sample, data=data):
            return sample(data[0])

        unbatched = func.vmap(first, randomness="different")(data)
        same = func.vmap(first, randomness="same")(data)
        shape = (4, 2, 3) if name == "multinomial" else (4, 2, 5)
        assert tuple(different.shape) == shape and tuple(unbatched.shape) == shape
        # One draw per example (they differ), or one for all (they are equal).
        assert not bool((unbatched[0] == unbatched[1:]).all())
        assert bool((same[0] == same[1:]).all())
        with pytest.raises(RuntimeError) as error:
            func.vmap(sample, randomness="same")(data)
        assert "same randomness with a batched tensor input" in str(error.value)


def test_a_primitive_without_a_rule_runs_once_per_index_with_a_warning(monkeypatch):
    """vmap's fallback: a primitive with no batching rule (cumsum's rule taken away here) runs
    once per index of the batch and the results are stacked, with a warning naming the op
    once; the values and the gradients through it are torch's vmap's."""
    from autojit.ops import scans

    monkeypatch.setattr(scans.CUMSUM, "batch", None)
    assert batching.rule_of(scans.CUMSUM) is None
    monkeypatch.setattr(once, "given", set())
    data = np.random.default_rng(4).standard_normal((3, 5))

    def function_of(lib):
        return lambda row: (lib.cumsum(row, 0) * row).sin()

    expected = torch.func.vmap(function_of(torch))(torch.tensor(data))
    x = autojit.tensor(data, requires_grad=True)
    with pytest.warns(UserWarning, match="vmap: there is no batching rule for cumsum, so it "
                                         "runs once per index") as caught:
        actual = autojit.func.vmap(function_of(autojit))(x)
        autojit.func.vmap(function_of(autojit))(x)  # warned once per op
    assert sum("no batching rule" in str(w.message) for w in caught) == 1
    _assert_close(actual, expected)
    actual.sum().backward()
    x_torch = torch.tensor(data, requires_grad=True)
    torch.func.vmap(function_of(torch))(x_torch).sum().backward()
    _assert_close(x.grad, x_torch.grad)
