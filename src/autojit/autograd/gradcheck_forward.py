"""gradcheck's forward-mode check (check_forward_ad=True): the Jacobians forward mode pushes
out, one dual evaluation per input element with every differentiable input dual (zero
tangents but the one perturbed, as torch's), against finite differences. gradcheck.py calls
forward_gradcheck and lends its Jacobian helpers."""

from __future__ import annotations

import numpy as np

from ..tensor import dtypes
from ..tensor.tensor import Tensor
from .gradcheck_jacobians import (
    GradcheckError,
    _allclose,
    _as_tuple,
    _check_inputs,
    _coordinates,
    _iter_tensors,
    _mismatch_message,
    _numerical_jacobians,
    _real_parts,
    _unit_steps,
)


def forward_gradcheck(func, inputs, eps, atol, rtol) -> None:
    """The Jacobians that forward mode pushes out, column by column, against finite
    differences."""
    _check_inputs(inputs)
    diff_inputs = list(_iter_tensors(inputs, True))
    numerical = _numerical_jacobians(func, inputs, diff_inputs, eps)
    for (i, j), forward in _forward_jacobians(func, inputs, diff_inputs).items():
        if not _allclose(forward, numerical[i][j], atol, rtol):
            message = _mismatch_message(forward, numerical[i][j], i, j, atol, rtol)
            raise GradcheckError("Jacobian computed with forward mode mismatch" +
                                 message[len("Jacobian mismatch"):])


def _forward_jacobians(func, inputs, diff_inputs) -> dict:
    """{(output i, input j): (input numel, output numel) array} from one dual evaluation per
    input element."""
    from . import forward_ad

    jacobians: dict = {}
    for j, tensor in enumerate(diff_inputs):
        for k, (index, part) in enumerate(_unit_steps(tensor)):
            level = forward_ad.enter_level()
            try:
                unit = np.zeros(tensor.shape, dtype=tensor.dtype.numpy)
                unit[index] = part
                dual = forward_ad.attach_tangent(tensor, Tensor._make(unit, tensor.dtype),
                                                 level)
                duals = _substitute(inputs, tensor, dual)
                for other in diff_inputs:  # as torch: every input dual, the others' tangents 0
                    if other is not tensor:
                        zero = Tensor._make(np.zeros(other.shape, other.dtype.numpy),
                                            other.dtype)
                        duals = _substitute(duals, other,
                                            forward_ad.attach_tangent(other, zero, level))
                outputs = _as_tuple(func(*duals))
                for i, output in enumerate(outputs):
                    if not (isinstance(output, Tensor) and
                            output.dtype.category >= dtypes.FLOATING):
                        continue
                    column = jacobians.setdefault(
                        (i, j), np.zeros((_coordinates(tensor), _coordinates(output))))
                    tangent = forward_ad.tangent_of(output, level)
                    if tangent is not None:
                        if tuple(tangent.shape) != tuple(output.shape):
                            raise GradcheckError("Forward-mode tangent has incorrect size")
                        column[k] = _real_parts(tangent.resolve_conj()._payload)
            finally:
                forward_ad.exit_level(level)
    return jacobians


def _substitute(value, tensor: Tensor, replacement: Tensor):
    """`value` (nested lists and tuples) with `tensor` replaced by `replacement`."""
    if value is tensor:
        return replacement
    if isinstance(value, (list, tuple)):
        return type(value)(_substitute(item, tensor, replacement) for item in value)
    return value
