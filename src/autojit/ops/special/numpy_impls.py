"""NumPy implementations of the special functions NumPy lacks: lgamma, digamma, polygamma,
erfinv and the modified Bessel function i1 (i0 is NumPy's np.i0).

They are the impls (the reference every backend runs or is tested against) of the primitives
in functions.py. Each computes in float64 and the caller rounds to the input's dtype.
The algorithms are the textbook ones, vectorized with masks:

- lgamma: Python's math.lgamma per element, +inf at the poles (0 and the negative integers);
- digamma: the reflection psi(x) = psi(1 - x) - pi / tan(pi x) below 0, the recurrence
  psi(x) = psi(x + 1) - 1/x up to 10, then the asymptotic series in Bernoulli numbers;
  +-inf at +-0 (the sign opposite to zero's) and NaN at the negative integers, as torch;
- polygamma(n, x), n >= 1: (-1)**(n+1) n! zeta(n + 1, x), the Hurwitz zeta summed term by
  term up to x + k >= 20 + n, then by Euler-Maclaurin with eight Bernoulli terms; at the poles
  (-1)**(n+1) inf, at +inf 0;
- erfinv: a first guess (the Maclaurin series of erfinv for |y| <= 0.7, the asymptotic
  x = sqrt(-log(t sqrt(pi) x)) with t = 1 - |y| beyond), then Newton's method on erf(x) - y,
  respectively on erfc(x) - t, whose t is exact (1 - |y| for |y| >= 1/2), so the tail keeps
  its relative accuracy up to |y| = 1 - 2**-53;
- i1: its power series up to |x| = 20 (positive terms: no cancellation), the asymptotic
  expansion e^x / sqrt(2 pi x) (1 - 3/(8x) - ...) beyond, odd in x.
"""

from __future__ import annotations

import math

import numpy as np

# B_2k / (2k) for k = 1 ... 7: psi(x) ~ log x - 1/(2x) - sum B_2k / (2k x**2k).
_DIGAMMA_SERIES = (1 / 12, -1 / 120, 1 / 252, -1 / 240, 1 / 132, -691 / 32760, 1 / 12)
# B_2k / (2k)! for k = 1 ... 8, for Euler-Maclaurin sums.
_BERNOULLI_OVER_FACTORIAL = tuple(b / math.factorial(2 * k) for k, b in enumerate(
    (1 / 6, -1 / 30, 1 / 42, -1 / 30, 5 / 66, -691 / 2730, 7 / 6, -3617 / 510), start=1))


def _float64(x) -> np.ndarray:
    return np.asarray(x, dtype=np.float64)


def _done(result: np.ndarray, like: np.ndarray) -> np.ndarray:
    return result.astype(like.dtype if like.dtype.kind == "f" else np.float64, copy=False)


def _lgamma_scalar(value: float) -> float:
    try:
        return math.lgamma(value)
    except (ValueError, OverflowError):  # a pole: 0 or a negative integer
        return math.inf


_LGAMMA = np.vectorize(_lgamma_scalar, otypes=[np.float64])


def lgamma(x: np.ndarray) -> np.ndarray:
    """log |Gamma(x)|."""
    values = _float64(x)
    return _done(_LGAMMA(values) if values.size else values.copy(), x)


def _digamma_positive(x: np.ndarray) -> np.ndarray:
    """psi(x) for x > 0 (and +inf)."""
    x = x.copy()
    result = np.zeros_like(x)
    for _ in range(10):
        low = x < 10
        if not low.any():
            break
        result[low] -= 1 / x[low]
        x[low] += 1
    with np.errstate(all="ignore"):
        inverse_square = 1 / (x * x)
        series = np.zeros_like(x)
        for coefficient in reversed(_DIGAMMA_SERIES):
            series = (series + coefficient) * inverse_square
        return result + np.log(x) - 0.5 / x - series


def digamma(x: np.ndarray) -> np.ndarray:
    """psi(x) = d/dx log Gamma(x)."""
    values = _float64(x)
    result = np.full_like(values, np.nan)
    positive = values > 0
    result[positive] = _digamma_positive(values[positive])
    zero = values == 0
    result[zero] = np.copysign(np.inf, -values[zero])
    reflected = (values < 0) & (values != np.floor(values)) & np.isfinite(values)
    if reflected.any():
        negative = values[reflected]
        fraction = negative - np.trunc(negative)  # tan(pi r) is exact where pi x is not
        result[reflected] = (_digamma_positive(1 - negative)
                             - np.pi / np.tan(np.pi * fraction))
    return _done(result, x)


def polygamma(n: int, x: np.ndarray) -> np.ndarray:
    """The n-th derivative of digamma (n >= 0)."""
    if n == 0:
        return digamma(x)
    values = _float64(x)
    order = n + 1
    sign = 1.0 if n % 2 else -1.0
    result = np.full_like(values, np.nan)
    pole = (values <= 0) & (values == np.floor(values)) & np.isfinite(values)
    result[pole] = sign * np.inf
    result[values == np.inf] = 0.0
    regular = np.isfinite(values) & ~pole
    if regular.any():
        q = values[regular].copy()
        total = np.zeros_like(q)
        start = 20.0 + n
        while True:
            low = q < start
            if not low.any():
                break
            total[low] += q[low] ** -order
            q[low] += 1
        # Euler-Maclaurin: sum_k (q + k)**-s = q**(1-s)/(s-1) + q**-s/2
        #   + sum_j B_2j/(2j)! s (s+1) ... (s+2j-2) q**(-s-2j+1).
        tail = q ** (1 - order) / (order - 1) + 0.5 * q ** -order
        rising = float(order)
        power = q ** (-order - 1)
        for j, coefficient in enumerate(_BERNOULLI_OVER_FACTORIAL, start=1):
            tail += coefficient * rising * power
            rising *= (order + 2 * j - 1) * (order + 2 * j)
            power = power / (q * q)
        result[regular] = sign * math.factorial(n) * (total + tail)
    return _done(result, x)


_ERF = np.vectorize(math.erf, otypes=[np.float64])
_ERFC = np.vectorize(math.erfc, otypes=[np.float64])
_HALF_SQRT_PI = math.sqrt(math.pi) / 2
# erfinv y = sqrt(pi)/2 (y + pi/12 y**3 + 7 pi**2/480 y**5 + 127 pi**3/40320 y**7
#                        + 4369 pi**4/5806080 y**9 + 34807 pi**5/182476800 y**11)
_ERFINV_SERIES = (1.0, math.pi / 12, 7 * math.pi ** 2 / 480, 127 * math.pi ** 3 / 40320,
                  4369 * math.pi ** 4 / 5806080, 34807 * math.pi ** 5 / 182476800)


def erfinv(y: np.ndarray) -> np.ndarray:
    """The inverse of erf on [-1, 1]: +-inf at +-1, NaN outside."""
    values = _float64(y)
    result = np.full_like(values, np.nan)
    magnitude = np.abs(values)
    result[magnitude == 1] = np.copysign(np.inf, values[magnitude == 1])
    central = magnitude <= 0.7
    if central.any():
        target = values[central]
        square = target * target
        x = np.zeros_like(target)
        for coefficient in reversed(_ERFINV_SERIES):
            x = x * square + coefficient
        x *= _HALF_SQRT_PI * target
        for _ in range(4):
            x -= (_ERF(x) - target) * _HALF_SQRT_PI * np.exp(x * x)
        result[central] = np.where(target == 0, target, x)  # keeps -0
    tail = (magnitude > 0.7) & (magnitude < 1)
    if tail.any():
        t = 1 - magnitude[tail]  # exact
        x = np.sqrt(-np.log(t))
        x = np.sqrt(-np.log(t * math.sqrt(math.pi) * x))
        for _ in range(6):
            x += (_ERFC(x) - t) * _HALF_SQRT_PI * np.exp(x * x)
        result[tail] = np.copysign(x, values[tail])
    return _done(result, y)


# I1(x) = e^x / sqrt(2 pi x) * sum_k (-1)**k a_k / x**k, a_k = prod_(j<=k) (4 - (2j-1)**2) / (8j).
_I1_ASYMPTOTIC = []
_term = 1.0
for _k in range(1, 41):
    _I1_ASYMPTOTIC.append(_term)
    _term *= -(4 - (2 * _k - 1) ** 2) / (8 * _k)
_I1_ASYMPTOTIC = tuple(_I1_ASYMPTOTIC)
_I1_SERIES_LIMIT = 20.0


def i1(x: np.ndarray) -> np.ndarray:
    """The modified Bessel function of the first kind of order 1 (odd)."""
    values = _float64(x)
    magnitude = np.abs(values)
    result = np.empty_like(values)
    small = magnitude <= _I1_SERIES_LIMIT
    if small.any():
        half = magnitude[small] / 2
        square = half * half
        term = half.copy()
        total = term.copy()
        for k in range(1, 60):  # the terms fall below 2**-60 of the sum by k = 50
            term = term * square / (k * (k + 1))
            total += term
        result[small] = total
    large = ~small
    if large.any():
        z = magnitude[large]
        with np.errstate(all="ignore"):
            series = np.zeros_like(z)
            for coefficient in reversed(_I1_ASYMPTOTIC):
                series = series / z + coefficient
            # exp(z) * series / sqrt(2 pi z), as Cephes and torch evaluate it: inf past 709.78,
            # NaN at inf (inf / inf).
            result[large] = np.exp(z) * series / np.sqrt(2 * math.pi * z)
    return _done(np.copysign(result, values), x)


def i0(x: np.ndarray) -> np.ndarray:
    """The modified Bessel function of the first kind of order 0 (even): NumPy's np.i0."""
    values = _float64(x)
    with np.errstate(all="ignore"):
        return _done(np.i0(values) if values.size else values.copy(), x)
