"""What the torch.linalg families share: LinAlgError, the argument checks with torch's
messages, the named tuples the decompositions return, the matrix helpers their VJPs are
written with, packed results and `out=`.

The decompositions (solvers.py, decompositions.py) are primitives that run
LAPACK through NumPy and SciPy. A primitive has one result, so one that computes several
matrices at once (Q and R, U, S and Vh) returns them packed side by side along a last dim;
`unpack` takes them apart with slices and reshapes, whose adjoints put the gradients of the
parts back together for the primitive's VJP. The helpers below (triangles, diagonals, identity
matrices) are composites of comparisons and `where`, so that they fuse in compiled code and run
on CUDA tensors.
"""

from __future__ import annotations

import math
import warnings
from collections import namedtuple

import numpy as np

from ...tensor import dtypes
from ...tensor.creation import arange
from ...tensor.state import state
from ...tensor.tensor import Tensor
from .. import elementwise as ew
from ..complex_numbers import real
from ..complex_rules import conj
from ..layout import narrow, reshape, transpose
from ..out_argument import resize_out
from ..registry import OpError

# torch's names of the dtypes in its messages ("Got Long").
SCALAR_TYPE = dtypes.SCALAR_TYPE_NAMES


class LinAlgError(RuntimeError):
    """A linear algebra routine failed on its input's values (a singular matrix in `inv` or
    `solve`, one that is not positive-definite in `cholesky`), as torch.linalg.LinAlgError."""


def linalg_failure(message: str) -> OpError:
    """A LinAlgError an op's impl raises as it stands (registry.OpError)."""
    return OpError(LinAlgError(message))


# ---- the named tuples of the results, with torch.return_types' names -------------------------

QRResult = namedtuple("linalg_qr", ["Q", "R"])
SVDResult = namedtuple("linalg_svd", ["U", "S", "Vh"])
EighResult = namedtuple("linalg_eigh", ["eigenvalues", "eigenvectors"])
SlogdetResult = namedtuple("linalg_slogdet", ["sign", "logabsdet"])
LstsqResult = namedtuple("linalg_lstsq", ["solution", "residuals", "rank", "singular_values"])
# The deprecated top-level forms return tuples of their own names.
TopLevelQRResult = namedtuple("qr", ["Q", "R"])
TopLevelSVDResult = namedtuple("svd", ["U", "S", "V"])
TopLevelSlogdetResult = namedtuple("slogdet", ["sign", "logabsdet"])


# ---- argument checks ---------------------------------------------------------------------------

def check_tensor(x, name: str) -> None:
    if not isinstance(x, Tensor):
        raise TypeError(f"{name}(): argument 'A' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")


def check_floating(x: Tensor, name: str) -> None:
    """torch's errors for an integer or a half-precision input of a LAPACK routine (float32,
    float64, complex64 and complex128 pass)."""
    if x.dtype.is_complex:
        return
    if not x.dtype.is_floating_point:
        raise RuntimeError(f"{name}: Expected a floating point or complex tensor as input. Got "
                           f"{SCALAR_TYPE[x.dtype.name]}")
    if x.dtype is dtypes.float16:
        raise RuntimeError(f"{name}: Low precision dtypes not supported. Got Half")


def check_matrix(x: Tensor, name: str) -> None:
    if x.ndim < 2:
        raise RuntimeError(f"{name}: The input tensor A must have at least 2 dimensions.")


def check_square(x: Tensor, name: str) -> None:
    check_matrix(x, name)
    if x.shape[-1] != x.shape[-2]:
        raise RuntimeError(f"{name}: A must be batches of square matrices, but they are "
                           f"{x.shape[-2]} by {x.shape[-1]} matrices")


def check_square_floating(x, name: str) -> None:
    """The checks of a routine on batches of square float matrices (inv, det, cholesky)."""
    check_tensor(x, name)
    check_floating(x, name)
    check_square(x, name)


# ---- LAPACK failures with torch's messages -------------------------------------------------------

def batch_prefix(shape: tuple, index: int) -> str:
    """torch's "(Batch element i): " before an error about one matrix of a batch."""
    return f"(Batch element {index}): " if len(shape) > 2 else ""


def numpy_precision(a: np.ndarray) -> np.ndarray:
    """a in the precision NumPy's linalg computes it in: float64 for float32 (complex128 for
    complex64), rounding the results back. A LAPACK call that explains or predicts a NumPy
    routine's failure must run in that precision: a float32 matrix that is positive-definite
    only by float32 rounding passes float32 potrf and fails NumPy's Cholesky."""
    if a.dtype == np.float32:
        return a.astype(np.float64)
    if a.dtype == np.complex64:
        return a.astype(np.complex128)
    return a


def first_lapack_failure(a: np.ndarray, routine: str) -> tuple:
    """(flat batch index, info) of the first matrix of `a` whose LAPACK `routine` ("getrf",
    the LU factorization, or "potrf", Cholesky's) reports a failure, or (None, 0).

    NumPy's batched routines only say that some matrix failed; torch names the batch element
    and LAPACK's info (the zero pivot, the order of the leading minor), which only the
    unbatched LAPACK call gives, so failures are looked up matrix by matrix.
    """
    from scipy.linalg import lapack

    a = numpy_precision(a)  # the precision of the NumPy routine whose failure it explains
    flat = a.reshape((math.prod(a.shape[:-2]),) + a.shape[-2:])
    function = lapack.get_lapack_funcs(routine, (flat,))
    for index, matrix in enumerate(flat):
        if routine == "potrf":
            factor, info = function(matrix, lower=True)
            if info == 0:
                info = nan_pivot(factor)
        else:
            info = function(matrix)[-1]
        if info > 0:
            return index, int(info)
    return None, 0


def nan_pivot(factor: np.ndarray) -> int:
    """The info of a Cholesky factor that potrf returned with info 0: the order of its first
    NaN pivot, where torch's LAPACK fails and NumPy's lets the NaN through, or 0. An infinite
    pivot is no failure in torch (`cholesky([[1, 0], [0, inf]])` is `[[1, 0], [0, inf]]`); a
    NaN anywhere in the factor reaches a pivot, the one of its row."""
    nan = np.isnan(np.diagonal(factor))
    return int(np.argmax(nan)) + 1 if nan.any() else 0


def first_nonfinite(a: np.ndarray) -> int | None:
    """The flat batch index of the first matrix of `a` with an inf or NaN, or None."""
    flat = a.reshape((math.prod(a.shape[:-2]),) + a.shape[-2:])
    bad = ~np.isfinite(flat).all(axis=(-2, -1))
    return int(np.argmax(bad)) if bad.any() else None


# ---- matrix helpers in autojit ops (for the VJPs and composites) -------------------------------

def mT(x: Tensor) -> Tensor:
    """x with its last two dims swapped."""
    return transpose(x, -2, -1)


def mH(x: Tensor) -> Tensor:
    """The conjugate transpose of x's matrices (x.mT for a real x): a VJP's transposes of
    primal matrices are conjugate ones, torch's gradients being conjugate Wirtinger
    derivatives (docs/notes/complex.md)."""
    return conj(transpose(x, -2, -1))


def real_part(x: Tensor) -> Tensor:
    """x's real part, x itself when it is real."""
    return real(x) if x.dtype.is_complex else x


def _positions(x: Tensor, rows, columns):
    """Row and column indices (rows x 1 and 1 x columns int64 tensors) on x's device."""
    device = x.device if x.is_cuda else None
    row = reshape(arange(rows, dtype=dtypes.int64, device=device), rows, 1)
    column = reshape(arange(columns, dtype=dtypes.int64, device=device), 1, columns)
    return row, column


def triangle(x: Tensor, upper: bool, diagonal: int = 0) -> Tensor:
    """The upper (triu) or lower (tril) triangle of the last two dims of x, the rest 0;
    `diagonal` shifts the edge as in torch.triu/tril."""
    row, column = _positions(x, x.shape[-2], x.shape[-1])
    keep = (column - row >= diagonal) if upper else (column - row <= diagonal)
    return ew.where(keep, x, 0.0)


def eye_mask(x: Tensor, n) -> Tensor:
    """An n x n bool tensor, True on the diagonal, on x's device."""
    row, column = _positions(x, n, n)
    return row == column


def diag_embed(v: Tensor) -> Tensor:
    """Square matrices with v's last dim on their diagonals: shape (..., n, n)."""
    return ew.where(eye_mask(v, v.shape[-1]), reshape(v, tuple(v.shape) + (1,)), 0.0)


def identity_like(x: Tensor, n) -> Tensor:
    """The n x n identity matrix in x's dtype, on x's device."""
    return ew.where(eye_mask(x, n), 1.0, 0.0).to(x.dtype)


_PHASE = ("The {what} in the complex case are specified up to multiplication by e^{{i phi}}. "
          "The specified loss function depends on {tail}")


def check_phase_invariance(kernel: str, what: str, tail: str, a: Tensor, b=None) -> None:
    """torch's refusal of a loss that depends on the phases of complex singular vectors or
    eigenvectors (which LAPACK picks): unless `a` and `b` (0 by default), the imaginary parts
    of diagonals the VJP computes, agree as torch.allclose(a, b, 1e-2, 1e-2) has them, raise
    RuntimeError. It reads values, so it is made eagerly and not while tracing."""
    data = a._payload
    other = 0.0 if b is None else b._payload
    if data.__class__ is not np.ndarray or (b is not None and other.__class__ is not np.ndarray):
        return
    if not np.all(np.abs(data - other) <= 1e-2 + 1e-2 * np.abs(other)):
        raise RuntimeError(f"{kernel}: " + _PHASE.format(what=what, tail=tail))


def safe_ratio(numerator: Tensor, denominator: Tensor) -> Tensor:
    """numerator / denominator, where a zero denominator gives 0 over a zero numerator and NaN
    over any other.

    The spectral VJPs divide by differences of eigenvalues or squared singular values. A
    packed result's unused parts have zero gradients, and torch, whose VJP knows they are
    undefined, gives a finite gradient there even with repeated values; where the user's loss
    really depends on an ill-defined part, torch's gradient is not finite, and neither is this.
    Neither branch of the `where` has an infinity for double backward to multiply by 0.
    """
    zero = denominator == 0
    quotient = numerator / ew.where(zero, 1.0, denominator)
    return ew.where(zero, ew.where(numerator == 0, 0.0, float("nan")), quotient)


# ---- packed results -----------------------------------------------------------------------------

def packed_size(shapes) -> int:
    total = 0
    for shape in shapes:
        count = 1
        for extent in shape:
            count = count * extent
        total = total + count
    return total


def pack(arrays, batch: tuple) -> np.ndarray:
    """NumPy arrays with the same batch dims, flattened after them and put side by side."""
    # The trailing size spelled out: -1 is ambiguous when the batch is empty.
    return np.concatenate([np.reshape(a, batch + (math.prod(a.shape[len(batch):]),))
                           for a in arrays], axis=-1)


def unpack(packed: Tensor, shapes) -> list:
    """The parts of a packed tensor, each reshaped to batch + its shape (views of it)."""
    batch = tuple(packed.shape[:-1])
    parts, start = [], 0
    for shape in shapes:
        count = packed_size([shape])
        parts.append(reshape(narrow(packed, -1, start, count), batch + tuple(shape)))
        start = start + count
    return parts


# ---- out= ------------------------------------------------------------------------------------

_RESIZE_WARNING = (
    "An output with one or more elements was resized since it had shape {}, which does not "
    "match the required output shape {}. This behavior is deprecated, and in a future PyTorch "
    "release outputs will not be resized unless they have zero elements. You can explicitly "
    "reuse an out tensor t by resizing it, inplace, to zero elements with t.resize_(0).")


def check_out_autograd(kernel: str, *tensors) -> None:
    """torch's refusal of out= while an input (or out itself) requires grad; `kernel` is the
    name of torch's function that raises it (linalg_inv_ex, _linalg_svd, ...)."""
    if not state.grad_enabled:
        return
    for x in tensors:
        if isinstance(x, Tensor) and x.requires_grad:
            raise RuntimeError(f"{kernel}(): functions with out=... arguments don't support "
                               "automatic differentiation, but one of the arguments requires "
                               "grad.")


def write_out(out: Tensor, result: Tensor, dtype_message: str | None = None) -> Tensor:
    """Write `result` into the tensor given as out=, as torch does: its dtype must be the
    result's, and a tensor of another shape is resized (with torch's warning when it had
    elements). Returns out."""
    if not isinstance(out, Tensor):
        raise TypeError(f"argument 'out' must be Tensor, not {type(out).__name__}")
    if out.dtype is not result.dtype:
        raise RuntimeError((dtype_message or "Expected out tensor to have dtype {want}, but got "
                            "{got} instead").format(
            want=dtypes.C_TYPE_NAMES[result.dtype.name], got=dtypes.C_TYPE_NAMES[out.dtype.name],
            Want=SCALAR_TYPE[result.dtype.name], Got=SCALAR_TYPE[out.dtype.name]))
    previous = state.grad_enabled
    state.grad_enabled = False
    try:
        if tuple(out.shape) != tuple(result.shape):
            if out._payload is None or result._payload is None:
                from ...tensor.graph_break import graph_break

                graph_break("out= with a tensor of another shape (a resize)", needs_data=False)
            if out.numel() != 0:
                warnings.warn(_RESIZE_WARNING.format(list(out.shape), list(result.shape)),
                              UserWarning, stacklevel=3)
            out._payload = ew.clone(result.to(out.device))._payload
            out._bump_version()
        else:
            out.copy_(result)
    finally:
        state.grad_enabled = previous
    return out


def write_outs(outs, results: tuple, kernel: str, inputs: tuple, name: str | None = None):
    """out= of a function with several results: a tuple of tensors, one per result; returns
    the results' named tuple over the out tensors. `name`: the function's name in torch's
    argument errors (the kernel's without a leading underscore by default)."""
    if not isinstance(outs, (tuple, list)) or not all(isinstance(out, Tensor) for out in outs):
        raise TypeError(f"{name or kernel.lstrip('_')}(): argument 'out' must be tuple of "
                        f"Tensors, not {type(outs).__name__}")
    if len(outs) != len(results):
        raise TypeError(f"expected tuple of {len(results)} elements but got {len(outs)}")
    check_out_autograd(kernel, *inputs, *outs)
    written = [write_out(out, result) for out, result in zip(outs, results)]
    return type(results)(*written) if hasattr(results, "_fields") else tuple(written)


def with_out(result: Tensor, out, kernel: str, inputs: tuple,
             dtype_message: str | None = None) -> Tensor:
    """`result`, or, with out= given, out holding it (after torch's checks)."""
    if out is None:
        return result
    check_out_autograd(kernel, *inputs, out)
    return write_out(out, result.detach(), dtype_message)


def check_out_tensor(name: str, out) -> None:
    """torch's argument error for an out= that is not one Tensor; `name` is the function's
    name in it (linalg_ldl_solve, ...)."""
    if out is not None and not isinstance(out, Tensor):
        raise TypeError(f"{name}(): argument 'out' must be Tensor, not {type(out).__name__}")


def copy_out(out, result: Tensor, name: str, parser_name: str) -> Tensor:
    """out= of torch's composite linalg functions (cond, tensorinv, tensorsolve), written as
    torch writes it: out may have any dtype the result's values cast to safely (a float result
    into a complex or a narrower float out, never into an integer or bool one), an out of
    another shape is resized, and the result is copied in by an ordinary copy_, so that out
    takes its autograd history (a leaf out that requires grad refuses the write). `name`: the
    function in the dtype error; `parser_name`: in the argument error."""
    check_out_tensor(parser_name, out)
    if result.dtype.category > out.dtype.category:
        raise RuntimeError(f"{name}: Expected result to be safely castable from "
                           f"{SCALAR_TYPE[result.dtype.name]} dtype, but got result with dtype "
                           f"{SCALAR_TYPE[out.dtype.name]}")
    if tuple(out.shape) != tuple(result.shape):
        resize_out(parser_name, out, tuple(result.shape))
    return out.copy_(result)
