"""Accumulating index_put along the first dim (ops/indexing/row_accumulation.py): the same bits as
np.add.at, eagerly and compiled, and the embedding gradient against torch."""

from __future__ import annotations

import numpy as np
import pytest
from torch_compare import torch

import autojit
from autojit.ops.indexing import INDEX_PUT, row_accumulation

rng = np.random.default_rng(11)


def _values(shape, dtype):
    values = rng.standard_normal(shape) * 100
    if np.dtype(dtype).kind == "c":
        values = values + 1j * rng.standard_normal(shape)
    values = values.astype(dtype)
    if np.dtype(dtype).kind in "fc":
        values.reshape(-1)[::7] = -0.0  # the sign of a zero sum must survive too
    return values


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.complex64, np.int64,
                                   np.int8])
@pytest.mark.parametrize("spread", ["uniform", "skewed", "one row"])
@pytest.mark.parametrize("native", [False, True])
def test_rounds_give_np_add_at_bits(dtype, spread, native, monkeypatch):
    # Rounds for sizes that would take np.add.at (a small one costs less so): their bits too;
    # and the native loop where codegen has one for the dtype (float32, float64, int64).
    monkeypatch.setattr(row_accumulation, "_MIN_ELEMENTS", 0)
    if not native:
        monkeypatch.setattr(row_accumulation, "NATIVE", None)
    elif row_accumulation.NATIVE is None:
        pytest.skip("no native loop on this host")
    else:
        monkeypatch.setattr(row_accumulation, "_NATIVE_ELEMENTS", 0)
    for _ in range(6):
        rows = int(rng.integers(1, 70))
        count = int(rng.integers(1, 1500))
        shape = (rows, *rng.integers(1, 24, int(rng.integers(1, 3))).tolist())
        if spread == "uniform":
            index = rng.integers(0, rows, count)
        elif spread == "skewed":
            index = np.minimum(rng.geometric(0.2, count) - 1, rows - 1)
        else:
            index = np.full(count, rows - 1)
        out, values = _values(shape, dtype), _values((count, *shape[1:]), dtype)
        expected = out.copy()
        np.add.at(expected, index, values)
        got = row_accumulation.add_rows(out.copy(), index, values)
        assert got.tobytes() == expected.tobytes()


class _NumpyWithoutAddAt:
    """numpy, but np.add.at raises: shows that the rounds ran."""

    class add:  # noqa: N801
        @staticmethod
        def at(*args):
            raise AssertionError("np.add.at ran")

    def __getattr__(self, name):
        return getattr(np, name)


def test_rounds_are_taken_for_an_embedding_gradient(monkeypatch):
    # 1024 rows of 128 into 65: the case the rounds are for.
    out = np.zeros((65, 128), np.float32)
    index = rng.integers(0, 65, 1024)
    values = _values((1024, 128), np.float32)
    expected = out.copy()
    np.add.at(expected, index, values)
    monkeypatch.setattr(row_accumulation, "np", _NumpyWithoutAddAt())
    monkeypatch.setattr(row_accumulation, "NATIVE", None)  # the rounds, not the native loop
    assert row_accumulation.add_rows(out, index, values).tobytes() == expected.tobytes()
    assert not row_accumulation.worth_rounds(100000, 1, 200)
    assert not row_accumulation.worth_rounds(1024, 128, 1024)
    # A batch of 16 tokens' rows of 32: sorting into rounds costs more than np.add.at.
    assert not row_accumulation.worth_rounds(16, 32, 1)
    assert row_accumulation.worth_rounds(256, 128, 2)


def test_index_put_impl_with_negative_and_broadcast_indices_gives_np_add_at_bits():
    x = _values((9, 5, 17), np.float32)
    before = x.copy()
    index = rng.integers(-9, 9, (2, 40))
    values = _values((40, 5, 17), np.float32)  # broadcast over the index's first dim
    expected = x.copy()
    np.add.at(expected, (index,), values)
    got = INDEX_PUT.impl(x, values, index[None], dims=(0,), accumulate=True)
    assert got.tobytes() == expected.tobytes()
    assert x.tobytes() == before.tobytes()


def test_embedding_gradient_like_torch_eager_and_compiled():
    weight = rng.standard_normal((65, 128)).astype(np.float32)
    ids = rng.integers(0, 65, (16, 64))
    upstream = rng.standard_normal((16, 64, 128)).astype(np.float32)

    def gradient(module):
        table = module.tensor(weight, requires_grad=True)
        module.nn.functional.embedding(module.tensor(ids), table).mul(
            module.tensor(upstream)).sum().backward()
        return table.grad

    eager = gradient(autojit)
    np.testing.assert_allclose(eager.numpy(), gradient(torch).numpy(), rtol=1e-5, atol=1e-5)

    @autojit.compile
    def step(table, ids, upstream):
        return autojit.autograd.grad(
            (autojit.nn.functional.embedding(ids, table) * upstream).sum(), table)[0]

    table = autojit.tensor(weight, requires_grad=True)
    compiled = step(table, autojit.tensor(ids), autojit.tensor(upstream))
    assert compiled.numpy().tobytes() == eager.numpy().tobytes()


def test_an_index_below_minus_the_rows_is_an_error_not_a_wrapped_row():
    x = np.zeros((5, 16), np.float32)
    with pytest.raises(IndexError):
        INDEX_PUT.impl(x, np.ones((3, 16), np.float32), np.array([[1, -7, 2]]), dims=(0,),
                       accumulate=True)
    with pytest.raises(IndexError):
        INDEX_PUT.impl(x, np.ones((3, 16), np.float32), np.array([[1, 5, 2]]), dims=(0,),
                       accumulate=True)


def test_the_native_loop_runs_for_its_dtypes_and_layouts(monkeypatch):
    if row_accumulation.NATIVE is None:
        pytest.skip("no native loop on this host")
    monkeypatch.setattr(row_accumulation, "np", _NumpyWithoutAddAt())  # np.add.at never runs
    for dtype in (np.float32, np.float64, np.int32, np.int64):
        out = _values((7, 3, 5), dtype)
        index = rng.integers(0, 7, 100)
        values = _values((100, 3, 5), dtype)[:, :, ::-1]  # a strided operand is copied first
        expected = out.copy()
        np.add.at(expected, index, values)
        assert row_accumulation.add_rows(out, index.astype(np.int32), values).tobytes() == \
            expected.tobytes()
    # another dtype or a strided target: False, and the caller's own ways run
    assert not row_accumulation.NATIVE(np.zeros((3, 4), np.float16), np.array([0]),
                                       np.ones((1, 4), np.float16))
    assert not row_accumulation.NATIVE(np.zeros((3, 8), np.float32)[:, ::2], np.array([0]),
                                       np.ones((1, 4), np.float32))
