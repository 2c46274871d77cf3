"""FractionalMaxPool2d/3d (nn/pooling/fractional.py, nn/functional/pooling_fractional.py) against
torch: values, indices and input gradients for the same random samples in float64 and float32,
NaNs and ties, repr, state_dict keys and errors as torch's; the samples are drawn anew on every
call of a compiled function.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("spatial, shape, kernel, size, ratio", [
    (2, (2, 3, 7, 9), 2, (3, 4), None),
    (2, (3, 7, 9), (3, 2), None, (0.5, 0.7)),
    (2, (2, 3, 7, 9), 2, (6, 8), None),
    (2, (1, 2, 5, 5), 2, (1, 4), None),
    (2, (1, 2, 5, 5), 1, (5, 5), None),
    (3, (2, 2, 6, 7, 8), 2, (3, 4, 5), None),
    (3, (2, 6, 7, 8), (2, 3, 2), None, 0.5),
])
def test_fractional_max_pool_matches_torch(spatial, shape, kernel, size, ratio, dtype):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(dtype)
    batch = shape[0] if len(shape) == spatial + 2 else 1
    samples = rng.random((batch, shape[-spatial - 1], spatial)).astype(dtype)
    name = f"fractional_max_pool{spatial}d"
    x_mine = autojit.tensor(x, requires_grad=True)
    x_theirs = torch.tensor(x, requires_grad=True)
    out_mine, at_mine = getattr(autojit.nn.functional, name)(
        x_mine, kernel, size, ratio, return_indices=True,
        _random_samples=autojit.tensor(samples))
    out_theirs, at_theirs = getattr(torch.nn.functional, name)(
        x_theirs, kernel, size, ratio, return_indices=True, _random_samples=torch.tensor(samples))
    assert out_mine.dtype == getattr(autojit, dtype) and at_mine.dtype == autojit.int64
    np.testing.assert_array_equal(out_mine.detach().numpy(), out_theirs.detach().numpy())
    np.testing.assert_array_equal(at_mine.numpy(), at_theirs.numpy())
    grad = rng.standard_normal(out_theirs.shape).astype(dtype)
    out_mine.backward(autojit.tensor(grad))
    out_theirs.backward(torch.tensor(grad))
    np.testing.assert_array_equal(x_mine.grad.numpy(), x_theirs.grad.numpy())


def test_fractional_max_pool_nans_and_ties_as_torch():
    x = np.zeros((1, 2, 6, 6))
    x[0, 1, 1, 1] = np.nan
    samples = np.full((1, 2, 2), 0.3)
    results = [lib.nn.functional.fractional_max_pool2d(
        lib.tensor(x), 3, (2, 2), return_indices=True, _random_samples=lib.tensor(samples))
        for lib in (autojit, torch)]
    for mine, theirs in zip(*results):
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())


@pytest.mark.parametrize("layer", [
    "FractionalMaxPool2d(2, output_ratio=0.5, _random_samples=lib.rand(1, 3, 2))",
    "FractionalMaxPool2d((2, 3), output_size=4, return_indices=True)",
    "FractionalMaxPool3d(2, output_size=(3, 2, 3))",
])
def test_fractional_max_pool_layers_as_torch(layer):
    def describe(lib):
        module = eval(f"lib.nn.{layer}", {"lib": lib})
        return (repr(module), list(module.state_dict()), module.kernel_size, module.output_size,
                module.output_ratio, module.return_indices)

    assert describe(autojit) == describe(torch)


def _error(call, lib):
    try:
        call(lib)
    except Exception as error:  # noqa: BLE001 - the type is what the test compares
        return type(error), str(error)
    return None


def _pool2d(lib, shape=(1, 2, 4, 4), kernel=2, size=(2, 2), **options):
    return lib.nn.functional.fractional_max_pool2d(lib.randn(*shape), kernel, size, **options)


@pytest.mark.parametrize("call", [
    lambda lib: lib.nn.FractionalMaxPool2d(2),
    lambda lib: lib.nn.FractionalMaxPool2d(2, output_size=2, output_ratio=0.5),
    lambda lib: lib.nn.FractionalMaxPool2d(2, output_ratio=1.5),
    lambda lib: lib.nn.FractionalMaxPool3d(2, output_ratio=(0.5, 1.0, 0.5)),
    lambda lib: _pool2d(lib, size=None),
    lambda lib: _pool2d(lib, kernel=3, size=(3, 3)),
    lambda lib: _pool2d(lib, size=(3, 4)),
    lambda lib: lib.nn.functional.fractional_max_pool3d(lib.randn(1, 2, 4, 4, 4), 2, (3, 3, 3)),
    lambda lib: lib.nn.functional.fractional_max_pool3d(lib.randn(1, 2, 4, 4, 4), 2, (2, 3, 2)),
    lambda lib: _pool2d(lib, shape=(4, 4)),
    lambda lib: _pool2d(lib, shape=(1, 0, 4, 4)),
    lambda lib: _pool2d(lib, kernel=(2, 2, 2)),
    lambda lib: _pool2d(lib, _random_samples=lib.rand(1, 3, 2)),
    lambda lib: _pool2d(lib, shape=(2, 2, 4, 4), _random_samples=lib.rand(1, 2, 2)),
    lambda lib: _pool2d(lib, _random_samples=lib.rand(1, 2, 3)),
    lambda lib: _pool2d(lib, _random_samples=lib.rand(1, 2)),
    lambda lib: _pool2d(lib, _random_samples=lib.rand(1, 2, 2, dtype=lib.float64)),
    lambda lib: lib.nn.functional.fractional_max_pool2d(lib.randn(1, 2, 4, 4), 2,
                                                        output_ratio=(0.5, 0.5, 0.5)),
])
def test_fractional_max_pool_errors_match_torch(call):
    mine, theirs = _error(call, autojit), _error(call, torch)
    assert theirs is not None and mine == theirs


def test_compiled_fractional_max_pool_draws_new_windows_each_call():
    pool = autojit.nn.FractionalMaxPool2d(2, output_size=3)
    x = autojit.randn(2, 5, 9, 9)
    compiled = autojit.compile(lambda x: pool(x))
    with warnings.catch_warnings():
        warnings.simplefilter("error", autojit.CompileWarning)
        autojit.manual_seed(3)
        first = compiled(x)
        autojit.manual_seed(3)
        np.testing.assert_array_equal(first.numpy(), pool(x).numpy())
        calls = [compiled(x).numpy() for _ in range(4)]
    assert len(compiled.executables) == 1
    assert any((call != first.numpy()).any() for call in calls)
