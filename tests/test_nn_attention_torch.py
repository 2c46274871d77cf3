"""Attention (nn/functional/attention.py, nn/attention.py) against torch:
scaled_dot_product_attention with every kind of mask, is_causal, scale and grouped heads, and
nn.MultiheadAttention with torch's state_dict loaded, for every constructor and forward option;
outputs, attention weights and every gradient (inputs, float masks, parameters) match in float64
and float32, and torch's errors, warnings, parameter names, initialization and repr are kept."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit
from autojit import nn
from autojit.nn import functional as F

torch = pytest.importorskip("torch")

TOLERANCE = {"float64": 1e-10, "float32": 2e-5}


def _pair(array, requires_grad=True):
    """The same values as an autojit tensor and a torch tensor."""
    if array is None:
        return None, None
    grad = requires_grad and array.dtype.kind == "f"
    return (autojit.tensor(array, requires_grad=grad),
            torch.tensor(array, requires_grad=grad))


def _close(mine, theirs, dtype):
    tolerance = TOLERANCE[dtype]
    np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=tolerance,
                               atol=tolerance)


def _backward_both(outputs_mine, outputs_theirs, seed=3):
    """Backpropagate the same random weighting of the outputs through both."""
    rng = np.random.default_rng(seed)
    loss_mine, loss_theirs = 0, 0
    for mine, theirs in zip(outputs_mine, outputs_theirs):
        if mine is None:
            continue
        weights = rng.standard_normal(tuple(mine.shape))
        loss_mine = loss_mine + (mine * autojit.tensor(weights).to(mine.dtype)).sum()
        loss_theirs = loss_theirs + (theirs * torch.tensor(weights).to(theirs.dtype)).sum()
    loss_mine.backward()
    loss_theirs.backward()


def _grads_close(leaves_mine, leaves_theirs, dtype):
    for mine, theirs in zip(leaves_mine, leaves_theirs):
        if theirs is None or theirs.grad is None:
            assert mine is None or mine.grad is None
            continue
        _close(mine.grad, theirs.grad, dtype)


# ---- scaled_dot_product_attention ----------------------------------------------------------------

SDPA_CASES = {
    "plain": dict(),
    "causal": dict(is_causal=True),
    "causal-more-queries": dict(is_causal=True, query=(2, 3, 7, 8)),
    "bool-mask-broadcast": dict(mask=("bool", (4, 5))),
    "bool-mask-full-with-empty-row": dict(mask=("bool-empty-row", (2, 3, 4, 5))),
    "float-mask-per-head": dict(mask=("float", (3, 4, 5))),
    "float-mask-with-inf-row": dict(mask=("float-inf-row", (2, 1, 4, 5))),
    "float32-mask": dict(mask=("float32", (4, 5))),
    "scale": dict(scale=0.3),
    "grouped-heads": dict(query=(2, 6, 4, 8), enable_gqa=True),
    "three-dims": dict(query=(3, 4, 8), key=(3, 5, 8), value=(3, 5, 6)),
    "two-dims-broadcast": dict(query=(4, 8), key=(2, 3, 5, 8), value=(2, 3, 5, 6)),
}


def _mask_array(kind, shape, rng, dtype):
    if kind.startswith("bool"):
        mask = rng.random(shape) > 0.4
        mask[..., 0] = True  # every row keeps one key, except the one emptied below
        if kind == "bool-empty-row":
            mask[0, 1, 2] = False
        return mask
    mask = rng.standard_normal(shape)
    if kind == "float-inf-row":
        mask[..., 1, :] = -np.inf
        mask[..., 2, 3] = -np.inf
    return mask.astype("float32" if kind == "float32" else dtype)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", list(SDPA_CASES))
def test_scaled_dot_product_attention_matches_torch(case, dtype):
    options = dict(SDPA_CASES[case])
    rng = np.random.default_rng(0)
    shapes = [options.pop(name, default) for name, default in
              (("query", (2, 3, 4, 8)), ("key", (2, 3, 5, 8)), ("value", (2, 3, 5, 6)))]
    arrays = [rng.standard_normal(shape).astype(dtype) for shape in shapes]
    if options.get("enable_gqa"):
        arrays[1], arrays[2] = arrays[1][:, :2], arrays[2][:, :2]  # 6 query heads, 2 kv heads
    mask = options.pop("mask", None)
    mask_array = _mask_array(*mask, rng, dtype) if mask else None
    leaves = [_pair(array) for array in arrays]
    mask_mine, mask_theirs = _pair(mask_array)
    out_mine = F.scaled_dot_product_attention(*(m for m, _ in leaves), attn_mask=mask_mine,
                                              **options)
    out_theirs = torch.nn.functional.scaled_dot_product_attention(
        *(t for _, t in leaves), attn_mask=mask_theirs, **options)
    assert out_mine.dtype is getattr(autojit, dtype)
    _close(out_mine, out_theirs, dtype)
    _backward_both([out_mine], [out_theirs])
    _grads_close([m for m, _ in leaves] + [mask_mine], [t for _, t in leaves] + [mask_theirs],
                 dtype)


def test_scaled_dot_product_attention_second_derivatives_match_torch():
    rng = np.random.default_rng(1)
    leaves = [_pair(rng.standard_normal(shape)) for shape in ((2, 3, 4), (2, 5, 4), (2, 5, 3))]
    mask = rng.random((3, 5)) > 0.3
    results = []
    for lib, function, index in ((autojit, F.scaled_dot_product_attention, 0),
                                 (torch, torch.nn.functional.scaled_dot_product_attention, 1)):
        q, k, v = (pair[index] for pair in leaves)
        out = function(q, k, v, attn_mask=lib.tensor(mask))
        (grad_q,) = lib.autograd.grad((out * out).sum(), q, create_graph=True)
        results.append(lib.autograd.grad(grad_q.square().sum(), (q, k, v)))
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-9, atol=1e-10)


def _error_of(call, *arguments, **keywords):
    try:
        call(*arguments, **keywords)
    except Exception as error:  # noqa: BLE001 - the type is what is compared
        return type(error), str(error)
    return None, None


SDPA_ERRORS = {
    "mask-and-causal": lambda lib, q, k, v: dict(attn_mask=lib.ones(4, 5, dtype=lib.bool),
                                                 is_causal=True),
    "integer-mask": lambda lib, q, k, v: dict(attn_mask=lib.ones(4, 5, dtype=lib.int64)),
    "float64-mask": lambda lib, q, k, v: dict(attn_mask=lib.ones(4, 5, dtype=lib.float64)),
    "mismatched-dtypes": lambda lib, q, k, v: dict(key=k.double()),
    "embedding-mismatch": lambda lib, q, k, v: dict(key=lib.ones(2, 3, 5, 7)),
    "lengths-mismatch": lambda lib, q, k, v: dict(value=lib.ones(2, 3, 6, 6)),
    "one-dim": lambda lib, q, k, v: dict(query=lib.ones(8), key=lib.ones(8),
                                         value=lib.ones(6)),
    "grouped-heads-do-not-divide": lambda lib, q, k, v: dict(query=lib.ones(2, 5, 4, 8),
                                                             enable_gqa=True),
    "dropout-above-one": lambda lib, q, k, v: dict(dropout_p=2.0),
    "key-not-a-tensor": lambda lib, q, k, v: dict(key=3),
    "mask-not-a-tensor": lambda lib, q, k, v: dict(attn_mask="mask"),
}


@pytest.mark.parametrize("case", list(SDPA_ERRORS))
def test_scaled_dot_product_attention_errors_are_torchs(case):
    errors = []
    for lib, function in ((autojit, F.scaled_dot_product_attention),
                          (torch, torch.nn.functional.scaled_dot_product_attention)):
        q, k, v = lib.ones(2, 3, 4, 8), lib.ones(2, 3, 5, 8), lib.ones(2, 3, 5, 6)
        arguments = dict(query=q, key=k, value=v)
        arguments.update(SDPA_ERRORS[case](lib, q, k, v))
        errors.append(_error_of(function, **arguments))
    (mine_type, mine), (theirs_type, theirs) = errors
    assert theirs_type is not None and mine_type is theirs_type, (mine, theirs)
    # torch's own message for grouped heads is cut short after "in "; ours says "query".
    assert mine.startswith(theirs.strip()) or mine.replace("autojit", "torch") == theirs, \
        (mine, theirs)


def test_scaled_dot_product_attention_dropout():
    q, k, v = autojit.randn(2, 4, 8), autojit.randn(2, 6, 8), autojit.randn(2, 6, 3)
    np.testing.assert_array_equal(
        F.scaled_dot_product_attention(q, k, v, dropout_p=1.0).numpy(), np.zeros((2, 4, 3)))
    # With v the identity, the output is the attention weights: some dropped, the rest scaled.
    eye = autojit.eye(6).expand(2, 6, 6)
    clean = F.scaled_dot_product_attention(q, k, eye).numpy()
    autojit.manual_seed(5)
    dropped = F.scaled_dot_product_attention(q, k, eye, dropout_p=0.5).numpy()
    kept = dropped != 0
    assert 0 < kept.mean() < 1
    np.testing.assert_allclose(dropped[kept], 2 * clean[kept], rtol=1e-6)
    # A compiled call draws the same mask as eager from the same seed.
    compiled = autojit.compile(lambda q, k, v: F.scaled_dot_product_attention(q, k, v,
                                                                              dropout_p=0.5))
    autojit.manual_seed(5)
    np.testing.assert_allclose(compiled(q, k, eye).numpy(), dropped, rtol=1e-6)


# ---- nn.MultiheadAttention -----------------------------------------------------------------------


def _attention_pair(dtype, *args, **kwargs):
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(*args, **kwargs).to(getattr(torch, dtype))
    mine = nn.MultiheadAttention(*args, **kwargs).to(getattr(autojit, dtype))
    assert list(mine.state_dict()) == list(theirs.state_dict())
    for (name, a), (_, b) in zip(mine.state_dict().items(), theirs.state_dict().items()):
        assert tuple(a.shape) == tuple(b.shape), name
    mine.load_state_dict({name: autojit.tensor(value.detach().numpy())
                          for name, value in theirs.state_dict().items()})
    return mine, theirs


# (constructor options, forward options); masks are named by kind and built per case.
MHA_CASES = {
    "self": (dict(), dict()),
    "batch-first": (dict(batch_first=True), dict()),
    "no-bias": (dict(bias=False), dict()),
    "bias-kv-zero-attn": (dict(add_bias_kv=True, add_zero_attn=True),
                          dict(key_padding_mask="bool", attn_mask="float2d")),
    "kdim-vdim": (dict(kdim=5, vdim=3, batch_first=True), dict(key_padding_mask="float")),
    "encoder-decoder": (dict(), dict(memory=True, attn_mask="bool2d")),
    "padding-mask": (dict(), dict(key_padding_mask="bool")),
    "3d-mask-per-head": (dict(batch_first=True),
                         dict(attn_mask="float3d", average_attn_weights=False)),
    "causal-hint": (dict(batch_first=True), dict(attn_mask="causal", is_causal=True)),
    "causal-hint-and-padding": (dict(), dict(attn_mask="causal", is_causal=True,
                                             key_padding_mask="bool")),
    "unbatched": (dict(), dict(unbatched=True, key_padding_mask="bool", attn_mask="bool2d")),
}


def _mha_inputs(rng, dtype, options, batch_first, kdim, vdim):
    length, source, batch, embed = 4, 6, 3, 8
    memory = options.pop("memory", False) or kdim != embed or vdim != embed
    unbatched = options.pop("unbatched", False)
    if not memory:
        source = length

    def sequence(steps, features):
        if unbatched:
            return rng.standard_normal((steps, features)).astype(dtype)
        shape = (batch, steps, features) if batch_first else (steps, batch, features)
        return rng.standard_normal(shape).astype(dtype)

    query = sequence(length, embed)
    key = sequence(source, kdim) if memory else query
    value = sequence(source, vdim) if memory else query
    masks = {}
    kind = options.pop("key_padding_mask", None)
    if kind is not None:
        padding = np.zeros((source,) if unbatched else (batch, source), bool)
        padding[..., -1] = True
        if not unbatched:
            padding[1, 2] = True
        masks["key_padding_mask"] = padding if kind == "bool" else \
            np.where(padding, -1e9, rng.standard_normal(padding.shape)).astype(dtype)
    kind = options.pop("attn_mask", None)
    if kind == "causal":
        masks["attn_mask"] = np.triu(np.full((length, source), -np.inf), 1).astype(dtype)
    elif kind == "bool2d":
        masks["attn_mask"] = rng.random((length, source)) > 0.7
        masks["attn_mask"][:, 0] = False
    elif kind == "float2d":
        masks["attn_mask"] = rng.standard_normal((length, source)).astype(dtype)
    elif kind == "float3d":
        masks["attn_mask"] = rng.standard_normal((batch * 2, length, source)).astype(dtype)
    return query, key, value, masks


@pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask")
@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", list(MHA_CASES))
def test_multihead_attention_matches_torch(case, dtype):
    constructor, forward = (dict(options) for options in MHA_CASES[case])
    mine, theirs = _attention_pair(dtype, 8, 2, **constructor)
    rng = np.random.default_rng(2)
    query, key, value, masks = _mha_inputs(rng, dtype, forward, constructor.get(
        "batch_first", False), constructor.get("kdim", 8), constructor.get("vdim", 8))
    query_pair = _pair(query)
    key_pair = query_pair if key is query else _pair(key)
    value_pair = key_pair if value is key else _pair(value)
    mask_pairs = {name: _pair(array) for name, array in masks.items()}
    for need_weights in (True, False):
        for module in (mine, theirs):
            module.zero_grad()
        for pair in {id(p): p for p in (query_pair, key_pair, value_pair)}.values():
            pair[0].grad = pair[1].grad = None
        index_results = []
        for index, module in enumerate((mine, theirs)):
            result = module(query_pair[index], key_pair[index], value_pair[index],
                            need_weights=need_weights,
                            **{name: pair[index] for name, pair in mask_pairs.items()},
                            **forward)
            index_results.append(result)
        (out_mine, weights_mine), (out_theirs, weights_theirs) = index_results
        _close(out_mine, out_theirs, dtype)
        if need_weights:
            _close(weights_mine, weights_theirs, dtype)
        else:
            assert weights_mine is None and weights_theirs is None
        _backward_both([out_mine, weights_mine], [out_theirs, weights_theirs])
        leaves = [query_pair, key_pair, value_pair, *mask_pairs.values()]
        _grads_close([m for m, _ in leaves] + list(mine.parameters()),
                     [t for _, t in leaves] + list(theirs.parameters()), dtype)


def test_multihead_attention_eval_and_training_dropout():
    mine, theirs = _attention_pair("float64", 8, 2, dropout=0.5, batch_first=True)
    x = np.random.default_rng(3).standard_normal((2, 5, 8))
    mine.eval(), theirs.eval()
    with torch.no_grad():  # torch's inference fast path
        expected, weights = theirs(*(torch.tensor(x),) * 3)
    with autojit.no_grad():
        output, my_weights = mine(*(autojit.tensor(x),) * 3)
    np.testing.assert_allclose(output.numpy(), expected.numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(my_weights.numpy(), weights.numpy(), rtol=1e-6, atol=1e-7)
    mine.train()
    first, _ = mine(*(autojit.tensor(x),) * 3, need_weights=False)
    assert not np.allclose(first.detach().numpy(), output.numpy())


def test_multihead_attention_parameters_init_and_repr_are_torchs():
    for options in (dict(), dict(kdim=5, vdim=3, add_bias_kv=True), dict(bias=False)):
        mine = nn.MultiheadAttention(16, 4, **options)
        theirs = torch.nn.MultiheadAttention(16, 4, **options)
        assert repr(mine) == repr(theirs)
        assert list(mine.state_dict()) == list(theirs.state_dict())
        assert [name for name, _ in mine.named_parameters()] == \
            [name for name, _ in theirs.named_parameters()]
    attention = nn.MultiheadAttention(64, 4, add_bias_kv=True)
    bound = (6 / (64 + 192)) ** 0.5  # xavier_uniform_ of the (192, 64) packed weight
    weight = attention.in_proj_weight.detach().numpy()
    assert np.abs(weight).max() <= bound and np.abs(weight).max() > 0.9 * bound
    assert not attention.in_proj_bias.detach().numpy().any()
    assert not attention.out_proj.bias.detach().numpy().any()
    assert attention.bias_k.shape == (1, 1, 64) and attention.bias_k.detach().numpy().std() > 0
    assert attention.head_dim == 16 and attention._qkv_same_embed_dim


MHA_ERRORS = {
    "heads-do-not-divide": (lambda lib: lib.nn.MultiheadAttention(10, 3), None),
    "zero-heads": (lambda lib: lib.nn.MultiheadAttention(8, 0), None),
    "causal-without-mask": (lambda lib: lib.nn.MultiheadAttention(8, 2),
                            dict(is_causal=True)),
    "2d-mask-shape": (lambda lib: lib.nn.MultiheadAttention(8, 2),
                      dict(attn_mask=("zeros", (3, 4)))),
    "3d-mask-shape": (lambda lib: lib.nn.MultiheadAttention(8, 2),
                      dict(attn_mask=("zeros", (2, 4, 4)))),
    "4d-mask": (lambda lib: lib.nn.MultiheadAttention(8, 2),
                dict(attn_mask=("zeros", (1, 2, 4, 4)))),
    "integer-padding-mask": (lambda lib: lib.nn.MultiheadAttention(8, 2),
                             dict(key_padding_mask=("int", (3, 4)))),
    "padding-mask-shape": (lambda lib: lib.nn.MultiheadAttention(8, 2),
                           dict(key_padding_mask=("bool", (3, 5)))),
    "embedding-mismatch": (lambda lib: lib.nn.MultiheadAttention(8, 2),
                           dict(query=("zeros", (4, 3, 6)))),
    "query-dims": (lambda lib: lib.nn.MultiheadAttention(8, 2),
                   dict(query=("zeros", (4, 3, 8, 1)))),
}


def _build_and_call(lib, build, forward):
    module = build(lib)
    tensors = {"zeros": lambda shape: lib.zeros(shape),
               "int": lambda shape: lib.zeros(shape, dtype=lib.int64),
               "bool": lambda shape: lib.zeros(shape, dtype=lib.bool)}
    forward = forward or {}
    arguments = {name: tensors[value[0]](value[1]) for name, value in forward.items()
                 if isinstance(value, tuple)}
    flags = {name: value for name, value in forward.items() if not isinstance(value, tuple)}
    x = arguments.pop("query", lib.zeros(4, 3, 8))
    module(x, x, x, **arguments, **flags)


@pytest.mark.parametrize("case", list(MHA_ERRORS))
def test_multihead_attention_errors_are_torchs(case):
    build, forward = MHA_ERRORS[case]
    errors = [_error_of(_build_and_call, lib, build, forward) for lib in (autojit, torch)]
    (mine_type, mine), (theirs_type, theirs) = errors
    assert theirs_type is not None and mine_type is theirs_type, (mine, theirs)
    assert mine.replace("autojit", "torch") == theirs


def test_mismatched_mask_types_warn_as_torch_does():
    attention = nn.MultiheadAttention(8, 2)
    x = autojit.randn(4, 3, 8)
    padding = autojit.zeros(3, 4, dtype=autojit.bool)
    with pytest.warns(UserWarning, match="Support for mismatched key_padding_mask and "
                      "attn_mask is deprecated"):
        attention(x, x, x, key_padding_mask=padding, attn_mask=autojit.zeros(4, 4))
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        attention(x, x, x, key_padding_mask=padding,
                  attn_mask=autojit.zeros(4, 4, dtype=autojit.bool))


def test_multi_head_attention_forward_matches_torch():
    rng = np.random.default_rng(4)
    arrays = dict(x=rng.standard_normal((5, 2, 8)), w=rng.standard_normal((24, 8)),
                  b=rng.standard_normal(24), out_w=rng.standard_normal((8, 8)),
                  static_k=rng.standard_normal((4, 7, 4)), static_v=rng.standard_normal((4, 7, 4)))
    results = []
    for lib, function in ((autojit, F.multi_head_attention_forward),
                          (torch,
                           torch.nn.functional.multi_head_attention_forward)):
        t = {name: lib.tensor(value) for name, value in arrays.items()}
        results.append(function(t["x"], t["x"], t["x"], 8, 2, t["w"], t["b"], None, None, False,
                                0.0, t["out_w"], None, static_k=t["static_k"],
                                static_v=t["static_v"]))
    for mine, theirs in zip(*results):
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-10)
