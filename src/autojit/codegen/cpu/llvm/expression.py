"""LLVM IR for one step's expression: the template parser and the function table.

render.py builds the loop nest and calls StepEmitter for each step of a kernel's body.
Each elementwise primitive carries its scalar expression in its lowering
(`Elementwise("exp({0})")`); codegen/expression.py parses that template and walks it, and
StepEmitter emits IR for each node, so the op registry stays the one place an op is defined.
`FUNCTIONS` maps the expression language's function names to emitters (the transcendental ones
come from mathlib/__init__.py). Values are `Typed` pairs (IR value, autojit dtype); bools are i1 in
registers. Integers are LLVM's sign-less iN; an operation whose result depends on the sign
(comparisons, division, widening, conversion to float) asks the dtype (`is_signed`: uint8 and
bool are unsigned). See docs/notes/cpu-codegen.md.
"""

from __future__ import annotations

import functools
import math
from typing import NamedTuple

from llvmlite import ir

from ....tensor import dtypes
from ...expression import ExpressionWalker, RenderError
from ...kernel import DIVISION_BY_ZERO, INDEX_OUT_OF_RANGE, NEGATIVE_POWER
from .. import mathlib
from ..mathlib import atan as mathlib_atan
from ..mathlib import erfc as mathlib_erfc

INT64 = ir.IntType(64)
INT32 = ir.IntType(32)
INT16 = ir.IntType(16)
BIT = ir.IntType(1)
BYTE = ir.IntType(8)
REGISTER_TYPES = {dtypes.bool_: BIT, dtypes.uint8: BYTE, dtypes.int8: BYTE, dtypes.int16: INT16,
                  dtypes.int32: INT32, dtypes.int64: INT64, dtypes.float32: ir.FloatType(),
                  dtypes.float64: ir.DoubleType()}
# The error codes a kernel returns (NEGATIVE_POWER, ...) are kernel.py's ERRORS.


class Typed(NamedTuple):
    value: object
    dtype: dtypes.DType


# ---- values and conversions -------------------------------------------------------------------

def register_type(dtype, op_name="kernel"):
    found = REGISTER_TYPES.get(dtype)
    if found is None:
        raise RenderError(f"{op_name}: the CPU backend does not support dtype {dtype.name}")
    return found


def constant(value, dtype) -> Typed:
    """A Python scalar as an IR constant of `dtype`, converted as NumPy's full() would."""
    if dtype.category == dtypes.COMPLEX:
        return llvm_complex.complex_constant(value, dtype)
    if isinstance(value, complex):  # its real part, as full() takes it
        value = value.real
    kind = register_type(dtype)
    if dtype is dtypes.bool_:
        return Typed(ir.Constant(kind, int(bool(value))), dtype)
    if dtype.is_floating_point:
        return Typed(ir.Constant(kind, float(value)), dtype)
    bits = kind.width
    number = int(value) & ((1 << bits) - 1)
    return Typed(ir.Constant(kind, number - (1 << bits) if number >> (bits - 1) else number),
                 dtype)


def convert(builder, typed: Typed, dtype) -> Typed:
    """ndarray.astype semantics: float -> int truncates (out of range and NaN give the minimum
    integer, as NumPy on x86; int8 and int16 take the low bits of the int32 conversion, uint8
    those of the int64 one, as torch's casts do); to bool is `!= 0`; int -> int wraps."""
    value, source = typed
    if source is dtype:
        return typed
    if source.category == dtypes.COMPLEX or dtype.category == dtypes.COMPLEX:
        return llvm_complex.convert_complex(builder, typed, dtype)
    target = register_type(dtype)
    if dtype is dtypes.bool_:
        if source.is_floating_point:
            return Typed(builder.fcmp_unordered("!=", value, ir.Constant(value.type, 0.0)), dtype)
        return Typed(builder.icmp_unsigned("!=", value, ir.Constant(value.type, 0)), dtype)
    if source is dtypes.bool_:
        if dtype.is_floating_point:
            return Typed(builder.uitofp(value, target), dtype)
        return Typed(builder.zext(value, target), dtype)
    if source.is_floating_point and dtype.is_floating_point:
        if source.itemsize < dtype.itemsize:
            return Typed(builder.fpext(value, target), dtype)
        return Typed(builder.fptrunc(value, target), dtype)
    if dtype.is_floating_point:
        to_float = builder.sitofp if source.is_signed else builder.uitofp
        return Typed(to_float(value, target), dtype)
    if source.is_floating_point:
        whole = INT64 if dtype in (dtypes.int64, dtypes.uint8) else INT32
        bound = 2.0 ** (whole.width - 1)
        in_range = builder.and_(
            builder.fcmp_ordered(">=", value, ir.Constant(value.type, -bound)),
            builder.fcmp_ordered("<", value, ir.Constant(value.type, bound)))
        minimum = ir.Constant(whole, -(1 << (whole.width - 1)))
        value = builder.select(in_range, builder.fptosi(value, whole), minimum)
        return Typed(value if whole is target else builder.trunc(value, target), dtype)
    if source.itemsize < dtype.itemsize:
        widen = builder.sext if source.is_signed else builder.zext
        return Typed(widen(value, target), dtype)
    if source.itemsize == dtype.itemsize:  # uint8 and int8: the same bits
        return Typed(value, dtype)
    return Typed(builder.trunc(value, target), dtype)


def intrinsic(builder, name, args, ret=None):
    """Call llvm.`name` overloaded on the first argument's type."""
    module = builder.module
    kind = args[0].type
    if isinstance(kind, ir.FloatType):
        suffix = "f32"
    elif isinstance(kind, ir.DoubleType):
        suffix = "f64"
    else:
        suffix = f"i{kind.width}"
    full = f"llvm.{name}.{suffix}"
    function = module.globals.get(full)
    if function is None:
        function = ir.Function(module, ir.FunctionType(ret or kind, [a.type for a in args]), full)
    return builder.call(function, args)


class StepEmitter(ExpressionWalker):
    """Emits one step's expression as LLVM IR on `builder`; `flag_error(condition, code)`
    records a runtime error."""

    def __init__(self, builder, step, operands, flag_error):
        super().__init__(step, operands)
        self.b = builder
        self.flag_error = flag_error

    def literal(self, value) -> Typed:
        return constant(value, self.literal_dtype)

    def unary(self, operator: str, value: Typed) -> Typed:
        if operator == "!":
            truth = convert(self.b, value, dtypes.bool_).value
            return Typed(self.b.xor(truth, ir.Constant(BIT, 1)), dtypes.bool_)
        if value.dtype.category == dtypes.COMPLEX:
            return llvm_complex.negate(self, value)
        if value.dtype is dtypes.bool_:
            self.fail("negation of a bool value is not supported (as in NumPy)")
        if value.dtype.is_floating_point:
            return Typed(self.b.fneg(value.value), value.dtype)
        return Typed(self.b.neg(value.value), value.dtype)

    def call(self, name: str, arguments: list) -> Typed:
        if any(argument.dtype.category == dtypes.COMPLEX for argument in arguments):
            emitter = llvm_complex.COMPLEX_FUNCTIONS.get(name)
            if emitter is None:
                self.fail(f"the CPU backend has no emitter for function {name!r} of complex "
                          "values")
            return emitter(self, *arguments)
        emitter = FUNCTIONS.get(name)
        if emitter is None:
            self.fail(f"the CPU backend has no emitter for function {name!r}")
        return emitter(self, *arguments)

    def unify(self, a: Typed, c: Typed):
        dtype = dtypes.promote(a.dtype, c.dtype)
        return convert(self.b, a, dtype), convert(self.b, c, dtype), dtype

    def integer_arithmetic(self, a, c, operation):
        """Bool arithmetic runs on integers and converts back (True + True is True)."""
        a, c, dtype = self.unify(a, c)
        if dtype is not dtypes.bool_:
            return operation(a, c)
        wide = [convert(self.b, x, dtypes.int32) for x in (a, c)]
        return convert(self.b, operation(*wide), dtypes.bool_)

    def binary(self, operator, a, c) -> Typed:
        if a.dtype.category == dtypes.COMPLEX or c.dtype.category == dtypes.COMPLEX:
            return llvm_complex.binary(self, operator, a, c)
        b = self.b
        if operator in ("&&", "||"):
            a, c = (convert(b, x, dtypes.bool_).value for x in (a, c))
            return Typed(b.and_(a, c) if operator == "&&" else b.or_(a, c), dtypes.bool_)
        if operator in ("==", "!=", "<", "<=", ">", ">="):
            a, c, dtype = self.unify(a, c)
            if dtype.is_floating_point:
                compare = b.fcmp_unordered if operator == "!=" else b.fcmp_ordered
                return Typed(compare(operator, a.value, c.value), dtypes.bool_)
            compare = b.icmp_signed if dtype.is_signed else b.icmp_unsigned
            return Typed(compare(operator, a.value, c.value), dtypes.bool_)
        a, c, dtype = self.unify(a, c)
        if dtype is dtypes.bool_ and operator == "-":
            self.fail("subtraction of bool values is not supported (as in NumPy)")
        if operator == "/":
            if not dtype.is_floating_point:
                self.fail("'/' on integers is only defined inside floor(a / b)")
            return Typed(b.fdiv(a.value, c.value), dtype)
        float_name, int_name = {"+": ("fadd", "add"), "-": ("fsub", "sub"),
                                "*": ("fmul", "mul")}[operator]
        if dtype.is_floating_point:
            return Typed(getattr(b, float_name)(a.value, c.value), dtype)
        return self.integer_arithmetic(
            a, c, lambda x, y: Typed(getattr(b, int_name)(x.value, y.value), x.dtype))

    # ---- division idioms: NumPy's npy_divmod for floats, Python floor semantics for ints ------

    def _float_divmod(self, a, c):
        b = self.b
        x, y = a.value, c.value
        zero = ir.Constant(x.type, 0.0)
        modulo = b.frem(x, y)
        quotient = b.fdiv(b.fsub(x, modulo), y)
        adjust = b.and_(b.fcmp_ordered("!=", modulo, zero),
                        b.xor(b.fcmp_ordered("<", y, zero), b.fcmp_ordered("<", modulo, zero)))
        quotient = b.select(adjust, b.fsub(quotient, ir.Constant(x.type, 1.0)), quotient)
        modulo = b.select(adjust, b.fadd(modulo, y), modulo)
        # A zero remainder keeps the dividend's sign, as torch's (NumPy gives the divisor's).
        modulo = b.select(b.fcmp_ordered("==", modulo, zero),
                          intrinsic(b, "copysign", [zero, x]), modulo)
        floored = intrinsic(b, "floor", [quotient])
        rounds_up = b.fcmp_ordered(">", b.fsub(quotient, floored), ir.Constant(x.type, 0.5))
        floored = b.select(rounds_up, b.fadd(floored, ir.Constant(x.type, 1.0)), floored)
        true_quotient = b.fdiv(x, y)
        floored = b.select(b.fcmp_ordered("==", quotient, zero),
                           intrinsic(b, "copysign", [zero, true_quotient]), floored)
        floored = b.select(b.fcmp_ordered("==", y, zero), true_quotient, floored)
        return floored, modulo

    def _integer_divmod(self, x, y):
        """Floor quotient and modulo; division by zero reports torch's ZeroDivisionError (the
        values computed meanwhile are 0, NumPy's), and MIN // -1 wraps to MIN instead of
        trapping."""
        b = self.b
        kind = x.type
        zero, one, minus_one = (ir.Constant(kind, v) for v in (0, 1, -1))
        self.flag_error(b.icmp_signed("==", y, zero), DIVISION_BY_ZERO)
        unsafe = b.or_(b.icmp_signed("==", y, zero), b.icmp_signed("==", y, minus_one))
        divisor = b.select(unsafe, one, y)
        quotient = b.sdiv(x, divisor)
        modulo = b.srem(x, divisor)
        adjust = b.and_(b.icmp_signed("!=", modulo, zero),
                        b.xor(b.icmp_signed("<", modulo, zero), b.icmp_signed("<", y, zero)))
        quotient = b.select(adjust, b.sub(quotient, one), quotient)
        modulo = b.select(adjust, b.add(modulo, y), modulo)
        by_minus_one = b.icmp_signed("==", y, minus_one)
        quotient = b.select(by_minus_one, b.neg(x), quotient)
        quotient = b.select(b.icmp_signed("==", y, zero), zero, quotient)
        modulo = b.select(unsafe, zero, modulo)
        return quotient, modulo

    def _unsigned_divmod(self, x, y):
        """Quotient and modulo of unsigned integers (uint8): no signs to adjust for."""
        b = self.b
        zero, one = ir.Constant(x.type, 0), ir.Constant(x.type, 1)
        by_zero = b.icmp_unsigned("==", y, zero)
        self.flag_error(by_zero, DIVISION_BY_ZERO)
        divisor = b.select(by_zero, one, y)
        return (b.select(by_zero, zero, b.udiv(x, divisor)),
                b.select(by_zero, zero, b.urem(x, divisor)))

    def _divmod(self, a, c, which):
        a, c, dtype = self.unify(a, c)
        if dtype.is_floating_point:
            return Typed(self._float_divmod(a, c)[which], dtype)
        if dtype is dtypes.uint8:
            return Typed(self._unsigned_divmod(a.value, c.value)[which], dtype)
        return self.integer_arithmetic(
            a, c, lambda x, y: Typed(self._integer_divmod(x.value, y.value)[which], x.dtype))

    def floor_divide(self, a, c):
        return self._divmod(a, c, 0)

    def remainder(self, a, c):
        return self._divmod(a, c, 1)

    # ---- functions ------------------------------------------------------------------------------

    def float_argument(self, x: Typed, name) -> Typed:
        if not x.dtype.is_floating_point:
            self.fail(f"{name}() needs a floating-point argument, got {x.dtype.name}")
        return x

    def math(self, name, x):
        x = self.float_argument(x, name)
        return Typed(mathlib.emit_unary(name, self.b, self.b.module, x.value, x.value.type),
                     x.dtype)

    def sqrt(self, x):
        x = self.float_argument(x, "sqrt")
        return Typed(intrinsic(self.b, "sqrt", [x.value]), x.dtype)

    def absolute(self, x):
        if not x.dtype.is_signed:
            return x
        if x.dtype.is_floating_point:
            return Typed(intrinsic(self.b, "fabs", [x.value]), x.dtype)
        return Typed(intrinsic(self.b, "abs", [x.value, ir.Constant(BIT, 0)]), x.dtype)

    def sign(self, x):
        b = self.b
        if x.dtype is dtypes.bool_:
            return x  # torch: the sign of a bool is itself
        if x.dtype.is_floating_point:
            kind = x.value.type
            zero = ir.Constant(kind, 0.0)
            # torch's (0 < x) - (x < 0): zeros and NaN give 0.
            result = b.select(b.fcmp_ordered("<", x.value, zero), ir.Constant(kind, -1.0), zero)
            return Typed(b.select(b.fcmp_ordered(">", x.value, zero), ir.Constant(kind, 1.0),
                                  result), x.dtype)
        zero = ir.Constant(x.value.type, 0)
        if not x.dtype.is_signed:
            return Typed(b.zext(b.icmp_unsigned("!=", x.value, zero), x.value.type), x.dtype)
        positive = b.zext(b.icmp_signed(">", x.value, zero), x.value.type)
        negative = b.zext(b.icmp_signed("<", x.value, zero), x.value.type)
        return Typed(b.sub(positive, negative), x.dtype)

    def floor(self, x):
        if not x.dtype.is_floating_point:
            return x
        return Typed(intrinsic(self.b, "floor", [x.value]), x.dtype)

    def extremum(self, a, c, greater):
        """np.maximum / np.minimum: a NaN in either argument wins; ties give the second."""
        b = self.b
        a, c, dtype = self.unify(a, c)
        operator = ">" if greater else "<"
        if dtype.is_floating_point:
            pick = b.or_(b.fcmp_ordered(operator, a.value, c.value),
                         b.fcmp_unordered("uno", a.value, a.value))
        elif dtype.is_signed:
            pick = b.icmp_signed(operator, a.value, c.value)
        else:
            pick = b.icmp_unsigned(operator, a.value, c.value)
        return Typed(b.select(pick, a.value, c.value), dtype)

    def power(self, a, c):
        a, c, dtype = self.unify(a, c)
        if dtype.is_floating_point:
            return Typed(mathlib.emit_pow(self.b, self.b.module, a.value, c.value,
                                          a.value.type), dtype)
        return self.integer_arithmetic(a, c, self.integer_power)

    def integer_power(self, a, c):
        """Square-and-multiply over every exponent bit, unrolled (branch-free, wraps as
        NumPy does); a negative exponent raises, as the NumPy reference does."""
        b = self.b
        kind = a.value.type
        if a.dtype.is_signed:
            self.flag_error(b.icmp_signed("<", c.value, ir.Constant(kind, 0)), NEGATIVE_POWER)
        result, base, exponent = ir.Constant(kind, 1), a.value, c.value
        # A signed exponent is non-negative here: its top bit is clear.
        for _ in range(kind.width - 1 if a.dtype.is_signed else kind.width):
            bit = b.trunc(exponent, BIT)
            result = b.select(bit, b.mul(result, base), result)
            base = b.mul(base, base)
            exponent = b.lshr(exponent, ir.Constant(kind, 1))
        return Typed(result, a.dtype)

    def check_index(self, index, size):
        """ops/indexing/checks.py's check: the index itself, with an error reported where it is
        outside [0, size), or [-size, size) when the step's `wrap` is set, unless it equals
        `ignore`. One unsigned comparison: (index - low) >= (size - low)."""
        if index.dtype.is_floating_point or index.dtype is dtypes.bool_:
            self.fail(f"indices are integers, got {index.dtype.name}")
        b = self.b
        (index, size, _), original = self.unify(index, size), index
        kind = index.value.type
        low = b.neg(size.value) if self.step.attrs["wrap"] else ir.Constant(kind, 0)
        bad = b.icmp_unsigned(">=", b.sub(index.value, low), b.sub(size.value, low))
        ignore = self.step.attrs["ignore"]
        if ignore is not None:
            bad = b.and_(bad, b.icmp_signed("!=", index.value, ir.Constant(kind, ignore)))
        self.flag_error(bad, INDEX_OUT_OF_RANGE)
        return original

    def select(self, condition, a, c):
        truth = convert(self.b, condition, dtypes.bool_).value
        a, c, dtype = self.unify(a, c)
        return Typed(self.b.select(truth, a.value, c.value), dtype)

    def cast(self, x):
        return convert(self.b, x, self.step.out_dtype)

    def isnan(self, x):
        if not x.dtype.is_floating_point:
            return constant(False, dtypes.bool_)
        return Typed(self.b.fcmp_unordered("uno", x.value, x.value), dtypes.bool_)


FUNCTIONS = {
    "sqrt": StepEmitter.sqrt, "abs": StepEmitter.absolute, "sign": StepEmitter.sign,
    "floor": StepEmitter.floor, "pow": StepEmitter.power, "select": StepEmitter.select,
    "cast": StepEmitter.cast, "isnan": StepEmitter.isnan,
    "max": lambda self, a, c: self.extremum(a, c, True),
    "min": lambda self, a, c: self.extremum(a, c, False),
    "bool": lambda self, x: convert(self.b, x, dtypes.bool_),
    "floor_divide": StepEmitter.floor_divide, "remainder": StepEmitter.remainder,
    "check_index": StepEmitter.check_index,
}
for _name in mathlib.UNARY:
    FUNCTIONS[_name] = functools.partial(lambda name, self, x: self.math(name, x), _name)


# ---- rounding, sign, remainder and inverse trigonometric functions ------------------------------
# The expression functions of ops/elementwise/math_primitives.py's primitives (trunc, ceil,
# copysign, fmod, nextafter, hypot, atan2, atan, asin, acos, erfc); the arctangent family and erfc
# are emitted by mathlib/atan.py and mathlib/erfc.py.

def _rounded(name):
    """llvm.trunc / llvm.ceil on floats; integers are whole already."""
    def emit(self, x):
        if not x.dtype.is_floating_point:
            return x
        return Typed(intrinsic(self.b, name, [x.value]), x.dtype)

    return emit


def _float_pair(self, a, c, name):
    a, c, dtype = self.unify(a, c)
    if not dtype.is_floating_point:
        self.fail(f"{name}() needs floating-point arguments, got {dtype.name}")
    return a.value, c.value, dtype


def _copysign(self, a, c):
    x, y, dtype = _float_pair(self, a, c, "copysign")
    return Typed(intrinsic(self.b, "copysign", [x, y]), dtype)


def _fmod(self, a, c):
    """C's fmod: the remainder of truncated division, with the dividend's sign (frem); for
    integers srem, a zero divisor reporting torch's ZeroDivisionError."""
    a, c, dtype = self.unify(a, c)
    b = self.b
    if dtype.is_floating_point:
        return Typed(b.frem(a.value, c.value), dtype)

    def integer(x, y):
        if x.dtype is dtypes.uint8:
            return Typed(self._unsigned_divmod(x.value, y.value)[1], x.dtype)
        kind = x.value.type
        zero, one, minus_one = (ir.Constant(kind, v) for v in (0, 1, -1))
        self.flag_error(b.icmp_signed("==", y.value, zero), DIVISION_BY_ZERO)
        # y == -1 would trap for the smallest integer; its remainder is 0 like y == 0's.
        unsafe = b.or_(b.icmp_signed("==", y.value, zero), b.icmp_signed("==", y.value, minus_one))
        remainder = b.srem(x.value, b.select(unsafe, one, y.value))
        return Typed(b.select(unsafe, zero, remainder), x.dtype)

    return self.integer_arithmetic(a, c, integer)


def _nextafter(self, a, c):
    """The next representable value after x toward y (NumPy's and C99's nextafter): y where
    they are equal, the smallest subnormal with y's sign from a zero, NaN from a NaN; else x's
    bits plus one where |x| grows, minus one where it shrinks."""
    x, y, dtype = _float_pair(self, a, c, "nextafter")
    b = self.b
    bits_type = ir.IntType(64 if dtype is dtypes.float64 else 32)
    bits = b.bitcast(x, bits_type)
    zero = ir.Constant(x.type, 0.0)
    grows = b.icmp_unsigned("==", b.fcmp_ordered("<", x, y), b.fcmp_ordered(">", x, zero))
    stepped = b.select(grows, b.add(bits, ir.Constant(bits_type, 1)),
                       b.sub(bits, ir.Constant(bits_type, 1)))
    result = b.bitcast(stepped, x.type)
    tiny = b.bitcast(ir.Constant(bits_type, 1), x.type)
    result = b.select(b.fcmp_ordered("==", x, zero), intrinsic(b, "copysign", [tiny, y]), result)
    result = b.select(b.fcmp_ordered("==", x, y), y, result)
    return Typed(b.select(b.fcmp_unordered("uno", x, y), b.fadd(x, y), result), dtype)


def _hypot(self, a, c):
    """sqrt(x*x + y*y) without overflow: max(|x|, |y|) sqrt(1 + r*r), r the ratio of the
    smaller to the larger (within 2 ulp); a float32 pair in double, where x*x + y*y neither
    overflows nor loses bits. An infinity wins over a NaN, as in C99."""
    x, y, dtype = _float_pair(self, a, c, "hypot")
    b = self.b
    kind = x.type
    ax, ay = intrinsic(b, "fabs", [x]), intrinsic(b, "fabs", [y])
    if dtype is dtypes.float32:
        wide_x, wide_y = b.fpext(x, ir.DoubleType()), b.fpext(y, ir.DoubleType())
        total = intrinsic(b, "fma", [wide_x, wide_x, b.fmul(wide_y, wide_y)])
        result = b.fptrunc(intrinsic(b, "sqrt", [total]), kind)
    else:
        swap = b.fcmp_ordered(">", ay, ax)
        big, small = b.select(swap, ay, ax), b.select(swap, ax, ay)
        ratio = b.fdiv(small, big)
        one = ir.Constant(kind, 1.0)
        result = b.fmul(big, intrinsic(b, "sqrt", [intrinsic(b, "fma", [ratio, ratio, one])]))
        result = b.select(b.fcmp_ordered("==", big, ir.Constant(kind, 0.0)), big, result)
        result = b.select(b.fcmp_unordered("uno", x, y), b.fadd(x, y), result)
    infinite = b.or_(b.fcmp_ordered("==", ax, ir.Constant(kind, math.inf)),
                     b.fcmp_ordered("==", ay, ir.Constant(kind, math.inf)))
    return Typed(b.select(infinite, ir.Constant(kind, math.inf), result), dtype)


def _arctangent(name):
    def emit(self, x):
        x = self.float_argument(x, name)
        return Typed(mathlib_atan.emit_unary(name, self.b, self.b.module, x.value,
                                             x.value.type), x.dtype)

    return emit


def _atan2(self, a, c):
    y, x, dtype = _float_pair(self, a, c, "atan2")
    return Typed(mathlib_atan.emit_atan2(self.b, self.b.module, y, x, y.type), dtype)


def _erfc(self, x):
    x = self.float_argument(x, "erfc")
    return Typed(mathlib_erfc.emit_erfc(self.b, self.b.module, x.value, x.value.type), x.dtype)


# ---- bitwise ops (ops/elementwise/bitwise.py) ----------------------------------------------------
# and, or, xor and not act on i1 bools as on integers; a shift amount outside [0, width) is
# torch's: a left shift gives 0, a right shift the sign (ashr by width - 1) or, unsigned, 0.

def _integer_pair(self, a, c, name):
    a, c, dtype = self.unify(a, c)
    if dtype.is_floating_point:
        self.fail(f"{name}() needs integer or bool arguments, got {dtype.name}")
    return a.value, c.value, dtype


def _bitwise(instruction, name):
    def emit(self, a, c):
        x, y, dtype = _integer_pair(self, a, c, name)
        return Typed(getattr(self.b, instruction)(x, y), dtype)

    return emit


def _bitwise_not(self, x):
    if x.dtype.is_floating_point:
        self.fail(f"bitwise_not() needs an integer or bool argument, got {x.dtype.name}")
    return Typed(self.b.not_(x.value), x.dtype)


def _shift(left):
    def emit(self, a, c):
        x, y, dtype = _integer_pair(self, a, c, "shift")
        b, kind = self.b, x.type
        # Unsigned, a negative amount is at least the width too.
        outside = b.icmp_unsigned(">=", y, ir.Constant(kind, kind.width))
        zero = ir.Constant(kind, 0)
        if not left and dtype.is_signed:
            amount = b.select(outside, ir.Constant(kind, kind.width - 1), y)
            return Typed(b.ashr(x, amount), dtype)
        amount = b.select(outside, zero, y)
        shifted = b.shl(x, amount) if left else b.lshr(x, amount)
        return Typed(b.select(outside, zero, shifted), dtype)

    return emit


FUNCTIONS.update({
    "bitwise_and": _bitwise("and_", "bitwise_and"), "bitwise_or": _bitwise("or_", "bitwise_or"),
    "bitwise_xor": _bitwise("xor", "bitwise_xor"), "bitwise_not": _bitwise_not,
    "bitwise_left_shift": _shift(True), "bitwise_right_shift": _shift(False),
})

FUNCTIONS.update({
    "trunc": _rounded("trunc"), "ceil": _rounded("ceil"), "copysign": _copysign,
    "fmod": _fmod, "nextafter": _nextafter, "hypot": _hypot, "atan2": _atan2, "erfc": _erfc,
    **{name: _arctangent(name) for name in mathlib_atan.UNARY},
})

# Complex values are pairs of real ones (complex.py, which builds on this module's
# conversions and functions): imported last, the names it reads being defined. It adds its
# functions to FUNCTIONS itself, so that importing it first (before this module) works too.
from . import complex as llvm_complex  # noqa: E402, F401
