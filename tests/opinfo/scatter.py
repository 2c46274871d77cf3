"""Op table rows for scatter, index updates and masks (ops/indexing/scatter.py, index_update.py,
masked.py).

The composites over index_put run in the float dtypes only, but for scatter, take and
masked_scatter, which stand for them in every dtype; the integer checks of index_add and
index_copy are in tests/test_scatter_torch.py.
"""

import numpy as np

import autojit as aj

from . import ALL_NUMERIC, OpInfo, Sample, uniform


def _along(index: np.ndarray, dim: int):
    """(position in index, position in x) pairs of a scatter along dim."""
    for position in np.ndindex(index.shape):
        target = list(position)
        target[dim] = index[position]
        yield position, tuple(target)


def _scatter_reference(a, dim, index, src):
    out = a.copy()
    for position, target in _along(index, dim):
        out[target] = src[position] if isinstance(src, np.ndarray) else src
    return out


_COMBINE = {"sum": np.add, "prod": np.multiply, "amax": np.maximum, "amin": np.minimum}


def _scatter_reduce_reference(a, dim, index, src, reduce, include_self=True):
    out = a.copy()
    gathered = {}
    for position, target in _along(index, dim):
        gathered.setdefault(target, []).append(src[position])
    for target, values in gathered.items():
        values = values if not include_self else [a[target], *values]
        if reduce == "mean":
            total = np.sum(values)
            out[target] = total / len(values) if a.dtype.kind == "f" else total // len(values)
        else:
            out[target] = _COMBINE[reduce].reduce(np.array(values, dtype=a.dtype))
    return out


def _distinct(rng, shape, dtype, offset=0.0):
    """Values without ties or zeros, so that amax/amin/prod have a smooth gradient (the
    offset keeps two such tensors apart)."""
    values = (rng.permutation(int(np.prod(shape))).reshape(shape) + 1.0 + offset) / 4
    return (values * rng.choice([-1, 1], shape)).astype(dtype)


def _scatter_samples(rng, dtype):
    # Distinct target positions: where index repeats one, which write wins is unspecified.
    x = uniform(rng, (3, 4), dtype)
    return [Sample((x, 0, np.array([[2, 0, 1, 2], [0, 1, 2, 1]]), uniform(rng, (2, 5), dtype))),
            Sample((x, 1, np.array([[3, 1], [0, 2], [1, 0]]), uniform(rng, (3, 2), dtype))),
            Sample((x, -1, np.array([[1], [3], [0]]), 2))]


def _scatter_reduce_samples(rng, dtype):
    x, src = _distinct(rng, (3, 4), dtype), _distinct(rng, (3, 4), dtype, 0.5)
    index = np.array([[0, 2, 2, 1], [0, 0, 2, 1], [2, 0, 1, 1]])
    return [Sample((x, 0, index, src, reduce), {"include_self": include})
            for reduce, include in (("sum", False), ("prod", True), ("mean", True),
                                    ("mean", False), ("amax", True), ("amin", False))]


def _index_add_reference(a, dim, index, source, alpha=1):
    out = np.moveaxis(a.copy(), dim, 0)
    np.add.at(out, index, np.moveaxis(source, dim, 0) * alpha)
    return np.moveaxis(out, 0, dim)


def _index_copy_reference(a, dim, index, source):
    out = np.moveaxis(a.copy(), dim, 0)
    out[index] = np.moveaxis(source, dim, 0)
    return np.moveaxis(out, 0, dim)


def _index_fill_reference(a, dim, index, value):
    out = np.moveaxis(a.copy(), dim, 0)
    out[index] = value
    return np.moveaxis(out, 0, dim)


def _index_put_reference(a, indices, values, accumulate=False):
    out = a.copy()
    if accumulate:
        np.add.at(out, indices, values)
    else:
        out[indices] = values
    return out


def _put_reference(a, index, source, accumulate=False):
    out = a.copy().reshape(-1)
    if accumulate:
        np.add.at(out, index.reshape(-1), source.reshape(-1))
    else:
        out[index.reshape(-1)] = source.reshape(-1)
    return out.reshape(a.shape)


def _masked_scatter_reference(a, mask, source):
    out = np.array(np.broadcast_to(a, np.broadcast_shapes(a.shape, mask.shape)))
    full = np.broadcast_to(mask, out.shape)
    out[full] = source.reshape(-1)[:full.sum()]
    return out


def _masked_select_reference(a, mask):
    shape = np.broadcast_shapes(a.shape, mask.shape)
    return np.broadcast_to(a, shape)[np.broadcast_to(mask, shape)]


def _nonzero_static_reference(a, size, fill_value=-1):
    found = np.argwhere(a)[:size]
    out = np.full((size, a.ndim), fill_value, np.int64)
    out[:len(found)] = found
    return out


def _mask(rng, shape):
    return rng.random(shape) < 0.5


ROWS = [
    OpInfo("scatter", aj.scatter, _scatter_reference, _scatter_samples,
           primitives=("index_put", "index", "check_index"), dtypes=ALL_NUMERIC),
    OpInfo("scatter_reduce", aj.scatter_reduce, _scatter_reduce_reference,
           _scatter_reduce_samples, primitives=("scatter_reduce", "scatter_add", "gather")),
    OpInfo("index_add", aj.index_add, _index_add_reference, lambda rng, dtype: [
        Sample((uniform(rng, (3, 4), dtype), 1, np.array([3, 0, 3]),
                uniform(rng, (3, 3), dtype)), {"alpha": 2})],
        primitives=("index_put",)),
    OpInfo("index_copy", aj.index_copy, _index_copy_reference, lambda rng, dtype: [
        Sample((uniform(rng, (3, 4), dtype), 0, np.array([2, 0]), uniform(rng, (2, 4), dtype)))],
        primitives=("index_put",)),
    OpInfo("index_fill", aj.index_fill, _index_fill_reference, lambda rng, dtype: [
        Sample((uniform(rng, (3, 4), dtype), 1, np.array([1, -1]), -1))],
        primitives=("index_put",)),
    OpInfo("index_put", aj.index_put, _index_put_reference, lambda rng, dtype: [
        Sample((uniform(rng, (3, 4), dtype), (np.array([0, 2, 0]), np.array([1, 3, 1])),
                uniform(rng, (3,), dtype)), {"accumulate": True}),
        Sample((uniform(rng, (3, 4), dtype), (np.array([2, 0]),), uniform(rng, (4,), dtype)))],
        primitives=("index_put",)),
    OpInfo("put", aj.put, _put_reference, lambda rng, dtype: [
        Sample((uniform(rng, (3, 4), dtype), np.array([[0, 5], [11, 5]]),
                uniform(rng, (2, 2), dtype)), {"accumulate": True}),
        Sample((uniform(rng, (3, 4), dtype), np.array([7, 2]), uniform(rng, (2,), dtype)))],
        primitives=("index_put",)),
    OpInfo("take", aj.take, lambda a, index: np.take(a, index), lambda rng, dtype: [
        Sample((uniform(rng, (3, 4), dtype), np.array([[0, 11], [-1, 5]])))],
        primitives=("index", "check_index"), dtypes=ALL_NUMERIC),
    OpInfo("masked_scatter", aj.masked_scatter, _masked_scatter_reference, lambda rng, dtype: [
        Sample((uniform(rng, (3, 4), dtype), _mask(rng, (3, 4)), uniform(rng, (13,), dtype))),
        Sample((uniform(rng, (4,), dtype), _mask(rng, (2, 4)), uniform(rng, (2, 4), dtype)))],
        primitives=("nonzero_static", "index_put", "index"), dtypes=ALL_NUMERIC),
    OpInfo("masked_select", aj.masked_select, _masked_select_reference,
        lambda rng, dtype: [Sample((uniform(rng, (3, 4), dtype), _mask(rng, (3, 4)))),
                            Sample((uniform(rng, (4,), dtype), _mask(rng, (2, 4))))],
        primitives=("index", "index_put")),
    OpInfo("nonzero_static", aj.nonzero_static, _nonzero_static_reference, lambda rng, dtype: [
        Sample((uniform(rng, (3, 4), dtype, -1, 2),), {"size": 5}),
        Sample((uniform(rng, (3, 4), dtype, -1, 2),), {"size": 14, "fill_value": 9})],
        primitives=("nonzero_static",), dtypes=ALL_NUMERIC, differentiable=False),
]
