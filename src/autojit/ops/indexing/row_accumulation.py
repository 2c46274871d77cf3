"""Rows added into an array at repeated indices, in index order: `np.add.at(out, index, values)`
along the first dim, with whole rows at a time.

The accumulating `index_put` (indexing/__init__.py) is the gradient of every lookup by index, an
embedding's among them, and its NumPy impl is `np.add.at`. NumPy's fast path for ufunc.at
covers one-dimensional operands only; for rows it costs about a microsecond a row (an embedding
gradient of 1024 rows of 128 float32 into 65 took 1.14 ms in the eager transformer step).
`add_rows` gets the same bits in rounds: round r adds the r-th occurrence of every index at
once, so each destination row still takes its values one at a time in their order, as np.add.at
does and as the compiled step does (codegen/cpu/rows.py). That costs one vectorized add per
round, so it is used only where the deepest index repeats far fewer times than there are rows
(`worth_rounds`): the embedding gradient above takes 0.14 ms. Where codegen has the compiled
plans' native loop for the dtype (codegen/cpu/rows.py: float32, float64, int32 and int64),
`add_rows` runs it instead from 1024 elements, the same additions in the same order in one
call.
"""

from __future__ import annotations

import numpy as np

# Rows narrower than this stay with np.add.at, whose per-element cost is then small next to a
# round's (float32, 100000 scalars into 1000: 0.12 ms by np.add.at, 5.7 ms in rounds).
_MIN_ROW = 16
# A round costs a few microseconds whatever its width; np.add.at about one per row.
_ROWS_PER_ROUND = 8
# The sorting and grouping before the first round cost as much as np.add.at of about this many
# elements (float32: 128 rows of 64 take as long either way; 16 rows of 32, an embedding
# gradient of a batch of 16 tokens, took 7 us by np.add.at and 136 us in rounds).
_MIN_ELEMENTS = 8192


# Set by codegen (codegen/cpu/rows.py's `add_rows`, installed by codegen/__init__.py):
# NATIVE(out, index, values) -> True where it added the rows natively, one element at a time
# in index order (np.add.at's bits), False where it has no routine (another dtype or layout,
# no LLVM).
NATIVE = None
# Below this many elements np.add.at costs what the native call does (8 rows of 64 float32:
# 14.8 against 15.4 us, with the copy and checks around either).
_NATIVE_ELEMENTS = 1024


def worth_rounds(rows: int, row: int, depth: int) -> bool:
    """Whether adding `rows` rows of `row` elements, at most `depth` of them into any one
    destination, is cheaper in rounds than by np.add.at."""
    return row >= _MIN_ROW and depth * _ROWS_PER_ROUND <= rows and rows * row >= _MIN_ELEMENTS


def add_rows(out: np.ndarray, index: np.ndarray, values: np.ndarray) -> np.ndarray:
    """out[index[j]] += values[j] for j in order, in place (index 1-D and in range, values of
    shape (len(index), *out.shape[1:]) and out's dtype); returns out. Falls back to np.add.at
    where rounds would not pay (`worth_rounds`)."""
    count = index.shape[0]
    if count == 0:
        return out
    # (an index past the rows goes on to np.add.at or the rounds, which raise NumPy's error)
    if NATIVE is not None and values.size >= _NATIVE_ELEMENTS and \
            np.maximum.reduce(index) < out.shape[0] and NATIVE(out, index, values):
        return out
    if not worth_rounds(count, values[0].size, 1):  # too small or narrow for any depth
        np.add.at(out, index, values)
        return out
    order = np.argsort(index, kind="stable")
    ordered = index[order]
    first = np.empty(count, bool)
    first[0] = True
    np.not_equal(ordered[1:], ordered[:-1], out=first[1:])
    starts = np.flatnonzero(first)
    repeats = np.diff(starts, append=count)
    depth = int(repeats.max())
    if not worth_rounds(count, values[0].size, depth):
        np.add.at(out, index, values)
        return out
    # Destinations by how often they repeat, most first: the ones still taking values in
    # round r are then a prefix.
    by_repeats = np.argsort(-repeats, kind="stable")
    starts, repeats = starts[by_repeats], repeats[by_repeats]
    destinations = ordered[starts]
    sums = out[destinations]
    taking = np.searchsorted(-repeats, -np.arange(depth), side="left")
    for round_index, width in enumerate(taking.tolist()):
        sums[:width] += values[order[starts[:width] + round_index]]
    out[destinations] = sums
    return out
