"""Forward mode through the structural primitives' own JVP rules: layout, diagonals,
reductions, indexing and scatters, scans, and linear algebra (ops/layout/__init__.py to
ops/linalg/decompositions.py).

Every differentiable primitive of those modules has an explicit `jvp` in its registry entry. The
checks here run with the transposed-VJP fallback forbidden for them, so they read the rules
themselves: tangents against torch.autograd.forward_ad on the cases the op table does not reach
(zeros in products, ties in extremes, include_self=False, singular determinants, wide and tall
decompositions), against central differences where torch has no forward rule, and compiled,
nested and forward-over-reverse uses. tests/test_op_table_jvp.py checks every op-table row.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.autograd.forward_ad as torch_forward_ad

import autojit
import autojit.autograd.forward_ad as forward_ad
from autojit.autograd import gradgradcheck
from autojit.ops import REGISTRY

MODULES = {f"autojit.ops.{name}" for name in (
    "layout", "layout.primitives", "layout.diagonal", "reduction", "indexing", "indexing.scatter",
    "scans", "sorting",
    "searching", "indexing.masked", "counting", "random", "indexing.checks", "linalg",
    "linalg.linalg_products", "linalg.solvers", "linalg.determinants", "linalg.decompositions")}
# torch's forward AD scripts its decompositions on first use, which torch itself deprecates.
pytestmark = pytest.mark.filterwarnings("ignore:`torch.jit.script` is deprecated")

RULED = ("reshape", "expand", "permute", "slice", "embed_slice", "flip", "cat", "diagonal",
         "embed_diagonal", "sum", "prod", "amax", "amin", "index", "index_put", "gather",
         "scatter_add", "scatter_reduce", "cumsum", "cumprod", "logcumsumexp", "poisson",
         "matmul", "linalg_pinv", "linalg_inv", "linalg_solve", "linalg_solve_triangular",
         "linalg_cholesky", "linalg_det", "linalg_slogdet", "linalg_qr", "linalg_svd",
         "linalg_svdvals", "linalg_eigh", "linalg_eigvalsh")


def test_every_structural_primitive_has_its_own_jvp_rule():
    defined_here = {name for name, op in REGISTRY.items()
                    if op.vjp is not None and op.vjp.__module__ in MODULES}
    assert set(RULED) <= defined_here
    assert sorted(name for name in defined_here if REGISTRY[name].jvp is None) == []


@pytest.fixture
def rules_only(monkeypatch):
    """Forward mode with the transposed VJP forbidden for the primitives of RULED."""
    transposed = forward_ad.transposed_jvp

    def refuse(op, *args):
        assert op.name not in RULED, f"{op.name} fell back to its transposed VJP"
        return transposed(op, *args)

    monkeypatch.setattr(forward_ad, "transposed_jvp", refuse)


def _autojit_tangents(function, arrays, tangents):
    with forward_ad.dual_level():
        duals = [forward_ad.make_dual(autojit.tensor(x), autojit.tensor(t))
                 for x, t in zip(arrays, tangents)]
        outputs = function(*duals)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        pushed = [forward_ad.unpack_dual(output).tangent for output in outputs]
    return [np.zeros(output.shape) if t is None else np.asarray(t)
            for output, t in zip(outputs, pushed)]


def _torch_tangents(function, arrays, tangents):
    with torch_forward_ad.dual_level():
        duals = [torch_forward_ad.make_dual(torch.tensor(x), torch.tensor(t))
                 for x, t in zip(arrays, tangents)]
        outputs = function(*duals)
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        return [torch_forward_ad.unpack_dual(output).tangent.numpy() for output in outputs]


def _central_difference(function, arrays, tangents, eps=1e-6):
    with autojit.no_grad():
        plus = function(*[autojit.tensor(x + eps * t) for x, t in zip(arrays, tangents)])
        minus = function(*[autojit.tensor(x - eps * t) for x, t in zip(arrays, tangents)])
    return [(np.asarray(plus) - np.asarray(minus)) / (2 * eps)]


def _with_zeros():
    x = np.random.default_rng(3).standard_normal((3, 4))
    x[0, 1] = x[1, 0] = x[1, 2] = 0.0  # one zero in a row, two in another
    return x


_TIES = np.array([[1.0, 3.0, 3.0, 2.0], [0.0, 0.0, 0.0, 0.0], [5.0, 1.0, 5.0, 5.0]])
_INDEX = [[0, 1, 0, 2], [2, 2, 1, 0]]
_SINGULAR = np.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])


def _regular(shape, seed=4):
    return np.random.default_rng(seed).standard_normal(shape) + 3 * np.eye(shape[-1])


def _matrix(shape, seed=5):
    return np.random.default_rng(seed).standard_normal(shape)


def _signless_svd(lib):
    def svd(a):
        u, s, vh = lib.linalg.svd(a, full_matrices=False)
        return u * u.sum(-2, keepdim=True), s, vh * vh.sum(-1, keepdim=True)

    return svd


def _signless_eigh(lib):
    def eigh(a):
        values, vectors = lib.linalg.eigh(a + a.mT)
        return values, vectors * vectors.sum(-2, keepdim=True)

    return eigh


def _scatter_reduce(lib, reduce, include_self):
    def scatter_reduce(x, src):
        return x.scatter_reduce(0, lib.tensor(_INDEX), src, reduce, include_self=include_self)

    return scatter_reduce


# (name, the function on the library given, its inputs); torch is the reference.
TORCH_CASES = [
    ("prod", lambda lib: lambda x: x.prod(0, keepdim=True), [_matrix((3, 4))]),
    ("prod with zeros", lambda lib: lambda x: x.prod(1), [_with_zeros()]),
    ("amax ties", lambda lib: lambda x: x.amax(1), [_TIES]),
    ("amin ties over all", lambda lib: lambda x: x.amin((0, 1), keepdim=True), [_TIES]),
    ("cumprod with zeros", lambda lib: lambda x: x.cumprod(1), [_with_zeros()]),
    ("logcumsumexp", lambda lib: lambda x: lib.logcumsumexp(x, 1), [_matrix((3, 4))]),
    ("cat with a constant", lambda lib: lambda x: lib.cat(
        [x, lib.ones(2, 4, dtype=lib.float64), x.flip(0)], 0), [_matrix((3, 4))]),
    ("index_put accumulate", lambda lib: lambda x, v: x.index_put(
        (lib.tensor([0, 2, 0]),), v, accumulate=True), [_matrix((3, 4)), _matrix((3, 4), 6)]),
    ("scatter_reduce mean", lambda lib: _scatter_reduce(lib, "mean", False),
     [_matrix((3, 4)), _matrix((2, 4), 6)]),
    ("scatter_reduce amax", lambda lib: _scatter_reduce(lib, "amax", True),
     [_matrix((3, 4)), _matrix((2, 4), 6)]),
    ("matmul broadcast", lambda lib: lambda a, b: a @ b, [_matrix((2, 3, 3)), _matrix((3, 2))]),
    ("solve_triangular", lambda lib: lambda a, b: lib.linalg.solve_triangular(
        a, b, upper=False, left=False, unitriangular=True), [_regular((3, 3)), _matrix((2, 3))]),
    ("solve broadcast", lambda lib: lambda a, b: lib.linalg.solve(a, b),
     [_regular((2, 3, 3)), _matrix((3, 2))]),
    ("cholesky", lambda lib: lambda a: lib.linalg.cholesky(a @ a.mT), [_regular((3, 3))]),
    ("slogdet", lambda lib: lambda a: tuple(lib.linalg.slogdet(a)),
     [np.stack([_regular((3, 3)), -_regular((3, 3))])]),
    ("pinv wide", lambda lib: lambda a: lib.linalg.pinv(a), [_matrix((2, 3, 5))]),
    ("qr wide", lambda lib: lambda a: tuple(lib.linalg.qr(a)), [_matrix((2, 3, 5))]),
    ("svd tall", lambda lib: _signless_svd(lib), [_matrix((4, 3))]),
    ("svd wide", lambda lib: _signless_svd(lib), [_matrix((2, 5))]),
    ("eigh", lambda lib: _signless_eigh(lib), [_matrix((2, 3, 3))]),
]


@pytest.mark.parametrize(("name", "make", "arrays"), TORCH_CASES, ids=[c[0] for c in TORCH_CASES])
def test_tangents_match_torch(rules_only, name, make, arrays):
    rng = np.random.default_rng(0)
    tangents = [rng.uniform(-1, 1, x.shape) for x in arrays]
    got = _autojit_tangents(make(autojit), arrays, tangents)
    expected = _torch_tangents(make(torch), arrays, tangents)
    for ours, theirs in zip(got, expected, strict=True):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-10, err_msg=name)


# Where torch has no forward rule (scatter_reduce's prod) or its own goes through an LU that
# fails at a singular matrix, the reference is the central difference.
DIFFERENCE_CASES = [
    ("scatter_reduce prod", _scatter_reduce(autojit, "prod", False),
     [_matrix((3, 4)), _with_zeros()[:2]]),
    ("det singular", lambda a: autojit.linalg.det(a), [np.stack([_SINGULAR, _regular((3, 3))])]),
]


@pytest.mark.parametrize(("name", "function", "arrays"), DIFFERENCE_CASES,
                         ids=[c[0] for c in DIFFERENCE_CASES])
def test_tangents_match_central_differences(rules_only, name, function, arrays):
    rng = np.random.default_rng(1)
    tangents = [rng.uniform(-1, 1, x.shape) for x in arrays]
    (got,) = _autojit_tangents(function, arrays, tangents)
    (expected,) = _central_difference(function, arrays, tangents)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7, err_msg=name)


@pytest.mark.parametrize("function", [
    lambda a: autojit.linalg.cholesky(a),
    lambda a: autojit.linalg.eigh(a)[1],
], ids=["cholesky", "eigh"])
def test_symmetric_input_rules_are_the_transpose_of_their_vjp(rules_only, function):
    """The VJPs of the decompositions of symmetric matrices give symmetric gradients, so their
    JVPs must read the symmetric part of a tangent that is not: <u, J t> = <J^T u, t>."""
    rng = np.random.default_rng(5)
    a = _regular((3, 3))
    a = a @ a.T
    tangent, cotangent = rng.uniform(-1, 1, (3, 3)), rng.uniform(-1, 1, (3, 3))
    (pushed,) = _autojit_tangents(function, [a], [tangent])
    x = autojit.tensor(a, requires_grad=True)
    (pulled,) = autojit.autograd.grad(function(x), x, autojit.tensor(cotangent))
    np.testing.assert_allclose(np.sum(cotangent * pushed), np.sum(np.asarray(pulled) * tangent),
                               rtol=1e-10)


def _structural_chain(a, b, t):
    with forward_ad.dual_level():
        a = forward_ad.make_dual(a, t)
        y = autojit.linalg.solve(a, b)
        z = autojit.cat([y, b], 1).permute(1, 0).flip(0).cumsum(1).amax(0)
        z = z + autojit.linalg.det(a) + y.gather(0, autojit.tensor([[1, 0], [2, 2]])).prod()
        return forward_ad.unpack_dual(z)


def test_compiled_tangent_equals_eager(rules_only):
    rng = np.random.default_rng(2)
    a, b = autojit.tensor(_regular((3, 3))), autojit.tensor(rng.standard_normal((3, 2)))
    t = autojit.tensor(rng.standard_normal((3, 3)))
    eager = _structural_chain(a, b, t)
    compiled = autojit.compile(_structural_chain, fullgraph=True)
    for _ in range(2):
        result = compiled(a, b, t)
        np.testing.assert_allclose(np.asarray(result.primal), np.asarray(eager.primal),
                                   rtol=1e-12)
        np.testing.assert_allclose(np.asarray(result.tangent), np.asarray(eager.tangent),
                                   rtol=1e-10)
    assert compiled.eager_reason is None


@pytest.mark.parametrize("function", [
    lambda a: autojit.linalg.inv(a) @ a.mT,
    lambda a: a.cumprod(1),
    lambda a: autojit.linalg.cholesky(a @ a.mT),
], ids=["inv matmul", "cumprod", "cholesky"])
def test_nested_levels_give_the_second_directional_derivative(rules_only, function):
    rng = np.random.default_rng(3)
    x = _regular((3, 3))
    x[0, 1] = 0.0  # a zero for cumprod's rule
    first, second = rng.uniform(-1, 1, x.shape), rng.uniform(-1, 1, x.shape)
    outer = forward_ad.enter_level()
    inner = forward_ad.enter_level()
    try:
        dual = forward_ad.attach_tangent(autojit.tensor(x), autojit.tensor(first), outer)
        dual = forward_ad.attach_tangent(dual, autojit.tensor(second), inner)
        pushed = forward_ad.tangent_of(function(dual), inner)
        got = np.asarray(forward_ad.tangent_of(pushed, outer))
    finally:
        forward_ad.exit_level(inner)
        forward_ad.exit_level(outer)
    eps = 1e-5
    plus, = _autojit_tangents(function, [x + eps * first], [second])
    minus, = _autojit_tangents(function, [x - eps * first], [second])
    np.testing.assert_allclose(got, (plus - minus) / (2 * eps), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize(("function", "shapes"), [
    (lambda x: x.prod(1), None),
    (lambda a, b: a.scatter_reduce(0, autojit.tensor([[0, 1, 0]]), b, "amax"), [(2, 3), (1, 3)]),
    (lambda a: autojit.linalg.det(a), [(3, 3)]),
    (lambda a: autojit.linalg.qr(a)[1], [(4, 3)]),
], ids=["prod with zeros", "scatter_reduce amax", "det", "qr"])
def test_forward_over_reverse(rules_only, function, shapes):
    rng = np.random.default_rng(4)
    if shapes is None:
        inputs = (autojit.tensor(_with_zeros(), requires_grad=True),)
    else:
        inputs = tuple(autojit.tensor(rng.standard_normal(shape) + (3 * np.eye(3) if shape ==
                                                                    (3, 3) else 0),
                                      requires_grad=True) for shape in shapes)
    assert gradgradcheck(function, inputs, check_fwd_over_rev=True)
