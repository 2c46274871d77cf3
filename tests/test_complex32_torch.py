"""complex32 (chalf) against torch 2.13, which supports it on the CPU in part: the cases of
tests/complex32_cases.py (every kind of op, factory and conversion: values, dtypes and shapes,
or the error's type and message), rounding to float16 parts bit for bit (conversions, results
and Python numbers), type promotion, the dtype's attributes, printing, files both ways, the
retyping views (read-only copies here: docs/notes/complex32.md), autograd, compiled functions
and torch's once-per-process warning.
"""

from __future__ import annotations

import io
import itertools
import warnings

import numpy as np
import pytest
from complex32_cases import CASES, RANDOM
from torch_compare import dtype_name, leaves, outcome, torch

import autojit
from autojit.ops import REGISTRY

rng = np.random.default_rng(7)
ALL = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16", "float32",
       "float64", "complex32", "complex64", "complex128", "uint16", "uint32", "uint64")


def _outcome(library, expression: str):
    names = {"t": library, "np": np, "D": library.chalf,
             "a": library.tensor([1 + 2j, 3 - 1j, 0.1 + 0.2j], dtype=library.chalf),
             "b": library.tensor([2 + 0j, 1 + 1j, -1j], dtype=library.chalf),
             "h": library.tensor([1.0, 2.0, 3.0], dtype=library.half)}
    return outcome(expression, names)


def _as_list(tensor):
    """A tensor's values as nested Python numbers (complex32 through complex64, exactly)."""
    if dtype_name(tensor.dtype) == "bfloat16":
        tensor = tensor.float()
    return tensor.detach().tolist()


def _same(mine, theirs, where: str, values: bool) -> None:
    if isinstance(theirs, torch.Tensor):
        assert isinstance(mine, autojit.Tensor), f"{where}: {type(mine).__name__}"
        assert (dtype_name(mine.dtype), tuple(mine.shape)) == (dtype_name(theirs.dtype),
                                                           tuple(theirs.shape)), where
        if values:  # exactly: NaNs compared by their places
            ours = np.asarray(_as_list(mine), dtype=complex)
            torchs = np.asarray(_as_list(theirs), dtype=complex)
            np.testing.assert_array_equal(ours, torchs, err_msg=where)
    elif isinstance(theirs, torch.dtype):
        assert dtype_name(mine) == dtype_name(theirs), where
    elif isinstance(theirs, str):
        assert mine.replace("autojit", "torch") == theirs, where
    else:
        assert type(mine) is type(theirs) and (mine == theirs or mine != mine), (where, mine)


def check_case(expression: str, values: bool = True) -> None:
    theirs, mine = _outcome(torch, expression), _outcome(autojit, expression)
    if theirs[0] == "raises":
        assert mine[0] == "raises", f"torch raised {theirs[1:]}, autojit returned {mine[1]!r}"
        assert mine[1:] == theirs[1:], (mine[1:], theirs[1:])
        return
    assert mine[0] == "returns", f"autojit raised {mine[1:]}, torch returned"
    ours, torchs = leaves(mine[1]), leaves(theirs[1])
    assert len(ours) == len(torchs)
    for index, (a, b) in enumerate(zip(ours, torchs, strict=True)):
        _same(a, b, f"{expression} result {index}", values)


@pytest.mark.parametrize("name", list(CASES))
def test_case_is_torchs(name):
    check_case(CASES[name], values=name not in RANDOM)


# ---- rounding ---------------------------------------------------------------------------------

def _random_complex(count: int, dtype, finite: bool = False) -> np.ndarray:
    """Values across float16's range and beyond (with `finite`, within it): normals, tiny and
    huge magnitudes, ties, infinities and NaNs."""
    scale = 10.0 ** rng.uniform(-9, 4 if finite else 6, (count, 2))
    parts = rng.standard_normal((count, 2)) * scale
    parts[:64] = rng.integers(-2048, 2048, (64, 2)) + 0.5  # halfway cases of float16
    parts[64:70] = [[6e-8, 2e-8], [1.00048828125 + 2 ** -24, 0], [-0.0, -0.0],
                    [2049, -2051], [0.1, 0.3], [1e-5, -1e-6]]
    if not finite:
        parts[70:73] = [[np.inf, 0], [-np.inf, np.nan], [65504, 65520]]
    return (parts[:, 0] + 1j * parts[:, 1]).astype(dtype)


@pytest.mark.parametrize("source", ["complex64", "complex128", "float16", "float32", "float64",
                                    "bfloat16", "int64", "bool"])
def test_conversions_to_complex32_round_as_torchs(source):
    """To complex32 from every kind of dtype, bit for bit: each part rounded to float16, ties
    to even, overflow to infinity; a double through float32 first (c10's double rounding)."""
    values = _random_complex(4000, np.complex128)
    if not source.startswith("complex"):
        values = values.real if source != "int64" else np.nan_to_num(values.real) % 1e5
    if source == "bool":
        values = values > 0
    mine = autojit.tensor(values).to(getattr(autojit, source)).to(autojit.chalf)
    theirs = torch.from_numpy(np.asarray(values)).to(getattr(torch, source)).to(torch.chalf)
    np.testing.assert_array_equal(np.asarray(mine.tolist(), dtype=complex),
                                  np.asarray(theirs.tolist(), dtype=complex))
    back = mine.to(autojit.complex64)
    assert back.dtype is autojit.complex64
    np.testing.assert_array_equal(np.asarray(back.tolist()), np.asarray(mine.tolist()))


@pytest.mark.parametrize("operation", [
    lambda a, b: a + b, lambda a, b: a - b, lambda a, b: a * b, lambda a, b: -a,
    lambda a, b: a.abs(), lambda a, b: a.conj(), lambda a, b: a.sgn(), lambda a, b: a == b,
    lambda a, b: a * 0.1, lambda a, b: a + 1e-3j, lambda a, b: 3 - a, lambda a, b: a.real * 2,
    lambda a, b: a * b.to(a.real.dtype), lambda a, b: a.imag + b.real])
def test_results_round_as_torchs(operation):
    """Each result computed in complex64 and its parts rounded to float16, as torch's kernels
    round theirs; Python numbers rounded to complex32 first, as torch converts them. (Finite
    operands: torch's complex `a + b` is `a + 1 * b`, NaN where b has an infinite part, which
    autojit's complex64 and complex32 give as IEEE sums: docs/differences.md.)"""
    a = _random_complex(2000, np.complex64, finite=True)
    b = _random_complex(2000, np.complex64, finite=True)[::-1]
    mine = operation(autojit.tensor(a).to(autojit.chalf), autojit.tensor(b).to(autojit.chalf))
    theirs = operation(torch.from_numpy(a).to(torch.chalf),
                       torch.from_numpy(b.copy()).to(torch.chalf))
    assert dtype_name(mine.dtype) == dtype_name(theirs.dtype)
    np.testing.assert_array_equal(np.asarray(mine.tolist(), dtype=complex),
                                  np.asarray(theirs.tolist(), dtype=complex))


def test_promotion_of_every_pair_is_torchs():
    def promoted(library, first, second):
        try:
            return dtype_name(library.promote_types(getattr(library, first),
                                               getattr(library, second)))
        except RuntimeError as error:
            return str(error)

    for first, second in itertools.product(ALL, ALL):
        assert promoted(autojit, first, second) == promoted(torch, first, second), (first,
                                                                                    second)
    for library in (autojit, torch):  # float16 meeting a complex number computes in it
        assert dtype_name((library.ones(2, dtype=library.half) * 1j).dtype) == "complex32"


# ---- attributes, printing, files --------------------------------------------------------------

def test_dtype_attributes_are_torchs():
    mine, theirs = autojit.complex32, torch.complex32
    assert autojit.chalf is mine and repr(mine) == "autojit.complex32"
    assert (mine.is_complex, mine.is_floating_point, mine.is_signed, mine.itemsize) == \
        (theirs.is_complex, theirs.is_floating_point, theirs.is_signed, theirs.itemsize)
    assert mine.to_real() is autojit.float16 and autojit.float16.to_complex() is mine
    assert repr(autojit.finfo(mine)) == repr(torch.finfo(theirs))
    x = autojit.zeros(3, dtype=mine)
    assert (x.element_size(), x.itemsize, x.nbytes) == (4, 4, 12)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert x.type() == torch.zeros(3, dtype=theirs).type().replace("torch", "autojit")


def test_printing_is_torchs():
    for make in (lambda t: t.tensor([1 + 2j, -0.5j], dtype=t.chalf),
                 lambda t: t.tensor(0.1 + 0.2j, dtype=t.chalf),
                 lambda t: t.tensor([[60000 + 1j, 1e-5j]], dtype=t.chalf),
                 lambda t: t.zeros(0, dtype=t.chalf),
                 lambda t: (t.arange(2000) * (1 + 1j)).to(t.chalf)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            assert repr(make(autojit)) == repr(make(torch)).replace("torch.", "autojit.")


def test_files_cross_both_ways():
    base = autojit.tensor([[1 + 2j, 3j], [0.1 + 0.2j, -1]], dtype=autojit.chalf)
    saved = {"base": base, "t": base.t(), "row": base[1]}
    written = io.BytesIO()
    autojit.save(saved, written)
    written.seek(0)
    read = torch.load(written)  # torch's form: float16 pairs in an UntypedStorage
    for name, tensor in saved.items():
        assert read[name].dtype is torch.complex32 and read[name].tolist() == tensor.tolist()
    written = io.BytesIO()
    torch.save(read, written)
    written.seek(0)
    loaded = autojit.load(written)
    for name, tensor in saved.items():
        assert loaded[name].dtype is autojit.complex32
        assert loaded[name].tolist() == tensor.tolist()
    for form in ({"format": "npz"}, {}):
        written = io.BytesIO()
        autojit.save(saved, written, **form)
        written.seek(0)
        assert autojit.load(written)["t"].tolist() == base.t().tolist()


def test_no_numpy_or_dlpack_memory_to_share():
    x = autojit.tensor([1j], dtype=autojit.chalf)
    with pytest.raises(TypeError, match="^Got unsupported ScalarType ComplexHalf$"):
        x.numpy()
    with pytest.raises(TypeError, match="^Got unsupported ScalarType ComplexHalf$"):
        torch.tensor([1j], dtype=torch.chalf).numpy()
    with pytest.raises(BufferError, match="complex32 tensors cannot be exported"):
        x.__dlpack__()


# ---- the retyping views -----------------------------------------------------------------------

def test_real_imag_and_view_as_real_are_read_only_copies():
    """torch's are float16 views sharing the complex32 memory; autojit's complex32 is stored
    as complex64, so they are copies, and a write through one raises instead of missing it."""
    z = autojit.tensor([1 + 2j, 3 - 1j], dtype=autojit.chalf)
    parts = autojit.view_as_real(z)
    assert parts.dtype is autojit.float16 and parts.tolist() == [[1, 2], [3, -1]]
    assert z.real.tolist() == [1, 3] and z.imag.tolist() == [2, -1]
    for view in (parts, z.real, z.imag[0]):
        with pytest.raises(RuntimeError, match="read-only copy"):
            view.fill_(0)
    with pytest.raises(RuntimeError, match="read-only copy"):
        autojit.view_as_complex(autojit.tensor([[1.0, 2.0]], dtype=autojit.half)).zero_()
    z.mul_(2)  # the tensor itself is written as usual
    assert z.tolist() == [2 + 4j, 6 - 2j] and parts.tolist() == [[1, 2], [3, -1]]


# ---- autograd, compiled functions, the warning --------------------------------------------------

def test_gradients_are_torchs():
    for library in (autojit, torch):
        x = library.tensor([1 + 2j, 0.1 - 3j], dtype=library.chalf, requires_grad=True)
        y = x * x.conj() + x
        y.backward(library.tensor([1 + 1j, 2j], dtype=library.chalf))
        first = x.grad.clone()
        y = x * 3
        y.backward(library.tensor([0.1, 0.2], dtype=library.chalf))  # accumulated, rounded
        assert dtype_name(x.grad.dtype) == "complex32"
        if library is autojit:
            mine = (first.tolist(), x.grad.tolist())
        else:
            assert mine == (first.tolist(), x.grad.tolist())
    with pytest.raises(NotImplementedError, match="\"sum_cpu\" not implemented for "
                                                  "'ComplexHalf'"):
        autojit.tensor([1j], dtype=autojit.chalf, requires_grad=True).sum()


def _program(t, a, b, h):
    total = a + b
    return (total, a * b, -a, a.abs(), a.conj(), t.where(a == b, a, a * b), t.cat([a, b]),
            a * 0.1 + h, a.to(t.complex64) * 3, (a * b).real + a.imag, t.view_as_real(total),
            a[t.tensor([0, 2, 19])], h.to(t.chalf) * 1j)


def test_compiled_functions_equal_eager_and_torch():
    """No kernel fuses complex32: its steps run the impls with eager's rounding, without a
    graph break."""
    a = _random_complex(80, np.complex64, finite=True)[60:]
    b = _random_complex(80, np.complex64, finite=True)[:20]
    h = rng.standard_normal(20).astype(np.float16)

    def inputs(library):
        return (library.tensor(a).to(library.chalf), library.tensor(b).to(library.chalf),
                library.tensor(h))

    compiled = autojit.compile(lambda *x: _program(autojit, *x), fullgraph=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        first, again = compiled(*inputs(autojit)), compiled(*inputs(autojit))
        eager = _program(autojit, *inputs(autojit))
        theirs = _program(torch, *inputs(torch))
    for index, (x, y, z, w) in enumerate(zip(first, again, eager, theirs, strict=True)):
        assert x.dtype is y.dtype is z.dtype and dtype_name(x.dtype) == dtype_name(w.dtype), index
        assert x.tolist() == y.tolist() == z.tolist(), index
        np.testing.assert_array_equal(np.asarray(x.tolist(), dtype=complex),
                                      np.asarray(w.tolist(), dtype=complex), err_msg=str(index))


def test_the_experimental_warning_is_given_once():
    from autojit.tensor import once

    once.given.discard("ComplexHalf support is experimental and many operators don't support "
                       "it yet.")
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        autojit.zeros(2, dtype=autojit.chalf)
        autojit.ones(2, dtype=autojit.half) * 1j
    messages = [str(warning.message) for warning in caught]
    assert messages == ["ComplexHalf support is experimental and many operators don't support "
                        "it yet."]
    assert caught[0].filename == __file__


def test_the_primitives_taking_complex32_are_torchs():
    taking = {name for name, op in REGISTRY.items() if autojit.complex32 in op.limited and
              op.lowering.__class__.__name__ != "Layout"}
    assert taking == {"add", "sub", "mul", "neg", "abs", "conj", "sgn", "eq", "ne", "where",
                      "cast", "clone", "fill", "isnan", "pow", "index", "index_put", "any",
                      "all", "view_as_real", "view_as_complex", "complex"}
