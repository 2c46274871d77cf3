"""What gradcheck compares, over real coordinates: the inputs and outputs (a complex value
counts as its real and imaginary parts), the numerical Jacobians by central differences, the
analytical ones row by row from autograd.grad, and torch's message for a mismatch.

gradcheck.py (backward mode), gradcheck_forward.py (forward mode) and gradcheck_legacy.py
(torch's deprecated Jacobian helpers) build on these.
"""

from __future__ import annotations

import warnings

import numpy as np

from ..tensor.tensor import Tensor
from . import gradcheck_sparse as sparse
from .grad_mode import no_grad


class GradcheckError(RuntimeError):
    """Raised by gradcheck and gradgradcheck when a check fails."""


# ---- inputs and outputs -------------------------------------------------------------------------

def _as_tuple(value) -> tuple:
    if isinstance(value, tuple):
        return value
    if isinstance(value, list):
        return tuple(value)
    return (value,)


def _iter_tensors(value, only_requiring_grad: bool):
    """The tensors in a (possibly nested) list/tuple of inputs, in order."""
    if isinstance(value, Tensor):
        if value.requires_grad or not only_requiring_grad:
            yield value
    elif isinstance(value, (list, tuple)):
        for element in value:
            yield from _iter_tensors(element, only_requiring_grad)


def _differentiable_outputs(outputs) -> tuple:
    return tuple(o for o in _as_tuple(outputs) if isinstance(o, Tensor) and o.requires_grad)


def _check_inputs(inputs: tuple) -> None:
    any_requiring_grad = False
    for index, value in enumerate(inputs):
        for tensor in _iter_tensors(value, True):
            if tensor.dtype.name not in ("float64", "complex128"):
                warnings.warn(
                    f"Input #{index} requires gradient and is not a double precision floating "
                    "point or complex. This check will likely fail if all the inputs are not of "
                    "double precision floating point or complex. ", stacklevel=3)
            data = sparse.content(tensor)._payload  # a sparse input's values
            if data is None:
                raise RuntimeError("gradcheck needs concrete tensors; it cannot run while a "
                                   "function is being traced")
            if not all(stride > 0 or extent <= 1
                       for stride, extent in zip(data.strides, data.shape, strict=True)):
                raise RuntimeError(
                    f"The {index}th input has a dimension with stride 0. gradcheck only supports "
                    "inputs that are non-overlapping to be able to compute the numerical "
                    "gradients correctly. You should call .contiguous on the input before "
                    "passing it to gradcheck.")
            any_requiring_grad = True
    if not any_requiring_grad:
        raise ValueError("gradcheck expects at least one input tensor to require gradient, but "
                         "none of the them have requires_grad=True.")


def _real_parts(array) -> np.ndarray:
    """A flat float64 copy of an array's real coordinates: its values, or a complex array's
    real and imaginary parts interleaved (element k's at 2k and 2k + 1)."""
    array = np.asarray(array)
    if array.dtype.kind == "c":
        return np.stack((array.real, array.imag), axis=-1).astype(np.float64).reshape(-1)
    return np.array(array, dtype=np.float64).reshape(-1)


def _coordinates(tensor: Tensor) -> int:
    """The number of real coordinates of a tensor: two per element of a complex one."""
    return tensor.numel() * (2 if tensor.dtype.is_complex else 1)


def _unit_steps(tensor: Tensor):
    """(element index, step direction) for each real coordinate of tensor, in _real_parts'
    order: 1, and 1j for a complex tensor's imaginary parts."""
    parts = (1, 1j) if tensor.dtype.is_complex else (1,)
    for index in np.ndindex(tensor._payload.shape):
        for part in parts:
            yield index, part


class _Outputs(list):
    """func's outputs as _evaluate gives them, with each one's (shape, dtype) in `meta`."""

    meta: list


def _evaluate(func, inputs: tuple) -> list:
    """func's outputs as flat float64 copies of their real coordinates (a copy, since an
    output may be a view of an input)."""
    results = _Outputs()
    results.meta = []
    for output in _as_tuple(func(*inputs)):
        if isinstance(output, Tensor):
            results.append(_real_parts(output._payload))
            results.meta.append((output.shape, output.dtype))
        else:
            results.append(None)
            results.meta.append(None)
    return results


def check_same_outputs(minus: _Outputs, plus: _Outputs, eps: float, index=None) -> None:
    """torch's check that func's outputs keep their shapes and dtypes when an input is moved
    by eps either way (a function whose shape depends on the values has no derivative)."""
    on_index = f"on index {index} " if index is not None else ""
    for low, high in zip(minus.meta, plus.meta):
        if low is None or high is None:
            continue
        if low[0] != high[0]:
            raise AssertionError(
                f"Expected `func` to return outputs with the same shape when inputs are "
                f"perturbed {on_index}by {eps}, but got: shapes {low[0]} and {high[0]}.")
        if low[1] != high[1]:
            raise AssertionError(
                f"Expected `func` to return outputs with the same dtype when inputs are "
                f"perturbed {on_index}by {eps}, but got: dtypes {low[1]} and {high[1]}.")


# ---- Jacobians ----------------------------------------------------------------------------------

def _perturbed(func, inputs, data, index, step):
    """func's outputs with one element of data moved by step; the data is restored after."""
    original = data[index].copy()
    with no_grad():
        data[index] = original + step
    try:
        return _evaluate(func, inputs)
    finally:
        with no_grad():
            data[index] = original


def _numerical_jacobians(func, inputs, diff_inputs, eps) -> list:
    """jacobians[i][j]: d output i / d input j as an (input coordinates, output coordinates)
    array (_real_parts: a complex value counts twice)."""
    reference = _evaluate(func, inputs)
    jacobians = [[np.zeros((_coordinates(x), 0 if r is None else r.size)) for x in diff_inputs]
                 for r in reference]
    for j, tensor in enumerate(diff_inputs):
        if not sparse.content(tensor)._payload.flags.writeable:
            raise RuntimeError(f"gradcheck: input {j} is read-only; pass a copy (x.clone())")
        for data, index, part, k in sparse.input_steps(tensor):
            minus = _perturbed(func, inputs, data, index, -eps * part)
            plus = _perturbed(func, inputs, data, index, eps * part)
            check_same_outputs(minus, plus, eps, index)
            for i, (low, high) in enumerate(zip(minus, plus, strict=True)):
                if low is not None:
                    jacobians[i][j][k] = (high - low) / (2 * eps)
    return jacobians


def _grad_rows(output, diff_inputs, grad_output):
    from .api import grad

    return grad(output, diff_inputs, grad_output, retain_graph=True, allow_unused=True)


def _analytical_jacobian(output, diff_inputs, check_grad_dtypes, nondet_tol) -> list:
    """d output / d input j for every differentiable input, computed twice (reentrancy), over
    real coordinates: a complex output's real part is differentiated with grad_output 1, its
    imaginary part with 1j, and each gradient gives its inputs' coordinates (_real_parts)."""
    from ..tensor.creation import zeros_like

    computed = []
    sizes_ok, types_ok = True, True
    for _ in range(2):
        jacobians = [np.zeros((_coordinates(x), _coordinates(output))) for x in diff_inputs]
        for k, (index, part) in enumerate(_unit_steps(output)):
            grad_output = zeros_like(output)
            # By position, not through reshape: zeros_like keeps output's layout (a view
            # of a transposed output would be a copy).
            grad_output._payload[index] = part
            for j, (x, g) in enumerate(zip(diff_inputs, _grad_rows(output, diff_inputs,
                                                                     grad_output), strict=True)):
                if g is None:
                    continue
                if g.shape != x.shape:
                    sizes_ok = False
                    continue
                if g.dtype is not x.dtype:
                    types_ok = False
                jacobians[j][:, k] = _real_parts(sparse.dense_array(g))
        computed.append(jacobians)
    if not types_ok and check_grad_dtypes:
        raise GradcheckError("Gradient has dtype mismatch")
    if not sizes_ok:
        raise GradcheckError("Analytical gradient has incorrect size")
    for first, second in zip(*computed, strict=True):
        if first.size and not np.all(np.abs(first - second) <= nondet_tol):
            raise GradcheckError(_NOT_REENTRANT.format(nondet_tol))
    return computed[0]


_NOT_REENTRANT = (
    "Backward is not reentrant, i.e., running backward with same input and grad_output multiple "
    "times gives different values, although analytical gradient matches numerical gradient.The "
    "tolerance for nondeterminism was {}.")


def _mismatch_message(analytical, numerical, output_index, input_index, atol, rtol,
                      input_shape=None, output_shape=None, complex_parts=(False, False)) -> str:
    """torch's message, plus the entry where the two Jacobians differ most. complex_parts:
    whether the input and the output are complex (their coordinates come in pairs), which
    prefixes torch's note on the part that differs."""
    excess = np.abs(analytical - numerical) - (atol + rtol * np.abs(numerical))
    excess = np.where(np.isnan(excess), np.inf, excess)
    input_complex, output_complex = complex_parts
    if output_complex and excess.size and (excess[:, 1::2] > 0).any():
        # torch checks a complex output's imaginary part first, and reports it when it fails
        excess = np.where(np.arange(excess.shape[1]) % 2 == 1, excess, -np.inf)
    row, column = (int(i) for i in np.unravel_index(int(np.argmax(excess)), excess.shape))
    note = ""
    if output_complex:
        note = ("While considering the imaginary part of complex outputs only, " if column % 2
                else "While considering the real part of complex outputs only, ")
    elif input_complex:
        note = ("While considering the imaginary part of complex inputs only, " if row % 2
                else "While considering the real part of complex inputs only, ")
    message = (f"{note}Jacobian mismatch for output {output_index:d} with respect to input "
               f"{input_index:d},\nnumerical:{_format(numerical)}\n"
               f"analytical:{_format(analytical)}\n")
    where = ""
    if input_shape is not None and output_shape is not None:
        element_row = row // 2 if input_complex else row
        element_column = column // 2 if output_complex else column
        input_element = tuple(int(i) for i in np.unravel_index(element_row, input_shape))
        output_element = tuple(int(i) for i in np.unravel_index(element_column, output_shape))
        where = f" (input element {input_element}, output element {output_element})"
    numerical_value, analytical_value = float(numerical[row, column]), float(
        analytical[row, column])
    message += (f"The largest difference is at [{row}, {column}]{where}: numerical "
                f"{numerical_value!r}, analytical {analytical_value!r}, difference "
                f"{abs(analytical_value - numerical_value)!r} (atol={atol}, rtol={rtol}).\n")
    return message


def _format(array) -> str:
    text = np.array2string(array, precision=6, threshold=400, max_line_width=100)
    return "\n" + text


def _allclose(analytical, numerical, atol, rtol) -> bool:
    return bool(np.allclose(analytical, numerical, rtol=rtol, atol=atol))
