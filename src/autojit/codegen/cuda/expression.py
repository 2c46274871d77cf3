"""The text each expression node becomes in a CUDA kernel's Python source: the CUDA renderer's
walker over the registry's per-op expression templates (parsed by codegen/expression.py, as
the CPU renderer's are), with the tables of the functions it writes as calls of the namespace
cuda/kernels.py builds (math's functions on a GPU, NumPy's scalar functions under the
simulator), the casts to each dtype (`f32(...)`) and the literals.

render.py's CudaRenderer lays out the loops (grid-stride, block reductions, columns) and asks
this walker for each step's value, as the CPU renderer's loops ask cpu/llvm/expression.py for
IR.
"""

from __future__ import annotations

import math

from ...tensor import dtypes
from ..expression import ExpressionWalker, RenderError

CAST = {dtypes.float32: "f32", dtypes.float64: "f64", dtypes.int32: "i32",
        dtypes.int64: "i64", dtypes.int16: "i16", dtypes.int8: "i8", dtypes.uint8: "u8",
        dtypes.bool_: "b1"}


# Expression functions that are a plain call of a namespace entry of the same arity.
DIRECT = {"exp": "exp", "log": "log", "log1p": "log1p", "expm1": "expm1", "tanh": "tanh",
          "sin": "sin", "cos": "cos", "sqrt": "sqrt", "erf": "erf", "sigmoid": "sigmoid_",
          "abs": "abs", "sign": "sign_", "floor": "floor_", "max": "maximum_",
          "min": "minimum_"}


# ops/elementwise/bitwise.py's binary functions, as Python's operators (on bools too).
BITWISE = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^"}


FLOAT_ONLY = ("exp", "log", "log1p", "expm1", "tanh", "sin", "cos", "sqrt", "erf", "sigmoid")


# The functions of ops/elementwise/math_primitives.py's primitives: plain calls of floats (math's on
# a GPU, NumPy's under the simulator); trunc and ceil leave integers as they are, and integer fmod
# and nextafter take helpers (`MathCalls.call`).
MATH_DIRECT = {"atan": "atan", "asin": "asin", "acos": "acos", "atan2": "atan2",
               "hypot": "hypot", "erfc": "erfc", "copysign": "copysign", "trunc": "trunc_",
               "ceil": "ceil_"}


MATH_FLOAT_ONLY = ("atan", "asin", "acos", "atan2", "hypot", "erfc", "copysign", "nextafter")


def cast_name(dtype) -> str:
    found = CAST.get(dtype)
    if found is None:
        raise RenderError(f"the CUDA backend does not support dtype {dtype.name}")
    return found


def literal(value, dtype) -> str:
    if isinstance(value, complex) and dtype.category != dtypes.COMPLEX:
        value = value.real  # as full() takes it
    if dtype is dtypes.bool_:
        return "True" if value else "False"
    if dtype.is_floating_point:
        number = float(value)
        if math.isnan(number):
            return f"{CAST[dtype]}(nan)"
        if math.isinf(number):
            return f"{CAST[dtype]}({'-' if number < 0 else ''}inf)"
        return f"{CAST[dtype]}({number!r})"
    return f"{CAST[dtype]}({dtypes.wrap_integer(int(value), dtype)})"  # 300 as uint8: 44


class CudaExpression(ExpressionWalker):
    """One step's template as Python source; values are its text."""

    def literal(self, value) -> str:
        return literal(value, self.literal_dtype)

    def unary(self, operator: str, value: str) -> str:
        return f"(not {value})" if operator == "!" else f"(-{value})"

    def binary(self, operator: str, left: str, right: str) -> str:
        if operator in ("&&", "||"):
            word = "and" if operator == "&&" else "or"
            return f"(b1({left}) {word} b1({right}))"
        return f"({left} {operator} {right})"

    # Set when the step can report an error: the kernel then takes `status`.
    reports = False

    def _reporting(self, text: str) -> str:
        self.reports = True
        return text

    # NumPy's floor division and modulo, written in the templates as formulas; an integer
    # divisor of 0 reports torch's ZeroDivisionError.
    def floor_divide(self, left: str, right: str) -> str:
        if not self.literal_dtype.is_floating_point:
            return self._reporting(f"floor_divide_({left}, {right}, status)")
        return f"({left} // {right})"

    def remainder(self, left: str, right: str) -> str:
        if not self.literal_dtype.is_floating_point:
            return self._reporting(f"remainder_({left}, {right}, status)")
        return f"float_remainder_({left}, {right})"  # a zero keeps the dividend's sign

    def check_index(self, index: str, size: str) -> str:
        """ops/indexing/checks.py's check (cpu/llvm_expression.StepEmitter.check_index)."""
        if self.literal_dtype.is_floating_point or self.literal_dtype is dtypes.bool_:
            self.fail(f"indices are integers, got {self.literal_dtype.name}")
        low = f"-{size}" if self.step.attrs["wrap"] else "0"
        ignore = self.step.attrs["ignore"]
        return self._reporting(f"check_index_({index}, {low}, {size}, "
                               f"{0 if ignore is None else int(ignore)}, {ignore is not None}, "
                               f"status)")

    def call(self, name: str, texts: list) -> str:
        """A template function's text, from the table of forms (`FUNCTIONS`, as the CPU
        renderer's llvm_expression.FUNCTIONS): a function of the expression language, not
        an op, so the same table serves every op whose template calls it."""
        if name in FLOAT_ONLY and not self.literal_dtype.is_floating_point:
            self.fail(f"{name}() needs a floating-point argument")
        form = FUNCTIONS.get(name)
        if form is None:
            self.fail(f"the CUDA backend has no form for function {name!r}")
        return form(self, *texts)

    def direct(self, name: str, *texts: str) -> str:
        return f"{DIRECT[name]}({', '.join(texts)})"

    def power(self, base: str, exponent: str) -> str:
        if not self.literal_dtype.is_floating_point:
            return self._reporting(f"power_({base}, {exponent}, status)")
        return f"({base} ** {exponent})"

    def bitwise(self, operator: str, left: str, right: str) -> str:
        return f"({left} {operator} {right})"

    def bitwise_not(self, value: str) -> str:
        return f"(not {value})" if self.literal_dtype is dtypes.bool_ else f"(~{value})"

    def shift(self, left: bool, value: str, amount: str) -> str:
        """ops/elementwise/bitwise.py's shifts: an amount outside [0, width) gives 0, or the sign
        for a signed right shift, where Python's shifts would go on (or raise, for a negative
        one)."""
        dtype = self.literal_dtype
        if dtype.is_floating_point or dtype is dtypes.bool_:
            self.fail(f"shifts need integer arguments, got {dtype.name}")
        width = 8 * dtype.itemsize
        outside = f"({amount} < 0 or {amount} >= {width})"
        if not left and dtype.is_signed:
            return f"({value} >> ({width - 1} if {outside} else {amount}))"
        operator = "<<" if left else ">>"
        return f"({CAST[dtype]}(0) if {outside} else ({value} {operator} {amount}))"

    def math_call(self, name: str, *texts: str) -> str:
        if name in MATH_FLOAT_ONLY and not self.literal_dtype.is_floating_point:
            self.fail(f"{name}() needs a floating-point argument")
        return f"{MATH_DIRECT[name]}({', '.join(texts)})"

    def rounded(self, name: str, value: str) -> str:
        """trunc and ceil: integers are whole already."""
        if not self.literal_dtype.is_floating_point:
            return value
        return f"{MATH_DIRECT[name]}({value})"

    def fmod(self, left: str, right: str) -> str:
        if not self.literal_dtype.is_floating_point:
            return self._reporting(f"fmod_({left}, {right}, status)")
        return f"fmod({left}, {right})"

    def nextafter(self, left: str, right: str) -> str:
        if not self.literal_dtype.is_floating_point:
            self.fail("nextafter() needs a floating-point argument")
        return f"nextafter_{CAST[self.literal_dtype]}({left}, {right})"  # libdevice's on a GPU


def _form(method_name: str, *bound):
    """A FUNCTIONS entry: the walker's method, given `bound` before the argument texts."""
    return lambda walker, *texts: getattr(walker, method_name)(*bound, *texts)


# The text of each template function (the expression language's functions, which ops'
# templates call), as the CPU renderer's llvm_expression.FUNCTIONS emits their IR.
FUNCTIONS = {
    **{name: _form("direct", name) for name in DIRECT},
    **{name: _form("math_call", name) for name in MATH_DIRECT if name not in ("trunc", "ceil")},
    "trunc": _form("rounded", "trunc"), "ceil": _form("rounded", "ceil"),
    "fmod": _form("fmod"), "nextafter": _form("nextafter"),
    "floor_divide": _form("floor_divide"), "remainder": _form("remainder"),
    "pow": _form("power"), "check_index": _form("check_index"),
    "select": lambda walker, condition, yes, no: f"({yes} if {condition} else {no})",
    "cast": lambda walker, value: value,  # the step's own cast to its output dtype follows
    "isnan": lambda walker, value: f"({value} != {value})",
    "bool": lambda walker, value: f"b1({value})",
    **{name: _form("bitwise", operator) for name, operator in BITWISE.items()},
    "bitwise_not": _form("bitwise_not"),
    "bitwise_left_shift": _form("shift", True), "bitwise_right_shift": _form("shift", False),
}
