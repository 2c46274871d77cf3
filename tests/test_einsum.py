"""einsum against torch.einsum: every equation form, dtypes, errors, gradients, compiled.

The equations cover implicit and explicit outputs, batch dims, traces and diagonals (also of
three dims and inside an ellipsis), "..." with broadcasting, size-1 dims broadcast against
others, repeated operands, three operands and the sublist form. The compiled checks show that a
batched product is the very graph matmul gives (so it runs the same plan).
"""

from __future__ import annotations

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")

EQUATIONS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ij,jk->", [(2, 3), (3, 4)]),
    ("ii", [(3, 3)]), ("ii->i", [(3, 3)]), ("i,i->i", [(1,), (3,)]), ("i,i", [(3,), (3,)]),
    ("...ij,...jk", [(5, 1, 2, 3), (4, 3, 4)]), ("ij...,jk...->ik...", [(2, 3, 5), (3, 4, 5)]),
    ("ba,ab", [(2, 3), (3, 2)]), ("Ba,aB", [(2, 3), (3, 2)]), ("bA,ab", [(2, 3), (3, 2)]),
    ("i j -> j i", [(2, 3)]), ("ij,ij->ij", [(2, 1), (1, 3)]), ("...", [(2, 3)]), ("->", [()]),
    ("bij,bjk->bik", [(1, 2, 3), (3, 3, 4)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 4)]),
    ("iij->j", [(2, 2, 4)]), ("iji->j", [(2, 3, 2)]), ("jii->j", [(4, 2, 2)]),
    ("ijij->ij", [(2, 3, 2, 3)]), ("iijj->", [(2, 2, 3, 3)]), ("iii->i", [(2, 2, 2)]),
    ("i...->...", [(2, 3)]), ("ij->i...", [(2, 3)]), ("bi,bi->b", [(1, 3), (4, 3)]),
    ("i,i->", [(1,), (4,)]), ("ii->i", [(0, 0)]), ("i,j->ij", [(2,), (3,)]),
    ("ij,kl->ijkl", [(2, 3), (4, 5)]), ("abc,cd,de->abe", [(2, 3, 4), (4, 5), (5, 2)]),
    ("ijk,ikl,ilm->ijm", [(2, 3, 4), (2, 4, 5), (2, 5, 3)]), ("i,i,i->", [(3,), (3,), (3,)]),
    ("ij,ij,ij->i", [(2, 3), (2, 3), (2, 3)]), ("ij,jk,kl", [(2, 3), (3, 4), (4, 2)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]), ("...ii->...i", [(2, 3, 3)]),
    ("i...i", [(3, 2, 3)]), ("ab,ba->a", [(2, 3), (3, 2)]),
    ("xy,yz,zx->", [(2, 3), (3, 4), (4, 2)]),
    ("a,b,c->abc", [(2,), (3,), (4,)]), ("ij,j->i", [(3, 4), (4,)]), ("ij,i->", [(3, 4), (3,)]),
    ("ab...,b...->a...", [(2, 3, 4, 5), (3, 1, 5)]), ("ij,kj->ik", [(2, 1), (3, 4)]),
    ("ij,ij->", [(0, 3), (0, 3)]),
]


def _both(arrays):
    return ([torch.from_numpy(a) for a in arrays], [autojit.tensor(a) for a in arrays])


@pytest.mark.parametrize("equation, shapes", EQUATIONS,
                         ids=[f"{e}-{i}" for i, (e, _) in enumerate(EQUATIONS)])
def test_equation_like_torch(equation, shapes):
    rng = np.random.default_rng(len(equation))
    expected_inputs, inputs = _both([rng.standard_normal(s) for s in shapes])
    expected = torch.einsum(equation, *expected_inputs)
    actual = autojit.einsum(equation, *inputs)
    assert tuple(actual.shape) == tuple(expected.shape)
    np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-12, atol=1e-12)


def test_operands_as_a_list_and_the_same_operand_twice():
    x = np.arange(6.0).reshape(2, 3)
    expected = torch.einsum("ij,kj->ik", [torch.from_numpy(x)] * 2)
    same = autojit.tensor(x)
    np.testing.assert_allclose(autojit.einsum("ij,kj->ik", [same, same]).numpy(),
                               expected.numpy())


@pytest.mark.parametrize("arguments", [
    lambda a, b: (a, [0, 1], b, [1, 2], [0, 2]),
    lambda a, b: (a, [0, 1], b, [1, 2]),
    lambda a, b: (a, [0, 27], [27]),
    lambda a, b: (a, [Ellipsis, 1], b, [1, Ellipsis]),
    lambda a, b: (a, [60]),
], ids=["explicit", "implicit", "upper-and-lower", "ellipsis", "out-of-range"])
def test_sublist_form_like_torch(arguments):
    rng = np.random.default_rng(3)
    expected_inputs, inputs = _both([rng.standard_normal((3, 3)), rng.standard_normal((3, 3))])
    try:
        expected = torch.einsum(*arguments(*expected_inputs))
    except Exception as error:  # noqa: BLE001 - autojit must raise the same
        with pytest.raises(type(error), match=str(error).replace("[", r"\[").replace(
                ")", r"\)").replace("(", r"\(")):
            autojit.einsum(*arguments(*inputs))
        return
    np.testing.assert_allclose(autojit.einsum(*arguments(*inputs)).numpy(), expected.numpy())


@pytest.mark.parametrize("equation, dtypes", [
    ("ij->", ("int32",)), ("ij->ji", ("bool",)), ("i,j->ij", ("bool", "bool")),
    ("i,i->", ("bool", "bool")), ("i,i->i", ("int32", "int32")), ("i,i->", ("int32", "int32")),
    ("i,j->ij", ("float32", "float64")), ("ij,jk", ("float32", "float64")),
    ("i,i", ("int64", "float32")), ("ij,jk", ("int64", "int64")),
], ids=lambda value: str(value))
def test_dtypes_like_torch(equation, dtypes):
    shapes = {"ij->": [(2, 3)], "ij->ji": [(2, 3)], "ij,jk": [(2, 3), (3, 4)]}.get(
        equation, [(3,), (3,)])
    arrays = [np.ones(shape, dtype) for shape, dtype in zip(shapes, dtypes, strict=True)]
    expected_inputs, inputs = _both(arrays)
    try:
        expected = torch.einsum(equation, *expected_inputs)
    except Exception as error:  # noqa: BLE001 - autojit must raise the same
        with pytest.raises(type(error)) as raised:
            autojit.einsum(equation, *inputs)
        assert str(raised.value) == str(error)
        return
    actual = autojit.einsum(equation, *inputs)
    assert actual.dtype.name == str(expected.dtype).split(".")[-1]
    np.testing.assert_array_equal(actual.numpy(), expected.numpy())


ERRORS = [
    ("ii->i", [(3, 4)]), ("i,i->i", [(2,), (3,)]), ("ij,jk", [(2, 3)]), ("ij", [(2, 3), (3, 4)]),
    ("ijk", [(2, 3)]), ("i", [(2, 3)]), ("ij->ii", [(2, 3)]), ("ij->k", [(2, 3)]),
    ("ij->j->i", [(2, 3)]), ("i.j", [(2, 3)]), ("i1", [(2, 3)]), ("...i...", [(2, 3)]),
    ("ii->", [(1, 3)]), ("i->", [()]), ("ij,jk->ik", [(2, 3), (2, 4)]),
    ("bij,bjk->bik", [(2, 2, 3), (3, 3, 4)]), ("iij->j", [(2, 3, 4)]), ("...ij", [(2,)]),
    ("...ijk", [(2, 3)]), ("ij->i..", [(2, 3)]), ("ij->i......", [(2, 3)]),
    ("...ij,...jk", [(2, 2, 3), (3, 3, 4)]),
]


@pytest.mark.parametrize("equation, shapes", ERRORS,
                         ids=[f"{e}-{i}" for i, (e, _) in enumerate(ERRORS)])
def test_errors_like_torch(equation, shapes):
    expected_inputs, inputs = _both([np.ones(s) for s in shapes])
    with pytest.raises(Exception) as expected:
        torch.einsum(equation, *expected_inputs)
    with pytest.raises(type(expected.value)) as raised:
        autojit.einsum(equation, *inputs)
    assert str(raised.value) == str(expected.value)


def test_argument_errors_like_torch():
    for arguments in [("ij",), ("i,i", autojit.ones(2), 3)]:
        torch_arguments = tuple(torch.ones(2) if isinstance(a, autojit.Tensor) else a
                                for a in arguments)
        with pytest.raises(Exception) as expected:
            torch.einsum(*torch_arguments)
        with pytest.raises(type(expected.value)) as raised:
            autojit.einsum(*arguments)
        assert str(raised.value) == str(expected.value)


@pytest.mark.parametrize("equation, shapes", [
    ("bij,bjk->bik", [(2, 3, 4), (2, 4, 2)]), ("ii->", [(3, 3)]), ("ii->i", [(3, 3)]),
    ("...ij,...jk", [(2, 1, 2, 3), (3, 3, 2)]), ("i,j,ij->", [(2,), (3,), (2, 3)]),
    ("bi,bi->b", [(1, 3), (4, 3)]), ("ij,ij->i", [(2, 3), (2, 3)]),
], ids=lambda value: str(value))
def test_gradients_like_torch(equation, shapes):
    """First and second order (the gradient's directional derivative) against torch's."""
    rng = np.random.default_rng(5)
    arrays = [rng.standard_normal(s) for s in shapes]
    results = []
    for t in (torch, autojit):
        wrap = torch.tensor if t is torch else autojit.tensor
        inputs = [wrap(a).requires_grad_(True) for a in arrays]
        out = t.einsum(equation, *inputs)
        weights = wrap(np.linspace(0.5, 1.5, out.numel()).reshape(tuple(out.shape)))
        grads = t.autograd.grad((out * out * weights).sum(), inputs, create_graph=True)
        seconds = t.autograd.grad(sum((g * g).sum() for g in grads), inputs)
        results.append([g.detach().numpy() for g in grads + seconds])
    for actual, expected in zip(results[1], results[0], strict=True):
        np.testing.assert_allclose(actual, expected, rtol=1e-10, atol=1e-12)


def test_compiled_batched_product_is_the_graph_of_matmul():
    x, y = autojit.randn(4, 5, 6), autojit.randn(4, 6, 3)
    einsum_graph = autojit.make_graph(lambda a, b: autojit.einsum("bij,bjk->bik", a, b), x, y)
    matmul_graph = autojit.make_graph(lambda a, b: autojit.matmul(a, b), x, y)
    assert str(einsum_graph) == str(matmul_graph)
    compiled = autojit.compile(lambda a, b: autojit.einsum("bij,bjk->bik", a, b))
    np.testing.assert_allclose(compiled(x, y).numpy(), (x @ y).numpy(), rtol=1e-5, atol=1e-6)
    assert compiled.fusion_groups().strip().splitlines() == ["0: matmul %0 @ %1"]


def test_compiled_einsum_with_gradients_matches_eager():
    weight = autojit.tensor(np.linspace(-1, 1, 12).reshape(3, 4), requires_grad=True)

    def step(x, y):
        bilinear = autojit.einsum("bi,ij,bj->b", x, weight, y)
        loss = (bilinear ** 2).sum() + autojit.einsum("ii->", weight[:, :3])
        (grad,) = autojit.autograd.grad(loss, weight)
        return loss, grad

    rng = np.random.default_rng(4)
    x, y = (autojit.tensor(rng.standard_normal(shape)) for shape in ((5, 3), (5, 4)))
    expected = step(x, y)
    actual = autojit.compile(step, fullgraph=True)(x, y)
    for got, want in zip(actual, expected, strict=True):
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy(), rtol=1e-10)
