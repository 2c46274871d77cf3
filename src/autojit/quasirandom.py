"""autojit.quasirandom: torch.quasirandom's SobolEngine, the low-discrepancy Sobol' sequence that
Bayesian optimization (BoTorch) and quasi-Monte Carlo integration draw their points from.

The points are torch's, bit for bit: the direction numbers of Joe and Kuo's table for 21,201
dimensions (new-joe-kuo-6.21201, read from the copy SciPy ships for scipy.stats.qmc.Sobol), 30
bits, points taken in Gray-code order from an all-zero first point, and Owen-type linear
matrix scrambling with a random digital shift drawn as torch draws them (`randint(2, ...)`
from a Generator seeded with `seed`, or from the default generator without one, so that
manual_seed decides it; both give torch's numbers: tensor/generator.py). The bit work runs in
NumPy on int64 arrays; the state is kept as tensors under torch's attribute names
(`sobolstate`, `shift`, `quasi`, `num_generated`), which libraries read.
"""

from __future__ import annotations

import functools
import os

import numpy as np

from .ops.functional import cat
from .tensor.creation import from_numpy
from .tensor.dtypes import get_default_dtype
from .tensor.generator import Generator
from .tensor.random_factories import randint

__all__ = ["SobolEngine"]


@functools.lru_cache(maxsize=1)
def _joe_kuo_table() -> tuple:
    """(primitive polynomials, initial direction numbers) of the 21,201 dimensions."""
    import scipy.stats

    path = os.path.join(os.path.dirname(scipy.stats.__file__), "_sobol_direction_numbers.npz")
    with np.load(path) as table:
        return table["poly"].astype(np.int64), table["vinit"].astype(np.int64)


def _direction_numbers(dimension: int, bits: int) -> np.ndarray:
    """The direction numbers of the first `dimension` dimensions, `bits` of them each, as
    integers whose leading bit is the first binary digit of the point (dimension, bit)."""
    poly, vinit = _joe_kuo_table()
    poly, vinit = poly[:dimension], vinit[:dimension]
    state = np.zeros((dimension, bits), dtype=np.int64)
    state[0] = 1  # the first dimension is the van der Corput sequence: every m_j is 1
    degree = np.array([int(p).bit_length() - 1 for p in poly], dtype=np.int64)
    rest = np.arange(1, dimension)
    for j in range(bits):
        if j < vinit.shape[1]:  # m_j is the table's own below the degree
            given = rest[degree[rest] > j]
            state[given, j] = vinit[given, j]
        grown = rest[degree[rest] <= j]  # beyond it, the polynomial's recurrence
        if not len(grown):
            continue
        s = degree[grown]
        value = state[grown, j - s].copy()
        for k in range(int(s.max())):
            used = k < s
            coefficient = (poly[grown] >> np.maximum(s - 1 - k, 0)) & 1
            term = state[grown, np.maximum(j - k - 1, 0)] << (k + 1)
            value ^= np.where(used & (coefficient == 1), term, 0)
        state[grown, j] = value
    # m_j as the j-th binary digit onward: shifted left to the top of `bits`.
    return state << (bits - 1 - np.arange(bits, dtype=np.int64))


def _parity(values: np.ndarray) -> np.ndarray:
    """Whether each int64 has an odd number of set bits (all below bit 62)."""
    for shift in (32, 16, 8, 4, 2, 1):
        values = values ^ (values >> shift)
    return values & 1


def _scramble(state: np.ndarray, lower: np.ndarray, bits: int) -> np.ndarray:
    """Each direction number multiplied, over GF(2), by its dimension's lower triangular matrix
    of random bits (unit diagonal): output bit `bits - 1 - p` is row p's parity against it."""
    lower = lower.copy()
    lower[:, np.arange(bits), np.arange(bits)] = 1
    weights = np.int64(1) << (bits - 1 - np.arange(bits, dtype=np.int64))
    rows = (lower * weights).sum(-1)  # (dimension, row p): the row's bits as an integer
    parities = _parity(rows[:, None, :] & state[:, :, None])  # (dimension, j, p)
    return (parities << (bits - 1 - np.arange(bits, dtype=np.int64))).sum(-1)


class SobolEngine:
    """A generator of Sobol' points in [0, 1)^dimension, scrambled or not (torch.quasirandom).

    >>> import autojit
    >>> engine = autojit.quasirandom.SobolEngine(2)
    >>> engine.draw(4).tolist()
    [[0.0, 0.0], [0.5, 0.5], [0.75, 0.25], [0.25, 0.75]]
    """

    MAXBIT = 30
    MAXDIM = 21201

    def __init__(self, dimension: int, scramble: bool = False, seed: int | None = None):
        if dimension > self.MAXDIM or dimension < 1:
            raise ValueError("Supported range of dimensionality "
                             f"for SobolEngine is [1, {self.MAXDIM}]")
        self.seed = seed
        self.scramble = scramble
        self.dimension = dimension
        state = _direction_numbers(dimension, self.MAXBIT)
        if scramble:
            state, shift = self._scrambled(state)
        else:
            shift = np.zeros(dimension, dtype=np.int64)
        self.sobolstate = from_numpy(state)
        self.shift = from_numpy(shift)
        self.quasi = self.shift.clone()
        self._first_point = (self.quasi / 2 ** self.MAXBIT).reshape(1, -1)
        self.num_generated = 0

    def _scrambled(self, state: np.ndarray) -> tuple:
        # Without a seed, torch draws from the default generator (manual_seed decides).
        generator = None
        if self.seed is not None:
            generator = Generator()
            generator.manual_seed(self.seed)
        # The digital shift, then the matrices: torch draws them in this order.
        shift_bits = randint(2, (self.dimension, self.MAXBIT), generator=generator).numpy()
        shift = shift_bits @ (np.int64(1) << np.arange(self.MAXBIT, dtype=np.int64))
        lower = np.tril(randint(2, (self.dimension, self.MAXBIT, self.MAXBIT),
                                generator=generator).numpy())
        return _scramble(state, lower, self.MAXBIT), shift

    def _advance(self, n: int, start: int, keep: bool) -> np.ndarray | None:
        """Move `quasi` n points on, flipping the direction numbers of the Gray code of
        indices start, start + 1, ...; the points passed, as integers, when `keep`."""
        if n <= 0:
            return np.empty((0, self.dimension), dtype=np.int64) if keep else None
        index = np.arange(start, start + n, dtype=np.int64)
        flipped = np.log2((index + 1) & ~index).astype(np.int64)  # the lowest clear bit
        steps = self.sobolstate.numpy()[:, flipped].T  # (n, dimension)
        points = np.bitwise_xor.accumulate(steps, axis=0) ^ self.quasi.numpy()
        self.quasi = from_numpy(points[-1].copy())
        return points if keep else None

    def draw(self, n: int = 1, out=None, dtype=None):
        """The next n points, an (n, dimension) tensor of `dtype` (the default dtype when
        None); written into `out` too when given."""
        dtype = get_default_dtype() if dtype is None else dtype
        count = n - 1 if self.num_generated == 0 else n  # the points after the first
        if count < 0 and not (n == 1 and self.num_generated == 0):
            raise RuntimeError(f"Trying to create tensor with negative dimension {count}: "
                               f"[{count}, {self.dimension}]")
        if self.num_generated == 0:
            if n == 1:
                result = self._first_point.to(dtype)
            else:
                rest = self._points(self._advance(n - 1, 0, True), dtype)
                result = cat((self._first_point.to(dtype), rest), dim=-2)
        else:
            result = self._points(self._advance(n, self.num_generated - 1, True), dtype)
        self.num_generated += n
        if out is not None:
            out.resize_as_(result).copy_(result)
            return out
        return result

    def _points(self, integers: np.ndarray, dtype):
        # An integer below 2**30 is exact in float64, and the scaling by a power of two is
        # exact: one rounding to `dtype`, as torch's kernel gives.
        values = from_numpy(integers.astype(np.float64) * 2.0 ** -self.MAXBIT)
        return values.to(dtype)

    def draw_base2(self, m: int, out=None, dtype=None):
        """The next 2**m points, keeping the count drawn a power of two (the balance
        properties of Sobol' points need it)."""
        n = 2 ** m
        total_n = self.num_generated + n
        if total_n & (total_n - 1) != 0:
            raise ValueError("The balance properties of Sobol' points require "
                             f"n to be a power of 2. {self.num_generated} points have been "
                             f"previously generated, then: n={self.num_generated}+2**{m}"
                             f"={total_n}. If you still want to do this, please use "
                             "'SobolEngine.draw()' instead.")
        return self.draw(n=n, out=out, dtype=dtype)

    def reset(self):
        """Back to the first point."""
        self.quasi.copy_(self.shift)
        self.num_generated = 0
        return self

    def fast_forward(self, n: int):
        """Skip the next n points."""
        if self.num_generated == 0:
            self._advance(n - 1, 0, False)
        else:
            self._advance(n, self.num_generated - 1, False)
        self.num_generated += n
        return self

    def __repr__(self) -> str:
        fields = [f"dimension={self.dimension}"]
        if self.scramble:
            fields += ["scramble=True"]
        if self.seed is not None:
            fields += [f"seed={self.seed}"]
        return self.__class__.__name__ + "(" + ", ".join(fields) + ")"

