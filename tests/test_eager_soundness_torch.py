"""Eager results that once differed from torch's, each compared with torch 2.13: values,
gradients, dtypes and shapes.

- the deprecated `svd(A)` (U, S, V) returned V conjugated for complex A (V must be Vh^H);
- a checkpoint taken under autocast recomputed outside it, in float32, when backward ran
  outside the autocast region;
- a custom Function that saves tensors failed in inference mode (and on inference tensors in
  any call where no backward can run), where torch saves nothing;
- the convolutions' backward products failed on a batch of 0.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import torch
import torch.utils.checkpoint

import autojit as aj
import autojit.utils.checkpoint

rng = np.random.default_rng(11)


def numpy_of(tensor) -> np.ndarray:
    """The values of an autojit or torch tensor, its conjugate bit resolved."""
    tensor = tensor.detach().resolve_conj()
    if isinstance(tensor, torch.Tensor) and tensor.dtype is torch.bfloat16:
        tensor = tensor.float()
    if isinstance(tensor, aj.Tensor) and tensor.dtype is aj.bfloat16:
        tensor = tensor.float()
    return tensor.numpy()


def same_dtype(ours, theirs) -> bool:
    return str(ours.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]


def check_like(ours, theirs, rtol=1e-6, atol=1e-6) -> None:
    """Same shape, dtype and (to the tolerance) values."""
    assert tuple(ours.shape) == tuple(theirs.shape)
    assert same_dtype(ours, theirs), (ours.dtype, theirs.dtype)
    np.testing.assert_allclose(numpy_of(ours), numpy_of(theirs), rtol=rtol, atol=atol)


# ---- 1. svd (U, S, V): V = Vh^H ------------------------------------------------------------

DTYPES = ("float32", "float64", "complex64", "complex128")
SHAPES = ((4, 3), (3, 4), (3, 3), (2, 4, 3), (2, 3, 5))


def sample(shape, dtype: str) -> np.ndarray:
    values = rng.standard_normal(shape)
    if dtype.startswith("complex"):
        values = values + 1j * rng.standard_normal(shape)
    return values.astype(dtype)


def conj_t(array: np.ndarray) -> np.ndarray:
    return np.conj(np.swapaxes(array, -1, -2))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("some", [True, False])
@pytest.mark.parametrize("compute_uv", [True, False])
def test_svd_top_level_matches_torch(dtype, shape, some, compute_uv):
    a = sample(shape, dtype)
    ours = aj.svd(aj.tensor(a), some=some, compute_uv=compute_uv)
    theirs = torch.svd(torch.tensor(a), some=some, compute_uv=compute_uv)
    tolerance = 1e-4 if dtype in ("float32", "complex64") else 1e-10
    for mine, reference in zip(ours, theirs):
        assert tuple(mine.shape) == tuple(reference.shape)
        assert same_dtype(mine, reference)
    np.testing.assert_allclose(numpy_of(ours.S), numpy_of(theirs.S), rtol=tolerance,
                               atol=tolerance)
    if not compute_uv:  # U and V are zeros, as torch's
        np.testing.assert_array_equal(numpy_of(ours.U), numpy_of(theirs.U))
        np.testing.assert_array_equal(numpy_of(ours.V), numpy_of(theirs.V))
        return
    k = min(shape[-2:])
    u, s, v = numpy_of(ours.U)[..., :k], numpy_of(ours.S), numpy_of(ours.V)[..., :k]
    # A = U diag(S) V^H, and U V^H (free of the vectors' phases) is torch's.
    np.testing.assert_allclose((u * s[..., None, :]) @ conj_t(v), a, rtol=tolerance,
                               atol=tolerance * 10)
    reference = numpy_of(theirs.U)[..., :k] @ conj_t(numpy_of(theirs.V)[..., :k])
    np.testing.assert_allclose(u @ conj_t(v), reference, rtol=tolerance, atol=tolerance * 10)
    # The tensor method is the same function.
    method = aj.tensor(a).svd(some=some)
    np.testing.assert_allclose(numpy_of(method.V)[..., :k], v, rtol=tolerance, atol=tolerance)


def _reconstructed(module, some: bool):
    def function(a):
        u, s, v = module.svd(a, some=some)
        k = min(a.shape[-2:])
        return (u[..., :k] * s.unsqueeze(-2).to(u.dtype)) @ v[..., :k].mH
    return function


def _polar_size(module, some: bool):
    # |U V^H| and S: independent of the singular vectors' phases, so torch's gradient is
    # defined (distinct, nonzero singular values).
    def function(a):
        u, s, v = module.svd(a, some=some)
        k = min(a.shape[-2:])
        return (u[..., :k] @ v[..., :k].mH).abs(), s
    return function


@pytest.mark.parametrize("dtype", ["float64", "complex128"])
@pytest.mark.parametrize("shape", [(4, 3), (3, 4), (2, 3, 3)])
@pytest.mark.parametrize("some", [True, False])
def test_svd_top_level_gradients_match_torch(dtype, shape, some):
    a = sample(shape, dtype)
    for make in (_reconstructed, _polar_size):
        ours = aj.tensor(a, requires_grad=True)
        theirs = torch.tensor(a, requires_grad=True)
        assert aj.autograd.gradcheck(make(aj, some), (ours,))
        assert torch.autograd.gradcheck(make(torch, some), (theirs,))
        weights = sample(shape, dtype)
        for module, x in ((aj, ours), (torch, theirs)):
            outputs = make(module, some)(x)
            outputs = outputs if isinstance(outputs, tuple) else (outputs,)
            weight = weights if outputs[0].is_complex() else weights.real.copy()
            first = (outputs[0] * module.tensor(weight)).real.sum()
            (first + sum(output.sum() for output in outputs[1:])).backward()
        check_like(ours.grad, theirs.grad, rtol=1e-8, atol=1e-10)


# ---- 2. checkpoint under autocast -----------------------------------------------------------

def _layers(module, seed: int = 0):
    generator = np.random.default_rng(seed)
    first, second = module.nn.Linear(4, 5), module.nn.Linear(5, 3)
    with module.no_grad():
        for parameter in (*first.parameters(), *second.parameters()):
            parameter.copy_(module.tensor(
                generator.standard_normal(tuple(parameter.shape)).astype(np.float32)))
    return first, second


def _checkpointed_run(module, use_reentrant: bool, backward_inside: bool, forward_autocast: bool,
                      backward_autocast: bool):
    """Two Linear layers checkpointed, forward (and perhaps backward) under bfloat16 autocast;
    returns the output, the gradients and the dtype of the first layer's result in each run
    of the function (the forward's and the recomputation's)."""
    first, second = _layers(module)
    seen = []

    def function(x):
        hidden = first(x)
        seen.append(str(hidden.dtype).split(".")[-1])
        return second(module.relu(hidden))

    checkpoint = module.utils.checkpoint.checkpoint
    x = module.tensor(np.linspace(-1, 1, 8, dtype=np.float32).reshape(2, 4),
                      requires_grad=True)
    region = lambda on: module.autocast("cpu", dtype=module.bfloat16, enabled=on)  # noqa: E731
    with region(forward_autocast):
        y = checkpoint(function, x, use_reentrant=use_reentrant)
        if backward_inside:
            (y.float() ** 2).sum().backward()
    if not backward_inside:
        with region(backward_autocast):
            (y.float() ** 2).sum().backward()
    grads = [x.grad] + [p.grad for p in (*first.parameters(), *second.parameters())]
    return y, grads, seen


@pytest.mark.parametrize("use_reentrant", [False, True])
@pytest.mark.parametrize("backward_inside", [False, True])
def test_checkpoint_recomputes_under_the_forward_autocast(use_reentrant, backward_inside):
    ours = _checkpointed_run(aj, use_reentrant, backward_inside, True, False)
    theirs = _checkpointed_run(torch, use_reentrant, backward_inside, True, False)
    assert ours[2] == theirs[2] == ["bfloat16", "bfloat16"]
    check_like(ours[0], theirs[0], rtol=1e-3, atol=1e-3)
    for mine, reference in zip(ours[1], theirs[1]):
        check_like(mine, reference, rtol=1e-3, atol=1e-3)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_checkpoint_outside_autocast_ignores_an_autocast_backward(use_reentrant):
    # The forward ran in float32: an autocast region around backward does not reach the
    # recomputation.
    ours = _checkpointed_run(aj, use_reentrant, False, False, True)
    theirs = _checkpointed_run(torch, use_reentrant, False, False, True)
    assert ours[2] == theirs[2] == ["float32", "float32"]
    check_like(ours[0], theirs[0], rtol=1e-5, atol=1e-5)
    for mine, reference in zip(ours[1], theirs[1]):
        check_like(mine, reference, rtol=1e-5, atol=1e-5)


def test_checkpoint_restores_autocast_after_recomputing():
    first, second = _layers(aj)
    x = aj.ones(2, 4, requires_grad=True)
    with aj.autocast("cpu", dtype=aj.bfloat16):
        y = aj.utils.checkpoint.checkpoint(lambda v: second(first(v)), x, use_reentrant=False)
    y.float().sum().backward()
    assert not aj.is_autocast_enabled("cpu")
    assert aj.get_autocast_dtype("cpu") is aj.bfloat16


# ---- 3. custom Function in inference mode ---------------------------------------------------

def _functions(module):
    class Scale(module.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            out = x * w
            ctx.save_for_backward(x, w, out)
            return out

        @staticmethod
        def backward(ctx, grad):
            x, w, out = ctx.saved_tensors
            return grad * w, grad * x + 0 * out

    class Exp(module.autograd.Function):
        @staticmethod
        def forward(x):
            return x.exp()

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.save_for_backward(inputs[0], output)

        @staticmethod
        def backward(ctx, grad):
            _, out = ctx.saved_tensors
            return grad * out

    return Scale, Exp


def _inference_then_normal(module):
    scale, exp = _functions(module)
    data = np.array([0.5, -1.0, 2.0])
    results = []
    with module.inference_mode():
        inference = module.tensor(data)
        results.append(scale.apply(inference, module.tensor(data[::-1].copy())))
        results.append(exp.apply(inference))
    # A tensor made outside, requiring grad: still no backward in inference mode.
    outside_weight = module.tensor(data, requires_grad=True)
    with module.inference_mode():
        results.append(scale.apply(inference, outside_weight))
    # Later calls outside: an inference tensor where no input requires grad, then ordinary ones.
    results.append(exp.apply(inference))
    x = module.tensor(data, requires_grad=True)
    w = module.tensor(data[::-1].copy(), requires_grad=True)
    y = scale.apply(x, w) + exp.apply(x)
    y.sum().backward()
    results.append(y)
    return results, [x.grad, w.grad], [r.is_inference() for r in results]


def test_function_saving_tensors_in_inference_mode_matches_torch():
    ours, theirs = _inference_then_normal(aj), _inference_then_normal(torch)
    assert ours[2] == theirs[2]
    for mine, reference in zip(ours[0] + ours[1], theirs[0] + theirs[1]):
        check_like(mine, reference, rtol=1e-12, atol=1e-12)
        assert mine.requires_grad == reference.requires_grad


def test_function_still_refuses_to_save_an_inference_tensor_for_backward():
    for module in (aj, torch):
        scale, _ = _functions(module)
        with module.inference_mode():
            inference = module.ones(3)
        weight = module.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
            scale.apply(inference, weight)


def _saved_without_backward(module) -> tuple:
    kept = []

    class Keep(module.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            kept.append(ctx)
            return x * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    with module.no_grad():
        Keep.apply(module.ones(2, requires_grad=True))
    return kept[-1].saved_tensors


def test_function_without_backward_keeps_no_saved_tensors():
    # As torch: a ctx whose node cannot run backward (no grad) holds nothing.
    assert _saved_without_backward(aj) == _saved_without_backward(torch) == ()


# ---- 4. convolutions of a batch of 0 --------------------------------------------------------

CONVOLUTIONS = [
    ("conv1d", (0, 4, 7), (6, 2, 3), {"groups": 2, "padding": 1}),
    ("conv2d", (0, 2, 5, 5), (3, 2, 3, 3), {"stride": 2}),
    ("conv2d", (0, 4, 6, 6), (4, 2, 3, 3), {"groups": 2, "dilation": 2, "padding": 1}),
    ("conv3d", (0, 2, 4, 4, 4), (3, 2, 2, 2, 2), {}),
    ("conv_transpose1d", (0, 4, 7), (4, 3, 3), {"stride": 2}),
    ("conv_transpose2d", (0, 4, 5, 5), (4, 3, 3, 3), {"stride": 2, "output_padding": 1}),
    ("conv_transpose3d", (0, 2, 3, 3, 3), (2, 3, 2, 2, 2), {"groups": 2}),
]


def _conv_run(module, name, input_shape, weight_shape, options, dtype, input_grad, compiled):
    groups = options.get("groups", 1)
    transposed = name.startswith("conv_transpose")
    channels = weight_shape[1] * groups if transposed else weight_shape[0]
    generator = np.random.default_rng(3)
    x = module.tensor(np.zeros(input_shape, dtype), requires_grad=input_grad)
    w = module.tensor(generator.standard_normal(weight_shape).astype(dtype), requires_grad=True)
    b = module.tensor(generator.standard_normal(channels).astype(dtype), requires_grad=True)
    convolution = getattr(module.nn.functional, name)

    def step(x, w, b):
        y = convolution(x, w, b, **options)
        (y * y).sum().backward()
        return y

    if compiled:
        step = module.compile(step)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # graph breaks, if any, are not what is tested here
        y = step(x, w, b)
    return y, x.grad, w.grad, b.grad


@pytest.mark.parametrize("case", CONVOLUTIONS, ids=[f"{c[0]}-{i}" for i, c in
                                                    enumerate(CONVOLUTIONS)])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("input_grad", [True, False])
@pytest.mark.parametrize("compiled", [False, True])
def test_convolution_of_an_empty_batch_matches_torch(case, dtype, input_grad, compiled):
    name, input_shape, weight_shape, options = case
    ours = _conv_run(aj, name, input_shape, weight_shape, options, dtype, input_grad, compiled)
    theirs = _conv_run(torch, name, input_shape, weight_shape, options, dtype, input_grad, False)
    for mine, reference in zip(ours, theirs):
        if reference is None:
            assert mine is None
            continue
        check_like(mine, reference, rtol=0, atol=0)  # empty, or zeros
