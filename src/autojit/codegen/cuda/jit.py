"""The CUDA code generator's compiler: rendered kernels (render.py) become numba.cuda
functions.

`kernel_function(source, name, cuda, simulated)` executes a rendered kernel's Python source in
a namespace holding the scalar helpers the expressions call (compiled as device functions),
the dtype casts and the math names, and returns the kernel's function for `cuda.jit`. The
numba.cuda module is an argument, so tools/cuda_ptx_check.py compiles the same kernels for a
GPU on a machine without one. Launching compiled kernels on device memory is the CUDA
runtime's (autojit/cuda/kernels.py), which sits above this package.

Under Numba's CUDA simulator every GPU thread is a Python thread: blocks are 32 threads, grids
are capped at a few blocks (the kernels are grid-stride loops, so any grid is correct), and the
math names resolve to NumPy's scalar functions so that inf and nan are values, as on a GPU.
See docs/notes/cuda.md.
"""

from __future__ import annotations

import math

import numpy as np

from ..kernel import Kernel
from . import vector as cuda_vector
from .render import render

# Scalar helpers the expressions call by name (render_cuda.DIRECT); compiled as device
# functions. They follow the NumPy reference: NaN wins in maximum/minimum, ties give the
# second argument, sign gives 0 for zeros and NaN (as torch), floor keeps inf and NaN. The
# integer division, power and index check helpers report an error by setting `status[0]` (a
# kernel's last argument, see CudaCompiledKernel); their result there is never read.
HELPERS = '''
def sigmoid_(x):
    small = exp(-abs(x))
    ratio = 1 / (small + 1)
    return ratio if x >= 0 else small * ratio

def sign_(x):
    if x > 0:
        return 1
    if x < 0:
        return -1
    return 0

def floor_(x):
    if x != x or x - x != 0:
        return x
    return x - x % 1.0

def maximum_(a, b):
    return a if (a > b or a != a) else b

def minimum_(a, b):
    return a if (a < b or a != a) else b

def floor_divide_(a, b, status):
    if b == 0:
        status[0] = 1
        return a - a
    return a // b

def remainder_(a, b, status):
    if b == 0:
        status[0] = 1
        return a - a
    return a % b

def power_(a, b, status):
    if b < 0:
        status[0] = 1
        return a - a
    return a ** b

def check_index_(index, low, size, ignore, has_ignore, status):
    if (index < low or index >= size) and not (has_ignore and index == ignore):
        status[0] = 1
    return index

def trunc_(x):
    if x != x or x - x != 0:
        return x
    return copysign(x - fmod(x, 1.0), x)

def ceil_(x):
    return -floor_(-x)

def float_remainder_(a, b):
    r = a % b
    if r == 0:
        return copysign(r - r, a)
    return r

def fmod_(a, b, status):
    if b == 0:
        status[0] = 1
        return a - a
    if b == -1:
        return a - a
    r = a % b
    if r != 0 and (r < 0) != (a < 0):
        r -= b
    return r
'''
HELPER_NAMES = ("sigmoid_", "sign_", "floor_", "maximum_", "minimum_", "floor_divide_",
                "remainder_", "power_", "check_index_", "trunc_", "ceil_", "fmod_",
                "float_remainder_")
MATH_NAMES = ("exp", "log", "log1p", "expm1", "tanh", "sin", "cos", "sqrt")
# The functions of ops/elementwise/math_primitives.py's primitives: math's on a GPU, NumPy's under
# the simulator (NumPy's names differ; math's raise on arguments outside their domain).
MATH_FUNCTIONS = {"atan": "arctan", "asin": "arcsin", "acos": "arccos", "atan2": "arctan2",
                  "hypot": "hypot", "copysign": "copysign", "fmod": "fmod"}

_NAMESPACES: dict = {}


def _math(name: str):
    """math's function, itself: while a trace runs, compiler/tracing.py's SymbolicMath wraps
    math's functions (to keep symbolic scalars symbolic), and a kernel first compiled inside
    a trace (an eager CUDA op the traced function runs) would find a wrapper numba cannot
    lower."""
    function = getattr(math, name)
    return getattr(function, "__wrapped__", function)


def kernel_namespace(cuda, simulated: bool) -> dict:
    """What a rendered kernel's source sees: `cuda` (the numba.cuda module), the dtype
    casts, the math names and the helpers compiled as device functions. Taking the module
    lets tools/cuda_ptx_check.py compile the kernels for a GPU on a machine without one."""
    found = _NAMESPACES.get(simulated)
    if found is not None:
        return found
    # The name makes warnings from the simulated kernels fall under the registry's filter
    # for autojit's own modules (inf and nan are values, not warnings).
    namespace = {"__name__": "autojit.codegen.cuda_kernels", "cuda": cuda, "np": np,
                 "f32": np.float32, "f64": np.float64, "i32": np.int32, "i64": np.int64,
                 "i16": np.int16, "i8": np.int8, "u8": np.uint8, "b1": bool,
                 "nan": math.nan, "inf": math.inf, "erf": _math("erf")}
    for name in MATH_NAMES:
        namespace[name] = getattr(np, name) if simulated else _math(name)
    for name, numpy_name in MATH_FUNCTIONS.items():
        namespace[name] = getattr(np, numpy_name) if simulated else _math(name)
    namespace["erfc"] = _math("erfc")
    if simulated:
        namespace["nextafter_f32"] = namespace["nextafter_f64"] = np.nextafter
    else:
        from numba.cuda import libdevice

        namespace["nextafter_f32"], namespace["nextafter_f64"] = (libdevice.nextafterf,
                                                                 libdevice.nextafter)
    exec(compile(HELPERS, "<autojit cuda helpers>", "exec"), namespace)  # noqa: S102
    for name in HELPER_NAMES:
        namespace[name] = cuda.jit(device=True)(namespace[name])
    namespace.update(cuda_vector.simulated_functions() if simulated
                     else cuda_vector.device_functions())
    _NAMESPACES[simulated] = namespace
    return namespace


def render_for(kernel: Kernel, name: str, simulated: bool):
    """The kernel rendered for the simulator's small blocks and grids, or for a GPU."""
    return render(kernel, name, block=32 if simulated else 256, warp_shuffle=not simulated,
                  max_blocks=4 if simulated else 4096)


def kernel_function(source: str, name: str, cuda, simulated: bool):
    """The Python function `name` a rendered kernel's source defines (not yet compiled)."""
    namespace = dict(kernel_namespace(cuda, simulated))
    exec(compile(source, f"<autojit cuda kernel {name}>", "exec"), namespace)  # noqa: S102
    return namespace[name]
