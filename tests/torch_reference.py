"""Differential checks against torch for the layer tests (test_nn_*_torch.py): a function or a
module run in autojit and in torch on the same data, its outputs compared, and the gradients
of a random weighting of the outputs with respect to every floating-point input (and, for
modules, every parameter) compared too. Callers importorskip torch first."""

from __future__ import annotations

import numpy as np

import autojit

TOLERANCE = {"float64": 1e-10, "float32": 2e-5}


def _torch():
    import torch

    return torch


def as_pair(value, requires_grad: bool):
    """An autojit and a torch tensor of a NumPy array (floats require grad); others as is."""
    torch = _torch()
    if isinstance(value, np.ndarray):
        grad = requires_grad and value.dtype.kind == "f"
        return (autojit.tensor(value, requires_grad=grad),
                torch.tensor(value, requires_grad=grad))
    return value, value


def flat(value) -> list:
    if isinstance(value, (tuple, list)):
        return [item for part in value for item in flat(part)]
    return [value]


def compare_outputs(mine, theirs, dtype: str, tolerance=None) -> None:
    tolerance = TOLERANCE[dtype] if tolerance is None else tolerance
    mine, theirs = flat(mine), flat(theirs)
    assert len(mine) == len(theirs)
    for a, b in zip(mine, theirs):
        assert tuple(a.shape) == tuple(b.shape), (tuple(a.shape), tuple(b.shape))
        assert str(a.dtype).split(".")[-1] == str(b.dtype).split(".")[-1], (a.dtype, b.dtype)
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=tolerance,
                                   atol=tolerance)


def compare_gradients(mine, theirs, leaves_mine, leaves_theirs, dtype: str,
                      tolerance=None) -> None:
    """Gradients of sum(output * w) (w random, the same for both) with respect to the leaves."""
    torch = _torch()
    tolerance = TOLERANCE[dtype] if tolerance is None else tolerance
    outputs_mine = [o for o in flat(mine) if o.dtype.is_floating_point and o.requires_grad]
    outputs_theirs = [o for o in flat(theirs) if o.dtype.is_floating_point and o.requires_grad]
    assert len(outputs_mine) == len(outputs_theirs)
    if not outputs_mine:
        return
    rng = np.random.default_rng(7)
    weights = [rng.standard_normal(tuple(o.shape)).astype(dtype) for o in outputs_mine]
    loss_mine = sum((o * autojit.tensor(w)).sum() for o, w in zip(outputs_mine, weights))
    loss_theirs = sum((o * torch.tensor(w)).sum() for o, w in zip(outputs_theirs, weights))
    grads_mine = autojit.autograd.grad(loss_mine, leaves_mine, allow_unused=True)
    grads_theirs = torch.autograd.grad(loss_theirs, leaves_theirs, allow_unused=True)
    for a, b in zip(grads_mine, grads_theirs):
        if b is None:
            assert a is None or not np.any(a.numpy()), "autojit has a gradient torch lacks"
            continue
        if a is None:  # no path from the leaf (nearest sampling): torch's gradient is zeros
            assert not np.any(b.numpy()), "torch has a gradient autojit lacks"
            continue
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=tolerance, atol=tolerance)


def check_function(name: str, args: tuple, kwargs=None, dtype: str = "float64",
                   tolerance=None, gradients: bool = True):
    """autojit.nn.functional.<name> against torch.nn.functional.<name> (or callables given as a
    pair) on the same arguments; NumPy arrays become tensors, float ones requiring grad."""
    torch = _torch()
    kwargs = kwargs or {}
    if isinstance(name, tuple):
        mine_fn, theirs_fn = name
    else:
        mine_fn = getattr(autojit.nn.functional, name)
        theirs_fn = getattr(torch.nn.functional, name)
    pairs = [as_pair(a, gradients) for a in args]
    mine = mine_fn(*[p[0] for p in pairs], **kwargs)
    theirs = theirs_fn(*[p[1] for p in pairs], **kwargs)
    compare_outputs(mine, theirs, dtype, tolerance)
    if gradients:
        leaves = [i for i, a in enumerate(args)
                  if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
        compare_gradients(mine, theirs, [pairs[i][0] for i in leaves],
                          [pairs[i][1] for i in leaves], dtype, tolerance)
    return mine, theirs


def module_pair(kind: str, dtype: str, *args, **kwargs):
    """autojit.nn.<kind> and torch.nn.<kind> built alike, torch's state loaded into autojit's;
    checks that the state_dict keys and shapes are torch's."""
    torch = _torch()
    torch.manual_seed(0)
    theirs = getattr(torch.nn, kind)(*args, **kwargs).to(getattr(torch, dtype))
    mine = getattr(autojit.nn, kind)(*args, **kwargs).to(getattr(autojit, dtype))
    state_mine, state_theirs = mine.state_dict(), theirs.state_dict()
    assert list(state_mine) == list(state_theirs)
    for (key, a), (_, b) in zip(state_mine.items(), state_theirs.items()):
        assert tuple(a.shape) == tuple(b.shape), key
    mine.load_state_dict({key: autojit.tensor(value.detach().numpy())
                          for key, value in state_theirs.items()})
    assert repr(mine) == repr(theirs)
    return mine, theirs


def check_module(mine, theirs, inputs: tuple, dtype: str = "float64", tolerance=None,
                 **forward_kwargs):
    """A module pair called on the same inputs: outputs, and the gradients of the inputs and
    of every parameter."""
    pairs = [as_pair(a, True) for a in inputs]
    out_mine = mine(*[p[0] for p in pairs], **forward_kwargs)
    out_theirs = theirs(*[p[1] for p in pairs], **forward_kwargs)
    compare_outputs(out_mine, out_theirs, dtype, tolerance)
    leaves = [i for i, a in enumerate(inputs) if isinstance(a, np.ndarray) and a.dtype.kind == "f"]
    compare_gradients(out_mine, out_theirs,
                      [pairs[i][0] for i in leaves] + list(mine.parameters()),
                      [pairs[i][1] for i in leaves] + list(theirs.parameters()), dtype,
                      tolerance)
    return out_mine, out_theirs
