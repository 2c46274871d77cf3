"""The short-time Fourier transform and its inverse: torch.stft and torch.istft, as composites of
indexing and the transforms of transforms.py.

stft pads a signal (center=True, by `pad_mode`), cuts it into frames of n_fft samples every
hop_length with index ops, multiplies each by the window (of win_length samples centered in
n_fft, ones by default) and transforms the frames, one-sided for a real signal; istft inverts
the frames' transforms, windows them again and overlap-adds them with index_add, divided by the
overlap-added squared window. Both follow torch's SpectralOps.cpp step by step, so values,
shapes, defaults and errors are torch's, and gradients (of any order) come from the primitives.
"""

from __future__ import annotations

import warnings

import numpy as np

from ...tensor import dtypes
from ...tensor.tensor import Tensor
from ..complex_numbers import view_as_real
from ..layout import embed_slice, reshape, slice_dims, squeeze, transpose, unsqueeze
from .transforms import c2c, c2r, r2c

_NO_WINDOW = ("A window was not provided. A rectangular window will be applied,which is known "
              "to cause spectral leakage. Other windows such as torch.hann_window or "
              "torch.hamming_window are recommended to reduce spectral leakage.To suppress this "
              "warning and use a rectangular window, explicitly set `window=torch.ones(n_fft, "
              "device=<device>)`.")
_NO_INVERSE_WINDOW = ("A window was not provided. A rectangular window will be applied.Please "
                      "provide the same window used by stft to make the inversion lossless.To "
                      "suppress this warning and use a rectangular window, explicitly set "
                      "`window=torch.ones(n_fft, device=<device>)`.")
_RETURN_REAL = ("stft with return_complex=False is deprecated. In a future pytorch release, stft "
                "will return complex tensors for all inputs, and return_complex=False will "
                "raise an error.\nNote: you can still call torch.view_as_real on the complex "
                "output to recover the old return format.")


def _tensor_type(x: Tensor) -> str:
    return f"autojit.{dtypes.scalar_type_name(x.dtype)}Tensor"


def _window_repr(window) -> str:
    return "None" if window is None else f"{_tensor_type(window)}{{{list(window.shape)}}}"


def _indices(values) -> Tensor:
    from ...tensor.creation import tensor

    return tensor(np.asarray(values, dtype=np.int64))


def _pad_last(x: Tensor, pad: int, mode: str) -> Tensor:
    """x padded by `pad` samples at both ends of its last dim, as nn.functional.pad's modes
    do: "constant" (zeros), "reflect", "replicate" or "circular"."""
    length = x.shape[-1]
    if mode == "constant":
        shape = (*x.shape[:-1], length + 2 * pad)
        return embed_slice(x, shape, [(0, n, 1) for n in x.shape[:-1]] + [(pad, pad + length, 1)])
    inner = np.arange(length)
    if mode == "reflect":
        if pad >= length:
            raise RuntimeError(
                "Argument #4: Padding size should be less than the corresponding input "
                f"dimension, but got: padding ({pad}, {pad}) at dimension {x.ndim + 2 - 1} "
                f"of input {[1] * (3 - x.ndim) + list(x.shape)}")
        index = np.concatenate([inner[1:pad + 1][::-1], inner, inner[-pad - 1:-1][::-1]])
    elif mode == "replicate":
        index = np.concatenate([np.zeros(pad, np.int64), inner, np.full(pad, length - 1)])
    elif mode == "circular":
        index = np.concatenate([inner[length - pad:], inner, inner[:pad]])
    else:
        raise NotImplementedError(f"stft: pad_mode {mode!r} is not one of 'constant', "
                                  "'reflect', 'replicate' and 'circular'")
    return x[..., _indices(index)]


def _smallest(x: Tensor):
    """The smallest value of x, over every example of a vmap batch (its physical tensor, whose
    values can be read). A number as `item()` gives it: inside a compiled function a symbolic
    one, so that the check on it is made on every call rather than breaking the graph."""
    while x._batched:
        x = x._value.physical
    return x.amin().item()


def _full_window(window, win_length: int, n_fft: int, like: Tensor, name: str, prefix: str):
    """The window as n_fft samples: the given one (or ones) centered, zeros around it."""
    from ...tensor.creation import ones

    if window is not None and (window.ndim != 1 or window.shape[0] != win_length):
        raise RuntimeError(f"{prefix}expected a 1D window tensor of size equal to win_length="
                           f"{win_length}, but got window with size {list(window.shape)}")
    if window is None:
        window = ones(win_length, dtype=like.dtype.to_real(), device=like.device)
    if win_length < n_fft:
        left = (n_fft - win_length) // 2
        window = embed_slice(window, (n_fft,), [(left, left + win_length, 1)])
    return window


def stft(input, n_fft: int, hop_length=None, win_length=None, window=None,  # noqa: A002
         center: bool = True, pad_mode: str = "reflect", normalized: bool = False,
         onesided=None, return_complex=None, align_to_window=None) -> Tensor:
    """The short-time Fourier transform of a signal (1-D) or batch of signals (2-D): the DFT of
    n_fft samples every hop_length (n_fft // 4) samples, each windowed, as (n_fft // 2 + 1
    frequencies, for a real signal, by frames) complex values; with center, the signal is
    padded by n_fft // 2 samples at each end first. return_complex must be given for a real
    signal (False: view_as_real's pairs, deprecated as in torch)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"stft(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    x = input
    if center and align_to_window is not None:
        raise RuntimeError("stft align_to_window should only be set when center = false")
    if center:
        pad = int(n_fft // 2)
        x = _pad_last(x, pad, pad_mode)
    hop_length = n_fft >> 2 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    prefix = (f"stft({_tensor_type(x)}{list(x.shape)}, n_fft={n_fft}, hop_length={hop_length}, "
              f"win_length={win_length}, window={_window_repr(window)}, "
              f"normalized={int(normalized)}, onesided={onesided}, return_complex="
              f"{return_complex if return_complex is None else int(return_complex)}, "
              f"align_to_window={align_to_window}) : ")
    complex_window = window is not None and window.dtype.is_complex
    if return_complex is None:
        return_complex = x.dtype.is_complex or complex_window
        if not return_complex:
            raise RuntimeError("stft requires the return_complex parameter be given for real "
                               "inputs, and will further require that return_complex=True in a "
                               "future PyTorch release.")
    elif not return_complex:
        warnings.warn(_RETURN_REAL, UserWarning, stacklevel=2)
    if window is None:
        warnings.warn(_NO_WINDOW, UserWarning, stacklevel=2)
    if x.dtype.category < dtypes.FLOATING:
        raise RuntimeError(prefix + "expected a tensor of floating point or complex values")
    if x.ndim not in (1, 2):
        raise RuntimeError(prefix + "expected a 1D or 2D tensor")
    signal = unsqueeze(x, 0) if x.ndim == 1 else x
    length = signal.shape[1]
    if n_fft <= 0 or n_fft > length:
        raise RuntimeError(prefix + f"expected 0 < n_fft < {length}, but got n_fft={n_fft}")
    if hop_length <= 0:
        raise RuntimeError(prefix + f"expected hop_length > 0, but got hop_length={hop_length}")
    if win_length <= 0 or win_length > n_fft:
        raise RuntimeError(prefix + "expected 0 < win_length <= n_fft, but got win_length="
                           f"{win_length}")
    full_window = _full_window(window, win_length, n_fft, signal, "stft", prefix)
    if align_to_window and win_length < n_fft:
        # Frames start where the window does: the signal padded by the window's margins.
        left = (n_fft - win_length) // 2
        shape = (signal.shape[0], length + n_fft - win_length)
        signal = embed_slice(signal, shape, [(0, signal.shape[0], 1), (left, left + length, 1)])
        length = shape[1]
    count = 1 + (length - n_fft) // hop_length
    starts = np.arange(count)[:, None] * hop_length + np.arange(n_fft)[None, :]
    frames = signal[:, _indices(starts)] * full_window  # (batch, frames, n_fft)
    normalization = "sqrt" if normalized else "none"
    onesided = (not frames.dtype.is_complex) if onesided is None else onesided
    if frames.dtype.is_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        out = c2c(frames, (2,), normalization, True)
    else:
        out = r2c(frames, (2,), normalization, bool(onesided))
    out = transpose(out, 1, 2)
    if x.ndim == 1:
        out = squeeze(out, 0)
    return out if return_complex else view_as_real(out)


def istft(input, n_fft: int, hop_length=None, win_length=None, window=None,  # noqa: A002
          center: bool = True, normalized: bool = False, onesided=None, length=None,
          return_complex: bool = False) -> Tensor:
    """The inverse of stft: a signal from its (frequencies, frames) complex STFT (a batch of
    them in 3-D), by overlap-adding the frames' inverse transforms, windowed, divided by the
    overlap-added squared window; `length` trims or zero-pads the result."""
    from ...tensor.creation import zeros
    from ..indexing.update import index_add

    if not isinstance(input, Tensor):
        raise TypeError(f"istft(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(input).__name__}")
    hop_length = n_fft >> 2 if hop_length is None else hop_length
    win_length = n_fft if win_length is None else win_length
    if not input.dtype.is_complex:
        raise RuntimeError("istft requires a complex-valued input tensor matching the output "
                           "from stft with return_complex=True.")
    if window is None:
        warnings.warn(_NO_INVERSE_WINDOW, UserWarning, stacklevel=2)
    prefix = (f"istft(CPU{dtypes.scalar_type_name(input.dtype)}Type{list(input.shape)}, "
              f"n_fft={n_fft}, hop_length={hop_length}, win_length={win_length}, "
              f"window={_window_repr(window)}, center={int(center)}, "
              f"normalized={int(normalized)}, onesided={onesided}, length={length}, "
              f"return_complex={int(return_complex)}) : ")
    if input.numel() == 0:
        raise RuntimeError("istft input tensor cannot be empty")
    if input.ndim not in (2, 3):
        if input.ndim < 2:
            raise IndexError(f"Dimension out of range (expected to be in range of "
                             f"[{-input.ndim - 1}, {input.ndim}], but got -3)")
        raise RuntimeError(f"istft expected a tensor with 3 or 4 dimensions of complex dtype, "
                           f"but got {input.ndim + 1}")
    spectra = unsqueeze(input, 0) if input.ndim == 2 else input
    count, fft_size = spectra.shape[2], spectra.shape[1]
    expected = n_fft + hop_length * (count - 1)
    onesided = fft_size != n_fft if onesided is None else onesided
    if onesided and n_fft // 2 + 1 != fft_size:
        raise RuntimeError(prefix + "expected the frequency dimension (3rd to the last) of the "
                           "input tensor to match n_fft / 2 + 1 when onesided=True, but got "
                           f"{fft_size}")
    if not onesided and n_fft != fft_size:
        raise RuntimeError(prefix + "expected the frequency dimension (3rd to the last) of the "
                           f"input tensor to match n_fft when onesided=False, but got {fft_size}")
    if not 0 < hop_length <= win_length:
        raise RuntimeError(prefix + "expected 0 < hop_length <= win_length")
    if not 0 < win_length <= n_fft:
        raise RuntimeError(prefix + "expected 0 < win_length <= n_fft")
    full_window = _full_window(window, win_length, n_fft, input, "istft", prefix)
    frames = transpose(spectra, 1, 2)  # (batch, frames, frequencies)
    normalization = "sqrt" if normalized else "n"
    if return_complex:
        if onesided:
            raise RuntimeError("Cannot have onesided output if window or input is complex")
        frames = c2c(frames, (2,), normalization, False)
    else:
        if window is not None and window.dtype.is_complex:
            raise RuntimeError("Complex windows are incompatible with return_complex=False")
        if not onesided:
            frames = slice_dims(frames, [(0, n, 1) for n in frames.shape[:2]] +
                                [(0, n_fft // 2 + 1, 1)])
        frames = c2r(frames, (2,), normalization, n_fft)
    frames = frames * full_window
    positions = _indices((np.arange(count)[:, None] * hop_length +
                          np.arange(n_fft)[None, :]).reshape(-1))
    batch = frames.shape[0]
    signal = index_add(zeros(batch, expected, dtype=frames.dtype, device=frames.device), 1,
                       positions, reshape(frames, (batch, count * n_fft)))
    squared = (full_window * full_window).expand(count, n_fft).reshape(1, count * n_fft)
    envelope = index_add(zeros(1, expected, dtype=squared.dtype, device=squared.device), 1,
                         positions, squared)
    start = n_fft // 2 if center else 0
    end = start + length if length is not None else (expected - n_fft // 2 if center
                                                     else expected)
    stop = min(end, expected)
    signal = slice_dims(signal, [(0, batch, 1), (start, stop, 1)])
    envelope = slice_dims(envelope, [(0, 1, 1), (start, stop, 1)])
    if envelope.numel() and _smallest(envelope.abs().detach()) < 1e-11:
        raise RuntimeError(prefix.rstrip(": ") + " window overlap add min: 1")
    signal = signal / envelope
    if input.ndim == 2:
        signal = squeeze(signal, 0)
    if end > expected:
        warnings.warn("The length of signal is shorter than the length parameter. Result is "
                      "being padded with zeros in the tail. Please check your center and "
                      "hop_length settings.", UserWarning, stacklevel=2)
        shape = (*signal.shape[:-1], signal.shape[-1] + end - expected)
        signal = embed_slice(signal, shape, [(0, n, 1) for n in signal.shape])
    return signal
