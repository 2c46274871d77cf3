"""The scatter/gather family against torch: values, gradients and errors (tests/torch_compare.py).

scatter (a tensor or a value, reduce=), scatter_add, scatter_reduce (every reduction, with and
without self, with ties and zeros), index_add/index_copy/index_fill/index_put, put, take,
masked_fill/masked_scatter/masked_select, nonzero_static, gather and take_along_dim, their
method and in-place forms.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_compare import same_as_torch, torch

import autojit

rng = np.random.default_rng(7)
X = rng.standard_normal((3, 4))
INDEX = np.array([[0, 1, 2, 0], [2, 0, 0, 1]])
SRC = rng.standard_normal((2, 4))
# Ties and zeros, where the reductions' gradients are defined by convention.
TIED = np.array([[1.0, 2.0, 0.0, 3.0], [1.0, 5.0, 2.0, 0.0], [4.0, 2.0, 2.0, -1.0]])
TIED_SRC = np.array([[1.0, 2.0, 0.0, 3.0], [4.0, 2.0, 0.0, 3.0]])
ZEROS_INDEX = np.array([[0, 0, 0, 0], [0, 0, 0, 0]])
I = np.array  # noqa: E741


def _in_place(method):
    """x.method_(...) on a copy of x (a leaf cannot be written in place)."""
    def function(t, x, *args, **kwargs):
        return getattr(x * 1, method)(*args, **kwargs)

    return function


VALUE_CASES = {
    # scatter
    "scatter_src_dim0": (lambda t, x, i, s: t.scatter(x, 0, i, s), X, INDEX, SRC),
    "scatter_src_dim1": (lambda t, x, i, s: x.scatter(1, i, s), X, INDEX, SRC),
    "scatter_src_larger": (lambda t, x, i, s: t.scatter(x, 1, i[:, :2], s), X, INDEX,
                           rng.standard_normal((3, 5))),
    "scatter_value": (lambda t, x, i: t.scatter(x, 1, i, 2.5), X, INDEX),
    "scatter_value_int_truncates": (lambda t, x, i: t.scatter(x, 1, i, 2.7), I([[1, 2, 3]]),
                                    I([[2, 0]])),
    "scatter_duplicates_last_wins": (lambda t, x, i, s: t.scatter(x, 0, i, s), np.zeros(4),
                                     I([1, 1, 1]), I([1.0, 2.0, 3.0])),
    "scatter_in_place": (lambda t, x, i, s: _in_place("scatter_")(t, x, 0, i, s), X, INDEX,
                         SRC),
    "scatter_reduce_add": (lambda t, x, i, s: x.scatter(0, i, s, reduce="add"), X, INDEX, SRC),
    "scatter_value_multiply": (lambda t, x, i: x.scatter(0, i, 2.0, reduce="multiply"), X,
                               INDEX),
    "scatter_0d": (lambda t, x, i, s: t.scatter(x, 0, i, s), np.array(1.0), I(0),
                   np.array(5.0)),
    "scatter_empty_index": (lambda t, x, i, s: t.scatter(x, 0, i, s), X,
                            np.zeros((0, 4), np.int64), SRC),
    "scatter_int32_index": (lambda t, x, i, s: t.scatter(x, 0, i, s), X,
                            INDEX.astype(np.int32), SRC),
    # scatter_add
    "scatter_add": (lambda t, x, i, s: t.scatter_add(x, 0, i, s), X, INDEX, SRC),
    "scatter_add_in_place": (lambda t, x, i, s: _in_place("scatter_add_")(t, x, 1, i, s), X,
                             INDEX, SRC),
    # gather and take_along_dim
    "gather_int32": (lambda t, x, i: t.gather(x, 1, i), X, INDEX.astype(np.int32)),
    "take_along_dim_wraps": (lambda t, x, i: t.take_along_dim(x, i, 0), X, INDEX + 5),
    "take_along_dim_broadcasts": (lambda t, x, i: t.take_along_dim(x, i, 1), X, I([[0], [3],
                                                                                    [1]])),
    "take_along_dim_flat": (lambda t, x, i: t.take_along_dim(x, i), X, I([11, 0, 3])),
    # index_add, index_copy, index_fill
    "index_add": (lambda t, x, i, s: t.index_add(x, 1, i, s), X, I([0, 2]),
                  rng.standard_normal((3, 2))),
    "index_add_alpha_duplicates": (lambda t, x, i, s: x.index_add(0, i, s, alpha=2.5), X,
                                   I([1, 1, 0]), rng.standard_normal((3, 4))),
    "index_add_int_alpha": (lambda t, x, i, s: x.index_add(0, i, s, alpha=2), I([[1, 2], [3, 4]]),
                            I([1, 1]), I([[1, 2], [3, 4]])),
    "index_add_in_place": (lambda t, x, i, s: _in_place("index_add_")(t, x, 0, i, s), X,
                           I([2, 0]), rng.standard_normal((2, 4))),
    "index_add_0d": (lambda t, x, i, s: x.index_add(0, i, s), np.array(3.0), I([0]),
                     np.array(1.0)),
    "index_copy": (lambda t, x, i, s: t.index_copy(x, 1, i, s), X, I([3, 0]),
                   rng.standard_normal((3, 2))),
    "index_copy_in_place": (lambda t, x, i, s: _in_place("index_copy_")(t, x, 0, i, s), X,
                            I([2]), rng.standard_normal((1, 4))),
    "index_fill": (lambda t, x, i: t.index_fill(x, 1, i, -1.5), X, I([0, -1])),
    "index_fill_tensor_value": (lambda t, x, i, v: x.index_fill(0, i, v), X, I([1]),
                                np.array(2.0)),
    "index_fill_int_value": (lambda t, x, i: x.index_fill(1, i, 1.7), I([[1, 2], [3, 4]]),
                             I([0])),
    "index_fill_in_place": (lambda t, x, i: _in_place("index_fill_")(t, x, 0, i, 0.5), X,
                            I([0, 2])),
    # index_put, put, take
    "index_put": (lambda t, x, i, v: t.index_put(x, (i,), v), X, I([0, 2]),
                  rng.standard_normal(4)),
    "index_put_accumulate": (lambda t, x, i, j, v: x.index_put((i, j), v, accumulate=True), X,
                             I([0, 0, 2]), I([1, 1, 3]), rng.standard_normal(3)),
    "index_put_in_place": (lambda t, x, i, v: _in_place("index_put_")(t, x, (i,), v), X,
                           I([1]), np.array(4.0)),
    "index_put_mask": (lambda t, x, m, v: x.index_put((m,), v), X, X > 0, np.array(4.0)),
    "index_put_mask_other_dtype": (lambda t, x, m, v: x.index_put((m,), v.float()), X, X > 0,
                                   np.array(4.0)),
    "index_put_mask_one_element": (lambda t, x, m, v: x.index_put((m,), v), X,
                                   np.array([True, False, True]), np.ones((1, 1, 1))),
    "take": (lambda t, x, i: t.take(x, i), X, I([[0, 11], [-12, 5]])),
    "take_0d_index": (lambda t, x, i: x.take(i), X, I(-1)),
    "put": (lambda t, x, i, s: t.put(x, i, s), X, I([0, -1, 5]), rng.standard_normal(3)),
    "put_accumulate": (lambda t, x, i, s: x.put(i, s, accumulate=True), X, I([[0, 0], [5, 0]]),
                       rng.standard_normal((2, 2))),
    "put_in_place": (lambda t, x, i, s: _in_place("put_")(t, x, i, s), X, I([1, 1]),
                     rng.standard_normal(2)),
    # masks
    "masked_fill_broadcasts": (lambda t, x, m: t.masked_fill(x[:1], m, 1.0), X, X > 0),
    "masked_fill_tensor_value": (lambda t, x, m, v: x.masked_fill(m, v), X, X > 0,
                                 np.array(1.5)),
    "masked_fill_in_place": (lambda t, x, m: _in_place("masked_fill_")(t, x, m, 2.0), X, X > 0),
    "masked_scatter": (lambda t, x, m, s: t.masked_scatter(x, m, s), X, X > 0,
                       rng.standard_normal(12)),
    "masked_scatter_broadcast_mask": (lambda t, x, m, s: x.masked_scatter(m, s), X,
                                      I([True, False, True, False]),
                                      rng.standard_normal((4, 3))),
    "masked_scatter_broadcast_self": (lambda t, x, m, s: x.masked_scatter(m, s), X[0],
                                      X > 0, rng.standard_normal(10)),
    "masked_scatter_in_place": (lambda t, x, m, s: _in_place("masked_scatter_")(t, x, m, s), X,
                                X < 0, rng.standard_normal(13)),
    "masked_select": (lambda t, x, m: t.masked_select(x, m), X, X > 0),
    "masked_select_broadcast": (lambda t, x, m: x.masked_select(m), X[0], X > 0),
    "nonzero_static": (lambda t, x: t.nonzero_static(x, size=4), (X > 0).astype(np.int64)),
    "nonzero_static_fill": (lambda t, x: t.nonzero_static(x, size=2, fill_value=7),
                            I([0.0, 0.0, 3.0])),
}

for _reduce in ("sum", "prod", "mean", "amax", "amin"):
    for _include in (True, False):
        VALUE_CASES[f"scatter_reduce_{_reduce}_{_include}"] = (
            lambda t, x, i, s, r=_reduce, inc=_include: t.scatter_reduce(x, 0, i, s, r,
                                                                          include_self=inc),
            TIED, INDEX, TIED_SRC)
        VALUE_CASES[f"scatter_reduce_{_reduce}_{_include}_one_position"] = (
            lambda t, x, i, s, r=_reduce, inc=_include: x.scatter_reduce(0, i, s, r,
                                                                          include_self=inc),
            TIED, ZEROS_INDEX, TIED_SRC)
    VALUE_CASES[f"scatter_reduce_{_reduce}_int"] = (
        lambda t, x, i, s, r=_reduce: t.scatter_reduce(x, 0, i, s, r), I([[0, -1, 2], [3, 4, 5]]),
        I([[0, 0, 0], [0, 0, 0]]), I([[1, 2, -3], [-4, 5, 7]]))
VALUE_CASES["scatter_reduce_in_place"] = (
    lambda t, x, i, s: _in_place("scatter_reduce_")(t, x, 1, i, s, "amax", include_self=False),
    X, INDEX, SRC)


# Where torch has no gradient to compare with, the values only: scatter with reduce= is not
# differentiable in torch (autojit's is: scatter_add's and scatter_reduce's gradients), and
# torch's gradient for a src larger than the index, or an empty index, or a one-element
# value of more dims than the masked result, has the wrong shape.
VALUES_ONLY = {"scatter_reduce_add", "scatter_value_multiply", "scatter_src_larger",
               "scatter_empty_index", "index_put_mask_one_element"}


@pytest.mark.parametrize("name", sorted(VALUE_CASES))
def test_values_and_gradients_like_torch(name):
    function, *arrays = VALUE_CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch deprecates scatter(reduce=)
        same_as_torch(function, *arrays, grad=name not in VALUES_ONLY)


ERROR_CASES = {
    "scatter_float_index": (lambda t, x, i, s: t.scatter(x, 0, i, s), X, INDEX * 1.0, SRC),
    "scatter_src_dtype": (lambda t, x, i, s: t.scatter(x, 0, i, s.float()), X, INDEX, SRC),
    "scatter_index_too_large": (lambda t, x, i, s: t.scatter(x, 0, i, s), X,
                                np.zeros((2, 5), np.int64), SRC),
    "scatter_value_index_too_large": (lambda t, x, i: t.scatter(x, 0, i, 1.0), X,
                                      np.zeros((2, 5), np.int64)),
    "scatter_index_ndim": (lambda t, x, i, s: t.scatter(x, 0, i, s), X, INDEX[0], SRC),
    "scatter_src_ndim": (lambda t, x, i, s: t.scatter(x, 0, i, s[0]), X, INDEX, SRC),
    "scatter_out_of_range": (lambda t, x, i, s: t.scatter(x, 0, i, s), X, INDEX + 1, SRC),
    "scatter_negative": (lambda t, x, i, s: t.scatter(x, 1, i, s), X, INDEX - 3, SRC),
    "scatter_bad_reduce": (lambda t, x, i, s: x.scatter(0, i, s, reduce="mean"), X, INDEX, SRC),
    "scatter_dim": (lambda t, x, i, s: t.scatter(x, 2, i, s), X, INDEX, SRC),
    "scatter_add_src_number": (lambda t, x, i: t.scatter_add(x, 0, i, 1.0), X, INDEX),
    "scatter_add_index_ndim": (lambda t, x, i, s: t.scatter_add(x, 0, i, s), X, INDEX[0], SRC),
    "scatter_reduce_bad": (lambda t, x, i, s: t.scatter_reduce(x, 0, i, s, "max"), X, INDEX,
                           SRC),
    "scatter_reduce_dtype": (lambda t, x, i, s: t.scatter_reduce(x, 0, i, s.float(), "sum"), X,
                             INDEX, SRC),
    "scatter_reduce_float_index": (lambda t, x, i, s: t.scatter_reduce(x, 0, i.float(), s,
                                                                       "sum"), X, INDEX, SRC),
    "gather_ndim": (lambda t, x, i: t.gather(x, 0, i), X, INDEX[0]),
    "gather_too_large": (lambda t, x, i: t.gather(x, 0, i), X, np.zeros((2, 5), np.int64)),
    "take_along_dim_int32": (lambda t, x, i: t.take_along_dim(x, i, 0), X,
                             INDEX.astype(np.int32)),
    "take_along_dim_broadcast": (lambda t, x, i: t.take_along_dim(x, i, 1), X,
                                 I([[0], [1]])),
    "index_add_matrix_index": (lambda t, x, i, s: x.index_add(1, i, s), X, I([[0, 1]]),
                               np.ones((3, 2))),
    "index_add_float_index": (lambda t, x, i, s: x.index_add(1, i, s), X, I([0.0, 1.0]),
                              np.ones((3, 2))),
    "index_add_dtype": (lambda t, x, i, s: x.index_add(1, i, s.float()), X, I([0, 1]),
                        np.ones((3, 2))),
    "index_add_count": (lambda t, x, i, s: x.index_add(1, i, s), X, I([0, 1]),
                        np.ones((3, 3))),
    "index_add_shape": (lambda t, x, i, s: x.index_add(1, i, s), X, I([0, 1]),
                        np.ones((2, 2))),
    "index_add_source_dim": (lambda t, x, i, s: x.index_add(1, i, s), X, I([0, 1]),
                             np.ones(2)),
    "index_add_out_of_range": (lambda t, x, i, s: x.index_add(1, i, s), X, I([0, 4]),
                               np.ones((3, 2))),
    "index_add_negative": (lambda t, x, i, s: x.index_add(1, i, s), X, I([0, -1]),
                           np.ones((3, 2))),
    "index_copy_matrix_index": (lambda t, x, i, s: x.index_copy(1, i, s), X, I([[0, 1]]),
                                np.ones((3, 2))),
    "index_copy_int32_index": (lambda t, x, i, s: x.index_copy(1, i, s), X,
                               I([0, 1], dtype=np.int32), np.ones((3, 2))),
    "index_copy_dtype": (lambda t, x, i, s: x.index_copy(1, i, s.float()), X, I([0, 1]),
                         np.ones((3, 2))),
    "index_copy_ndim": (lambda t, x, i, s: x.index_copy(1, i, s), X, I([0, 1]),
                        np.ones((3, 2, 1))),
    "index_copy_slice_shape": (lambda t, x, i, s: x.index_copy(1, i, s), X, I([0, 1]),
                               np.ones((2, 2))),
    "index_copy_count": (lambda t, x, i, s: x.index_copy(1, i, s), X, I([0, 1]),
                         np.ones((3, 3))),
    "index_copy_out_of_range": (lambda t, x, i, s: x.index_copy(1, i, s), X, I([0, 4]),
                                np.ones((3, 2))),
    "index_copy_negative": (lambda t, x, i, s: x.index_copy(1, i, s), X, I([0, -1]),
                            np.ones((3, 2))),
    "index_fill_value_tensor": (lambda t, x, i, v: x.index_fill(1, i, v), X, I([0]),
                                np.ones(2)),
    "index_fill_int32_index": (lambda t, x, i: x.index_fill(1, i, 1.0), X,
                               I([0], dtype=np.int32)),
    "index_fill_matrix_index": (lambda t, x, i: x.index_fill(1, i, 1.0), X, I([[0]])),
    "index_fill_out_of_range": (lambda t, x, i: x.index_fill(1, i, 1.0), X, I([0, -5])),
    "index_put_dtype": (lambda t, x, i, v: t.index_put(x, (i,), v.float()), X, I([0]),
                        np.ones(4)),
    "index_put_number": (lambda t, x, i: t.index_put(x, (i,), 1.0), X, I([0])),
    "index_put_none": (lambda t, x, i, v: t.index_put(x, (None, i), v), X, I([0]), np.ones(3)),
    "index_put_shape": (lambda t, x, i, v: t.index_put(x, (i,), v), X, I([0]), np.ones(3)),
    "index_put_out_of_range": (lambda t, x, i, v: t.index_put(x, (i,), v), X, I([3]),
                               np.ones(4)),
    "take_int32": (lambda t, x, i: t.take(x, i), X, I([0], dtype=np.int32)),
    "take_out_of_range": (lambda t, x, i: t.take(x, i), X, I([0, 12])),
    "take_negative": (lambda t, x, i: t.take(x, i), X, I([-13])),
    "put_int32": (lambda t, x, i, s: t.put(x, i, s), X, I([0], dtype=np.int32), np.ones(1)),
    "put_dtype": (lambda t, x, i, s: t.put(x, i, s.float()), X, I([0]), np.ones(1)),
    "put_count": (lambda t, x, i, s: t.put(x, i, s), X, I([0, 1]), np.ones(3)),
    "put_out_of_range": (lambda t, x, i, s: _in_place("put_")(t, x, i, s), X, I([12]),
                         np.ones(1)),
    "masked_fill_int_mask": (lambda t, x, m: x.masked_fill(m, 1.0), X, (X > 0).astype(np.int32)),
    "masked_fill_vector_value": (lambda t, x, m, v: x.masked_fill(m, v), X, X > 0, np.ones(2)),
    "masked_fill_in_place_broadcast": (lambda t, x, m: _in_place("masked_fill_")(t, x[:1], m,
                                                                                 1.0), X, X > 0),
    "masked_scatter_int_mask": (lambda t, x, m, s: x.masked_scatter(m, s), X,
                                (X > 0).astype(np.int32), np.ones(12)),
    "masked_scatter_dtype": (lambda t, x, m, s: x.masked_scatter(m, s.float()), X, X > 0,
                             np.ones(12)),
    "masked_scatter_short_source": (lambda t, x, m, s: x.masked_scatter(m, s), X,
                                    np.ones((3, 4), bool), np.ones(11)),
    "masked_select_int_mask": (lambda t, x, m: x.masked_select(m), X, (X > 0).astype(np.int32)),
    "nonzero_static_negative_size": (lambda t, x: t.nonzero_static(x, size=-1), X),
}


@pytest.mark.parametrize("name", sorted(ERROR_CASES))
def test_errors_like_torch(name):
    function, *arrays = ERROR_CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # torch deprecates scatter(reduce=)
        same_as_torch(function, *arrays, grad=False)


def test_scatter_reduce_prod_second_order_like_torch():
    """The prod VJP's exclusive products hold up under double backward (one zero per slot)."""
    x = np.array([[2.0, 0.0, 3.0], [1.5, -1.0, 0.5]])
    src = np.array([[0.0, 2.0, 4.0], [3.0, 0.5, 0.0]])
    index = np.array([[0, 1, 0], [1, 1, 1]])
    grads = []
    for framework in (torch, autojit):
        a = framework.tensor(x, requires_grad=True)
        b = framework.tensor(src, requires_grad=True)
        out = framework.scatter_reduce(a, 0, framework.tensor(index), b, "prod")
        first = framework.autograd.grad((out * out).sum(), (a, b), create_graph=True)
        grads.append([g.detach().numpy() for g in framework.autograd.grad(
            sum(g.sum() for g in first), (a, b))])
    for mine, theirs in zip(grads[1], grads[0], strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10)


def test_masked_select_splits_the_graph_and_masked_scatter_compiles():
    x = autojit.tensor(X)
    mask = autojit.tensor(X > 0)
    source = autojit.arange(12.0, dtype=autojit.float64)[:11]
    compiled = autojit.compile(lambda a, m: a.masked_select(m) * 2)
    # The result's length depends on the mask's values: the graph splits there, and both
    # segments compile, with no graph break.
    with warnings.catch_warnings():
        warnings.simplefilter("error", autojit.CompileWarning)
        result = compiled(x, mask)
    stats = compiled.stats()
    assert (stats.split_breaks, stats.graph_breaks, stats.eager_calls) == (1, 0, 0)
    np.testing.assert_array_equal(result.numpy(), X[X > 0] * 2)
    scatter = autojit.compile(lambda a, m, s: a.masked_scatter(m, s) + 1, fullgraph=True)
    expected = X.copy()
    expected[X > 0] = np.arange(11.0)[:(X > 0).sum()]
    np.testing.assert_array_equal(scatter(x, mask, source).numpy(), expected + 1)
    # Too few source elements for the mask: eager's error, from the compiled plan.
    with pytest.raises(RuntimeError, match="Number of elements of source < number of ones"):
        scatter(x, autojit.ones(3, 4, dtype=autojit.bool), source)
    assert len(scatter.executables) == 1


OUT_CASES = {
    "scatter": (lambda t, x, i, s, o: t.scatter(x, 0, i, s, out=o), X, INDEX, SRC, np.zeros(0)),
    "scatter_add": (lambda t, x, i, s, o: t.scatter_add(x, 1, i, s, out=o), X, INDEX, SRC,
                    np.zeros((3, 4))),
    "scatter_reduce": (lambda t, x, i, s, o: t.scatter_reduce(x, 0, i, s, "amin", out=o), X,
                       INDEX, SRC, np.zeros((3, 4))),
    "index_add": (lambda t, x, i, s, o: t.index_add(x, 0, i, s, out=o), X, I([2, 0]),
                  np.ones((2, 4)), np.zeros((3, 4))),
    "index_copy": (lambda t, x, i, s, o: t.index_copy(x, 0, i, s, out=o), X, I([2, 0]),
                   np.ones((2, 4)), np.zeros(0)),
    "take": (lambda t, x, i, o: t.take(x, i, out=o), X, I([0, 5]), np.zeros(2)),
    "take_resized": (lambda t, x, i, o: t.take(x, i, out=o), X, I([0, 5]), np.zeros(3)),
    "masked_select": (lambda t, x, m, o: t.masked_select(x, m, out=o), X, X > 0, np.zeros(0)),
    "nonzero_static": (lambda t, x, o: t.nonzero_static(x, size=3, out=o), X > 0,
                       np.zeros((3, 2), np.int64)),
    "gather": (lambda t, x, i, o: t.gather(x, 1, i, out=o), X, INDEX, np.zeros((2, 4))),
    "index_select": (lambda t, x, i, o: t.index_select(x, 1, i, out=o), X, I([3, 1]),
                     np.zeros((3, 2))),
    "take_along_dim": (lambda t, x, i, o: t.take_along_dim(x, i, 0, out=o), X, INDEX,
                       np.zeros((2, 4))),
    # errors: out's dtype, autograd
    "take_dtype": (lambda t, x, i, o: t.take(x, i, out=o.float()), X, I([0]), np.zeros(1)),
    "scatter_dtype": (lambda t, x, i, s, o: t.scatter(x, 0, i, s, out=o.float()), X, INDEX, SRC,
                      np.zeros((3, 4))),
    "masked_select_dtype": (lambda t, x, m, o: t.masked_select(x, m, out=o.float()), X, X > 0,
                            np.zeros(0)),
    "nonzero_static_dtype": (lambda t, x, o: t.nonzero_static(x, size=3, out=o), X > 0,
                             np.zeros((3, 2))),
    "gather_requires_grad": (lambda t, x, i, o: t.gather(x.requires_grad_(), 1, i, out=o), X,
                             INDEX, np.zeros((2, 4))),
}


@pytest.mark.parametrize("name", sorted(OUT_CASES))
def test_out_argument_like_torch(name):
    function, *arrays = OUT_CASES[name]

    def returning_out(t, *tensors):
        out = tensors[-1]
        result = function(t, *tensors)
        assert result is out
        return result

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # the resize warning, tested below
        same_as_torch(returning_out, *arrays, grad=False)


def test_out_of_another_shape_is_resized_with_torch_warning():
    out = autojit.zeros(3, dtype=autojit.float64)
    with pytest.warns(UserWarning, match=r"resized since it had shape \[3\], which does not "
                                         r"match the required output shape \[2\]"):
        autojit.take(autojit.tensor(X), autojit.tensor([0, 5]), out=out)
    assert out.tolist() == [X.reshape(-1)[0], X.reshape(-1)[5]]


def test_scatter_reduce_max_and_min_run_forward_but_not_backward_as_torch():
    messages = []
    for framework in (torch, autojit):
        x = framework.tensor(X, requires_grad=True)
        out = framework.scatter_reduce(x, 0, framework.tensor(INDEX), framework.tensor(SRC),
                                       "max")
        assert np.allclose(out.detach().numpy(), torch.scatter_reduce(
            torch.tensor(X), 0, torch.tensor(INDEX), torch.tensor(SRC), "amax").numpy())
        with pytest.raises(RuntimeError) as raised:
            out.sum().backward()
        messages.append(str(raised.value))
    assert messages[1] == messages[0]
