"""torch.autograd.gradcheck's deprecated get_numerical_jacobian and get_analytical_jacobian,
which old code still imports: each warns as torch's does and returns torch's results, computed
with gradcheck_jacobians.py's helpers."""

from __future__ import annotations

import warnings

import numpy as np

from ..tensor.tensor import Tensor
from . import gradcheck_jacobians as _gc

_DEPRECATED = (
    "`{}` was part of PyTorch's private API and not meant to be exposed. We are deprecating it "
    "and it will be removed in a future version of PyTorch. If you have a specific use for "
    "this or feature request for this to be a stable API, please file us an issue at "
    "https://github.com/pytorch/pytorch/issues/new")


def _as_tensor(array: np.ndarray, like: Tensor) -> Tensor:
    return Tensor._make(np.ascontiguousarray(array, dtype=like.dtype.numpy), like.dtype)


def get_numerical_jacobian(fn, inputs, target=None, eps: float = 1e-3, grad_out: float = 1.0):
    """The finite-difference Jacobians of fn's first output (fn takes the inputs as one
    tuple) with respect to each tensor of `target` (default: the inputs) that requires grad,
    each of shape (input elements, output elements)."""
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_numerical_jacobian no longer "
                         "supports values of grad_out != 1.0.")
    warnings.warn(_DEPRECATED.format("get_numerical_jacobian"), FutureWarning, stacklevel=2)
    inputs = _gc._as_tuple(inputs)
    targets = list(_gc._iter_tensors(inputs if target is None else target, True))
    jacobians = _gc._numerical_jacobians(lambda *xs: fn(xs), inputs, targets, eps)
    return tuple(_as_tensor(jacobian, x) for jacobian, x in zip(jacobians[0], targets))


def get_analytical_jacobian(inputs, output, nondet_tol: float = 0.0, grad_out: float = 1.0):
    """(Jacobians of `output` with respect to each input requiring grad, whether backward
    gave the same values twice, whether the gradients' sizes and dtypes were right)."""
    if grad_out != 1.0:
        raise ValueError("Expected grad_out to be 1.0. get_analytical_jacobian no longer "
                         "supports values of grad_out != 1.0.")
    warnings.warn(_DEPRECATED.format("get_analytical_jacobian"), FutureWarning, stacklevel=2)
    from ..tensor.creation import zeros_like

    diff_inputs = list(_gc._iter_tensors(inputs, True))
    passes, sizes_ok, types_ok = [], True, True
    for _ in range(2):
        jacobians = [np.zeros((_gc._coordinates(x), _gc._coordinates(output)))
                     for x in diff_inputs]
        for k, (index, part) in enumerate(_gc._unit_steps(output)):
            grad_output = zeros_like(output)
            grad_output._payload[index] = part
            rows = _gc._grad_rows(output, diff_inputs, grad_output)
            for j, (x, g) in enumerate(zip(diff_inputs, rows, strict=True)):
                if g is None:
                    continue
                if g.shape != x.shape:
                    sizes_ok = False
                    continue
                types_ok = types_ok and g.dtype is x.dtype
                jacobians[j][:, k] = _gc._real_parts(g.resolve_conj()._payload)
        passes.append(jacobians)
    reentrant = all(not a.size or np.all(np.abs(a - b) <= nondet_tol)
                    for a, b in zip(*passes, strict=True))
    return (tuple(_as_tensor(j, x) for j, x in zip(passes[0], diff_inputs)), reentrant,
            sizes_ok, types_ok)
