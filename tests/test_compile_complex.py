"""Compiled functions that meet complex tensors: the code generators have no complex type, so
every traced op on one, and every read of one's values, is a graph break. The call runs
eagerly with a CompileWarning naming the user's line, once, and its results (values and
gradients) are eager's, which are torch's (tests/test_complex_torch.py).
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit
from autojit import CompileWarning

rng = np.random.default_rng(13)


def _complex(shape=(3,)):
    return autojit.tensor(rng.uniform(-1, 1, shape) + 1j * rng.uniform(-1, 1, shape))


def _run(compiled, *args):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = compiled(*args)
    return result, [str(w.message) for w in caught if issubclass(w.category, CompileWarning)]


def _same(a, b):
    if isinstance(a, (tuple, list)):
        assert len(a) == len(b)
        for x, y in zip(a, b, strict=True):
            _same(x, y)
        return
    if isinstance(a, autojit.Tensor):
        assert a.dtype is b.dtype and tuple(a.shape) == tuple(b.shape)
        np.testing.assert_array_equal(np.asarray(a.detach()), np.asarray(b.detach()))
    else:
        assert a == b


CASES = {
    "arithmetic": (lambda z, x: (z * x).exp().abs() + x, "mul on complex tensors"),
    "spectrum": (lambda z, x: autojit.fft.rfft(x).abs().sum() * x, "fft_r2c on complex"),
    "cast": (lambda z, x: x.to(autojit.cfloat).real * 2, "cast on complex tensors"),
    "item": (lambda z, x: x * z[0].item().real, "Tensor.item() of a complex tensor"),
    "tolist": (lambda z, x: (z.tolist(), x + 1), "Tensor.tolist() of a complex tensor"),
    "parts": (lambda z, x: z.real + z.imag * x, "view_as_real on complex tensors"),
    "factory": (lambda z, x: autojit.zeros(3, dtype=autojit.cfloat).add_(1j) * x,
                "add on complex tensors"),
    "polar": (lambda z, x: autojit.polar(x.abs(), x).angle(), "complex on complex tensors"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_a_complex_tensor_breaks_the_graph_and_runs_eagerly(name):
    function, reason = CASES[name]
    z = _complex()
    x = autojit.tensor(rng.uniform(0.5, 1.5, 3))
    compiled = autojit.compile(function)
    expected = function(z, x)
    result, said = _run(compiled, z, x)
    _same(result, expected)
    assert len(said) == 1 and reason in said[0], said
    assert "graph break at" in said[0] and __file__ in said[0], said
    result, said = _run(compiled, z, x)  # the warning is given once
    _same(result, expected)
    assert said == []


def test_gradients_through_a_compiled_complex_function_are_eagers():
    def step(z, w):
        loss = ((z * w).exp().abs() ** 2).sum() + autojit.fft.fft(z).real.sum()
        loss.backward()
        return loss

    compiled = autojit.compile(step)
    data = [_complex(), _complex()]
    results = []
    for function in (step, compiled):
        z, w = (autojit.tensor(d.numpy(), requires_grad=True) for d in data)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", CompileWarning)
            loss = function(z, w)
        results.append((loss, z.grad, w.grad))
    _same(results[0], results[1])


def test_fullgraph_raises_at_the_complex_op():
    compiled = autojit.compile(lambda z: z * 2, fullgraph=True)
    with pytest.raises(Exception, match="mul on complex tensors"):
        compiled(_complex())


def test_an_op_refusing_complex_raises_its_error_inside_a_compiled_function():
    compiled = autojit.compile(lambda z: z.floor())
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        with pytest.raises(NotImplementedError, match="floor is not supported for complex"):
            compiled(_complex())


def test_real_functions_still_compile_without_a_break():
    compiled = autojit.compile(lambda x: (x * 2).exp().sum())
    x = autojit.tensor(rng.uniform(0, 1, 4))
    result, said = _run(compiled, x)
    assert said == []
    _same(result, (x * 2).exp().sum())
