"""Op table rows for the layout primitives and composites (ops/layout/__init__.py)."""

import numpy as np

import autojit as aj

from . import ALL_NUMERIC, OpInfo, Sample, uniform


def _one(shape, *args, **kwargs):
    return lambda rng, dtype: [Sample((uniform(rng, shape, dtype), *args), kwargs)]


def _cat_samples(rng, dtype):
    return [Sample((uniform(rng, (2, 3), dtype), uniform(rng, (2, 1), dtype)), {"dim": 1}),
            Sample((uniform(rng, (1, 3), dtype), uniform(rng, (2, 3), dtype)))]


def _stack_samples(rng, dtype):
    return [Sample((uniform(rng, (2, 3), dtype), uniform(rng, (2, 3), dtype)), {"dim": 1})]


def _np_split(a, size, dim=0):
    return tuple(np.split(a, range(size, a.shape[dim], size), axis=dim))


def _np_tensor_split(a, split_by, dim=0):
    return tuple(np.array_split(a, split_by, axis=dim))


ROWS = [
    OpInfo("reshape", aj.reshape, np.reshape, _one((2, 3, 4), (4, -1)),
           primitives=("reshape",), dtypes=ALL_NUMERIC),
    OpInfo("view", lambda x, shape: x.view(shape), np.reshape, _one((2, 6), (3, 4))),
    OpInfo("expand", aj.expand, lambda a, shape: np.broadcast_to(a, shape),
           _one((3, 1), (2, 3, 4)), primitives=("expand",), dtypes=ALL_NUMERIC),
    OpInfo("broadcast_to", aj.broadcast_to, np.broadcast_to, _one((3, 1), (2, 3, 4)),
           primitives=("expand",)),
    OpInfo("permute", aj.permute, np.transpose, _one((2, 3, 4), (2, 0, 1)),
           primitives=("permute",), dtypes=ALL_NUMERIC),
    OpInfo("narrow", aj.narrow, lambda a, dim, start, length: np.take(
        a, range(start, start + length), axis=dim), _one((3, 5), 1, 1, 3),
        primitives=("slice", "embed_slice"), dtypes=ALL_NUMERIC),
    # The tensors are separate arguments so that gradcheck sees each of them.
    OpInfo("cat", lambda *tensors, dim=0: aj.cat(tensors, dim),
           lambda *arrays, dim=0: np.concatenate(arrays, dim), _cat_samples,
           primitives=("cat",), dtypes=ALL_NUMERIC),
    OpInfo("stack", lambda *tensors, dim=0: aj.stack(tensors, dim),
           lambda *arrays, dim=0: np.stack(arrays, dim), _stack_samples),
    OpInfo("flatten", aj.flatten, lambda a, start, end: a.reshape(a.shape[0], -1),
           _one((2, 3, 4), 1, -1)),
    OpInfo("unflatten", aj.unflatten, lambda a, dim, sizes: a.reshape(2, 2, 2),
           _one((2, 4), 1, (2, -1))),
    OpInfo("squeeze", aj.squeeze, np.squeeze, _one((2, 1, 3, 1))),
    OpInfo("unsqueeze", aj.unsqueeze, np.expand_dims, _one((2, 3), -1)),
    OpInfo("transpose", aj.transpose, lambda a, d0, d1: np.swapaxes(a, d0, d1),
           _one((2, 3, 4), 0, 2)),
    OpInfo("swapaxes", aj.swapaxes, np.swapaxes, _one((2, 3, 4), 1, -1)),
    OpInfo("swapdims", aj.swapdims, np.swapaxes, _one((2, 3, 4), 0, 1)),
    OpInfo("moveaxis", aj.moveaxis, np.moveaxis, _one((2, 3, 4), (0, 1), (2, 0))),
    OpInfo("t", aj.t, np.transpose, _one((3, 4))),
    OpInfo("movedim", aj.movedim, np.moveaxis, _one((2, 3, 4), 0, -1)),
    OpInfo("select", aj.select, lambda a, dim, index: np.take(a, index, axis=dim),
           _one((2, 3, 4), 1, -1)),
    OpInfo("unbind", aj.unbind, lambda a, dim: tuple(np.moveaxis(a, dim, 0)),
           _one((2, 3), 1)),
    OpInfo("split", aj.split, _np_split, _one((5, 3), 2)),
    OpInfo("chunk", aj.chunk, lambda a, chunks: _np_split(a, 2), _one((4, 3), 2)),
    OpInfo("tensor_split", aj.tensor_split, _np_tensor_split,
           lambda rng, dtype: [Sample((uniform(rng, (5, 3), dtype), 3)),
                               Sample((uniform(rng, (2, 7), dtype), [1, 4, 6], 1))]),
    OpInfo("hsplit", aj.hsplit, lambda a, split_by: tuple(np.hsplit(a, split_by)),
           lambda rng, dtype: [Sample((uniform(rng, (2, 6), dtype), 3)),
                               Sample((uniform(rng, (4,), dtype), [1]))]),
    OpInfo("vsplit", aj.vsplit, lambda a, split_by: tuple(np.vsplit(a, split_by)),
           _one((4, 3), [1, 3])),
    OpInfo("dsplit", aj.dsplit, lambda a, split_by: tuple(np.dsplit(a, split_by)),
           _one((2, 1, 4), 2)),
    OpInfo("repeat", lambda x, sizes: x.repeat(*sizes), np.tile, _one((2, 3), (2, 1, 2))),
    OpInfo("tile", aj.tile, np.tile, _one((2, 3), (2,))),
    OpInfo("flip", aj.flip, lambda a, dims: np.flip(a, dims), _one((2, 3, 4), (0, 2)),
           primitives=("flip",), dtypes=ALL_NUMERIC),
]
