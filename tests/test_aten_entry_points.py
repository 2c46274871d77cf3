"""torch's aten entry points (ops/aten_entry_points.py, nn/aten_entry_points.py) and the aten
namespace (`autojit.ops.aten`, torch.ops.aten under the drop-in) against torch, beyond what
torch's op database samples (tests/test_opinfo.py runs those): the namespace's objects and
errors, overload selection, the statistics' differentiability, segment reductions' edge cases
and errors and their compiled form, the masked index ops with whole dims and empty inputs, and
native_layer_norm's second order where torch's own fails (weight None, bias given).
"""

from __future__ import annotations

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")

aten = autojit.ops.aten


def _pair(array, grad: bool = False):
    array = np.asarray(array)
    theirs = torch.tensor(array, requires_grad=grad)
    mine = autojit.tensor(array)
    if grad:
        mine.requires_grad_(True)
    return mine, theirs


def _close(mine, theirs, **tolerance) -> None:
    assert tuple(mine.shape) == tuple(theirs.shape)
    assert str(mine.dtype).split(".")[-1] == str(theirs.dtype).split(".")[-1]
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(),
                               **({"rtol": 1e-10, "atol": 1e-12} | tolerance))


def _raises_as_torch(mine, theirs) -> None:
    with pytest.raises(Exception) as their_error:
        theirs()
    with pytest.raises(type(their_error.value)) as my_error:
        mine()
    assert str(my_error.value) == str(their_error.value)


# ---- the namespace ------------------------------------------------------------------------------

def test_namespace_objects_as_torch_names_them():
    packet, overload = aten.slice, aten.slice.Tensor
    assert (str(packet), repr(packet), packet.overloads()) == (
        str(torch.ops.aten.slice), repr(torch.ops.aten.slice), torch.ops.aten.slice.overloads())
    assert (str(overload), repr(overload), overload.name(), overload._overloadname) == (
        str(torch.ops.aten.slice.Tensor), repr(torch.ops.aten.slice.Tensor),
        torch.ops.aten.slice.Tensor.name(), "Tensor")
    assert overload.overloadpacket is packet
    assert aten.native_layer_norm.default.name() == "aten::native_layer_norm"


def test_namespace_errors_as_torch():
    _raises_as_torch(lambda: aten.no_such_operator, lambda: torch.ops.aten.no_such_operator)
    _raises_as_torch(lambda: aten.slice.no_such_overload,
                     lambda: torch.ops.aten.slice.no_such_overload)


def test_packet_call_picks_the_overload():
    x = np.arange(24.0).reshape(1, 2, 3, 4)
    mine, theirs = _pair(x)
    # positional scale_factors: the vec overload; keyword scales: the default one
    _close(aten._upsample_bilinear2d_aa(mine, None, False, [0.5, 0.5]),
           torch.ops.aten._upsample_bilinear2d_aa(theirs, None, False, [0.5, 0.5]))
    _close(aten._upsample_bilinear2d_aa(mine, [2, 2], False, scales_h=0.6, scales_w=0.6),
           torch.ops.aten._upsample_bilinear2d_aa(theirs, [2, 2], False, scales_h=0.6,
                                                  scales_w=0.6))
    # the list and string overloads (TorchScript's; torch's Python binding converts no list)
    assert aten.slice([1, 2, 3, 4], 1, None, 2) == [2, 4]
    assert aten.slice.str("abcdef", -3) == "def"
    _close(aten.slice(mine, 3, 1), torch.ops.aten.slice(theirs, 3, 1))
    _raises_as_torch(lambda: aten.slice.Tensor(autojit.tensor(1.0)),
                     lambda: torch.ops.aten.slice.Tensor(torch.tensor(1.0)))
    _raises_as_torch(lambda: aten.slice.Tensor(mine, 0, 0, 1, 0),
                     lambda: torch.ops.aten.slice.Tensor(theirs, 0, 0, 1, 0))


# ---- normalizations -----------------------------------------------------------------------------

def test_statistics_differentiable_as_torch_s():
    x = np.random.default_rng(0).standard_normal((4, 6, 3))
    mine, theirs = _pair(x, grad=True)
    cases = (
        (lambda L, t: L.native_layer_norm(t, [3], None, None, 1e-5)),
        (lambda L, t: L.native_group_norm(t, None, None, 4, 6, 3, 2, 1e-5)),
        (lambda L, t: L.native_batch_norm(t, None, None, None, None, True, 0.1, 1e-5)),
        (lambda L, t: L._native_batch_norm_legit(t, None, None, True, 0.1, 1e-5)),
    )
    for case in cases:
        my_result, their_result = case(autojit, mine), case(torch, theirs)
        assert [t.requires_grad for t in my_result] == [t.requires_grad for t in their_result]
        for a, b in zip(my_result, their_result, strict=True):
            _close(a, b, rtol=1e-9, atol=1e-9)


def test_native_layer_norm_second_order_without_weight():
    """torch's own double backward fails here (pytorch/pytorch#79705): compared with that of
    torch's nn.functional.layer_norm, the same function."""
    rng = np.random.default_rng(1)
    x, bias = rng.standard_normal((2, 3, 4)), rng.standard_normal((3, 4))
    upstream, second = rng.standard_normal((2, 3, 4)), rng.standard_normal((2, 3, 4))
    my_x, their_x = _pair(x, grad=True)
    my_bias, their_bias = _pair(bias, grad=True)
    output = autojit.native_layer_norm(my_x, [3, 4], None, my_bias, 0.5)[0]
    (gradient,) = autojit.autograd.grad(output, [my_x], autojit.tensor(upstream),
                                        create_graph=True)
    mine = autojit.autograd.grad(gradient, [my_x], autojit.tensor(second))[0]
    their_output = torch.nn.functional.layer_norm(their_x, [3, 4], None, their_bias, 0.5)
    (their_gradient,) = torch.autograd.grad(their_output, [their_x], torch.tensor(upstream),
                                            create_graph=True)
    theirs = torch.autograd.grad(their_gradient, [their_x], torch.tensor(second))[0]
    _close(gradient, their_gradient, rtol=1e-9, atol=1e-9)
    _close(mine, theirs, rtol=1e-9, atol=1e-9)


def test_batch_norm_entry_points_update_the_running_statistics():
    x = np.random.default_rng(2).standard_normal((5, 3, 2))
    mine, theirs = _pair(x)
    my_mean, their_mean = _pair(np.zeros(3))
    my_var, their_var = _pair(np.ones(3))
    for _ in range(2):
        result = aten._batch_norm_with_update(mine, None, None, my_mean, my_var, 0.3, 1e-5)
        expected = torch.ops.aten._batch_norm_with_update(theirs, None, None, their_mean,
                                                          their_var, 0.3, 1e-5)
        for a, b in zip(result, expected, strict=True):
            _close(a, b, rtol=1e-9, atol=1e-9)
    _close(my_mean, their_mean)
    _close(my_var, their_var)
    result = autojit._native_batch_norm_legit_no_training(mine, None, None, my_mean, my_var,
                                                          0.3, 1e-5)
    expected = torch._native_batch_norm_legit_no_training(theirs, None, None, their_mean,
                                                          their_var, 0.3, 1e-5)
    for a, b in zip(result, expected, strict=True):
        _close(a, b, rtol=1e-9, atol=1e-9)


# ---- segment reductions -------------------------------------------------------------------------

@pytest.mark.parametrize("reduce", ["sum", "mean", "max", "min", "prod"])
@pytest.mark.parametrize("initial", [None, 2.0])
def test_segment_reduce_empty_segments_ties_and_zeros(reduce, initial):
    data = np.array([[0.0, 3.0], [3.0, 0.0], [2.0, 3.0], [1.0, -1.0], [0.0, 0.0]])
    my_data, their_data = _pair(data, grad=True)
    for bounds in ({"lengths": np.array([3, 0, 2])}, {"offsets": np.array([0, 3, 3, 5])}):
        kind, values = next(iter(bounds.items()))
        mine = autojit.segment_reduce(my_data, reduce, initial=initial,
                                      **{kind: autojit.tensor(values)})
        theirs = torch.segment_reduce(their_data, reduce, initial=initial,
                                      **{kind: torch.tensor(values)})
        _close(mine, theirs)
        weights = np.random.default_rng(3).standard_normal(tuple(theirs.shape))
        if reduce in ("max", "min"):
            # torch's kernel divides the gradient among tied extremes only where it is
            # positive (its `grad_input > 0` test); autojit divides it always
            weights = np.abs(weights)
        (my_grad,) = autojit.autograd.grad(mine, [my_data], autojit.tensor(weights))
        (their_grad,) = torch.autograd.grad(theirs, [their_data], torch.tensor(weights))
        _close(my_grad, their_grad)


def test_segment_reduce_along_an_inner_axis():
    data = np.arange(12.0).reshape(2, 6)
    lengths = np.array([[2, 4], [5, 1]])
    mine, theirs = _pair(data)
    _close(autojit.segment_reduce(mine, "max", lengths=autojit.tensor(lengths), axis=1),
           torch.segment_reduce(theirs, "max", lengths=torch.tensor(lengths), axis=1))


def test_segment_reduce_errors_as_torch():
    mine, theirs = _pair(np.arange(5.0))
    cases = ({"lengths": np.array([2, 2])}, {"lengths": np.array([6, -1])}, {},
             {"indices": np.array([0, 1])}, {"lengths": np.array([2.0, 3.0])})
    for case in cases:
        _raises_as_torch(
            lambda case=case: autojit.segment_reduce(
                mine, "sum", **{k: autojit.tensor(v) for k, v in case.items()}),
            lambda case=case: torch.segment_reduce(
                theirs, "sum", **{k: torch.tensor(v) for k, v in case.items()}))
    _raises_as_torch(lambda: autojit.segment_reduce(mine, "any", lengths=autojit.tensor([5])),
                     lambda: torch.segment_reduce(theirs, "any", lengths=torch.tensor([5])))
    # torch's kernel checks the segments' lengths also when unsafe, and those of offsets
    for kind, values in (("lengths", [6, -1]), ("offsets", [0, 3, 2, 5])):
        _raises_as_torch(
            lambda kind=kind, values=values: autojit.segment_reduce(
                mine, "sum", unsafe=True, **{kind: autojit.tensor(values)}),
            lambda kind=kind, values=values: torch.segment_reduce(
                theirs, "sum", unsafe=True, **{kind: torch.tensor(values)}))


def test_segment_reduce_checks_compiled():
    """The checks are check_index nodes: a compiled call raises eager's error."""
    function = autojit.compile(lambda data, lengths: autojit.segment_reduce(
        data, "max", lengths=lengths), fullgraph=True)
    data = autojit.tensor(np.arange(5.0))
    _close(function(data, autojit.tensor([2, 3])),
           torch.segment_reduce(torch.tensor(np.arange(5.0)), "max",
                                lengths=torch.tensor([2, 3])))
    for lengths in ([2, 2], [6, -1]):
        _raises_as_torch(lambda lengths=lengths: function(data, autojit.tensor(lengths)),
                         lambda lengths=lengths: torch.segment_reduce(
                             torch.tensor(np.arange(5.0)), "max", lengths=torch.tensor(lengths)))


def test_segment_reduce_compiles_with_the_lengths_an_argument():
    function = autojit.compile(lambda data, lengths: autojit.segment_reduce(
        data, "mean", lengths=lengths, unsafe=True), fullgraph=True)
    data = autojit.tensor(np.arange(10.0).reshape(5, 2))
    for lengths in ([1, 4], [3, 2], [0, 5]):
        expected = torch.segment_reduce(torch.tensor(data.numpy()), "mean",
                                        lengths=torch.tensor(lengths))
        _close(function(data, autojit.tensor(lengths)), expected)


# ---- the masked index ops, _chunk_cat, the softmax backwards ------------------------------------

def test_masked_index_ops_with_a_whole_dim_and_empty_inputs():
    rng = np.random.default_rng(4)
    x = rng.standard_normal((3, 4))
    mask = np.array([[True], [False]])
    index = np.array([[0], [7]])
    mine, theirs = _pair(x, grad=True)
    _close(autojit._unsafe_masked_index(mine, autojit.tensor(mask),
                                        [autojit.tensor(index), None], 1.5),
           torch.ops.aten._unsafe_masked_index(theirs, torch.tensor(mask),
                                               [torch.tensor(index), None], 1.5))
    values, mask3 = rng.standard_normal((2, 1, 4)), mask.reshape(2, 1, 1)
    _close(autojit._unsafe_masked_index_put_accumulate(
        mine, autojit.tensor(mask3), [autojit.tensor(index), None], autojit.tensor(values)),
        torch.ops.aten._unsafe_masked_index_put_accumulate(
            theirs, torch.tensor(mask3), [torch.tensor(index), None], torch.tensor(values)))
    _raises_as_torch(
        lambda: autojit._unsafe_masked_index_put_accumulate(
            mine, autojit.tensor(mask), [autojit.tensor(index), None],
            autojit.tensor(values[:, 0])),
        lambda: torch.ops.aten._unsafe_masked_index_put_accumulate(
            theirs, torch.tensor(mask), [torch.tensor(index), None],
            torch.tensor(values[:, 0])))
    empty_mine, empty_theirs = _pair(np.zeros((0, 4)))
    _close(autojit._unsafe_masked_index(empty_mine, autojit.tensor(mask),
                                        [autojit.tensor(index), None], 1.5),
           torch.ops.aten._unsafe_masked_index(empty_theirs, torch.tensor(mask),
                                               [torch.tensor(index), None], 1.5))
    _raises_as_torch(
        lambda: autojit._unsafe_masked_index(mine, autojit.tensor(mask),
                                             [autojit.tensor(index.astype(np.float64))], 0),
        lambda: torch._unsafe_masked_index(theirs, torch.tensor(mask),
                                           [torch.tensor(index.astype(np.float64))], 0))


def test_chunk_cat_and_softmax_backward_errors_as_torch():
    a, b = _pair(np.ones((2, 3)))
    c, d = _pair(np.ones((2, 3), dtype=np.float32))
    _raises_as_torch(lambda: autojit._chunk_cat([a, c], 0, 2),
                     lambda: torch._chunk_cat([b, d], 0, 2))
    _raises_as_torch(lambda: autojit._softmax_backward_data(a, c, 1, autojit.float64),
                     lambda: torch._softmax_backward_data(b, d, 1, torch.float64))
    y_mine, y_theirs = _pair(np.full((2, 3), 1 / 3))
    _close(autojit._log_softmax_backward_data(a, y_mine, 1, autojit.float64),
           torch._log_softmax_backward_data(b, y_theirs, 1, torch.float64))


def test_native_batch_norm_writes_its_three_results_into_out():
    data = np.random.default_rng(3).standard_normal((4, 3)).astype(np.float32)
    results = []
    for library in (autojit, torch):
        out = tuple(library.empty(0) for _ in range(3))
        got = library.native_batch_norm(library.tensor(data), None, None, None, None, True, 0.1,
                                        1e-5, out=out)
        assert all(a is b for a, b in zip(got, out, strict=True))
        results.append([t.numpy() for t in got])
        with pytest.raises(TypeError, match="expected tuple of 3 elements but got 1"):
            library.native_batch_norm(library.tensor(data), None, None, None, None, True, 0.1,
                                      1e-5, out=(library.empty(0),))
    for mine, theirs in zip(*results, strict=True):
        np.testing.assert_allclose(mine, theirs, rtol=1e-5, atol=1e-6)
