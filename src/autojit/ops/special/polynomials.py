"""torch.special's orthogonal polynomials of degree n at x: Chebyshev T, U, V, W and their
shifted forms on [0, 1], Hermite H (physicists') and He (probabilists'), Laguerre L and
Legendre P.

Each is a primitive of two broadcast inputs (x, n), computed as torch's kernels compute it, so
that the values agree where the recurrences lose precision: n is truncated to an integer, a
negative n gives 0, the endpoints are exact, a high degree inside (-1, 1) goes through the
trigonometric form (Chebyshev), and otherwise the three-term recurrence runs in the result's
dtype. The lowering is the Extern "numpy_elementwise" (functions.py). torch defines no
derivative for them: their results do not require grad.
"""

from __future__ import annotations

import numpy as np

from .. import batching
from .. import elementwise as ew
from ..dtype_rules import rule_float
from ..out_argument import with_out
from ..registry import NOT_DIFFERENTIABLE, Extern, bind, define_op
from ..shape_rules import broadcast_shapes
from .functions import NUMPY_ROUTINE


def _degrees(n: np.ndarray) -> np.ndarray:
    """n as torch's kernels read it: static_cast<int64_t>, whose out-of-range values (NaN,
    infinities, |n| >= 2**63) are INT64_MIN on x86, a negative degree."""
    with np.errstate(all="ignore"):
        valid = np.isfinite(n) & (np.abs(n) < 2.0 ** 63)
        return np.where(valid, np.trunc(np.where(valid, n, 0)), -1).astype(np.int64)


def _recurrence(x, n, first, step, start=2, last=None):
    """p_n by p_k = step(x, k, p_{k-1}, p_{k-2}) for k from `start`, with p_{start-2} = 1 and
    p_{start-1} = first; `last(n)` is the final k (n by default). Elementwise where n >= start."""
    one = np.ones_like(x)
    p, q = one, first.copy()
    stop = n if last is None else last(n)
    top = int(stop.max(initial=start - 1))
    result = q.copy()
    for k in range(start, top + 1):
        active = stop >= k
        if not active.any():
            break
        r = step(x, x.dtype.type(k), q, p)
        p, q = np.where(active, q, p), np.where(active, r, q)
        result = np.where(active, r, result)
    return result


def _finish(x, n, value, cases):
    """`value` where no case applies; cases are (condition, result) pairs, the first that
    holds wins (torch's early returns, in order)."""
    result = value
    for condition, case in reversed(cases):
        result = np.where(condition, case, result)
    return result.astype(x.dtype, copy=False)


def _chebyshev_recurrence(x, n, first):
    two_x = x + x
    return _recurrence(x, n, first, lambda x, k, q, p: two_x * q - p)


def _chebyshev(kind):
    """Chebyshev T, U, V, W (torch's chebyshev_polynomial_*_forward)."""
    def impl(x, n):
        x, n = np.broadcast_arrays(x, _degrees(n))
        x = x.astype(x.dtype, copy=True)
        t = x.dtype.type
        odd = n % 2 == 1
        edge = np.abs(x) == 1
        inside = np.abs(x) < 1
        with np.errstate(all="ignore"):
            angle = np.arccos(np.where(inside, x, 0)).astype(x.dtype)
            nf = n.astype(x.dtype)
            if kind == "t":
                first = x
                at_edge = np.where((x > 0) | ~odd, t(1), t(-1))
                high = (n > 6) & inside
                trig = np.cos(nf * angle)
            elif kind == "u":
                first = x + x
                at_edge = np.where((x > 0) | ~odd, nf + 1, -(nf + 1))
                high = (n > 8) & inside
                sine = np.sin(angle)
                trig = np.where(sine != 0, np.sin((nf + 1) * angle) / sine,
                                (nf + 1) * np.cos((nf + 1) * angle) / x)
            elif kind == "v":
                first = x + x - t(1)
                signed = np.where(~odd, nf + nf + 1, -(nf + nf + 1))
                at_edge = np.where(x > 0, t(1), signed)
                high = (n > 8) & inside
                trig = np.where(np.sin(angle / t(2)) != 1,
                                np.cos((nf + t(0.5)) * angle) / np.cos(angle / t(2)), signed)
            else:
                first = x + x + t(1)
                alternating = np.where(~odd, t(1), t(-1))
                at_edge = np.where(x > 0, nf + nf + 1, alternating)
                high = (n > 8) & inside
                trig = np.where(np.cos(angle / t(2)) != 1,
                                np.sin((nf + t(0.5)) * angle) / np.sin(angle / t(2)),
                                np.where(x > 0, nf + nf + 1, alternating))
            value = _chebyshev_recurrence(x, np.where(high | edge, 0, n), first)
        return _finish(x, n, value, [(n < 0, t(0)), (edge, at_edge), (high, trig),
                                     (n == 0, t(1)), (n == 1, first)])

    return impl


def _shifted_chebyshev(kind):
    """The shifted Chebyshev polynomials on [0, 1] (torch's
    shifted_chebyshev_polynomial_*_forward): the unshifted ones at 2x - 1, with their own
    endpoints and thresholds."""
    def impl(x, n):
        x, n = np.broadcast_arrays(x, _degrees(n))
        x = x.astype(x.dtype, copy=True)
        t = x.dtype.type
        odd = n % 2 == 1
        y = x + x - t(1)
        inside = np.abs(y) < 1
        with np.errstate(all="ignore"):
            angle = np.arccos(np.where(inside, y, 0)).astype(x.dtype)
            nf = n.astype(x.dtype)
            if kind == "t":
                first = y
                at_one, at_zero = t(1), np.where(~odd, t(1), t(-1))
                high = (n > 6) & inside
                trig = np.cos(nf * angle)
            elif kind == "u":
                first = y + y
                at_one, at_zero = nf + 1, np.where(~odd, nf + 1, -(nf + 1))
                high = (n > 6) & inside
                sine = np.sin(angle)
                trig = np.where(sine != 0, np.sin((nf + 1) * angle) / sine,
                                (nf + 1) * np.cos((nf + 1) * angle) / y)
            elif kind == "v":
                first = y + y - t(1)
                at_one, at_zero = t(1), np.where(~odd, nf + nf + 1, -(nf + nf + 1))
                high = (n > 6) & inside
                trig = np.where(np.sin(angle / t(2)) != 1,
                                np.cos((nf + t(0.5)) * angle) / np.cos(angle / t(2)), at_zero)
            else:
                first = y + y + t(1)
                at_one, at_zero = nf + nf + 1, np.where(~odd, t(1), t(-1))
                high = (n > 4) & inside
                trig = np.where(np.cos(angle / t(2)) != 1,
                                np.sin((nf + t(0.5)) * angle) / np.sin(angle / t(2)), at_zero)
            two_y = y + y
            done = high | (x == 1) | (x == 0)
            value = _recurrence(x, np.where(done, 0, n), first,
                                lambda x, k, q, p: two_y * q - p)
        return _finish(x, n, value, [(n < 0, t(0)), (x == 1, at_one), (x == 0, at_zero),
                                     (high, trig), (n == 0, t(1)), (n == 1, first)])

    return impl


def _hermite_h(x, n):
    x, n = np.broadcast_arrays(x, _degrees(n))
    t = x.dtype.type
    two_x = x + x
    with np.errstate(all="ignore"):
        # torch: for k = 2, 4, ..., 2n - 2: r = 2x q - k p
        value = _recurrence(x, n, two_x, lambda x, k, q, p: two_x * q - (k + k - t(2)) * p,
                            start=2)
    return _finish(x, n, value, [(n < 0, t(0)), (n == 0, t(1)), (n == 1, two_x)])


def _hermite_he(x, n):
    x, n = np.broadcast_arrays(x, _degrees(n))
    t = x.dtype.type
    with np.errstate(all="ignore"):
        value = _recurrence(x, n, x, lambda x, k, q, p: x * q - (k - t(1)) * p)
    return _finish(x, n, value, [(n < 0, t(0)), (n == 0, t(1)), (n == 1, x)])


def _laguerre_l(x, n):
    x, n = np.broadcast_arrays(x, _degrees(n))
    t = x.dtype.type
    first = t(1) - x
    with np.errstate(all="ignore"):
        # torch: for k = 1 ... n - 1: r = ((2k + (1 - x)) q - k p) / (k + 1)
        value = _recurrence(x, n, first, lambda x, k, q, p:
                            (((k - 1) + (k - 1) + (t(1) - x)) * q - (k - 1) * p) / k)
    return _finish(x, n, value, [(n < 0, t(0)), (np.abs(x) == 0, t(1)), (n == 0, t(1)),
                                 (n == 1, first)])


def _legendre_p(x, n):
    x, n = np.broadcast_arrays(x, _degrees(n))
    t = x.dtype.type
    odd = n % 2 == 1
    with np.errstate(all="ignore"):
        # torch: for k = 1 ... n - 1: r = ((2k + 1) x q - k p) / (k + 1)
        value = _recurrence(x, n, x, lambda x, k, q, p:
                            ((k - 1 + k - 1 + 1) * x * q - (k - 1) * p) / k)
    return _finish(x, n, value, [(n < 0, t(0)),
                                 (np.abs(x) == 1, np.where((x > 0) | ~odd, t(1), t(-1))),
                                 (n == 0, t(1)), (n == 1, x)])


def _polynomial(name, impl):
    torch_name = f"special_{name}"
    op = define_op(name=torch_name, arity=2, shape=broadcast_shapes, dtype=rule_float,
                   impl=impl, vjp=NOT_DIFFERENTIABLE, saves=(),
                   lowering=Extern(NUMPY_ROUTINE, ("data", "data")),
                   batch=batching.broadcasting_rule)

    def public(input, n):  # noqa: A002 - torch's names
        x, degree = ew.operand(input, torch_name), ew.operand(n, torch_name)
        if not isinstance(x, ew.Tensor) and not isinstance(degree, ew.Tensor):
            raise TypeError(f"{name}(): expected a Tensor argument, got {type(x).__name__} "
                            f"and {type(degree).__name__}")
        return bind(op, (x, degree), {})

    public.__name__ = public.__qualname__ = name
    public.__doc__ = f"Elementwise {name.replace('_', ' ')} of degree n at x (torch.special)."
    return op, with_out(public, name=torch_name)


CHEBYSHEV_T, chebyshev_polynomial_t = _polynomial("chebyshev_polynomial_t", _chebyshev("t"))
CHEBYSHEV_U, chebyshev_polynomial_u = _polynomial("chebyshev_polynomial_u", _chebyshev("u"))
CHEBYSHEV_V, chebyshev_polynomial_v = _polynomial("chebyshev_polynomial_v", _chebyshev("v"))
CHEBYSHEV_W, chebyshev_polynomial_w = _polynomial("chebyshev_polynomial_w", _chebyshev("w"))
SHIFTED_T, shifted_chebyshev_polynomial_t = _polynomial(
    "shifted_chebyshev_polynomial_t", _shifted_chebyshev("t"))
SHIFTED_U, shifted_chebyshev_polynomial_u = _polynomial(
    "shifted_chebyshev_polynomial_u", _shifted_chebyshev("u"))
SHIFTED_V, shifted_chebyshev_polynomial_v = _polynomial(
    "shifted_chebyshev_polynomial_v", _shifted_chebyshev("v"))
SHIFTED_W, shifted_chebyshev_polynomial_w = _polynomial(
    "shifted_chebyshev_polynomial_w", _shifted_chebyshev("w"))
HERMITE_H, hermite_polynomial_h = _polynomial("hermite_polynomial_h", _hermite_h)
HERMITE_HE, hermite_polynomial_he = _polynomial("hermite_polynomial_he", _hermite_he)
LAGUERRE_L, laguerre_polynomial_l = _polynomial("laguerre_polynomial_l", _laguerre_l)
LEGENDRE_P, legendre_polynomial_p = _polynomial("legendre_polynomial_p", _legendre_p)
