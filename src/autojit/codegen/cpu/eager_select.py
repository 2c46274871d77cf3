"""The eager relu and threshold_backward of large arrays as one native loop each
(ops/elementwise/math_primitives.py's NATIVE, installed by codegen/__init__.py).

NumPy's form is a comparison and a branchless select on the values' bit patterns
(where_cast.py's `_where_impl`): on a (32, 16, 32, 32) float32 array about 510 us for relu and
520 for its gradient, four passes over the elements, where one loop reads and writes each
once. Each loop makes the same selection, so its results are NumPy's bits:

    relu:                out[i] = 0 if x[i] < 0 else x[i]
    threshold_backward:  out[i] = 0 if x[i] <= threshold else grad[i]

An ordered comparison is false for NaN, so a NaN x is kept by relu and passes its gradient,
and -0.0 stays -0.0, as torch's clamp_min and threshold_backward do. `void relu(ptr x, ptr out,
i64 n)` and `void threshold_backward(ptr grad, ptr x, ptr out, i64 n, double threshold)`, per
dtype, made on first use (or loaded from the kernel disk cache, helper_modules.py).
"""

from __future__ import annotations

import ctypes

import numpy as np

from . import workers
from .workers import data_address

_DTYPES = {np.dtype(np.float32): "f32", np.dtype(np.float64): "f64"}
_SIGNATURES = {"relu": ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64),
               "threshold_backward": ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p,
                                                      ctypes.c_void_p, ctypes.c_int64,
                                                      ctypes.c_double)}
_loops: dict = {}  # dtype -> {name: address}, or None where none can be made
_functions_made: dict = {}  # dtype -> {name: ctypes function}, or None


def _symbol(name: str, dtype: np.dtype) -> str:
    return f"autojit_eager_select_{name}_{_DTYPES[dtype]}"


def _text(dtype: np.dtype) -> str:
    """The module of both loops for `dtype`."""
    from llvmlite import ir

    element = ir.FloatType() if dtype.itemsize == 4 else ir.DoubleType()
    index_type, pointer = ir.IntType(64), ir.PointerType()
    module = ir.Module(name=f"autojit_eager_select_{_DTYPES[dtype]}")
    zero = ir.Constant(element, 0.0)
    for name, operands in (("relu", 1), ("threshold_backward", 2)):
        extra = [ir.DoubleType()] if name == "threshold_backward" else []
        function = ir.Function(module, ir.FunctionType(
            ir.VoidType(), [pointer] * (operands + 1) + [index_type] + extra),
            _symbol(name, dtype))
        for argument in function.args[:operands + 1]:
            argument.add_attribute("noalias")
        arrays, count = function.args[:operands + 1], function.args[operands + 1]
        b = ir.IRBuilder(function.append_basic_block("entry"))
        limit = None
        if name == "threshold_backward":
            limit = function.args[-1]
            if element != limit.type:
                limit = b.fptrunc(limit, element)
        loop, done = function.append_basic_block("loop"), function.append_basic_block("done")
        b.cbranch(b.icmp_signed(">", count, ir.Constant(index_type, 0)), loop, done)
        b.position_at_end(loop)
        index = b.phi(index_type, name="i")
        index.add_incoming(ir.Constant(index_type, 0), function.entry_basic_block)

        def load(array, b=b, index=index):
            return b.load(b.gep(array, [index], inbounds=True, source_etype=element),
                          typ=element)

        if name == "relu":
            value = load(arrays[0])
            result = b.select(b.fcmp_ordered("<", value, zero), zero, value)
        else:
            gradient, value = load(arrays[0]), load(arrays[1])
            result = b.select(b.fcmp_ordered("<=", value, limit), zero, gradient)
        b.store(result, b.gep(arrays[-1], [index], inbounds=True, source_etype=element))
        following = b.add(index, ir.Constant(index_type, 1))
        index.add_incoming(following, b.block)
        b.cbranch(b.icmp_signed("<", following, count), loop, done)
        b.position_at_end(done)
        b.ret_void()
    return str(module)


def _functions(dtype: np.dtype):
    """{name: ctypes function} of the two loops of `dtype`, made once; None where there is
    no native code (workers.compiled_routines)."""
    found = _functions_made.get(dtype, False)
    if found is False:
        addresses = workers.compiled_routines(
            _loops, dtype, lambda: (_text(dtype), {name: _symbol(name, dtype)
                                                   for name in _SIGNATURES}), "eager select")
        found = _functions_made[dtype] = None if addresses is None else {
            name: _SIGNATURES[name](address) for name, address in addresses.items()}
    return found


def run(name: str, arrays: list, threshold: float = 0.0):
    """relu(x) or threshold_backward(grad, x, threshold) of C-contiguous arrays of one float32
    or float64 dtype and shape, into a new array; None where there is no loop."""
    if arrays[0].dtype not in _DTYPES:
        return None
    functions = _functions(arrays[0].dtype)
    if functions is None:
        return None
    out = np.empty_like(arrays[0])
    if name == "relu":
        functions[name](data_address(arrays[0]), data_address(out), out.size)
    else:
        functions[name](data_address(arrays[0]), data_address(arrays[1]), data_address(out),
                        out.size, float(arrays[1].dtype.type(threshold)))
    return out
