"""nn.AdaptiveLogSoftmaxWithLoss (nn/adaptive.py) against torch with torch's weights loaded:
output, loss and the gradients of the input and every parameter for targets in every cluster,
in the shortlist only and unbatched, in float64 and float32; log_prob and predict; repr,
state_dict keys, initialization and errors as torch's; a compiled training step equals eager.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")

TARGETS = {
    "every_cluster": np.array([0, 9, 4, 2, 7, 5, 8, 1]),
    "shortlist_only": np.array([0, 2, 1, 2, 0, 1, 1, 2]),
    "one_cluster": np.array([7, 8, 9, 7, 7, 8, 9, 9]),
}


def _pair(dtype: str, **options):
    torch.manual_seed(0)
    options = {"div_value": 2.0, **options}
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 7], **options).to(
        getattr(torch, dtype))
    mine = autojit.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 7], **options).to(
        getattr(autojit, dtype))
    mine.load_state_dict({key: autojit.tensor(value.detach().numpy())
                          for key, value in theirs.state_dict().items()})
    return mine, theirs


def _tolerance(dtype: str) -> dict:
    return {"rtol": 1e-12, "atol": 1e-12} if dtype == "float64" else {"rtol": 1e-5, "atol": 1e-6}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("head_bias", [False, True])
@pytest.mark.parametrize("targets", list(TARGETS))
def test_forward_and_gradients_match_torch(targets, head_bias, dtype):
    mine, theirs = _pair(dtype, head_bias=head_bias)
    x = np.random.default_rng(1).standard_normal((8, 8)).astype(dtype)
    x_mine = autojit.tensor(x, requires_grad=True)
    x_theirs = torch.tensor(x, requires_grad=True)
    out_mine = mine(x_mine, autojit.tensor(TARGETS[targets]))
    out_theirs = theirs(x_theirs, torch.tensor(TARGETS[targets]))
    assert type(out_mine).__name__ == "_ASMoutput" and out_mine._fields == ("output", "loss")
    tolerance = _tolerance(dtype)
    for got, expected in zip(out_mine, out_theirs):
        assert got.shape == tuple(expected.shape)
        np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), **tolerance)
    (out_mine.loss + out_mine.output.sum() * 0.5).backward()
    (out_theirs.loss + out_theirs.output.sum() * 0.5).backward()
    np.testing.assert_allclose(x_mine.grad.numpy(), x_theirs.grad.numpy(), **tolerance)
    for (name, p_mine), (_, p_theirs) in zip(mine.named_parameters(), theirs.named_parameters()):
        expected = np.zeros(p_theirs.shape) if p_theirs.grad is None else p_theirs.grad.numpy()
        got = np.zeros(p_mine.shape) if p_mine.grad is None else p_mine.grad.numpy()
        np.testing.assert_allclose(got, expected, err_msg=name, **tolerance)


def test_an_unbatched_target():
    mine, theirs = _pair("float64")
    x = np.random.default_rng(2).standard_normal(8)
    for target in (1, 8):
        got = mine(autojit.tensor(x), autojit.tensor(target))
        expected = theirs(torch.tensor(x), torch.tensor(target))
        assert got.output.shape == () and got.loss.shape == ()
        np.testing.assert_allclose([got.output.item(), got.loss.item()],
                                   [expected.output.item(), expected.loss.item()], rtol=1e-12)


def test_log_prob_and_predict_match_torch():
    mine, theirs = _pair("float64", head_bias=True)
    with torch.no_grad():  # a head that sends some rows to the clusters
        theirs.head.bias.copy_(torch.tensor([0.0, 0.0, 0.0, 1.5, -1.0]))
    mine.head.bias.data = autojit.tensor(theirs.head.bias.detach().numpy())
    x = np.random.default_rng(3).standard_normal((40, 8)) * 2
    got = mine.log_prob(autojit.tensor(x))
    expected = theirs.log_prob(torch.tensor(x))
    np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(), rtol=1e-12)
    predicted = theirs.predict(torch.tensor(x)).numpy()
    assert 0 < (predicted >= 3).sum() < len(predicted)
    np.testing.assert_array_equal(mine.predict(autojit.tensor(x)).numpy(), predicted)


def test_repr_state_dict_and_init_as_torch():
    def describe(lib):
        lib.manual_seed(0)
        layer = lib.nn.AdaptiveLogSoftmaxWithLoss(16, 20, (4, 9, 15), div_value=2.0)
        shapes = {key: tuple(value.shape) for key, value in layer.state_dict().items()}
        # Linear's initialization: uniform within 1 / sqrt(fan_in)
        bounded = [float(p.detach().abs().max()) <= p.shape[1] ** -0.5
                   for p in layer.parameters()]
        return (repr(layer), shapes, layer.cutoffs, layer.shortlist_size, layer.n_clusters,
                layer.head_size, bounded)

    assert describe(autojit) == describe(torch)


def _error(call, lib):
    try:
        call(lib)
    except Exception as error:  # noqa: BLE001 - the type is what the test compares
        return type(error), str(error)
    return None


def _forward(lib, x_shape, target):
    layer = lib.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2, 4], div_value=2.0)
    return layer(lib.zeros(*x_shape), lib.tensor(target))


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 6, []),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [3, 2]),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [0, 2]),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2, 6]),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2, 2]),
    lambda lib: lib.nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2.5]),
    lambda lib: _forward(lib, (3, 4), [0, 1]),
    lambda lib: _forward(lib, (2, 2, 4), [0, 1]),
    lambda lib: _forward(lib, (2, 4), 1),
    lambda lib: _forward(lib, (2, 4), [[0, 1]]),
    lambda lib: _forward(lib, (2, 4), [0, 6]),
    lambda lib: _forward(lib, (2, 4), [-1, 3]),
])
def test_errors_match_torch(call):
    mine, theirs = _error(call, autojit), _error(call, torch)
    assert theirs is not None and mine == theirs


def test_a_compiled_training_step_equals_eager():
    def run(compiled: bool):
        autojit.manual_seed(0)
        layer = autojit.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 7], div_value=2.0)
        optimizer = autojit.optim.SGD(layer.parameters(), lr=0.1, momentum=0.9)
        x = autojit.tensor(np.random.default_rng(4).standard_normal((8, 8)),
                           dtype=autojit.float32)
        target = autojit.tensor(TARGETS["every_cluster"])

        def step(x, target):
            optimizer.zero_grad()
            loss = layer(x, target).loss
            loss.backward()
            optimizer.step()
            return loss.detach()

        function = autojit.compile(step) if compiled else step
        with warnings.catch_warnings():
            warnings.simplefilter("error", autojit.CompileWarning)
            losses = [function(x, target).item() for _ in range(4)]
        return losses, [p.detach().numpy() for p in layer.parameters()]

    compiled, eager = run(True), run(False)
    np.testing.assert_allclose(compiled[0], eager[0], rtol=1e-5)
    for got, expected in zip(compiled[1], eager[1]):
        np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
