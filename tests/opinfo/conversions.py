"""Op table rows for Tensor's conversion and factory methods (ops/tensor_methods.py,
ops/factories.py): the dtype methods (float, double, half, bfloat16, int, long, short, char,
byte, bool), type and type_as, and new_zeros, new_ones, new_full, new_empty, new_tensor.

The dtype methods between floating dtypes are differentiable (gradcheck with a wide step: the
result is rounded to the narrower dtype, see OpInfo.grad_eps); the others are not. float16 and
bfloat16 do not run on CUDA (docs/cuda.md), and a cast to bfloat16 is a documented graph break
under autojit.compile (docs/notes/bfloat16.md). The new_* methods are factories: their result
is a new leaf with x's dtype and device unless dtype= says otherwise.
"""

from __future__ import annotations

import numpy as np

import autojit

from . import ALL_NUMERIC, FLOATING, OpInfo, Sample, uniform
from .factories import dtype_of

BFLOAT16_BREAK = "cast on bfloat16 tensors"


def _method(name: str):
    def call(x, *args, **kwargs):
        return getattr(x, name)(*args, **kwargs)

    call.__name__ = name
    return call


def _bfloat16(values: np.ndarray) -> np.ndarray:
    """float32 values rounded to bfloat16 (to nearest even), as float32 (autojit's storage)."""
    bits = np.asarray(values, np.float32).view(np.uint32).astype(np.uint64)
    rounded = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return rounded.astype(np.uint32).view(np.float32)


# ---- the dtype methods ---------------------------------------------------------------------------

def _cast_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype, -3.0, 3.0),)),
            Sample((uniform(rng, (2, 1, 3), dtype, -100.0, 100.0),)),
            Sample((np.asarray(uniform(rng, (), dtype)),))]


def _small_cast_samples(rng, dtype):
    """Values within [-3, 3): a half or bfloat16 result is then close enough to x for the
    finite differences of gradcheck."""
    return [Sample((uniform(rng, (3, 4), dtype, -3.0, 3.0),)),
            Sample((np.asarray(uniform(rng, (), dtype)),))]


def _cast_row(name: str, target, differentiable: bool, samples=_cast_samples,
              **options) -> OpInfo:
    def reference(x):
        return x.astype(target)

    return OpInfo(f"Tensor.{name}", _method(name), reference, samples,
                  primitives=options.pop("primitives", ("cast",)),
                  dtypes=options.pop("dtypes", ALL_NUMERIC),
                  differentiable=differentiable, **options)


def _read_bfloat16(x):
    """x.bfloat16(), read back as float32 (exact): NumPy has no bfloat16 to compare with."""
    return x.bfloat16().float()


def _bfloat16_reference(x):
    return _bfloat16(x.astype(np.float32))


# ---- type and type_as ----------------------------------------------------------------------------

def _type_samples(rng, dtype):
    """type's dtype forms: a type or its name also names a device (the CPU's here), which the
    CUDA driver's calls would leave (tests/test_conversions_torch.py checks those forms)."""
    x = uniform(rng, (3, 4), dtype)
    return [Sample((x, autojit.float64)), Sample((x, autojit.int32)),
            Sample((x, autojit.float32)), Sample((x, autojit.bool))]


def _type_reference(x, target):
    return x.astype(target.numpy)


def _type_as_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype), uniform(rng, (2,), "float64"))),
            Sample((uniform(rng, (2, 3), dtype), uniform(rng, (1,), "int32"))),
            Sample((uniform(rng, (4,), dtype), uniform(rng, (2, 2), "float32")))]


# ---- the new_* factories -----------------------------------------------------------------------

def _new_samples(*values):
    def samples(rng, dtype):
        x = uniform(rng, (3,), dtype)
        other = autojit.int64 if np.dtype(dtype).kind == "f" else autojit.float64
        found = [Sample((x, 2, 3, *values) if not values else (x, (2, 3), *values)),
                 Sample((x, (4,), *values), {"dtype": other}),
                 Sample((x, autojit.Size([2, 1, 2]), *values)),
                 Sample((x, (), *values))]
        if np.dtype(dtype).kind == "f":
            found.append(Sample((x, [2], *values), {"requires_grad": True}))
        return found

    return samples


def _new_reference(value):
    def reference(x, *size, dtype=None, requires_grad=False):
        fill = value
        if value is None:  # new_full(size, fill_value)
            size, fill = size[:-1], size[-1]
        shape = tuple(size[0]) if len(size) == 1 and isinstance(size[0], (tuple, list)) \
            else size
        return np.full(shape, fill).astype(x.dtype if dtype is None else dtype.numpy)

    return reference


def _new_tensor_samples(rng, dtype):
    x = uniform(rng, (3,), dtype)
    found = [Sample((x, [[1, 2], [3, 4]])), Sample((x, [1.5, -2.5]), {"dtype": autojit.int32}),
             Sample((x, 3)), Sample((x, [True, False]), {"dtype": dtype_of(dtype)})]
    if np.dtype(dtype).kind == "f":
        found.append(Sample((x, [0.5]), {"requires_grad": True}))
    return found


def _new_tensor_reference(x, data, dtype=None, requires_grad=False):
    return np.asarray(data).astype(x.dtype if dtype is None else dtype.numpy)


def _written(name: str):
    """new_empty's result with zeros written into it (as opinfo/factories.py's empty)."""
    def written(x, *args, **kwargs):
        result = getattr(x, name)(*args, **kwargs)
        with autojit.no_grad():
            return result.zero_()

    written.__name__ = name
    return written


def _new_row(name: str, function, reference, samples) -> OpInfo:
    return OpInfo(f"Tensor.{name}", function, reference, samples, dtypes=ALL_NUMERIC,
                  differentiable=False, factory=True)


# Casts between floating dtypes: a wide step, since the result is rounded.
_ROUNDED = {"grad_eps": 0.5, "dtypes": FLOATING}

ROWS = [
    _cast_row("float", np.float32, True, grad_eps=1e-2),
    _cast_row("double", np.float64, True, primitives=()),  # of float64: x itself
    _cast_row("half", np.float16, True, _small_cast_samples, grad_atol=5e-3, cuda=False,
              **_ROUNDED),
    OpInfo("Tensor.bfloat16", _read_bfloat16, _bfloat16_reference, _small_cast_samples,
           primitives=("cast",), grad_atol=2e-2, cuda=False,
           # a cast autograd records breaks the graph; one it does not record compiles
           graph_breaks={"cpu": BFLOAT16_BREAK, "cpu forward": None}, **_ROUNDED),
    _cast_row("int", np.int32, False),
    _cast_row("long", np.int64, False),
    _cast_row("short", np.int16, False),
    _cast_row("char", np.int8, False),
    _cast_row("byte", np.uint8, False, dtypes=("int32", "int64")),
    _cast_row("bool", np.bool_, False),
    OpInfo("Tensor.type", _method("type"), _type_reference, _type_samples, primitives=("cast",),
           grad_eps=1e-2),
    OpInfo("Tensor.type_as", _method("type_as"), lambda x, other: x.astype(other.dtype),
           _type_as_samples, primitives=("cast",), grad_inputs=(0,), grad_eps=1e-2),
    _new_row("new_zeros", _method("new_zeros"), _new_reference(0), _new_samples()),
    _new_row("new_ones", _method("new_ones"), _new_reference(1), _new_samples()),
    _new_row("new_empty", _written("new_empty"), _new_reference(0), _new_samples()),
    _new_row("new_full", _method("new_full"), _new_reference(None), _new_samples(2)),
    _new_row("new_tensor", _method("new_tensor"), _new_tensor_reference, _new_tensor_samples),
]
