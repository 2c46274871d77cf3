"""Results are laid out as torch lays them out, eagerly and compiled.

torch's elementwise kernels follow their operands' layout (`x.t() * 2` is transposed), its
reductions, softmax, layer_norm and cat allocate row-major results (cat keeps a memory format
all its inputs share), and contiguous() copies a tensor laid out otherwise. Strides are
observable: `out.view(-1)` is a view of one layout and an error of another, `out.reshape(-1)` a
view or a copy, so a write through it reaches `out` or not. Each function runs under torch,
eager autojit and compiled autojit, on a transposed or channels-last input; the strides, what
view(-1) does, and the values must agree.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

import autojit


def _transposed(lib, data):
    return lib.tensor(data).permute(2, 0, 1)  # (4, 2, 3) over row-major (2, 3, 4) storage


def _channels_last(lib, data):
    return lib.tensor(data).to(memory_format=lib.channels_last)


def _row_major(lib, data):
    return lib.tensor(data)


_T = _transposed
_CL = _channels_last
_R = _row_major

CASES = {
    "mul of a transposed matrix": (_T, lambda L, x: x[0].t() * 2),
    "add to a permuted tensor": (_T, lambda L, x: x + 1),
    "exp of a permuted tensor": (_T, lambda L, x: x.exp()),
    "add of a broadcast view": (_R, lambda L, x: x[:, :1].expand(2, 3, 4) + 1),
    "erfinv, an elementwise extern": (_T, lambda L, x: (x * 0.1).erfinv()),
    "contiguous": (_T, lambda L, x: x.contiguous()),
    "contiguous then transposed": (_T, lambda L, x: x[0].t().contiguous().t()),
    "contiguous then mul": (_T, lambda L, x: x[0].t().contiguous() * 2),
    "sum over the last dim": (_T, lambda L, x: x.sum(-1)),
    "mean over a dim, keepdim": (_T, lambda L, x: x.mean(1, keepdim=True)),
    "amax over the last dim": (_T, lambda L, x: x.amax(-1)),
    "var over the last dim": (_T, lambda L, x: x.var(-1)),
    "softmax": (_T, lambda L, x: x.softmax(-1)),
    "log_softmax": (_T, lambda L, x: x.log_softmax(0)),
    "layer_norm": (_T, lambda L, x: L.nn.functional.layer_norm(x, (3,))),
    "cat": (_T, lambda L, x: L.cat([x, x * 2], 0)),
    "stack": (_T, lambda L, x: L.stack([x, x], 1)),
    "channels-last cat": (_CL, lambda L, x: L.cat([x, x * 2], 1)),
    "channels-last cat with a contiguous one": (_CL, lambda L, x: L.cat([x, x.contiguous()],
                                                                       1)),
    "channels-last sum, keepdim": (_CL, lambda L, x: x.sum(1, keepdim=True)),
    "channels-last softmax": (_CL, lambda L, x: x.softmax(1)),
    "channels-last contiguous": (_CL, lambda L, x: x.contiguous()),
}


def _payload(make):
    shape = (2, 3, 4, 5) if make is _channels_last else (2, 3, 4)
    return np.random.default_rng(0).uniform(0.5, 2.0, shape).astype(np.float32)


def _observed(out):
    try:
        out.view(-1)
        viewable = True
    except RuntimeError:
        viewable = False
    return out.stride(), out.is_contiguous(), viewable


@pytest.mark.parametrize("name", list(CASES))
def test_results_are_laid_out_as_torch_lays_them_out(name):
    make, function = CASES[name]
    data = _payload(make)
    expected = function(torch, make(torch, data))
    eager = function(autojit, make(autojit, data))
    compiled = autojit.compile(lambda x: function(autojit, x))(make(autojit, data))
    assert _observed(eager) == _observed(expected), "eager"
    assert _observed(compiled) == _observed(expected), "compiled"
    for result in (eager, compiled):
        np.testing.assert_allclose(result.numpy(), expected.numpy(), rtol=1e-5, atol=1e-6)


def test_a_write_through_a_reshaped_result_reaches_it_as_in_torch():
    """reshape(-1) of a row-major result is a view: the write changes the result; of a
    transposed one a copy: it does not."""
    data = _payload(_transposed)
    for function in (lambda L, x: x.sum(-1), lambda L, x: x[0].t().contiguous(),
                     lambda L, x: x[0].t() * 1):
        def write(L, x, function=function):
            out = function(L, x)
            out.reshape(-1)[0] = 100.0
            return out

        expected = write(torch, _transposed(torch, data))
        compiled = autojit.compile(lambda x, write=write: write(autojit, x))
        for result in (write(autojit, _transposed(autojit, data)),
                       compiled(_transposed(autojit, data))):
            np.testing.assert_allclose(result.numpy(), expected.numpy(), rtol=1e-6)


@pytest.mark.parametrize("make", [_transposed, _channels_last])
def test_is_contiguous_and_stride_inside_a_compiled_function_are_eagers(make):
    """A compiled function that decides on its tensors' layout decides as eager does, and
    a new layout is a new trace (the decision is guarded)."""
    def function(L, x):
        y = x * 2
        if y.is_contiguous():
            return y + 1
        return y - 1, y.stride()

    data = _payload(make)
    compiled = autojit.compile(lambda x: function(autojit, x))
    for layout in (make, lambda lib, array: lib.tensor(array)):
        expected = function(torch, layout(torch, data))
        result = compiled(layout(autojit, data))
        if isinstance(expected, tuple):
            assert result[1] == expected[1]
            expected, result = expected[0], result[0]
        np.testing.assert_allclose(result.numpy(), expected.numpy(), rtol=1e-6)


def test_view_raises_torchs_error_where_eager_reshape_would_copy():
    data = _payload(_transposed)
    for function in (lambda x: x.view(-1), lambda x: (x * 2).view(24),
                     lambda x: x.view_as(x.reshape(-1))):
        with pytest.raises(RuntimeError, match="view size is not compatible") as expected:
            function(_transposed(torch, data))
        for run in (function, autojit.compile(function)):
            with pytest.raises(RuntimeError) as raised:
                run(_transposed(autojit, data))
            assert str(raised.value) == str(expected.value)
    # Where the strides allow, a view: writes through it reach the base.
    for lib in (torch, autojit):
        x = lib.tensor(data).permute(2, 0, 1)
        x.contiguous().view(-1)
        y = x.transpose(1, 2).transpose(1, 2) * 1
        y.view(4, 6)[0, 0] = 7.0
        assert float(y[0, 0, 0]) == 7.0
        assert x.reshape_as(lib.ones(24)).shape == (24,)
