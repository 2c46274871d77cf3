"""Compiled functions on complex tensors: every traced op on one is a node of the graph; the
complex elementwise ops and sums fuse into CPU kernels as pairs of reals with the real ops
around them (tests/test_compile_complex_fused.py checks each), the others run their NumPy impls
one step each (docs/notes/complex.md, "Compiled code and devices"). So forward, backward,
double backward and an optimizer step compile without a graph break (`fullgraph=True` holds)
and equal eager, which equals torch
(tests/test_complex_torch.py, tests/test_complex_autograd_torch.py). A complex tensor's values
read in Python (`item()`, `tolist()`) are graph values read after each run, specialized on
where Python computes with a complex number.
"""

from __future__ import annotations

import re
import warnings

import numpy as np
import pytest

import autojit
from autojit import CompileWarning

rng = np.random.default_rng(13)


def _complex(shape=(3,), dtype=np.complex128):
    return autojit.tensor((rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape))
                          .astype(dtype))


def _real(shape=(3,), low=-1.0, high=1.0):
    return autojit.tensor(rng.uniform(low, high, shape))


def _run(compiled, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = compiled(*args)
    return result, [str(w.message) for w in caught if issubclass(w.category, CompileWarning)]


def _close(a, b, rtol=1e-12, atol=1e-13):
    """Compiled equals eager: sums, products and quotients bitwise; a kernel may round a
    transcendental function (real or complex) differently in the last bits."""
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _close(x, y, rtol, atol)
        return
    if a is None or b is None:
        assert a is b
        return
    assert a.dtype is b.dtype and tuple(a.shape) == tuple(b.shape), (a.dtype, b.dtype)
    assert a.is_conj() == b.is_conj()
    np.testing.assert_allclose(a.detach().resolve_conj().numpy(),
                               b.detach().resolve_conj().numpy(), rtol=rtol, atol=atol)


def _leaves(arrays):
    return [autojit.tensor(array, requires_grad=True) for array in arrays]


def _eager_and_compiled(function, arrays, order: int = 1):
    """function's results and the gradients of `order` (1 or 2) with respect to its inputs,
    eager and through autojit.compile(fullgraph=True), which must not break the graph."""
    compiled = autojit.compile(function, fullgraph=True)
    results = []
    for run in (function, compiled):
        leaves = _leaves(arrays)
        out, said = _run(run, *leaves)
        assert said == []
        outs = out if isinstance(out, tuple) else (out,)
        loss = sum((o.abs() ** 2 if o.is_complex() else o).sum() for o in outs)
        grads = autojit.autograd.grad(loss, leaves, create_graph=order > 1, allow_unused=True)
        if order > 1:
            used = [g for g in grads if g is not None]
            grads = autojit.autograd.grad(
                sum((g.abs() if g.is_complex() else g).sin().sum() for g in used), leaves,
                allow_unused=True)
        results.append((outs, grads))
    assert compiled.stats().eager_calls == 0 and compiled.stats().graph_breaks == 0
    return results


ELEMENTWISE = {
    "add_mul_div": lambda z, w: (z + w) * z / (w + 2),
    "sub_neg_rsub": lambda z, w: 1 - (-z) - w * 2j,
    "conj": lambda z, w: z.conj() * w + z.conj_physical(),
    "abs_angle_sgn": lambda z, w: z.abs() + w.angle() * z.sgn().real,
    "exp_log": lambda z, w: (z.exp() + w).log(),
    "sqrt_pow": lambda z, w: z.sqrt() + w ** 2 + z.pow(w),
    "trig": lambda z, w: z.sin() * w.cos() + z.tanh() - w.sigmoid(),
    "reciprocal_rsqrt": lambda z, w: (z + 2).reciprocal() + (w + 2).rsqrt(),
    "real_imag": lambda z, w: z.real * w.imag + autojit.complex(z.imag, w.real),
    "views": lambda z, w: autojit.view_as_complex(autojit.view_as_real(z * w).flip(-1)),
    "polar": lambda z, w: autojit.polar(z.abs(), w.angle()) * z,
    "where_sum_mean": lambda z, w: autojit.where(z.real > 0, z, w).sum() + (z * w).mean(0),
    "matmul": lambda z, w: z.unsqueeze(-1) @ w.unsqueeze(0) + z.reshape(3, 1).mT.conj(),
    "mixed_real": lambda z, w: z * z.real.exp() + w.abs().square(),
}


@pytest.mark.parametrize("name", sorted(ELEMENTWISE))
def test_complex_ops_compile_and_equal_eager(name):
    arrays = [_complex().numpy(), _complex().numpy()]
    (eager, compiled) = _eager_and_compiled(ELEMENTWISE[name], arrays)
    _close(compiled, eager)


@pytest.mark.parametrize("name", ["add_mul_div", "exp_log", "abs_angle_sgn", "views"])
def test_double_backward_through_compiled_complex_ops_equals_eager(name):
    arrays = [_complex().numpy(), _complex().numpy()]
    (eager, compiled) = _eager_and_compiled(ELEMENTWISE[name], arrays, order=2)
    _close(compiled, eager)


SPECTRAL = {
    "fft": lambda x, z: autojit.fft.fft(z, n=8) + autojit.fft.ifft(x, norm="ortho"),
    "rfft_irfft": lambda x, z: autojit.fft.irfft(autojit.fft.rfft(x) * z[:5], n=8),
    "fft2_ifft2": lambda x, z: autojit.fft.ifft2(autojit.fft.fft2(x.reshape(2, 4)) * z[:4]),
    "rfft2_irfft2": lambda x, z: autojit.fft.irfft2(autojit.fft.rfft2(x.reshape(2, 4)) * z[:3],
                                                    s=(2, 4)),
    "hfft_ihfft": lambda x, z: autojit.fft.hfft(z[:5]) + autojit.fft.ihfft(x).abs().sum(),
    "stft_istft": lambda x, z: _stft_round_trip(x),
}


def _stft_round_trip(x):
    window = autojit.hann_window(4, dtype=x.dtype)
    spectrum = autojit.stft(x, 4, hop_length=1, window=window, return_complex=True)
    return spectrum, autojit.istft(spectrum * 2, 4, hop_length=1, window=window, length=8)


@pytest.mark.parametrize("name", sorted(SPECTRAL))
def test_ffts_compile_and_equal_eager(name):
    arrays = [rng.uniform(-1, 1, 8), _complex((10,)).numpy()]
    (eager, compiled) = _eager_and_compiled(SPECTRAL[name], arrays)
    _close(compiled, eager)


def test_fft_double_backward_compiled_equals_eager():
    (eager, compiled) = _eager_and_compiled(SPECTRAL["rfft_irfft"],
                                            [rng.uniform(-1, 1, 8), _complex((10,)).numpy()],
                                            order=2)
    _close(compiled, eager)


def _rotary(dim: int, length: int):
    """The rotation factors of rotary position embeddings, as complex numbers."""
    frequencies = 1.0 / (10000 ** (autojit.arange(0, dim, 2)[: dim // 2].float() / dim))
    angles = autojit.outer(autojit.arange(length).float(), frequencies)
    return autojit.polar(autojit.ones_like(angles), angles)


class _RotaryAttention(autojit.nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.qkv = autojit.nn.Linear(dim, 3 * dim)
        self.out = autojit.nn.Linear(dim, dim)

    def forward(self, x, rotation):
        q, k, v = self.qkv(x).chunk(3, dim=-1)
        q, k = (autojit.view_as_real(
            autojit.view_as_complex(t.reshape(*t.shape[:-1], -1, 2)) * rotation).flatten(-2)
            for t in (q, k))
        scores = (q @ k.transpose(-2, -1)) / q.shape[-1] ** 0.5
        return self.out(scores.softmax(-1) @ v)


def _train(step, make, batches, steps: int = 2):
    autojit.manual_seed(0)
    model, optimizer = make()
    losses = [step(model, optimizer, *batch) for batch in batches[:steps]]
    return losses, [p.detach().clone() for p in model.parameters()]


def _compare_training(step, make, batches, rtol, atol):
    compiled = autojit.compile(step, fullgraph=True)
    eager_losses, eager_params = _train(step, make, batches)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        compiled_losses, compiled_params = _train(compiled, make, batches)
    assert compiled.stats().eager_calls == 0
    _close(compiled_losses, eager_losses, rtol, atol)
    _close(compiled_params, eager_params, rtol, atol)


def test_a_rotary_embedding_training_step_compiles_and_equals_eager():
    rotation = _rotary(8, 6)

    def make():
        model = _RotaryAttention(8)
        return model, autojit.optim.AdamW(model.parameters(), lr=1e-2)

    def step(model, optimizer, x, target):
        optimizer.zero_grad()
        loss = ((model(x, rotation) - target) ** 2).mean()
        loss.backward()
        optimizer.step()
        return loss

    batches = [(autojit.randn(2, 6, 8), autojit.randn(2, 6, 8)) for _ in range(2)]
    _compare_training(step, make, batches, rtol=2e-5, atol=2e-6)


class _SpectralConv(autojit.nn.Module):
    """A Fourier neural operator's layer: the lowest modes of the 2-d spectrum mixed by complex
    weights, the rest dropped, plus a pointwise linear path."""

    def __init__(self, channels: int, modes: int):
        super().__init__()
        self.modes = modes
        self.weight = autojit.nn.Parameter(
            autojit.randn(channels, channels, modes, modes, dtype=autojit.cfloat) / channels)
        self.pointwise = autojit.nn.Conv2d(channels, channels, 1)

    def forward(self, x):
        spectrum = autojit.fft.rfft2(x)
        m = self.modes
        mixed = autojit.einsum("bixy,ioxy->boxy", spectrum[:, :, :m, :m], self.weight)
        # The dropped modes as zeros (padding: a slice assignment into a tensor the step made
        # would break the graph of a step that also changes the optimizer's state).
        full = autojit.nn.functional.pad(
            mixed, (0, spectrum.shape[-1] - m, 0, spectrum.shape[-2] - m))
        y = autojit.fft.irfft2(full, s=x.shape[-2:])
        return autojit.nn.functional.gelu(y + self.pointwise(x))


def test_an_fno_layer_trained_with_adam_compiles_and_equals_eager():
    def make():
        model = _SpectralConv(3, 3)
        return model, autojit.optim.Adam(model.parameters(), lr=1e-2)

    def step(model, optimizer, x, target):
        optimizer.zero_grad()
        loss = ((model(x) - target) ** 2).mean()
        loss.backward()
        optimizer.step()
        return loss

    batches = [(autojit.randn(2, 3, 8, 8), autojit.randn(2, 3, 8, 8)) for _ in range(2)]
    _compare_training(step, make, batches, rtol=2e-5, atol=2e-6)


def test_arithmetic_no_ops_are_kept_for_complex_values():
    # z * 1 is z * (1 + 0i): an infinite imaginary part makes the real part NaN, and z + 0
    # turns a -0.0 part into +0.0; the compiled graph must not drop them as it does for reals.
    def function(z):
        return z * 1, z + 0, z / 1, z ** 1, z - 0

    z = autojit.complex(autojit.tensor([-0.0, 1.0, np.inf]), autojit.tensor([-0.0, np.inf, 2.0]))
    eager = function(z)
    compiled, said = _run(autojit.compile(function, fullgraph=True), z)
    assert said == []
    for a, b in zip(compiled, eager, strict=True):
        np.testing.assert_array_equal(autojit.view_as_real(a).numpy(),
                                      autojit.view_as_real(b).numpy())
        assert np.array_equal(np.signbit(autojit.view_as_real(a).numpy()),
                              np.signbit(autojit.view_as_real(b).numpy()))


def test_item_of_a_complex_tensor_compiles_specialized_on_its_value():
    # Symbolic scalars are real: the trace specializes on the complex value, checked on every
    # run (a split where it differs), and no call runs eagerly.
    def function(z, x):
        return x * (z[0] * 2).item().real, z.sum().item()

    compiled, x = autojit.compile(function), _real()
    for z in (_complex(), _complex()):
        z_again = z.clone()
        for _ in range(2):
            result, said = _run(compiled, z_again, x)
            expected = function(z, x)
            assert said == [] and result[1] == expected[1]
            assert isinstance(result[1], complex)
            _close(result[0], expected[0])
    stats = compiled.stats()
    assert stats.eager_calls == 0 and stats.graph_breaks == 0 and stats.value_check_failures
    with pytest.raises(Exception, match=re.escape("the complex number Tensor.item() gives")):
        autojit.compile(function, fullgraph=True)(_complex(), x)


def test_tolist_of_a_complex_tensor_compiles_read_on_every_run():
    # As a real tensor's: the nested list is a graph value read after each run (no graph
    # break, fullgraph holds); a 0-d one is the complex number, and Python arithmetic on an
    # item specializes on its value, checked on every run.
    def function(z, x):
        return (z * 2).tolist(), z[0].tolist(), x + 1

    def arithmetic(z):
        return [abs(v) * 2 for v in (z + 1).tolist()] + [z.sum().tolist() * 3]

    compiled = autojit.compile(function, fullgraph=True)
    with_items = autojit.compile(arithmetic)
    for shape in ((2, 3), (2, 3), (4,)):
        z, x = _complex(shape), _real()
        result, said = _run(compiled, z, x)
        expected = function(z, x)
        assert said == [] and result[:2] == expected[:2]
        assert isinstance(result[1], (list, complex)) and type(result[1]) is type(expected[1])
        _close(result[2], expected[2])
        if len(shape) == 1:
            result, said = _run(with_items, z)
            assert said == [] and result == arithmetic(z)
    assert compiled.stats().eager_calls == 0 and compiled.stats().graph_breaks == 0
    assert with_items.stats().eager_calls == 0


def test_an_op_refusing_complex_raises_its_error_inside_a_compiled_function():
    compiled = autojit.compile(lambda z: z.floor(), fullgraph=True)
    with pytest.raises(NotImplementedError, match="floor is not supported for complex"):
        compiled(_complex())


def test_a_complex_input_of_another_dtype_retraces():
    compiled = autojit.compile(lambda z: (z * z.conj()).real, fullgraph=True)
    for dtype in (np.complex128, np.complex64, np.complex128):
        z = _complex(dtype=dtype)
        _close(compiled(z), (z * z.conj()).real)
    assert compiled.stats().traces == 2 and compiled.stats().eager_calls == 0


def test_istft_checks_its_window_on_every_compiled_call():
    # The overlap-add check reads a value of the graph: made on each call, not traced once.
    def function(spectrum, window):
        return autojit.istft(spectrum, 4, hop_length=1, window=window, length=8)

    window = autojit.hann_window(4, dtype=autojit.float64)
    spectrum = autojit.stft(_real((8,)), 4, hop_length=1, window=window, return_complex=True)
    compiled = autojit.compile(function)
    _close(compiled(spectrum, window), function(spectrum, window))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        with pytest.raises(RuntimeError, match="window overlap add min"):
            compiled(spectrum, autojit.zeros(4, dtype=autojit.float64))


def test_in_place_writes_to_complex_tensors_are_written_back_as_eagers():
    # An argument and a captured tensor updated in place, one through its imaginary part's
    # view: the compiled call leaves the values eager leaves, call after call.
    def make():
        captured = autojit.tensor([1 + 1j, 2 - 1j])

        def function(z, x):
            z.mul_(1j)
            captured.add_(x * 2)
            captured.imag.add_(1.0)
            return (z * captured).real.sum()

        return captured, function

    x = _real((2,))
    runs = []
    for compile_it in (False, True):
        captured, function = make()
        run = autojit.compile(function, fullgraph=True) if compile_it else function
        z = autojit.tensor([1 + 2j, 3 + 0j])
        runs.append(([run(z, x) for _ in range(2)], z, captured))
    (eager_results, eager_z, eager_captured), (results, z, captured) = runs
    _close(results, eager_results)
    _close(z, eager_z)
    _close(captured, eager_captured)


def test_results_and_arguments_keep_the_conjugate_bit():
    # The graph holds conjugated values; the bit itself is metadata each run's result gets as
    # eager's has it, and a traced argument carries it (conj() flips it, view_as_real refuses
    # it). A new compiled function per argument: the guards do not yet check the bit.
    def function(z):
        return z.conj(), z.conj()[0], z.is_conj(), z * 2

    z = _complex()
    for argument in (z, z.conj()):
        compiled = autojit.compile(function, fullgraph=True)
        for _ in range(2):
            result, expected = compiled(argument), function(argument)
            assert result[2] == expected[2]
            _close([result[0], result[1], result[3]], [expected[0], expected[1], expected[3]])
    with pytest.raises(RuntimeError, match="view_as_real doesn't work on unresolved"):
        autojit.compile(autojit.view_as_real, fullgraph=True)(z.conj())
