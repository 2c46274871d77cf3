"""Op table rows for the factories of tensor/creation.py that draw no random numbers: tensor,
as_tensor, zeros, ones, full, empty, eye, arange, linspace and the *_like forms.

A factory row's samples give the size as integers, as one tuple or list, as an autojit.Size,
and as () for a 0-d result, and pass the row's dtype as `dtype=` (one sample leaves it out, for
the default dtype or the inferred one); one passes requires_grad=True. The drivers check the
result against NumPy, that it is a leaf with the requires_grad asked for, compiled (the
factory inside a compiled function: its result is a constant of the graph; tests/
test_op_table_factories_torch.py takes the sizes from the arguments' shapes) and on the CUDA
simulator with device="cuda". tests/test_op_table_factories_torch.py compares the dtypes,
devices and requires_grad flags with torch's.
"""

from __future__ import annotations

import numpy as np

import autojit

from . import FLOATING, OpInfo, Sample, uniform

ALL = (*FLOATING, "int32", "int64", "bool")
NUMBERS = (*FLOATING, "int32", "int64")


def dtype_of(numpy_dtype) -> autojit.dtype:
    """The autojit dtype of a NumPy dtype (the op table's dtypes)."""
    return getattr(autojit, np.dtype(numpy_dtype).name)


def _numpy_dtype(dtype, default):
    return np.dtype(default) if dtype is None else dtype.numpy


def _shape(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size)


def _sizes(rng, dtype) -> list:
    """A factory's size in each of its forms, with the row's dtype as dtype= but in the
    first (the default dtype) and the last (requires_grad, where the dtype can require it)."""
    given = {"dtype": dtype_of(dtype)}
    samples = [Sample((2, 3)),
               Sample(((2, 3),), given),
               Sample(([4],), given),
               Sample((autojit.Size([3, 1, 2]),), given),
               Sample(((),), given),
               Sample((0, 3), given)]
    if np.dtype(dtype).kind == "f":
        samples.append(Sample((2, 2), {**given, "requires_grad": True}))
    return samples


# ---- zeros, ones, empty, full ------------------------------------------------------------------

def _filled(value):
    def reference(*size, dtype=None, requires_grad=False):
        return np.full(_shape(size), value, _numpy_dtype(dtype, np.float32))

    return reference


def _written(factory):
    """The factory's result with zeros written into it: uninitialized memory has no values
    to compare, so the row checks empty's shape, dtype and device, and that it can be
    written, through its zeros."""
    def written(*args, **kwargs):
        result = factory(*args, **kwargs)
        with autojit.no_grad():  # a leaf that requires grad is written as torch lets it be
            return result.zero_()

    written.__name__ = factory.__name__
    return written


def _full_samples(rng, dtype):
    given = {"dtype": dtype_of(dtype)}
    return [Sample(((2, 3), 1.5)),          # a float fill: the default dtype
            Sample(([4], 2)),               # an int fill: int64
            Sample(((2,), True)),           # a bool fill: bool
            Sample(((2, 3), 1), given),
            Sample((autojit.Size([2, 1]), 0), given),
            Sample(((), 1), given)] + (
        [Sample(((3,), 2.5), {**given, "requires_grad": True})]
        if np.dtype(dtype).kind == "f" else [])


def _full_reference(size, value, dtype=None, requires_grad=False):
    if dtype is None:
        default = (np.bool_ if isinstance(value, bool) else np.int64 if isinstance(value, int)
                   else np.float32)
        return np.full(tuple(size), value, default)
    return np.full(tuple(size), value).astype(dtype.numpy)


# ---- eye, arange, linspace ---------------------------------------------------------------------

def _eye_samples(rng, dtype):
    given = {"dtype": dtype_of(dtype)}
    return [Sample((3,)), Sample((2, 4), given), Sample((4, 1), given), Sample((0,), given)]


def _eye_reference(n, m=None, dtype=None, requires_grad=False):
    return np.eye(n, m, dtype=_numpy_dtype(dtype, np.float32))


def _arange_samples(rng, dtype):
    given = {"dtype": dtype_of(dtype)}
    return [Sample((5,)),                   # int arguments: int64
            Sample((1.0, 2.5, 0.5)),        # a float argument: the default dtype
            Sample((2, 11, 3), given),
            Sample((10, 0, -3), given),
            Sample((0,), given)] + (
        [Sample((0.0, 1.0, 0.25), {**given, "requires_grad": True})]
        if np.dtype(dtype).kind == "f" else [])


def _arange_reference(start, end=None, step=1, dtype=None, requires_grad=False):
    if end is None:
        start, end = 0, start
    integral = all(isinstance(v, int) for v in (start, end, step))
    values = np.arange(start, end, step, dtype=np.float64)
    return values.astype(_numpy_dtype(dtype, np.int64 if integral else np.float32))


def _linspace_samples(rng, dtype):
    given = {"dtype": dtype_of(dtype)}
    return [Sample((0, 1, 5)), Sample((-2.0, 3.0, 6), given), Sample((1, 0, 4), given),
            Sample((0, 10, 4), given), Sample((2, 3, 1), given), Sample((0, 1, 0), given)]


def _linspace_reference(start, end, steps, dtype=None, requires_grad=False):
    return np.linspace(start, end, steps).astype(_numpy_dtype(dtype, np.float32))


# ---- tensor, as_tensor ---------------------------------------------------------------------------

DATA = ([[1, 2], [3, 4]], [1.5, -2.0, 0.25], [True, False], 3, 2.5, [], [[0.5], [1]])


def _data_samples(requires_grad: bool):
    """tensor's samples (as_tensor has no requires_grad=)."""
    def samples(rng, dtype):
        given = {"dtype": dtype_of(dtype)}
        found = [Sample((data,)) for data in DATA]  # the dtype inferred
        found += [Sample((data,), given) for data in ([[1, 0], [3, 4]], [1.0, 0.0, 2.0], True)]
        if requires_grad and np.dtype(dtype).kind == "f":
            found.append(Sample(([[0.5, 1.0]],), {**given, "requires_grad": True}))
        return found

    return samples


def _inferred(data) -> np.dtype:
    """torch's dtype for Python data: bool, int64 for ints, the default dtype for floats."""
    flat = np.asarray(data, dtype=object).ravel().tolist()
    if any(isinstance(v, float) for v in flat) or not flat:
        return np.dtype(np.float32)
    if all(isinstance(v, bool) for v in flat):
        return np.dtype(np.bool_)
    return np.dtype(np.int64)


def _data_reference(data, dtype=None, requires_grad=False):
    return np.asarray(data).astype(_inferred(data) if dtype is None else dtype.numpy)


# ---- the *_like forms --------------------------------------------------------------------------

def _like_samples(*values):
    def samples(rng, dtype):
        x = uniform(rng, (3, 4), dtype)
        others = {"float32": autojit.float64, "float64": autojit.int32,
                  "int32": autojit.float32, "int64": autojit.bool, "bool": autojit.int64}
        found = [Sample((x, *values)),
                 Sample((uniform(rng, (2, 1, 3), dtype), *values),
                        {"dtype": others[np.dtype(dtype).name]}),
                 Sample((np.asarray(uniform(rng, (), dtype)), *values))]
        if np.dtype(dtype).kind == "f":
            found.append(Sample((uniform(rng, (4,), dtype), *values), {"requires_grad": True}))
        return found

    return samples


def _like_reference(value):
    def reference(x, *fill, dtype=None, requires_grad=False):
        filled = value if value is not None else fill[0]
        return np.full(x.shape, filled).astype(x.dtype if dtype is None else dtype.numpy)

    return reference


def _factory(name, function, reference, samples, dtypes=ALL) -> OpInfo:
    return OpInfo(name, function, reference, samples, dtypes=dtypes, differentiable=False,
                  factory=True)


ROWS = [
    _factory("zeros", autojit.zeros, _filled(0), _sizes),
    _factory("ones", autojit.ones, _filled(1), _sizes),
    _factory("empty", _written(autojit.empty), _filled(0), _sizes),
    _factory("full", autojit.full, _full_reference, _full_samples),
    _factory("eye", autojit.eye, _eye_reference, _eye_samples),
    _factory("arange", autojit.arange, _arange_reference, _arange_samples, NUMBERS),
    _factory("linspace", autojit.linspace, _linspace_reference, _linspace_samples, NUMBERS),
    _factory("tensor", autojit.tensor, _data_reference, _data_samples(True)),
    _factory("as_tensor", autojit.as_tensor, _data_reference, _data_samples(False)),
    _factory("zeros_like", autojit.zeros_like, _like_reference(0), _like_samples()),
    _factory("ones_like", autojit.ones_like, _like_reference(1), _like_samples()),
    _factory("empty_like", _written(autojit.empty_like), _like_reference(0), _like_samples()),
    _factory("full_like", autojit.full_like, _like_reference(None), _like_samples(2)),
]
