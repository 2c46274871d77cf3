"""Op table rows for autojit.fft's transforms (ops/fft/transforms.py) and for stft and istft
(ops/fft/spectral.py), with NumPy's FFTs as the reference.

Real signals give complex spectra, which the compiled driver (tests/test_compile_op_table.py)
runs without a graph break, as the rows with real inputs check. tests/test_fft_torch.py checks every
function of the namespace against torch, with its n=, s=, dim= and norm= arguments.
"""

from __future__ import annotations

import numpy as np

import autojit

from . import FLOATING, OpInfo, Sample
from .complex_numbers import COMPLEX, keep_dtype, values


def _real(rng, shape, dtype):
    return np.asarray(rng.uniform(-2, 2, shape), dtype=dtype)


def _signals(make):
    def samples(rng, dtype):
        return [Sample((make(rng, (4, 6), dtype),)),
                Sample((make(rng, (3, 5), dtype),), {"n": 8, "dim": 0, "norm": "ortho"}),
                Sample((make(rng, (2, 5), dtype),), {"n": 3, "norm": "forward"})]

    return samples


def _spectra(rng, dtype):
    return [Sample((values(rng, (4, 4), dtype),)),
            Sample((values(rng, (3, 5), dtype),), {"n": 7, "norm": "ortho"}),
            Sample((values(rng, (5, 2), dtype),), {"n": 6, "dim": 0, "norm": "forward"})]


def _grids(make):
    def samples(rng, dtype):
        return [Sample((make(rng, (3, 4), dtype),)),
                Sample((make(rng, (2, 3, 4), dtype),), {"s": (5, 3), "norm": "ortho"}),
                Sample((make(rng, (2, 3, 4), dtype),), {"dim": (0, 2), "norm": "forward"})]

    return samples


def _numpy(function):
    """A NumPy FFT as a reference with torch's names (dim= for axis=, s= for n=)."""
    def reference(x, n=None, dim=-1, norm=None):
        return function(x, n=n, axis=dim, norm=norm)

    return reference


def _numpy_n(function):
    def reference(x, s=None, dim=None, norm=None):
        if dim is None and s is not None:  # torch's: the last len(s) dims
            dim = tuple(range(x.ndim - len(s), x.ndim))
        return function(x, s=s, axes=dim, norm=norm)

    return reference


def _in_precision(reference):
    def result(x, *args, **kwargs):
        out = np.asarray(reference(x, *args, **kwargs))
        single = x.dtype in (np.float32, np.complex64)
        if out.dtype.kind == "c":
            return out.astype(np.complex64 if single else np.complex128)
        return out.astype(np.float32 if single else np.float64)

    return result


def _stft_reference(x, n_fft, hop_length, window, center=True):
    if center:
        x = np.pad(x, (n_fft // 2, n_fft // 2), mode="reflect")
    count = 1 + (x.shape[-1] - n_fft) // hop_length
    frames = np.stack([x[t * hop_length:t * hop_length + n_fft] * window
                       for t in range(count)], -1)
    return np.fft.rfft(frames, axis=0).astype(np.complex64 if x.dtype == np.float32 else
                                              np.complex128)


def _stft_samples(rng, dtype):
    window = np.hanning(9)[:8].astype(dtype)  # torch's periodic Hann window
    return [Sample((_real(rng, (24,), dtype), 8, 2, window)),
            Sample((_real(rng, (17,), dtype), 6, 3, np.ones(6, dtype), False))]


def _stft(x, n_fft, hop_length, window, center=True):
    return autojit.stft(x, n_fft, hop_length, window=window, center=center,
                        return_complex=True)


def _istft(spectrum, n_fft, hop_length, window, length):
    return autojit.istft(spectrum, n_fft, hop_length, window=window, length=length)


def _istft_samples(rng, dtype):
    part = np.float32 if dtype == np.complex64 else np.float64
    window = np.hanning(9)[:8].astype(part)
    signal = rng.uniform(-1, 1, 24).astype(part)
    spectrum = _stft_reference(signal, 8, 2, window)
    return [Sample((spectrum, 8, 2, window, 24))]


def _istft_reference(spectrum, n_fft, hop_length, window, length):
    # The signal the spectrum was made of (_istft_samples keeps it exact).
    frames = np.fft.irfft(spectrum, n=n_fft, axis=0) * window[:, None]
    count = frames.shape[1]
    total = n_fft + hop_length * (count - 1)
    signal, envelope = np.zeros(total), np.zeros(total)
    for t in range(count):
        signal[t * hop_length:t * hop_length + n_fft] += frames[:, t]
        envelope[t * hop_length:t * hop_length + n_fft] += window ** 2
    start = n_fft // 2
    return (signal[start:start + length] / envelope[start:start + length]).astype(window.dtype)


ROWS = [
    OpInfo("fft.fft", autojit.fft.fft, _in_precision(_numpy(np.fft.fft)), _signals(_real),
           primitives=("fft_r2c",), cuda=False),
    OpInfo("fft.fft(complex)", autojit.fft.fft, keep_dtype(_numpy(np.fft.fft)),
           _signals(values), primitives=("fft_c2c",), dtypes=COMPLEX, cuda=False),
    OpInfo("fft.ifft", autojit.fft.ifft, keep_dtype(_numpy(np.fft.ifft)), _signals(values),
           primitives=("fft_c2c",), dtypes=COMPLEX, cuda=False),
    OpInfo("fft.rfft", autojit.fft.rfft, _in_precision(_numpy(np.fft.rfft)), _signals(_real),
           primitives=("fft_r2c", "fft_c2c"), cuda=False),
    OpInfo("fft.irfft", autojit.fft.irfft, _in_precision(_numpy(np.fft.irfft)), _spectra,
           primitives=("fft_c2r", "fft_r2c"), dtypes=COMPLEX, cuda=False),
    OpInfo("fft.fftn", autojit.fft.fftn, keep_dtype(_numpy_n(np.fft.fftn)), _grids(values),
           primitives=("fft_c2c",), dtypes=COMPLEX, cuda=False),
    OpInfo("fft.rfftn", autojit.fft.rfftn, _in_precision(_numpy_n(np.fft.rfftn)),
           _grids(_real), primitives=("fft_r2c", "fft_c2c"), cuda=False),
    OpInfo("fft.irfftn", autojit.fft.irfftn, _in_precision(_numpy_n(np.fft.irfftn)),
           lambda rng, dtype: [Sample((values(rng, (3, 4), dtype),)),
                               Sample((values(rng, (2, 3, 4), dtype),), {"s": (4, 6)})],
           primitives=("fft_c2r", "fft_r2c"), dtypes=COMPLEX, cuda=False),
    OpInfo("fft.fftshift", autojit.fft.fftshift, lambda x, dim=None: np.fft.fftshift(x, dim),
           lambda rng, dtype: [Sample((_real(rng, (3, 5), dtype),)),
                               Sample((_real(rng, (4, 5), dtype),), {"dim": 1})],
           primitives=("slice", "cat"), dtypes=FLOATING),
    OpInfo("stft", _stft, _stft_reference, _stft_samples,
           primitives=("index", "mul", "fft_r2c"), cuda=False,
           grad_inputs=(0, 3)),
    OpInfo("istft", _istft, _istft_reference, _istft_samples,
           primitives=("fft_c2r", "mul", "index_put", "div"), dtypes=COMPLEX, cuda=False,
           grad_inputs=(0,)),
]
