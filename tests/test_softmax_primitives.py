"""softmax and log_softmax as primitives with torch's backward formulas (ops/nn/softmax.py), and the
Decomposition lowering that has compiled code run them as their composites (ops/lowering.py).

Eager values are the composite's bits (softmax over a last dim: its native loop's, within
float32's rounding); values, gradients to second order, forward-mode
tangents, vmap and grad_fn names are torch's; compiled calls equal eager ones and their graphs
hold the composite's primitives, not the ops.
"""

from __future__ import annotations

import re

import numpy as np
import pytest
import torch

import autojit
from autojit.ops import elementwise as ew
from autojit.ops.reduction import amax, sum_

generator = np.random.default_rng(23)
FUNCTIONS = ("softmax", "log_softmax")


def _composite(name: str, x: autojit.Tensor, dim: int) -> autojit.Tensor:
    """The composites the primitives replaced, as they were written."""
    shifted = x - amax(x, dim, keepdim=True).detach()
    if name == "softmax":
        exponentials = ew.exp(shifted)
        return exponentials / sum_(exponentials, dim, keepdim=True)
    return shifted - ew.log(sum_(ew.exp(shifted), dim, keepdim=True))


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape, dim", [((7, 33), 1), ((4, 5, 6), 0), ((3, 8, 2), 1),
                                        ((2, 3, 129), -1)])
def test_eager_values_are_the_composites_bits(name, dtype, shape, dim):
    x = autojit.tensor((generator.standard_normal(shape) * 4).astype(dtype))
    got = getattr(autojit, name)(x, dim).numpy()
    expected = _composite(name, x, dim % len(shape)).numpy()
    assert got.dtype == expected.dtype
    if dim % len(shape) == len(shape) - 1 and _native_softmax():
        # The native loop over rows (codegen/cpu/eager_softmax.py) sums in float64: within
        # float32's rounding of the composite, and a float32 result at least as close to the
        # exact values (log_softmax's to its largest magnitude, the subtraction's rounding).
        wide = x.numpy().astype(np.float64)
        exact = wide - np.log(np.exp(wide).sum(-1, keepdims=True))
        if name == "softmax":
            exact = np.exp(exact)
        ulp = np.finfo(dtype).eps
        if name == "softmax":
            np.testing.assert_allclose(got, expected, rtol=4 * ulp, atol=0)
        else:
            np.testing.assert_allclose(got, expected, rtol=0,
                                       atol=4 * ulp * np.abs(expected).max())
        if dtype == np.float32:  # (float64 references are no wider than float64 results)
            assert np.abs(got - exact).max() <= np.abs(expected - exact).max() + \
                ulp * np.abs(exact).max()
    else:
        np.testing.assert_array_equal(got, expected)


def _native_softmax() -> bool:
    from autojit.ops.nn import softmax

    return softmax.NATIVE is not None and softmax.NATIVE(
        "softmax", [np.ones((1, 2), np.float32)], False) is not None


def _reference_softmax(x: np.ndarray, safe: bool) -> np.ndarray:
    wide = x.astype(np.float64)
    masked = np.isneginf(wide).all(-1, keepdims=True)
    shifted = np.where(masked, 0.0, wide) - np.where(masked, 0.0, wide).max(-1, keepdims=True)
    result = np.exp(shifted) / np.exp(shifted).sum(-1, keepdims=True)
    return np.where(masked, 0.0 if safe else np.nan, result)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(4, 4, 64, 64), (3, 1), (5, 7), (2, 31), (3, 33), (2, 100),
                                   (600, 80)])  # (600, 80): split over the cores
def test_native_rows_give_torchs_softmax_safe_softmax_and_backward(dtype, shape):
    if not _native_softmax():
        pytest.skip("no native softmax loop on this host")
    data = (generator.standard_normal(shape) * 4).astype(dtype)
    data.reshape(-1, shape[-1])[0] = -np.inf  # a fully masked row
    data.reshape(-1, shape[-1])[-1, ::3] = -np.inf
    grad = generator.standard_normal(shape).astype(dtype)
    tolerance = {"rtol": 2e-6, "atol": 1e-7} if dtype == np.float32 else {"rtol": 1e-13,
                                                                          "atol": 1e-15}
    for safe in (False, True):
        x = torch.tensor(data, requires_grad=True)
        expected = (torch.ops.aten._safe_softmax if safe else torch.softmax)(x, -1)
        (expected_grad,) = torch.autograd.grad(expected, x, torch.tensor(grad))
        mine = autojit.tensor(data, requires_grad=True)
        got = (autojit._safe_softmax if safe else autojit.softmax)(mine, -1)
        (got_grad,) = autojit.autograd.grad(got, mine, autojit.tensor(grad))
        assert type(got.grad_fn).__name__ == ("SafeSoftmaxBackward0" if safe
                                              else "SoftmaxBackward0")
        np.testing.assert_allclose(got.detach().numpy(), _reference_softmax(data, safe),
                                   **tolerance)
        np.testing.assert_allclose(got.detach().numpy(), expected.detach().numpy(),
                                   **tolerance)
        # y (g - sum(g y)): the difference cancels, so float32 gradients agree to an absolute
        # error of the sum's rounding
        np.testing.assert_allclose(got_grad.numpy(), expected_grad.numpy(),
                                   **(tolerance if dtype == np.float64 else
                                      {"rtol": 1e-5, "atol": 1e-6}))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(4, 4, 64, 64), (3, 1), (5, 7), (2, 31), (3, 33), (16, 40),
                                   (2, 100), (600, 80)])  # (600, 80): split over the cores
def test_native_rows_give_torchs_log_softmax_and_backward(dtype, shape):
    if not _native_softmax():
        pytest.skip("no native softmax loop on this host")
    data = (generator.standard_normal(shape) * 4).astype(dtype)
    data.reshape(-1, shape[-1])[-1, 1::3] = -np.inf  # some masked entries: -inf results
    grad = generator.standard_normal(shape).astype(dtype)
    wide = data.astype(np.float64)
    exact = wide - wide.max(-1, keepdims=True)
    exact -= np.log(np.exp(exact).sum(-1, keepdims=True))
    x = torch.tensor(data, requires_grad=True)
    expected = torch.log_softmax(x, -1)
    (expected_grad,) = torch.autograd.grad(expected, x, torch.tensor(grad))
    mine = autojit.tensor(data, requires_grad=True)
    got = autojit.log_softmax(mine, -1)
    (got_grad,) = autojit.autograd.grad(got, mine, autojit.tensor(grad))
    assert type(got.grad_fn).__name__ == "LogSoftmaxBackward0"
    finite = np.isfinite(exact)
    assert (np.isneginf(got.detach().numpy()) == ~finite).all()
    ulp = np.finfo(dtype).eps
    scale = np.abs(exact[finite]).max()
    np.testing.assert_allclose(got.detach().numpy()[finite], exact[finite], rtol=0,
                               atol=4 * ulp * scale)
    np.testing.assert_allclose(got.detach().numpy()[finite], expected.detach().numpy()[finite],
                               rtol=0, atol=8 * ulp * scale)
    # g - exp(y) sum(g): exp(-inf) is 0, so the masked entries' gradients are g itself
    exact_grad = grad - np.exp(exact) * grad.astype(np.float64).sum(-1, keepdims=True)
    size = np.abs(grad).sum(-1, keepdims=True).max()
    np.testing.assert_allclose(got_grad.numpy(), exact_grad, rtol=0, atol=4 * ulp * size)
    np.testing.assert_allclose(got_grad.numpy(), expected_grad.numpy(), rtol=0,
                               atol=8 * ulp * size)


def test_native_log_softmax_keeps_nan_and_inf_as_numpys_routine():
    if not _native_softmax():
        pytest.skip("no native softmax loop on this host")
    from autojit.ops.nn import softmax

    data = np.array([[1.0, np.nan, 2.0], [np.inf, 1.0, 2.0], [-np.inf, -np.inf, 0.5],
                     [-np.inf] * 3], np.float32)
    got = autojit.log_softmax(autojit.tensor(data), 1).numpy()
    np.testing.assert_array_equal(got, torch.log_softmax(torch.tensor(data), 1).numpy())
    native, softmax.NATIVE = softmax.NATIVE, None
    try:  # NumPy's routine, the composite's calls
        np.testing.assert_array_equal(got, autojit.log_softmax(autojit.tensor(data), 1).numpy())
    finally:
        softmax.NATIVE = native


def test_native_rows_keep_nan_and_inf_as_numpys_max_does():
    if not _native_softmax():
        pytest.skip("no native softmax loop on this host")
    data = np.array([[1.0, np.nan, 2.0], [np.inf, 1.0, 2.0], [-np.inf, -np.inf, 0.5],
                     [-np.inf] * 3], np.float32)
    for function in (autojit.softmax, autojit._safe_softmax):
        got = function(autojit.tensor(data), 1).numpy()
        expected = torch.softmax(torch.tensor(data), 1).numpy()
        if function is autojit._safe_softmax:
            expected[3] = 0
        np.testing.assert_array_equal(got, expected)


def test_attention_with_a_fully_masked_row_compiled_equals_eager_and_torch():
    data = generator.standard_normal((2, 3, 5, 8)).astype(np.float32)
    mask = np.array([[True] * 5, [False] * 5, [True, False] * 2 + [True], [False] * 4 + [True],
                     [True] * 5])
    results = []
    for library in (torch, autojit):
        q = library.tensor(data, requires_grad=True)
        out = library.nn.functional.scaled_dot_product_attention(q, q, q,
                                                                  attn_mask=library.tensor(mask))
        (grad,) = library.autograd.grad(out.sum(), q)
        results.append((out.detach().numpy(), grad.numpy()))

    def step(q):
        out = autojit.nn.functional.scaled_dot_product_attention(
            q, q, q, attn_mask=autojit.tensor(mask))
        return out, autojit.autograd.grad(out.sum(), q)[0]

    compiled = autojit.compile(step)
    results.append(tuple(t.detach().numpy() for t in
                         compiled(autojit.tensor(data, requires_grad=True))))
    for mine in results[1:]:
        for got, expected in zip(mine, results[0], strict=True):
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", FUNCTIONS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_values_and_gradients_to_second_order_are_torchs(name, dtype):
    data = generator.standard_normal((3, 4, 5)).astype(dtype)
    weights = generator.standard_normal((3, 4, 5)).astype(dtype)
    results = []
    for library in (autojit, torch):
        x = library.tensor(data, requires_grad=True)
        y = getattr(library, name)(x, 1)
        (first,) = library.autograd.grad((y * library.tensor(weights)).sum(), x,
                                         create_graph=True)
        (second,) = library.autograd.grad((first * first).sum(), x)
        results.append([t.detach().numpy() for t in (y, first, second)]
                       + [type(y.grad_fn).__name__, type(first.grad_fn).__name__])
    tolerance = {"rtol": 1e-5, "atol": 1e-6} if dtype == "float32" else {"rtol": 1e-12}
    for mine, theirs in zip(results[0][:3], results[1][:3]):
        np.testing.assert_allclose(mine, theirs, **tolerance)
    assert results[0][3:] == results[1][3:]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_gradcheck_and_gradgradcheck(name):
    x = autojit.tensor(generator.standard_normal((3, 4)), requires_grad=True)
    function = getattr(autojit, name)
    assert autojit.autograd.gradcheck(lambda v: function(v, 1), (x,))
    assert autojit.autograd.gradgradcheck(lambda v: function(v, 0), (x,))


def _transforms(library, name, data, tangent):
    """jvp, jvp over grad (the tangent of the backward formula) and vmap of `name`."""
    function = getattr(library, name)
    x, t = library.tensor(data), library.tensor(tangent)
    _, pushed = library.func.jvp(lambda v: function(v, 1), (x,), (t,))
    _, hessian_vector = library.func.jvp(
        library.func.grad(lambda v: (function(v, 1) * library.tensor(tangent)).sum()),
        (x,), (t,))
    mapped = library.func.vmap(lambda row: function(row, 0))(x)
    return [r.numpy() for r in (pushed, hessian_vector, mapped)]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_forward_mode_and_vmap_are_torchs(name):
    arrays = generator.standard_normal((5, 6)), generator.standard_normal((5, 6))
    for mine, theirs in zip(_transforms(autojit, name, *arrays),
                            _transforms(torch, name, *arrays)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_edge_values_are_torchs(name):
    rows = np.array([[-np.inf, -np.inf, -np.inf], [0.0, -np.inf, 1.0], [np.inf, 0.0, 1.0],
                     [np.nan, 0.0, 1.0], [1e30, -1e30, 0.0]], dtype=np.float32)
    cases = [(rows, 1), (np.zeros((2, 0, 3), np.float32), 1), (np.float32(1.5), 0),
             (np.zeros((0, 4), np.float32), 1)]
    for data, dim in cases:
        mine = getattr(autojit, name)(autojit.tensor(data), dim).numpy()
        theirs = getattr(torch, name)(torch.tensor(data), dim).numpy()
        assert mine.shape == theirs.shape
        np.testing.assert_allclose(mine, theirs, rtol=1e-6, equal_nan=True)


@pytest.mark.parametrize("name", FUNCTIONS)
def test_compiled_equals_eager_and_runs_the_composite(name):
    function = getattr(autojit, name)
    weights = autojit.tensor(generator.standard_normal((6, 10)).astype(np.float32))

    def step(x):
        y = function(x * 2, 1)
        (first,) = autojit.autograd.grad((y * weights).sum(), x, create_graph=True)
        (second,) = autojit.autograd.grad((first * first).sum(), x)
        return y, first, second

    compiled = autojit.compile(step)
    for _ in range(2):
        data = generator.standard_normal((6, 10)).astype(np.float32)
        expected = step(autojit.tensor(data, requires_grad=True))
        got = compiled(autojit.tensor(data, requires_grad=True))
        for mine, theirs in zip(got, expected):
            np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(),
                                       rtol=1e-5, atol=1e-6)
    printed = compiled.forward_ir()
    assert re.search(r"= amax ", printed) and re.search(r"= exp ", printed)
    assert not re.search(r"= (log_)?softmax(_backward)? ", printed)


def test_attention_runs_the_primitive_eagerly():
    q, k, v = (autojit.tensor(generator.standard_normal((2, 3, 4, 8)).astype(np.float32),
                              requires_grad=True) for _ in range(3))
    out = autojit.nn.functional.scaled_dot_product_attention(q, k, v, is_causal=True)
    names = []
    node = out.grad_fn
    while node is not None:
        names.append(node.name())
        node = next((edge[0] for edge in node.next_functions if edge[0] is not None), None)
    assert "SoftmaxBackward0" in names


def test_a_mismatched_gradient_is_refused_with_the_shapes():
    from autojit.ops.nn.softmax import SOFTMAX_BACKWARD
    from autojit.ops.registry import bind

    with pytest.raises(RuntimeError, match=r"softmax_backward: the gradient's shape \[2, 3\]"):
        bind(SOFTMAX_BACKWARD, (autojit.ones(2, 3), autojit.ones(3, 2)), {"dim": 1})


def test_bfloat16_log_softmax_rounds_once():
    # The impl runs on the float32 values and rounds its result once: within half a bfloat16
    # step of the exact value, where a composite rounding each step was not.
    data = (generator.standard_normal((64, 33)) * 4).astype(np.float32)
    got = autojit.log_softmax(autojit.tensor(data).bfloat16(), 1).float().numpy()
    rounded = torch.tensor(data).bfloat16().double().numpy()
    shifted = rounded - rounded.max(1, keepdims=True)
    exact = shifted - np.log(np.exp(shifted).sum(1, keepdims=True))
    step = 2.0 ** (np.floor(np.log2(np.abs(exact) + 1e-300)) - 7)
    assert (np.abs(got - exact) / step).max() <= 0.5 + 1e-9
