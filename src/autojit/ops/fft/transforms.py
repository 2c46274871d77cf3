"""autojit.fft: torch.fft's discrete Fourier transforms, on SciPy's pocketfft.

Three primitives, torch's own: `fft_c2c` (complex to complex, forward or inverse), `fft_r2c`
(real to complex, the forward transform, one-sided or full) and `fft_c2r` (one-sided complex
to real, the inverse transform), each over a tuple of dims with a `normalization` of "none",
"sqrt" (1/sqrt(n)) or "n" (1/n) applied whichever way it runs, as torch's fft_norm_mode is. The
public functions (fft, ifft, rfft, irfft, hfft, ihfft and their 2-d and n-d forms) are
composites that resize the input to `n=`/`s=` (a slice or zero padding), map `norm=` to a
normalization for their direction, and run one or two primitives, as torch's
SpectralOps.cpp composes them. Each VJP is the adjoint transform written with these
primitives (torch's fft_r2c_backward and fft_c2r_backward), so gradients of any order follow;
each JVP is the primitive itself, the transforms being linear. fftfreq, rfftfreq, fftshift
and ifftshift complete the namespace; stft and istft are in spectral.py.

The package's top level imports this module as `autojit.fft` (and registers it under that
name, as it does linalg/namespace.py). A transform in a compiled function is a node of its
graph like any other; the plan runs it through its impl, pocketfft, as eager does
(docs/notes/complex.md).
"""

from __future__ import annotations

import sys

import numpy as np

from ...tensor import dtypes, torch_function
from ...tensor.tensor import Tensor, normalize_dim
from ..batching import dim_rule
from ..complex_numbers import conj, real
from ..layout import embed_slice, slice_dims
from ..layout.joining import roll
from ..lowering import Extern
from ..registry import bind, define_op

__all__ = [
    "fft", "ifft", "fft2", "ifft2", "fftn", "ifftn", "rfft", "irfft", "rfft2", "irfft2", "rfftn",
    "irfftn", "hfft", "ihfft", "hfft2", "ihfft2", "hfftn", "ihfftn", "fftfreq", "rfftfreq",
    "fftshift", "ifftshift",
]

_scipy_fft = None  # scipy.fft, imported on first use: SciPy costs `import autojit` 0.1 s


def _pocketfft():
    global _scipy_fft
    if _scipy_fft is None:
        import scipy.fft as _scipy_fft
    return _scipy_fft


# SciPy's `norm=` for a transform that scales by 1, 1/sqrt(n) or 1/n, by direction: its
# "backward" scales the inverse only, "forward" the forward only.
_SCIPY_NORM = {(True, "none"): "backward", (True, "sqrt"): "ortho", (True, "n"): "forward",
               (False, "none"): "forward", (False, "sqrt"): "ortho", (False, "n"): "backward"}


def _complex_of(dtype: np.dtype):
    return np.complex64 if dtype in (np.float32, np.complex64) else np.complex128


# ---- the primitives -------------------------------------------------------------------------

def _c2c_impl(x, dims, normalization, forward):
    transform = _pocketfft().fftn if forward else _pocketfft().ifftn
    return transform(x, axes=dims, norm=_SCIPY_NORM[forward, normalization]).astype(
        x.dtype, copy=False)


FFT_C2C = define_op(
    name="fft_c2c", arity=1, shape=lambda shape, dims, normalization, forward: shape,
    dtype=lambda inputs, attrs: (None, inputs[0]._dtype), impl=_c2c_impl,
    # The adjoint of a DFT is the DFT the other way, scaled the same.
    vjp=lambda ctx, g: (bind(FFT_C2C, (g,), {**ctx.attrs, "forward": not ctx.attrs["forward"]}),),
    saves=(), jvp=lambda inputs, tangents, out, attrs: bind(FFT_C2C, (tangents[0],), attrs),
    lowering=Extern("fft", ("data",)), batch=dim_rule("dims"), static_vjp=True, complex=True)


def _r2c_shape(shape, dims, normalization, onesided):
    if not onesided:
        return shape
    last = dims[-1]
    return shape[:last] + (shape[last] // 2 + 1,) + shape[last + 1:]


def _r2c_impl(x, dims, normalization, onesided):
    transform = _pocketfft().rfftn if onesided else _pocketfft().fftn
    return transform(x, axes=dims, norm=_SCIPY_NORM[True, normalization]).astype(
        _complex_of(x.dtype), copy=False)


def _r2c_vjp(ctx, g):
    attrs = ctx.attrs
    dims = attrs["dims"]
    c2c = {"dims": dims, "normalization": attrs["normalization"], "forward": False}
    if attrs["onesided"]:
        # The one-sided spectrum is the full one with its upper half dropped: the upper half's
        # gradient is 0, then the inverse transform, whose real part reaches the real input.
        shape = ctx.input_meta[0][0]
        last = dims[-1]
        g = embed_slice(g, shape, [(0, g.shape[last] if axis == last else extent, 1)
                                   for axis, extent in enumerate(shape)])
    return (real(bind(FFT_C2C, (g,), c2c)),)


def _rule_r2c(inputs, attrs):
    return None, inputs[0]._dtype.to_complex()


FFT_R2C = define_op(
    name="fft_r2c", arity=1, shape=_r2c_shape, dtype=_rule_r2c, impl=_r2c_impl, vjp=_r2c_vjp,
    saves=(), jvp=lambda inputs, tangents, out, attrs: bind(FFT_R2C, (tangents[0],), attrs),
    lowering=Extern("fft", ("data",)), batch=dim_rule("dims"), static_vjp=True, complex=True)


def _c2r_shape(shape, dims, normalization, last_size):
    last = dims[-1]
    return shape[:last] + (last_size,) + shape[last + 1:]


def _c2r_impl(x, dims, normalization, last_size):
    sizes = [x.shape[axis] for axis in dims[:-1]] + [last_size]
    return _pocketfft().irfftn(x, s=sizes, axes=dims, norm=_SCIPY_NORM[False, normalization]
                               ).astype(x.real.dtype, copy=False)


def _c2r_vjp(ctx, g):
    # torch's fft_c2r_backward: the forward one-sided transform of the gradient, its entries
    # whose mirror image the one-sided input stands for doubled (1 to n - onesided length).
    attrs = ctx.attrs
    dims = attrs["dims"]
    grad = bind(FFT_R2C, (g,), {"dims": dims, "normalization": attrs["normalization"],
                                "onesided": True})
    last = dims[-1]
    doubled = attrs["last_size"] - grad.shape[last]
    if doubled > 0:
        weights = np.ones(grad.shape[last])
        weights[1:1 + doubled] = 2
        shape = [1] * grad.ndim
        shape[last] = grad.shape[last]
        from ...tensor.creation import tensor

        grad = grad * tensor(weights.reshape(shape), dtype=grad.dtype.to_real(),
                             device=grad.device)
    return (grad,)


def _rule_c2r(inputs, attrs):
    return None, inputs[0]._dtype.to_real()


FFT_C2R = define_op(
    name="fft_c2r", arity=1, shape=_c2r_shape, dtype=_rule_c2r, impl=_c2r_impl, vjp=_c2r_vjp,
    saves=(), jvp=lambda inputs, tangents, out, attrs: bind(FFT_C2R, (tangents[0],), attrs),
    lowering=Extern("fft", ("data",)), batch=dim_rule("dims"), static_vjp=True, complex=True)


def c2c(x: Tensor, dims: tuple, normalization: str, forward: bool) -> Tensor:
    if not dims:
        return x
    return bind(FFT_C2C, (x,), {"dims": tuple(dims), "normalization": normalization,
                                "forward": bool(forward)})


def r2c(x: Tensor, dims: tuple, normalization: str, onesided: bool) -> Tensor:
    return bind(FFT_R2C, (x,), {"dims": tuple(dims), "normalization": normalization,
                                "onesided": bool(onesided)})


def c2r(x: Tensor, dims: tuple, normalization: str, last_size: int) -> Tensor:
    if last_size < 1:
        raise RuntimeError(f"Invalid number of data points ({last_size}) specified")
    return bind(FFT_C2R, (x,), {"dims": tuple(dims), "normalization": normalization,
                                "last_size": int(last_size)})


# ---- arguments: dtypes, norm=, n= and s=, dim= ------------------------------------------------

def _normalization(norm, forward: bool) -> str:
    """torch's norm_from_string: the scaling of a transform that runs `forward`."""
    if norm is None or norm == "backward":
        return "none" if forward else "n"
    if norm == "forward":
        return "n" if forward else "none"
    if norm == "ortho":
        return "sqrt"
    raise RuntimeError(f'Invalid normalization mode: "{norm}"')


def _promote(x, function: str, require_complex: bool = False) -> Tensor:
    """x as a floating or complex tensor (integers and bools in the default dtype), as torch's
    promote_tensor_fft; with require_complex, complex."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{function}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    if x.dtype.category < dtypes.FLOATING:
        x = x.to(dtypes.get_default_dtype())
    if x.dtype in (dtypes.float16, dtypes.bfloat16):
        raise RuntimeError(f"Unsupported dtype {dtypes.scalar_type_name(x.dtype)}")
    if x.dtype is dtypes.complex32:  # torch's MKL path, which names the parts' dtype
        raise RuntimeError("MKL FFT doesn't support tensors of type: Half")
    if require_complex and not x.dtype.is_complex:
        x = x.to(x.dtype.to_complex())
    return x


def _real_input(x, function: str) -> Tensor:
    x = _promote(x, function)
    if x.dtype.is_complex:
        name = dtypes.scalar_type_name(x.dtype)
        # torch's messages differ by function
        if function == "ihfftn":
            raise RuntimeError(f"Only supports floating-point dtypes, but found: {name}")
        kind = "real-valued" if function == "rfftn" else "real"
        raise RuntimeError(f"{function} expects a {kind} input tensor, but got {name}")
    return x


def _resized(x: Tensor, dims, sizes) -> Tensor:
    """x cut or zero-padded at the end of each of `dims` to `sizes` (torch's
    resize_fft_input)."""
    shape = list(x.shape)
    cut = [(0, extent, 1) for extent in shape]
    padded = list(shape)
    for dim, size in zip(dims, sizes, strict=True):
        if size < shape[dim]:
            cut[dim] = (0, size, 1)
        padded[dim] = size
    x = slice_dims(x, cut)
    if padded != list(x.shape):
        x = embed_slice(x, padded, [(0, extent, 1) for extent in x.shape])
    return x


def _check_size(size: int) -> int:
    if size < 1:
        raise RuntimeError(f"Invalid number of data points ({size}) specified")
    return size


def _one_dim(x: Tensor, n, dim: int):
    dim = normalize_dim(dim, x.ndim, wrap_scalar=False)
    return dim, (None if n is None else _check_size(int(n)))


def _dims_and_sizes(x: Tensor, s, dim, function: str, default_all: bool = True):
    """torch's canonicalize_fft_shape_and_dim_args: the dims transformed and their sizes."""
    if dim is not None:
        dims = [dim] if isinstance(dim, int) else list(dim)
        dims = [normalize_dim(int(d), x.ndim, wrap_scalar=False) for d in dims]
        if len(set(dims)) != len(dims):
            raise RuntimeError("FFT dims must be unique")
    if s is not None:
        s = [int(size) for size in s]
        if dim is not None and len(dims) != len(s):
            raise RuntimeError("When given, dim and shape arguments must have the same length")
        if len(s) > x.ndim:
            raise RuntimeError(f"Got shape with {len(s)} values but input tensor only has "
                               f"{x.ndim} dimensions.")
        if dim is None:
            dims = list(range(x.ndim - len(s), x.ndim))
        sizes = [x.shape[d] if size == -1 else _check_size(size) for d, size in zip(dims, s)]
    else:
        if dim is None:
            dims = list(range(x.ndim)) if default_all else []
        sizes = [x.shape[d] for d in dims]
    for size in sizes:
        _check_size(size)
    return tuple(dims), sizes


# ---- one dim ------------------------------------------------------------------------------------

def fft(input, n=None, dim: int = -1, norm=None) -> Tensor:  # noqa: A002 - torch's names
    """The one-dimensional discrete Fourier transform of x along `dim`, of `n` points (x cut
    or zero-padded to n; its size by default); `norm` "backward" (no scaling, the default),
    "forward" (1/n) or "ortho" (1/sqrt(n)). A real x gives the full complex spectrum."""
    x = _promote(input, "fft")
    dim, n = _one_dim(x, n, dim)
    x = _resized(x, (dim,), (n or x.shape[dim],))
    if x.dtype.is_complex:
        return c2c(x, (dim,), _normalization(norm, True), True)
    return r2c(x, (dim,), _normalization(norm, True), False)


def ifft(input, n=None, dim: int = -1, norm=None) -> Tensor:  # noqa: A002
    """The inverse of fft: the one-dimensional inverse DFT along `dim` ("backward" scales by
    1/n)."""
    x = _promote(input, "ifft", require_complex=True)
    dim, n = _one_dim(x, n, dim)
    x = _resized(x, (dim,), (n or x.shape[dim],))
    return c2c(x, (dim,), _normalization(norm, False), False)


def rfft(input, n=None, dim: int = -1, norm=None) -> Tensor:  # noqa: A002
    """The DFT of a real x along `dim`: the n // 2 + 1 non-negative frequencies (the others
    are their conjugates)."""
    x = _real_input(input, "rfft")
    dim, n = _one_dim(x, n, dim)
    x = _resized(x, (dim,), (n or x.shape[dim],))
    return r2c(x, (dim,), _normalization(norm, True), True)


def irfft(input, n=None, dim: int = -1, norm=None) -> Tensor:  # noqa: A002
    """The inverse of rfft: a real signal of `n` points (2 * (size - 1) by default) from its
    non-negative frequencies along `dim`."""
    x = _promote(input, "irfft", require_complex=True)
    dim, n = _one_dim(x, n, dim)
    n = n or 2 * (x.shape[dim] - 1)
    x = _resized(x, (dim,), (n // 2 + 1,))
    return c2r(x, (dim,), _normalization(norm, False), n)


def hfft(input, n=None, dim: int = -1, norm=None) -> Tensor:  # noqa: A002
    """The DFT of a Hermitian-symmetric signal given by its first half along `dim`: a real
    result of `n` points (2 * (size - 1) by default)."""
    x = _promote(input, "hfft", require_complex=True)
    dim, n = _one_dim(x, n, dim)
    n = n or 2 * (x.shape[dim] - 1)
    x = _resized(x, (dim,), (n // 2 + 1,))
    return c2r(conj(x), (dim,), _normalization(norm, True), n)


def ihfft(input, n=None, dim: int = -1, norm=None) -> Tensor:  # noqa: A002
    """The inverse of hfft: the first half (n // 2 + 1 points) of the inverse DFT of a real
    signal along `dim`."""
    x = _real_input(input, "ihfft")
    dim, n = _one_dim(x, n, dim)
    x = _resized(x, (dim,), (n or x.shape[dim],))
    return conj(r2c(x, (dim,), _normalization(norm, False), True))


# ---- n dims -------------------------------------------------------------------------------------

def fftn(input, s=None, dim=None, norm=None) -> Tensor:  # noqa: A002
    """The n-dimensional DFT over `dim` (all dims by default; the last len(s) with `s`), each
    of the size `s` gives (-1: unchanged)."""
    x = _promote(input, "fftn")
    dims, sizes = _dims_and_sizes(x, s, dim, "fftn")
    x = _resized(x, dims, sizes)
    if x.dtype.is_complex or not dims:
        return c2c(x.to(x.dtype.to_complex()), dims, _normalization(norm, True), True)
    return r2c(x, dims, _normalization(norm, True), False)


def ifftn(input, s=None, dim=None, norm=None) -> Tensor:  # noqa: A002
    """The n-dimensional inverse DFT over `dim`, of the sizes `s`."""
    x = _promote(input, "ifftn", require_complex=True)
    dims, sizes = _dims_and_sizes(x, s, dim, "ifftn")
    return c2c(_resized(x, dims, sizes), dims, _normalization(norm, False), False)


def fft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:  # noqa: A002
    """fftn over two dims, the last two by default."""
    return fftn(input, s, dim, norm)


def ifft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:  # noqa: A002
    """ifftn over two dims, the last two by default."""
    return ifftn(input, s, dim, norm)


def rfftn(input, s=None, dim=None, norm=None) -> Tensor:  # noqa: A002
    """The n-dimensional DFT of a real x over `dim`: the last of them one-sided."""
    x = _real_input(input, "rfftn")
    dims, sizes = _dims_and_sizes(x, s, dim, "rfftn")
    if not dims:
        raise RuntimeError("rfftn must transform at least one axis")
    return r2c(_resized(x, dims, sizes), dims, _normalization(norm, True), True)


def _c2r_arguments(x: Tensor, s, dim, function: str):
    """(dims, input sizes, last output size) of an n-dimensional complex-to-real transform:
    the last dim's output size is s[-1] or 2 * (size - 1), its input n // 2 + 1 points."""
    dims, sizes = _dims_and_sizes(x, s, dim, function)
    if not dims:
        raise RuntimeError(f"{function} must transform at least one axis")
    last_size = sizes[-1] if s is not None and s[-1] != -1 else 2 * (x.shape[dims[-1]] - 1)
    _check_size(last_size)
    sizes[-1] = last_size // 2 + 1
    return dims, sizes, last_size


def irfftn(input, s=None, dim=None, norm=None) -> Tensor:  # noqa: A002
    """The inverse of rfftn: a real result whose last transformed dim has s[-1] points
    (2 * (size - 1) by default)."""
    x = _promote(input, "irfftn", require_complex=True)
    dims, sizes, last_size = _c2r_arguments(x, s, dim, "irfftn")
    return c2r(_resized(x, dims, sizes), dims, _normalization(norm, False), last_size)


def hfftn(input, s=None, dim=None, norm=None) -> Tensor:  # noqa: A002
    """The n-dimensional DFT of a Hermitian-symmetric signal given by the first half of its
    last dim: torch's forward transform over the other dims, then hfft over the last."""
    x = _promote(input, "hfftn", require_complex=True)
    dims, sizes, last_size = _c2r_arguments(x, s, dim, "hfftn")
    normalization = _normalization(norm, True)
    x = c2c(_resized(x, dims, sizes), dims[:-1], normalization, True)
    return c2r(conj(x), dims[-1:], normalization, last_size)


def ihfftn(input, s=None, dim=None, norm=None) -> Tensor:  # noqa: A002
    """The inverse of hfftn: the one-sided inverse DFT of a real x over its last transformed
    dim, conjugated, then the inverse DFT over the others."""
    x = _real_input(input, "ihfftn")
    dims, sizes = _dims_and_sizes(x, s, dim, "ihfftn")
    if not dims:
        raise RuntimeError("ihfftn must transform at least one axis")
    normalization = _normalization(norm, False)
    half = conj(r2c(_resized(x, dims, sizes), dims[-1:], normalization, True))
    return c2c(half, dims[:-1], normalization, False)


def rfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:  # noqa: A002
    """rfftn over two dims, the last two by default."""
    return rfftn(input, s, dim, norm)


def irfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:  # noqa: A002
    """irfftn over two dims, the last two by default."""
    return irfftn(input, s, dim, norm)


def hfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:  # noqa: A002
    """hfftn over two dims, the last two by default."""
    return hfftn(input, s, dim, norm)


def ihfft2(input, s=None, dim=(-2, -1), norm=None) -> Tensor:  # noqa: A002
    """ihfftn over two dims, the last two by default."""
    return ihfftn(input, s, dim, norm)


# ---- frequencies and shifts -------------------------------------------------------------------

def _frequencies(values: np.ndarray, scale: float, dtype, device, requires_grad: bool):
    from ...tensor.creation import tensor

    dtype = dtypes.get_default_dtype() if dtype is None else dtypes.dtype_argument(
        dtype, "fftfreq")
    # As torch computes them: the integers in the dtype, times the scale in the dtype.
    numpy_dtype = dtype.numpy
    return tensor(values.astype(numpy_dtype) * np.asarray(scale, dtype=numpy_dtype),
                  dtype=dtype, device=device, requires_grad=requires_grad)


def fftfreq(n: int, d: float = 1.0, *, dtype=None, device=None,
            requires_grad: bool = False) -> Tensor:
    """The sample frequencies of an n-point DFT of a signal sampled every `d`: [0, 1, ...,
    -2, -1] / (d n), as fft orders its results."""
    values = np.concatenate([np.arange(0, (n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return _frequencies(values.astype(np.float64), 1.0 / (n * d), dtype, device, requires_grad)


def rfftfreq(n: int, d: float = 1.0, *, dtype=None, device=None,
             requires_grad: bool = False) -> Tensor:
    """The non-negative sample frequencies of rfft's n-point transform: [0, 1, ..., n // 2] /
    (d n)."""
    values = np.arange(0, n // 2 + 1, dtype=np.float64)
    return _frequencies(values, 1.0 / (n * d), dtype, device, requires_grad)


def _shift(x, dim, inverse: bool) -> Tensor:
    dims = list(range(x.ndim)) if dim is None else (
        [dim] if isinstance(dim, int) else list(dim))
    dims = [normalize_dim(int(d), x.ndim) for d in dims]
    if not dims:
        return x
    shifts = [(x.shape[d] + 1) // 2 if inverse else x.shape[d] // 2 for d in dims]
    return roll(x, shifts, dims)


def fftshift(input, dim=None) -> Tensor:  # noqa: A002
    """x with the zero frequency moved to the middle of each of `dim` (all dims by default),
    the halves of fft's order swapped."""
    return _shift(input, dim, False)


def ifftshift(input, dim=None) -> Tensor:  # noqa: A002
    """The inverse of fftshift."""
    return _shift(input, dim, True)



# A Tensor subclass's __torch_function__ sees these functions (tensor/torch_function.py).
torch_function.expose(sys.modules[__name__], "torch.fft.fft_")
