"""Every keyword torch's signatures take is taken by autojit's function of the same name: the
top-level functions, Tensor's methods, nn.functional, linalg and special (ops/keyword_forms.py
maps torch's names to autojit's parameters; ops/factory_forms.py adds the factories' out=,
layout= and pin_memory=).

torch's signatures are read from torch itself: its .pyi stubs for the functions its argument
parser binds (every overload), inspect.signature for those written in Python, and the first
line of the docstring for linalg's and special's. A stub keyword torch's parser refuses (the
stubs are not always right: methods' `out`) is not asked of autojit. A few keywords map to
nothing in autojit yet; GAPS lists them, and the test fails when one of them starts working
too, so that the list stays exact. Then a sample of calls by keyword is run on both.
"""

from __future__ import annotations

import ast
import collections
import inspect
import os
import re

import numpy as np
import pytest

import autojit
from autojit.ops import keyword_forms

torch = pytest.importorskip("torch")

_STUBS = os.path.join(os.path.dirname(torch.__file__), "_C")
P = inspect.Parameter

# Keywords torch takes that autojit does not (yet); docs/drop-in.md lists them.
GAPS = {
    "torch.addmm": {"out_dtype"}, "torch.baddbmm": {"out_dtype"}, "torch.bmm": {"out_dtype"},
    "torch.mm": {"out_dtype"}, "torch.full": {"names"},
    "torch.compile": {"model", "name", "isolate_recompiles", "shapes_spec"},
}
# Stub keywords torch's parser refuses, or that stand for another form.
_NOT_TORCHS = {"Tensor.to", "Tensor.map_", "Tensor.map2_", "Tensor.requires_grad_",
               "Tensor.resize", "linalg.matrix_norm"}


def _stub_overloads(path: str, cls: str | None = None) -> dict:
    tree = ast.parse(open(path).read())
    nodes = tree.body
    if cls:
        nodes = next(n for n in nodes if isinstance(n, ast.ClassDef) and n.name == cls).body
    found = collections.defaultdict(list)
    for node in nodes:
        if isinstance(node, ast.FunctionDef):
            args = node.args
            keywords = [a.arg for a in args.args] + [a.arg for a in args.kwonlyargs]
            if args.vararg is not None:
                keywords.append(args.vararg.arg)  # torch's *size is also size=
            found[node.name].append(keywords)
    return found


def _signature_keywords(function):
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None
    return [[p.name for p in parameters if p.kind in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY)]]


def _doc_keywords(function, prefix: str):
    match = re.search(r"^\s*" + re.escape(prefix) + r"\(([^)]*)\)", function.__doc__ or "", re.M)
    if match is None:
        return None
    names = [part.strip().split("=")[0].strip() for part in match.group(1).split(",")]
    return [[name for name in names if name.isidentifier()]]


def _takes_keywords(function) -> bool:
    try:
        function(zzz_not_a_keyword=1)
    except TypeError as error:
        return "takes no keyword arguments" not in str(error)
    except Exception:  # noqa: BLE001 - any other refusal still parsed the keyword
        return True
    return True


def _accepted(function, renames: dict):
    try:
        parameters = inspect.signature(function).parameters.values()
    except (TypeError, ValueError):
        return None
    if any(p.kind is P.VAR_KEYWORD for p in parameters):
        return None
    return {p.name for p in parameters if p.kind in (P.POSITIONAL_OR_KEYWORD, P.KEYWORD_ONLY)} \
        | set(renames)


def _namespaces():
    tensor = torch.ones(2)
    yield ("Tensor", lambda name: getattr(torch.Tensor, name, None),
           lambda name: getattr(tensor, name, None), autojit.Tensor, keyword_forms.METHODS,
           _stub_overloads(os.path.join(_STUBS, "__init__.pyi"), "TensorBase"), None)
    yield ("torch", lambda name: getattr(torch, name, None), lambda name: getattr(torch, name),
           autojit, keyword_forms.FUNCTIONS,
           _stub_overloads(os.path.join(_STUBS, "_VariableFunctions.pyi")), None)
    yield ("nn.functional", lambda name: getattr(torch.nn.functional, name, None),
           lambda name: getattr(torch.nn.functional, name), autojit.nn.functional,
           keyword_forms.NN_FUNCTIONAL, {}, None)
    for name, theirs, ours, table in (("linalg", torch.linalg, autojit.linalg,
                                       keyword_forms.LINALG),
                                      ("special", torch.special, autojit.special,
                                       keyword_forms.SPECIAL)):
        yield (name, lambda n, m=theirs: getattr(m, n, None), lambda n, m=theirs: getattr(m, n),
               ours, table, {}, name)


def _missing_keywords() -> dict:
    missing = {}
    for label, torch_function, bound, ours, table, stubs, doc_prefix in _namespaces():
        for name in sorted(dir(ours)):
            if name.startswith("_") or f"{label}.{name}" in _NOT_TORCHS:
                continue
            theirs, mine = torch_function(name), getattr(ours, name, None)
            if not callable(theirs) or not callable(mine) or isinstance(mine, type):
                continue
            if not _takes_keywords(bound(name)):
                continue
            overloads = stubs.get(name) or _signature_keywords(theirs)
            if overloads is None and doc_prefix is not None:
                overloads = _doc_keywords(theirs, f"{doc_prefix}.{name}")
            accepted = _accepted(mine, table.get(name, {}))
            if not overloads or accepted is None:
                continue
            wanted = {keyword for keywords in overloads for keyword in keywords} - {"self"}
            if label == "Tensor":
                wanted.discard("out")  # the stubs give methods an out their parser refuses
            absent = wanted - accepted
            if absent:
                missing[f"{label}.{name}"] = absent
    return missing


def test_every_keyword_of_torchs_signatures_is_taken():
    assert _missing_keywords() == GAPS


KEYWORD_CALLS = [
    lambda L, x, m: L.exp(input=x),
    lambda L, x, m: L.add(input=x, other=x, alpha=2),
    lambda L, x, m: L.sum(input=m, dim=0, keepdim=True),
    lambda L, x, m: L.mm(input=m, mat2=m),
    lambda L, x, m: L.pow(input=x, exponent=2),
    lambda L, x, m: L.reshape(input=m, shape=(9,)),
    lambda L, x, m: L.permute(input=m, dims=(1, 0)),
    lambda L, x, m: L.swapaxes(input=m, axis0=0, axis1=1),
    lambda L, x, m: L.split(tensor=x, split_size_or_sections=1),
    lambda L, x, m: L.zeros(size=(2, 3)),
    lambda L, x, m: L.ones(size=[2], dtype=L.float64),
    lambda L, x, m: x.new_zeros(size=(2,)),
    lambda L, x, m: x.new_ones(size=(3, 1), layout=L.strided, pin_memory=False),
    lambda L, x, m: x.split(split_size=1),
    lambda L, x, m: x.view(size=(3, 1)),
    lambda L, x, m: x.view(dtype=L.int32),
    lambda L, x, m: x.expand(size=(2, 3)),
    lambda L, x, m: m.repeat(repeats=(2, 1)),
    lambda L, x, m: m.flip(dims=(0,)),
    lambda L, x, m: m.mm(mat2=m),
    lambda L, x, m: x.mul(other=x),
    lambda L, x, m: x.pow(exponent=3),
    lambda L, x, m: L.linalg.norm(input=x),
    lambda L, x, m: L.nn.functional.gelu(input=x),
    lambda L, x, m: L.special.expit(input=x),
    lambda L, x, m: L.isin(elements=x, test_element=0.5),
    lambda L, x, m: L.eye(3, out=L.empty(0, dtype=L.float64)),
    lambda L, x, m: L.zeros(2, 3, out=L.empty(6, dtype=L.int64)),
    lambda L, x, m: L.arange(4, out=L.empty(0, dtype=L.float64)),
    lambda L, x, m: L.full((2,), 3, out=L.empty(2, dtype=L.int64)),
    lambda L, x, m: L.linspace(0, 1, 5, out=L.empty(0, dtype=L.float64), layout=L.strided),
    lambda L, x, m: L.zeros(2, dtype=L.float64, out=L.empty(2)),
    lambda L, x, m: L.zeros(2, pin_memory=True),
    lambda L, x, m: L.ones(2, layout=L.sparse_csr),
    lambda L, x, m: L.bitwise_and(L.tensor([3, 5]), L.tensor([1, 4]),
                                  out=L.empty(2, dtype=L.int64)),
    lambda L, x, m: L.mode(L.tensor([1., 2, 2, 3]), out=(L.empty(0), L.empty(0, dtype=L.int64))),
    lambda L, x, m: L.mode(m, 0, True, out=(L.empty(0), L.empty(0, dtype=L.int64))),
    lambda L, x, m: L.mode(x, out=(L.empty(0, dtype=L.float64), L.empty(0, dtype=L.int64))),
    lambda L, x, m: L.mode(x, out=(L.empty(0), L.empty(0, dtype=L.int32))),
    lambda L, x, m: L.mode(x, out=L.empty(0)),
    lambda L, x, m: L.hardshrink(x - 1, 0.2, out=L.empty(3)),
    lambda L, x, m: L.hardshrink(x, out=L.empty(3, dtype=L.float64)),
    lambda L, x, m: L.threshold(x, 1.0, -2.0, out=L.empty(3, dtype=L.float64)),
    lambda L, x, m: L.threshold(x, 1.0, -2.0, out=L.empty(3, dtype=L.int64)),
    lambda L, x, m: L.nn.functional.l1_loss(x, m[0], weight=m[1]),
    lambda L, x, m: L.nn.functional.l1_loss(x, m[0], weight=m[1], reduction="sum"),
    lambda L, x, m: L.nn.functional.l1_loss(x, m[0], weight=m[1], reduction="none"),
    lambda L, x, m: L.nn.functional.l1_loss(x, m[0], weight=m[1, :2]),
]


def _outcome(call, lib, x, m):
    try:
        result = call(lib, lib.tensor(x), lib.tensor(m))
    except Exception as error:  # noqa: BLE001 - the outcome compared
        return ("raises", type(error).__name__)
    results = result if isinstance(result, tuple) else (result,)
    return ("returns", [(np.asarray(r.tolist(), dtype=float), str(r.dtype).split(".")[-1],
                         tuple(r.shape)) for r in results])


@pytest.mark.parametrize("index", range(len(KEYWORD_CALLS)))
def test_calls_by_keyword_as_torch(index):
    rng = np.random.default_rng(index)
    x, m = rng.uniform(0.5, 1.5, (3,)), rng.uniform(0.5, 1.5, (3, 3))
    expected = _outcome(KEYWORD_CALLS[index], torch, x, m)
    actual = _outcome(KEYWORD_CALLS[index], autojit, x, m)
    assert actual[0] == expected[0], (actual, expected)
    if expected[0] == "raises":
        assert actual == expected
        return
    assert len(actual[1]) == len(expected[1])
    for (mine, dtype, shape), (theirs, their_dtype, their_shape) in zip(actual[1], expected[1]):
        assert (dtype, shape) == (their_dtype, their_shape)
        np.testing.assert_allclose(mine, theirs, rtol=1e-6)


def test_rrelu_draws_from_the_generator_it_is_given():
    x = autojit.linspace(-2, 1, 12)
    first = autojit.rrelu(x, training=True, generator=autojit.Generator().manual_seed(3))
    again = autojit.rrelu(x, training=True, generator=autojit.Generator().manual_seed(3))
    other = autojit.rrelu(x, training=True, generator=autojit.Generator().manual_seed(4))
    assert first.tolist() == again.tolist() != other.tolist()
    written = x.clone()
    autojit.rrelu_(written, training=True, generator=autojit.Generator().manual_seed(3))
    assert written.tolist() == first.tolist()


def test_from_dlpack_takes_device_and_copy_as_torch():
    for lib in (autojit, torch):
        array = np.arange(3.0)
        copied = lib.from_dlpack(array, copy=True)
        shared = lib.from_dlpack(array, copy=False)
        placed = lib.from_dlpack(array, device="cpu")
        array[0] = 9.0
        assert copied.tolist() == [0.0, 1.0, 2.0]
        assert shared.tolist() == placed.tolist() == [9.0, 1.0, 2.0]


def test_ormqr_takes_torchs_keyword_names():
    rng = np.random.default_rng(0)
    a, c = rng.standard_normal((4, 3)), rng.standard_normal((4, 2))
    results = []
    for lib in (autojit, torch):
        q, tau = lib.geqrf(lib.tensor(a))
        results.append(lib.ormqr(q, input2=tau, input3=lib.tensor(c), transpose=True).numpy())
        results.append(lib.tensor(a).ormqr(input2=tau, input3=lib.tensor(c)).numpy())
    np.testing.assert_allclose(results[0], results[2], rtol=1e-10)
    np.testing.assert_allclose(results[1], results[3], rtol=1e-10)
