"""Factories and value-dependent shapes under vmap, against torch: new_zeros, new_ones,
new_empty and new_full on a tensor batched by vmap give one materialized result per sample, as
functorch's rule does, so that a batched value can be copied into them (torch's
test_new_zeros_materializes_tensor and test_new_empty_materializes_tensor); nonzero and unique
raise torch's error for ops whose result's shape depends on the values."""

import numpy as np
import pytest

import autojit
from autojit.func import grad, vmap

torch = pytest.importorskip("torch")


def _run(lib, vmap, grad, method):
    def foo(y, x):
        result = getattr(x, method)((5,)) if method != "new_full" else x.new_full((5,), 2.)
        result.copy_(y)
        return (result * result).sum()

    x = lib.tensor(np.arange(3.), dtype=lib.float32)
    y = lib.tensor(np.arange(15.).reshape(3, 5), dtype=lib.float32)
    return vmap(grad(foo))(y, x).numpy()


@pytest.mark.parametrize("method", ["new_zeros", "new_ones", "new_empty", "new_full"])
def test_a_batched_tensors_new_factories_are_per_sample(method):
    ours = _run(autojit, vmap, grad, method)
    theirs = _run(torch, torch.func.vmap, torch.func.grad, method)
    np.testing.assert_array_equal(ours, theirs)


def test_nested_vmap_factories_keep_each_level():
    def made(lib, vmap):
        x = lib.zeros(4, 3, 2)
        out = vmap(vmap(lambda row: row.new_full((2,), 7.) + row))(x)
        return tuple(out.shape), out.numpy()

    ours, theirs = made(autojit, vmap), made(torch, torch.func.vmap)
    assert ours[0] == theirs[0]
    np.testing.assert_array_equal(ours[1], theirs[1])


@pytest.mark.parametrize("name", ["nonzero", "unique", "unique_consecutive"])
def test_ops_of_value_dependent_shape_under_vmap_give_torchs_error(name):
    def message(lib, vmap):
        with pytest.raises(RuntimeError) as info:
            vmap(getattr(lib, name))(lib.ones(3, 3))
        return str(info.value)

    assert message(autojit, vmap) == message(torch, torch.func.vmap)
