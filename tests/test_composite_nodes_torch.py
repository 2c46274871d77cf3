"""The one node torch gives the result of an op that autojit writes as a composite
(registry.share_node with the values the node shows), against torch: interpolate's upsampling
nodes, addbmm, unfold and fold (Im2Col, Col2Im), pdist, logit with eps, linalg.qr, div with a
rounding mode, as_strided, a convolution with a bias and the foreach functions: the node's name,
its `_saved_<name>` values, the same node for every output, gradients to the second order,
the error once a backward pass freed a saved tensor, and compiled against eager."""

from __future__ import annotations

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")


def _both(shape, seed=0, requires_grad=True):
    array = np.random.default_rng(seed).standard_normal(shape)
    return (autojit.tensor(array.copy(), requires_grad=requires_grad),
            torch.tensor(array.copy(), requires_grad=requires_grad))


def _plain(value):
    if isinstance(value, (autojit.Tensor, torch.Tensor)):
        return ("tensor", value.detach().numpy().tolist())
    if isinstance(value, tuple):
        return tuple(_plain(item) for item in value)
    return (type(value).__name__, value)


def _same_node(result, expected, names):
    node, tnode = result.grad_fn, expected.grad_fn
    assert node.name() == tnode.name()
    for name in names:
        assert _plain(getattr(node, "_saved_" + name)) == \
            _plain(getattr(tnode, "_saved_" + name)), name


def _same_gradients(result, expected, inputs, tinputs):
    weight = np.linspace(0.5, 1.5, expected.numel()).reshape(tuple(expected.shape))
    grads = autojit.autograd.grad(result, inputs, autojit.tensor(weight), create_graph=True)
    tgrads = torch.autograd.grad(expected, tinputs, torch.tensor(weight), create_graph=True)
    for grad, tgrad in zip(grads, tgrads):
        np.testing.assert_allclose(grad.detach().numpy(), tgrad.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
    return grads, tgrads


INTERPOLATIONS = [((1, 2, 4), {"size": 6, "mode": "linear"}),
                  ((1, 2, 4), {"scale_factor": 2.0, "mode": "linear"}),
                  ((1, 2, 4), {"scale_factor": 0.5, "mode": "linear"}),
                  ((1, 2, 4), {"scale_factor": 2.0, "mode": "linear",
                               "recompute_scale_factor": True}),
                  ((1, 2, 4), {"size": 6, "mode": "linear", "align_corners": True}),
                  ((1, 2, 4), {"size": 4, "mode": "linear"}),
                  ((1, 2, 4), {"size": 7}), ((1, 2, 4), {"size": 7, "mode": "nearest-exact"}),
                  ((1, 1, 4, 4), {"scale_factor": (2.0, 3.0), "mode": "bilinear"}),
                  ((1, 1, 4, 4), {"size": 6, "mode": "bicubic"}),
                  ((1, 1, 4, 4), {"size": 6}),
                  ((1, 1, 6, 6), {"size": 3, "mode": "bilinear", "antialias": True}),
                  ((1, 1, 2, 2, 2), {"size": 3, "mode": "trilinear"})]


@pytest.mark.parametrize("shape, kwargs", INTERPOLATIONS)
def test_interpolate_has_torchs_upsampling_node(shape, kwargs):
    x, tx = _both(shape)
    y = autojit.nn.functional.interpolate(x, **kwargs)
    ty = torch.nn.functional.interpolate(tx, **kwargs)
    tnode = ty.grad_fn
    names = [name[len("_saved_"):] for name in dir(tnode) if name.startswith("_saved_")]
    _same_node(y, ty, names)
    assert y is not x  # a new tensor even where no size changes, as torch's
    _same_gradients(y, ty, (x,), (tx,))


def test_addbmm_has_torchs_node():
    (m, tm), (b1, tb1) = _both((3, 5), 1), _both((2, 3, 4), 2)
    b2, tb2 = _both((2, 4, 5), 3, requires_grad=False)
    y = autojit.addbmm(m, b1, b2, beta=2, alpha=0.5)
    ty = torch.addbmm(tm, tb1, tb2, beta=2, alpha=0.5)
    _same_node(y, ty, ["alpha", "beta", "batch1", "batch2", "batch1_sym_argsize_0",
                       "batch1_sym_argsize_1", "batch2_sym_argsize_2"])
    _same_gradients(y, ty, (m, b1), (tm, tb1))
    y.sum().backward()
    ty.sum().backward()
    with pytest.raises(RuntimeError, match="after they have already been freed"):
        y.grad_fn._saved_batch2  # noqa: B018
    assert y.grad_fn._saved_alpha == 0.5  # not a tensor: still shown


@pytest.mark.parametrize("shape", [(1, 2, 5, 5), (2, 5, 5)])
def test_unfold_and_fold_have_torchs_nodes(shape):
    x, tx = _both(shape)
    kwargs = {"kernel_size": 2, "padding": 1, "stride": 2}
    y, ty = autojit.nn.functional.unfold(x, **kwargs), torch.nn.functional.unfold(tx, **kwargs)
    _same_node(y, ty, ["kernel_size", "dilation", "padding", "stride",
                       "self_sym_argsize_minus_1", "self_sym_argsize_minus_2"])
    _same_gradients(y, ty, (x,), (tx,))
    z = autojit.nn.functional.fold(y, shape[-2:], **kwargs)
    tz = torch.nn.functional.fold(ty, shape[-2:], **kwargs)
    _same_node(z, tz, ["kernel_size", "dilation", "padding", "stride"])
    _same_gradients(z, tz, (x,), (tx,))


@pytest.mark.parametrize("p", [1, 2, 3.5])
def test_pdist_has_torchs_node(p):
    x, tx = _both((4, 3))
    y, ty = autojit.pdist(x, p), torch.pdist(tx, p)
    _same_node(y, ty, ["p", "self", "result"])
    assert y.grad_fn._saved_result is y and y.grad_fn._saved_self is x
    _same_gradients(y, ty, (x,), (tx,))  # (torch has no second derivative of pdist)


@pytest.mark.parametrize("eps", [None, 0.1, 1.0])
def test_logit_shows_eps_and_its_input(eps):
    x, tx = _both((5,))
    x, tx = (x.detach().sigmoid().requires_grad_(), tx.detach().sigmoid().requires_grad_())
    y, ty = autojit.logit(x, eps), torch.logit(tx, eps)
    _same_node(y, ty, ["eps", "self"])
    _same_gradients(y, ty, (x,), (tx,))


@pytest.mark.parametrize("mode", ["reduced", "complete"])
def test_qr_outputs_share_torchs_node(mode):
    a, ta = _both((3, 4) if mode == "complete" else (4, 3))  # torch's: complete needs m <= n
    (q, r), (tq, tr) = autojit.linalg.qr(a, mode), torch.linalg.qr(ta, mode)
    assert q.grad_fn is r.grad_fn and tq.grad_fn is tr.grad_fn
    _same_node(q, tq, ["mode"])
    assert q.grad_fn._saved_Q is q and q.grad_fn._saved_R is r
    (grad,) = autojit.autograd.grad(q.sum() + r.sum(), a)
    (tgrad,) = torch.autograd.grad(tq.sum() + tr.sum(), ta)
    np.testing.assert_allclose(grad.numpy(), tgrad.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("mode", ["not given", None, "trunc", "floor"])
@pytest.mark.parametrize("tensor_divisor", [False, True])
def test_div_records_torchs_node_for_a_rounding_mode(mode, tensor_divisor):
    x, tx = _both((4,))
    y, ty = (_both((4,), 5) if tensor_divisor else (2.0, 2.0))
    kwargs = {} if mode == "not given" else {"rounding_mode": mode}
    out, tout = autojit.div(x, y, **kwargs), torch.div(tx, ty, **kwargs)
    np.testing.assert_array_equal(out.detach().numpy(), tout.detach().numpy())
    assert out.grad_fn.name() == tout.grad_fn.name()
    if mode != "not given":
        assert out.grad_fn._saved_rounding_mode == tout.grad_fn._saved_rounding_mode
        assert x.div(y, **kwargs).grad_fn.name() == tx.div(ty, **kwargs).grad_fn.name()
    inputs = (x, y) if tensor_divisor else (x,)
    tinputs = (tx, ty) if tensor_divisor else (tx,)
    _same_gradients(out, tout, inputs, tinputs)


def test_avg_pool_of_integers_still_divides_without_a_node():
    x = autojit.arange(16).reshape(1, 1, 4, 4)
    tx = torch.arange(16).reshape(1, 1, 4, 4)
    np.testing.assert_array_equal(autojit.nn.functional.avg_pool2d(x, 3, 1).numpy(),
                                  torch.nn.functional.avg_pool2d(tx, 3, 1).numpy())


@pytest.mark.parametrize("offset", [None, 1])
def test_as_strided_shows_its_arguments(offset):
    x, tx = _both((3, 3))
    args = ((3,), (2,)) if offset is None else ((3,), (2,), offset)
    y, ty = x.as_strided(*args), tx.as_strided(*args)
    _same_node(y, ty, ["size", "stride", "storage_offset"])
    _same_gradients(y, ty, (x,), (tx,))


@pytest.mark.parametrize("bias", [True, False])
@pytest.mark.parametrize("padding", [0, 1, "same"])
def test_convolution_with_a_bias_is_one_node(bias, padding):
    x, tx = _both((2, 3, 6, 6))
    w, tw = _both((4, 3, 3, 3), 1)
    b, tb = _both((4,), 2) if bias else (None, None)
    y = autojit.nn.functional.conv2d(x, w, b, padding=padding)
    ty = torch.nn.functional.conv2d(tx, tw, tb, padding=padding)
    _same_node(y, ty, ["bias_sym_sizes_opt", "stride", "padding", "dilation", "groups",
                       "output_padding", "transposed", "weight"])
    if bias:  # (without one, torch's node has a None edge for it, autojit's primitive none)
        assert len(y.grad_fn.next_functions) == len(ty.grad_fn.next_functions)
    inputs, tinputs = (x, w, b) if bias else (x, w), (tx, tw, tb) if bias else (tx, tw)
    _same_gradients(y, ty, inputs, tinputs)


@pytest.mark.parametrize("name", ["add", "mul", "div", "maximum", "minimum", "clamp_min",
                                  "pow"])
@pytest.mark.parametrize("kind", ["scalar", "scalars", "list"])
def test_foreach_results_share_torchs_node(name, kind):
    pairs = [_both((2, 3), seed) for seed in range(2)]
    xs, txs = [pair[0] for pair in pairs], [pair[1] for pair in pairs]
    if kind == "scalar":
        other, tother = 0.5, 0.5
    elif kind == "scalars":
        other, tother = [0.5, 1.5], [0.5, 1.5]
    else:
        others = [_both((2, 3), 5 + seed, requires_grad=False) for seed in range(2)]
        other, tother = [pair[0].abs() for pair in others], [pair[1].abs() for pair in others]
    base, tbase = [x.abs() for x in xs], [x.abs() for x in txs]
    results = getattr(autojit, f"_foreach_{name}")(base, other)
    tresults = getattr(torch, f"_foreach_{name}")(tbase, tother)
    assert results[0].grad_fn is results[1].grad_fn
    tnode = tresults[0].grad_fn
    names = [key[len("_saved_"):] for key in dir(tnode) if key.startswith("_saved_")]
    _same_node(results[0], tresults[0], [key for key in names if key != "result"])
    grads = autojit.autograd.grad(sum(r.sum() for r in results), xs)
    tgrads = torch.autograd.grad(sum(r.sum() for r in tresults), txs)
    for grad, tgrad in zip(grads, tgrads):
        np.testing.assert_allclose(grad.numpy(), tgrad.numpy(), rtol=1e-10)


def test_foreach_unary_results_share_torchs_node():
    xs = [autojit.ones(2, requires_grad=True), autojit.ones(3, requires_grad=True)]
    results = autojit._foreach_exp(xs)
    assert results[0].grad_fn is results[1].grad_fn
    assert results[0].grad_fn.name() == "ForeachExpBackward0"


def test_compiled_equals_eager():
    rng = np.random.default_rng(4)
    x = autojit.tensor(rng.standard_normal((2, 3, 8, 8)).astype(np.float32))
    w = autojit.tensor(rng.standard_normal((4, 3, 3, 3)).astype(np.float32), requires_grad=True)
    b = autojit.tensor(rng.standard_normal(4).astype(np.float32), requires_grad=True)

    def step(x, w, b):
        y = autojit.nn.functional.conv2d(x, w, b, padding=1)
        y = autojit.nn.functional.interpolate(y, scale_factor=2.0, mode="bilinear")
        loss = (autojit.nn.functional.unfold(y, 2) ** 2).mean()
        return (loss, *autojit.autograd.grad(loss, (w, b)))

    compiled = autojit.compile(step)
    for actual, expected in zip(compiled(x, w, b), step(x, w, b)):
        np.testing.assert_allclose(actual.detach().numpy(), expected.detach().numpy(),
                                   rtol=1e-5, atol=1e-6)


def test_an_input_given_twice_gets_both_parts_once():
    (m, tm), (b, tb) = _both((3, 3), 1), _both((2, 3, 3), 2)
    y, ty = autojit.addbmm(m, b, b), torch.addbmm(tm, tb, tb)
    _same_gradients(y, ty, (m, b), (tm, tb))
    x, tx = _both((4,), 3)
    out, tout = autojit.div(x, x, rounding_mode=None), torch.div(tx, tx, rounding_mode=None)
    _same_gradients(out, tout, (x,), (tx,))
    results = autojit._foreach_mul([x, x], [2.0, 3.0])
    tresults = torch._foreach_mul([tx, tx], [2.0, 3.0])
    (grad,) = autojit.autograd.grad(sum(r.sum() for r in results), x)
    (tgrad,) = torch.autograd.grad(sum(r.sum() for r in tresults), tx)
    np.testing.assert_allclose(grad.numpy(), tgrad.numpy())


def test_the_values_shown_read_no_size_while_tracing():
    # a dynamic trace is not specialized by the sizes a node shows (read when asked)
    def step(m, b1, b2):
        y = autojit.addbmm(m, b1, b2) + autojit.nn.functional.unfold(b1.unsqueeze(1), 2).sum()
        return autojit.autograd.grad(y.sum(), (b1,))[0]

    compiled = autojit.compile(step, dynamic=True)
    for n in (2, 3, 4):
        m, b2 = autojit.randn(3, 5), autojit.randn(n, 4, 5)
        b1 = autojit.randn(n, 3, 4, requires_grad=True)
        np.testing.assert_allclose(compiled(m, b1, b2).numpy(), step(m, b1, b2).numpy(),
                                   rtol=1e-5, atol=1e-5)
    assert compiled.stats().traces == 1
    y = autojit.addbmm(m, b1, b2)
    assert y.grad_fn._saved_batch1_sym_argsize_0 == 4  # eagerly, read when asked
