"""Op table rows for the random ops: bernoulli, normal, poisson, multinomial, binomial, the gamma
sampler of autojit.distributions (_standard_gamma) and Tensor's in-place random fills (normal_,
uniform_, exponential_, geometric_, log_normal_, cauchy_, random_, bernoulli_).

Each row sets OpInfo.seed: the drivers seed the default generators before every call, so eager,
compiled and CUDA runs draw the same numbers, and the reference draws them too, from a fresh
Generator seeded alike, in the order autojit draws (torch's stream and transforms, which
tests/test_random_stream_torch.py checks against torch's own numbers). The
gradients are torch's: zero (finite differences of a fixed draw see normal's slope in mean and
std, the one check that fails, as it does for torch.normal). normal's form with float mean and
std and a size makes no tensor from its arguments, so the CUDA driver could not move it to the
device: tests/test_random_ops.py checks it.
"""

from __future__ import annotations

import numpy as np

import autojit
from autojit import Tensor
from autojit.ops.random.gamma import standard_gamma

from . import ALL_NUMERIC, OpInfo, Sample, positive, uniform
from .random_factories import drawn, integers

SEED = 1234


def _stream():
    return autojit.Generator().manual_seed(SEED)


def _draw_dtype(dtype):
    """The uniforms of exponential_, geometric_ and cauchy_ for float16 are drawn in float32
    (ops/random/__init__.py)."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def _float_for(dtype):
    dtype = np.dtype(dtype)
    return dtype if dtype.kind == "f" else np.dtype(np.float32)


# ---- bernoulli -------------------------------------------------------------------------------

def _bernoulli_reference(x, p=None):
    if p is not None and not isinstance(p, np.ndarray):  # a float p: torch's scalar kernel
        return drawn("bernoulli", _stream(), x.shape, _float_for(x.dtype), 0, p).astype(x.dtype)
    probability = x if p is None else p
    # A float uniform per element, a double one for float64 probabilities.
    wanted = np.float64 if np.dtype(probability.dtype) == np.float64 else np.float32
    return (drawn("rand", _stream(), x.shape, wanted) < probability).astype(x.dtype)


def _bernoulli_samples(rng, dtype):
    return [
        Sample((uniform(rng, (3, 4), dtype, 0.0, 1.0),)),
        Sample((uniform(rng, (5,), dtype, 0.0, 1.0),)),
        Sample((uniform(rng, (2, 3), dtype), 0.25)),
        Sample((np.array([0.001, 0.999, 0.5, 0.25], dtype=dtype),)),
    ]


# ---- normal ----------------------------------------------------------------------------------

def _normal_reference(mean, std):
    arrays = [x for x in (mean, std) if isinstance(x, np.ndarray)]
    shape = np.broadcast_shapes(*(x.shape for x in arrays))
    dtype = np.result_type(*arrays)
    return drawn("randn", _stream(), shape, dtype) * std + mean


def _normal_samples(rng, dtype):
    return [
        Sample((uniform(rng, (3, 4), dtype), positive(rng, (3, 4), dtype))),
        Sample((uniform(rng, (2, 3), dtype), 0.5)),
        Sample((1.5, positive(rng, (4,), dtype))),
        Sample((uniform(rng, (3, 1), dtype), positive(rng, (4,), dtype))),
    ]


# ---- poisson and multinomial --------------------------------------------------------------------

def _key() -> int:
    return int(drawn("key", _stream(), (), np.int64))


def _poisson_reference(rates):
    return np.random.default_rng(_key()).poisson(rates).astype(rates.dtype)


def _poisson_samples(rng, dtype):
    return [
        Sample((positive(rng, (3, 4), dtype, 0.5, 4.0),)),
        Sample((np.array([0.01, 1.0, 30.0], dtype=dtype),)),
    ]


def _multinomial_reference(probabilities, num_samples, replacement=False):
    """torch's algorithms: argmax or topk of p / E for exponentials E drawn like p, or for
    each uniform double the first category whose cumulative probability reaches it."""
    rows = probabilities.reshape(-1, probabilities.shape[-1])
    if not replacement or num_samples == 1:
        scores = rows / drawn("exponential", _stream(), probabilities.shape,
                              probabilities.dtype, 0, 1.0).reshape(rows.shape)
        samples = np.argsort(-scores, axis=1, kind="stable")[:, :num_samples]
    else:
        cumulative = np.cumsum(rows, axis=1)
        cumulative = cumulative / cumulative[:, -1:]
        draws = drawn("rand", _stream(), (rows.shape[0], num_samples), np.float64)
        samples = np.array([[min(int(np.sum(row < value)), len(row) - 1) for value in values]
                            for row, values in zip(cumulative, draws, strict=True)])
    return samples.reshape(*probabilities.shape[:-1], num_samples).astype(np.int64)


def _multinomial_samples(rng, dtype):
    return [
        Sample((positive(rng, (5,), dtype), 3)),
        Sample((positive(rng, (3, 4), dtype), 6, True)),
        Sample((np.array([[0.0, 1.0, 0.0], [0.5, 0.0, 0.5]], dtype=dtype), 2)),
    ]


def _binomial_reference(count, prob):
    trials, p = np.broadcast_arrays(count, prob)
    samples = np.random.default_rng(_key()).binomial(trials.astype(np.int64), p)
    return samples.astype(count.dtype)


def _binomial_samples(rng, dtype):
    return [
        Sample((np.floor(positive(rng, (3, 4), dtype, 1.0, 20.0)),
                uniform(rng, (3, 4), dtype, 0.0, 1.0))),
        Sample((np.array([0.0, 5.0, 30.0], dtype=dtype), np.array([0.5], dtype=dtype))),
    ]


def _standard_gamma_reference(alpha):
    samples = np.random.default_rng(_key()).standard_gamma(alpha.astype(np.float64))
    return np.maximum(samples.astype(alpha.dtype), np.finfo(alpha.dtype).tiny)


def _standard_gamma_samples(rng, dtype):
    return [
        Sample((positive(rng, (3, 4), dtype, 0.3, 5.0),)),
        Sample((np.array([0.05, 1.0, 12.0], dtype=dtype),)),
    ]


# The implicit reparameterization gradient is the derivative of the inverse CDF at a fixed
# uniform; NumPy's rejection sampler, differenced with its draws fixed, is another function of
# the concentration (tests/test_distributions_sampling.py checks the gradient against torch's).
_GAMMA_GRADIENT = ("finite differences of the rejection sampler at fixed draws are not the "
                   "implicit reparameterization gradient")


# ---- Tensor's in-place fills ------------------------------------------------------------------

def _filled(method: str):
    """x.clone().<method>(*args): the row's function, which leaves its input as it was."""
    def fill(x: Tensor, *args):
        return getattr(x.clone(), method)(*args)

    fill.__name__ = method
    return fill


def _uniform_draw(x, low=0.0, high=1.0):
    return drawn("rand", _stream(), x.shape, _draw_dtype(_float_for(x.dtype)), low, high)


def _normal_draw(x, mean=0.0, std=1.0):
    return drawn("randn", _stream(), x.shape, x.dtype, mean, std)


def _as(values, x):
    return np.asarray(values).astype(x.dtype)


FILL_REFERENCES = {
    "normal_": lambda x, mean, std: _as(_normal_draw(x, mean, std), x),
    "uniform_": lambda x, a, b: _as(drawn("rand", _stream(), x.shape, x.dtype, a, b), x),
    "exponential_": lambda x, rate: _as(drawn("exponential", _stream(), x.shape,
                                              _draw_dtype(x.dtype), 0, rate), x),
    "geometric_": lambda x, p: _as(drawn("geometric", _stream(), x.shape, x.dtype
                                         if x.dtype.kind == "f" else np.float64, 0, p), x),
    "log_normal_": lambda x, mean, std: _as(drawn("log_normal", _stream(), x.shape, x.dtype,
                                                  mean, std), x),
    "cauchy_": lambda x, median, sigma: _as(drawn("cauchy", _stream(), x.shape, x.dtype,
                                                  median, sigma), x),
    "random_": lambda x, low, high: _as(integers(_stream(), low, high, x.shape), x),
    "bernoulli_": lambda x, p: _as(drawn("bernoulli", _stream(), x.shape, _float_for(x.dtype),
                                         0, p), x),
}
FILL_ARGUMENTS = {"normal_": (0.5, 2.0), "uniform_": (-1.0, 3.0), "exponential_": (1.5,),
                  "geometric_": (0.3,), "log_normal_": (0.0, 0.5), "cauchy_": (1.0, 0.5),
                  "random_": (-3, 7), "bernoulli_": (0.4,)}


def _fill_samples(method: str):
    def samples(rng, dtype):
        return [Sample((uniform(rng, (3, 4), dtype), *FILL_ARGUMENTS[method])),
                Sample((uniform(rng, (5,), dtype), *FILL_ARGUMENTS[method]))]

    return samples


_FILL_PRIMITIVES = ("fill", "add")
# Random numbers drawn on a GPU inside a compiled function are a graph break (docs/compiler.md):
# the drawing rows run eagerly there, with eager's numbers.
_GPU_BREAK = {"cuda": "random numbers on a GPU"}


def _fill_row(method: str, primitives: tuple, dtypes=("float32", "float64")) -> OpInfo:
    return OpInfo(f"Tensor.{method}", _filled(method), FILL_REFERENCES[method],
                  _fill_samples(method), primitives=_FILL_PRIMITIVES + primitives,
                  dtypes=dtypes, seed=SEED, grad_inputs=(0,), graph_breaks=_GPU_BREAK)


ROWS = [
    OpInfo("bernoulli", autojit.bernoulli, _bernoulli_reference, _bernoulli_samples,
           primitives=("lt", "cast", "check_index", "logical_and", "logical_not", "ge", "le",
                       "add", "fill"),
           seed=SEED, grad_inputs=(0,), graph_breaks=_GPU_BREAK),
    OpInfo("normal", autojit.normal, _normal_reference, _normal_samples,
           primitives=("mul", "add", "fill", "check_index", "ge", "logical_not", "cast"),
           seed=SEED, graph_breaks=_GPU_BREAK, expected_failures={
               "gradcheck": "torch's normal has zero gradients (NormalBackward), where finite "
                            "differences of one fixed draw see the slopes 1 in mean and the "
                            "draw in std"}),
    OpInfo("poisson", autojit.poisson, _poisson_reference, _poisson_samples,
           primitives=("poisson", "fill"), seed=SEED),
    OpInfo("multinomial", autojit.multinomial, _multinomial_reference, _multinomial_samples,
           primitives=("multinomial",), differentiable=False, seed=SEED),
    OpInfo("binomial", autojit.binomial, _binomial_reference, _binomial_samples,
           primitives=("binomial",), differentiable=False, seed=SEED),
    OpInfo("distributions._standard_gamma", standard_gamma, _standard_gamma_reference,
           _standard_gamma_samples, primitives=("standard_gamma",), seed=SEED,
           expected_failures={"gradcheck": _GAMMA_GRADIENT, "gradgradcheck": _GAMMA_GRADIENT}),
    _fill_row("normal_", ()),
    _fill_row("uniform_", ()),
    _fill_row("exponential_", ()),
    _fill_row("geometric_", ()),
    _fill_row("log_normal_", ()),
    _fill_row("cauchy_", ()),
    _fill_row("random_", ("cast",), ALL_NUMERIC),
    _fill_row("bernoulli_", (), ALL_NUMERIC),
]
