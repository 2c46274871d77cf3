"""Print the coefficient tables of the compiled erf (src/autojit/codegen/cpu/mathlib/__init__.py).

    python tools/erf_table.py    # needs mpmath (installed with torch)

MathEmitter.erf evaluates one polynomial per element, its coefficients chosen by `select`s on
|x| (no table reads, so no vector gathers), in one of two forms:

- |x| < SMALL_END: erf(x) = x + x R(x*x), R(u) = erf(sqrt u) / sqrt u - 1 of degree
  SMALL_DEGREE. Its constant term is 2/sqrt(pi) - 1 rounded, so that x + x R(0), rounded once by
  an fma, is erf of a tiny x correctly rounded; the other terms interpolate (R(u) - R(0)) / u.
- each piece [a, b) of BOUNDS: erf(x) = erf(c) + t Q(t), t = |x| - c, Q of degree DEGREE - 1
  (DEGREE coefficients, the small form's padded with zeros). c is a multiple of 2**-48, so t is
  exact, chosen where erf(c) is within 2**-64 of a double: the constant term erf(c), rounded,
  adds no error. The rounding errors of Q reach the result scaled by |t Q| / erf(x), that is
  |erf(x) - erf(c)| / erf(x): in the first piece, where erf rises fastest, c sits where erf(c)
  is FIRST_SHARE of the way from erf(a) to erf(b), which measured the smallest largest error of
  the shares tried (0.6 to 0.8, and the midpoint, 0.77 of the way: 0.71 ulp at x = 0.769); the
  other pieces are centred (their erf moves by 1.3% or less). docs/notes/accurate-numerics.md,
  "erf without gathers", has the layouts tried and the measurements.

Each polynomial interpolates its function at the Chebyshev points of its interval, computed with
60 digits, converted to powers of the variable and rounded to doubles. `main` reports the largest
error of the rounded polynomials, evaluated exactly, on 400 points of each piece (in ulps of
erf(x)). The printed text is ERF_SMALL, ERF_PIECES and ERF_END of mathlib.py.
"""

from __future__ import annotations

import sys

SMALL_END, SMALL_DEGREE = 0.75, 10
# erf(x) rounds to 1 from 5.9216 on (erfc(x) < 2**-54): ERF_END is past it.
BOUNDS = (0.75, 1.75, 3.5, 5.9375)
DEGREE = 21
FIRST_SHARE = 0.7
CENTRE_GRID = 2.0 ** -48


def chebyshev_powers(mp, f, low, high, degree: int) -> list:
    """The coefficients of v**0 ... v**degree of the polynomial interpolating f at the
    Chebyshev points of [low, high], as mpmath numbers."""
    middle, half = (mp.mpf(low) + high) / 2, (mp.mpf(high) - low) / 2
    count = degree + 1
    angles = [mp.pi * (k + mp.mpf(1) / 2) / count for k in range(count)]
    values = [f(middle + half * mp.cos(angle)) for angle in angles]
    chebyshev = [2 * mp.fsum(v * mp.cos(i * a) for v, a in zip(values, angles)) / count
                 for i in range(count)]
    chebyshev[0] /= 2
    # T_n in powers of s = (v - middle) / half, by T_n = 2 s T_(n-1) - T_(n-2) ...
    powers = [[mp.mpf(1)], [mp.mpf(0), mp.mpf(1)]]
    while len(powers) < count:
        doubled = [mp.mpf(0)] + [2 * c for c in powers[-1]]
        previous = powers[-2] + [mp.mpf(0)] * (len(doubled) - len(powers[-2]))
        powers.append([a - c for a, c in zip(doubled, previous)])
    in_s = [mp.mpf(0)] * count
    for weight, polynomial in zip(chebyshev, powers):
        for n, c in enumerate(polynomial):
            in_s[n] += weight * c
    # ... then in powers of v: s**n = sum_j binomial(n, j) v**j (-middle)**(n - j) / half**n.
    in_v = [mp.mpf(0)] * count
    for n, c in enumerate(in_s):
        for j in range(n + 1):
            in_v[j] += c * mp.binomial(n, j) * (-middle) ** (n - j) / half ** n
    return in_v


def small_polynomial(mp) -> list:
    """R's coefficients, rounded: R(0), then the interpolant of (R(u) - R(0)) / u."""
    constant = 2 / mp.sqrt(mp.pi) - 1

    def rest(u):
        if u == 0:
            return -2 / (3 * mp.sqrt(mp.pi))  # R'(0)
        x = mp.sqrt(u)
        return (mp.erf(x) / x - 1 - constant) / u

    coefficients = chebyshev_powers(mp, rest, 0, mp.mpf(SMALL_END) ** 2, SMALL_DEGREE - 1)
    return [float(constant)] + [float(c) for c in coefficients]


def centre(mp, low: float, high: float, share) -> tuple[float, float]:
    """(c, erf(c) rounded): c a multiple of CENTRE_GRID near where erf(c) is `share` of the way
    from erf(low) to erf(high) (None: near the midpoint), erf(c) within 2**-64 of a double."""
    if share is None:
        aim = mp.mpf(low + high) / 2
    else:
        target = mp.erf(low) + share * (mp.erf(high) - mp.erf(low))
        below, above = mp.mpf(low), mp.mpf(high)
        for _ in range(80):
            aim = (below + above) / 2
            below, above = (aim, above) if mp.erf(aim) < target else (below, aim)
    slope = 2 / mp.sqrt(mp.pi) * mp.exp(-aim * aim)
    ulp = mp.mpf(2) ** (mp.floor(mp.log(mp.erf(aim), 2)) - 52)
    # Steps move erf(c) by an irrational share of an ulp, so its distance to the nearest double
    # takes every value; none is shorter than the grid.
    step = max(float(ulp / slope * (mp.sqrt(5) - 1) / 2), CENTRE_GRID)
    for k in range(200000):
        for sign in (1, -1):
            c = round((float(aim) + sign * k * step) / CENTRE_GRID) * CENTRE_GRID
            value = mp.erf(c)
            if abs(value - mp.mpf(float(value))) < mp.mpf(2) ** -64 * value:
                return c, float(value)
    raise ValueError(f"no centre in [{low}, {high})")


def piece_polynomial(mp, index: int) -> tuple:
    """(start, c, erf(c), Q's coefficients rounded) of piece `index` of BOUNDS."""
    low, high = BOUNDS[index], BOUNDS[index + 1]
    c, value = centre(mp, low, high, FIRST_SHARE if index == 0 else None)
    exact_value = mp.erf(c)

    def quotient(t):
        if abs(t) < mp.mpf(10) ** -40:
            return 2 / mp.sqrt(mp.pi) * mp.exp(-mp.mpf(c) ** 2)
        return (mp.erf(c + t) - exact_value) / t

    coefficients = chebyshev_powers(mp, quotient, low - c, high - c, DEGREE - 1)
    return low, c, value, [float(q) for q in coefficients]


def tables(mp) -> tuple[list, list, list]:
    """ERF_SMALL, ERF_PIECES and the largest error of each, in ulps of erf(x), on 400 points."""
    small = small_polynomial(mp)
    pieces = [piece_polynomial(mp, index) for index in range(len(BOUNDS) - 1)]
    worst = []
    for index, start in enumerate((0.0,) + BOUNDS[:-1]):
        end, error = BOUNDS[index], 0.0
        for k in range(1, 401):
            x = mp.mpf(start) + (end - start) * mp.mpf(k) / 401
            exact = mp.erf(x)
            if index == 0:
                u = x * x
                value = x + x * mp.fsum(mp.mpf(q) * u ** n for n, q in enumerate(small))
            else:
                _, c, erf_c, quotient = pieces[index - 1]
                t = x - c
                value = erf_c + t * mp.fsum(mp.mpf(q) * t ** n for n, q in enumerate(quotient))
            ulp = mp.mpf(2) ** (mp.floor(mp.log(exact, 2)) - 52)
            error = max(error, float(abs(value - exact) / ulp))
        worst.append(error)
    return small, pieces, worst


def _numbers(names: list, indent: str) -> list:
    lines, line = [], indent
    for number in names:
        if len(line) + len(number) + 2 > 99:
            lines.append(line.rstrip())
            line = indent
        line += number + ", "
    lines.append(line.rstrip(", "))
    return lines


def main() -> int:
    import mpmath

    mpmath.mp.dps = 60
    small, pieces, worst = tables(mpmath.mp)
    print(f"# largest error before evaluation, ulps of erf(x): small {worst[0]:.3f}, pieces "
          + ", ".join(f"{w:.3f}" for w in worst[1:]), file=sys.stderr)
    print(f"ERF_SMALL_END = {SMALL_END!r}")
    print("ERF_SMALL = [")
    print("\n".join(_numbers([repr(c) for c in small], "    ")) + ",")
    print("]")
    print("ERF_PIECES = [")
    for start, c, value, quotient in pieces:
        print(f"    ({start!r}, {c!r}, {value!r}, [")
        print("\n".join(_numbers([repr(q) for q in quotient], "        ")) + "]),")
    print("]")
    print(f"ERF_END = {BOUNDS[-1]!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
