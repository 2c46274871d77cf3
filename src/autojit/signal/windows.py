"""autojit.signal.windows: torch.signal.windows' window functions (bartlett, blackman, cosine,
exponential, gaussian, general_cosine, general_hamming, hamming, hann, kaiser, nuttall).

Each is a factory computed as torch computes it: a linspace of the window's arguments in the
requested dtype, then the window's formula in autojit ops (so the values round as torch's do,
and a window made with requires_grad=True differentiates through the formula). Only float32
and float64 are accepted, as torch's checks say.
"""

from __future__ import annotations

import math
from collections.abc import Iterable

from ..ops import elementwise as F
from ..ops.special.functions import i0
from ..tensor import dtypes
from ..tensor.creation import arange, empty, linspace, ones, tensor

__all__ = ["bartlett", "blackman", "cosine", "exponential", "gaussian", "general_cosine",
           "general_hamming", "hamming", "hann", "kaiser", "nuttall"]


def _checks(function_name: str, M: int, dtype, layout) -> None:
    """torch's _window_function_checks."""
    if M < 0:
        raise ValueError(f"{function_name} requires non-negative window length, got M={M}")
    if layout is not None and str(layout) != "torch.strided" and layout != "strided":
        raise ValueError(f"{function_name} is implemented for strided tensors only, got: "
                         f"{layout}")
    if dtype not in (dtypes.float32, dtypes.float64):
        raise ValueError(f"{function_name} expects float32 or float64 dtypes, got: "
                         f"{_torch_name(dtype)}")


def _torch_name(dtype) -> str:
    return f"torch.{dtype.name}" if isinstance(dtype, dtypes.DType) else str(dtype)


def _dtype(dtype):
    return dtypes.get_default_dtype() if dtype is None else dtype


def _trivial(M: int, dtype, device, requires_grad: bool):
    """The windows of length 0 and 1 (None for longer ones)."""
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if M == 1:
        return ones((1,), dtype=dtype, device=device, requires_grad=requires_grad)
    return None


def exponential(M: int, *, center: float | None = None, tau: float = 1.0, sym: bool = True,
                dtype=None, layout=None, device=None, requires_grad: bool = False):
    """The exponential (Poisson) window exp(-|n - center| / tau)."""
    dtype = _dtype(dtype)
    _checks("exponential", M, dtype, layout)
    if tau <= 0:
        raise ValueError(f"Tau must be positive, got: {tau} instead.")
    if sym and center is not None:
        raise ValueError("Center must be None for symmetric windows")
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    if center is None:
        center = (M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / tau
    k = linspace(-center * constant, (-center + (M - 1)) * constant, M, dtype=dtype,
                 device=device, requires_grad=requires_grad)
    return F.exp(-F.abs(k))


def cosine(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
           requires_grad: bool = False):
    """The cosine (sine) window sin(pi (n + 1/2) / M)."""
    dtype = _dtype(dtype)
    _checks("cosine", M, dtype, layout)
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    start = 0.5
    constant = math.pi / (M + 1 if not sym and M > 1 else M)
    k = linspace(start * constant, (start + (M - 1)) * constant, M, dtype=dtype, device=device,
                 requires_grad=requires_grad)
    return F.sin(k)


def gaussian(M: int, *, std: float = 1.0, sym: bool = True, dtype=None, layout=None,
             device=None, requires_grad: bool = False):
    """The Gaussian window exp(-(n - (M - 1)/2)^2 / (2 std^2))."""
    dtype = _dtype(dtype)
    _checks("gaussian", M, dtype, layout)
    if std <= 0:
        raise ValueError(f"Standard deviation must be positive, got: {std} instead.")
    if M == 0:
        return empty((0,), dtype=dtype, device=device, requires_grad=requires_grad)
    start = -(M if not sym and M > 1 else M - 1) / 2.0
    constant = 1 / (std * math.sqrt(2))
    k = linspace(start * constant, (start + (M - 1)) * constant, M, dtype=dtype, device=device,
                 requires_grad=requires_grad)
    return F.exp(-k ** 2)


def kaiser(M: int, *, beta: float = 12.0, sym: bool = True, dtype=None, layout=None,
           device=None, requires_grad: bool = False):
    """The Kaiser window i0(beta sqrt(1 - (2n / (M - 1) - 1)^2)) / i0(beta)."""
    dtype = _dtype(dtype)
    _checks("kaiser", M, dtype, layout)
    if beta < 0:
        raise ValueError(f"beta must be non-negative, got: {beta} instead.")
    trivial = _trivial(M, dtype, device, requires_grad)
    if trivial is not None:
        return trivial
    beta = tensor(beta, dtype=dtype, device=device)
    start = -beta
    constant = 2.0 * beta / (M if not sym else M - 1)
    end = F.minimum(beta, start + (M - 1) * constant)
    k = linspace(start, end, M, dtype=dtype, device=device, requires_grad=requires_grad)
    return i0(F.sqrt(beta * beta - F.pow(k, 2))) / i0(beta)


def general_cosine(M, *, a: Iterable, sym: bool = True, dtype=None, layout=None, device=None,
                   requires_grad: bool = False):
    """The sum over i of (-1)^i a_i cos(2 pi i n / (M - 1))."""
    dtype = _dtype(dtype)
    _checks("general_cosine", M, dtype, layout)
    trivial = _trivial(M, dtype, device, requires_grad)
    if trivial is not None:
        return trivial
    if not isinstance(a, Iterable):
        raise TypeError("Coefficients must be a list/tuple")
    if not a:
        raise ValueError("Coefficients cannot be empty")
    constant = 2 * math.pi / (M if not sym else M - 1)
    k = linspace(0, (M - 1) * constant, M, dtype=dtype, device=device,
                 requires_grad=requires_grad)
    a_i = tensor([(-1) ** i * w for i, w in enumerate(a)], device=device, dtype=dtype,
                 requires_grad=requires_grad)
    i = arange(a_i.shape[0], dtype=a_i.dtype, device=a_i.device,
                 requires_grad=a_i.requires_grad)
    return (a_i.unsqueeze(-1) * F.cos(i.unsqueeze(-1) * k)).sum(0)


def general_hamming(M, *, alpha: float = 0.54, sym: bool = True, dtype=None, layout=None,
                    device=None, requires_grad: bool = False):
    """The generalized Hamming window alpha - (1 - alpha) cos(2 pi n / (M - 1))."""
    return general_cosine(M, a=[alpha, 1.0 - alpha], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def hamming(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
            requires_grad: bool = False):
    """The Hamming window: general_hamming with alpha 0.54."""
    return general_hamming(M, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def hann(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
         requires_grad: bool = False):
    """The Hann window: general_hamming with alpha 0.5."""
    return general_hamming(M, alpha=0.5, sym=sym, dtype=dtype, layout=layout, device=device,
                           requires_grad=requires_grad)


def blackman(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
             requires_grad: bool = False):
    """The Blackman window: general_cosine with a = (0.42, 0.5, 0.08)."""
    dtype = _dtype(dtype)
    _checks("blackman", M, dtype, layout)
    return general_cosine(M, a=[0.42, 0.5, 0.08], sym=sym, dtype=dtype, layout=layout,
                          device=device, requires_grad=requires_grad)


def bartlett(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
             requires_grad: bool = False):
    """The Bartlett (triangular) window 1 - |2n / (M - 1) - 1|."""
    dtype = _dtype(dtype)
    _checks("bartlett", M, dtype, layout)
    trivial = _trivial(M, dtype, device, requires_grad)
    if trivial is not None:
        return trivial
    start = -1
    constant = 2 / (M if not sym else M - 1)
    k = linspace(start, start + (M - 1) * constant, M, dtype=dtype, device=device,
                 requires_grad=requires_grad)
    return 1 - F.abs(k)


def nuttall(M: int, *, sym: bool = True, dtype=None, layout=None, device=None,
            requires_grad: bool = False):
    """The minimum 4-term Blackman-Harris window of Nuttall."""
    return general_cosine(M, a=[0.3635819, 0.4891775, 0.1365995, 0.0106411], sym=sym,
                          dtype=dtype, layout=layout, device=device,
                          requires_grad=requires_grad)
