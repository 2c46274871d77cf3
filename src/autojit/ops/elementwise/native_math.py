"""The eager impls' transcendental functions: native loops for large arrays, NumPy's below.

exp, log, log1p, expm1, tanh, sigmoid, erf, sin and cos of a float64 array, and all but sin
and cos of a float32 one, run through `NATIVE`, a slot codegen fills at import
(codegen/cpu/eager_math.py, installed by codegen/__init__.py): one vectorized loop per function
and dtype from the compiled kernels' math library, made on first use and kept in the kernel
disk cache. NumPy's float64 loops are the C library's, one element at a time; these run in
vector lanes, as torch's do (SLEEF).

Which path runs depends only on the array, never on what is compiled or cached, so a program
gives the same bits every run: the native loop for a C- or Fortran-contiguous float32 or
float64 array of at least MIN_ELEMENTS elements (where a first call's compile, about 20-100 ms
of CPU once per machine, is worth it), NumPy's function otherwise and wherever codegen has no
loop (no LLVM). See docs/notes/eager-dispatch.md ("Native loops for the eager math").
"""

from __future__ import annotations

import numpy as np

# Set by codegen (codegen/cpu/eager_math.py's `unary`, installed by codegen/__init__.py):
# NATIVE(name, x, out) -> name(x) written into out (a new array when out is None), or None
# where there is no loop for it.
NATIVE = None
MIN_ELEMENTS = 1 << 15
# float32 sin and cos are NumPy's own vector loops, as fast as the library's (which widens
# them to double): NumPy keeps them.
_NAMES = {np.dtype(np.float64): frozenset(("exp", "log", "log1p", "expm1", "tanh", "sigmoid",
                                           "erf", "sin", "cos")),
          np.dtype(np.float32): frozenset(("exp", "log", "log1p", "expm1", "tanh", "sigmoid",
                                           "erf"))}


def native(name: str, x: np.ndarray, out: np.ndarray | None = None):
    """name(x) by the native loop into `out` (a new array when None: x's layout), or None
    where it does not apply (small, strided or another dtype, no loop). out, when given, is x
    itself or an array of x's shape, dtype and strides that does not overlap it."""
    if NATIVE is None or x.size < MIN_ELEMENTS or x.__class__ is not np.ndarray:
        return None
    names = _NAMES.get(x.dtype)
    if names is None or name not in names:
        return None
    flags = x.flags
    if not (flags.c_contiguous or flags.f_contiguous):
        return None
    if out is not None and (out.dtype != x.dtype or out.strides != x.strides or
                            out.shape != x.shape):
        return None
    return NATIVE(name, x, out)


def unary(name: str, function):
    """The impl `name`(x): the native loop where it applies, `function` (NumPy's) elsewhere."""
    def impl(x):
        found = native(name, x)
        return function(x) if found is None else found

    impl.__name__ = impl.__qualname__ = f"{name}_impl"
    return impl


def apply(name: str, function, x: np.ndarray, out: np.ndarray):
    """`function(x, out=out)` (a ufunc written in place, as the routines of ops/nn/activations.py
    write), through the native loop where it applies."""
    found = native(name, x, out)
    return function(x, out=out) if found is None else found
