"""batch_norm_statistics, batch_norm, batch_norm_backward and batch_norm_update, the primitives
of batch normalization in training mode (ops/nn/batch_norm.py), through nn.functional.batch_norm
and the BatchNorm layers.

Eager forward values are the composite's bits; values, gradients to second order (the third
passes gradcheck), running statistics, forward-mode tangents, vmap and the grad_fn name are
torch's; compiled calls equal eager ones and their graphs hold the composite's primitives,
with no (2, C) statistics stacked and sliced.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import autojit
from autojit.ops.composite import rsqrt
from autojit.ops.nn.batch_norm import BATCH_NORM_BACKWARD, batch_statistics
from autojit.ops.reduction import sum_
from autojit.ops.registry import bind

generator = np.random.default_rng(41)


def _payload(*shape, dtype="float64", offset=0.0):
    return (generator.standard_normal(shape) * 3 + offset).astype(dtype)


def _composite(x, weight, bias, eps=1e-5):
    """batch_norm's training composite as it was written before the primitives."""
    dims = (0, *range(2, x.ndim))
    count = x.numel() // x.shape[1]
    centered = x - sum_(x, dims, keepdim=True) / count
    result = centered * rsqrt(sum_(centered * centered, dims, keepdim=True) / count + eps)
    shape = (1, x.shape[1]) + (1,) * (x.ndim - 2)
    if weight is not None:
        result = result * weight.reshape(shape)
    return result if bias is None else result + bias.reshape(shape)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("shape", [(64, 128), (8, 4, 5, 6), (5, 3, 7), (16, 8, 6, 7)])
@pytest.mark.parametrize("affine", ["both", "weight", "none"])
def test_eager_forward_is_the_composites_bits(dtype, shape, affine):
    # (16, 8, 6, 7) is large enough for the native loops (codegen/cpu/channels.py)
    x = autojit.tensor(_payload(*shape, dtype=dtype, offset=4.0))
    weight = autojit.tensor(_payload(shape[1], dtype=dtype)) if affine != "none" else None
    bias = autojit.tensor(_payload(shape[1], dtype=dtype)) if affine == "both" else None
    got = autojit.nn.functional.batch_norm(x, None, None, weight, bias, training=True)
    np.testing.assert_array_equal(got.numpy(), _composite(x, weight, bias).numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("affine", ["both", "weight", "bias", "none"])
@pytest.mark.parametrize("threads", [1, 2])
def test_native_loops_give_the_numpy_calls_bits(dtype, affine, threads):
    """ops/nn/batch_norm.py's NATIVE (codegen/cpu/channels.py): the statistics, the normalization
    and its backward through the native loops, split over the cores or not, are the bits of
    the NumPy calls they stand for."""
    from autojit.ops.nn import batch_norm

    shape = (32, 8, 16, 17)  # large enough for the native loops, and split over cores
    x, grad = _payload(*shape, dtype=dtype, offset=2.0), _payload(*shape, dtype=dtype)
    weight = _payload(shape[1], dtype=dtype) if affine in ("both", "weight") else 1.0
    bias = _payload(shape[1], dtype=dtype) if affine in ("both", "bias") else 0.0
    results = {}
    previous_threads, native = autojit.get_num_threads(), batch_norm.NATIVE
    assert native is not None
    try:
        autojit.set_num_threads(threads)
        for hook in (native, None):
            batch_norm.NATIVE = hook
            statistics = batch_norm._statistics_impl(x)
            results[hook is None] = (
                statistics, batch_norm._normalized_impl(x, statistics, weight, bias, 1e-5),
                batch_norm._backward_impl(grad, x, statistics, weight, 1e-5))
    finally:
        batch_norm.NATIVE = native
        autojit.set_num_threads(previous_threads)
    for got, want in zip(results[False], results[True], strict=True):
        np.testing.assert_array_equal(got, want)
    from autojit.codegen.cpu import channels

    assert any(address for (made, _), address in channels._state.items()
               if made == np.dtype(dtype)), "the native loops did not run"


def _second(library, x, weight, bias, upstream, momentum=0.3):
    channels = x.shape[1]
    running = (library.tensor(_RUNNING[0][:channels]), library.tensor(_RUNNING[1][:channels]))
    y = library.nn.functional.batch_norm(x, *running, weight, bias, training=True,
                                         momentum=momentum, eps=1e-3)
    leaves = tuple(t for t in (x, weight, bias) if t is not None)
    first = library.autograd.grad((y * library.tensor(upstream)).sum(), leaves,
                                  create_graph=True)
    second = library.autograd.grad(sum((g * g * g).sum() for g in first),
                                   tuple(t for t in (x, weight) if t is not None),
                                   create_graph=True, allow_unused=True)
    return y, running, first, second


_RUNNING = (_payload(8), np.abs(_payload(8)) + 0.5)


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 2, 3), (3, 2, 5)])
@pytest.mark.parametrize("affine", [False, True])
def test_values_running_statistics_and_derivatives_are_torchs(shape, affine):
    data, upstream = _payload(*shape, offset=2.0), _payload(*shape)
    weight, bias = _payload(shape[1]), _payload(shape[1])
    results = []
    for library in (autojit, torch):
        x = library.tensor(data, requires_grad=True)
        w = library.tensor(weight, requires_grad=True) if affine else None
        b = library.tensor(bias, requires_grad=True) if affine else None
        y, running, first, second = _second(library, x, w, b, upstream)
        results.append([t.detach().numpy() for t in (y, *running, *first, *second)]
                       + [y.grad_fn.name()])
    mine, theirs = results
    assert mine[-1] == theirs[-1] == "NativeBatchNormBackward0"
    for got, expected in zip(mine[:-1], theirs[:-1]):
        np.testing.assert_allclose(got, expected, rtol=1e-9, atol=1e-10)


def test_third_order_passes_gradcheck():
    weight, upstream = _payload(3), _payload(2, 3, 4)
    x = autojit.tensor(_payload(2, 3, 4, offset=1.0), requires_grad=True)
    w = autojit.tensor(weight, requires_grad=True)
    assert autojit.autograd.gradcheck(
        lambda v: _second(autojit, v, w, None, upstream)[3][0], (x,))


def test_gradcheck_and_gradgradcheck_of_the_backward_primitive():
    x = autojit.tensor(_payload(3, 2, 4), requires_grad=True)
    g = autojit.tensor(_payload(3, 2, 4), requires_grad=True)
    w = autojit.tensor(_payload(2), requires_grad=True)

    def backward(grad, value, weight):
        return bind(BATCH_NORM_BACKWARD, (grad, value, batch_statistics(value), weight),
                    {"eps": 1e-5})

    assert autojit.autograd.gradcheck(backward, (g, x, w))
    assert autojit.autograd.gradgradcheck(backward, (g, x, w))
    assert autojit.autograd.gradcheck(backward, (g, x, w), check_forward_ad=True)


@pytest.mark.parametrize("momentum", [0.1, None])
def test_layers_running_statistics_over_steps_are_torchs(momentum):
    data = [_payload(16, 4, 3, 3, dtype="float32", offset=1.0) for _ in range(3)]
    upstream = _payload(16, 4, 3, 3, dtype="float32")
    states = []
    for library in (autojit, torch):
        layer = library.nn.BatchNorm2d(4, momentum=momentum)
        for batch in data:
            (layer(library.tensor(batch)) * library.tensor(upstream)).sum().backward()
        states.append([layer.running_mean.numpy(), layer.running_var.numpy(),
                       layer.weight.grad.numpy(), int(layer.num_batches_tracked)])
    for mine, theirs in zip(*states):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-5)


def test_one_running_statistic_alone_is_refused_as_by_torch():
    for library in (autojit, torch):
        with pytest.raises(ValueError, match="must either both be None or neither be None"):
            library.nn.functional.batch_norm(library.ones(4, 3), library.zeros(3), None,
                                             training=True)


def _transforms(library, data, tangent, upstream):
    F = library.nn.functional
    x, t = library.tensor(data), library.tensor(tangent)
    w = library.tensor(upstream[0, :, 0])

    def norm(v):
        return F.batch_norm(v, None, None, w, None, training=True)

    _, pushed = library.func.jvp(norm, (x,), (t,))
    _, over_reverse = library.func.jvp(
        library.func.grad(lambda v: (norm(v) * library.tensor(upstream)).sum()), (x,), (t,))
    mapped = library.func.vmap(norm)(x.unsqueeze(1).expand(3, 2, 4, 5).contiguous())
    return [r.numpy() for r in (pushed, over_reverse, mapped)]


def test_forward_mode_and_vmap_are_torchs():
    arrays = _payload(3, 4, 5), _payload(3, 4, 5), _payload(3, 4, 5)
    for mine, theirs in zip(_transforms(autojit, *arrays), _transforms(torch, *arrays)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


def test_compiled_equals_eager_and_runs_the_composite():
    def make():
        autojit.manual_seed(0)
        return autojit.nn.Sequential(autojit.nn.Linear(6, 8), autojit.nn.BatchNorm1d(8))

    upstream = autojit.tensor(_payload(10, 8, dtype="float32"))

    def step(model, x):
        y = model(x)
        (first,) = autojit.autograd.grad((y * upstream).sum(), x, create_graph=True)
        (second,) = autojit.autograd.grad((first * first).sum(), x)
        return y, first, second

    eager_model, compiled_model = make(), make()
    compiled = autojit.compile(lambda x: step(compiled_model, x))
    for _ in range(3):
        data = _payload(10, 6, dtype="float32", offset=1.0)
        expected = step(eager_model, autojit.tensor(data, requires_grad=True))
        got = compiled(autojit.tensor(data, requires_grad=True))
        for mine, theirs in zip(got, expected):
            np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(),
                                       rtol=2e-4, atol=2e-4)
    for mine, theirs in zip(compiled_model.buffers(), eager_model.buffers()):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)
    printed = compiled.ir()
    assert re.search(r"= sqrt ", printed)
    assert not re.search(r"= (batch_norm\w*|cat|slice) ", printed)


def test_mismatched_operands_are_refused_with_the_shapes():
    x = autojit.ones(4, 3)
    with pytest.raises(RuntimeError, match=r"batch_norm_backward: the gradient's shape \[4, 2\]"):
        bind(BATCH_NORM_BACKWARD, (autojit.ones(4, 2), x, batch_statistics(x), 1.0),
             {"eps": 1e-5})
    with pytest.raises(RuntimeError, match=r"the statistics' shape \[2, 4\] is not \(2, 3\)"):
        bind(BATCH_NORM_BACKWARD, (x, x, autojit.ones(2, 4), 1.0), {"eps": 1e-5})
    with pytest.raises(ValueError, match="more than 1 value per channel"):
        autojit.nn.functional.batch_norm(autojit.ones(1, 3), None, None, training=True)
