"""Print the coefficient tables of the float32 erf (src/autojit/codegen/cpu/mathlib/single.py).

    python tools/erf_single_table.py    # needs mpmath and scipy (installed with torch)

SingleEmitter.erf evaluates, in float32, one polynomial per element, its coefficients chosen by
`select`s on |x| as the double erf chooses its own (tools/erf_table.py), in one of two forms:

- |x| < SMALL_END: erf(x) = x + x R(x*x), R(u) = erf(sqrt u) / sqrt u - 1 of degree
  SMALL_DEGREE, rounded once by an fma;
- each piece [a, b) of PIECES around its centre c: erf(x) = hi + (t Q(t) + lo), t = |x| - c
  (exact: c has few bits and |x| lies within a factor two of it), hi + lo erf(c) as two floats,
  Q of degree DEGREE;
- from END, 1 (erf rounds to 1 in float32 from 3.9196).

Each polynomial is a least-squares fit at 4,000 (R) or 600 (Q) Chebyshev points of its interval,
in double, its coefficients rounded to float32. `main` then evaluates the float32 scheme (fma
emulated by one rounding of the exact double product and sum) at 3.2 million points of
[0, 4.2] and reports its largest error against erf in double, in ulps of the float32 result:
0.85 ulp with these degrees (lower degrees pass 0.95 ulp). The printed text is ERF_R and
ERF_PIECES of single.py.
"""

from __future__ import annotations

import textwrap

import mpmath
import numpy as np
from scipy.special import erf

mpmath.mp.dps = 40
SMALL_END = 0.75
SMALL_DEGREE = 5
DEGREE = 8
PIECES = [(0.75, 1.25, 1.75), (1.75, 2.25, 2.75), (2.75, 3.375, 3.9375)]  # (a, c, b)
F32 = np.float32


def _fit(function, low: float, high: float, degree: int, count: int) -> list:
    k = np.arange(count)
    x = (low + high) / 2 + (high - low) / 2 * np.cos(np.pi * (k + 0.5) / count)
    coefficients = np.polynomial.polynomial.polyfit(x, function(x), degree)
    return [float(F32(value)) for value in coefficients]


def _small(u: np.ndarray) -> np.ndarray:
    root = np.sqrt(np.maximum(u, 1e-300))
    return np.where(u > 0, erf(root) / root - 1, 2 / np.sqrt(np.pi) - 1)


def _piece(c: float):
    def rise(t: np.ndarray) -> np.ndarray:
        exact = np.array([float(mpmath.erf(c + value) - mpmath.erf(c)) for value in t])
        return exact / t

    return rise


def tables() -> tuple:
    small = _fit(_small, 0.0, SMALL_END ** 2, SMALL_DEGREE, 4000)
    pieces = []
    for low, centre, high in PIECES:
        head = float(F32(float(mpmath.erf(centre))))
        tail = float(F32(float(mpmath.erf(centre) - mpmath.mpf(head))))
        pieces.append((low, centre, head, tail, _fit(_piece(centre), low - centre,
                                                     high - centre, DEGREE, 600)))
    return small, pieces


def _fma(a, b, c):
    return (a.astype(np.float64) * b.astype(np.float64) + np.float64(c)).astype(F32)


def _horner(coefficients: list, v: np.ndarray) -> np.ndarray:
    result = np.full_like(v, F32(coefficients[-1]))
    for value in reversed(coefficients[:-1]):
        result = _fma(result, v, F32(value))
    return result


def evaluate(x: np.ndarray, small: list, pieces: list) -> np.ndarray:
    """The float32 scheme of SingleEmitter.erf, emulated in NumPy."""
    magnitude = np.abs(x.astype(F32))
    out = np.ones_like(magnitude)
    near = magnitude < SMALL_END
    out[near] = _fma(magnitude[near], _horner(small, magnitude[near] ** 2), magnitude[near])
    for (low, centre, head, tail, q), (_, _, high) in zip(pieces, PIECES):
        inside = (magnitude >= low) & (magnitude < high)
        t = (magnitude[inside] - F32(centre)).astype(F32)
        out[inside] = (np.float64(F32(head)) +
                       _fma(t, _horner(q, t), F32(tail)).astype(np.float64)).astype(F32)
    return np.copysign(out, x)


def main() -> None:
    small, pieces = tables()
    x = np.unique(np.concatenate([np.linspace(0, 4.2, 3_000_001).astype(F32),
                                  np.geomspace(1e-30, SMALL_END, 200_001).astype(F32)]))
    exact = erf(x.astype(np.float64))
    got = evaluate(x, small, pieces).astype(np.float64)
    rounded = np.abs(exact.astype(F32))
    ulp = (np.nextafter(rounded, F32(np.inf)) - rounded).astype(np.float64)
    print(f"# largest error {np.max(np.abs(got - exact) / ulp):.3f} ulp")
    print("ERF_R = [" + _wrapped(small, 9) + "]")
    print("ERF_PIECES = [")
    for low, centre, head, tail, q in pieces:
        print(f"    ({low}, {centre}, {head}, {tail},")
        print("     [" + _wrapped(q, 6) + "]),")
    print("]")


def _wrapped(values: list, indent: int) -> str:
    """The values, comma-separated, in lines of at most 99 columns after `indent` spaces."""
    return textwrap.fill(", ".join(repr(value) for value in values), 99 - indent,
                         subsequent_indent=" " * indent, break_on_hyphens=False)


if __name__ == "__main__":
    main()
