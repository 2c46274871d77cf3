"""The strides of elementwise results over operands of drawn layouts (slices of rows, permuted
dims, expanded and broadcast dims, dims of one element), against torch's TensorIterator:
ops/iterator_layout.py re-lays NumPy's result out where torch orders the dims otherwise, and
skips the sorting where every operand is row-major (`_row_major_everywhere`). The strides of
dims of one element are not compared (torch's are those of its sorted order, autojit's
NumPy's: no element is reached through them)."""

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")


def _operand(lib, rng, shape: tuple, data: np.ndarray):
    """A tensor of `shape` (or broadcastable to it) in a drawn layout, the same values and
    layout in either library."""
    kind = rng.integers(0, 6)
    ndim = len(shape)
    if kind == 0:  # contiguous
        return lib.tensor(data)
    if kind == 1:  # every other row of a wider tensor: strided, row-major order
        wide = np.concatenate([data, data + 1.0], axis=-1)
        return lib.tensor(wide)[..., :shape[-1]]
    if kind == 2:  # a permutation of a contiguous tensor
        order = rng.permutation(ndim)
        stored = np.ascontiguousarray(np.transpose(data, np.argsort(order)))
        return lib.tensor(stored).permute(*[int(axis) for axis in np.argsort(np.argsort(order))])
    if kind == 3:  # one dim expanded from a single element
        axis = int(rng.integers(0, ndim))
        picked = np.take(data, [0], axis=axis)
        return lib.tensor(picked).expand(*shape)
    if kind == 4:  # fewer dims, broadcast
        return lib.tensor(np.ascontiguousarray(data[(0,) * (ndim - 1)]))
    return lib.tensor(np.ascontiguousarray(data.swapaxes(-1, -2))).transpose(-1, -2)


def _strides(tensor) -> tuple:
    """The strides of the dims longer than one: those of a dim of one element hold no data
    (and are not compared)."""
    return tuple(stride if extent > 1 else None
                 for extent, stride in zip(tensor.shape, tensor.stride()))


@pytest.mark.parametrize("seed", range(8))
def test_elementwise_result_strides_as_torch(seed):
    rng = np.random.default_rng(seed)
    mismatches = []
    for case in range(60):
        ndim = int(rng.integers(2, 5))
        shape = tuple(int(extent) for extent in rng.choice([1, 2, 3, 4], size=ndim))
        values = [rng.uniform(-1, 1, shape) for _ in range(3)]
        drawn = rng.integers(0, 2 ** 31)
        results = {}
        for lib in (torch, autojit):
            local = np.random.default_rng(drawn)
            a, b, c = (_operand(lib, local, shape, value) for value in values)
            results[lib.__name__] = [(_strides(r), np.round(r.numpy(), 12).tolist())
                                     for r in (a + b, a * b, b - a, (a + b) * c)]
        if results["torch"] != results["autojit"]:
            mismatches.append((case, shape, results["torch"], results["autojit"]))
    assert not mismatches, mismatches[:2]
