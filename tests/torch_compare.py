"""Differential checks against torch: one function, run on torch tensors and on autojit tensors.

`function(framework, *tensors)` is written once with the framework's names (`t.scatter(...)`,
`x.index_add_(...)`); `same_as_torch` runs it on both and compares the results (values,
dtypes and shapes), the gradients of a weighted sum of the float results with respect to every
float input, or, where torch raises, the exception's type and message. Used by the
test_*_torch.py modules.
"""

from __future__ import annotations

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")


def _tensor(framework, value, requires_grad: bool):
    if not isinstance(value, np.ndarray):
        return value
    tensor = framework.tensor(value)
    if requires_grad and value.dtype.kind == "f":
        tensor.requires_grad_(True)
    return tensor


def _flat(result) -> list:
    if isinstance(result, (list, tuple)):
        return [t for item in result for t in _flat(item)]
    return [result]


def _numpy(value):
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    if isinstance(value, autojit.Tensor):
        return value.detach().cpu().numpy()
    return value


def run(framework, function, arrays, requires_grad: bool):
    """("raises", type name, message) or ("returns", results, inputs)."""
    inputs = [_tensor(framework, a, requires_grad) for a in arrays]
    try:
        result = function(framework, *inputs)
    except Exception as error:  # noqa: BLE001 - the outcome compared
        return ("raises", type(error).__name__, str(error).split("\n")[0])
    return ("returns", result, inputs)


def _dtype_name(value) -> str:
    return str(value.dtype).split(".")[-1]


def same_as_torch(function, *arrays, grad: bool = True, rtol: float = 1e-7, atol: float = 1e-9,
                  message: bool = True):
    """Run `function` on both frameworks and assert the same outcome; returns autojit's
    result. With grad, float inputs require grad and the gradients of sum(result * weight)
    must match too. With message=False only the exception's type is compared."""
    expected = run(torch, function, arrays, grad)
    actual = run(autojit, function, arrays, grad)
    if expected[0] == "raises":
        assert actual[0] == "raises", f"torch raised {expected[1:]}, autojit returned"
        assert actual[1] == expected[1], (actual[1:], expected[1:])
        if message:
            assert actual[2] == expected[2], (actual[2], expected[2])
        return None
    assert actual[0] == "returns", f"autojit raised {actual[1:]}, torch returned"
    torch_results, autojit_results = _flat(expected[1]), _flat(actual[1])
    assert len(torch_results) == len(autojit_results)
    for mine, theirs in zip(autojit_results, torch_results, strict=True):
        if not isinstance(theirs, torch.Tensor):
            assert mine == theirs
            continue
        assert isinstance(mine, autojit.Tensor), type(mine)
        assert tuple(mine.shape) == tuple(theirs.shape), (mine.shape, theirs.shape)
        assert _dtype_name(mine) == _dtype_name(theirs), (mine.dtype, theirs.dtype)
        np.testing.assert_allclose(_numpy(mine), _numpy(theirs), rtol=rtol, atol=atol)
    if grad:
        _same_gradients(actual, expected, rtol, atol)
    return actual[1]


def _same_gradients(actual, expected, rtol, atol):
    pairs = [(mine, theirs) for mine, theirs in zip(_flat(actual[1]), _flat(expected[1]),
                                                    strict=True)
             if isinstance(theirs, torch.Tensor) and theirs.requires_grad]
    torch_inputs = [t for t in expected[2] if isinstance(t, torch.Tensor) and t.requires_grad]
    autojit_inputs = [t for t in actual[2] if isinstance(t, autojit.Tensor) and t.requires_grad]
    if not pairs or not torch_inputs:
        return
    rng = np.random.default_rng(len(pairs))
    weights = [rng.uniform(0.5, 1.5, tuple(theirs.shape)) for _, theirs in pairs]
    torch_loss = sum((theirs * torch.tensor(w, dtype=theirs.dtype)).sum()
                     for (_, theirs), w in zip(pairs, weights, strict=True))
    autojit_loss = sum((mine * autojit.tensor(w, dtype=mine.dtype)).sum()
                       for (mine, _), w in zip(pairs, weights, strict=True))
    torch_grads = torch.autograd.grad(torch_loss, torch_inputs, allow_unused=True)
    autojit_grads = autojit.autograd.grad(autojit_loss, autojit_inputs, allow_unused=True)
    for mine, theirs in zip(autojit_grads, torch_grads, strict=True):
        if theirs is None:
            assert mine is None or not np.any(_numpy(mine)), "autojit has a gradient"
            continue
        assert mine is not None, "autojit has no gradient where torch has one"
        np.testing.assert_allclose(_numpy(mine), _numpy(theirs), rtol=rtol, atol=atol)


# ---- expressions evaluated on both libraries (the dtype tests' tables of cases) ------------------

def dtype_name(dtype) -> str:
    """A dtype's name without its module (`complex32`, for autojit's and torch's alike)."""
    return str(dtype).split(".")[-1]


def set_item(x, key, value):
    """`x[key] = value` as an expression (for a case written as one): returns x."""
    x[key] = value
    return x


def outcome(expression: str, names: dict):
    """("returns", the value of `expression` in `names`) or ("raises", the exception's type
    name, the first line of its message), warnings silenced."""
    import warnings

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return ("returns", eval(expression, {**names, "_set": set_item}))  # noqa: S307
    except Exception as error:  # noqa: BLE001 - the outcome compared
        return ("raises", type(error).__name__, str(error).split("\n")[0])


def leaves(value) -> list:
    """The items of nested lists and tuples (a Size is one item)."""
    if isinstance(value, (list, tuple)) and not isinstance(value, (torch.Size, autojit.Size)):
        return [leaf for item in value for leaf in leaves(item)]
    return [value]
