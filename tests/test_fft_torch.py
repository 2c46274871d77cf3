"""autojit.fft, stft and istft against torch: every transform's values, dtypes and shapes with
its n=/s=, dim= and norm= arguments on real and complex, float32 and float64 inputs; the
errors; gradients of a real loss to second order; fftfreq, rfftfreq, fftshift and ifftshift;
and the short-time transforms with torch's defaults, windows, padding modes and lengths.

By default each parametrized case checks half of its signals and arguments, a different half
for neighbouring cases, so that every signal and argument is still met; the whole product is
checked with `AUTOJIT_COMPLEX_FULL=1 python -m pytest tests/test_fft_torch.py`.
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from torch_compare import torch

import autojit
from autojit.autograd import gradcheck, gradgradcheck

rng = np.random.default_rng(7)
FULL = os.environ.get("AUTOJIT_COMPLEX_FULL") == "1"
ONE_DIM = ("fft", "ifft", "rfft", "irfft", "hfft", "ihfft")
N_DIM = ("fft2", "ifft2", "fftn", "ifftn", "rfft2", "irfft2", "rfftn", "irfftn", "hfft2",
         "ihfft2", "hfftn", "ihfftn")
ONE_DIM_ARGUMENTS = ({}, {"norm": "ortho"}, {"norm": "forward"}, {"norm": "backward"},
                     {"n": 5}, {"n": 9, "dim": 0}, {"dim": -2, "norm": "ortho"}, {"n": 1})
N_DIM_ARGUMENTS = ({}, {"norm": "ortho"}, {"norm": "forward"}, {"s": (3, 5)}, {"dim": (0,)},
                   {"s": (4,), "dim": (1,)}, {"s": (-1, 4)}, {"dim": (-1, 0), "norm": "ortho"})


def half(items, offset: int) -> list:
    """Every other item, starting at item `offset % 2`; all of them with AUTOJIT_COMPLEX_FULL=1."""
    items = list(items)
    return items if FULL else items[offset % 2::2]


def signals():
    real = rng.standard_normal((4, 6))
    return [real, real.astype(np.float32), real + 1j * rng.standard_normal((4, 6)),
            (real + 1j * rng.standard_normal((4, 6))).astype(np.complex64),
            np.arange(6).reshape(2, 3)]


def _array(tensor):
    if isinstance(tensor, torch.Tensor):
        return tensor.detach().resolve_conj().resolve_neg().numpy()
    return np.asarray(tensor.detach().resolve_conj())


def _outcome(framework, function):
    try:
        return function(framework)
    except Exception as error:  # noqa: BLE001 - the outcome compared
        return error


def same_as_torch(function, rtol=1e-10, atol=1e-10):
    theirs, mine = _outcome(torch, function), _outcome(autojit, function)
    if isinstance(theirs, Exception):
        assert isinstance(mine, Exception), f"torch raised {theirs!r}, autojit returned"
        assert type(mine).__name__ == type(theirs).__name__, (mine, theirs)
        assert str(mine).split("\n")[0] == str(theirs).split("\n")[0].replace(
            "torch.", "autojit."), (mine, theirs)
        return
    assert not isinstance(mine, Exception), f"autojit raised {mine!r}"
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(mine.shape) == tuple(theirs.shape)
    single = "64" in str(theirs.dtype) and "complex128" not in str(theirs.dtype) and \
        "float64" not in str(theirs.dtype) or "float32" in str(theirs.dtype)
    tolerance = 1e-4 if single else rtol
    np.testing.assert_allclose(_array(mine), _array(theirs), rtol=tolerance,
                               atol=tolerance if single else atol)


@pytest.mark.parametrize("name", ONE_DIM)
def test_one_dimensional_transforms_are_torchs(name):
    offset = ONE_DIM.index(name)
    for at, signal in enumerate(signals()):
        for arguments in half(ONE_DIM_ARGUMENTS, offset + at):
            same_as_torch(lambda f, signal=signal, arguments=arguments:
                          getattr(f.fft, name)(f.tensor(signal), **arguments))


@pytest.mark.parametrize("name", N_DIM)
def test_n_dimensional_transforms_are_torchs(name):
    offset = N_DIM.index(name)
    for at, signal in enumerate(signals() + [rng.standard_normal((2, 3, 4))]):
        for arguments in half(N_DIM_ARGUMENTS, offset + at):
            same_as_torch(lambda f, signal=signal, arguments=arguments:
                          getattr(f.fft, name)(f.tensor(signal), **arguments))


def test_errors_are_torchs():
    for function in (
        lambda f: f.fft.fft(f.ones(4), n=0), lambda f: f.fft.fft(f.ones(4), norm="bad"),
        lambda f: f.fft.fft(f.ones(4), dim=2), lambda f: f.fft.rfft(f.ones(4, dtype=f.cfloat)),
        lambda f: f.fft.ihfft(f.ones(4, dtype=f.cfloat)),
        lambda f: f.fft.rfftn(f.ones(4, dtype=f.cfloat)),
        lambda f: f.fft.ihfftn(f.ones(4, dtype=f.cfloat)),
        lambda f: f.fft.fftn(f.ones(3, 3), s=(2,), dim=(0, 1)),
        lambda f: f.fft.fftn(f.ones(3, 3), dim=(0, 0)), lambda f: f.fft.fft2(f.ones(3)),
        lambda f: f.fft.irfft(f.ones(1, dtype=f.cfloat)), lambda f: f.fft.rfftn(f.ones(3), s=()),
        lambda f: f.fft.fft(f.ones(3, dtype=f.float16)), lambda f: f.fft.fft(f.tensor(1.0)),
    ):
        same_as_torch(function)


def test_frequencies_and_shifts_are_torchs():
    for n, d in ((5, 0.5), (6, 2.0), (1, 1.0), (8, 0.1)):
        for dtype in (None, "float64"):
            options = {} if dtype is None else {"dtype": dtype}
            for name in ("fftfreq", "rfftfreq"):
                mine = getattr(autojit.fft, name)(n, d, **{k: getattr(autojit, v)
                                                           for k, v in options.items()})
                theirs = getattr(torch.fft, name)(n, d, **{k: getattr(torch, v)
                                                           for k, v in options.items()})
                assert mine.dtype.name == str(theirs.dtype).split(".")[-1]
                assert np.array_equal(np.asarray(mine), theirs.numpy()), (name, n, d)
    for shape in ((5,), (4, 5), (2, 3, 4)):
        data = rng.standard_normal(shape)
        for dim in (None, 0, -1, (0, -1)):
            for name in ("fftshift", "ifftshift"):
                same_as_torch(lambda f, data=data, dim=dim, name=name:
                              getattr(f.fft, name)(f.tensor(data), dim=dim))


def _gradients(framework, name, data, arguments, order):
    x = framework.tensor(data, requires_grad=True)
    out = getattr(framework.fft, name)(x, **arguments)
    weights = np.random.default_rng(1).uniform(-1, 1, tuple(out.shape)) + (
        1j * np.random.default_rng(2).uniform(-1, 1, tuple(out.shape)) if out.dtype.is_complex
        else 0)
    loss = ((framework.tensor(weights).conj() * out).real if out.dtype.is_complex
            else framework.tensor(weights) * out).sum()
    (grad,) = framework.autograd.grad(loss, x, create_graph=order > 1)
    if order == 1:
        return grad
    # The gradient is linear in x: its own gradient comes through a nonlinear function of it.
    second = (grad * grad.conj()).real.sum() if grad.dtype.is_complex else (grad ** 3).sum()
    (result,) = framework.autograd.grad(second, x)
    return result


@pytest.mark.parametrize("order", [1, 2])
@pytest.mark.parametrize("name", ONE_DIM + N_DIM)
def test_gradients_are_torchs(name, order):
    real = rng.standard_normal((3, 6))
    data = [real, real + 1j * rng.standard_normal((3, 6))]
    cases = [{}, {"norm": "ortho"}, {"n": 5} if name in ONE_DIM else {"s": (4, 5)},
             {"norm": "forward", "dim": 0}]
    offset = (ONE_DIM + N_DIM).index(name) + order
    for at, signal in enumerate(data):
        for arguments in half(cases, offset + at):
            if name in ONE_DIM and "dim" in arguments and not isinstance(arguments["dim"], int):
                continue
            if name not in ONE_DIM and "dim" in arguments:
                arguments = {**arguments, "dim": (arguments["dim"],)}

            def function(f, signal=signal, arguments=arguments):
                return _gradients(f, name, signal, arguments, order)

            same_as_torch(function, rtol=1e-9, atol=1e-9)


def test_gradcheck_and_gradgradcheck_of_the_primitives():
    x = autojit.tensor(rng.standard_normal((3, 5)), requires_grad=True)
    z = autojit.tensor(rng.standard_normal((3, 5)) + 1j * rng.standard_normal((3, 5)),
                       requires_grad=True)
    for function, argument in (
        (lambda a: autojit.fft.fft(a, n=6), x), (lambda a: autojit.fft.rfft(a, norm="ortho"), x),
        (lambda a: autojit.fft.irfft(a, n=7), z), (lambda a: autojit.fft.irfft(a, n=8), z),
        (lambda a: autojit.fft.hfftn(a, s=(2, 6)), z), (lambda a: autojit.fft.ifftn(a), z),
        (lambda a: autojit.fft.rfft2(a, norm="forward").abs(), x),
    ):
        assert gradcheck(function, (argument,), check_forward_ad=True)
        assert gradgradcheck(function, (argument,))


# ---- stft and istft ---------------------------------------------------------------------------

def _windows(framework, length, dtype):
    return {"hann": framework.hann_window(length, dtype=getattr(framework, dtype)),
            "ones": None}


STFT_ARGUMENTS = ({}, {"hop_length": 3}, {"win_length": 6}, {"center": False},
                  {"pad_mode": "constant"}, {"pad_mode": "replicate"}, {"pad_mode": "circular"},
                  {"normalized": True}, {"onesided": False},
                  {"center": False, "win_length": 6, "align_to_window": True})


@pytest.mark.parametrize("window", ["hann", "ones"])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex128"])
def test_stft_and_istft_are_torchs(dtype, window):
    signal = rng.standard_normal((2, 40)) if dtype != "complex128" else \
        rng.standard_normal(40) + 1j * rng.standard_normal(40)
    signal = signal.astype(dtype)
    real_dtype = "float32" if dtype == "float32" else "float64"
    offset = ["float32", "float64", "complex128"].index(dtype) + (window == "ones")
    for arguments in half(STFT_ARGUMENTS, offset):
        length = arguments.get("win_length", 8)

        def spectrum(f, arguments=arguments, length=length):
            made = _windows(f, length, real_dtype)[window]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return f.stft(f.tensor(signal), 8, window=made, return_complex=True,
                              **arguments)

        same_as_torch(spectrum, rtol=1e-9, atol=1e-9)
        inverse = {k: v for k, v in arguments.items()
                   if k in ("hop_length", "win_length", "center", "normalized", "onesided")}

        def inverted(f, arguments=arguments, length=length, inverse=inverse):
            made = _windows(f, length, real_dtype)[window]
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return f.istft(spectrum(f), 8, window=made, length=signal.shape[-1],
                               return_complex=dtype == "complex128", **inverse)

        same_as_torch(inverted, rtol=1e-9, atol=1e-9)


def test_stft_errors_and_warnings_are_torchs():
    signal = rng.standard_normal(20)
    for function in (
        lambda f: f.stft(f.tensor(signal), 8),
        lambda f: f.stft(f.tensor(signal), 30, return_complex=True, center=False),
        lambda f: f.stft(f.tensor(signal), 8, hop_length=0, return_complex=True),
        lambda f: f.stft(f.tensor(signal), 8, win_length=9, return_complex=True),
        lambda f: f.stft(f.ones(2, 2, 20), 8, return_complex=True),
        lambda f: f.stft(f.arange(20), 8, return_complex=True),
        lambda f: f.stft(f.ones(20, dtype=f.cfloat), 8, onesided=True, return_complex=True),
        lambda f: f.stft(f.ones(3), 8, return_complex=True),
        lambda f: f.istft(f.ones(5, 3), 8),
        lambda f: f.istft(f.ones(4, 3, dtype=f.cfloat), 8),
        lambda f: f.istft(f.ones(5, 3, dtype=f.cfloat), 8, hop_length=9),
        lambda f: f.istft(f.stft(f.tensor(signal), 8, window=f.hann_window(8),
                                 return_complex=True, center=False), 8,
                          window=f.hann_window(8), center=False),
    ):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            same_as_torch(function)
    with pytest.warns(UserWarning, match="stft with return_complex=False is deprecated"):
        pair = autojit.stft(autojit.tensor(signal), 8, window=autojit.hann_window(8),
                            return_complex=False)
    assert tuple(pair.shape) == (5, 11, 2)
    with pytest.warns(UserWarning, match="A window was not provided"):
        autojit.stft(autojit.tensor(signal), 8, return_complex=True)
    with pytest.warns(UserWarning, match="shorter than the length parameter"):
        autojit.istft(autojit.stft(autojit.tensor(signal), 8, window=autojit.hann_window(8),
                                   return_complex=True), 8, window=autojit.hann_window(8),
                      length=30)


@pytest.mark.parametrize("order", [1, 2])
def test_stft_and_istft_gradients_are_torchs(order):
    signal = rng.standard_normal(24)
    window = np.hanning(9)[:8]

    def function(f):
        x = f.tensor(signal, requires_grad=True)
        w = f.tensor(window, requires_grad=True)
        spectrum = f.stft(x, 8, hop_length=3, window=w, return_complex=True)
        rebuilt = f.istft(spectrum * (1 + 0.5j), 8, hop_length=3, window=w, length=24)
        loss = (spectrum.abs() ** 2).sum() + (rebuilt ** 2).sum()
        grads = f.autograd.grad(loss, (x, w), create_graph=order > 1)
        if order == 1:
            return f.stack(grads[:1] + (f.cat([grads[1], f.zeros(16, dtype=f.float64)]),))
        return f.autograd.grad((grads[0] ** 2).sum() + grads[1].sum(), (x, w))[0]

    same_as_torch(function, rtol=1e-8, atol=1e-8)
