"""The eager softmax, log_softmax and their backwards over the last dim (ops/nn/softmax.py's
routines) as one native loop over rows each, split over the cores: NumPy's max and sum along a
short last dim cost about 100 ns a row, most of an attention softmax's time, and a small
batch's log_softmax is six NumPy calls (docs/performance.md has the figures).

Per row of n elements (C-contiguous; the rows of a part one after another):

    softmax:           m = max(x) (NaN if any is; NumPy's maximum),
                       e = exp(x - m) (mathlib's exp, the code compiled kernels run),
                       s = sum(e) accumulated in float64 (eight lanes, then in order),
                       out = e / s
    safe softmax:      the same, but a row whose max is -inf (all -inf: attention's fully
                       masked rows) is zeros, where softmax gives NaN
    softmax_backward:  s = sum(grad * y) as above, out = y * (grad - s)
    log_softmax:       m and s = sum(exp(x - m)) as softmax's, out = (x - m) - log(s)
                       (log in the element type, of s rounded to it, as NumPy's routine)
    log_softmax_backward: s = sum(grad) as above, out = grad - exp(y) * s

The float64 accumulation is what compiled kernels do for float32 sums
(docs/notes/accurate-numerics.md), so the values agree with them and with NumPy's pairwise
sums to float32's rounding, not to the bit. A routine is `i32 f(ptr argument, i64 part)`, as
the native workers call a part of a job (workers.py); its argument the words (x or grad,
[y,] out, rows, n, parts, safe). The module of a dtype holds the four, compiled on first use
(or loaded from the kernel disk cache).
"""

from __future__ import annotations

import numpy as np

from . import workers

TYPES = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}
# From this many elements a call is split over the cores (by whole rows).
PARALLEL_ELEMENTS = 1 << 15
LANES = 8
_UNROLL = 4  # accumulators of a row's reductions
_NAMES = ("softmax", "softmax_backward", "log_softmax", "log_softmax_backward")
_state: dict = {}  # dtype -> {name: address}, or None where none can be made


def symbol(name: str, dtype: np.dtype) -> str:
    return f"autojit_eager_{name}_{TYPES[dtype]}"


class RowRoutine:
    """The builder of one routine: a loop over the part's rows, each row's loops inside, the
    row's body the method `_<name>_row(row, n, pointers, flag)` (eager_norm.py's routines
    are built on it too). Its words: the arrays' addresses (x, or grad and the second operand;
    then out), then rows, n, parts and a last word, the flag."""

    SECOND = "y"  # the name of a backward's second operand

    def __init__(self, module, name: str, dtype: np.dtype):
        from llvmlite import ir

        self.ir, self.module, self.name = ir, module, name
        self.element = ir.FloatType() if dtype.itemsize == 4 else ir.DoubleType()
        self.double = ir.DoubleType()
        self.vector = ir.VectorType(self.element, LANES)
        self.wide_vector = ir.VectorType(self.double, LANES)
        self.i64, self.i32 = ir.IntType(64), ir.IntType(32)
        self.align = dtype.itemsize
        self.function = ir.Function(module, ir.FunctionType(self.i32, [ir.PointerType(),
                                                                       self.i64]),
                                    symbol(name, dtype))
        self.function.attributes.alignstack = 64  # spills of wide vectors stay aligned

    def constant(self, value, kind=None):
        return self.ir.Constant(kind or self.i64, value)

    def intrinsic(self, name: str, kind, arguments: list):
        ir = self.ir
        declared = self.module.globals.get(name)
        if declared is None:
            declared = ir.Function(self.module, ir.FunctionType(
                kind, [argument.type for argument in arguments]), name)
        return self.b.call(declared, arguments)

    def loop(self, start, stop, step: int, carried: list, body) -> list:
        """for i = start; i + step <= stop; i += step: carried = body(i, carried); the last
        carried values (the first ones where the loop runs no time)."""
        b = self.b
        before = b.block
        header = self.function.append_basic_block("header")
        inside = self.function.append_basic_block("body")
        after = self.function.append_basic_block("after")
        b.branch(header)
        b.position_at_end(header)
        index = b.phi(self.i64)
        index.add_incoming(start, before)
        values = []
        for value in carried:
            phi = b.phi(value.type)
            phi.add_incoming(value, before)
            values.append(phi)
        more = b.icmp_signed("<=", b.add(index, self.constant(step)), stop)
        b.cbranch(more, inside, after)
        b.position_at_end(inside)
        updated = body(index, values)
        index.add_incoming(b.add(index, self.constant(step)), b.block)
        for phi, value in zip(values, updated, strict=True):
            phi.add_incoming(value, b.block)
        b.branch(header)
        b.position_at_end(after)
        return values

    def address(self, base, index):
        return self.b.gep(base, [index], inbounds=True, source_etype=self.element)

    def load_vector(self, base, index):
        return self.b.load(self.address(base, index), typ=self.vector, align=self.align)

    def load(self, base, index):
        return self.b.load(self.address(base, index), typ=self.element)

    def store(self, value, base, index) -> list:
        """Store value at base[index]; no carried values (a loop body's result)."""
        self.b.store(value, self.address(base, index))
        return []

    def widen(self, value):
        if self.element == self.double:
            return value
        kind = self.wide_vector if isinstance(value.type, self.ir.VectorType) else self.double
        return self.b.fpext(value, kind)

    def lanes(self, n, initial, combine, term_vector):
        """The lane-wise reduction (`combine`) of term_vector(j) over the row's whole blocks of
        eight, from `initial`: four accumulators over blocks of 32 (a chain of one would wait
        on each combine's latency), then one over the blocks of eight left, folded in a fixed
        order; and the index where the elements left over start."""
        b, step = self.b, _UNROLL * LANES

        def block(j, accumulators):
            return [combine(accumulator, term_vector(b.add(j, self.constant(k * LANES))))
                    for k, accumulator in enumerate(accumulators)]

        accumulators = self.loop(self.constant(0), n, step, [initial] * _UNROLL, block)
        first = b.mul(b.sdiv(n, self.constant(step)), self.constant(step))
        (accumulators[0],) = self.loop(first, n, LANES, [accumulators[0]], lambda j, acc: [
            combine(acc[0], term_vector(j))])
        folded = combine(combine(accumulators[0], accumulators[1]),
                         combine(accumulators[2], accumulators[3]))
        return folded, b.mul(b.sdiv(n, self.constant(LANES)), self.constant(LANES))

    def row_sum(self, n, term_vector, term) -> object:
        """The float64 sum over the row of term(j) (term_vector(j): eight at once): lanes,
        then the lanes in order, then the elements left over, rounded to the element type."""
        ir, b = self.ir, self.b
        zero = ir.Constant(self.wide_vector, [0.0] * LANES)
        lanes, tail = self.lanes(n, zero, b.fadd, lambda j: self.widen(term_vector(j)))
        total = ir.Constant(self.double, 0.0)
        for lane in range(LANES):  # in order: the same bits for any split into parts
            total = b.fadd(total, b.extract_element(lanes, self.constant(lane, self.i32)))
        (total,) = self.loop(tail, n, 1, [total],
                             lambda j, acc: [b.fadd(acc[0], self.widen(term(j)))])
        return total if self.element == self.double else b.fptrunc(total, self.element)

    def build(self) -> None:
        ir = self.ir
        b = self.b = ir.IRBuilder(self.function.append_basic_block("entry"))
        argument, part = self.function.args
        backward = self.name.endswith("_backward")
        names = ("grad", self.SECOND, "out") if backward else ("x", "out")
        words = [b.load(b.gep(argument, [self.constant(index)], source_etype=self.i64),
                        typ=ir.PointerType() if index < len(names) else self.i64)
                 for index in range(len(names) + 4)]
        pointers = dict(zip(names, words, strict=False))
        rows, n, parts, flag = words[len(names):]
        first = b.udiv(b.mul(part, rows), parts)
        last = b.udiv(b.mul(b.add(part, self.constant(1)), rows), parts)
        row_body = getattr(self, f"_{self.name}_row")
        self.loop(first, last, 1, [],
                  lambda row, carried: row_body(row, n, pointers, flag) or [])
        b.ret(ir.Constant(self.i32, 0))

    def _row(self, row, n, pointer):
        return self.b.gep(pointer, [self.b.mul(row, n)], inbounds=True,
                          source_etype=self.element)

    def _row_max(self, x, n):
        """The row's maximum, NaN where any element is (NumPy's maximum)."""
        ir = self.ir
        low = ir.Constant(self.vector, [float("-inf")] * LANES)
        name = "f32" if self.element != self.double else "f64"
        lanes, tail = self.lanes(n, low, lambda left, right: self.intrinsic(
            f"llvm.maximum.v{LANES}{name}", self.vector, [left, right]),
            lambda j: self.load_vector(x, j))
        largest = self.intrinsic(f"llvm.vector.reduce.fmaximum.v{LANES}{name}", self.element,
                                 [lanes])
        (largest,) = self.loop(tail, n, 1, [largest], lambda j, acc: [
            self.intrinsic(f"llvm.maximum.{name}", self.element, [acc[0], self.load(x, j)])])
        return largest

    def _exponentials(self, x, out, n, largest) -> None:
        """out = exp(x - largest) over the row (mathlib's exp, the code kernels run)."""
        from . import mathlib

        b = self.b

        def exponential(j, acc):
            shifted = b.fsub(self.load(x, j), largest)
            return self.store(mathlib.emit_unary("exp", b, self.module, shifted, self.element),
                              out, j)

        self.loop(self.constant(0), n, 1, [], exponential)

    def _softmax_row(self, row, n, pointers, safe) -> None:
        ir, b = self.ir, self.b
        x, out = self._row(row, n, pointers["x"]), self._row(row, n, pointers["out"])
        largest = self._row_max(x, n)
        masked = b.and_(b.icmp_signed("!=", safe, self.constant(0)),
                        b.fcmp_ordered("==", largest, ir.Constant(self.element,
                                                                  float("-inf"))))
        zeros = self.function.append_basic_block("zeros")
        values = self.function.append_basic_block("values")
        joined = self.function.append_basic_block("joined")
        b.cbranch(masked, zeros, values)
        b.position_at_end(zeros)
        self.loop(self.constant(0), n, 1, [],
                  lambda j, acc: self.store(ir.Constant(self.element, 0.0), out, j))
        b.branch(joined)
        b.position_at_end(values)
        self._exponentials(x, out, n, largest)
        total = self.row_sum(n, lambda j: self.load_vector(out, j), lambda j: self.load(out, j))
        self.loop(self.constant(0), n, 1, [],
                  lambda j, acc: self.store(b.fdiv(self.load(out, j), total), out, j))
        b.branch(joined)
        b.position_at_end(joined)

    def _softmax_backward_row(self, row, n, pointers, safe) -> None:
        b = self.b
        grad, y, out = (self._row(row, n, pointers[key]) for key in ("grad", "y", "out"))
        total = self.row_sum(
            n, lambda j: b.fmul(self.load_vector(grad, j), self.load_vector(y, j)),
            lambda j: b.fmul(self.load(grad, j), self.load(y, j)))
        self.loop(self.constant(0), n, 1, [], lambda j, acc: self.store(
            b.fmul(self.load(y, j), b.fsub(self.load(grad, j), total)), out, j))

    def _log_softmax_row(self, row, n, pointers, safe) -> None:
        from . import mathlib

        b = self.b
        x, out = self._row(row, n, pointers["x"]), self._row(row, n, pointers["out"])
        largest = self._row_max(x, n)
        self._exponentials(x, out, n, largest)  # out holds the exponentials until the end
        total = self.row_sum(n, lambda j: self.load_vector(out, j), lambda j: self.load(out, j))
        log_total = mathlib.emit_unary("log", b, self.module, total, self.element)
        self.loop(self.constant(0), n, 1, [], lambda j, acc: self.store(
            b.fsub(b.fsub(self.load(x, j), largest), log_total), out, j))

    def _log_softmax_backward_row(self, row, n, pointers, safe) -> None:
        from . import mathlib

        b = self.b
        grad, y, out = (self._row(row, n, pointers[key]) for key in ("grad", "y", "out"))
        total = self.row_sum(n, lambda j: self.load_vector(grad, j),
                             lambda j: self.load(grad, j))

        def difference(j, acc):
            exponential = mathlib.emit_unary("exp", b, self.module, self.load(y, j),
                                             self.element)
            return self.store(b.fsub(self.load(grad, j), b.fmul(exponential, total)), out, j)

        self.loop(self.constant(0), n, 1, [], difference)


def routines(cache: dict, dtype: np.dtype, routine: type, names: tuple, label: str):
    """{name: address} of the routines `names` of dtype, each built by the RowRoutine class
    `routine` into one module, compiled once (or loaded from the kernel disk cache under
    `label`) and kept in `cache`; None where no native code can be made."""
    def build():
        from llvmlite import ir

        from .mathlib import trig as mathlib_trig

        module = ir.Module(name=f"autojit_{label.replace('-', '_')}_{TYPES[dtype]}")
        for name in names:
            routine(module, name, dtype).build()
        return mathlib_trig.finish(str(module)), {name: symbol(name, dtype) for name in names}

    return workers.compiled_routines(cache, dtype, build, label)


def _functions(dtype: np.dtype):
    return routines(_state, dtype, RowRoutine, _NAMES, "eager-softmax")


def run(name: str, arrays: list, safe: bool = False):
    """softmax(x) or log_softmax(x) over the last dim (safe: a row of all -inf gives zeros
    from softmax), or softmax_backward(grad, y) or log_softmax_backward(grad, y), of
    C-contiguous arrays of one float dtype and shape with at least one dim, into a new array;
    None where there is no routine."""
    return run_rows(_state, _functions, name, arrays, rows_of(arrays[0], 1), int(safe))


def rows_of(array: np.ndarray, count: int) -> tuple:
    """(rows, n) of a row-major array whose rows are its last `count` dims flattened."""
    n = 1
    for size in array.shape[array.ndim - count:]:
        n *= size
    return (array.size // n if n else 0), n


def run_rows(cache: dict, functions_of, name: str, arrays: list, shape: tuple, flag: int):
    """Run the routine `name` of a RowRoutine module (functions_of(dtype), cached in `cache`
    by dtype) over `shape` = (rows, n) of the C-contiguous `arrays`, of one float dtype, with
    the last word `flag`, into a new array like the first; None where there is no routine."""
    first = arrays[0]
    functions = cache.get(first.dtype)  # (read directly: small batches call this per step)
    if functions is None:
        if first.dtype not in TYPES:
            return None
        functions = functions_of(first.dtype)
        if functions is None:
            return None
    out = np.empty_like(first)
    rows, n = shape
    native, parts = None, 1
    if first.size >= PARALLEL_ELEMENTS:
        native = workers.shared()
        if native is not None:
            parts = max(1, min(native.parts, rows))
    address = workers.data_address
    words = np.array([*map(address, arrays), address(out), rows, n, parts, flag], np.int64)
    workers.run_routine(native, functions[name], words, parts, name)
    return out
