"""Op table rows for the bitwise primitives of ops/elementwise/bitwise.py.

Samples cover same shapes, broadcasting, 0-d tensors and Python ints on either side, in bool
and the integer dtypes (uint8 included: its shifts and NOT differ from the signed ones). Shift
amounts include negative ones and ones past the width, where the NumPy reference spells out
torch's rule (0, or the sign for a signed right shift). hash_tensor's row hashes floats
(NaN, infinities and signed zeros among them), integers and bools over every dim form torch's
samples take, its NumPy reference written from torch's docstring.
"""

from __future__ import annotations

import numpy as np

import autojit

from . import OpInfo, Sample, uniform

INTEGERS = ("uint8", "int8", "int16", "int32", "int64")


def _values(rng, shape, dtype):
    info = np.iinfo(dtype) if np.dtype(dtype).kind in "iu" else None
    if info is None:
        return np.asarray(uniform(rng, shape, dtype))
    return rng.integers(max(info.min, -1000), min(info.max, 1000), size=shape,
                        endpoint=True).astype(dtype)


def _binary_samples(rng, dtype):
    number = True if np.dtype(dtype).kind == "b" else 6
    return [Sample((_values(rng, (3, 4), dtype), _values(rng, (3, 4), dtype))),
            Sample((_values(rng, (3, 1), dtype), _values(rng, (4,), dtype))),
            Sample((_values(rng, (2, 3), dtype), _values(rng, (), dtype))),
            Sample((_values(rng, (2, 3), dtype), number)),
            Sample((number, _values(rng, (2, 3), dtype)))]


def _shift_samples(rng, dtype):
    width = 8 * np.dtype(dtype).itemsize
    low = 0 if np.dtype(dtype).kind == "u" else -2
    amounts = rng.integers(low, width + 3, size=(3, 4)).astype(dtype)
    return [Sample((_values(rng, (3, 4), dtype), amounts)),
            Sample((_values(rng, (3, 1), dtype), amounts[0])),
            Sample((_values(rng, (2, 3), dtype), 3)),
            Sample((5, amounts))]


def _shift_reference(left: bool):
    def reference(x, y):
        dtype = x.dtype if isinstance(x, np.ndarray) else y.dtype
        x, y = np.asarray(x).astype(dtype), np.asarray(y).astype(dtype)
        width = 8 * dtype.itemsize
        outside = (y < 0) | (y >= width)
        safe = np.where(outside, 0, y).astype(dtype)
        if left:
            return np.where(outside, 0, x << safe).astype(dtype)
        if dtype.kind == "i":
            return x >> np.where(outside, width - 1, y).astype(dtype)
        return np.where(outside, 0, x >> safe).astype(dtype)

    return reference


def _binary(name, reference):
    return OpInfo(name=name, function=getattr(autojit, name), reference=reference,
                  samples=_binary_samples, primitives=(name,), dtypes=("bool", *INTEGERS),
                  differentiable=False)


def _hash_samples(rng, dtype):
    if np.dtype(dtype).kind == "f":
        x = uniform(rng, (3, 4, 2), dtype).astype(dtype)
        x.reshape(-1)[:5] = [np.nan, np.inf, -np.inf, 0.0, -0.0]
    else:
        x = _values(rng, (3, 4, 2), dtype)
    return [Sample((x,)), Sample((x, 1)), Sample((x, (0, -1)), {"keepdim": True}),
            Sample((x,), {"dim": [2]}), Sample((x[:1, :1, :1].reshape(()),)),
            Sample((x[:0], 1))]


def _hash_reference(x, dim=None, keepdim=False):
    """torch's docstring: each element upcast to its 64-bit float or integer type, read as
    uint64 bits, the bits xor-ed together."""
    x = np.asarray(x)
    bits = (x.astype(np.float64) if x.dtype.kind == "f" else
            x.astype(np.int64)).view(np.uint64)
    axis = None if dim is None else tuple(dim) if isinstance(dim, (tuple, list)) else dim
    return np.asarray(np.bitwise_xor.reduce(bits, axis=axis, keepdims=keepdim))


ROWS = [
    _binary("bitwise_and", np.bitwise_and),
    _binary("bitwise_or", np.bitwise_or),
    _binary("bitwise_xor", np.bitwise_xor),
    OpInfo(name="bitwise_not", function=autojit.bitwise_not, reference=np.invert,
           samples=lambda rng, dtype: [Sample((_values(rng, (3, 4), dtype),)),
                                       Sample((_values(rng, (), dtype),))],
           primitives=("bitwise_not",), dtypes=("bool", *INTEGERS), differentiable=False),
    OpInfo(name="bitwise_left_shift", function=autojit.bitwise_left_shift,
           reference=_shift_reference(True), samples=_shift_samples,
           primitives=("bitwise_left_shift",), dtypes=INTEGERS, differentiable=False),
    OpInfo(name="bitwise_right_shift", function=autojit.bitwise_right_shift,
           reference=_shift_reference(False), samples=_shift_samples,
           primitives=("bitwise_right_shift",), dtypes=INTEGERS, differentiable=False),
    # Not differentiable (a uint64 result); no CUDA row: uint64 tensors stay on the CPU.
    OpInfo(name="hash_tensor", function=autojit.hash_tensor, reference=_hash_reference,
           samples=_hash_samples, primitives=("hash_tensor",),
           dtypes=("bool", "float32", "float64", *INTEGERS), differentiable=False, cuda=False),
]
