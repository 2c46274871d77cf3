"""What the op families' rules need to know about complex tensors: the error of a primitive
that takes none (registry.py reads its Op.complex), the conjugate a VJP multiplies by
(elementwise/__init__.py, linalg/__init__.py, reduction.py), and where the warning of a conversion
that drops imaginary parts points. The complex primitives themselves are in complex_numbers.py;
docs/notes/complex.md has the design.
"""

from __future__ import annotations

import sys

from ..tensor import dtypes
from ..tensor.tensor import Tensor

_COMPLEX, _PY_COMPLEX = dtypes.COMPLEX, (0j).__class__


def conj(x):
    """The complex conjugate a VJP multiplies by (torch's gradients are conjugate Wirtinger
    derivatives): x itself where it is real, a tensor or a number, so that real gradients run
    the ops they always ran."""
    if isinstance(x, Tensor):
        return x.conj() if x._dtype.category == _COMPLEX else x
    return x.conjugate() if x.__class__ is _PY_COMPLEX else x


def complex_error(op, inputs: tuple) -> Exception:
    """The error of an op that does not take complex tensors (Op.complex), as torch raises
    it: by default NotImplementedError('"op_cpu" not implemented for 'ComplexFloat'')."""
    setting = op.complex
    if setting.__class__ is tuple:
        return setting[0](setting[1])
    dtype = next((x._dtype for x in inputs if isinstance(x, Tensor) and
                  x._dtype.category == _COMPLEX), dtypes.complex64)
    name = dtypes.scalar_type_name(dtype)
    if setting.__class__ is str:
        return NotImplementedError(setting.replace("{type}", name))
    # torch's CPU kernels are mostly named after their op: "lt_cpu", "bitwise_and_cpu".
    return NotImplementedError(f'"{op.name}_cpu" not implemented for \'{name}\'')


def user_stacklevel() -> int:
    """The stacklevel of a warning that names the first frame outside the autojit package."""
    from ..tensor.graph_break import user_frame

    target, frame, level = user_frame(), sys._getframe(1), 1
    while frame is not None and frame is not target:
        frame, level = frame.f_back, level + 1
    return level if frame is not None else 2
