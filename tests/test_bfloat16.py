"""bfloat16: storage as float32 holding bfloat16 numbers, conversions rounded as torch's, ops
computed in float32 and rounded, compiled code and CUDA refusing it (docs/notes/bfloat16.md).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from cuda_simulator import MARKS
from torch_compare import torch

import autojit
from autojit.tensor.dtypes import round_to_bfloat16

rng = np.random.default_rng(11)
SPECIALS = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 3.4e38, -3.39e38, 1e-45, 1e-40,
                     1.0 + 2.0**-8, 1.0 + 3 * 2.0**-8, 1.0 + 2.0**-8 + 2.0**-20, 65504.0],
                    np.float32)


def _bits(values: np.ndarray) -> np.ndarray:
    return np.where(np.isnan(values), np.nan, values).view(np.uint32)


def _same_numbers(mine: np.ndarray, theirs: np.ndarray) -> None:
    """Equal bit for bit, NaNs aside (any NaN matches any NaN)."""
    mine, theirs = np.asarray(mine, np.float32), np.asarray(theirs, np.float32)
    nan = np.isnan(theirs)
    np.testing.assert_array_equal(np.isnan(mine), nan)
    np.testing.assert_array_equal(mine[~nan].view(np.uint32), theirs[~nan].view(np.uint32))


def test_float32_to_bfloat16_rounds_as_torch():
    bits = rng.integers(0, 2**32, 100_000, dtype=np.uint64).astype(np.uint32)
    values = np.concatenate([bits.view(np.float32), SPECIALS])
    converted = autojit.tensor(values).bfloat16().float()
    assert converted.dtype is autojit.float32
    _same_numbers(converted.numpy(), torch.tensor(values).bfloat16().float().numpy())
    _same_numbers(round_to_bfloat16(values), converted.numpy())


def test_float64_int_and_python_numbers_round_through_float32_as_torch():
    doubles = np.concatenate([rng.standard_normal(20_000) * 10.0 ** rng.integers(-6, 6, 20_000),
                              1.0 + 2.0**-8 + np.array([2.0**-30, -2.0**-30, 2.0**-25])])
    expected = torch.tensor(doubles).bfloat16().float().numpy()
    _same_numbers(autojit.tensor(doubles).bfloat16().float().numpy(), expected)
    _same_numbers(autojit.tensor(doubles.tolist(), dtype=autojit.bfloat16).float().numpy(),
                  expected)
    integers = rng.integers(-2**40, 2**40, 10_000)
    _same_numbers(autojit.tensor(integers).to(autojit.bfloat16).float().numpy(),
                  torch.tensor(integers).to(torch.bfloat16).float().numpy())


def test_conversions_out_of_bfloat16():
    values = torch.tensor(rng.standard_normal(1000) * 300).bfloat16()
    x = autojit.tensor(values.float().numpy()).bfloat16()
    for name in ("double", "half", "int", "long", "bool"):
        np.testing.assert_array_equal(getattr(x, name)().numpy(),
                                      getattr(values, name)().numpy())


def _binary(a, b):
    return {
        "add": lambda t, x, y: x + y, "mul": lambda t, x, y: x * y,
        "div": lambda t, x, y: x / y, "scalar": lambda t, x, y: x - 0.1,
        "rscalar": lambda t, x, y: 3.3 * x, "sqrt": lambda t, x, y: x.abs().sqrt(),
        "div_scalar": lambda t, x, y: x / 3.3, "mul_0d": lambda t, x, y: x * t.tensor(3.3),
        "floor_divide_scalar": lambda t, x, y: x // 0.3,
        "matmul": lambda t, x, y: x @ y.T, "sum": lambda t, x, y: x.sum(1),
        "maximum": lambda t, x, y: t.maximum(x, y), "where": lambda t, x, y: t.where(x > y, x, y),
        "with_int": lambda t, x, y: x + t.arange(16), "pow": lambda t, x, y: x ** 2,
        "cat": lambda t, x, y: t.cat([x, y]), "scatter_add": lambda t, x, y: x.scatter_add(
            0, t.zeros(2, 16, dtype=t.int64), y[:2]),
        "tanh": lambda t, x, y: x.tanh(), "log": lambda t, x, y: x.abs().log(),
    }


@pytest.mark.parametrize("name", sorted(_binary(None, None)))
def test_ops_compute_in_float32_and_round_as_torch(name):
    """Exactly rounded ops match torch bit for bit; the transcendental ones within one
    bfloat16 rounding (NumPy's and torch's float32 libraries differ in the last bit). A
    Python number is read in float32 by mul, div and floor_divide and rounded to bfloat16
    first by add, sub and pow, as torch's kernels do."""
    a = (rng.standard_normal((8, 16)) * 3).astype(np.float32)
    b = (rng.standard_normal((8, 16)) * 3).astype(np.float32)
    function = _binary(a, b)[name]
    expected = function(torch, torch.tensor(a).bfloat16(), torch.tensor(b).bfloat16())
    actual = function(autojit, autojit.tensor(a).bfloat16(), autojit.tensor(b).bfloat16())
    assert actual.dtype.name == str(expected.dtype).split(".")[-1]
    mine, theirs = actual.float().numpy(), expected.float().numpy()
    if name in ("tanh", "log"):
        steps = np.abs(mine.view(np.int32).astype(np.int64) - theirs.view(np.int32)) >> 16
        assert steps.max() <= 1
    else:
        _same_numbers(mine, theirs)


def test_promotion_as_torch():
    b = autojit.ones(2, dtype=autojit.bfloat16)
    assert (b + autojit.ones(2, dtype=autojit.float16)).dtype is autojit.float32
    assert (b + autojit.ones(2)).dtype is autojit.float32
    assert (b + autojit.ones(2, dtype=autojit.float64)).dtype is autojit.float64
    assert (b + autojit.arange(2)).dtype is autojit.bfloat16
    assert (b + 1.5).dtype is autojit.bfloat16
    assert (b + autojit.tensor(1.5)).dtype is autojit.bfloat16  # a 0-d float32 does not lift
    assert autojit.promote_types(autojit.bfloat16, autojit.float16) is autojit.float32
    assert autojit.bfloat16.itemsize == 2 and autojit.bfloat16.is_floating_point


def test_gradients_are_bfloat16_and_rounded_as_torch():
    a = rng.standard_normal(16).astype(np.float32)
    grads = []
    for framework in (torch, autojit):
        x = framework.tensor(a).bfloat16().requires_grad_(True)
        for _ in range(2):  # the second backward accumulates into .grad in place
            ((x * 0.3).exp() * x).sum().backward()
        assert str(x.grad.dtype).endswith("bfloat16")
        grads.append(x.grad.float().numpy())
    steps = np.abs(grads[1].view(np.int32).astype(np.int64) - grads[0].view(np.int32)) >> 16
    assert steps.max() <= 1


def test_printing_numpy_and_storage_as_torch():
    x = autojit.tensor([0.1, 1.0 / 3, 300.7]).bfloat16()
    assert repr(x) == repr(torch.tensor([0.1, 1.0 / 3, 300.7]).bfloat16()).replace(
        "torch.", "autojit.")
    assert x.type() == "autojit.BFloat16Tensor" and isinstance(x, autojit.BFloat16Tensor)
    assert autojit.BFloat16Tensor([1.5]).dtype is autojit.bfloat16
    for call in (lambda: x.numpy(), lambda: np.asarray(x)):
        with pytest.raises(TypeError, match="^Got unsupported ScalarType BFloat16$"):
            call()
    with pytest.raises(TypeError, match="^Got unsupported ScalarType BFloat16$"):
        torch.tensor([1.0]).bfloat16().numpy()
    with pytest.raises(BufferError, match="bfloat16"):
        x.__dlpack__()
    assert x.tolist() == torch.tensor([0.1, 1.0 / 3, 300.7]).bfloat16().tolist()


def test_save_and_load_keep_bfloat16(tmp_path):
    x = autojit.tensor([0.1, 2.5]).bfloat16()
    autojit.save({"x": x}, tmp_path / "x.npz")
    loaded = autojit.load(tmp_path / "x.npz")["x"]
    assert loaded.dtype is autojit.bfloat16 and loaded.tolist() == x.tolist()


def test_compiled_code_refuses_bfloat16_and_runs_it_eagerly():
    x = autojit.tensor(rng.standard_normal(8).astype(np.float32)).bfloat16()

    def step(t):
        return (t * 0.1).exp() + t

    compiled = autojit.compile(step)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = compiled(x)
    assert any("bfloat16" in str(w.message) for w in caught)
    assert result.dtype is autojit.bfloat16 and result.tolist() == step(x).tolist()
    with pytest.raises(autojit.ir.GraphBreak, match="bfloat16"):
        autojit.compile(step, fullgraph=True)(x)
    # Other ops on a cast's bfloat16 result are refused too.
    with pytest.raises(autojit.ir.GraphBreak, match="bfloat16"):
        autojit.compile(lambda t: t.bfloat16() * 2, fullgraph=True)(autojit.ones(2))


def test_casts_to_and_from_bfloat16_compile_and_round_as_eager():
    # The cast is traced (Op.traces_bfloat16) where autograd does not record it: its step
    # rounds through run_eager, constants folded or not.
    data = rng.standard_normal((3, 4)).astype(np.float32) * 3
    constant = autojit.tensor([1.3, 2.7182817, 0.1, 7.77])

    def step(t):
        rounded = t.bfloat16()
        return rounded, (rounded.float() * constant.bfloat16().double()).sum(), t.double()

    compiled = autojit.compile(step, fullgraph=True)
    results = [[o.float().numpy() for o in run(autojit.tensor(data))]
               for run in (step, compiled)]
    for a, b in zip(*results, strict=True):
        assert np.array_equal(a, b)
    assert np.array_equal(results[0][0], torch.tensor(data).bfloat16().float().numpy())
    assert compiled.stats().eager_calls == 0
    # Recorded for autograd, it breaks the graph: its gradient would be summed in bfloat16.
    x = autojit.tensor(data, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        outs = autojit.compile(step)(x)
    grad, = autojit.autograd.grad(outs[1], x)
    x = autojit.tensor(data, requires_grad=True)
    assert np.array_equal(grad.numpy(), autojit.autograd.grad(step(x)[1], x)[0].numpy())


@MARKS[0]
def test_cuda_ops_refuse_bfloat16():
    x = autojit.ones(2, dtype=autojit.bfloat16).cuda()
    with pytest.raises(NotImplementedError, match="bfloat16 is not supported on cuda tensors"):
        x + 1
    with pytest.raises(NotImplementedError, match="cast: bfloat16"):
        autojit.ones(2, device="cuda").bfloat16()
    assert x.cpu().dtype is autojit.bfloat16 and x.cpu().tolist() == [1.0, 1.0]


def test_every_factory_rounds():
    data = np.array([0.1, 1 / 3], np.float32)
    expected = torch.tensor(data).bfloat16().tolist()
    for made in (autojit.as_tensor(data, dtype=autojit.bfloat16),
                 autojit.tensor(data.tolist(), dtype=autojit.bfloat16),
                 autojit.BFloat16Tensor(data.tolist()),
                 autojit.full((2,), 0.1, dtype=autojit.bfloat16)):
        assert made.dtype is autojit.bfloat16
        assert made.tolist() in (expected, [expected[0]] * 2)
