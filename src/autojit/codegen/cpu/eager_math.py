"""Eager transcendental functions as native loops over the compiled kernels' math library.

ops/elementwise/native_math.py's hook (installed by codegen/__init__.py) calls `unary` for large
contiguous float32 and float64 arrays: exp, log, log1p, expm1, tanh, sigmoid, erf, sin and cos run
as one vectorized LLVM loop each, `void f(ptr x, ptr out, i64 n)`, whose body is mathlib/'s
`emit_unary`, the code a compiled kernel of that function runs, so eager and compiled results
of a large array agree to the bit. NumPy's float64 loops are the C library's, one element at a
time; these run four (AVX2) or eight lanes at once.

A loop is made on the first call that needs it, per (function, dtype): loaded from the disk
cache (disk_cache.py, no LLVM started: native_loader.py) or else compiled and stored there.
The disk entry is keyed by the function, the dtype and the code generators' fingerprint, so a
warm load builds no IR. See docs/notes/eager-dispatch.md ("Native loops for the eager math").
"""

from __future__ import annotations

import ctypes
import threading

import numpy as np

from . import disk_cache, native_loader
from .llvm import host as llvm_host
from .workers import data_address

_CALL = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int64)
_DTYPES = (np.dtype(np.float32), np.dtype(np.float64))
_FORMAT = 1  # the loop's IR form: part of the disk key, raised when `_text` changes its shape
_loops: dict = {}  # (name, dtype char) -> (holder kept alive, callable), or None: unavailable
_lock = threading.Lock()


# mathlib.UNARY, written out: a warm start loads the loops without importing the math library
# (tests/test_eager_native_math.py checks the two agree).
NAMES = ("exp", "log", "log1p", "expm1", "tanh", "sigmoid", "erf", "sin", "cos")


def _symbol(name: str, dtype: np.dtype) -> str:
    return f"autojit_eager_{name}_{'f32' if dtype.itemsize == 4 else 'f64'}"


def _text(name: str, dtype: np.dtype) -> str:
    """The LLVM IR of the loop `out[i] = name(x[i])` for i < n."""
    from llvmlite import ir

    from . import mathlib
    from .mathlib import trig as mathlib_trig

    element = ir.FloatType() if dtype.itemsize == 4 else ir.DoubleType()
    index_type = ir.IntType(64)
    symbol = _symbol(name, dtype)
    module = ir.Module(name=symbol)
    function = ir.Function(module, ir.FunctionType(ir.VoidType(), [ir.PointerType()] * 2 +
                                                   [index_type]), symbol)
    # x and out are one array or two that do not overlap (unary's callers): element i is read
    # before it is written, so an in-place call vectorizes as a disjoint one does.
    for argument in function.args[:2]:
        argument.add_attribute("noalias")
    function.attributes.alignstack = 64  # spills of wide vectors stay aligned (render.py)
    source, target, count = function.args
    b = ir.IRBuilder(function.append_basic_block("entry"))
    loop = function.append_basic_block("loop")
    done = function.append_basic_block("done")
    b.cbranch(b.icmp_signed(">", count, ir.Constant(index_type, 0)), loop, done)
    b.position_at_end(loop)
    index = b.phi(index_type, name="i")
    index.add_incoming(ir.Constant(index_type, 0), function.entry_basic_block)
    value = b.load(b.gep(source, [index], inbounds=True, source_etype=element), typ=element)
    result = mathlib.emit_unary(name, b, module, value, element)
    b.store(result, b.gep(target, [index], inbounds=True, source_etype=element))
    following = b.add(index, ir.Constant(index_type, 1))
    index.add_incoming(following, b.block)
    b.cbranch(b.icmp_signed("<", following, count), loop, done)
    b.position_at_end(done)
    b.ret_void()
    return mathlib_trig.finish(str(module))


def _make(name: str, dtype: np.dtype):
    """(what holds the code, the loop as a ctypes function), loaded from disk or compiled."""
    symbol = _symbol(name, dtype)
    key = ("eager-math", _FORMAT, name, dtype.str)
    if disk_cache.directory() is not None and native_loader.available():
        # A warm start: the object file, loaded without LLVM or the JIT's modules.
        entry = disk_cache.load(disk_cache.entry_key(key, llvm_host.cache_target()))
        if entry is not None and entry.symbol == symbol:
            try:
                loaded = native_loader.load(entry.object_code)
                return loaded, _CALL(loaded.address(symbol))
            except (native_loader.Unsupported, KeyError):
                pass  # compiled again below, through the JIT's own fallbacks
    from .helper_modules import compile_module

    (address,) = compile_module(_text(name, dtype), [symbol], key)
    return None, _CALL(address)


def loop(name: str, dtype: np.dtype):
    """The native loop of `name` for `dtype` (a float32 or float64 np.dtype), or None where
    there is none (another dtype, or no LLVM on this host)."""
    key = (name, dtype.char)
    found = _loops.get(key, False)
    if found is False:
        with _lock:
            found = _loops.get(key, False)
            if found is False:
                found = None
                if dtype in _DTYPES and name in NAMES:
                    try:
                        found = _make(name, dtype)
                    except (ImportError, OSError, RuntimeError):
                        found = None  # no llvmlite, or no code for this host: NumPy's loops
                _loops[key] = found
    return None if found is None else found[1]


def unary(name: str, x: np.ndarray, out: np.ndarray | None = None):
    """`name`(x) into `out` (a new array when None), or None where there is no native loop.
    x is C- or Fortran-contiguous; out is x itself or an array of x's shape, dtype and strides
    that does not overlap it."""
    function = loop(name, x.dtype)
    if function is None:
        return None
    if out is None:
        out = np.empty_like(x)
    function(data_address(x), data_address(out), x.size)
    return out
