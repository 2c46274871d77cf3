"""Helpers of the tests that run an autojit layer or function beside torch's (the test_nn_*_torch
modules): build both modules with torch's state_dict loaded into autojit's, make the same leaf
tensors in both libraries, and compare results and gradients.
"""

from __future__ import annotations

import numpy as np

import autojit

TOLERANCE = {"float64": 1e-10, "float32": 2e-5}


def pair(torch, kind: str, dtype: str, *args, **kwargs):
    """(autojit module, torch module) of the class `kind`, with torch's state loaded into
    autojit's; the state_dict keys and shapes must be torch's."""
    torch.manual_seed(0)
    theirs = getattr(torch.nn, kind)(*args, **kwargs).to(getattr(torch, dtype))
    mine = getattr(autojit.nn, kind)(*args, **kwargs).to(getattr(autojit, dtype))
    mine_state, their_state = mine.state_dict(), theirs.state_dict()
    assert list(mine_state) == list(their_state)
    for name, value in their_state.items():
        assert tuple(mine_state[name].shape) == tuple(value.shape), name
    mine.load_state_dict({name: autojit.tensor(value.detach().numpy())
                          for name, value in their_state.items()})
    return mine, theirs


def leaves(torch, *arrays, requires_grad=True):
    """The same arrays as autojit and torch tensors: ([autojit...], [torch...])."""
    mine = [autojit.tensor(a, requires_grad=requires_grad and a.dtype.kind == "f")
            for a in arrays]
    theirs = [torch.tensor(a, requires_grad=requires_grad and a.dtype.kind == "f")
              for a in arrays]
    return mine, theirs


def assert_close(mine, theirs, dtype: str = "float64", message: str = "") -> None:
    tolerance = TOLERANCE[dtype]
    mine = mine.detach().numpy() if hasattr(mine, "detach") else np.asarray(mine)
    theirs = theirs.detach().numpy() if hasattr(theirs, "detach") else np.asarray(theirs)
    assert mine.shape == theirs.shape, message
    assert mine.dtype == theirs.dtype, message
    np.testing.assert_allclose(mine, theirs, rtol=tolerance, atol=tolerance, equal_nan=True,
                               err_msg=message)


def cotangent(lib, like, seed: int = 3):
    """A fixed random weighting of `like`'s elements, the same in both libraries."""
    values = np.random.default_rng(seed).standard_normal(tuple(like.shape))
    return lib.tensor(values).to(like.dtype)


def compare_with_gradients(torch, out_mine, out_theirs, inputs_mine, inputs_theirs,
                           dtype: str = "float64", message: str = "") -> None:
    """Results equal, then the gradients of a weighted sum of the result with respect to each
    input (the inputs that do not require grad are skipped)."""
    assert_close(out_mine, out_theirs, dtype, message)
    if not out_theirs.requires_grad:
        return
    (out_mine * cotangent(autojit, out_mine)).sum().backward()
    (out_theirs * cotangent(torch, out_theirs)).sum().backward()
    for index, (a, b) in enumerate(zip(inputs_mine, inputs_theirs)):
        if not b.requires_grad:
            continue
        if b.grad is None:
            assert a.grad is None or not a.grad.numpy().any(), f"{message}: input {index}"
            continue
        assert_close(a.grad, b.grad, dtype, f"{message}: gradient of input {index}")
