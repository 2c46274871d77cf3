"""uint16, uint32 and uint64 against torch 2.13, which supports them in part on the CPU: the
cases of tests/unsigned_cases.py (every kind of op, factory and conversion: values, dtypes and
shapes, or the error's type and message), type promotion over every pair of dtypes, the dtypes'
attributes, casts both ways, printing, files of autojit.save and torch.save, NumPy and DLPack
exchange, compiled functions (equal to eager, or torch's error), and the registry's list of the
primitives that compute in these dtypes.
"""

from __future__ import annotations

import io
import itertools
import warnings

import numpy as np
import pytest
from torch_compare import dtype_name, leaves, outcome, torch
from unsigned_cases import CREATION, OPS, RANDOM

import autojit
from autojit.ops import REGISTRY
from autojit.tensor import dtypes

UNSIGNED = ("uint16", "uint32", "uint64")
ALL = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
       "float64", "complex64", "complex128", "uint16", "uint32", "uint64")
LARGEST = {"uint16": 2 ** 16 - 1, "uint32": 2 ** 32 - 1, "uint64": 2 ** 64 - 1}


def _outcome(library, expression: str, dtype: str):
    """("returns", result) or ("raises", type name, first line of the message)."""
    largest = LARGEST[dtype]
    a = library.from_numpy(np.array([[1, 2, 3], [largest, 0, 5]], dtype=dtype))
    b = library.from_numpy(np.array([[3, 2, 1], [1, 0, 5]], dtype=dtype))
    names = {"t": library, "a": a, "b": b, "D": getattr(library, dtype), "dt": dtype,
             "big": largest, "np": np}
    return outcome(expression, names)


def _same_value(mine, theirs, where: str, values: bool) -> None:
    if isinstance(theirs, torch.Tensor):
        assert isinstance(mine, autojit.Tensor), f"{where}: {type(mine).__name__}, not Tensor"
        assert (dtype_name(mine.dtype), tuple(mine.shape)) == (dtype_name(theirs.dtype),
                                                           tuple(theirs.shape)), where
        if not values:
            return
        ours, torchs = mine.detach(), theirs.detach()
        if theirs.dtype == torch.bfloat16:
            ours, torchs = ours.float(), torchs.float()
        ours, torchs = ours.numpy(), torchs.numpy()
        if torchs.dtype.kind in "fc":  # the cases' floats are exact but for a few roundings
            np.testing.assert_allclose(ours, torchs, rtol=1e-6, equal_nan=True, err_msg=where)
        else:  # integers and bools exactly, 2**64 - 1 included
            assert ours.tolist() == torchs.tolist(), where
    elif isinstance(theirs, (torch.dtype, torch.Size)):
        assert dtype_name(mine) == dtype_name(theirs) if isinstance(theirs, torch.dtype) else \
            tuple(mine) == tuple(theirs), where
    elif isinstance(theirs, str):
        assert mine.replace("autojit", "torch") == theirs, where
    else:
        assert type(mine) is type(theirs) and mine == theirs, (where, mine, theirs)


def check_case(expression: str, dtype: str, values: bool = True) -> None:
    theirs, mine = _outcome(torch, expression, dtype), _outcome(autojit, expression, dtype)
    if theirs[0] == "raises":
        assert mine[0] == "raises", f"torch raised {theirs[1:]}, autojit returned {mine[1]!r}"
        assert mine[1:] == theirs[1:], (mine[1:], theirs[1:])
        return
    assert mine[0] == "returns", f"autojit raised {mine[1:]}, torch returned"
    ours, torchs = leaves(mine[1]), leaves(theirs[1])
    assert len(ours) == len(torchs), (len(ours), len(torchs))
    for index, (a, b) in enumerate(zip(ours, torchs, strict=True)):
        _same_value(a, b, f"{expression} [{dtype}] result {index}", values)


@pytest.mark.parametrize(("name", "dtype"), list(itertools.product(OPS, UNSIGNED)))
def test_op_is_torchs(name, dtype):
    check_case(OPS[name], dtype, values=name not in RANDOM)


@pytest.mark.parametrize(("name", "dtype"), list(itertools.product(CREATION, UNSIGNED)))
def test_factory_and_conversion_are_torchs(name, dtype):
    check_case(CREATION[name], dtype, values=name not in RANDOM)


# ---- type promotion ---------------------------------------------------------------------------

def _promotion(library, first: str, second: str):
    try:
        return dtype_name(library.promote_types(getattr(library, first), getattr(library, second)))
    except RuntimeError as error:
        return str(error)


def test_promotion_of_every_pair_is_torchs():
    """uint16, uint32 and uint64 promote with the floating dtypes only: every other pair is
    torch's RuntimeError, naming both ScalarTypes."""
    for first, second in itertools.product(ALL, ALL):
        if "uint16" not in (first, second) and "uint32" not in (first, second) and \
                "uint64" not in (first, second):
            continue
        assert _promotion(autojit, first, second) == _promotion(torch, first, second), (
            first, second)
    assert _promotion(autojit, "uint64", "int64") == (
        "Promotion for uint16, uint32, uint64 types is not supported, attempted to promote "
        "UInt64 and Long")


def test_result_type_of_tensors_numbers_and_zero_dim_tensors_is_torchs():
    """A dimensioned uint64 tensor keeps its dtype with a 0-d integer tensor or a Python int
    (the category decides), takes a float one's, and refuses a dimensioned integer."""
    others = ("bool", "uint8", "int64", "float16", "float32", "complex64", "uint16", "uint64")
    for dtype, other in itertools.product(UNSIGNED, others):
        for dims in ((1, 1), (1, 0), (0, 1), (0, 0)):
            outcomes = []
            for library in (torch, autojit):
                x = library.ones((2,) * dims[0], dtype=getattr(library, dtype))
                y = library.ones((2,) * dims[1], dtype=getattr(library, other))
                try:
                    outcomes.append(dtype_name(library.result_type(x, y)))
                except RuntimeError as error:
                    outcomes.append(str(error))
            assert outcomes[0] == outcomes[1], (dtype, other, dims)
        for number in (True, 3, -1, 2.5, 1j):
            assert dtype_name(autojit.result_type(autojit.ones(2, dtype=getattr(autojit, dtype)),
                                             number)) == \
                dtype_name(torch.result_type(torch.ones(2, dtype=getattr(torch, dtype)), number))


# ---- attributes, casts, printing --------------------------------------------------------------

def test_dtype_attributes_and_limits_are_torchs():
    for dtype in UNSIGNED:
        mine, theirs = getattr(autojit, dtype), getattr(torch, dtype)
        assert (mine.is_signed, mine.itemsize, mine.is_floating_point, mine.is_complex) == \
            (theirs.is_signed, theirs.itemsize, theirs.is_floating_point, theirs.is_complex)
        assert repr(mine) == repr(theirs).replace("torch", "autojit")
        info, torch_info = autojit.iinfo(mine), torch.iinfo(theirs)
        assert (info.min, info.max, info.bits, info.dtype) == (
            torch_info.min, torch_info.max, torch_info.bits, torch_info.dtype)
        assert repr(info) == repr(torch_info)
        assert mine is autojit.tensor(np.zeros(1, dtype)).dtype  # NumPy's dtype, no widening
        assert isinstance(mine, dtypes.DType) and mine in dtypes.UNSIGNED and mine.limited
    assert autojit.iinfo(autojit.uint64).max == 2 ** 64 - 1


@pytest.mark.parametrize("dtype", UNSIGNED)
def test_casts_both_ways_are_torchs_bit_for_bit(dtype):
    """Every dtype to the unsigned one and back, exactly: ints wrapped as two's complement
    wraps them, floats (small enough for float16 and bfloat16: a float beyond the dtype's range
    is C++'s undefined behaviour, host-dependent in torch) truncated toward zero, complex
    numbers by their real parts."""
    rng = np.random.default_rng(3)
    largest = LARGEST[dtype]
    unsigned = rng.integers(0, largest, 300, dtype=np.uint64, endpoint=True).astype(dtype)
    unsigned[:3] = [0, 1, largest]
    for source in ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
                   "float32", "float64", "complex64", "complex128", *UNSIGNED):
        values = unsigned % 2048 if source.startswith(("float", "bfloat", "complex")) else \
            unsigned
        mine_source = autojit.tensor(values).to(getattr(autojit, source))
        torch_source = torch.from_numpy(values.copy()).to(getattr(torch, source))
        assert dtype_name(mine_source.dtype) == dtype_name(torch_source.dtype) == source
        mine = mine_source.to(getattr(autojit, dtype))
        theirs = torch_source.to(getattr(torch, dtype))
        assert mine.tolist() == theirs.tolist(), (source, dtype)
        back = autojit.tensor(unsigned).to(getattr(autojit, source))
        torch_back = torch.from_numpy(unsigned.copy()).to(getattr(torch, source))
        if source == "bfloat16":
            back, torch_back = back.float(), torch_back.float()
        assert back.tolist() == torch_back.tolist(), (dtype, source)
    floats = rng.uniform(0, min(largest, 2 ** 53) * 0.99, 300)
    assert autojit.tensor(floats).to(getattr(autojit, dtype)).tolist() == \
        torch.from_numpy(floats).to(getattr(torch, dtype)).tolist()


def test_printing_is_torchs():
    cases = [lambda t: t.tensor([1, 2], dtype=t.uint64),
             lambda t: t.tensor([[0, 2 ** 64 - 1], [7, 12]], dtype=t.uint64),
             lambda t: t.tensor(2 ** 32 - 1, dtype=t.uint32),
             lambda t: t.zeros(0, 2, dtype=t.uint16),
             lambda t: t.arange(2000).to(t.uint32) * 3,
             lambda t: t.ones(2, 3, dtype=t.uint16)[:, 1:]]
    for make in cases:
        assert repr(make(autojit)) == repr(make(torch)).replace("torch.", "autojit."), \
            repr(make(autojit))
        assert str(make(autojit)) == str(make(torch)).replace("torch.", "autojit.")


# ---- files and exchange -----------------------------------------------------------------------

def test_save_and_load_keep_dtypes_values_and_views():
    base = autojit.tensor([[1, 2 ** 64 - 1, 3], [4, 5, 6]], dtype=autojit.uint64)
    saved = {"base": base, "column": base[:, 1], "t": base.t(),
             "u16": autojit.tensor([0, 65535], dtype=autojit.uint16),
             "u32": autojit.tensor([[2 ** 32 - 1]], dtype=autojit.uint32)}
    for form in ({}, {"format": "npz"}):
        written = io.BytesIO()
        autojit.save(saved, written, **form)
        written.seek(0)
        loaded = autojit.load(written)
        for name, tensor in saved.items():
            assert loaded[name].dtype is tensor.dtype, (form, name)
            assert loaded[name].tolist() == tensor.tolist(), (form, name)
        if not form:  # torch's format keeps the views of one storage
            loaded["base"][0, 1] = 9
            assert loaded["column"].tolist() == [9, 5]
    written = io.BytesIO()
    autojit.save(saved, written)
    written.seek(0)
    read = torch.load(written)  # weights_only: the untyped storages torch writes for them
    for name, tensor in saved.items():
        assert dtype_name(read[name].dtype) == dtype_name(tensor.dtype)
        assert read[name].tolist() == tensor.tolist()
    written = io.BytesIO()
    torch.save({"x": torch.tensor([[5, 2 ** 64 - 1]], dtype=torch.uint64).t()}, written)
    written.seek(0)
    x = autojit.load(written)["x"]
    assert x.dtype is autojit.uint64 and x.tolist() == [[5], [2 ** 64 - 1]]


def test_numpy_and_dlpack_share_the_memory():
    array = np.array([1, 2 ** 64 - 1], dtype=np.uint64)
    for shared in (autojit.from_numpy(array), autojit.as_tensor(array),
                   autojit.from_dlpack(array)):
        array[0] = 7
        assert shared.dtype is autojit.uint64 and shared.tolist() == [7, 2 ** 64 - 1]
        array[0] = 1
    x = autojit.tensor([3, 4], dtype=autojit.uint32)
    assert x.numpy().dtype == np.uint32 and np.from_dlpack(x).tolist() == [3, 4]
    shared = torch.from_dlpack(x)
    shared[0] = 9
    assert shared.dtype is torch.uint32 and x.tolist() == [9, 4]
    assert autojit.from_dlpack(torch.tensor([5], dtype=torch.uint16)).dtype is autojit.uint16


def test_tensors_of_them_cannot_require_grad():
    for dtype in UNSIGNED:
        for make in (lambda t, d=dtype: t.zeros(2, dtype=getattr(t, d), requires_grad=True),
                     lambda t, d=dtype: t.zeros(2, dtype=getattr(t, d)).requires_grad_()):
            with pytest.raises(RuntimeError) as mine:
                make(autojit)
            with pytest.raises(RuntimeError) as theirs:
                make(torch)
            assert str(mine.value) == str(theirs.value)


# ---- compiled functions -----------------------------------------------------------------------

def _program(t, a, b):
    products = a * b
    mask = (a == b) | (a != 2)
    mixed = a & b ^ (a | b)
    chosen = t.where(mask, products, mixed)
    total = chosen.sum() + a.sum(1).float().sum()
    floats = a.float() * 2 + b.double()
    ordered = t.cat([a, b]).sort(dim=1).values
    narrowed = a.to(t.uint32).to(t.uint64)
    written = a.clone()
    written[0, 0] = 7
    written[1] = b[0]
    return (products, mask, mixed, chosen, total, floats, ordered, narrowed, a == -1,
            written, a.t().reshape(-1)[1:], t.hash_tensor(floats, 1))


def test_compiled_functions_equal_eager_and_torch():
    """The ops torch takes compile without a graph break (their steps run the NumPy impls, as
    eager does: no kernel fuses these dtypes) and give eager's values, and torch's."""
    a = np.array([[1, 2, 2 ** 64 - 1], [4, 5, 6]], dtype=np.uint64)
    b = np.array([[3, 2, 1], [4, 0, 6]], dtype=np.uint64)
    compiled = autojit.compile(_program, fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no graph-break warning
        first = compiled(autojit, autojit.tensor(a), autojit.tensor(b))
        again = compiled(autojit, autojit.tensor(a), autojit.tensor(b))
    eager = _program(autojit, autojit.tensor(a), autojit.tensor(b))
    theirs = _program(torch, torch.from_numpy(a.copy()), torch.from_numpy(b.copy()))
    for index, (x, y, z, w) in enumerate(zip(first, again, eager, theirs, strict=True)):
        assert x.dtype is y.dtype is z.dtype and dtype_name(x.dtype) == dtype_name(w.dtype), index
        assert x.tolist() == y.tolist() == z.tolist(), index
        np.testing.assert_allclose(np.asarray(x.tolist(), dtype=float),
                                   np.asarray(w.tolist(), dtype=float), err_msg=str(index))


def test_compiled_refusals_are_torchs_errors():
    x = autojit.tensor([1, 2], dtype=autojit.uint64)
    for function, message in ((lambda a: a + a, "\"add_stub\" not implemented for 'UInt64'"),
                              (lambda a: a.max(), "\"max_all\" not implemented for 'UInt64'"),
                              (lambda a: a < 1, "\"lt_cpu\" not implemented for 'UInt64'"),
                              (lambda a: a.flip(0), "\"flip_cpu\" not implemented for 'UInt64'")):
        with pytest.raises(NotImplementedError, match=message):
            autojit.compile(function)(x)
    with pytest.raises(RuntimeError, match="Promotion for uint16, uint32, uint64 types"):
        autojit.compile(lambda a, c: a * c)(x, autojit.tensor([1, 2]))


# ---- the registry -----------------------------------------------------------------------------

# The primitives computing in uint16, uint32 and uint64, as torch's kernels do (the Layout
# primitives, which move elements, take any dtype; hash_tensor makes uint64 only); any other
# raises torch's NotImplementedError naming its kernel.
TAKING_UNSIGNED = {"cast", "clone", "fill", "mul", "eq", "ne", "where", "isnan", "floor", "trunc",
                   "ceil", "pow", "bitwise_and", "bitwise_or", "bitwise_xor", "any", "all",
                   "index", "index_put", "gather", "argsort"}


def test_the_primitives_taking_unsigned_dtypes_are_torchs():
    found = {name for name, op in REGISTRY.items() if autojit.uint64 in op.limited and
             op.lowering.__class__.__name__ != "Layout" and name != "hash_tensor"}
    assert found == TAKING_UNSIGNED
    assert REGISTRY["hash_tensor"].limited == frozenset({autojit.uint64})
    layouts = [op for op in REGISTRY.values() if op.lowering.__class__.__name__ == "Layout"]
    assert all(op.limited >= frozenset((autojit.uint16, autojit.uint32, autojit.uint64))
               for op in layouts)
    for name, op in REGISTRY.items():  # the others compute in none of them
        if name not in TAKING_UNSIGNED and op not in layouts and name != "hash_tensor":
            assert not op.limited & frozenset(dtypes.UNSIGNED), name
