"""`out=` on the older top-level ops (add, exp, mean, eq, logical_and, sign, matmul, cat,
where, nonzero, ...) against torch: for float and integer inputs and every out dtype, the
same refusal (exception type and message) or the same values written into out, which is
returned; a differently shaped out is resized with torch's warning."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")

UNARY = ["exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "sqrt", "rsqrt", "sin", "cos",
         "tan", "tanh", "sigmoid", "erf", "square", "reciprocal", "abs", "neg", "floor", "mean",
         "sign", "logical_not"]
BINARY = ["add", "sub", "mul", "div", "maximum", "minimum", "pow", "remainder", "floor_divide",
          "eq", "ne", "lt", "le", "gt", "ge", "logical_and", "logical_or", "logical_xor", "dot",
          "outer", "matmul"]
# The shape of the result, where it is not the inputs' (3,); the inputs of mm and bmm.
SHAPES = {"mean": (), "dot": (), "matmul": (), "outer": (3, 3)}
MATRICES = {"mm": (2, 2), "bmm": (1, 2, 2), "matmul": (1, 2, 2)}
OUT_DTYPES = ["float32", "float64", "int64", "bool"]


def _call(library, name: str, arguments: tuple, out_dtype: str, shape: tuple):
    out = library.zeros(shape, dtype=getattr(library, out_dtype))
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            returned = getattr(library, name)(*arguments, out=out)
    except Exception as error:  # noqa: BLE001 - the refusal itself is compared with torch's
        return type(error), str(error).splitlines()[0]
    assert returned is out
    return "written", np.asarray(out.tolist(), dtype=np.float64)


def _inputs(library, dtype: str):
    values = [1.5, 2.0, 3.0] if dtype == "float32" else [1, 2, 3]
    return library.tensor(values, dtype=getattr(library, dtype))


@pytest.mark.parametrize("input_dtype", ["float32", "int64"])
@pytest.mark.parametrize("name", UNARY + BINARY)
def test_out_matches_torch(name, input_dtype):
    count = 2 if name in BINARY else 1
    shape = SHAPES.get(name, (3,))
    for out_dtype in OUT_DTYPES:
        theirs = _call(torch, name, (_inputs(torch, input_dtype),) * count, out_dtype, shape)
        ours = _call(autojit, name, (_inputs(autojit, input_dtype),) * count, out_dtype, shape)
        where = f"{name}({input_dtype}) out={out_dtype}"
        if theirs[0] == "written":
            assert ours[0] == "written", f"{where}: torch writes, autojit raised {ours}"
            np.testing.assert_allclose(ours[1], theirs[1], rtol=1e-6, err_msg=where)
        else:
            assert ours[0] != "written" and issubclass(ours[0], theirs[0]), (where, ours, theirs)
            if name not in ("mean",):  # torch's mean names its own kernel in the message
                assert ours[1] == theirs[1], where


@pytest.mark.parametrize("input_dtype", ["float32", "int64"])
@pytest.mark.parametrize("name", MATRICES)
def test_out_of_the_matrix_products_matches_torch(name, input_dtype):
    values = [[1.5, 2.0], [3.0, -1.0]] if input_dtype == "float32" else [[1, 2], [3, -1]]
    for out_dtype in OUT_DTYPES:
        theirs, ours = (_call(library, name, (library.tensor(values, dtype=getattr(
            library, input_dtype)).reshape(MATRICES[name]),) * 2, out_dtype, MATRICES[name])
            for library in (torch, autojit))
        where = f"{name}({input_dtype}) out={out_dtype}"
        if theirs[0] == "written":
            assert ours[0] == "written", (where, ours)
            np.testing.assert_allclose(ours[1], theirs[1], err_msg=where)
        else:
            assert ours[0] != "written" and issubclass(ours[0], theirs[0]), (where, ours)
            assert ours[1] == theirs[1], where


# Calls of the ops whose out= has forms of its own: `L` is torch or autojit, `x` a 2 x 2 input.
FORMS = {
    "cat": lambda L, x, out: L.cat([x, x], out=out((4, 2))),
    "stack": lambda L, x, out: L.stack([x, x], 1, out=out((2, 2, 2))),
    "where": lambda L, x, out: L.where(x > 1, x, L.ones(2, dtype=L.int64), out=out((2, 2))),
    "nonzero": lambda L, x, out: L.nonzero(x, out=out((3, 2))),
}


def _form_outcome(library, name: str, input_dtype: str, out_dtype: str):
    values = [[1.5, 0.0], [4.0, 5.0]] if input_dtype == "float32" else [[1, 0], [4, 5]]
    x = library.tensor(values, dtype=getattr(library, input_dtype))
    return _outcome(library, lambda: FORMS[name](
        library, x, lambda shape: library.zeros(shape, dtype=getattr(library, out_dtype))))


@pytest.mark.parametrize("input_dtype", ["float32", "int64", "bool"])
@pytest.mark.parametrize("name", FORMS)
def test_out_of_cat_stack_where_and_nonzero_matches_torch(name, input_dtype):
    for out_dtype in OUT_DTYPES:
        theirs, ours = (_form_outcome(library, name, input_dtype, out_dtype)
                        for library in (torch, autojit))
        where = f"{name}({input_dtype}) out={out_dtype}"
        if theirs[0] == "written":
            assert ours[0] == "written", (where, ours)
            np.testing.assert_allclose(ours[1], theirs[1], err_msg=where)
        else:
            assert ours[0] != "written" and issubclass(ours[0], theirs[0]), (where, ours)
            assert ours[1] == theirs[1], where


# The calls torch's parser or checks refuse.
REFUSALS = {
    "where with a number": lambda L: L.where(L.ones(2) > 0, L.ones(2), 0.0, out=L.zeros(2)),
    "where of a condition": lambda L: L.where(L.ones(2) > 0, out=L.zeros(2)),
    "nonzero as_tuple": lambda L: L.nonzero(L.ones(2), as_tuple=True,
                                            out=L.zeros(2, 1, dtype=L.int64)),
    "cat with grad": lambda L: L.cat([L.ones(2, requires_grad=True)], out=L.zeros(2)),
}


@pytest.mark.parametrize("name", REFUSALS)
def test_refusal_matches_torch(name):
    theirs, ours = (_outcome(library, lambda library=library: REFUSALS[name](library))
                    for library in (torch, autojit))
    assert theirs[0] != "written" and ours == theirs


def _outcome(library, call):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            returned = call()
    except Exception as error:  # noqa: BLE001 - the refusal itself is compared with torch's
        return type(error), str(error).splitlines()[0]
    return "written", np.asarray(returned.tolist(), dtype=np.float64)


def test_matmul_of_a_matrix_and_a_vector_checks_out_as_torch():
    theirs, ours = (_call(library, "matmul", (library.ones(2, 2), library.ones(2)), "float64",
                          (2,)) for library in (torch, autojit))
    assert ours == theirs


def test_out_of_another_shape_is_resized_with_torch_warning():
    x = autojit.tensor([1.0, 2.0])
    out = autojit.zeros(3)
    with pytest.warns(UserWarning, match="was resized since it had shape \\[3\\]"):
        autojit.add(x, x, out=out)
    assert out.tolist() == [2.0, 4.0]


def test_out_refuses_inputs_that_require_grad():
    x = autojit.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="functions with out=... arguments don't support"):
        autojit.exp(x, out=autojit.zeros(2))
    with autojit.no_grad():
        assert autojit.exp(x, out=autojit.zeros(2)).tolist() == pytest.approx(
            np.exp([1.0, 2.0]).tolist())


@pytest.mark.parametrize(("out_slice", "index_slice"), [
    (slice(0, 1), slice(1, 3)),  # resized into the index's memory: torch's overlap error
    (slice(0, 1), slice(2, 4)),  # resized within the base, apart from the index
])
def test_gather_resizes_an_out_view_within_its_base_as_torch(out_slice, index_slice):
    outcomes = []
    for library in (autojit, torch):
        base = library.tensor([2, 1, 0, 1, 7])
        x = library.tensor([10, 20, 30])
        out = base[out_slice]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                result = library.gather(x, 0, base[index_slice], out=out)
            except RuntimeError as error:
                outcomes.append(str(error))
                continue
        outcomes.append((result.tolist(), base.tolist(), out.tolist()))
    assert outcomes[0] == outcomes[1]
