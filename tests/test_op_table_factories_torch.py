"""The op table's factory rows against torch, and the factories inside compiled functions.

- Every sample of every factory row (tests/opinfo/factories.py, random_factories.py,
  conversions.py's new_* methods, tril_indices) called on torch and on autojit: the same
  dtype, shape, device and requires_grad, a leaf, and the same values where they are
  determined (not for empty nor for random draws, whose numbers differ from torch's).
- The random factories' draws have the moments of their distributions, and a permutation is
  one (the op table checks the exact numbers against NumPy's streams).
- Factories inside a compiled function take their sizes from the arguments' shapes, also when
  the sizes become symbolic after a second shape (compile's dynamic=None), without a graph
  break, drawing the numbers eager draws from the same seed; on the CUDA simulator, their
  results are on the devices eager puts them on.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from opinfo import GENERATOR
from test_op_table import ROWS, samples_for
from torch_compare import torch

import autojit

FACTORY_ROWS = [row for row in ROWS if row.factory]
# Rows whose values are not determined: uninitialized memory, or draws from another generator.
UNDETERMINED = {"empty", "empty_like", "Tensor.new_empty"}


def _convert(value, lib):
    if isinstance(value, np.ndarray):
        return lib.tensor(value)
    if isinstance(value, autojit.Size):
        return lib.Size(list(value))
    if isinstance(value, autojit.dtype):
        return getattr(lib, value.name.replace("bool_", "bool"))
    if value is GENERATOR:
        return lib.Generator().manual_seed(0)
    if isinstance(value, (tuple, list)):
        return type(value)(_convert(item, lib) for item in value)
    return value


def _call(row, sample, lib):
    args = [_convert(arg, lib) for arg in sample.args]
    kwargs = {key: _convert(value, lib) for key, value in sample.kwargs.items()}
    if row.name.startswith("Tensor."):
        return getattr(args[0], row.name.split(".", 1)[1])(*args[1:], **kwargs)
    return getattr(lib, row.name)(*args, **kwargs)


def _outcome(row, sample, lib):
    try:
        return _call(row, sample, lib)
    except Exception as error:  # noqa: BLE001 - compared with the other framework's
        return error


@pytest.mark.parametrize("row", FACTORY_ROWS, ids=lambda row: row.name)
def test_factory_samples_like_torch(row):
    compare_values = row.seed is None and row.name not in UNDETERMINED
    for dtype in row.dtypes:
        for index, sample in enumerate(samples_for(row, dtype)):
            where = f"{row.name} [{dtype}] sample {index}: {sample}"
            theirs, ours = _outcome(row, sample, torch), _outcome(row, sample, autojit)
            if isinstance(theirs, Exception):
                assert type(ours) is type(theirs), f"{where}: torch raised {theirs!r}, not {ours!r}"
                continue
            assert not isinstance(ours, Exception), f"{where}: raised {ours!r}"
            assert ours.dtype.name.replace("bool_", "bool") == str(theirs.dtype).split(".")[1], (
                f"{where}: dtype {ours.dtype}, torch's {theirs.dtype}")
            assert tuple(ours.shape) == tuple(theirs.shape), where
            assert ours.device.type == theirs.device.type, where
            assert ours.requires_grad == theirs.requires_grad and ours.is_leaf, where
            if compare_values:
                np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(),
                                           rtol=1e-6, atol=1e-6, err_msg=where)


# ---- the moments of the random factories ------------------------------------------------------

N = 20000  # draws: a mean is within 4.5 standard errors of its expectation


def _close(values, mean: float, std: float) -> bool:
    values = np.asarray(values, dtype=np.float64)
    return abs(values.mean() - mean) < 4.5 * std / math.sqrt(values.size)


def test_random_factories_draw_their_distributions():
    generator = autojit.Generator().manual_seed(5)
    uniform = autojit.rand(N, generator=generator, dtype=autojit.float64).numpy()
    assert uniform.min() >= 0 and uniform.max() < 1 and _close(uniform, 0.5, math.sqrt(1 / 12))
    assert _close(uniform ** 2, 1 / 3, math.sqrt(1 / 5 - 1 / 9))
    normal = autojit.randn(N, generator=generator).numpy()
    assert _close(normal, 0.0, 1.0) and _close(normal ** 2, 1.0, math.sqrt(2.0))
    integers = autojit.randint(-3, 4, (N,), generator=generator).numpy()
    assert set(np.unique(integers)) == set(range(-3, 4))
    assert _close(integers, 0.0, 2.0)
    like = autojit.randn_like(autojit.zeros(N, dtype=autojit.float64), generator=generator)
    assert like.dtype is autojit.float64 and _close(like.numpy(), 0.0, 1.0)
    counts = np.bincount(autojit.randint_like(autojit.zeros(N, dtype=autojit.int32), 4,
                                              generator=generator).numpy(), minlength=4)
    assert np.all(np.abs(counts - N / 4) < 4.5 * math.sqrt(N * 3 / 16)), counts
    # Each position of a random permutation holds each value equally often.
    permutations = np.stack([autojit.randperm(5, generator=generator).numpy()
                             for _ in range(2000)])
    assert all(sorted(p) == list(range(5)) for p in permutations)
    assert _close(permutations[:, 0], 2.0, math.sqrt(2.0))


# ---- factories inside compiled functions --------------------------------------------------------

SIZED = {
    "zeros": lambda x: autojit.zeros(x.shape) + x,
    "ones": lambda x: autojit.ones(*x.shape, dtype=autojit.float64),
    "full": lambda x: autojit.full((x.shape[0], 2), 1.5) * x.sum(),
    "empty": lambda x: autojit.empty(x.shape[1], x.shape[0]).fill_(2.0),
    "eye": lambda x: autojit.eye(x.shape[0], x.shape[1]) * x,
    "arange": lambda x: autojit.arange(x.shape[1]) * x,
    "linspace": lambda x: autojit.linspace(0.0, 1.0, x.shape[0]),
    "tensor": lambda x: autojit.tensor([x.shape[0], 2]) * x.shape[1],
    "as_tensor": lambda x: autojit.as_tensor([1.0, 2.0]) * x.shape[0],
    "zeros_like": lambda x: autojit.zeros_like(x, dtype=autojit.int32),
    "ones_like": lambda x: autojit.ones_like(x) + x,
    "full_like": lambda x: autojit.full_like(x, 3.0) - x,
    "empty_like": lambda x: autojit.empty_like(x).fill_(1.0),
    "new_zeros": lambda x: x.new_zeros(x.shape[0]),
    "new_full": lambda x: x.new_full((2, x.shape[1]), 0.5),
    "rand": lambda x: autojit.rand(x.shape) + x,
    "randn": lambda x: autojit.randn(x.shape[1], dtype=autojit.float64),
    "randint": lambda x: autojit.randint(0, 9, (x.shape[0], 1)) * x,
    "randperm": lambda x: autojit.randperm(x.shape[1]),
    "rand_like": lambda x: autojit.rand_like(x) * x,
    "randn_like": lambda x: autojit.randn_like(x),
    "randint_like": lambda x: autojit.randint_like(x, 5),
}


# Factories whose values NumPy makes from a Python int (a range, an identity, a permutation,
# data): a symbolic size specializes, and each new size retraces (docs/compiler.md, dynamic
# shapes); the others keep one symbolic trace.
SPECIALIZED = {"arange", "eye", "linspace", "tensor", "randperm"}


@pytest.mark.parametrize("name", sorted(SIZED))
def test_factory_sizes_from_argument_shapes_compiled(name):
    """The sizes change from call to call: static at first, symbolic from the second shape."""
    function = SIZED[name]
    compiled = autojit.compile(function, fullgraph=True)
    for shape in ((2, 3), (4, 5), (3, 2)):
        x = autojit.tensor(np.random.default_rng(0).standard_normal(shape).astype(np.float32))
        autojit.manual_seed(7)
        expected = function(x)
        autojit.manual_seed(7)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            actual = compiled(x)
        assert actual.dtype is expected.dtype and actual.shape == expected.shape, shape
        np.testing.assert_allclose(actual.numpy(), expected.numpy(), rtol=1e-6, atol=1e-6)
    traces = len(compiled.executables)
    assert traces == 3 if name in SPECIALIZED else traces <= 2, f"{traces} traces"
