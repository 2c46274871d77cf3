"""Op table rows for the random factories: rand, randn, randint, randperm and rand_like,
randn_like, randint_like (tensor/creation.py, tensor/random.py).

Each row sets OpInfo.seed, so that every call draws the same numbers eagerly, compiled and on
the CUDA simulator, and the reference draws them too, from a fresh Generator seeded alike
through tensor/random.py's RandomDraw (torch's stream: tests/test_random_stream_torch.py pins
those numbers to torch's own). One sample of each row passes `generator=GENERATOR`, which the row's
function replaces by the device's opinfo.generator_for; `reseed` starts that one from SEED + 1,
so a factory that ignored generator= would not match its reference. A random tensor made on a
GPU, or one that requires grad, is a documented graph break under autojit.compile
(docs/compiler.md): the compiled drivers check the break and that the call still draws eager's
numbers. tests/test_op_table_factories_torch.py checks the moments of the draws and the dtypes
against torch's.
"""

from __future__ import annotations

import functools

import numpy as np

import autojit
from autojit.tensor.random import RandomDraw

from . import ALL_NUMERIC, FLOATING, GENERATOR, OpInfo, Sample, generator_for, uniform
from .factories import dtype_of

SEED = 4321
# The graph break of a random tensor that requires grad or is made on a GPU.
RANDOM_BREAK = "random numbers on a GPU, or requiring grad"


def _drawing(factory):
    """The factory, with generator=GENERATOR replaced by the generator of the call's device
    (that of the tensor a *_like factory follows, if device= does not say)."""
    @functools.wraps(factory)
    def draw(*args, generator=None, **kwargs):
        if generator is GENERATOR:
            device = kwargs.get("device")
            if device is None and args and isinstance(args[0], autojit.Tensor):
                device = args[0].device
            generator = generator_for(device)
        return factory(*args, generator=generator, **kwargs)

    return draw


def _stream(generator):
    return autojit.Generator().manual_seed(SEED + 1 if generator is GENERATOR else SEED)


def drawn(kind: str, stream, shape, dtype, low=0, high=1) -> np.ndarray:
    """A draw of `kind` (RandomDraw's) from `stream` in `dtype` (autojit's or NumPy's)."""
    if not isinstance(dtype, autojit.dtype):
        dtype = dtype_of(dtype)
    return RandomDraw(kind, tuple(shape), dtype, stream, low, high).draw()


def _shape(size) -> tuple:
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        return tuple(size[0])
    return tuple(size)


def _sizes(rng, dtype):
    given = {"dtype": dtype_of(dtype)}
    return [Sample((2, 3)),
            Sample(((3, 4),), given),
            Sample((autojit.Size([2, 1, 3]),), {**given, "generator": GENERATOR}),
            Sample(([5],), given),
            Sample(((),), given),
            Sample((2, 2), {**given, "requires_grad": True}, graph_break=RANDOM_BREAK)]


def _uniform_reference(*size, dtype=None, generator=None, requires_grad=False):
    return drawn("rand", _stream(generator), _shape(size), dtype or autojit.float32)


def _normal_reference(*size, dtype=None, generator=None, requires_grad=False):
    return drawn("randn", _stream(generator), _shape(size), dtype or autojit.float32)


def _randint_samples(rng, dtype):
    given = {"dtype": dtype_of(dtype)}
    return [Sample((0, 5, (3, 4))),
            Sample((7, (5,)), given),
            Sample((-3, 3, autojit.Size([2, 2])), {**given, "generator": GENERATOR}),
            Sample((2, 4, ()), given)]


def integers(stream, low: int, high: int, shape) -> np.ndarray:
    """randint's draw: int64 integers on [low, high)."""
    return drawn("randint", stream, shape, autojit.int64, low, high)


def _randint_reference(low, high, size=None, dtype=None, generator=None):
    if size is None:
        low, high, size = 0, low, high
    dtype = np.int64 if dtype is None else dtype.numpy
    return integers(_stream(generator), low, high, tuple(size)).astype(dtype)


def _randperm_samples(rng, dtype):
    given = {"dtype": dtype_of(dtype)}
    return [Sample((6,)), Sample((9,), given), Sample((4,), {**given, "generator": GENERATOR}),
            Sample((0,), given), Sample((1,), given)]


def _randperm_reference(n, dtype=None, generator=None):
    return drawn("randperm", _stream(generator), (n,), dtype or autojit.int64, 0, n)


def _like_samples(*bounds):
    def samples(rng, dtype):
        other = {"float32": autojit.float64, "float64": autojit.float32,
                 "int32": autojit.int64, "int64": autojit.int32}[np.dtype(dtype).name]
        found = [Sample((uniform(rng, (3, 4), dtype), *bounds)),
                 Sample((uniform(rng, (2, 1, 3), dtype), *bounds), {"dtype": other}),
                 Sample((uniform(rng, (5,), dtype), *bounds), {"generator": GENERATOR}),
                 Sample((np.asarray(uniform(rng, (), dtype)), *bounds))]
        if np.dtype(dtype).kind == "f" and other.is_floating_point:
            found.append(Sample((uniform(rng, (4,), dtype), *bounds), {"requires_grad": True},
                                graph_break=RANDOM_BREAK))
        return found

    return samples


def _like_reference(kind: str):
    def reference(x, *bounds, dtype=None, generator=None, requires_grad=False):
        wanted = dtype or dtype_of(x.dtype)
        if kind != "randint":
            return drawn(kind, _stream(generator), x.shape, wanted)
        low, high = (0, bounds[0]) if len(bounds) == 1 else bounds
        return drawn(kind, _stream(generator), x.shape, wanted, low, high)

    return reference


def _random(name, function, reference, samples, dtypes) -> OpInfo:
    # rand(..., device="cuda") is a graph break, and so is rand_like(x) of a CUDA x inside a
    # compiled function: x's device is eager's there too (ir/trace_devices.py).
    return OpInfo(name, _drawing(function), reference, samples, dtypes=dtypes,
                  differentiable=False, factory=True, seed=SEED,
                  graph_breaks={"cuda": RANDOM_BREAK})


ROWS = [
    _random("rand", autojit.rand, _uniform_reference, _sizes, FLOATING),
    _random("randn", autojit.randn, _normal_reference, _sizes, FLOATING),
    _random("randint", autojit.randint, _randint_reference, _randint_samples, ALL_NUMERIC),
    _random("randperm", autojit.randperm, _randperm_reference, _randperm_samples, ALL_NUMERIC),
    _random("rand_like", autojit.rand_like, _like_reference("rand"), _like_samples(),
            FLOATING),
    _random("randn_like", autojit.randn_like, _like_reference("randn"), _like_samples(),
            FLOATING),
    _random("randint_like", autojit.randint_like, _like_reference("randint"),
            _like_samples(-2, 5), ALL_NUMERIC),
]
