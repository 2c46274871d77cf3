"""hash_tensor against torch 2.13, bit for bit: every float16 bit pattern, random bit patterns of
float32, float64 and bfloat16 (NaN payloads included), the integer dtypes and bool; its dim and
keepdim forms, empty inputs and torch's errors; no gradient; out=; the method; compiled calls.
"""

from __future__ import annotations

import numpy as np
import pytest
from torch_compare import torch

import autojit

rng = np.random.default_rng(5)


def _both(array: np.ndarray, dtype: str | None = None):
    """(autojit tensor, torch tensor) holding `array`'s bits (in `dtype` where given)."""
    mine = autojit.tensor(array)
    theirs = torch.from_numpy(array.copy())
    if dtype is not None:
        mine, theirs = mine.to(getattr(autojit, dtype)), theirs.to(getattr(torch, dtype))
    return mine, theirs


def _check(mine, theirs, *args, **kwargs):
    ours, torchs = autojit.hash_tensor(mine, *args, **kwargs), torch.hash_tensor(theirs, *args,
                                                                                 **kwargs)
    assert ours.dtype is autojit.uint64 and torchs.dtype is torch.uint64
    assert tuple(ours.shape) == tuple(torchs.shape), (args, kwargs)
    assert ours.tolist() == torchs.tolist(), (args, kwargs)


def _per_element(mine, theirs):
    """Each element hashed alone (the hash of one element is its upcast bits): dim over a
    trailing unit dim."""
    _check(mine.reshape(-1, 1), theirs.reshape(-1, 1), 1)


def test_every_float16_bit_pattern():
    bits = np.arange(2 ** 16, dtype=np.uint16)
    _per_element(*_both(bits.view(np.float16)))
    _check(*_both(bits.view(np.float16)))


@pytest.mark.parametrize(("float_type", "unsigned"), [(np.float32, np.uint32),
                                                      (np.float64, np.uint64)])
def test_random_float_bit_patterns(float_type, unsigned):
    width = 8 * np.dtype(unsigned).itemsize
    bits = rng.integers(0, 2 ** width, 100_000, dtype=np.uint64, endpoint=False).astype(unsigned)
    special = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, -np.nan, 1e-45, 5e-324],
                       dtype=np.float64).astype(float_type)
    values = np.concatenate([bits.view(float_type), special])
    _per_element(*_both(values))
    _check(*_both(values))
    _check(*_both(values[:100_000].reshape(100, -1)[:, :900]), 0)


def test_bfloat16_upcasts_exactly():
    """bfloat16 (float32 storage here) upcasts exactly; NaN is compared apart: autojit's
    bfloat16 NaN is the one quiet NaN its rounding makes, torch's conversion may keep others."""
    bits = np.arange(2 ** 16, dtype=np.uint32) << 16
    values = bits.view(np.float32)
    values = values[~np.isnan(values)]
    _per_element(*_both(values, "bfloat16"))
    _check(*_both(values, "bfloat16"))


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64"])
def test_integers_upcast_to_int64(dtype):
    info = np.iinfo(dtype) if dtype != "bool" else None
    values = rng.random(5000) < 0.5 if info is None else \
        rng.integers(info.min, info.max, 5000, endpoint=True, dtype=dtype)
    _per_element(*_both(values))
    _check(*_both(values))
    _check(*_both(values.reshape(50, 100)), 1, keepdim=True)


@pytest.mark.parametrize("keywords", [{}, {"dim": 0, "keepdim": True}, {"dim": -1},
                                      {"dim": (0, 2)}, {"dim": [1, -1], "keepdim": True},
                                      {"dim": ()}, {"dim": None}, {"keepdim": True},
                                      {"dim": (0, 1, 2)}])
def test_dim_and_keepdim_forms(keywords):
    values = rng.standard_normal((3, 4, 5)).astype(np.float32)
    _check(*_both(values), **keywords)
    mine, theirs = _both(values)
    _check(mine.transpose(0, 2), theirs.transpose(0, 2), **keywords)  # strided
    _check(*_both(np.asarray(np.float32(2.5))), **{key: value for key, value in
                                                   keywords.items() if key == "keepdim"})


def _outcome(function):
    try:
        result = function()
    except Exception as error:  # noqa: BLE001 - the outcome compared
        return type(error).__name__, str(error)
    return "returns", (tuple(result.shape), result.tolist())


@pytest.mark.parametrize("call", [
    "t.hash_tensor(t.zeros(0))", "t.hash_tensor(t.zeros(0, 3), 0)",
    "t.hash_tensor(t.zeros(0, 3), 1)", "t.hash_tensor(t.zeros(2, 0), 1, keepdim=True)",
    "t.hash_tensor(t.zeros(0, 3), (0, 1))", "t.hash_tensor(t.tensor(2.5), 0)",
    "t.hash_tensor(t.tensor(2.5), 1)", "t.hash_tensor(t.ones(2, 3), 2)",
    "t.hash_tensor(t.ones(2, 3), (0, 0))", "t.hash_tensor(t.ones(2, 3), (1, -1))",
    "t.hash_tensor(t.ones(2), mode=1)", "t.hash_tensor([1.0])", "t.hash_tensor(t.ones(2), 0.5)",
    "t.hash_tensor(t.tensor([1 + 2j]))", "t.hash_tensor(t.tensor([1j], dtype=t.complex128))",
    "t.hash_tensor(t.tensor([1], dtype=t.uint64))", "t.hash_tensor(t.tensor([1], dtype=t.uint16))",
    "t.hash_tensor(t.ones(2), out=t.empty((), dtype=t.int64))",
    "t.hash_tensor(t.ones(2), out=t.empty((), dtype=t.uint64))",
    "t.hash_tensor(input=t.ones(2), dim=0)", "t.ones(3).hash_tensor()",
    "t.tensor([[1, 2], [3, 4]]).hash_tensor(1)",
])
def test_forms_and_errors_are_torchs(call):
    assert _outcome(lambda: eval(call, {"t": autojit})) == \
        _outcome(lambda: eval(call, {"t": torch}))  # noqa: S307 - the test's own calls


def test_no_gradient():
    for library in (autojit, torch):
        x = library.tensor([1.5, -2.0], requires_grad=True)
        hashed = library.hash_tensor(x * 2)
        assert not hashed.requires_grad and hashed.grad_fn is None
    with autojit.enable_grad():
        x = autojit.tensor([1.5, -2.0], requires_grad=True)
        with pytest.raises(RuntimeError, match="does not require grad"):
            autojit.hash_tensor(x).sum().backward()


def test_compiled_calls_equal_eager_and_torch():
    values = rng.standard_normal((4, 6)).astype(np.float32)
    values[0, 0] = np.nan

    def hashes(t, x):
        return t.hash_tensor(x), t.hash_tensor(x * 2, 1), t.hash_tensor(x.double(), (0,),
                                                                           keepdim=True)

    compiled = autojit.compile(lambda x: hashes(autojit, x), fullgraph=True)
    mine = compiled(autojit.tensor(values))
    again = compiled(autojit.tensor(values + 1))
    theirs = hashes(torch, torch.from_numpy(values.copy()))
    shifted = hashes(torch, torch.from_numpy(values + 1))
    for ours, torchs in zip(mine + again, theirs + shifted, strict=True):
        assert ours.dtype is autojit.uint64 and ours.tolist() == torchs.tolist()
