"""`out=` on the reductions (sum, prod, amax, amin, aminmax, max, min, argmax, argmin, any,
all, logsumexp, std, var, norm) and on clamp, clip and round (autojit.special's too), against
torch: for float, integer and bool inputs and every out dtype, the same refusal (exception
type and message) or the same values written into out, which is returned; torch's other forms
and checks of out (sum without a dim, a pair for max with a dim, out= with grad, a resized
out), and the input dtypes these ops refuse with or without out (argmax of bools, var of
integers, ...)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")

VALUES = {"float32": [[1.5, 1.5, 2.0], [0.25, 3.0, -1.0]],  # a sum into int64 casts first
          "int64": [[1, -2, 3], [4, 0, -1]],
          "bool": [[True, False, True], [False, False, True]]}
OUT_DTYPES = ["float32", "float64", "float16", "int64", "int32", "bool"]


def _zeros(library, shape, dtype):
    return library.zeros(shape, dtype=getattr(library, dtype))


# name -> the call with out; `o(shape)` makes an out of the dtype under test, `L` is torch or
# autojit, `x` the input.
CASES = {
    "sum": lambda L, x, o: L.sum(x, 1, out=o(2)),
    "sum dims keepdim": lambda L, x, o: L.sum(x, (0, 1), True, out=o((1, 1))),
    "sum dtype": lambda L, x, o: L.sum(x, 0, dtype=L.float64, out=o(3)),
    "prod": lambda L, x, o: L.prod(x, 1, out=o(2)),
    "prod dtype": lambda L, x, o: L.prod(x, 1, dtype=L.int64, out=o(2)),
    "amax": lambda L, x, o: L.amax(x, 1, out=o(2)),
    "amin all": lambda L, x, o: L.amin(x, out=o(())),
    "aminmax": lambda L, x, o: L.aminmax(x, dim=1, out=(o(2), o(2))),
    "max values": lambda L, x, o: L.max(x, 1, out=(o(2), L.zeros(2, dtype=L.int64))),
    "min indices": lambda L, x, o: L.min(x, 0, True, out=(L.zeros((1, 3), dtype=x.dtype),
                                                          o((1, 3)))),
    "max all": lambda L, x, o: L.max(x, out=o(())),
    "min other": lambda L, x, o: L.min(x, x, out=o((2, 3))),
    "argmax": lambda L, x, o: L.argmax(x, 1, out=o(2)),
    "argmin all": lambda L, x, o: L.argmin(x, out=o(())),
    "any": lambda L, x, o: L.any(x, 1, out=o(2)),
    "all all": lambda L, x, o: L.all(x, out=o(())),
    "logsumexp": lambda L, x, o: L.logsumexp(x, 1, out=o(2)),
    "std": lambda L, x, o: L.std(x, 1, out=o(2)),
    "var all": lambda L, x, o: L.var(x, correction=0, out=o(())),
    "norm": lambda L, x, o: L.norm(x, 2, 1, out=o(2)),
    "norm all": lambda L, x, o: L.norm(x, 1, out=o(())),
    "round": lambda L, x, o: L.round(x, out=o((2, 3))),
    "round decimals": lambda L, x, o: L.round(x, decimals=1, out=o((2, 3))),
    "clamp": lambda L, x, o: L.clamp(x, -1, 2, out=o((2, 3))),
    "clip float bound": lambda L, x, o: L.clip(x, 0.5, out=o((2, 3))),
    "special logsumexp": lambda L, x, o: L.special.logsumexp(x, 1, out=o(2)),
    "special round": lambda L, x, o: L.special.round(x, out=o((2, 3))),
}


def _outcome(library, call, input_dtype: str, out_dtype: str):
    x = library.tensor(VALUES[input_dtype], dtype=getattr(library, input_dtype))
    outs = []

    def make_out(shape):
        outs.append(_zeros(library, shape, out_dtype))
        return outs[-1]

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # every out has the result's shape: no resize
            returned = call(library, x, make_out)
    except Exception as error:  # noqa: BLE001 - the refusal itself is compared with torch's
        return type(error), str(error).splitlines()[0]
    returned = tuple(returned) if isinstance(returned, tuple) else (returned,)
    return "written", [np.asarray(item.tolist(), dtype=np.float64) for item in returned], (
        [item is out for item, out in zip(returned, outs)])


@pytest.mark.parametrize("name", CASES)
def test_out_matches_torch(name):
    call = CASES[name]
    for input_dtype in VALUES:
        for out_dtype in OUT_DTYPES:
            theirs = _outcome(torch, call, input_dtype, out_dtype)
            ours = _outcome(autojit, call, input_dtype, out_dtype)
            where = f"{name}({input_dtype}) out={out_dtype}"
            if theirs[0] == "written":
                assert ours[0] == "written", f"{where}: torch writes, autojit raised {ours}"
                assert ours[2] == theirs[2], f"{where}: not the out tensors returned"
                for mine, expected in zip(ours[1], theirs[1]):
                    np.testing.assert_allclose(mine, expected, rtol=2e-3, err_msg=where)
            else:
                assert ours[0] != "written" and issubclass(ours[0], theirs[0]), (where, ours,
                                                                                theirs)
                assert ours[1] == theirs[1], where


def _first_line(library, call):
    try:
        call(library)
    except Exception as error:  # noqa: BLE001 - compared with torch's
        return type(error), str(error).splitlines()[0]
    return None


def _input(library, requires_grad: bool = False):
    return library.tensor(VALUES["float32"], requires_grad=requires_grad)


# The forms and arguments torch's parser refuses, and out= where autograd is on.
REFUSALS = {
    "sum without dim": lambda L: L.sum(_input(L), out=L.zeros(())),
    "prod without dim": lambda L: L.prod(_input(L), out=L.zeros(())),
    "prod dim tuple": lambda L: L.prod(_input(L), (0, 1), out=L.zeros(())),
    "sum out int": lambda L: L.sum(_input(L), 1, out=3),
    "amax out int": lambda L: L.amax(_input(L), 1, out=3),
    "aminmax out tensor": lambda L: L.aminmax(_input(L), out=L.zeros(())),
    "aminmax out of 3": lambda L: L.aminmax(_input(L), out=(L.zeros(()),) * 3),
    "norm out int": lambda L: L.norm(_input(L), out=3),
    "method amax": lambda L: _input(L).amax(1, out=L.zeros(2)),
    "clamp without bounds": lambda L: L.clamp(_input(L).long(), out=L.zeros(2, 3)),
    # the dtypes these ops refuse, with or without out
    "method argmin bool": lambda L: (_input(L) > 1).argmin(0),
    "method round bool": lambda L: (_input(L) > 1).round(),
    "special round int": lambda L: L.special.round(_input(L).long()),
    "special round out int": lambda L: L.special.round(_input(L), out=3),
    "method var int": lambda L: _input(L).long().var(),
    "method norm int": lambda L: _input(L).long().norm(1),
    "max of bool with dim": lambda L: (_input(L) > 1).max(1).indices.tolist(),
    **{f"grad {name}": (lambda L, call=call: call(L, _input(L, True), lambda shape: L.zeros(
        shape))) for name, call in CASES.items()
       if name not in ("argmax", "argmin all", "max values", "min indices")},
    "grad max values": lambda L: L.max(_input(L, True), 1, out=(L.zeros(2),
                                                                L.zeros(2, dtype=L.int64))),
    "grad out": lambda L: L.sum(_input(L), 1, out=L.zeros(2, requires_grad=True)),
    "grad argmax writes": lambda L: L.argmax(_input(L, True), 1,
                                             out=L.zeros(2, dtype=L.int64)).tolist(),
}


@pytest.mark.parametrize("name", REFUSALS)
def test_refusal_matches_torch(name):
    theirs = _first_line(torch, REFUSALS[name])
    ours = _first_line(autojit, REFUSALS[name])
    if theirs is None or name == "clamp without bounds":  # torch says "torch.clamp: ..."
        assert (ours is None) == (theirs is None), ours
    else:
        assert ours is not None and issubclass(ours[0], theirs[0]), (ours, theirs)
        assert ours[1] == theirs[1]


def test_out_of_another_shape_is_resized_with_torch_warning():
    x = autojit.tensor([[1.0, 5.0], [4.0, 2.0]])
    out = autojit.zeros(3)
    with pytest.warns(UserWarning, match="was resized since it had shape \\[3\\]") as caught:
        returned = autojit.sum(x, 1, out=out)
    assert returned is out and out.tolist() == [6.0, 6.0]
    assert caught[0].filename == __file__  # the warning points at the caller's line
    values, indices = autojit.zeros(0), autojit.zeros((2, 2), dtype=autojit.int64)
    with pytest.warns(UserWarning, match="had shape \\[2, 2\\]") as caught:
        autojit.max(x, 0, out=(values, indices))
    assert len(caught) == 1  # an empty out is resized silently
    assert values.tolist() == [4.0, 5.0] and indices.tolist() == [1, 0]


def test_a_view_of_another_shape_is_not_resized():
    base = autojit.zeros(4)
    with pytest.raises(RuntimeError, match="sum\\(\\): out= is a view of shape \\[2\\]"):
        autojit.sum(autojit.ones(3, 2), 1, out=base[:2])
    assert base.tolist() == [0.0] * 4


def test_out_is_written_in_place_by_a_compiled_function():
    @autojit.compile
    def step(x, total):
        autojit.sum(x, 0, out=total)
        return autojit.amax(x, 0) * 2

    x = autojit.tensor([[1.0, 5.0], [4.0, 2.0]])
    total = autojit.zeros(2)
    view = total[1:]
    assert step(x, total).tolist() == [8.0, 10.0]
    assert total.tolist() == [5.0, 7.0] and view.tolist() == [7.0]


def test_a_compiled_function_resizing_an_out_runs_eagerly():
    @autojit.compile
    def step(x, total):
        autojit.sum(x, 0, out=total)
        return x * 2

    total = autojit.zeros(3)
    with pytest.warns(UserWarning) as caught:
        doubled = step(autojit.tensor([[1.0, 5.0], [4.0, 2.0]]), total)
    messages = [str(warning.message) for warning in caught]
    assert any("graph break" in message for message in messages), messages
    assert any("was resized since it had shape [3]" in message for message in messages)
    assert total.tolist() == [5.0, 7.0] and doubled.tolist() == [[2.0, 10.0], [8.0, 4.0]]
