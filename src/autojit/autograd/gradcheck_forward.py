"""gradcheck's forward-mode check (check_forward_ad=True): the Jacobians forward mode pushes
out, one dual evaluation per input element with every differentiable input dual (zero
tangents but the one perturbed, as torch's), against finite differences. gradcheck.py calls
forward_gradcheck and lends its Jacobian helpers."""

from __future__ import annotations

import numpy as np

from ..tensor import dtypes
from ..tensor.state import state
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


def undefined_forward_check(func, inputs) -> None:
    """torch's check of undefined tangents (check_undefined_grad with forward mode): every
    differentiable input dual with a tangent, then, one such input at a time, the function run
    with that input's tangent a materialized zero and with no tangent at all; the outputs'
    tangents must agree."""
    from . import forward_ad

    rng = np.random.default_rng(0)  # a tangent for each dual input (its values do not matter)
    level = forward_ad.enter_level()
    try:
        duals, positions = [], []
        for position, value in enumerate(inputs):
            if isinstance(value, Tensor) and value.requires_grad:
                tangent = rng.standard_normal(tuple(value.shape)).astype(value.dtype.numpy)
                value = forward_ad.attach_tangent(value.detach(),
                                                  Tensor._make(tangent, value.dtype), level)
                positions.append(position)
            duals.append(value)
        for position in positions:
            value, kept = inputs[position], duals[position]
            zero = Tensor._make(np.zeros(tuple(value.shape), value.dtype.numpy), value.dtype)
            duals[position] = forward_ad.attach_tangent(value.detach(), zero, level)
            materialized = [out for out in _as_tuple(func(*duals)) if _floating(out)]
            duals[position] = value.detach()
            efficient = [out for out in _as_tuple(func(*duals)) if _floating(out)]
            duals[position] = kept
            for index, (first, second) in enumerate(zip(materialized, efficient)):
                one, two = forward_ad.tangent_of(first, level), forward_ad.tangent_of(
                    second, level)
                if one is not None and two is not None and not np.allclose(
                        one.resolve_conj()._payload, two.resolve_conj()._payload):
                    raise GradcheckError(
                        f"Mismatch in tangent values for output with index: {index} when "
                        f"input: {value} has an undefined tangent value.  Got: {one} but "
                        f"expected: {two}")
    finally:
        forward_ad.exit_level(level)


def batched_forward_check(func, inputs) -> None:
    """torch's check_batched_forward_grad: per differentiable input, the outputs' tangents for
    two random tangents, computed one at a time and as one batch under vmap, must agree."""
    from ..ops.layout import stack
    from ..tensor.random_factories import randn_like
    from . import forward_ad
    from .vmap import legacy_vmap

    for position, current in enumerate(inputs):
        if not (isinstance(current, Tensor) and current.requires_grad and _floating(current)):
            continue

        def jvp(tangent, position=position, current=current):
            with forward_ad.dual_level():
                dual = forward_ad.make_dual(current.detach(), tangent)
                duals = tuple(dual if index == position else
                              (value.detach() if isinstance(value, Tensor) else value)
                              for index, value in enumerate(inputs))
                tangents = []
                for output in _as_tuple(func(*duals)):
                    if output is None:
                        continue
                    primal, tangent_out = forward_ad.unpack_dual(output)
                    if tangent_out is None:
                        tangent_out = Tensor._make(np.zeros((), primal.dtype.numpy),
                                                   primal.dtype).expand(primal.shape)
                    tangents.append(tangent_out)
                return tuple(tangents)

        tangents = [randn_like(current) for _ in range(2)]
        expected = [stack(list(shards)) for shards in zip(*[jvp(t) for t in tangents])]
        # torch batches with its first vmap (torch._vmap_internals), under which a custom
        # Function runs as under plain autograd (no setup_context needed; its jvp sees the
        # batch), as autograd.functional's calls run inside a transform
        state.plain_autograd += 1
        try:
            result = legacy_vmap(jvp)(stack(tangents))
        except RuntimeError as error:
            raise GradcheckError(f"While computing batched gradients, got: {error}\n\n"
                                 f"{_FAILED_BATCHED_FORWARD}") from error
        finally:
            state.plain_autograd -= 1
        for index, (got, wanted) in enumerate(zip(result, expected)):
            if not np.allclose(got.resolve_conj()._payload, wanted.resolve_conj()._payload):
                raise GradcheckError(
                    f"For output {index} and input {index}:\n\n{_FAILED_BATCHED_FORWARD}\n\n"
                    f"Got:\n{got}\n\nExpected:\n{wanted}")


_FAILED_BATCHED_FORWARD = (
    "This error indicates that the forward mode AD of this function (or one of the functions "
    "it calls) does not give the same tangents computed one at a time and batched under "
    "vmap. If you are adding a new operator, please file an issue and then use one of the "
    "workarounds. The workaround depends on how your test invokes gradcheck/gradgradcheck: "
    "if it is not an OpInfo-based test, set check_batched_forward_grad=False.")


def _floating(value) -> bool:
    return isinstance(value, Tensor) and value.dtype.category >= dtypes.FLOATING
