"""The gamma and binomial samplers, and the implicit reparameterization gradients of gamma and
Dirichlet samples: `standard_gamma` (torch._standard_gamma), `binomial` (torch.binomial),
`standard_gamma_grad` (torch._standard_gamma_grad), `dirichlet_grad` (torch._dirichlet_grad)
and `sample_dirichlet` (torch._sample_dirichlet).

The two samplers are primitives seeded by a drawn key, as poisson is (ops/random/__init__.py): their
draws depend on the data (a rejection loop for gamma), so the impl samples with a NumPy
generator seeded by a 64-bit key drawn from the autojit Generator, eagerly or as a "random"
input of a compiled function. autojit.distributions builds Gamma, Chi2, Beta, Dirichlet and
StudentT on standard_gamma, and Binomial on binomial.

A gamma sample x of concentration a is differentiable in a by implicit reparameterization:
dx/da = -(dF/da)(x; a) / f(x; a), F and f the gamma CDF and density, the derivative of the
inverse CDF at a fixed uniform. standard_gamma's VJP multiplies by that derivative, which
`standard_gamma_grad` computes in autojit ops with torch's approximations (a series for small
x, a saddle point expansion for large a, a rational fit elsewhere), so the values are torch's
and the gradient itself is differentiable (torch's is not). `dirichlet_grad` is the same for
one coordinate of a Dirichlet sample (a Beta's), with torch's approximations; Dirichlet's
rsample applies it (distributions/dirichlet.py).
"""

from __future__ import annotations

import numpy as np

from ...tensor.random import TORCH_NAMES, random_key
from ...tensor.tensor import Tensor
from .. import batching
from .. import elementwise as ew
from ..registry import NOT_DIFFERENTIABLE, Extern, bind, define_op
from ..shape_rules import broadcast_shapes
from . import _generator


def _tiny(dtype: np.dtype) -> float:
    return float(np.finfo(dtype).tiny)


# ---- standard_gamma --------------------------------------------------------------------------

def _standard_gamma_impl(alpha: np.ndarray, key: np.ndarray) -> np.ndarray:
    # NumPy's sampler refuses a negative or NaN shape; torch's gives its clamp value there.
    valid = alpha > 0
    shape = np.where(valid, alpha, 1.0).astype(np.float64)
    samples = _generator(key).standard_gamma(shape)
    samples = np.where(valid, samples, 0.0).astype(alpha.dtype)
    # As torch's sampler: never 0, so that log(x) and the gradient stay finite.
    return np.maximum(samples, _tiny(alpha.dtype))


def _standard_gamma_vjp(ctx, g):
    alpha, out = ctx.inputs[0], ctx.out
    return (g * standard_gamma_grad(alpha, out), None)


STANDARD_GAMMA = define_op(
    name="standard_gamma", arity=2, shape=lambda alpha, key: tuple(alpha),
    dtype=lambda inputs, attrs: (None, inputs[0]._dtype), impl=_standard_gamma_impl,
    vjp=_standard_gamma_vjp, saves=(0, "out"),
    jvp=lambda inputs, tangents, out, attrs: (
        None if tangents[0] is None else tangents[0] * standard_gamma_grad(inputs[0], out)),
    lowering=Extern("sample_standard_gamma", ("data", "data")),
    batch=batching.keyed_sampler_rule, grad_name="StandardGammaBackward0")


def standard_gamma(input: Tensor, generator=None) -> Tensor:  # noqa: A002
    """Samples of the gamma distribution of concentration `input` and rate 1, one per element
    (torch._standard_gamma), differentiable in `input` by implicit reparameterization."""
    if not isinstance(input, Tensor):
        raise TypeError(f"_standard_gamma(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    if not input.dtype.is_floating_point:
        raise NotImplementedError(f'"gamma_cpu" not implemented for '
                                  f"'{TORCH_NAMES[input.dtype.name]}'")
    key = random_key(generator, "_standard_gamma", input.device)
    return bind(STANDARD_GAMMA, (input, key), {})


# ---- binomial --------------------------------------------------------------------------------

def _binomial_impl(count: np.ndarray, prob: np.ndarray, key: np.ndarray) -> np.ndarray:
    count, prob = np.broadcast_arrays(count, prob)
    unknown = np.isnan(count) | np.isnan(prob) | np.isinf(count)
    # torch's sampler gives 0 trials for a negative count and clamps p to [0, 1].
    trials = np.where(unknown, 0, np.maximum(count, 0)).astype(np.int64)
    p = np.where(unknown, 0.5, np.clip(prob, 0.0, 1.0)).astype(np.float64)
    samples = _generator(key).binomial(trials, p).astype(count.dtype)
    return np.where(unknown, np.nan, samples).astype(count.dtype)


def _binomial_batch(op, inputs, flags, attrs, size):
    """keyed_sampler_rule for two data operands."""
    count, prob, key = inputs
    if not flags[2]:
        raise RuntimeError(batching.SAME_RANDOMNESS_ERROR)
    count, prob = batching.all_batched((count, prob), flags[:2], size)
    return bind(op, (count, prob, key), attrs)


BINOMIAL = define_op(
    name="binomial", arity=3, shape=lambda count, prob, key: broadcast_shapes(count, prob),
    dtype=lambda inputs, attrs: (None, inputs[0]._dtype), impl=_binomial_impl,
    vjp=NOT_DIFFERENTIABLE, saves=(),
    lowering=Extern("sample_binomial", ("data", "data", "data")), batch=_binomial_batch)


def binomial(count: Tensor, prob: Tensor, generator=None) -> Tensor:
    """The number of successes in `count` trials of success probability `prob`, one sample per
    element of their broadcast shape, in count's dtype."""
    for name, x in (("count", count), ("prob", prob)):
        if not isinstance(x, Tensor):
            raise TypeError(f"binomial(): argument '{name}' must be Tensor, not "
                            f"{type(x).__name__}")
    if not count.dtype.is_floating_point:
        raise ValueError(f"binomial only supports floating-point dtypes for count, got: "
                         f"{TORCH_NAMES[count.dtype.name]}")
    if prob.dtype is not count.dtype:
        raise RuntimeError(f"Found dtype {TORCH_NAMES[prob.dtype.name]} but expected "
                           f"{TORCH_NAMES[count.dtype.name]}")
    key = random_key(generator, "binomial", count.device)
    return bind(BINOMIAL, (count, prob, key), {})


# ---- the implicit gradient of a gamma sample ---------------------------------------------------

# The rational fit of dx/da in u = log(x / a) and v = log(a), away from small x and large a:
# exp(p / q), p and q cubics in v whose coefficients are quadratics in u (torch's values).
_GAMMA_FIT = (
    (0.16009398, -0.094634809, 0.025146376, -0.0030648343,
     1, 0.32668115, 0.10406089, 0.0014179084),
    (0.53487893, 0.1298071, 0.065735949, -0.0015649758,
     0.16639465, 0.020070113, -0.0035938915, -0.00058392623),
    (0.040121004, -0.0065914022, -0.0026286047, -0.0013441777,
     0.017050642, -0.0021309326, 0.00085092367, -1.5247877e-07),
)


def _cubic(c, v):
    return c[0] + v * (c[1] + v * (c[2] + v * c[3]))


def _gamma_grad_small_x(alpha, x):
    """-dF/da / f by the power series of the lower incomplete gamma function (x < 0.8):
    F = x^a sum_k (-x)^k / (k! (a + k)) / Gamma(a), so that dF/da / f is x e^x times
    (log x - digamma(a)) * S1 - S2, S1 and S2 the series over (a + k) and (a + k)^2."""
    term = ew.fill_like(x, 1.0)
    first, second = 1 / alpha, 1 / (alpha * alpha)
    for k in range(1, 6):
        term = term * (-x / k)
        first = first + term / (alpha + k)
        second = second + term / ((alpha + k) * (alpha + k))
    result = -(x * x.exp()) * ((x.log() - alpha.digamma()) * first - second)
    return ew.where(result.isnan(), ew.fill_like(result, 0.0), result)


def _gamma_grad_large_alpha(alpha, x):
    """Rice's saddle point expansion for a > 8; a polynomial near the mode (|x - a| <= 0.1 a),
    where the expansion's terms are singular."""
    near = ew.logical_and(x >= 0.9 * alpha, x <= 1.1 * alpha)
    # Away from the mode: the far branch evaluated at a point off the singularity where near.
    far_x = ew.where(near, 0.5 * alpha, x)
    ratio_log = (far_x / alpha).log()
    root = (8 * alpha).sqrt()
    deviation = (far_x - alpha - alpha * ratio_log).pow(-1.5)
    sign = ew.where(far_x < alpha, ew.fill_like(x, -1.0), ew.fill_like(x, 1.0))
    inner = ratio_log * (root / (alpha - far_x) + sign * deviation) \
        - (2 / alpha).sqrt() * (alpha + far_x) / ((alpha - far_x) * (alpha - far_x))
    stirling = 1 + 1 / (12 * alpha) * (1 + 1 / (24 * alpha))
    far = -stirling * far_x * inner / root
    alpha2 = alpha * alpha
    poly = (1 + 24 * alpha * (1 + 12 * alpha)) * (
        1440 * alpha2 + 6 * x * (53 - 120 * x) - 65 * x * x / alpha + alpha * (107 + 3600 * x))
    return ew.where(near, poly / (1244160 * alpha2 * alpha2), far)


def _gamma_grad_fit(alpha, x):
    u, v = (x / alpha).log(), alpha.log()
    coefficients = [row0 + u * (row1 + u * row2) for row0, row1, row2 in zip(*_GAMMA_FIT)]
    return (_cubic(coefficients[:4], v) / _cubic(coefficients[4:], v)).exp()


def standard_gamma_grad(alpha: Tensor, x: Tensor) -> Tensor:
    """dx/dalpha for samples x of Gamma(alpha, 1) (torch._standard_gamma_grad), in autojit ops:
    each regime is evaluated on inputs moved into its own domain, so the branches not chosen
    stay finite and give zero (not NaN) gradients when this is differentiated again."""
    alpha, x = _broadcast_pair(alpha, x)
    small = x < 0.8
    large = alpha > 8.0
    one = ew.fill_like(x, 1.0)
    # Each branch sees harmless inputs where it is not chosen.
    small_x = ew.where(small, x, 0.5 * one)
    large_alpha = ew.where(ew.logical_and(large, ew.logical_not(small)), alpha, 10.0 * one)
    large_x = ew.where(ew.logical_and(large, ew.logical_not(small)), x, 5.0 * one)
    fit_x = ew.where(small, one, x)
    return ew.where(small, _gamma_grad_small_x(alpha, small_x),
                    ew.where(large, _gamma_grad_large_alpha(large_alpha, large_x),
                             _gamma_grad_fit(alpha, fit_x)))


def _broadcast_pair(a: Tensor, b: Tensor):
    shape = broadcast_shapes(tuple(a.shape), tuple(b.shape))
    return a.expand(shape), b.expand(shape)


# ---- the implicit gradient of a Dirichlet (Beta) sample ------------------------------------------

def _beta_grad_alpha_small(x, alpha, beta):
    """-dF/dalpha / f / (1 - x) for Beta(alpha, beta) near x = 0: the series of the incomplete
    beta function in x, ten terms."""
    factor = alpha.digamma() - (alpha + beta).digamma() - x.log()
    term = ew.fill_like(x, 1.0)
    series = term / alpha * (factor + 1 / alpha)
    for k in range(1, 11):
        term = term * (k - beta) * x / k
        series = series + term / (alpha + k) * (factor + 1 / (alpha + k))
    result = x * (1 - x).pow(-beta) * series
    return ew.where(result.isnan(), ew.fill_like(result, 0.0), result)


def _beta_grad_beta_small(x, alpha, beta):
    """The derivative in beta near x = 0 (used mirrored, for alpha near x = 1): eight terms."""
    factor = (alpha + beta).digamma() - beta.digamma()
    term = ew.fill_like(x, 1.0)
    betas, dbetas = ew.fill_like(x, 1.0), ew.fill_like(x, 0.0)
    series = factor / alpha
    for k in range(1, 9):
        term = term * (-x / k)
        dbetas = dbetas * (beta - k) + betas
        betas = betas * (beta - k)
        series = series + term / (alpha + k) * (dbetas + factor * betas)
    result = -(1 - x).pow(1 - beta) * series
    return ew.where(result.isnan(), ew.fill_like(result, 0.0), result)


def _beta_grad_alpha_mid(x, alpha, beta):
    """Saddle point expansion for alpha and beta both large (above 6); a polynomial within a
    tenth of a standard deviation of the mean, where the expansion is singular."""
    total = alpha + beta
    mean = alpha / total
    std = (alpha * beta / (total + 1)).sqrt() / total
    near = ew.logical_and(x >= mean - 0.1 * std, x <= mean + 0.1 * std)
    b2 = beta * beta
    poly = 47 * x * b2 * b2 + alpha * (
        (43 + 20 * (16 + 27 * beta) * x) * b2 * beta + alpha * (
            3 * (59 + 180 * beta - 90 * x) * b2 + alpha * (
                (453 + 1620 * beta * (1 - x) - 455 * x) * beta + alpha * (
                    8 * (1 - x) * (135 * beta - 11)))))
    prefactor_num = (1 + 12 * alpha) * (1 + 12 * beta) / (total * total)
    prefactor_den = 12960 * alpha * alpha * alpha * b2 * (1 + 12 * total)
    close = prefactor_num / (1 - x) * poly / prefactor_den
    # The far branch, at a point off the singularity where `near`.
    fx = ew.where(near, mean + std, x)
    prefactor = -fx / (2 * alpha * beta / total).sqrt()

    def stirling_term(a):
        return 1 + 1 / (12 * a) + 1 / (288 * a * a)

    stirling = stirling_term(alpha) * stirling_term(beta) / stirling_term(total)
    axbx = alpha * (fx - 1) + beta * fx
    term1 = (2 * alpha * alpha * (fx - 1) + alpha * beta * (fx - 1) - fx * b2) / (
        (2 * alpha / beta).sqrt() * total.pow(1.5) * axbx * axbx)
    term2 = 0.5 * (alpha / (total * fx)).log()
    term3 = (8 * alpha * beta / total).sqrt() / axbx
    term4 = (beta * (beta / (total * (1 - fx))).log()
             + alpha * (alpha / (total * fx)).log()).pow(-1.5)
    sign = ew.where(fx < mean, ew.fill_like(x, 1.0), ew.fill_like(x, -1.0))
    far = stirling * prefactor * (term1 + term2 * (term3 + sign * term4))
    return ew.where(near, close, far)


# The rational correction of the analytic approximation x (digamma(total) - digamma(alpha)) /
# beta: p / q, each a sum over powers of u = log x and a = log(alpha) - u of cubics in
# b = log(total) - a (torch's coefficients, [p or q][power of u][power of a][power of b]).
_DIRICHLET_FIT = (
    (((1.003668233, -0.01061107488, -0.0657888334, 0.01201642863),
      (0.6336835991, -0.3557432599, 0.05486251648, -0.001465281033),
      (-0.03276231906, 0.004474107445, 0.002429354597, -0.0001557569013)),
     ((0.221950385, -0.3187676331, 0.01799915743, 0.01074823814),
      (-0.2951249643, 0.06219954479, 0.01535556598, 0.001550077057),
      (0.02155310298, 0.004170831599, 0.001292462449, 6.976601077e-05)),
     ((-0.05980841433, 0.008441916499, 0.01085618172, 0.002319392565),
      (0.02911413504, 0.01400243777, -0.002721828457, 0.000751041181),
      (0.005900514878, -0.001936558688, -9.495446725e-06, 5.385558597e-05))),
    (((1, -0.02924021934, -0.04438342661, 0.007285809825),
      (0.6357567472, -0.3473456711, 0.05454656494, -0.002407477521),
      (-0.03301322327, 0.004845219414, 0.00231480583, -0.0002307248149)),
     ((0.5925320577, -0.1757678135, 0.01505928619, 0.000564515273),
      (0.1014815858, -0.06589186703, 0.01272886114, -0.0007316646956),
      (-0.007258481865, 0.001096195486, 0.0003934994223, -4.12701925e-05)),
     ((0.06469649321, -0.0236701437, 0.002902096474, -5.896963079e-05),
      (0.001925008108, -0.002869809258, 0.0008000589141, -6.063713228e-05),
      (-0.0003477407336, 6.959756487e-05, 1.097287507e-05, -1.650964693e-06))),
)


def _dirichlet_fit(x, alpha, total):
    u = x.log()
    a = alpha.log() - u
    b = total.log() - a
    powers_u, powers_a = (None, u, u * u), (None, a, a * a)
    sums = []
    for table in _DIRICHLET_FIT:
        value = None
        for row, power_u in zip(table, powers_u):
            for coefficients, power_a in zip(row, powers_a):
                part = _cubic(coefficients, b)
                for power in (power_u, power_a):
                    part = part if power is None else part * power
                value = part if value is None else value + part
        sums.append(value)
    beta = total - alpha
    approx = x * (total.digamma() - alpha.digamma()) / beta
    return sums[0] / sums[1] * approx


def dirichlet_grad(x: Tensor, alpha: Tensor, total: Tensor) -> Tensor:
    """The implicit gradient of one coordinate x of a Dirichlet sample in its concentration
    alpha, `total` the concentrations' sum, scaled as torch._dirichlet_grad's: -dF/dalpha /
    f / (1 - x), F and f the CDF and density of the coordinate's Beta(alpha, total - alpha).
    Each regime sees harmless inputs where it is not chosen (see standard_gamma_grad)."""
    shape = broadcast_shapes(tuple(x.shape), tuple(alpha.shape), tuple(total.shape))
    x, alpha, total = x.expand(shape), alpha.expand(shape), total.expand(shape)
    beta = total - alpha
    boundary = total * x * (1 - x)
    one = ew.fill_like(x, 1.0)
    near_zero = ew.logical_and(x <= 0.5, boundary < 2.5)
    near_one = ew.logical_and(ew.logical_and(x >= 0.5, boundary < 0.75),
                              ew.logical_not(near_zero))
    edges = ew.logical_or(near_zero, near_one)
    mid = ew.logical_and(ew.logical_and(alpha > 6, beta > 6), ew.logical_not(edges))
    rest = ew.logical_not(ew.logical_or(edges, mid))
    small = _beta_grad_alpha_small(ew.where(near_zero, x, 0.1 * one), alpha, beta)
    mirrored = -_beta_grad_beta_small(ew.where(near_one, 1 - x, 0.1 * one), beta, alpha)
    mid_alpha, mid_beta = ew.where(mid, alpha, 10 * one), ew.where(mid, beta, 10 * one)
    middle = _beta_grad_alpha_mid(ew.where(mid, x, 0.5 * one), mid_alpha, mid_beta)
    fit_x = ew.where(rest, x, 0.5 * one)
    fit_alpha, fit_total = ew.where(rest, alpha, one), ew.where(rest, total, 2 * one)
    fitted = _dirichlet_fit(fit_x, fit_alpha, fit_total)
    return ew.where(near_zero, small, ew.where(near_one, mirrored,
                                                ew.where(mid, middle, fitted)))


def sample_dirichlet(concentration: Tensor, generator=None) -> Tensor:
    """Samples of the Dirichlet distribution over the last dim of `concentration`
    (torch._sample_dirichlet): normalized gamma samples, kept inside (0, 1). Not
    differentiable here (detached); distributions.Dirichlet attaches torch's gradient."""
    gammas = standard_gamma(concentration.detach(), generator)
    dtype = gammas.dtype
    values = gammas / gammas.sum(-1, keepdim=True)
    below_one = float(np.nextafter(np.array(1.0, dtype.numpy), 0))
    return values.clamp(_tiny(dtype.numpy), below_one)


__all__ = ["binomial", "dirichlet_grad", "sample_dirichlet", "standard_gamma",
           "standard_gamma_grad"]
