"""Print the coefficient table of the compiled erfc (src/autojit/codegen/cpu/mathlib/erfc.py).

    python tools/erfc_table.py    # needs mpmath (installed with torch)

erfc(x) = exp(-x*x) * erfcx(x); erfcx is smooth and slowly varying, so on each quarter of a
binade of [0.5, 32) (`PIECES` pieces) it is a polynomial of degree `DEGREE` in
s = 8 (m - 1) - (2j + 1), where x = 2**e * m, 1 <= m < 2 and j = floor(4 (m - 1)): s runs over
[-1, 1). Each polynomial interpolates erfcx at the Chebyshev points of its piece, computed
with 60 digits, then is converted to powers of s and rounded to doubles, the constant term as
a double-double; `main` reports the largest error of the rounded polynomials on 400 points
of each piece (about 0.1 of an ulp before evaluation). The printed text is ERFCX_TABLE.
"""

from __future__ import annotations

import sys

FIRST_EXPONENT, BINADES, DEGREE = -1, 6, 13
PIECES = 4 * BINADES


def piece_polynomial(mp, exponent: int, quarter: int) -> list:
    """The piece's coefficients of s**0 ... s**DEGREE, as mpmath numbers."""
    base = mp.mpf(2) ** exponent
    centre, half_width = base * (1 + mp.mpf(2 * quarter + 1) / 8), base / 8

    def erfcx(s):
        x = centre + half_width * s
        return mp.erfc(x) * mp.exp(x * x)

    count = DEGREE + 1
    angles = [mp.pi * (k + mp.mpf(1) / 2) / count for k in range(count)]
    values = [erfcx(mp.cos(angle)) for angle in angles]
    chebyshev = [2 * mp.fsum(v * mp.cos(i * a) for v, a in zip(values, angles)) / count
                 for i in range(count)]
    chebyshev[0] /= 2
    # T_n in powers of s, by T_n = 2 s T_(n-1) - T_(n-2).
    powers = [[mp.mpf(1)], [mp.mpf(0), mp.mpf(1)]]
    while len(powers) < count:
        doubled = [mp.mpf(0)] + [2 * c for c in powers[-1]]
        previous = powers[-2] + [mp.mpf(0)] * (len(doubled) - len(powers[-2]))
        powers.append([a - c for a, c in zip(doubled, previous)])
    coefficients = [mp.mpf(0)] * count
    for weight, polynomial in zip(chebyshev, powers):
        for degree, c in enumerate(polynomial):
            coefficients[degree] += weight * c
    return coefficients, erfcx


def table(mp) -> tuple[list, float]:
    rows, worst = [], 0.0
    for piece in range(PIECES):
        exponent, quarter = FIRST_EXPONENT + piece // 4, piece % 4
        exact, erfcx = piece_polynomial(mp, exponent, quarter)
        high = float(exact[0])
        row = [high, float(exact[0] - high)] + [float(c) for c in exact[1:]]
        for k in range(400):
            s = -1 + mp.mpf(2 * k) / 399
            value = mp.mpf(row[0]) + mp.mpf(row[1]) + mp.fsum(
                mp.mpf(c) * s ** (n + 1) for n, c in enumerate(row[2:]))
            worst = max(worst, float(abs(value / erfcx(s) - 1)))
        rows.append(row)
    return rows, worst


def main() -> int:
    import mpmath

    mpmath.mp.dps = 60
    rows, worst = table(mpmath.mp)
    print(f"# {PIECES} pieces, degree {DEGREE}: largest relative error {worst:.3g} "
          f"({worst / 2 ** -53:.2f} ulp)", file=sys.stderr)
    print("ERFCX_TABLE = [")
    for row in rows:
        numbers = [repr(value) for value in row]
        line = "    ["
        for number in numbers:
            if len(line) + len(number) + 2 > 99:
                print(line.rstrip())
                line = "     "
            line += number + ", "
        print(line.rstrip(", ") + "],")
    print("]")
    return 0


if __name__ == "__main__":
    sys.exit(main())
