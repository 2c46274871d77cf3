"""Normalization layers and loss modules (nn/normalization.py, nn/loss/__init__.py,
nn/functional/norm.py).

The op table checks the functional forms; here: BatchNorm's running statistics against their
closed form over a few training steps (eagerly and compiled) and eval mode using them,
LayerNorm and GroupNorm modules, every loss module's reductions against NumPy, and reprs.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit
from autojit import CompileWarning, nn


def array(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# ---- batch norm ----------------------------------------------------------------------------------


def closed_form_statistics(batches, momentum):
    """running_mean and running_var after the batches, from zeros and ones."""
    mean, variance = np.zeros(batches[0].shape[1]), np.ones(batches[0].shape[1])
    for index, batch in enumerate(batches, 1):
        axes = (0, *range(2, batch.ndim))
        factor = 1 / index if momentum is None else momentum
        mean = (1 - factor) * mean + factor * batch.mean(axis=axes)
        variance = (1 - factor) * variance + factor * batch.var(axis=axes, ddof=1)
    return mean, variance


@pytest.mark.parametrize("momentum", [0.1, 0.5, None])
@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5)])
def test_batch_norm_running_statistics_and_eval(momentum, shape):
    layer = nn.BatchNorm1d(3, momentum=momentum).double()
    with autojit.no_grad():
        layer.weight.copy_(autojit.tensor([1.0, 2.0, 0.5], dtype=autojit.float64))
        layer.bias.copy_(autojit.tensor([0.0, -1.0, 3.0], dtype=autojit.float64))
    batches = [array(shape, seed) * (seed + 1) + seed for seed in range(3)]
    for batch in batches:
        out = layer(autojit.tensor(batch))
        axes = (0, *range(2, batch.ndim))
        channel = (1, 3) + (1,) * (batch.ndim - 2)
        normalized = (batch - batch.mean(axis=axes, keepdims=True)) / np.sqrt(
            batch.var(axis=axes, keepdims=True) + 1e-5)
        expected = normalized * np.array([1.0, 2.0, 0.5]).reshape(channel) + np.array(
            [0.0, -1.0, 3.0]).reshape(channel)
        np.testing.assert_allclose(np.asarray(out.detach()), expected, rtol=1e-9, atol=1e-9)
    mean, variance = closed_form_statistics(batches, momentum)
    np.testing.assert_allclose(np.asarray(layer.running_mean), mean, rtol=1e-12)
    np.testing.assert_allclose(np.asarray(layer.running_var), variance, rtol=1e-12)
    assert layer.num_batches_tracked.item() == 3
    assert layer.num_batches_tracked.dtype is autojit.int64

    layer.eval()
    test = array(shape, 7)
    out = layer(autojit.tensor(test))
    channel = (1, 3) + (1,) * (test.ndim - 2)
    expected = (test - mean.reshape(channel)) / np.sqrt(variance.reshape(channel) + 1e-5)
    expected = expected * np.array([1.0, 2.0, 0.5]).reshape(channel) + np.array(
        [0.0, -1.0, 3.0]).reshape(channel)
    np.testing.assert_allclose(np.asarray(out.detach()), expected, rtol=1e-9, atol=1e-9)
    assert layer.num_batches_tracked.item() == 3  # eval does not count batches


def test_batch_norm_without_running_statistics_uses_the_batch_in_eval():
    layer = nn.BatchNorm1d(2, affine=False, track_running_stats=False).eval()
    assert layer.running_mean is None and list(layer.state_dict()) == []
    assert list(layer.parameters()) == []
    batch = array((5, 2), 3)
    expected = (batch - batch.mean(0)) / np.sqrt(batch.var(0) + 1e-5)
    np.testing.assert_allclose(np.asarray(layer(autojit.tensor(batch))), expected, rtol=1e-6)


def test_batch_norm_state_dict_and_reset():
    layer = nn.BatchNorm1d(3)
    assert list(layer.state_dict()) == ["weight", "bias", "running_mean", "running_var",
                                        "num_batches_tracked"]
    layer(autojit.tensor(array((4, 3)), dtype=autojit.float32))
    assert layer.running_mean.abs().sum().item() > 0
    layer.reset_running_stats()
    assert layer.running_mean.tolist() == [0.0] * 3 and layer.running_var.tolist() == [1.0] * 3
    assert layer.num_batches_tracked.item() == 0


def test_batch_norm_gradients_flow_to_input_and_affine():
    layer = nn.BatchNorm1d(3).double()
    x = autojit.tensor(array((4, 3)), requires_grad=True)
    (layer(x) * autojit.tensor(array((4, 3), 1))).sum().backward()
    assert x.grad is not None and layer.weight.grad is not None and layer.bias.grad is not None
    # The batch statistics are differentiated through: each channel's input gradient sums to 0.
    np.testing.assert_allclose(np.asarray(x.grad).sum(0), 0, atol=1e-12)


def test_batch_norm_errors():
    with pytest.raises(ValueError, match=r"expected 2D or 3D input \(got 4D input\)"):
        nn.BatchNorm1d(3)(autojit.zeros(2, 3, 4, 5))
    with pytest.raises(ValueError, match=r"expected 4D input \(got 2D input\)"):
        nn.BatchNorm2d(3)(autojit.zeros(2, 3))
    with pytest.raises(ValueError, match="Expected more than 1 value per channel when training"):
        nn.BatchNorm1d(3)(autojit.zeros(1, 3))
    with pytest.raises(RuntimeError, match="running_mean should contain 4 elements not 3"):
        autojit.nn.functional.batch_norm(autojit.zeros(2, 4), autojit.zeros(3), autojit.ones(3),
                                         training=True)
    with pytest.raises(RuntimeError, match="running_mean must be defined in evaluation mode"):
        autojit.nn.functional.batch_norm(autojit.zeros(2, 4), None, None)


def test_batch_norm_running_statistics_update_in_a_compiled_step():
    eager_layer, compiled_layer = nn.BatchNorm2d(2), nn.BatchNorm2d(2)
    batches = [autojit.tensor(array((3, 2, 2, 2), seed), dtype=autojit.float32)
               for seed in range(3)]

    def step(layer, x):
        return (layer(x) ** 2).sum()

    compiled = autojit.compile(lambda x: step(compiled_layer, x))
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        for batch in batches:
            np.testing.assert_allclose(compiled(batch).item(), step(eager_layer, batch).item(),
                                       rtol=1e-5)
    assert compiled.eager_reason is None
    for name in ("running_mean", "running_var"):
        np.testing.assert_allclose(np.asarray(getattr(compiled_layer, name)),
                                   np.asarray(getattr(eager_layer, name)), rtol=1e-5)
    assert compiled_layer.num_batches_tracked.item() == 3


# ---- layer norm and group norm -------------------------------------------------------------------


def test_layer_norm_module():
    layer = nn.LayerNorm((2, 3)).double()
    assert tuple(layer.weight.shape) == (2, 3) and layer.weight.tolist() == [[1.0] * 3] * 2
    assert layer.bias.tolist() == [[0.0] * 3] * 2
    x = array((4, 2, 3))
    out = np.asarray(layer(autojit.tensor(x)).detach())
    expected = (x - x.mean(axis=(1, 2), keepdims=True)) / np.sqrt(
        x.var(axis=(1, 2), keepdims=True) + 1e-5)
    np.testing.assert_allclose(out, expected, rtol=1e-9, atol=1e-12)
    plain = nn.LayerNorm(3, elementwise_affine=False)
    assert plain.weight is None and list(plain.parameters()) == []
    with pytest.raises(RuntimeError, match=r"Given normalized_shape=\[4\], expected input with "
                       r"shape \[\*, 4\], but got input of size\[2, 3\]"):
        nn.LayerNorm(4)(autojit.zeros(2, 3))


def test_group_norm_module():
    layer = nn.GroupNorm(2, 4)
    x = array((3, 4, 5))
    out = np.asarray(layer(autojit.tensor(x, dtype=autojit.float32)).detach())
    grouped = x.reshape(3, 2, 10)
    expected = ((grouped - grouped.mean(-1, keepdims=True))
                / np.sqrt(grouped.var(-1, keepdims=True) + 1e-5)).reshape(x.shape)
    np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
    with pytest.raises(ValueError, match="num_channels must be divisible by num_groups"):
        nn.GroupNorm(3, 4)


@pytest.mark.parametrize("module, expected", [
    (lambda: nn.LayerNorm(5), "LayerNorm((5,), eps=1e-05, elementwise_affine=True, bias=True)"),
    (lambda: nn.LayerNorm([3, 4], elementwise_affine=False),
     "LayerNorm((3, 4), eps=1e-05, elementwise_affine=False, bias=False)"),
    (lambda: nn.BatchNorm1d(3), "BatchNorm1d(3, eps=1e-05, momentum=0.1, affine=True, "
     "bias=True, track_running_stats=True)"),
    (lambda: nn.BatchNorm1d(3, momentum=None, affine=False, track_running_stats=False),
     "BatchNorm1d(3, eps=1e-05, momentum=None, affine=False, bias=False, "
     "track_running_stats=False)"),
    (lambda: nn.BatchNorm2d(4), "BatchNorm2d(4, eps=1e-05, momentum=0.1, affine=True, "
     "bias=True, track_running_stats=True)"),
    (lambda: nn.GroupNorm(2, 4), "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)"),
    (lambda: nn.CrossEntropyLoss(label_smoothing=0.1), "CrossEntropyLoss()"),
    (lambda: nn.NLLLoss(), "NLLLoss()"),
    (lambda: nn.MSELoss(), "MSELoss()"),
    (lambda: nn.L1Loss(), "L1Loss()"),
    (lambda: nn.SmoothL1Loss(beta=0.5), "SmoothL1Loss()"),
    (lambda: nn.HuberLoss(), "HuberLoss()"),
    (lambda: nn.BCELoss(), "BCELoss()"),
    (lambda: nn.BCEWithLogitsLoss(pos_weight=autojit.ones(2)), "BCEWithLogitsLoss()"),
])
def test_repr(module, expected):
    assert repr(module()) == expected


# ---- losses --------------------------------------------------------------------------------------


def reduce(loss, reduction):
    return {"none": loss, "mean": loss.mean(), "sum": loss.sum()}[reduction]


def log_softmax(x):
    shifted = x - x.max(1, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(1, keepdims=True))


LOGITS = array((6, 4), 10)
TARGET = np.array([0, 3, 1, -100, 2, 3])
CLASS_WEIGHT = np.array([0.5, 1.0, 2.0, 1.5])
PREDICTION, OBSERVED = array((3, 5), 11), array((3, 5), 12)
PROBABILITY = 1 / (1 + np.exp(-PREDICTION))
LABELS = (array((3, 5), 13) > 0).astype(np.float64)


def nll_expected(log_probabilities, reduction, weight=None, smoothing=0.0):
    kept = TARGET != -100
    safe = np.where(kept, TARGET, 0)
    weight = np.ones(4) if weight is None else weight
    target_weight = np.where(kept, weight[safe], 0.0)
    picked = -log_probabilities[np.arange(6), safe] * target_weight
    uniform = np.where(kept, -(log_probabilities * weight).sum(1), 0.0)
    if reduction == "mean":
        picked, uniform = picked.sum() / target_weight.sum(), uniform.sum() / target_weight.sum()
    else:
        picked, uniform = reduce(picked, reduction), reduce(uniform, reduction)
    return (1 - smoothing) * picked + smoothing / 4 * uniform


def bce_logits_expected(reduction, pos_weight):
    log_sigmoid = np.minimum(PREDICTION, 0) - np.log1p(np.exp(-np.abs(PREDICTION)))
    log_weight = 1 + (pos_weight - 1) * LABELS
    return reduce((1 - LABELS) * PREDICTION - log_weight * log_sigmoid, reduction)


LOSS_CASES = {
    "cross_entropy": (lambda r: nn.CrossEntropyLoss(reduction=r), (LOGITS, TARGET),
                      lambda r: nll_expected(log_softmax(LOGITS), r)),
    "cross_entropy_weighted_smoothed": (
        lambda r: nn.CrossEntropyLoss(weight=autojit.tensor(CLASS_WEIGHT), reduction=r,
                                      label_smoothing=0.2),
        (LOGITS, TARGET), lambda r: nll_expected(log_softmax(LOGITS), r, CLASS_WEIGHT, 0.2)),
    "nll": (lambda r: nn.NLLLoss(weight=autojit.tensor(CLASS_WEIGHT), reduction=r),
            (log_softmax(LOGITS), TARGET),
            lambda r: nll_expected(log_softmax(LOGITS), r, CLASS_WEIGHT)),
    "mse": (lambda r: nn.MSELoss(reduction=r), (PREDICTION, OBSERVED),
            lambda r: reduce((PREDICTION - OBSERVED) ** 2, r)),
    "l1": (lambda r: nn.L1Loss(reduction=r), (PREDICTION, OBSERVED),
           lambda r: reduce(np.abs(PREDICTION - OBSERVED), r)),
    "smooth_l1": (lambda r: nn.SmoothL1Loss(reduction=r, beta=0.5), (PREDICTION, OBSERVED),
                  lambda r: reduce(np.where(np.abs(PREDICTION - OBSERVED) < 0.5,
                                            (PREDICTION - OBSERVED) ** 2,
                                            np.abs(PREDICTION - OBSERVED) - 0.25), r)),
    "huber": (lambda r: nn.HuberLoss(reduction=r, delta=0.5), (PREDICTION, OBSERVED),
              lambda r: reduce(np.where(np.abs(PREDICTION - OBSERVED) < 0.5,
                                        0.5 * (PREDICTION - OBSERVED) ** 2,
                                        0.5 * (np.abs(PREDICTION - OBSERVED) - 0.25)), r)),
    "bce": (lambda r: nn.BCELoss(reduction=r), (PROBABILITY, LABELS),
            lambda r: reduce(-(LABELS * np.log(PROBABILITY)
                               + (1 - LABELS) * np.log(1 - PROBABILITY)), r)),
    "bce_with_logits": (
        lambda r: nn.BCEWithLogitsLoss(reduction=r, pos_weight=autojit.tensor(np.full(5, 3.0))),
        (PREDICTION, LABELS), lambda r: bce_logits_expected(r, 3.0)),
}


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("case", sorted(LOSS_CASES))
def test_loss_module_reductions(case, reduction):
    make, inputs, expected = LOSS_CASES[case]
    loss = make(reduction)
    assert loss.reduction == reduction
    got = loss(*(autojit.tensor(value) for value in inputs))
    np.testing.assert_allclose(np.asarray(got), expected(reduction), rtol=1e-10, atol=1e-12)


def test_loss_modules_hold_weights_as_buffers():
    loss = nn.CrossEntropyLoss(weight=autojit.ones(3))
    assert list(loss.state_dict()) == ["weight"] and list(loss.parameters()) == []
    assert list(nn.CrossEntropyLoss().state_dict()) == []
    assert list(nn.BCEWithLogitsLoss(pos_weight=autojit.ones(2)).state_dict()) == ["pos_weight"]


def test_loss_legacy_arguments_map_to_a_reduction():
    with pytest.warns(UserWarning, match="please use reduction='sum' instead"):
        assert nn.MSELoss(size_average=False).reduction == "sum"
    with pytest.warns(UserWarning, match="reduction='none'"):
        assert nn.L1Loss(reduce=False).reduction == "none"


def test_loss_backward_reaches_the_input():
    logits = autojit.tensor(LOGITS, requires_grad=True)
    nn.CrossEntropyLoss(ignore_index=-100)(logits, autojit.tensor(TARGET)).backward()
    gradient = np.asarray(logits.grad)
    np.testing.assert_allclose(gradient[3], 0)  # the ignored row gets no gradient
    probabilities = np.exp(log_softmax(LOGITS))
    one_hot = np.eye(4)[np.where(TARGET < 0, 0, TARGET)]
    expected = (probabilities - one_hot) / 5
    expected[3] = 0
    np.testing.assert_allclose(gradient, expected, rtol=1e-10, atol=1e-12)


def test_smooth_l1_and_huber_errors():
    x = autojit.zeros(3)
    with pytest.raises(RuntimeError, match="does not support negative values for beta"):
        nn.SmoothL1Loss(beta=-1.0)(x, x)
    with pytest.raises(ValueError, match="average is not a valid value for reduction"):
        nn.SmoothL1Loss(reduction="average")(x, x)
    with pytest.warns(UserWarning, match="Using a target size"):
        nn.HuberLoss()(autojit.zeros(3, 1), autojit.zeros(3))
