"""nll_loss and nll_loss_backward, the negative log-likelihood of class targets as primitives
(ops/nn/nll_loss.py), through nn.functional's nll_loss and cross_entropy.

Eager values are the composite's bits; values and gradients to second order, the errors for a
target out of range and a weight requiring grad, forward-mode tangents, vmap and the grad_fn
name are torch's; compiled calls equal eager ones and their graphs hold the composite's
one-hot comparison, not the ops.
"""

from __future__ import annotations

import itertools
import re

import numpy as np
import pytest
import torch

import autojit
from autojit.ops import elementwise as ew
from autojit.ops.nn.nll_loss import NLL_LOSS_BACKWARD
from autojit.ops.reduction import sum_
from autojit.ops.registry import bind

generator = np.random.default_rng(53)


def _case(shape, ignored: bool):
    classes = shape[0] if len(shape) == 1 else shape[1]
    target_shape = () if len(shape) == 1 else (shape[0], *shape[2:])
    target = generator.integers(0, classes, target_shape)
    if ignored and target.ndim:
        target.reshape(-1)[::3] = 1  # ignore_index=1 below: a valid class, ignored
    return generator.standard_normal(shape) * 2, target, generator.random(classes) + 0.5


def _composite(logp, target, weight, ignore_index, reduction):
    """nll_loss's composite as it was written before the primitives: a one-hot mask."""
    class_dim = 0 if logp.ndim == 1 else 1
    classes = logp.shape[class_dim]
    at_class = target.reshape(target.shape[:class_dim] + (1,) + target.shape[class_dim:]) \
        if logp.ndim > 1 else target.reshape(1)
    shape = [1] * logp.ndim
    shape[class_dim] = classes
    is_target = autojit.arange(classes).reshape(shape) == at_class
    kept = target != ignore_index
    picked = sum_(ew.where(is_target, logp, 0), class_dim).reshape(target.shape)
    if weight is None:
        target_weight = kept.to(logp.dtype)
    else:
        picked_weight = sum_(ew.where(is_target, weight.reshape(shape), 0), class_dim)
        target_weight = ew.where(kept, picked_weight.reshape(target.shape), 0)
    loss = -(picked * target_weight)
    if reduction == "mean":
        return sum_(loss) / sum_(target_weight)
    return sum_(loss) if reduction == "sum" else loss


CASES = list(itertools.product([(7, 5), (4, 3, 2, 3), (5,)], ["mean", "sum", "none"],
                               [False, True]))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape, reduction, weighted", CASES)
def test_eager_values_are_the_composites_bits(dtype, shape, reduction, weighted):
    data, target, weight = _case(shape, ignored=True)
    logp = autojit.tensor(data.astype(dtype))
    w = autojit.tensor(weight.astype(dtype)) if weighted else None
    t = autojit.tensor(target)
    got = autojit.nn.functional.nll_loss(logp, t, w, ignore_index=1, reduction=reduction)
    expected = _composite(logp, t, w, 1, reduction)
    np.testing.assert_array_equal(got.numpy(), expected.numpy())


def _derivatives(library, function, data, target, weight, kwargs, upstream_seed):
    x = library.tensor(data, requires_grad=True)
    w = None if weight is None else library.tensor(weight)
    y = getattr(library.nn.functional, function)(x, library.tensor(target), w, **kwargs)
    upstream = library.tensor(np.random.default_rng(upstream_seed).standard_normal(
        tuple(y.shape)), requires_grad=True)
    (first,) = library.autograd.grad((y * upstream).sum(), x, create_graph=True)
    # nll_loss is linear in x: its second derivative in x is zero, the one in the upstream
    # gradient is nll_loss_backward's VJP
    second = library.autograd.grad((first ** 3).sum(), (x, upstream), allow_unused=True,
                                   materialize_grads=True)
    return [y.detach().numpy(), first.detach().numpy(), *(g.numpy() for g in second),
            y.grad_fn.name()]


@pytest.mark.parametrize("function", ["nll_loss", "cross_entropy"])
@pytest.mark.parametrize("shape, reduction, weighted", CASES)
def test_values_and_gradients_to_second_order_are_torchs(function, shape, reduction, weighted):
    data, target, weight = _case(shape, ignored=True)
    kwargs = {"ignore_index": 1, "reduction": reduction}
    if function == "cross_entropy" and weighted:
        kwargs["label_smoothing"] = 0.2
    mine, theirs = (_derivatives(library, function, data, target,
                                 weight if weighted else None, kwargs, 7)
                    for library in (autojit, torch))
    for got, expected in zip(mine[:4], theirs[:4]):
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-12)
    if function == "nll_loss" and len(shape) == 2:
        assert mine[4] == theirs[4] == "NllLossBackward0"


def test_gradcheck_and_gradgradcheck_of_both_primitives():
    data, target, weight = _case((4, 3, 2), ignored=True)
    t, w = autojit.tensor(target), autojit.tensor(weight)
    x = autojit.tensor(data, requires_grad=True)
    F = autojit.nn.functional
    for reduction in ("mean", "sum", "none"):
        attrs = {"ignore_index": 1, "reduction": reduction, "shape": (4, 3, 2)}

        def loss(v, reduction=reduction):
            return F.nll_loss(v, t, w, ignore_index=1, reduction=reduction)

        def backward(u, attrs=attrs):
            return bind(NLL_LOSS_BACKWARD, (u, t, w), attrs)

        g = autojit.tensor(generator.standard_normal((4, 2) if reduction == "none" else ()),
                           requires_grad=True)
        assert autojit.autograd.gradcheck(loss, (x,))
        assert autojit.autograd.gradcheck(backward, (g,), check_forward_ad=True)
        assert autojit.autograd.gradgradcheck(backward, (g,))


def test_errors_are_torchs():
    for library in (autojit, torch):
        x = library.zeros(4, 3, requires_grad=True)
        with pytest.raises(IndexError, match="Target 5 is out of bounds."):
            library.nn.functional.cross_entropy(x, library.tensor([0, 1, 5, 1]))
        with pytest.raises(IndexError, match="Target -1 is out of bounds."):
            library.nn.functional.nll_loss(x, library.tensor([0, -1, 2, 1]))
        with pytest.raises(RuntimeError, match="not differentiable with respect to argument "
                                               "'weight'"):
            library.nn.functional.nll_loss(x, library.tensor([0, 1, 2, 1]),
                                           weight=library.ones(3, requires_grad=True))
        with library.no_grad():  # no graph: a weight requiring grad is only read
            library.nn.functional.nll_loss(x, library.tensor([0, 1, 2, 1]),
                                           weight=library.ones(3, requires_grad=True))


def _transforms(library, data, tangent, target):
    F = library.nn.functional
    x, t, classes = library.tensor(data), library.tensor(tangent), library.tensor(target)

    def loss(v):
        return F.cross_entropy(v, classes, reduction="none")

    _, pushed = library.func.jvp(loss, (x,), (t,))
    per_sample = library.func.vmap(library.func.grad(
        lambda row, label: F.cross_entropy(row, label)))(x, classes)
    return [r.numpy() for r in (pushed, per_sample)]


def test_forward_mode_and_per_sample_gradients_are_torchs():
    data, target, _ = _case((6, 4), ignored=False)
    tangent = generator.standard_normal((6, 4))
    for mine, theirs in zip(_transforms(autojit, data, tangent, target),
                            _transforms(torch, data, tangent, target)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def test_compiled_equals_eager_and_runs_the_composite():
    data, target, weight = _case((8, 5), ignored=True)
    t, w = autojit.tensor(target), autojit.tensor(weight.astype("float32"))

    def step(x):
        loss = autojit.nn.functional.cross_entropy(x * 2, t, w, ignore_index=1)
        (first,) = autojit.autograd.grad(loss, x, create_graph=True)
        (second,) = autojit.autograd.grad((first * first).sum(), x)
        return loss, first, second

    compiled = autojit.compile(step)
    for _ in range(2):
        x = generator.standard_normal((8, 5)).astype("float32")
        expected = step(autojit.tensor(x, requires_grad=True))
        got = compiled(autojit.tensor(x, requires_grad=True))
        for mine, theirs in zip(got, expected):
            np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(),
                                       rtol=2e-5, atol=1e-6)
    printed = compiled.ir()
    assert re.search(r"= check_index ", printed) and re.search(r"= eq ", printed)
    assert not re.search(r"= nll_loss(_backward)? ", printed)
