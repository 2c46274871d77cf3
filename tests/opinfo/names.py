"""Op table rows for torch's names that autojit gained beside its older ops: the aliases and
shape questions (ops/aliases.py), the elementwise extras (ops/elementwise/extra.py), the NumPy
and SciPy elementwise primitives (ops/special/number_functions.py), the contractions and distances
(ops/linalg/contractions.py) and the slice writes and strided reads (ops/indexing/scatter_views.py).

The references are NumPy's (and SciPy's) functions of the same meaning. Rows of composites of
elementwise and layout primitives run on CUDA; the others (host ops, the NumPy primitives) are
covered there by representative rows (`cuda=False`). Quotients for div's rounding modes stay
away from integers, so that finite differences see its zero gradient.
"""

from __future__ import annotations

import itertools

import numpy as np
from scipy import special

import autojit as aj

from . import ALL_NUMERIC, FLOATING, OpInfo, Sample, positive, uniform


def _one(shape, *args, low=-2.0, high=2.0, **kwargs):
    return lambda rng, dtype: [Sample((uniform(rng, shape, dtype, low, high), *args), kwargs)]


def _pair(first, second, low=-2.0, high=2.0):
    return lambda rng, dtype: [Sample((uniform(rng, first, dtype, low, high),
                                       uniform(rng, second, dtype, low, high)))]


def _as_tensor(value):
    return lambda *args, **kwargs: aj.tensor(value(*args, **kwargs))


# ---- div's rounding modes -----------------------------------------------------------------------

def _division_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype, -9, 9)
    y = uniform(rng, (4,), dtype, 1, 4) * np.where(rng.random(4) < 0.5, -1, 1).astype(dtype)
    if np.dtype(dtype).kind == "f":  # quotients at least 0.05 from an integer
        q = x / y
        x = (np.where(np.abs(q - np.round(q)) < 0.05, np.round(q) + 0.3, q) * y).astype(dtype)
    return [Sample((x, y), {"rounding_mode": mode}) for mode in ("trunc", "floor")] + [
        Sample((x, 2), {"rounding_mode": "floor"})]


def _division_reference(x, y, rounding_mode):
    if np.asarray(x).dtype.kind == "f":
        quotient = np.asarray(x / y, np.result_type(x, y))
        return np.trunc(quotient) if rounding_mode == "trunc" else np.floor_divide(x, y)
    floor = np.floor_divide(x, y)
    if rounding_mode == "floor":
        return floor
    return np.where((np.remainder(x, y) != 0) & ((x < 0) != (np.asarray(y) < 0)), floor + 1,
                    floor)


# ---- elementwise references ---------------------------------------------------------------------

def _frexp_reference(x):
    mantissa, exponent = np.frexp(x)
    return mantissa, exponent.astype(np.int32)


def _special_values(rng, dtype):
    x = uniform(rng, (3, 4), dtype)
    x.flat[:4] = [0.0, -0.0, 8.0, 1e-30]
    return [Sample((x,))]


def _frexp_samples(rng, dtype):
    """Values away from the powers of two, where the mantissa jumps (tests/test_names_torch.py
    checks zeros, infinities and subnormals against torch)."""
    magnitude = uniform(rng, (3, 4), dtype, 0.55, 0.95) * 2.0 ** rng.integers(-6, 7, (3, 4))
    return [Sample(((magnitude * np.where(rng.random((3, 4)) < 0.5, -1, 1)).astype(dtype),))]


def _isin_samples(rng, dtype):
    x = uniform(rng, (3, 4), dtype, -3, 3).round().astype(dtype)
    return [Sample((x, np.array([0, 1, 2], dtype))),
            Sample((x, np.arange(-2, 40).astype(dtype)), {"invert": True})]


def _gamma_samples(rng, dtype):
    return [Sample((positive(rng, (3, 4), dtype, 0.5, 3.0), positive(rng, (4,), dtype, 0.2, 4.0)))]


# ---- contractions, scatters ---------------------------------------------------------------------

def _index_reduce_reference(x, dim, index, source, reduce, include_self=True):
    out = np.moveaxis(x.copy(), dim, 0)
    source = np.moveaxis(source, dim, 0)
    combine = {"prod": np.multiply, "amax": np.maximum, "amin": np.minimum,
               "mean": np.add}[reduce]
    counts = np.ones(out.shape[0]) if include_self else np.zeros(out.shape[0])
    touched = np.zeros(out.shape[0], bool)
    for position, target in enumerate(index):
        if not include_self and not touched[target]:
            out[target] = source[position]
        else:
            out[target] = combine(out[target], source[position])
        touched[target] = True
        counts[target] += 1
    if reduce == "mean":
        shape = (-1,) + (1,) * (out.ndim - 1)
        out = np.where(touched.reshape(shape), out / np.maximum(counts, 1).reshape(shape), out)
    return np.moveaxis(out, 0, dim).astype(x.dtype)


def _index_reduce_samples(rng, dtype):
    x = positive(rng, (4, 3), dtype)
    source = positive(rng, (5, 3), dtype)
    index = np.array([0, 2, 0, 3, 2])
    return [Sample((x, 0, index, source, reduce), {"include_self": include})
            for reduce, include in (("prod", True), ("mean", True), ("amax", False),
                                    ("amin", True))]


def _written(x, src, where):
    out = x.copy()
    out[where] = src
    return out


def _as_strided_reference(x, size, stride, storage_offset=0):
    flat = np.ascontiguousarray(x).reshape(-1)
    return np.lib.stride_tricks.as_strided(flat[storage_offset:], size,
                                           [s * flat.itemsize for s in stride]).copy()


def _as_strided_scatter_reference(x, src, size, stride, storage_offset=0):
    flat = np.ascontiguousarray(x).reshape(-1).copy()
    view = np.lib.stride_tricks.as_strided(flat[storage_offset:], size,
                                           [s * flat.itemsize for s in stride])
    view[...] = src
    return flat.reshape(x.shape)


def _renorm_reference(x, p, dim, maxnorm):
    others = tuple(d for d in range(x.ndim) if d != dim)
    norm = np.sum(np.abs(x) ** p, axis=others, keepdims=True) ** (1 / p)
    return (x * np.where(norm > maxnorm, maxnorm / (norm + 1e-7), 1)).astype(x.dtype)


def _addr_reference(x, a, b, beta=1, alpha=1):
    return (beta * x + alpha * np.outer(a, b)).astype(np.result_type(x, a, b))


def _combinations_reference(x, r=2, with_replacement=False):
    choose = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    return np.array([x[list(c)] for c in choose(range(len(x)), r)]).reshape(-1, r)


def _unique_consecutive_reference(x, return_counts=False):
    flat = x.reshape(-1)
    starts = np.concatenate([[True], flat[1:] != flat[:-1]])
    values = flat[starts]
    counts = np.diff(np.append(np.flatnonzero(starts), flat.size))
    return (values, counts) if return_counts else values


def _near_diagonal(rng, dtype):
    """A matrix with well-separated singular values, near diag(3, 2, 1)."""
    return [Sample(((np.diag([3.0, 2.0, 1.0]) + uniform(rng, (3, 3), dtype, -.3, .3)).astype(
        dtype),))]


ROWS = [
    # ---- aliases.py
    OpInfo("ravel", aj.ravel, np.ravel, lambda rng, dtype: [
        Sample((np.swapaxes(uniform(rng, (3, 4), dtype), 0, 1),))], primitives=("reshape",)),
    OpInfo("adjoint", aj.adjoint, lambda a: np.swapaxes(a, -1, -2), _one((2, 3, 4)),
           dtypes=ALL_NUMERIC),
    OpInfo("narrow_copy", aj.narrow_copy, lambda a, dim, start, length: a[:, start:start + length],
           _one((3, 5), 1, 1, 3), primitives=("slice", "clone")),
    OpInfo("argwhere", aj.argwhere, np.argwhere, lambda rng, dtype: [
        Sample((uniform(rng, (3, 4), dtype, 0, 2).round().astype(dtype),))],
        dtypes=ALL_NUMERIC, differentiable=False, cuda=False),
    OpInfo("broadcast_tensors", aj.broadcast_tensors,
           lambda *arrays: tuple(np.broadcast_arrays(*arrays)),
           _pair((3, 1), (4,)), primitives=("expand",)),
    OpInfo("unravel_index", lambda index: aj.unravel_index(index, (3, 4)),
           lambda index: tuple(np.array(c) for c in np.unravel_index(index, (3, 4))),
           lambda rng, dtype: [Sample((rng.integers(0, 12, (5,)).astype(dtype),))],
           dtypes=("int32", "int64"), differentiable=False),
    OpInfo("is_nonzero", _as_tensor(aj.is_nonzero), lambda a: np.asarray(a.item() != 0),
           _one((1,)), dtypes=ALL_NUMERIC, differentiable=False, cuda=False),
    OpInfo("is_same_size", _as_tensor(aj.is_same_size),
           lambda a, b: np.asarray(a.shape == b.shape), _pair((2, 3), (2, 3)),
           differentiable=False, cuda=False),
    OpInfo("isreal", aj.isreal, np.isreal, _one((2, 3)), dtypes=ALL_NUMERIC,
           differentiable=False),
    # ---- elementwise_extra.py
    OpInfo("div_rounding_mode", aj.div, _division_reference, _division_samples,
           primitives=("floor_divide", "trunc", "where"), dtypes=ALL_NUMERIC),
    OpInfo("true_divide", aj.true_divide, np.true_divide, _pair((3,), (3,), 1, 2),
           primitives=("div",)),
    OpInfo("float_power", aj.float_power, np.float_power, lambda rng, dtype: [
        Sample((positive(rng, (3, 4), dtype), uniform(rng, (4,), dtype))),
        Sample((positive(rng, (3,), dtype), 2))], dtypes=ALL_NUMERIC, primitives=("pow",)),
    OpInfo("fmax", aj.fmax, np.fmax, lambda rng, dtype: [Sample((
        uniform(rng, (3, 4), dtype), np.where(rng.random(4) < 0.3, np.nan,
                                              uniform(rng, (4,), dtype)).astype(dtype)))],
        dtypes=FLOATING),
    OpInfo("fmin", aj.fmin, np.fmin, _pair((3, 4), (4,)), dtypes=ALL_NUMERIC),
    OpInfo("signbit", aj.signbit, np.signbit, _special_values, differentiable=False,
           primitives=("copysign",)),
    OpInfo("angle", aj.angle, lambda a: np.angle(a).astype(a.dtype if a.dtype.kind == "f"
                                                           else np.float32), _one((3, 4)),
           dtypes=ALL_NUMERIC),
    OpInfo("ldexp", aj.ldexp, lambda x, y: (x * 2.0 ** y).astype(
        np.result_type(x.dtype, np.float32)), lambda rng, dtype: [
            Sample((uniform(rng, (3, 4), dtype), rng.integers(-4, 4, (4,))))]),
    OpInfo("frexp", aj.frexp, _frexp_reference, _frexp_samples,
           primitives=("floor", "log", "pow")),
    OpInfo("isin", aj.isin, lambda x, t, invert=False: np.isin(x, t, invert=invert),
           _isin_samples, dtypes=ALL_NUMERIC, differentiable=False,
           primitives=("eq", "argsort", "searchsorted")),
    OpInfo("positive", aj.positive, lambda a: a, _one((2, 3)), dtypes=ALL_NUMERIC),
    # ---- number_functions.py
    OpInfo("gcd", aj.gcd, np.gcd, _pair((3, 4), (4,), -20, 20), primitives=("gcd",),
           dtypes=("int32", "int64"), differentiable=False),
    OpInfo("lcm", aj.lcm, np.lcm, _pair((3, 4), (4,), -20, 20), primitives=("lcm",),
           dtypes=("int32", "int64"), differentiable=False, cuda=False),
    OpInfo("igamma", aj.igamma, special.gammainc, _gamma_samples, primitives=("igamma",),
           grad_inputs=(1,)),
    OpInfo("igammac", aj.igammac, special.gammaincc, _gamma_samples, primitives=("igammac",),
           grad_inputs=(1,), cuda=False),
    # ---- contractions.py
    OpInfo("tensordot", lambda a, b: aj.tensordot(a, b, dims=([1, 2], [1, 0])),
           lambda a, b: np.tensordot(a, b, axes=([1, 2], [1, 0])), _pair((2, 3, 4), (4, 3, 2)),
           primitives=("matmul", "permute")),
    OpInfo("inner", aj.inner, np.inner, _pair((2, 3), (4, 3))),
    OpInfo("vdot", aj.vdot, np.vdot, _pair((5,), (5,)), cuda=False),
    OpInfo("addr", aj.addr, _addr_reference, lambda rng, dtype: [
        Sample((uniform(rng, (3, 4), dtype), uniform(rng, (3,), dtype), uniform(rng, (4,), dtype)),
               {"beta": 0.5, "alpha": 2.0}),
        Sample((uniform(rng, (4,), dtype), uniform(rng, (3,), dtype), uniform(rng, (4,), dtype)))]),
    OpInfo("chain_matmul", aj.chain_matmul, lambda *m: np.linalg.multi_dot(m),
           lambda rng, dtype: [Sample(tuple(uniform(rng, s, dtype) for s in
                                            ((2, 3), (3, 4), (4, 2))))], cuda=False),
    OpInfo("dist", aj.dist, lambda a, b, p=2: np.asarray(
        np.linalg.norm((a - b).reshape(-1), p), a.dtype), lambda rng, dtype: [
            Sample((uniform(rng, (3, 4), dtype), uniform(rng, (4,), dtype)), {"p": p})
            for p in (2, 3, 1)], cuda=False),
    OpInfo("renorm", aj.renorm, _renorm_reference, _one((3, 4), 2, 0, 1.5)),
    OpInfo("vander", aj.vander, lambda x, N=None, increasing=False: np.vander(
        x, N, increasing).astype(x.dtype if x.dtype.kind == "f" else np.int64),
        lambda rng, dtype: [Sample((uniform(rng, (4,), dtype),)),
                            Sample((uniform(rng, (3,), dtype), 4, True))],
        dtypes=ALL_NUMERIC, primitives=("cumprod", "flip")),
    OpInfo("combinations", aj.combinations, _combinations_reference, lambda rng, dtype: [
        Sample((uniform(rng, (4,), dtype),)), Sample((uniform(rng, (3,), dtype), 3, True))],
        dtypes=ALL_NUMERIC, primitives=("index",)),
    OpInfo("frobenius_norm", aj.frobenius_norm, lambda a, dim: np.asarray(np.sqrt(
        np.sum(a * a, axis=dim)), a.dtype), _one((3, 4), (0, 1)), cuda=False),
    OpInfo("nuclear_norm", aj.nuclear_norm, lambda a: np.asarray(
        np.linalg.norm(a, "nuc"), a.dtype), _near_diagonal,
        primitives=("linalg_svdvals",), cuda=False),
    OpInfo("norm_nuc", lambda a: aj.norm(a, "nuc"), lambda a: np.asarray(
        np.linalg.norm(a, "nuc"), a.dtype), _near_diagonal,
        cuda=False),
    # ---- scatter_views.py
    OpInfo("select_scatter", aj.select_scatter, lambda x, src, dim, index: _written(
        x, src, (slice(None), index)), lambda rng, dtype: [
            Sample((uniform(rng, (3, 4), dtype), uniform(rng, (3,), dtype), 1, -1))],
        dtypes=ALL_NUMERIC, primitives=("embed_slice", "where")),
    OpInfo("slice_scatter", aj.slice_scatter, lambda x, src, dim=0, start=None, end=None,
           step=1: _written(x, src, slice(start, end, step)), lambda rng, dtype: [
               Sample((uniform(rng, (5, 3), dtype), uniform(rng, (2, 3), dtype)),
                      {"start": 1, "end": 4, "step": 2})], dtypes=ALL_NUMERIC),
    OpInfo("diagonal_scatter", aj.diagonal_scatter, lambda x, src, offset=0: _written(
        x, src, (np.arange(len(src)), np.arange(len(src)) + offset)), lambda rng, dtype: [
            Sample((uniform(rng, (3, 4), dtype), uniform(rng, (3,), dtype), 1))],
        dtypes=ALL_NUMERIC, primitives=("embed_diagonal", "where")),
    OpInfo("index_reduce", aj.index_reduce, _index_reduce_reference, _index_reduce_samples,
           primitives=("scatter_reduce",), cuda=False),
    OpInfo("as_strided", aj.as_strided, _as_strided_reference, lambda rng, dtype: [
        Sample((uniform(rng, (3, 4), dtype), (3, 3), (3, 1), 1)),
        Sample((uniform(rng, (6,), dtype), (2, 3), (1, 2)))], dtypes=ALL_NUMERIC),
    OpInfo("as_strided_scatter", aj.as_strided_scatter, _as_strided_scatter_reference,
           lambda rng, dtype: [Sample((uniform(rng, (3, 4), dtype), uniform(rng, (2, 2), dtype),
                                       (2, 2), (4, 1), 1))],
           dtypes=ALL_NUMERIC, primitives=("index_put",)),
    # ---- statistics.py's host op
    OpInfo("unique_consecutive", aj.unique_consecutive, _unique_consecutive_reference,
           lambda rng, dtype: [Sample((rng.integers(0, 3, (10,)).astype(dtype),),
                                      {"return_counts": True})],
           dtypes=ALL_NUMERIC, differentiable=False, cuda=False),
]
