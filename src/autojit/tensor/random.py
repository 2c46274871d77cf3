"""Random draws: how one random array is made (RandomDraw), eagerly or, inside a compiled
function, as a "random" graph input drawn anew on every call; and randperm.

Every random tensor of autojit comes from a RandomDraw on a Generator (generator.py): the
factories of creation.py (rand, randn, randint and their *_like forms), randperm here, and the
random ops of ops/random/__init__.py, which build bernoulli, normal and the in-place fills from
uniform and normal draws, and draw a 64-bit key for the samplers whose draws depend on tensor data
(multinomial, poisson). Eagerly a draw runs at once; while tracing it becomes a graph input
(ir/trace.py `random_input`) that the executable fills by calling `draw()` on each run, in the
order the function drew them, so that the same seed gives the same numbers eagerly and compiled
and a user's Generator advances exactly as eager advances it.
"""

from __future__ import annotations

import math
import numbers

import numpy as np

from . import dtypes
from . import generator as generator_module
from . import torch_stream as stream
from .device import check_device, runtime
from .generator import resolve
from .graph_break import graph_break
from .meta import MetaArray
from .state import SPECIAL, state
from .tensor import Tensor, plain_tensor

# torch's names of the dtypes, in its "not implemented for 'Long'" messages.
TORCH_NAMES = dtypes.SCALAR_TYPE_NAMES
# ops/batching.py installs the draw of a batch of random tensors inside vmap here.
BATCHED_DRAW = None


class RandomDraw:
    """How to draw one random array: a compiled function's "random" input.

    kind: "rand" (uniform on [low, high)), "randn" (normal of mean `low` and std `high`),
    "randint" (integers on [low, high)), "randperm" (a permutation of range(high)),
    "bernoulli" (1 with probability `high`, else 0), "exponential" (of rate `high`), "cauchy"
    (median `low`, scale `high`), "geometric" (success probability `high`), "log_normal" (of
    a normal of mean `low` and std `high`) or "key" (a 0-d int64 seed for a sampler
    op, or one per example of a vmap). `generator` is the generator drawn from
    (generator.resolve), read on each draw. The numbers are torch's for the same seed
    (torch_stream.py), the parameters applied as torch's kernels apply them.
    """

    def __init__(self, kind: str, shape: tuple, dtype: dtypes.DType, generator,
                 low=0, high=1):
        self.kind, self.shape, self.dtype = kind, shape, dtype
        self.generator, self.low, self.high = generator, low, high

    def draw(self) -> np.ndarray:
        rng, numpy_dtype, shape = self.generator, self.dtype.numpy, self.shape
        if self.dtype.category == dtypes.COMPLEX and self.kind in ("rand", "randn"):
            # torch's: the real and imaginary parts drawn in turn (its view_as_real), each
            # uniform, or each normal of std / sqrt(2) so that the complex samples have the
            # variance std^2.
            high = self.high / math.sqrt(2) if self.kind == "randn" else self.high
            parts = RandomDraw(self.kind, (*shape, 2), self.dtype.to_real(), rng, self.low,
                               high).draw()
            if self.dtype is dtypes.complex32:  # float16 parts, stored as complex64
                parts = parts.astype(np.float32)
            return np.ascontiguousarray(parts).view(numpy_dtype)[..., 0]
        count = math.prod(shape)
        if self.kind in ("rand", "randn") and self.dtype in _REDUCED:
            return _reduced_draw(self)
        if self.kind == "rand":
            return uniform_array(rng, shape, numpy_dtype, self.low, self.high)
        if self.kind == "randn":
            return normal_array(rng, shape, numpy_dtype, self.low, self.high)
        if self.kind == "randint":
            values = stream.integers(rng, count, self.low, self.high - self.low)
            return values.reshape(shape).astype(numpy_dtype, copy=False)
        if self.kind == "randperm":
            return stream.permutation(rng, self.high).astype(numpy_dtype, copy=False)
        if self.kind in _DOUBLE_KINDS:  # computed in double, rounded to the dtype
            values = _DOUBLE_KINDS[self.kind](self, count)
            return values.reshape(shape).astype(numpy_dtype)
        keys = (stream.words64(rng, count) >> np.uint64(1)).astype(np.int64)
        return keys.reshape(shape)  # one key per example inside vmap (randomness="different")

    def __repr__(self) -> str:
        return f"RandomDraw({self.kind}, {list(self.shape)}, {self.dtype.name})"


_REDUCED = (dtypes.float16, dtypes.bfloat16)
# The kinds torch's kernels compute in double from float64 uniforms (torch_stream.py).
_DOUBLE_KINDS = {
    "bernoulli": lambda draw, count: stream.bernoulli(draw.generator, count, draw.high),
    "exponential": lambda draw, count: stream.exponential(draw.generator, count, draw.high),
    "cauchy": lambda draw, count: stream.cauchy(draw.generator, count, draw.low, draw.high),
    "geometric": lambda draw, count: stream.geometric(draw.generator, count, draw.high),
    "log_normal": lambda draw, count: stream.log_normal(
        draw.generator, count, draw.low, draw.high, getattr(draw.generator, "_normal_cache",
                                                            None)),
}


def _round(values: np.ndarray, dtype: dtypes.DType) -> np.ndarray:
    """float32 values rounded to float16 or bfloat16 (in bfloat16's float32 storage)."""
    if dtype is dtypes.bfloat16:
        return dtypes.round_to_bfloat16(values)
    return values.astype(np.float16)


def _reduced_draw(draw: RandomDraw) -> np.ndarray:
    """rand or randn of float16 or bfloat16, as torch's kernels draw them: float32 values
    rounded, a uniform that rounds up to `to` given as `from`, and the normal of 16 or more
    elements drawn in blocks (torch_stream.normal's `reduced`)."""
    count = math.prod(draw.shape)
    if draw.kind == "rand":
        values = _round(stream.uniform(draw.generator, count, np.float32, draw.low, draw.high),
                        draw.dtype)
        high = _round(np.array([draw.high], np.float32), draw.dtype)[0]
        values[values == high] = _round(np.array([draw.low], np.float32), draw.dtype)[0]
    else:
        values = _round(stream.normal(draw.generator, count, np.float32, draw.low, draw.high,
                                      getattr(draw.generator, "_normal_cache", None),
                                      reduced=True), draw.dtype)
    return values.reshape(draw.shape)


def uniform_array(rng, shape: tuple, numpy_dtype, low: float = 0.0,
                  high: float = 1.0) -> np.ndarray:
    """rand's values, uniform on [low, high), as torch draws them (torch_stream.uniform)."""
    return stream.uniform(rng, math.prod(shape), numpy_dtype, low, high).reshape(shape)


def normal_array(rng, shape: tuple, numpy_dtype, mean: float = 0.0,
                 std: float = 1.0) -> np.ndarray:
    """randn's values, normal of the given mean and std, as torch draws them for a
    contiguous tensor (torch_stream.normal)."""
    values = stream.normal(rng, math.prod(shape), numpy_dtype, mean, std,
                           getattr(rng, "_normal_cache", None))
    return values.reshape(shape)


def eager_randint(low: int, high: int, size: tuple) -> Tensor | None:
    """randint(low, high, size) of int64 from the CPU's default generator, drawn at once, for
    a caller that found nothing else asked (no generator, dtype, device or requires_grad, no
    default device set, the dispatch state not SPECIAL) and low and high Python ints; None
    where the general path must run (an extent not a non-negative int, an empty span). The
    numbers are RandomDraw's: the same stream."""
    span = high - low
    if span <= 0:
        return None
    for extent in size:
        if extent.__class__ is not int or extent < 0:
            return None
    values = stream.integers(generator_module.default_generator, math.prod(size), low, span)
    return plain_tensor(values.reshape(size), dtypes.int64)


# The vmap randomness modes that refuse a draw, with their messages: torch.func.vmap's
# randomness="error", and "legacy", torch's first vmap (autograd/vmap.py's legacy_vmap)
_REFUSED_IN_VMAP = {
    "error": "vmap: called random operation while in randomness error mode. Please either use "
             "the 'same' or 'different' randomness flags on vmap or perform the randomness "
             "operation out of vmap",
    "legacy": "vmap: We do not yet support calling random operations inside of vmap. Please "
              "perform random operations outside of vmap as a workaround",
}


def random_tensor(draw: RandomDraw, device=None, requires_grad: bool = False) -> Tensor:
    """The tensor of one draw: drawn now, or while tracing a symbolic tensor standing for a
    fresh draw on every call of the compiled function."""
    if state.dispatch != SPECIAL and not requires_grad and (device is None or
                                                            device.type == "cpu"):
        # Eager on the CPU, outside vmap and tracing (both make the state SPECIAL).
        return plain_tensor(draw.draw(), draw.dtype)
    refusal = _REFUSED_IN_VMAP.get(state.vmap_randomness)
    if refusal is not None:
        raise RuntimeError(refusal)
    if state.vmap_levels and BATCHED_DRAW is not None:
        def draw_batch(sizes):
            batch = RandomDraw(draw.kind, sizes + tuple(draw.shape), draw.dtype, draw.generator,
                               draw.low, draw.high)
            return _draw(batch, device, requires_grad)

        found = BATCHED_DRAW(draw_batch)
        if found is not None:
            return found
    return _draw(draw, device, requires_grad)


def _draw(draw: RandomDraw, device, requires_grad: bool) -> Tensor:
    if state.tracer is not None:
        if requires_grad or (device is not None and device.type != "cpu"):
            graph_break(f"autojit.{draw.kind}() (random numbers on a GPU, or requiring grad)")
        return Tensor._symbolic(state.tracer.random_input(draw))
    if device is not None and device.type == "meta":  # no values: nothing is drawn
        data = MetaArray(draw.shape, draw.dtype.numpy)
    elif state.profiler is not None and draw.kind in _FILLS:
        data = _profiled_draw(draw, state.profiler)
    else:
        data = draw.draw()
    if device is not None and device.type != "cpu":  # drawn on the host, then copied
        data = runtime(device.type).from_host(data, device.index or 0)
    result = Tensor._make(data, draw.dtype)
    if requires_grad:
        if draw.dtype.category < dtypes.FLOATING:
            raise RuntimeError("Only Tensors of floating point and complex dtype can require "
                               "gradients")
        result.requires_grad_(True)
    return result


# torch's factories are an empty tensor filled in place: a profile shows both under the
# factory's event (aten::randn -> aten::empty, aten::normal_), as here.
_FILLS = {"rand": "aten::uniform_", "randn": "aten::normal_", "randint": "aten::random_"}


def _profiled_draw(draw: RandomDraw, profiler) -> np.ndarray:
    """draw.draw() as torch's factory runs it, timed as its two events: the allocation of
    the result (aten::empty), then the draw written into it (the fill)."""
    dtype = draw.dtype.numpy
    data = profiler.forward_event("aten::empty", (), lambda: np.empty(draw.shape, dtype))

    def fill():
        data[...] = draw.draw()
        return data

    return profiler.forward_event(_FILLS[draw.kind], (), fill)


def random_key(generator, name: str, device=None) -> Tensor:
    """A 0-d int64 key drawn from `generator` (the device's default for None): the seed of one
    call of a sampler op whose draws depend on tensor data (ops/random/__init__.py)."""
    rng = resolve(generator, name, device)
    return random_tensor(RandomDraw("key", (), dtypes.int64, rng))


def check_floating(dtype: dtypes.DType, kernel: str) -> None:
    """torch's error for a floating-point distribution asked for another dtype (complex ones
    are drawn part by part)."""
    if dtype.category < dtypes.FLOATING or dtype.float8 is not None:
        raise dtypes.kernel_error(kernel, dtype)


def check_integer_range(low: int, high: int, dtype: dtypes.DType) -> None:
    """torch's errors for integers on [low, high) that `dtype` cannot hold."""
    if low >= high:
        raise RuntimeError(f"random_ expects 'from' to be less than 'to', but got from={low} "
                           f">= to={high}")
    name = {"bool": "bool", "int32": "int", "float16": "c10::Half", "uint8": "unsigned char",
            "int8": "signed char", "int16": "short int"}.get(dtype.name) or \
        dtypes.C_TYPE_NAMES.get(dtype.name)
    if dtype is dtypes.uint64:
        for bound in (low, high):  # torch reads the bounds as int64 first
            if not -2 ** 63 <= bound < 2 ** 63:
                raise ValueError("Overflow when unpacking long long")
    if dtype is dtypes.bool_:
        bounds = (0, 1)
    elif dtype in (dtypes.uint8, dtypes.int8, dtypes.int16, dtypes.int32) or dtype.limited:
        info = np.iinfo(dtype.numpy)
        bounds = (int(info.min), int(info.max))
    elif dtype is dtypes.float16:
        bounds = (-(1 << 11), 1 << 11)
    else:
        return
    if not bounds[0] <= low <= bounds[1]:
        raise RuntimeError(f"from is out of bounds for {name}")
    if not bounds[0] <= high - 1 <= bounds[1]:
        raise RuntimeError(f"to - 1 is out of bounds for {name}")


def randperm(n, *, generator=None, dtype=None, device=None, requires_grad: bool = False,
             layout=None, pin_memory: bool = False) -> Tensor:
    """A random permutation of the integers 0 to n - 1 (int64 unless dtype= says otherwise).

    >>> import autojit
    >>> _ = autojit.manual_seed(0)
    >>> sorted(autojit.randperm(5).tolist())
    [0, 1, 2, 3, 4]
    """
    device = check_device(device)
    dtype = dtypes.int64 if dtype is None else dtypes.dtype_argument(dtype, "randperm")
    if dtype.limited:
        raise dtypes.kernel_error("randperm", dtype)
    if isinstance(n, Tensor) and n.numel() == 1 and not n.dtype.is_floating_point and \
            not n.dtype.is_complex and n.dtype is not dtypes.bool_:
        n = n.item()  # a one-element integer tensor, as torch reads it (its __index__)
    if isinstance(n, bool) or not isinstance(n, numbers.Integral):
        raise TypeError(f"randperm(): argument 'n' (position 1) must be int, not "
                        f"{type(n).__name__}")
    n = int(n)
    if n < 0:
        raise RuntimeError(f"Trying to create tensor with negative dimension {n}: [{n}]")
    rng = resolve(generator, "randperm", device)
    return random_tensor(RandomDraw("randperm", (n,), dtype, rng, 0, n), device, requires_grad)
