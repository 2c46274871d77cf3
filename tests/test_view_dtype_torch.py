"""Tensor.view(dtype) against torch: the bits, shapes and strides of every pair of dtypes of
the same and of other element sizes, torch's errors in torch's order, the shared memory and
version counter, no autograd history, and the graph break a compiled function takes
(ops/layout/dtype_views.py)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")

DTYPES = ("uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64",
          "complex64", "complex128")


def _pair(array: np.ndarray):
    return autojit.tensor(array), torch.tensor(array)


def _same(mine, theirs) -> None:
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    assert tuple(mine.shape) == tuple(theirs.shape)
    assert tuple(mine.stride()) == tuple(theirs.stride())
    assert mine.numpy().tobytes() == theirs.numpy().tobytes()


@pytest.mark.parametrize("source,target", list(itertools.product(DTYPES, DTYPES)))
def test_bits_shapes_and_strides_match_torch(source, target):
    rng = np.random.default_rng(0)
    raw = rng.integers(0, 256, size=4 * 16 * 16, dtype=np.uint8)
    array = raw.view(np.dtype(source))[:4 * 16].reshape(4, 16).copy()
    mine, theirs = _pair(array)
    _same(mine.view(getattr(autojit, target)), theirs.view(getattr(torch, target)))
    # A transposed (same element size only) and a sliced (rows) tensor.
    if np.dtype(source).itemsize == np.dtype(target).itemsize:
        _same(mine.t().view(getattr(autojit, target)), theirs.t().view(getattr(torch, target)))
    _same(mine[1:3].view(getattr(autojit, target)), theirs[1:3].view(getattr(torch, target)))


def test_bool_and_a_zero_dim_tensor_match_torch():
    mine, theirs = _pair(np.array([True, False, True]))
    _same(mine.view(autojit.uint8), theirs.view(torch.uint8))
    mine, theirs = _pair(np.array([0, 1, 1], np.uint8))
    _same(mine.view(autojit.bool), theirs.view(torch.bool))
    mine, theirs = _pair(np.array(1.5, np.float32))
    _same(mine.view(autojit.int32), theirs.view(torch.int32))
    _same(mine.view(dtype=autojit.int32), theirs.view(dtype=torch.int32))


def _errors(make):
    found = []
    for lib in (autojit, torch):
        try:
            make(lib)
        except Exception as error:  # noqa: BLE001 - compared below
            found.append((type(error), str(error)))
        else:
            found.append(None)
    return found


@pytest.mark.parametrize("case", [
    lambda L: L.tensor(1.5).view(L.float16),                       # 0-d, other size
    lambda L: L.zeros(3, 4).t().view(L.float16),                   # smaller, stride(-1) != 1
    lambda L: L.zeros(2, 3).view(L.float64),                       # larger, size(-1)
    lambda L: L.zeros(4, 4).t().view(L.float64),                   # larger, stride(-1)
    lambda L: L.zeros(6, dtype=L.float16)[1:5].view(L.float32),    # storage offset
    lambda L: L.zeros(2, 5, dtype=L.float16)[:, 1:].view(L.float32),  # offset before strides
    lambda L: L.zeros(2, 5, dtype=L.float16)[:, 2:4].view(L.float32),  # stride(0)
])
def test_errors_match_torch(case):
    mine, theirs = _errors(case)
    assert theirs is not None
    assert mine == theirs


def test_memory_and_version_are_shared_as_in_torch():
    results = []
    for lib in (autojit, torch):
        x = lib.arange(4, dtype=lib.float32)
        y = x.view(lib.int32)
        y[0] = 1065353216  # the bits of 1.0
        x.add_(1)
        results.append((x.tolist(), y.tolist(), x._version, y._version))
    assert results[0] == results[1]


def test_no_autograd_history_as_in_torch():
    for lib in (autojit, torch):
        leaf = lib.zeros(3, requires_grad=True)
        viewed = leaf.view(lib.int32)
        assert not viewed.requires_grad and viewed.grad_fn is None
        assert viewed._base is None
        viewed.add_(1)  # torch lets the write through: the leaf's bits change
        assert leaf.detach().numpy().view(np.int32).tolist() == [1, 1, 1]


def test_bfloat16_and_complex32_say_why_not():
    for dtype in (autojit.bfloat16, autojit.complex32):
        with pytest.raises(NotImplementedError, match="stores"):
            autojit.zeros(4).view(dtype)
    with pytest.raises(NotImplementedError, match="bfloat16"):
        autojit.zeros(4, dtype=autojit.bfloat16).view(autojit.float16)
    same = autojit.zeros(4, dtype=autojit.bfloat16)
    assert same.view(autojit.bfloat16).dtype is autojit.bfloat16  # the same dtype: a view


@pytest.mark.parametrize("bits", ["uint8", "int8", "int16", "uint16"])
def test_bfloat16_against_bytes_is_torchs_values_as_a_copy(bits):
    """A checkpoint's bytes read as bfloat16 (safetensors' loader) and back: torch's values,
    shapes and bits, made as a copy with a warning (bfloat16 is held as float32)."""
    values = [[1.0, -2.5, 3.140625, 0.0], [65504.0, -1e-3, float("inf"), 7.0]]
    source = torch.tensor(values, dtype=torch.bfloat16)
    mine = autojit.tensor(values, dtype=autojit.bfloat16)
    expected_bits = source.view(getattr(torch, bits))
    autojit.set_warn_always(True)  # the warning is given once a process
    try:
        with pytest.warns(UserWarning, match="is a copy in autojit"):
            found_bits = mine.view(getattr(autojit, bits))
    finally:
        autojit.set_warn_always(False)
    assert found_bits.shape == tuple(expected_bits.shape)
    assert found_bits.tolist() == expected_bits.tolist()
    back = autojit.tensor(expected_bits.numpy()).view(autojit.bfloat16)
    assert back.dtype is autojit.bfloat16 and back.tolist() == source.float().tolist()
    back.add_(1)  # a copy: the bytes it came from are left as they were
    assert found_bits.tolist() == expected_bits.tolist()


def test_a_compiled_function_breaks_its_graph_and_equals_eager():
    def bits(x):
        return (x * 2).view(autojit.int32) + 1

    x = autojit.randn(8)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        compiled = autojit.compile(bits)(x)
    assert any("view(dtype)" in str(w.message) for w in caught)
    assert compiled.tolist() == bits(x).tolist()
