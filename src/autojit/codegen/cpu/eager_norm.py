"""The eager layer_norm and layer_norm_backward (ops/nn/normalization.py's primitives) over the
trailing dims of a row-major array as one native loop over rows each, split over the cores:
NumPy's routine makes some ten passes and temporaries per call: on a (256, 128) float32 input
about 60 us forward and 120 us backward, against 21 and 31 for these loops (docs/performance.md
has the figures).

Per row of n elements (C-contiguous; the trailing dims flattened), the NumPy routine's formulas
in the element type, each sum accumulated in float64 (eight lanes, then in order) and rounded
to the element type, as eager_softmax.py's and the compiled kernels' float32 sums:

    layer_norm:           mean = sum(x) / n, c = x - mean, var = sum(c * c) / n,
                          r = 1 / sqrt(var + eps), out = c * r
    layer_norm_backward:  mean, c and r as above, out = (grad - sum(grad) / n) * r
                          - c * (r * r * r * (sum(grad * c) / n))

The values are the NumPy routine's to float32's rounding, not its bits. A routine is
eager_softmax.RowRoutine's `i32 f(ptr argument, i64 part)`, its words (x or grad, [x,] out,
rows, n, parts, eps as the bits of a double).
"""

from __future__ import annotations

import numpy as np

from .eager_softmax import LANES, RowRoutine, routines, rows_of, run_rows

_NAMES = ("layer_norm", "layer_norm_backward")
_state: dict = {}  # dtype -> {name: address}, or None where none can be made


class _NormRoutine(RowRoutine):
    SECOND = "x"

    def splat(self, value):
        """A vector of `value` in each lane."""
        vector = self.ir.Constant(self.vector, [0.0] * LANES)
        for lane in range(LANES):
            vector = self.b.insert_element(vector, value, self.constant(lane, self.i32))
        return vector

    def scalar(self, value: float):
        return self.ir.Constant(self.element, value)

    def statistics(self, x, n, flag):
        """(mean, its lanes, 1 / sqrt(var + eps)) of the row x (flag: eps's bits)."""
        b = self.b
        count = b.sitofp(n, self.element)
        mean = b.fdiv(self.row_sum(n, lambda j: self.load_vector(x, j),
                                   lambda j: self.load(x, j)), count)
        means = self.splat(mean)

        def square_vector(j):
            centered = b.fsub(self.load_vector(x, j), means)
            return b.fmul(centered, centered)

        def square(j):
            centered = b.fsub(self.load(x, j), mean)
            return b.fmul(centered, centered)

        variance = b.fdiv(self.row_sum(n, square_vector, square), count)
        eps = b.bitcast(flag, self.double)
        if self.element != self.double:
            eps = b.fptrunc(eps, self.element)
        root = self.intrinsic(f"llvm.sqrt.{'f32' if self.element != self.double else 'f64'}",
                              self.element, [b.fadd(variance, eps)])
        return mean, means, b.fdiv(self.scalar(1.0), root), count

    def _layer_norm_row(self, row, n, pointers, flag) -> None:
        b = self.b
        x, out = self._row(row, n, pointers["x"]), self._row(row, n, pointers["out"])
        mean, _, scale, _ = self.statistics(x, n, flag)
        self.loop(self.constant(0), n, 1, [], lambda j, acc: self.store(
            b.fmul(b.fsub(self.load(x, j), mean), scale), out, j))

    def _layer_norm_backward_row(self, row, n, pointers, flag) -> None:
        b = self.b
        grad, x, out = (self._row(row, n, pointers[key]) for key in ("grad", "x", "out"))
        mean, means, scale, count = self.statistics(x, n, flag)
        mean_grad = b.fdiv(self.row_sum(n, lambda j: self.load_vector(grad, j),
                                        lambda j: self.load(grad, j)), count)
        moment = b.fdiv(self.row_sum(
            n, lambda j: b.fmul(self.load_vector(grad, j), b.fsub(self.load_vector(x, j),
                                                                   means)),
            lambda j: b.fmul(self.load(grad, j), b.fsub(self.load(x, j), mean))), count)
        factor = b.fmul(b.fmul(b.fmul(scale, scale), scale), moment)

        def value(j, acc):
            centered = b.fsub(self.load(x, j), mean)
            return self.store(b.fsub(b.fmul(b.fsub(self.load(grad, j), mean_grad), scale),
                                     b.fmul(centered, factor)), out, j)

        self.loop(self.constant(0), n, 1, [], value)


def _functions(dtype: np.dtype):
    return routines(_state, dtype, _NormRoutine, _NAMES, "eager-norm")


def run(name: str, arrays: list, count: int, eps: float):
    """layer_norm(x) or layer_norm_backward(grad, x) over the last `count` dims of C-contiguous
    arrays of one float dtype and shape, into a new array; None where there is no routine."""
    flag = int(np.float64(eps).view(np.int64))
    return run_rows(_state, _functions, name, arrays, rows_of(arrays[0], count), flag)
