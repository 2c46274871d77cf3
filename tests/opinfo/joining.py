"""Op table rows for joining, rearranging and diagonals (ops/layout/joining.py,
ops/layout/diagonal.py).

Composites of primitives the table checks in every dtype elsewhere (cat, index, expand) run in
the float dtypes only, which keeps the compiled and CUDA drivers short; the diagonal
primitive runs in all of them.
"""

import itertools

import numpy as np

import autojit as aj

from . import ALL_NUMERIC, OpInfo, Sample, uniform


def _one(shape, *args, **kwargs):
    return lambda rng, dtype: [Sample((uniform(rng, shape, dtype), *args), kwargs)]


def _pair(first, second):
    return lambda rng, dtype: [Sample((uniform(rng, first, dtype), uniform(rng, second, dtype)))]


def _listed(function):
    """The tensors as separate arguments, so that gradcheck sees each of them."""
    return lambda *tensors: function(list(tensors))


def _diag_embed_reference(a, offset=0):
    size = a.shape[-1] + abs(offset)
    out = np.zeros(a.shape[:-1] + (size, size), a.dtype)
    rows = np.arange(a.shape[-1]) + max(-offset, 0)
    out[..., rows, rows + offset] = a
    return out


def _block_diag_reference(*arrays):
    blocks = [np.atleast_2d(a) for a in arrays]
    out = np.zeros((sum(b.shape[0] for b in blocks), sum(b.shape[1] for b in blocks)),
                   np.result_type(*blocks))
    row = column = 0
    for block in blocks:
        out[row:row + block.shape[0], column:column + block.shape[1]] = block
        row, column = row + block.shape[0], column + block.shape[1]
    return out


ROWS = [
    OpInfo("hstack", _listed(aj.hstack), lambda *arrays: np.hstack(arrays), _pair((2, 3), (2, 1)),
           primitives=("cat",)),
    OpInfo("vstack", _listed(aj.vstack), lambda *arrays: np.vstack(arrays), _pair((3,), (2, 3))),
    OpInfo("dstack", _listed(aj.dstack), lambda *arrays: np.dstack(arrays), _pair((2, 3), (2, 3))),
    OpInfo("column_stack", _listed(aj.column_stack), lambda *arrays: np.column_stack(arrays),
           _pair((2,), (2, 3))),
    OpInfo("atleast_1d", aj.atleast_1d, np.atleast_1d, _one(())),
    OpInfo("atleast_2d", aj.atleast_2d, np.atleast_2d, _one((3,))),
    OpInfo("atleast_3d", aj.atleast_3d, np.atleast_3d, _one((2, 3))),
    OpInfo("block_diag", aj.block_diag, _block_diag_reference, lambda rng, dtype: [
        Sample((uniform(rng, (2, 3), dtype), uniform(rng, (), dtype), uniform(rng, (2,), dtype)))],
        primitives=("embed_slice", "cat", "slice")),
    OpInfo("cartesian_prod", aj.cartesian_prod,
           lambda *arrays: np.array(list(itertools.product(*arrays))), _pair((3,), (2,))),
    OpInfo("meshgrid", lambda *tensors, indexing: aj.meshgrid(*tensors, indexing=indexing),
           lambda *arrays, indexing: tuple(np.meshgrid(*arrays, indexing=indexing)),
           lambda rng, dtype: [Sample((uniform(rng, (3,), dtype), uniform(rng, (2,), dtype)),
                                      {"indexing": indexing}) for indexing in ("ij", "xy")],
           primitives=("expand", "reshape")),
    OpInfo("roll", aj.roll, np.roll, lambda rng, dtype: [
        Sample((uniform(rng, (3, 4), dtype), (1, -5), (0, 1))),
        Sample((uniform(rng, (3, 4), dtype), 2))], primitives=("cat", "slice")),
    OpInfo("fliplr", aj.fliplr, np.fliplr, _one((2, 3)), primitives=("flip",)),
    OpInfo("flipud", aj.flipud, np.flipud, _one((2, 3))),
    OpInfo("rot90", aj.rot90, lambda a, k=1, dims=(0, 1): np.rot90(a, k, dims),
           lambda rng, dtype: [Sample((uniform(rng, (2, 3, 4), dtype), k, (2, 0)))
                               for k in (1, 3)], primitives=("flip", "permute")),
    OpInfo("repeat_interleave", aj.repeat_interleave,
           lambda a, repeats, dim=None: np.repeat(a, repeats, dim), lambda rng, dtype: [
               Sample((uniform(rng, (2, 3), dtype), 2), {"dim": 1}),
               Sample((uniform(rng, (2, 3), dtype), 3))], primitives=("expand", "reshape")),
    OpInfo("diagonal", aj.diagonal, np.diagonal, lambda rng, dtype: [
        Sample((uniform(rng, (3, 4), dtype), 1)),
        Sample((uniform(rng, (2, 3, 4), dtype), -1, 2, 0)),
        Sample((uniform(rng, (3, 4, 2), dtype), 0, 0, 1))],
        primitives=("diagonal", "embed_diagonal"), dtypes=ALL_NUMERIC),
    OpInfo("diag_embed", aj.diag_embed, _diag_embed_reference, lambda rng, dtype: [
        Sample((uniform(rng, (2, 3), dtype),)), Sample((uniform(rng, (3,), dtype), -1))],
        primitives=("embed_diagonal", "diagonal")),
    OpInfo("diag", aj.diag, np.diag, lambda rng, dtype: [
        Sample((uniform(rng, (3,), dtype), 1)), Sample((uniform(rng, (3, 4), dtype), -1))]),
    OpInfo("diagflat", aj.diagflat, np.diagflat, _one((2, 2), -1)),
    OpInfo("trace", aj.trace, np.trace, _one((3, 4))),
]
