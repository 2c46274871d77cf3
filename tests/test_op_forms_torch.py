"""The top-level forms of ops whose op table row is another name's, against torch itself: the
in-place functions (`autojit.sin_(x)`, the form of `sin`), the `*_copy` forms of the view ops
(the view's values in memory of their own) and the few functions around detaching and
splitting that torch also exports at the top level, and its questions about a tensor.

tests/test_op_table.py's coverage check counts a public name as tested when it has a row, or
when it is in one of the tables here (IN_PLACE, COPIES, OTHERS, QUESTIONS) or in
tests/test_names_torch.py.
Each case runs with torch and with autojit: values, dtypes and shapes; for the in-place forms
also that the result is the argument itself and that its version moved once; for the copies
that the result shares no memory with the argument.
"""

from __future__ import annotations

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(11)
UNIT = _rng.uniform(0.1, 0.9, (3, 4))  # inside every unary op's domain below
ABOVE_ONE = UNIT + 1.0  # acosh's
INTEGERS = _rng.integers(1, 30, (3, 4))
WITH_NAN = np.array([[0.5, np.nan, np.inf], [-np.inf, 1.5, -0.25]])

_UNARY = ("abs", "acos", "asin", "atan", "arccos", "arcsin", "arctan", "asinh", "arcsinh",
          "atanh", "arctanh", "ceil", "cos", "cosh", "deg2rad", "erf", "erfc", "exp2", "exp",
          "expm1", "fix", "floor", "frac", "i0", "log10", "log1p", "log2", "log", "logit",
          "neg", "negative", "rad2deg", "reciprocal", "relu", "round", "rsqrt", "sigmoid", "sin",
          "sinc", "sinh", "sqrt", "square", "tan", "tanh", "trunc")

# name -> (the argument the function writes, the other arguments as a function of the library)
IN_PLACE = {
    **{f"{name}_": (UNIT, lambda L: ()) for name in _UNARY},
    "acosh_": (ABOVE_ONE, lambda L: ()),
    "arccosh_": (ABOVE_ONE, lambda L: ()),
    "clamp_": (UNIT, lambda L: (0.3, 0.6)),
    "clamp_max_": (UNIT, lambda L: (0.5,)),
    "clamp_min_": (UNIT, lambda L: (0.5,)),
    "clip_": (UNIT, lambda L: (0.2, 0.6)),
    "gcd_": (INTEGERS, lambda L: (L.tensor(INTEGERS[::-1].copy()),)),
    "lcm_": (INTEGERS, lambda L: (L.tensor(INTEGERS[::-1].copy()),)),
    "ldexp_": (UNIT, lambda L: (L.tensor(INTEGERS % 4),)),
    "xlogy_": (UNIT, lambda L: (L.tensor(ABOVE_ONE),)),
    "nan_to_num_": (WITH_NAN, lambda L: (0.0, 9.0, -9.0)),
    "index_put_": (UNIT, lambda L: ((L.tensor([0, 2]), L.tensor([1, 3])),
                                    L.tensor([5.0, 6.0], dtype=L.float64))),
    "addmv_": (UNIT[0], lambda L: (L.tensor(ABOVE_ONE.T.copy()), L.tensor(UNIT[:, 0].copy()))),
    "alpha_dropout_": (UNIT, lambda L: (0.5, False)),
    "feature_alpha_dropout_": (UNIT, lambda L: (0.5, False)),
    "feature_dropout_": (UNIT, lambda L: (0.5, False)),
    "dropout_": (UNIT, lambda L: (0.5, False)),
    "rrelu_": (UNIT - 0.5, lambda L: (0.125, 1 / 3, False)),
    "selu_": (UNIT - 0.5, lambda L: ()),
    "celu_": (UNIT - 0.5, lambda L: (0.5,)),
    "threshold_": (UNIT, lambda L: (0.5, -1.0)),
    "fill_": (UNIT, lambda L: (2.5,)),
    "zero_": (UNIT, lambda L: ()),
}


@pytest.mark.parametrize("name", sorted(IN_PLACE))
def test_in_place_forms_like_torch(name):
    data, others = IN_PLACE[name]
    results = []
    for lib in (torch, autojit):
        x = lib.tensor(data.copy())
        before = x._version
        returned = getattr(lib, name)(x, *others(lib))
        assert returned is x, f"{lib.__name__}.{name} returned another tensor"
        results.append((x.numpy().copy(), str(x.dtype).split(".")[-1], x._version - before))
    (expected, expected_dtype, expected_bump), (actual, dtype, bump) = results
    assert dtype == expected_dtype
    np.testing.assert_allclose(actual, expected, rtol=1e-12, atol=1e-12)
    assert bump == expected_bump


M = np.arange(24.0).reshape(2, 3, 4)

# name -> the call, as a function of the library and the tensor made from M
COPIES = {
    "alias_copy": lambda L, x: L.alias_copy(x),
    "as_strided_copy": lambda L, x: L.as_strided_copy(x, (2, 2), (4, 1), 1),
    "detach_copy": lambda L, x: L.detach_copy(x),
    "diagonal_copy": lambda L, x: L.diagonal_copy(x, 1, 1, 2),
    "expand_copy": lambda L, x: L.expand_copy(x[:, :1], (2, 5, 4)),
    "permute_copy": lambda L, x: L.permute_copy(x, (2, 0, 1)),
    "select_copy": lambda L, x: L.select_copy(x, 1, 2),
    "slice_copy": lambda L, x: L.slice_copy(x, 2, 1, 4, 2),
    "split_copy": lambda L, x: L.split_copy(x, 2, 2),
    "split_with_sizes_copy": lambda L, x: L.split_with_sizes_copy(x, [1, 3], 2),
    "squeeze_copy": lambda L, x: L.squeeze_copy(x[:, :1], 1),
    "t_copy": lambda L, x: L.t_copy(x[0]),
    "transpose_copy": lambda L, x: L.transpose_copy(x, 0, 2),
    "unbind_copy": lambda L, x: L.unbind_copy(x, 1),
    "unfold_copy": lambda L, x: L.unfold_copy(x, 2, 2, 1),
    "unsqueeze_copy": lambda L, x: L.unsqueeze_copy(x, 1),
    "view_copy": lambda L, x: L.view_copy(x, (6, 4)),
    "view_as_complex_copy": lambda L, x: L.view_as_complex_copy(x[..., :2].contiguous()),
    "view_as_real_copy": lambda L, x: L.view_as_real_copy(
        L.view_as_complex(x[..., :2].contiguous())),
}


def _flat(result) -> list:
    return [item for part in result for item in _flat(part)] \
        if isinstance(result, (tuple, list)) else [result]


@pytest.mark.parametrize("name", sorted(COPIES))
def test_copy_forms_like_torch_in_memory_of_their_own(name):
    expected = _flat(COPIES[name](torch, torch.tensor(M)))
    x = autojit.tensor(M)
    actual = _flat(COPIES[name](autojit, x))
    assert len(actual) == len(expected)
    for mine, theirs in zip(actual, expected):
        assert tuple(mine.shape) == tuple(theirs.shape)
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
        assert not np.shares_memory(mine.numpy(), x.numpy()), f"{name} shares memory"


# name -> the call; each result's values, and whether it is the argument itself, like torch's
OTHERS = {
    "detach": lambda L, x: L.detach(x * 2),
    "detach_": lambda L, x: L.detach_(x * 2),
    "resize_as_": lambda L, x: L.resize_as_(x.detach().clone(), x[:, :2]),
    "resolve_conj": lambda L, x: L.resolve_conj(x),
    "resolve_neg": lambda L, x: L.resolve_neg(x),
    "_neg_view": lambda L, x: L._neg_view(x).resolve_neg(),  # (numpy() refuses the bit)
    "unsafe_chunk": lambda L, x: L.unsafe_chunk(x, 2, 2),
    "unsafe_split": lambda L, x: L.unsafe_split(x, 3, 2),
    "unsafe_split_with_sizes": lambda L, x: L.unsafe_split_with_sizes(x, [1, 3], 2),
}


@pytest.mark.parametrize("name", sorted(OTHERS))
def test_other_forms_like_torch(name):
    x_torch = torch.tensor(M, requires_grad=True)
    x = autojit.tensor(M, requires_grad=True)
    expected = _flat(OTHERS[name](torch, x_torch))
    actual = _flat(OTHERS[name](autojit, x))
    assert len(actual) == len(expected)
    for mine, theirs in zip(actual, expected):
        assert tuple(mine.shape) == tuple(theirs.shape)
        assert mine.requires_grad == theirs.requires_grad
        assert (mine is x) == (theirs is x_torch)
        np.testing.assert_array_equal(mine.detach().numpy(), theirs.detach().numpy())


# name -> a question about a tensor, answered with a Python value
QUESTIONS = {
    "get_device": lambda L, x: L.get_device(x),
    "is_conj": lambda L, x: L.is_conj(x),
    "is_inference": lambda L, x: L.is_inference(x),
    "is_neg": lambda L, x: L.is_neg(x),
    "is_signed": lambda L, x: (L.is_signed(x), L.is_signed(x.to(L.uint8))),
}


@pytest.mark.parametrize("name", sorted(QUESTIONS))
def test_questions_like_torch(name):
    assert QUESTIONS[name](autojit, autojit.tensor(M)) == QUESTIONS[name](torch, torch.tensor(M))


@pytest.mark.parametrize("offset", [None, 0, 7, 10])
def test_as_strided_of_a_view_made_a_leaf_reads_its_bases_storage_as_torch(offset):
    # base[5:15].requires_grad_(): as_strided reads the base's storage around the view, and
    # the gradient reaches the view's own elements only
    results = []
    for library in (autojit, torch):
        base = library.tensor(np.arange(20.0))
        view = base[5:15].requires_grad_()
        extra = {} if offset is None else {"storage_offset": offset}
        out = library.as_strided(view, (2, 2), (1, 2), **extra)
        grad, = library.autograd.grad((out * library.tensor([[1.0, 2.0], [3.0, 4.0]])).sum(),
                                      view)
        results.append((out.tolist(), grad.tolist()))
    assert results[0] == results[1]
