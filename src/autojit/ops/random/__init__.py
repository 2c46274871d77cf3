"""Random ops on tensors: bernoulli, normal, poisson, multinomial, and Tensor's in-place random
fills (normal_, uniform_, bernoulli_, exponential_, random_, geometric_, log_normal_, cauchy_).

This package holds the random ops: this module's, and the gamma and binomial samplers with
their reparameterization gradients (gamma.py). It sits on the registry (ops/registry.py) and
draws from tensor/random.py's generators.

Every number comes from a draw (tensor/random.py) on a Generator (tensor/generator.py): eagerly
at once, in a compiled function as a "random" graph input drawn anew on each call, in eager's
order, so a seeded generator gives the same numbers both ways and advances by the same amount.
bernoulli, normal and the fills are composites of a uniform or normal draw; their checks on
tensor data (a probability outside [0, 1], a negative std) go through `check_index` with a
form of their own, so a compiled kernel reports them as eager does. poisson and multinomial,
whose draws depend on the data, are primitives: poisson's impl samples with a NumPy generator
seeded by a 64-bit key drawn from the generator, the key being the draw; multinomial's takes
torch's draws (exponentials or uniforms) and computes torch's samples from them.

Gradients are torch's: bernoulli, normal and poisson of tensors that require grad give results
that require grad, with zero gradients (torch's BernoulliBackward0, NormalBackward, ...);
multinomial's indices and the fills' values have none.
"""

from __future__ import annotations

import numbers

import numpy as np

from ...tensor import dtypes
from ...tensor.device import check_device
from ...tensor.generator import resolve
from ...tensor.graph_break import graph_break
from ...tensor.random import (
    TORCH_NAMES,
    RandomDraw,
    check_floating,
    check_integer_range,
    random_key,
    random_tensor,
)
from ...tensor.state import state
from ...tensor.tensor import Tensor
from .. import batching, inplace
from .. import elementwise as ew
from ..indexing.checks import check_index
from ..registry import NOT_DIFFERENTIABLE, Extern, OpError, bind, define_op
from ..shape_rules import broadcast_shapes

# The C++ type names torch's Cauchy error uses.
_CPP_NAMES = {"int32": "int", "int64": "long int", "bool": "bool", "uint16": "short unsigned int",
              "uint32": "unsigned int", "uint64": "long unsigned int"}


def _draw(kind: str, shape, dtype: dtypes.DType, generator, name: str, device,
          low=0, high=1) -> Tensor:
    """One draw on `device` from `generator` (the device's default for None); low and high
    are RandomDraw's parameters of the kind."""
    rng = resolve(generator, name, device)
    return random_tensor(RandomDraw(kind, tuple(shape), dtype, rng, low, high), device)


def _draw_dtype(dtype: dtypes.DType) -> dtypes.DType:
    """The dtype exponential_'s values and bernoulli_'s 0/1 are drawn in: float32 for a
    float16 result, which the fill then casts."""
    return dtypes.float32 if dtype is dtypes.float16 else dtype


def _zero_gradient(result: Tensor, *inputs) -> Tensor:
    """`result`, connected to the inputs that require grad by a zero gradient, as torch's
    random ops are (their backward nodes give zeros): adding `fill(input, 0)`, whose
    derivative is 0, changes no value."""
    if not state.grad_enabled:
        return result
    for x in inputs:
        if isinstance(x, Tensor) and x.requires_grad:
            result = result + ew.fill_like(x, 0).to(result.dtype)
    return result


def _checked_values(values: Tensor, bad: Tensor, form: str) -> Tensor:
    """`values` once no entry of the mask `bad` is set, else torch's error of `form`
    (index_checks.FORMS). The check's result, zero everywhere, is added in, so that every
    consumer of `values` runs after it and a compiled kernel keeps it."""
    flag = check_index(ew.cast(bad, dtypes.int64), 1, form)
    return values + ew.cast(flag, values.dtype)


# ---- bernoulli ---------------------------------------------------------------------------------

def bernoulli(input: Tensor, p=None, *, generator=None, out=None) -> Tensor:  # noqa: A002
    """0 or 1 for each element, 1 with probability `input` (or `p`), in input's dtype."""
    if not isinstance(input, Tensor):
        raise TypeError(f"bernoulli(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if out is not None:
        # torch's bernoulli(x, out=out) is out.bernoulli_(x): draws of any dtype, and out may
        # be x itself (not a broadcast view: inplace.write_storage refuses that).
        from ..out_argument import check_no_grad, check_out_type, write_out

        check_out_type("bernoulli", out)
        check_no_grad("bernoulli", (input, out))
        return write_out("bernoulli", out, bernoulli(input, p, generator=generator))
    if p is None:
        check_floating(input.dtype, "bernoulli_tensor_cpu_self_" if input.dtype.limited else
                       "bernoulli_tensor_cpu_p_")
        probability = input
    else:
        probability = p
    return _bernoulli_like(input, probability, generator, "bernoulli")


def _bernoulli_like(target: Tensor, p, generator, name: str) -> Tensor:
    """0/1 values shaped and typed like `target`, 1 with probability p (a float or a tensor
    broadcast to target's shape)."""
    if target.dtype.limited:
        raise dtypes.kernel_error("bernoulli_tensor_cpu_self_" if isinstance(p, Tensor) else
                                  "bernoulli_scalar_cpu_", target.dtype)
    if isinstance(p, Tensor):
        check_floating(p.dtype, "bernoulli_tensor_cpu_p_")
        # torch's: a float uniform for each element, a double one for a float64 p.
        draw_dtype = dtypes.float64 if p.dtype is dtypes.float64 else dtypes.float32
        shape = tuple(target.shape)
        uniform = _draw("rand", shape, draw_dtype, generator, name, target.device)
        bad = ew.logical_not(ew.logical_and(p >= 0, p <= 1))
        uniform = _checked_values(uniform, bad, "probability")
        kept = uniform < p
        if tuple(kept.shape) != shape:
            raise RuntimeError(f"{name}: the probability's shape {list(p.shape)} does not "
                               f"broadcast to {list(shape)}")
        return _zero_gradient(ew.cast(kept, target.dtype), p)
    if not isinstance(p, numbers.Real) or not 0 <= p <= 1:
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    return bernoulli_noise(target.shape, target.dtype, p, target.device, generator, name)


def bernoulli_noise(shape, dtype: dtypes.DType, p: float, device=None, generator=None,
                    name: str = "bernoulli_") -> Tensor:
    """0 or 1 of `dtype`, 1 with probability p: torch's `empty(shape).bernoulli_(p)`, the noise
    dropout multiplies by (a double uniform below p for each element)."""
    kept = _draw("bernoulli", tuple(shape), _draw_dtype(_float_for(dtype)), generator, name,
                 device, 0, p)
    return ew.cast(kept, dtype)


def _float_for(dtype: dtypes.DType) -> dtypes.DType:
    return dtype if dtype.is_floating_point else dtypes.get_default_dtype()


# ---- normal ------------------------------------------------------------------------------------

def normal(mean=0.0, std=1.0, size=None, *, generator=None, out=None, dtype=None, device=None,
           requires_grad: bool = False, layout=None, pin_memory: bool = False) -> Tensor:
    """Normal samples with the given mean and std, in torch's four forms: tensor mean and
    std (broadcast), a tensor and a float, or floats with a size."""
    if out is not None:
        raise NotImplementedError("normal(out=...) is not supported")
    mean_is_tensor, std_is_tensor = isinstance(mean, Tensor), isinstance(std, Tensor)
    if not mean_is_tensor and not std_is_tensor:
        if size is None:
            raise TypeError(f"normal() received an invalid combination of arguments - got "
                            f"({type(mean).__name__}, {type(std).__name__}), but expected a "
                            "size with float mean and std")
        if std < 0:
            raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
        device = check_device(device)
        dtype = dtypes.get_default_dtype() if dtype is None else \
            dtypes.dtype_argument(dtype, "normal")
        check_floating(dtype, "normal_kernel_cpu")
        sizes = tuple(size) if isinstance(size, (tuple, list)) else (size,)
        if requires_grad and state.tracer is not None:
            graph_break("autojit.normal() (random numbers requiring grad)", needs_data=False)
        sample = _draw("randn", sizes, dtype, generator, "normal", device, mean, std)
        return sample.requires_grad_(True) if requires_grad else sample
    if size is not None:
        raise TypeError("normal() received an invalid combination of arguments: a size is "
                        "given only with float mean and std")
    tensors = [x for x in (mean, std) if isinstance(x, Tensor)]
    for x in tensors:
        check_floating(x.dtype, "normal_kernel_cpu")
    result_dtype = tensors[0].dtype  # mean's when it is a tensor, as torch's
    if not std_is_tensor and std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    try:
        shape = broadcast_shapes(*(tuple(x.shape) for x in tensors))
    except ValueError as error:
        raise RuntimeError(str(error)) from None
    sample = _draw("randn", shape, result_dtype, generator, "normal", tensors[0].device)
    if std_is_tensor:
        sample = _checked_values(sample, ew.logical_not(std >= 0), "std")
    # torch computes in the result's dtype (mean's, when it is a tensor).
    plain_mean = ew.cast(mean.detach(), result_dtype) if mean_is_tensor else mean
    plain_std = ew.cast(std.detach(), result_dtype) if std_is_tensor else std
    return _zero_gradient(sample * plain_std + plain_mean, *tensors)


# ---- poisson and multinomial: primitives seeded by a drawn key ----------------------------------

def _generator(key: np.ndarray) -> np.random.Generator:
    """The generator of one sampler call: seeded by its key, or inside vmap by the keys of
    all its examples at once, so that one call draws the whole batch."""
    if key.ndim == 0:
        return np.random.default_rng(int(key))
    return np.random.default_rng([int(k) for k in key.reshape(-1)])


def _poisson_impl(rates: np.ndarray, key: np.ndarray) -> np.ndarray:
    if (rates < 0).any():
        raise OpError(RuntimeError("invalid Poisson rate, expected rate to be non-negative"))
    # (np.asarray: NumPy draws a Python int for a 0-d array of rates)
    return np.asarray(_generator(key).poisson(rates)).astype(rates.dtype)


POISSON = define_op(
    name="poisson", arity=2, shape=lambda rates, key: tuple(rates),
    dtype=lambda inputs, attrs: (None, inputs[0]._dtype), impl=_poisson_impl,
    vjp=lambda ctx, g: (ew.fill_like(g, 0), None), saves=(),
    # A zero tangent that is there, as torch's (its rule is zeros_like, not undefined).
    jvp=lambda inputs, tangents, out, attrs: (
        None if tangents[0] is None else ew.fill_like(tangents[0], 0)),
    lowering=Extern("sample_poisson", ("data", "data")), batch=batching.keyed_sampler_rule)


def poisson(input: Tensor, generator=None) -> Tensor:  # noqa: A002
    """Poisson samples, one per element, with the elements as rates (in input's dtype)."""
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"poisson_cpu" not implemented for '
                                  f"'{TORCH_NAMES[input.dtype.name]}'")
    key = random_key(generator, "poisson", input.device)
    return bind(POISSON, (input, key), {})


def _multinomial_shape(probabilities, draws, num_samples, replacement):
    return (*probabilities[:-1], num_samples)


def _by_exponentials(replacement: bool, num_samples: int) -> bool:
    """Whether torch's kernel samples by exponential draws (without replacement, or one
    sample) rather than by uniforms on each row's cumulative distribution."""
    return not replacement or num_samples == 1


def _multinomial_impl(probabilities, draws, num_samples, replacement):
    """torch's CPU multinomial from its draws: without replacement (or for one sample) the
    categories of the largest p / E, E the exponentials drawn like the probabilities (which
    draws them in proportion to p one after another); with replacement, for each uniform the
    first category whose normalized cumulative probability, summed in the dtype, reaches it."""
    categories = probabilities.shape[-1]
    rows = probabilities.reshape(-1, categories)
    wide = rows.astype(np.float64)
    # torch's two kernels word a bad entry differently.
    cumulative = not _by_exponentials(replacement, num_samples)
    if cumulative and ((wide < 0) | np.isnan(wide)).any():
        raise OpError(RuntimeError("invalid multinomial distribution (encountering probability "
                                   "entry < 0)"))
    if cumulative and np.isinf(wide).any():
        raise OpError(RuntimeError("invalid multinomial distribution (encountering probability "
                                   "entry = infinity or NaN)"))
    if not np.isfinite(wide).all() or (wide < 0).any():
        raise OpError(RuntimeError("probability tensor contains either `inf`, `nan` or "
                                   "element < 0"))
    if (wide.sum(axis=1) <= 0).any():
        raise OpError(RuntimeError("invalid multinomial distribution (sum of probabilities "
                                   "<= 0)"))
    if not cumulative:
        scores = rows / draws.reshape(-1, categories)  # torch's div_out, in the dtype
        if num_samples == 1:
            samples = np.argmax(scores, axis=1)[:, None]
        else:  # topk's order: the largest first; zero probabilities last, in order
            samples = np.argsort(-scores, axis=1, kind="stable")[:, :num_samples]
    else:
        working = np.float32 if rows.dtype == np.float16 else rows.dtype
        cumulative = np.cumsum(rows.astype(working), axis=1, dtype=working)
        cumulative /= cumulative[:, -1:]
        cumulative[:, -1] = 1  # torch's: the last bucket is 1
        uniforms = draws.reshape(-1, num_samples)
        samples = np.stack([np.searchsorted(row.astype(np.float64), values, side="left")
                            for row, values in zip(cumulative, uniforms, strict=True)])
    return samples.reshape(*probabilities.shape[:-1], num_samples).astype(np.int64)


MULTINOMIAL = define_op(
    name="multinomial", arity=2, shape=_multinomial_shape,
    dtype=lambda inputs, attrs: (None, dtypes.int64), impl=_multinomial_impl,
    vjp=NOT_DIFFERENTIABLE, saves=(), lowering=Extern("sample_multinomial", ("data", "data")),
    batch=batching.keyed_sampler_rule)


def multinomial(input: Tensor, num_samples: int, replacement: bool = False, *,  # noqa: A002
                generator=None, out=None) -> Tensor:
    """Indices of categories drawn from the rows of `input` (unnormalized probabilities):
    num_samples per row, with or without replacement."""
    if out is not None:
        from ..out_argument import check_out_type, write_result

        check_out_type("multinomial", out)
        if out.dtype is not dtypes.int64:
            raise RuntimeError(f"multinomial expects Long tensor out, got: "
                               f"{TORCH_NAMES[out.dtype.name]}")
        return write_result("multinomial", out, multinomial(
            input, num_samples, replacement, generator=generator))
    if input.ndim not in (1, 2):
        raise RuntimeError("prob_dist must be 1 or 2 dim")
    if not input.dtype.is_floating_point:
        raise RuntimeError(f"multinomial only supports floating-point dtypes for input, got: "
                           f"{TORCH_NAMES[input.dtype.name]}")
    num_samples = int(num_samples)
    if num_samples <= 0:
        raise RuntimeError("cannot sample n_sample <= 0 samples")
    if input.shape[-1] > 2 ** 24:
        raise RuntimeError("number of categories cannot exceed 2^24")
    if not replacement and num_samples > input.shape[-1]:
        raise RuntimeError("cannot sample n_sample > prob_dist.size(-1) samples without "
                           "replacement")
    # From the device's generator, on the host. Eagerly they join the probabilities on their
    # device; a compiled call keeps them a host graph input, which the sampler reads there (a
    # random tensor on a GPU would be a graph break).
    rng = resolve(generator, "multinomial", input.device)
    if _by_exponentials(replacement, num_samples):
        draw = RandomDraw("exponential", tuple(input.shape), input.dtype, rng, 0, 1.0)
    else:
        draw = RandomDraw("rand", (*input.shape[:-1], num_samples), dtypes.float64, rng)
    draws = random_tensor(draw, None if state.tracer is not None else input.device)
    return bind(MULTINOMIAL, (input, draws),
                {"num_samples": num_samples, "replacement": bool(replacement)})


# ---- Tensor's in-place random fills -----------------------------------------------------------

def _fill(target: Tensor, name: str, values) -> Tensor:
    """Write `values` (a function of nothing, called once the checks passed) into target."""
    if target.dtype in dtypes.UNSIGNED:  # no addition for uint64: 0 | x is x
        return inplace.apply_inplace(
            target, name, lambda old: ew.fill_like(old, 0) | ew.cast(values(), old.dtype))
    return inplace.apply_inplace(
        target, name, lambda old: ew.fill_like(old, 0) + ew.cast(values(), old.dtype))


def _continuous(target: Tensor, kernel: str) -> dtypes.DType:
    """The dtype a uniform or normal fill draws in: the target's own (a float16 uniform never
    rounds up to `to`: tensor/random.py gives `from` there, as torch's kernel does)."""
    check_floating(target.dtype, kernel)
    return target.dtype


def normal_(self: Tensor, mean=0.0, std=1.0, *, generator=None) -> Tensor:
    """Fill x with normal samples of the given mean and std, in place."""
    draw_dtype = _continuous(self, "normal_kernel_cpu")
    if std < 0:
        raise RuntimeError(f"normal expects std >= 0.0, but found std {std:g}")
    return _fill(self, "normal_", lambda: _draw("randn", self.shape, draw_dtype, generator,
                                                "normal_", self.device, mean, std))


def uniform_(self: Tensor, a=0.0, b=1.0, *, generator=None, **bounds) -> Tensor:
    """Fill x with samples uniform on [from, to), in place."""
    a, b = bounds.pop("from", a), bounds.pop("to", b)
    draw_dtype = _continuous(self, "check_uniform_bounds")
    if a > b:
        raise RuntimeError(f"uniform_ expects to return a [from, to) range, but found "
                           f"from={a:g} > to={b:g}")
    return _fill(self, "uniform_", lambda: _draw("rand", self.shape, draw_dtype, generator,
                                                 "uniform_", self.device, a, b))


def exponential_(self: Tensor, lambd=1.0, *, generator=None) -> Tensor:
    """Fill x with exponential samples of rate `lambd`, in place."""
    if not self.dtype.is_floating_point:
        raise RuntimeError("Exponential distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified "
                           f"{TORCH_NAMES[self.dtype.name]}")
    if not lambd > 0:
        raise RuntimeError(f"exponential_ expects lambda > 0.0, but found lambda={lambd:g}")
    draw_dtype = _draw_dtype(self.dtype)
    return _fill(self, "exponential_", lambda: _draw(
        "exponential", self.shape, draw_dtype, generator, "exponential_", self.device, 0, lambd))


def geometric_(self: Tensor, p, *, generator=None) -> Tensor:
    """Fill x with the number of trials up to the first success, success probability p."""
    if not 0 < p < 1:
        raise RuntimeError(f"geometric_ expects p to be in (0, 1), but got p={p:g}")
    if self.dtype.limited:
        raise dtypes.kernel_error("geometric_cpu", self.dtype)
    draw_dtype = self.dtype if self.dtype.is_floating_point else dtypes.float64
    return _fill(self, "geometric_", lambda: _draw("geometric", self.shape, draw_dtype,
                                                   generator, "geometric_", self.device, 0, p))


def log_normal_(self: Tensor, mean=1.0, std=2.0, *, generator=None) -> Tensor:
    """Fill x with exp of normal samples of the given mean and std, in place."""
    draw_dtype = _continuous(self, "log_normal_cpu")
    if not std > 0:
        raise RuntimeError(f"log_normal_ expects std > 0.0, but found std={std:g}")
    return _fill(self, "log_normal_", lambda: _draw(
        "log_normal", self.shape, draw_dtype, generator, "log_normal_", self.device, mean, std))


def cauchy_(self: Tensor, median=0.0, sigma=1.0, *, generator=None) -> Tensor:
    """Fill x with Cauchy samples of the given median and scale, in place."""
    if not self.dtype.is_floating_point:
        raise RuntimeError("Cauchy distribution is a continuous probability distribution. "
                           f"dtype must be a floating point but you specified "
                           f"{_CPP_NAMES[self.dtype.name]}")
    if not sigma > 0:
        raise RuntimeError(f"cauchy_ expects sigma > 0.0, but found sigma={sigma:g}")
    return _fill(self, "cauchy_", lambda: _draw("cauchy", self.shape, self.dtype, generator,
                                                "cauchy_", self.device, median, sigma))


_RANDOM_LIMIT = {"float16": 1 << 11, "float32": 1 << 24, "float64": 1 << 53, "uint8": 255,
                 "int8": 127, "int16": (1 << 15) - 1, "int32": (1 << 31) - 1,
                 "int64": (1 << 63) - 1, "bool": 1}


def random_(self: Tensor, *args, generator=None, **bounds) -> Tensor:
    """Fill x with integers uniform on [from, to): random_(to), random_(from, to), or
    random_() for [0, the largest integer x's dtype holds exactly]."""
    if len(args) > 2:
        raise TypeError(f"random_() takes at most 2 arguments ({len(args)} given)")
    low, high = (0, args[0]) if len(args) == 1 else (tuple(args) + (0, None))[:2]
    low, high = bounds.pop("from", low), bounds.pop("to", high)
    if bounds:
        raise TypeError(f"random_() got an unexpected keyword argument '{next(iter(bounds))}'")
    if high is None:
        if self.dtype.limited:  # torch's kernel for the dtype's whole range has no uint64
            raise dtypes.kernel_error("random_kernel_cpu", self.dtype)
        high = _RANDOM_LIMIT[self.dtype.name] + 1
    low, high = int(low), int(high)
    check_integer_range(low, high, self.dtype)
    draw_dtype = self.dtype if not self.dtype.is_floating_point else dtypes.int64
    return _fill(self, "random_", lambda: _draw("randint", self.shape, draw_dtype, generator,
                                                "random_", self.device, low, high))


def bernoulli_(self: Tensor, p=0.5, *, generator=None) -> Tensor:
    """Fill x with 0 or 1, 1 with probability p (a float, or a tensor broadcast to x)."""
    if not isinstance(p, Tensor) and (not isinstance(p, numbers.Real) or not 0 <= p <= 1):
        raise RuntimeError(f"bernoulli_ expects p to be in [0, 1], but got p={p}")
    plain = p.detach() if isinstance(p, Tensor) else p
    return _fill(self, "bernoulli_", lambda: _bernoulli_like(self, plain, generator,
                                                             "bernoulli_"))


def bernoulli_method(self: Tensor, p=None, *, generator=None) -> Tensor:
    """0 or 1 for each element, 1 with probability x (or p), in x's dtype (torch.bernoulli)."""
    return bernoulli(self, p, generator=generator)


def multinomial_method(self: Tensor, num_samples: int, replacement: bool = False, *,
                       generator=None) -> Tensor:
    """Indices of categories drawn from the rows of x (torch.multinomial)."""
    return multinomial(self, num_samples, replacement, generator=generator)


# Tensor's random fills, attached by tensor_methods.py.
INPLACE_METHODS = {
    "normal_": normal_, "uniform_": uniform_, "exponential_": exponential_,
    "geometric_": geometric_, "log_normal_": log_normal_, "cauchy_": cauchy_,
    "random_": random_, "bernoulli_": bernoulli_,
}
