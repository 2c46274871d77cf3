"""The eager gelu and its backward (ops/nn/activations.py's routines) as one native loop each,
split over the cores: where the routine makes five and ten NumPy calls over a large array
(erf and exp through eager_math.py's loops), this makes one pass.

Each loop makes the same float operations as those calls, in their order, with each Python
constant rounded to the dtype as NumPy rounds it and erf and exp emitted by mathlib's
`emit_unary` (eager_math.py's loops emit the same code), and no fused multiply-adds (the IR
has no `contract` flags), so its results are the routine's bits
(tests/test_eager_native_math.py compares them). Per element:

    gelu:           (x * 0.5) * (erf(x * sqrt(1/2)) + 1)
    gelu_backward:  grad * ((erf(x * sqrt(1/2)) + 1) * 0.5 + exp((x * x) * -0.5) * k * x)

with k = 1 / sqrt(2 pi). A loop is `i32 f(ptr argument, i64 part)` as the native workers call a
part of a job (workers.py), its argument the words (x, [grad,] out, n, parts); a part is a
range of whole cache lines. Both loops of a dtype are one module, compiled on first use (or
loaded from the kernel disk cache).
"""

from __future__ import annotations

import math

import numpy as np

from . import workers

_TYPES = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}
SQRT1_2 = 1 / math.sqrt(2)
PDF_SCALE = 2 / math.sqrt(math.pi) * SQRT1_2 * 0.5
# From this many elements a loop's array is split over the cores.
PARALLEL_ELEMENTS = 1 << 15
_NAMES = ("gelu", "gelu_backward")
_state: dict = {}  # dtype -> {name: address}, or None where none can be made


def _symbol(name: str, dtype: np.dtype) -> str:
    return f"autojit_eager_{name}_{_TYPES[dtype]}"


def _text(dtype: np.dtype) -> str:
    """The module of both loops for `dtype`."""
    from llvmlite import ir

    from .mathlib import trig as mathlib_trig

    module = ir.Module(name=f"autojit_eager_gelu_{_TYPES[dtype]}")
    for name in _NAMES:
        _loop(module, name, dtype)
    return mathlib_trig.finish(str(module))


def _loop(module, name: str, dtype: np.dtype) -> None:
    """Add the loop `name` for `dtype` to `module`."""
    from llvmlite import ir

    from . import mathlib

    element = ir.FloatType() if dtype.itemsize == 4 else ir.DoubleType()
    i64, i32 = ir.IntType(64), ir.IntType(32)

    def constant(value: float):
        # The Python number as NumPy's call rounds it to the dtype.
        return ir.Constant(element, float(dtype.type(value)))

    function = ir.Function(module, ir.FunctionType(i32, [ir.PointerType(), i64]),
                           _symbol(name, dtype))
    function.attributes.alignstack = 64
    argument, part = function.args
    b = ir.IRBuilder(function.append_basic_block("entry"))
    words = len(_argument(name))

    def word(index: int, kind):
        return b.load(b.gep(argument, [ir.Constant(i64, index)], source_etype=i64), typ=kind)

    pointers = [word(index, ir.PointerType()) for index in range(words - 2)]
    count, parts = word(words - 2, i64), word(words - 1, i64)
    # The part's elements: whole lines of 16 but the last, [first, last).
    lines = b.lshr(b.add(count, ir.Constant(i64, 15)), ir.Constant(i64, 4))
    first = b.shl(b.udiv(b.mul(part, lines), parts), ir.Constant(i64, 4))
    last = b.shl(b.udiv(b.mul(b.add(part, ir.Constant(i64, 1)), lines), parts),
                 ir.Constant(i64, 4))
    last = b.select(b.icmp_unsigned(">", last, count), count, last)
    loop = function.append_basic_block("loop")
    done = function.append_basic_block("done")
    b.cbranch(b.icmp_unsigned("<", first, last), loop, done)
    b.position_at_end(loop)
    index = b.phi(i64)
    index.add_incoming(first, function.entry_basic_block)

    def load(pointer):
        return b.load(b.gep(pointer, [index], inbounds=True, source_etype=element), typ=element)

    x = load(pointers[0])
    erf = mathlib.emit_unary("erf", b, module, b.fmul(x, constant(SQRT1_2)), element)
    cdf = b.fadd(erf, constant(1.0))
    if name == "gelu":
        result = b.fmul(b.fmul(x, constant(0.5)), cdf)
    else:
        cdf = b.fmul(cdf, constant(0.5))
        square = b.fmul(b.fmul(x, x), constant(-0.5))
        pdf = mathlib.emit_unary("exp", b, module, square, element)
        pdf = b.fmul(b.fmul(pdf, constant(PDF_SCALE)), x)
        result = b.fmul(load(pointers[1]), b.fadd(cdf, pdf))
    b.store(result, b.gep(pointers[-1], [index], inbounds=True, source_etype=element))
    following = b.add(index, ir.Constant(i64, 1))
    index.add_incoming(following, b.block)
    b.cbranch(b.icmp_unsigned("<", following, last), loop, done)
    b.position_at_end(done)
    b.ret(ir.Constant(i32, 0))


def _argument(name: str) -> tuple:
    return ("x", "out", "n", "parts") if name == "gelu" else ("x", "grad", "out", "n", "parts")


def _functions(dtype: np.dtype):
    return workers.compiled_routines(_state, dtype, lambda: (
        _text(dtype), {name: _symbol(name, dtype) for name in _NAMES}), "eager-gelu")


def run(name: str, arrays: list):
    """gelu(x) or gelu_backward(grad, x) (`arrays`: [x] or [x, grad], C-contiguous, of one
    float dtype and shape) into a new array, or None where there is no loop."""
    x = arrays[0]
    if x.dtype not in _TYPES:
        return None
    functions = _functions(x.dtype)
    if functions is None:
        return None
    out = np.empty_like(x)
    native = workers.shared()
    parts = native.parts if native is not None and x.size >= PARALLEL_ELEMENTS else 1
    words = np.array([workers.data_address(array) for array in (*arrays, out)] +
                     [x.size, parts], np.int64)
    function = functions[name]
    workers.run_routine(native, function, words, parts, name)
    return out
