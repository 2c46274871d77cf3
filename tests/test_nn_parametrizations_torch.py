"""parametrizations.orthogonal against torch (nn/utils/parametrizations.py,
nn/utils/orthogonal_maps.py): the three maps, with and without the dynamic trivialization, on
square, tall, wide and batched weights. torch's random draws are not autojit's, so torch's state
(`original` and the `base` buffer) is loaded into autojit before the values, gradients and
second derivatives are compared; then the initialization, assignment, errors and a compiled
training step."""

from __future__ import annotations

import numpy as np
import pytest

import autojit
from autojit import nn

torch = pytest.importorskip("torch")
orthogonal = nn.utils.parametrizations.orthogonal


def _pair(shape, **kwargs):
    """An orthogonal-parametrized weight of `shape` in torch and in autojit, torch's state in
    both, `original` then moved off its initial value so that every map is exercised."""
    torch.manual_seed(0)
    theirs = torch.nn.Linear(1, 1).double()
    theirs.weight = torch.nn.Parameter(torch.randn(*shape, dtype=torch.float64))
    torch.nn.utils.parametrizations.orthogonal(theirs, **kwargs)
    mine = nn.Linear(1, 1).double()
    mine.weight = nn.Parameter(autojit.zeros(*shape, dtype=autojit.float64))
    orthogonal(mine, **kwargs)
    state = theirs.state_dict()
    assert list(mine.state_dict()) == list(state)
    assert repr(mine) == repr(theirs)
    mine.load_state_dict({key: autojit.tensor(value.numpy()) for key, value in state.items()})
    # The diagonal is left at -1: the Householder map takes its integer part as column signs.
    step = 0.3 * np.random.default_rng(1).standard_normal(shape)
    step[..., np.arange(min(shape[-2:])), np.arange(min(shape[-2:]))] = 0.0
    with torch.no_grad():
        theirs.parametrizations.weight.original.add_(torch.tensor(step))
    with autojit.no_grad():
        mine.parametrizations.weight.original.add_(autojit.tensor(step))
    return mine, theirs


@pytest.mark.parametrize(("shape", "kwargs"), [
    ((3, 3), {}),
    ((5, 3), {}),
    ((2, 4), {}),
    ((4, 4), {"orthogonal_map": "cayley"}),
    ((4, 2), {"orthogonal_map": "matrix_exp"}),
    ((2, 3, 3), {"orthogonal_map": "householder"}),
    ((4, 3), {"orthogonal_map": "householder", "use_trivialization": False}),
    ((3, 3), {"orthogonal_map": "cayley", "use_trivialization": False}),
])
def test_orthogonal_matches_torch(shape, kwargs):
    mine, theirs = _pair(shape, **kwargs)
    weight_mine, weight_theirs = mine.weight, theirs.weight
    np.testing.assert_allclose(weight_mine.detach().numpy(), weight_theirs.detach().numpy(),
                               atol=1e-12)
    tall = weight_mine if shape[-2] >= shape[-1] else weight_mine.mT
    gram = (tall.mT @ tall).detach().numpy()
    np.testing.assert_allclose(gram, np.broadcast_to(np.eye(gram.shape[-1]), gram.shape),
                               atol=1e-12)
    cotangent = np.random.default_rng(2).standard_normal(shape)
    (grad_theirs,) = torch.autograd.grad((weight_theirs * torch.tensor(cotangent)).sum(),
                                         theirs.parametrizations.weight.original)
    (grad_mine,) = autojit.autograd.grad((weight_mine * autojit.tensor(cotangent)).sum(),
                                         mine.parametrizations.weight.original)
    np.testing.assert_allclose(grad_mine.numpy(), grad_theirs.numpy(), atol=1e-11)


@pytest.mark.parametrize("shape", [(3, 3), (4, 2)])
def test_orthogonal_second_derivatives_match_torch(shape):
    mine, theirs = _pair(shape)
    results = []
    for library, module in ((autojit, mine), (torch, theirs)):
        original = module.parametrizations.weight.original
        loss = (module.weight ** 3).sum()
        (grad,) = library.autograd.grad(loss, original, create_graph=True)
        (second,) = library.autograd.grad((grad * grad).sum(), original)
        results.append(second.detach().numpy())
    np.testing.assert_allclose(results[0], results[1], atol=1e-10)


def test_orthogonal_initial_value_and_assignment_are_torchs():
    # An orthogonal weight is kept; any other becomes the Q of its QR (R's diagonal positive),
    # the same in torch whatever the draws; assigning a value resets `base` to it.
    q = np.linalg.qr(np.random.default_rng(3).standard_normal((4, 4)))[0]
    for value in (q, np.random.default_rng(4).standard_normal((4, 4))):
        results = []
        for library in (autojit, torch):
            layer = library.nn.Linear(4, 4).double()
            with library.no_grad():
                layer.weight.copy_(library.tensor(value))
            library.nn.utils.parametrizations.orthogonal(layer)
            results.append(layer.weight.detach().numpy())
        np.testing.assert_allclose(results[0], results[1], atol=1e-12)
    layer = orthogonal(nn.Linear(4, 4).double())
    layer.weight = autojit.tensor(q)
    np.testing.assert_allclose(layer.weight.detach().numpy(), q, atol=1e-12)
    np.testing.assert_array_equal(layer.parametrizations.weight.original.detach().numpy(),
                                  -np.eye(4))


def test_orthogonal_errors_are_torchs():
    for top in (autojit, torch):
        library = top.nn
        with pytest.raises(ValueError, match="Expected a matrix or batch of matrices. Got a "
                           "tensor of 1 dimensions."):
            library.utils.parametrizations.orthogonal(library.BatchNorm1d(3))
        with pytest.raises(ValueError, match='orthogonal_map has to be one of "matrix_exp", '
                           '"cayley", "householder". Got: qr'):
            library.utils.parametrizations.orthogonal(library.Linear(2, 2), orthogonal_map="qr")
        with pytest.raises(ValueError, match="has no parameter or buffer with name 'kernel'"):
            library.utils.parametrizations.orthogonal(library.Linear(2, 2), "kernel")
        layer = library.utils.parametrizations.orthogonal(library.Linear(2, 3))
        with pytest.raises(ValueError, match="Expected a matrix or batch of matrices of shape"):
            layer.weight = top.ones(2, 2)


def test_compiled_training_step_keeps_the_weight_orthogonal():
    # The Householder map (a tall weight's default) has no data-dependent step: it compiles.
    autojit.manual_seed(0)
    layer = orthogonal(nn.Linear(3, 5))
    optimizer = autojit.optim.SGD(layer.parameters(), lr=0.1)
    x = autojit.tensor(np.random.default_rng(5).standard_normal((4, 3)).astype("float32"))

    @autojit.compile(fullgraph=True)
    def step(x):
        optimizer.zero_grad()
        loss = layer(x).square().sum()
        loss.backward()
        optimizer.step()
        return loss

    eager = layer(x).square().sum().item()
    first = step(x).item()
    assert abs(first - eager) < 1e-4 * abs(eager)
    second = step(x).item()
    assert second < first
    q = layer.weight.detach().numpy()
    np.testing.assert_allclose(q.T @ q, np.eye(3), atol=1e-5)


def _registration_outcomes(top) -> list:
    """What registering parametrizations that change the shape or dtype, or return no tensor,
    gives, first and second on a weight; and how often the module hooks saw them run."""
    class Row(top.nn.Module):
        def forward(self, weight):
            return weight[0]

    class Single(top.nn.Module):
        def forward(self, weight):
            return weight.float()

    class Doubled(top.nn.Module):
        def forward(self, weight):
            return weight * 2

    class Number(top.nn.Module):
        def forward(self, weight):
            return 3

    calls = []
    handle = top.nn.modules.module.register_module_forward_hook(
        lambda module, args, output: calls.append(type(module).__name__))
    seen = []
    try:
        for parametrization in (Row, Single, Number, Doubled):
            for second in (False, True):
                layer = top.nn.Linear(3, 2, dtype=top.float64)
                try:
                    if second:
                        top.nn.utils.parametrize.register_parametrization(layer, "weight",
                                                                          Doubled())
                    top.nn.utils.parametrize.register_parametrization(layer, "weight",
                                                                      parametrization())
                    seen.append("registered")
                except ValueError as error:
                    seen.append(str(error).replace("torch.", "autojit."))
    finally:
        handle.remove()
    return seen + calls


def test_registration_checks_the_parametrized_dtype_and_shape_as_torch():
    assert _registration_outcomes(autojit) == _registration_outcomes(torch)
