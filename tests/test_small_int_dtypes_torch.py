"""The small integer dtypes (uint8, int8, int16) against torch (tests/torch_compare.py): type
promotion over every pair of dtypes, the dtypes' attributes and names, arithmetic that wraps,
comparisons, bitwise ops and reductions, casts, factories and their overflow errors, uint8
masks, NumPy and DLPack exchange, files of torch.save and safetensors, and compiled functions,
which must equal eager and torch.
"""

from __future__ import annotations

import io
import itertools
import warnings

import numpy as np
import pytest
from torch_compare import same_as_torch, torch

import autojit

SMALL = ("uint8", "int8", "int16")
ALL = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
       "float64")
RANGES = {"uint8": (0, 256), "int8": (-128, 128), "int16": (-2000, 2000)}
rng = np.random.default_rng(11)


def values(name: str, shape=(2, 5)) -> np.ndarray:
    low, high = RANGES[name]
    return rng.integers(low, high, shape).astype(name)


def _name(dtype) -> str:
    return str(dtype).split(".")[-1]


def test_promotion_of_every_pair_is_torchs():
    for first, second in itertools.product(ALL, ALL):
        mine, theirs = (getattr(autojit, first), getattr(autojit, second)), \
            (getattr(torch, first), getattr(torch, second))
        pair = (first, second)
        assert _name(autojit.promote_types(*mine)) == _name(torch.promote_types(*theirs)), pair
        assert autojit.can_cast(*mine) == torch.can_cast(*theirs), pair
        for first_dims, second_dims in ((1, 1), (1, 0), (0, 1), (0, 0)):
            ours = autojit.result_type(autojit.ones((2,) * first_dims, dtype=mine[0]),
                                       autojit.ones((2,) * second_dims, dtype=mine[1]))
            torchs = torch.result_type(torch.ones((2,) * first_dims, dtype=theirs[0]),
                                       torch.ones((2,) * second_dims, dtype=theirs[1]))
            assert _name(ours) == _name(torchs), (pair, first_dims, second_dims)
        for scalar in (True, 3, 300, -1, 2.5):
            assert _name(autojit.result_type(autojit.ones(2, dtype=mine[0]), scalar)) == \
                _name(torch.result_type(torch.ones(2, dtype=theirs[0]), scalar)), (first, scalar)


def test_dtype_attributes_names_and_constructors():
    for name in ("short", "char", "byte", "int8", "uint8", "int16"):
        assert hasattr(autojit, name) == hasattr(torch, name), name
    assert autojit.short is autojit.int16
    for name in SMALL:
        mine, theirs = getattr(autojit, name), getattr(torch, name)
        assert (mine.is_signed, mine.itemsize, mine.is_floating_point) == \
            (theirs.is_signed, theirs.itemsize, theirs.is_floating_point)
        info, torch_info = autojit.iinfo(mine), torch.iinfo(theirs)
        assert (info.min, info.max, info.bits) == (torch_info.min, torch_info.max,
                                                   torch_info.bits)
        assert repr(autojit.tensor([1, 2], dtype=mine)) == \
            repr(torch.tensor([1, 2], dtype=theirs)).replace("torch.", "autojit.")
        ours, torchs = autojit.ones(3, dtype=mine), torch.ones(3, dtype=theirs)
        assert (ours.element_size(), ours.itemsize, ours.nbytes, ours.is_signed()) == \
            (torchs.element_size(), torchs.itemsize, torchs.nbytes, torchs.is_signed())
    for kind, dtype in (("ByteTensor", "uint8"), ("CharTensor", "int8"), ("ShortTensor", "int16")):
        made, torch_made = getattr(autojit, kind)([1, 2]), getattr(torch, kind)([1, 2])
        assert _name(made.dtype) == _name(torch_made.dtype) == dtype
        assert made.type() == torch_made.type().replace("torch.", "autojit.")
        assert isinstance(made, getattr(autojit, kind))
        assert not isinstance(made.long(), getattr(autojit, kind))
        assert getattr(autojit.cuda, kind).dtype is made.dtype
    same_as_torch(lambda t, x: (x.byte(), x.char(), x.short(), x.to(t.uint8), x.type(t.int8)),
                  np.array([-3, 200, 70000, 1]))


def _arithmetic(t, x, y):
    return (x + y, x - y, x * y, x + 300, x - 1, 2 - x, x * -3, x // 7, x % 7, -x, x.abs(),
            x.sign(), x ** 2, t.maximum(x, y), x / 4, x.exp(), x < -2, x >= 100, x == y,
            t.where(x > y, x, y), x.float(), x + y.long(), x + 2.5, x * y.double())


def _reductions(t, x, y):
    return (x.sum(), x.sum(0), x.prod(1), x.amax(1), x.amin(), x.max(), x.argmax(),
            x.cumsum(1), x.any(), x.all(1), x.sort(1).values, x.float().mean(),
            t.count_nonzero(x), x.clamp(1, 100), x.flip(0), t.cat([x, y]), x.t(), x[:, 1:4])


def _bitwise(t, x, y):
    return (x & y, x | y, x ^ y, ~x, x << 2, x >> 1, x << (y % 20), x >> 300, 5 & x, x ^ True,
            t.bitwise_and(x, y), x.bitwise_right_shift(y.abs() % 9))


@pytest.mark.parametrize("name", SMALL)
def test_ops_wrap_promote_and_compare_as_torch(name):
    x, y = values(name), values(name)
    y[y == 0] = 1
    for function in (_arithmetic, _reductions, _bitwise):
        same_as_torch(function, x, y, grad=False, rtol=1e-6)
    mixed = values("uint8" if name != "uint8" else "int8")
    same_as_torch(lambda t, a, b: (a + b, a & b, a < b, t.maximum(a, b)), x, mixed, grad=False)
    for edge_case in (lambda t, a: a.mean(), lambda t, a: a.std(), lambda t, a: a.float() & 1,
                      lambda t, a: ~a.float(), lambda t, a: a.float() << 1,
                      lambda t, a: a.sum(dtype=t.uint8) // 0, lambda t, a: a.requires_grad_(),
                      lambda t, a: a ** -2, lambda t, a: a.clamp(max=40000),
                      lambda t, a: a.clamp(min=-1), lambda t, a: a.random_(0, 40000)):
        same_as_torch(edge_case, x, grad=False)


def test_casts_wrap_as_torch():
    floats = np.array([-1.5, 255.9, 300.7, -129.0, 70000.5, 3e9 + 77, -5761021770.0, 0.4])
    integers = np.array([-1, 255, 256, 40000, -129, 2 ** 40 + 7])
    for name in SMALL:
        same_as_torch(lambda t, a, b, name=name: (a.to(getattr(t, name)),
                                                  a.float().to(getattr(t, name)),
                                                  b.to(getattr(t, name))),
                      floats, integers, grad=False)


def test_factories_and_their_overflow_errors():
    same_as_torch(lambda t: (t.zeros(2, dtype=t.uint8), t.ones(3, dtype=t.int8),
                             t.full((2,), -3, dtype=t.int16), t.arange(250, 256, dtype=t.uint8),
                             t.tensor([True, 2], dtype=t.uint8),
                             t.tensor([[1.7, -2.2]], dtype=t.int8),
                             t.zeros(2, dtype=t.int16).fill_(-7), t.full((2,), -1, dtype=t.uint8),
                             t.zeros(2, dtype=t.uint8).fill_(-255),
                             t.tensor([-1, 3], dtype=t.uint8)), grad=False)
    for making in (lambda t: t.tensor([300], dtype=t.uint8),
                   lambda t: t.tensor([-1.0], dtype=t.uint8),
                   lambda t: t.tensor([2 ** 40], dtype=t.int32),
                   lambda t: t.full((2,), 128, dtype=t.int8),
                   lambda t: t.full((1,), 2 ** 40, dtype=t.int32),
                   lambda t: t.zeros(2, dtype=t.int16).fill_(40000),
                   lambda t: t.tensor([float("nan")], dtype=t.uint8),
                   lambda t: t.full((1,), -256, dtype=t.uint8),
                   lambda t: t.full((1,), -0.5, dtype=t.uint8)):
        same_as_torch(making, grad=False)


def test_uint8_masks_index_with_torchs_warning():
    data = np.arange(12.0).reshape(3, 4)
    mask = np.array([1, 0, 1], dtype=np.uint8)

    def indexed(t, x, m):
        picked = x[m]
        x[m] = t.ones(4, dtype=x.dtype)  # a number would go through masked_fill_, and raise
        return picked, x

    def filled(t, x, m):
        x[m] = -1.0

    for framework in (torch, autojit):
        with pytest.warns(UserWarning, match=r"indexing with dtype \w+\.uint8 is now deprecated"):
            framework.arange(3)[framework.tensor([1, 0, 1], dtype=framework.uint8)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        same_as_torch(indexed, data, mask, grad=False)
        same_as_torch(filled, data, mask, grad=False)
        same_as_torch(lambda t, x, m: x.masked_fill(m, 0.0), data, mask[:, None], grad=False)
        same_as_torch(lambda t, x, m: t.where(m, 1.0, x), data, mask[:, None], grad=False)
        same_as_torch(lambda t, x, m: t.where(m.char(), 1.0, x), data, mask[:, None], grad=False)
    same_as_torch(lambda t, x, i: x[i], data, np.array([0, 2], dtype=np.int16), grad=False)


def test_numpy_and_dlpack_share_memory():
    for name in SMALL:
        array = values(name)
        shared = autojit.from_numpy(array)
        assert shared.dtype is getattr(autojit, name) and shared.numpy().dtype == array.dtype
        array[0, 0] = 7
        assert shared[0, 0].item() == 7
        assert autojit.tensor(array).dtype is shared.dtype
        from_torch = autojit.from_dlpack(torch.from_numpy(array))
        to_torch = torch.from_dlpack(shared)
        array[0, 1] = 9
        assert from_torch.dtype is shared.dtype and from_torch[0, 1].item() == 9
        assert to_torch.dtype is getattr(torch, name) and to_torch[0, 1].item() == 9


def test_files_of_torch_and_safetensors_both_ways():
    saved = {name: torch.from_numpy(values(name)) for name in SMALL}
    buffer = io.BytesIO()
    torch.save(saved, buffer)
    buffer.seek(0)
    loaded = autojit.load(buffer)
    for name, theirs in saved.items():
        assert loaded[name].dtype is getattr(autojit, name)
        np.testing.assert_array_equal(loaded[name].numpy(), theirs.numpy())
    buffer = io.BytesIO()
    autojit.save(loaded, buffer)
    buffer.seek(0)
    for name, theirs in torch.load(buffer, weights_only=True).items():
        assert theirs.dtype is getattr(torch, name) and torch.equal(theirs, saved[name])
    safetensors_torch = pytest.importorskip("safetensors.torch")
    from autojit.utils import safetensors

    back = safetensors.load(safetensors_torch.save(saved))
    assert {name: back[name].dtype for name in SMALL} == {name: getattr(autojit, name)
                                                           for name in SMALL}
    for name, theirs in safetensors_torch.load(safetensors.save(back)).items():
        assert torch.equal(theirs, saved[name])


def _program(t, x, y, scale):
    mixed = (x * 3 - y) // 5 + (x % 7)
    return (mixed, x < y, (x >> 2) ^ y, ~x, x.amax(1), x.sum(0), t.maximum(x, y),
            (scale * 1000).to(x.dtype), (scale * 3e9).to(x.dtype), x.float() / 3, x + 300,
            x - 1, x.abs(), x.sign(), x ** (y % 4), x.to(t.int64) * 2, (x > 0) & (y < 5))


@pytest.mark.parametrize("name", SMALL)
def test_compiled_functions_equal_eager_and_torch(name):
    x, y, scale = values(name, (4, 6)), values(name, (4, 6)), rng.standard_normal((4, 6))
    eager = same_as_torch(_program, x, y, scale, grad=False)
    compiled = autojit.compile(lambda *tensors: _program(autojit, *tensors))
    with warnings.catch_warnings():
        warnings.simplefilter("error", autojit.CompileWarning)  # no graph break, no fallback
        results = compiled(*(autojit.tensor(a) for a in (x, y, scale)))
    # The kernels divide in the small dtype itself (uint8 unsigned): no op ran through NumPy.
    division = {"uint8": "udiv i8", "int8": "sdiv i8", "int16": "sdiv i16"}[name]
    assert division in compiled.kernel_source()
    for ours, theirs in zip(results, eager, strict=True):
        assert ours.dtype is theirs.dtype
        np.testing.assert_array_equal(ours.numpy(), theirs.numpy())
    for failing in (lambda a: a // autojit.zeros_like(a), lambda a: a % autojit.zeros_like(a)):
        with pytest.raises(RuntimeError, match="ZeroDivisionError"):
            autojit.compile(failing)(autojit.tensor(x))
