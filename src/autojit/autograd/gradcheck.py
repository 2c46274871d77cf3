"""gradcheck and gradgradcheck: analytical gradients checked against finite differences.

These sit beside the engine (engine.py) as its test oracle. `gradcheck` perturbs each element
of every floating or complex input that requires grad (in place, then restored) and takes
central differences to build the numerical Jacobian; the analytical Jacobian comes row by row
from autograd.grad with one-hot grad_outputs. `gradgradcheck` runs gradcheck on the function
that returns the gradients (built with create_graph=True), which checks double backward. Names,
defaults, messages and the order of the checks follow torch.autograd.gradcheck.

Complex values are checked as pairs of reals, as torch checks them: a complex input's real and
imaginary parts are perturbed in turn, a complex output's real and imaginary parts are
differentiated in turn (grad_output 1 and 1j), and the analytical gradient dL/dx + i dL/dy
(docs/notes/complex.md) gives one Jacobian row per part. Every Jacobian here is over these
real coordinates (`_real_parts`).
"""

from __future__ import annotations

import warnings

import numpy as np

from ..tensor import dtypes
from ..tensor.tensor import Tensor
from . import gradcheck_sparse as sparse
from .grad_mode import no_grad
from .gradcheck_jacobians import (
    _NOT_REENTRANT,
    GradcheckError,
    _allclose,
    _analytical_jacobian,
    _as_tuple,
    _check_inputs,
    _coordinates,
    _differentiable_outputs,
    _evaluate,
    _iter_tensors,
    _mismatch_message,
    _numerical_jacobians,
    _real_parts,
    check_same_outputs,
)

# ---- the checks ---------------------------------------------------------------------------------

def _check_no_differentiable_outputs(func, inputs, diff_inputs, eps) -> None:
    for per_output in _numerical_jacobians(func, inputs, diff_inputs, eps):
        for jacobian in per_output:
            if np.any(jacobian != 0):
                raise GradcheckError("Numerical gradient for function expected to be zero")


def _slow_gradcheck(func, inputs, outputs, diff_inputs, eps, atol, rtol, nondet_tol,
                    check_grad_dtypes, masked=True) -> None:
    func_out = _as_tuple(func(*inputs))
    # masked=False: differences of a copy storing every element of the sparse inputs
    numerical_inputs = inputs if masked else sparse.densify(inputs)
    numerical = _numerical_jacobians(func, numerical_inputs,
                                     list(_iter_tensors(numerical_inputs, True)), eps)
    # Outputs that do not require grad take part only in the no-differentiable-outputs check.
    numerical = [n for o, n in zip(func_out, numerical, strict=True)
                 if isinstance(o, Tensor) and o.requires_grad]
    for i, output in enumerate(outputs):
        analytical = _analytical_jacobian(output, diff_inputs, check_grad_dtypes, nondet_tol)
        for j, (a, n) in enumerate(zip(analytical, numerical[i], strict=True)):
            if not _allclose(a, n, atol, rtol):
                raise GradcheckError(_mismatch_message(
                    a, n, i, j, atol, rtol, tuple(diff_inputs[j].shape), tuple(output.shape),
                    (diff_inputs[j].dtype.is_complex, output.dtype.is_complex)))


def _fast_gradcheck(func, inputs, outputs, diff_inputs, eps, atol, rtol, nondet_tol,
                    check_grad_dtypes, masked=True) -> None:
    """Compare v^T J u with random u (inputs) and v (outputs) instead of whole Jacobians.

    On a mismatch, the slow check is run for that output/input pair to show the Jacobians.
    """
    from ..tensor.creation import default_generator
    from .api import grad

    generator = default_generator()
    func_out = _as_tuple(func(*inputs))
    differentiable = [i for i, o in enumerate(func_out)
                      if isinstance(o, Tensor) and o.requires_grad]
    numerical_inputs = inputs if masked else sparse.densify(inputs)
    targets = list(_iter_tensors(numerical_inputs, True))
    # Directions over real coordinates (_real_parts), and the same as values of each tensor;
    # a sparse input's are zero where it stores nothing (torch's u is sparse, of its indices).
    directions = [sparse.masked_direction(generator.uniform(-1, 1, _coordinates(x)), x)
                  for x in diff_inputs]
    for i, output in enumerate(outputs):
        v = generator.uniform(-1, 1, _coordinates(output))
        v_tensor = Tensor._make(_as_values(v, output), output.dtype)
        passes = []
        for _ in range(2):  # twice: a backward that is not reentrant gives different values
            grads = grad(output, diff_inputs, v_tensor, retain_graph=True, allow_unused=True)
            if any(g is not None and g.shape != x.shape
                   for g, x in zip(grads, diff_inputs, strict=True)):
                raise GradcheckError("Analytical gradient has incorrect size")
            passes.append(grads)
        for first, second in zip(*passes, strict=True):
            if first is not None and second is not None and not np.all(
                    np.abs(sparse.dense_array(first) - sparse.dense_array(second)) <=
                    nondet_tol):
                raise GradcheckError(_NOT_REENTRANT.format(nondet_tol))
        for j, tensor in enumerate(diff_inputs):
            u = directions[j]
            analytical = 0.0 if grads[j] is None else float(np.sum(_real_parts(
                sparse.dense_array(grads[j])) * u))
            step = sparse.step_for(_as_values(u, tensor), targets[j])
            data = sparse.content(targets[j])._payload
            original = data.copy()
            with no_grad():
                data[...] = original - eps * step
            minus = _evaluate(func, numerical_inputs)
            with no_grad():
                data[...] = original + eps * step
            plus = _evaluate(func, numerical_inputs)
            with no_grad():
                data[...] = original
            check_same_outputs(minus, plus, eps)
            minus, plus = minus[differentiable[i]], plus[differentiable[i]]
            numerical = float(np.sum((plus - minus) / (2 * eps) * v))
            if not _allclose(analytical, numerical, atol, rtol):
                slow = ""
                try:
                    _slow_gradcheck(func, inputs, outputs, diff_inputs, eps, atol, rtol,
                                    nondet_tol, check_grad_dtypes, masked)
                except GradcheckError as error:
                    slow = "\n" + str(error)
                raise GradcheckError(
                    f"Jacobian mismatch for output {i:d} with respect to input {j:d},\n"
                    f"numerical:{numerical!r}\nanalytical:{analytical!r}\n\nThe above "
                    "quantities relating the numerical and analytical jacobians are computed "
                    "in fast mode (v^T J u for random u and v). Below, we recompute numerical "
                    "and analytical jacobians in slow mode:" + slow)


def _as_values(coordinates: np.ndarray, like: Tensor) -> np.ndarray:
    """Real coordinates (_real_parts' order) as an array of `like`'s shape and dtype."""
    if like.dtype.is_complex:
        pairs = coordinates.reshape(*like.shape, 2)
        return (pairs[..., 0] + 1j * pairs[..., 1]).astype(like.dtype.numpy)
    return coordinates.reshape(tuple(like.shape)).astype(like.dtype.numpy)


def _test_backward_mul_by_grad_output(outputs, diff_inputs, masked=False) -> None:
    from ..tensor.creation import zeros_like
    from .api import grad

    grads = grad(outputs, diff_inputs, [zeros_like(o) for o in outputs], allow_unused=True)
    for g, x in zip(grads, diff_inputs, strict=True):
        if g is None:
            continue
        g = sparse.check_grad_layout(g, x, GradcheckError)  # densified when sparse
        values = g.resolve_conj()._payload
        if not (np.allclose(values, 0) if masked else np.all(values == 0)):
            raise GradcheckError("backward not multiplied by grad_output")
        if g.dtype is not x.dtype:
            raise GradcheckError("grad is incorrect type")
        if g.shape != x.shape:
            raise GradcheckError("grad is incorrect size")


def _warn_new_check() -> None:
    """torch's warning beside a failed check of undefined output gradients."""
    warnings.warn(
        "Backwards compatibility: New undefined gradient support checking feature is enabled "
        "by default, but it may break existing callers of this function. If this is true for "
        "you, you can call this function with \"check_undefined_grad=False\" to disable the "
        "feature", stacklevel=3)


def _test_undefined_backward_mode(func, inputs, diff_inputs) -> None:
    """torch's check that backward handles undefined output gradients: all outputs passed
    through UndefinedGrad (no gradient flows below it, so the nodes beneath, and their hooks,
    see None), then, with several outputs, one at a time; the inputs' gradients must be
    undefined or zero."""
    from ..tensor.creation import zeros_like
    from .api import grad
    from .c_functions import UndefinedGrad

    outputs = _differentiable_outputs(func(*inputs))
    checked = [[UndefinedGrad()(output) for output in outputs]]
    if len(outputs) > 1:
        for undefined in range(len(outputs)):
            checked.append([UndefinedGrad()(output) if index == undefined else output
                            for index, output in enumerate(_differentiable_outputs(
                                func(*inputs)))])
    for outputs in checked:
        try:
            grads = grad(outputs, diff_inputs, [zeros_like(output) for output in outputs],
                         allow_unused=True)
        except RuntimeError as error:
            _warn_new_check()
            raise GradcheckError(
                "Expected backward function to handle undefined output grads. Please look at "
                "\"Notes about undefined output gradients\" in "
                "\"tools/autograd/derivatives.yaml\"") from error
        for g in grads:
            if g is not None and np.any(sparse.dense_array(g) != 0):
                _warn_new_check()
                raise GradcheckError(
                    "Expected all input grads to be undefined or zero when all output grads are "
                    "undefined or zero. Please look at \"Notes about undefined output "
                    "gradients\" in \"tools/autograd/derivatives.yaml\"")


def gradcheck(func, inputs, *, eps: float = 1e-6, atol: float = 1e-5, rtol: float = 1e-3,
              raise_exception: bool = True, nondet_tol: float = 0.0,
              check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
              check_batched_grad: bool = False, check_batched_forward_grad: bool = False,
              check_forward_ad: bool = False, check_backward_ad: bool = True,
              fast_mode: bool = False, masked: bool | None = None) -> bool:
    """Check the gradients of func at inputs against central finite differences.

    Differentiates with respect to every floating or complex tensor in inputs with
    requires_grad=True and compares the Jacobians with allclose(analytical, numerical, rtol,
    atol); complex values as pairs of reals, as torch checks them (the module's docstring).
    Returns True; on a failure raises GradcheckError, or returns False when
    raise_exception=False. The defaults are meant for float64 and complex128 inputs.
    """
    if not (check_forward_ad or check_backward_ad):
        raise AssertionError(
            "Expected at least one of check_forward_ad or check_backward_ad to be True")
    if check_batched_grad and not check_backward_ad:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_backward_ad to be True")
    if check_batched_forward_grad and not check_forward_ad:
        raise AssertionError(
            "Setting check_batched_forward_grad=True requires check_forward_ad to be True")
    try:
        tupled = _as_tuple(inputs)
        if check_backward_ad:
            _gradcheck(func, tupled, eps, atol, rtol, nondet_tol, check_undefined_grad,
                       check_grad_dtypes, fast_mode, bool(masked))
        if check_forward_ad:
            from .gradcheck_forward import (
                batched_forward_check,
                forward_gradcheck,
                undefined_forward_check,
            )

            forward_gradcheck(func, tupled, eps, atol, rtol)
            if check_undefined_grad:
                undefined_forward_check(func, tupled)
            if check_batched_forward_grad:
                batched_forward_check(func, tupled)
        if check_batched_grad:
            _batched_gradcheck(func, tupled, atol, rtol)
        return True
    except GradcheckError:
        if raise_exception:
            raise
        return False


def _gradcheck(func, inputs, eps, atol, rtol, nondet_tol, check_undefined_grad,
               check_grad_dtypes, fast_mode, masked=False) -> bool:
    _check_inputs(inputs)
    diff_inputs = list(_iter_tensors(inputs, True))
    func_out = _as_tuple(func(*inputs))
    sparse.check_outputs(func_out)
    outputs = _differentiable_outputs(func_out)
    if not outputs:
        _check_no_differentiable_outputs(func, inputs, diff_inputs, eps)
        return True
    check = _fast_gradcheck if fast_mode else _slow_gradcheck
    check(func, inputs, outputs, diff_inputs, eps, atol, rtol, nondet_tol, check_grad_dtypes,
          masked)
    _test_backward_mul_by_grad_output(outputs, diff_inputs, masked)
    if check_undefined_grad:
        _test_undefined_backward_mode(func, inputs, diff_inputs)
    return True


def _batched_gradcheck(func, inputs, atol, rtol) -> None:
    """Gradients for a batch of grad_outputs (is_grads_batched, one vmapped backward pass)
    against the same gradients taken one grad_output at a time."""
    from ..tensor.creation import default_generator
    from .api import grad

    diff_inputs = list(_iter_tensors(inputs, True))
    outputs = _differentiable_outputs(func(*inputs))
    generator = default_generator()
    for i, output in enumerate(outputs):
        batch = np.stack([_as_values(generator.uniform(-1, 1, _coordinates(output)), output)
                          for _ in range(2)])
        try:
            sparse.refuse_batched(diff_inputs)
            batched = grad(output, diff_inputs, Tensor._make(batch, output.dtype),
                           retain_graph=True, allow_unused=True, is_grads_batched=True)
        except RuntimeError as error:  # torch's report of a failing vmapped backward
            raise GradcheckError(f"While computing batched gradients, got: {error}\n\n"
                                 f"{sparse.FAILED_BATCHED_GRAD_MSG}") from error
        for index in range(2):
            # (an array even for a 0-d output, whose row of the batch NumPy gives as a scalar)
            single = grad(output, diff_inputs, Tensor._make(np.asarray(batch[index]),
                                                            output.dtype),
                          retain_graph=True, allow_unused=True)
            for j, (many, one) in enumerate(zip(batched, single, strict=True)):
                if (many is None) != (one is None):
                    raise GradcheckError(f"While computing batched gradients, got: input {j} "
                                         "is unused in one of the two computations")
                if one is not None and not np.allclose(np.asarray(many._payload[index]),
                                                       np.asarray(one._payload), rtol=rtol,
                                                       atol=atol):
                    raise GradcheckError(
                        f"While computing batched gradients, got: the batched gradient of "
                        f"output {i} with respect to input {j} differs from the gradient "
                        f"computed for grad_output {index} alone.")


def gradgradcheck(func, inputs, grad_outputs=None, *, eps: float = 1e-6, atol: float = 1e-5,
                  rtol: float = 1e-3, gen_non_contig_grad_outputs: bool = False,
                  raise_exception: bool = True, nondet_tol: float = 0.0,
                  check_undefined_grad: bool = True, check_grad_dtypes: bool = False,
                  check_batched_grad: bool = False, check_fwd_over_rev: bool = False,
                  check_rev_over_rev: bool = True, fast_mode: bool = False,
                  masked: bool = False) -> bool:
    """Check second derivatives: gradcheck of (inputs, grad_outputs) -> grad(func(inputs)).

    When grad_outputs is not given, random ones in [-1, 1) are drawn (from the generator that
    autojit.manual_seed seeds), with requires_grad=True, shaped and typed like the outputs.
    """
    if not (check_fwd_over_rev or check_rev_over_rev):
        raise AssertionError(
            "Expected at least one of check_fwd_over_rev or check_rev_over_rev to be True")
    if check_undefined_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_undefined_grad=True requires check_rev_over_rev to be True")
    if check_batched_grad and not check_rev_over_rev:
        raise AssertionError(
            "Setting check_batched_grad=True requires check_rev_over_rev to be True")
    from .api import grad

    tupled_inputs = _as_tuple(inputs)
    if grad_outputs is None:
        outputs = _differentiable_outputs(func(*tupled_inputs))
        tupled_grad_outputs = tuple(
            _random_grad_output(o, gen_non_contig_grad_outputs) for o in outputs)
    else:
        tupled_grad_outputs = _as_tuple(grad_outputs)
    count = len(tupled_grad_outputs)
    # Which tensors are differentiated (by place among all the tensors, through lists), noted
    # now, as torch notes them: the forward-mode checks pass them detached (an undefined
    # tangent), and they require grad again here.
    diff_inputs = {index for index, x in enumerate(_iter_tensors(tupled_inputs, False))
                   if x.requires_grad}
    diff_grad_outputs = {index for index, x in enumerate(_iter_tensors(tupled_grad_outputs,
                                                                       False))
                         if x.requires_grad}

    def gradients(*args):
        input_args, grad_outputs = args[:len(args) - count], args[len(args) - count:]
        diff_input_args = [x.requires_grad_() for index, x in
                           enumerate(_iter_tensors(input_args, False)) if index in diff_inputs]
        outputs = _differentiable_outputs(func(*input_args))
        for index, x in enumerate(_iter_tensors(grad_outputs, False)):
            if index in diff_grad_outputs:
                x.requires_grad_()
        results = grad(outputs, diff_input_args, grad_outputs, create_graph=True,
                       allow_unused=True)
        return tuple(g for g in results if g is not None)

    return gradcheck(gradients, tupled_inputs + tupled_grad_outputs, eps=eps, atol=atol,
                     rtol=rtol, raise_exception=raise_exception, nondet_tol=nondet_tol,
                     check_undefined_grad=check_undefined_grad,
                     check_grad_dtypes=check_grad_dtypes, check_batched_grad=check_batched_grad,
                     fast_mode=fast_mode, check_forward_ad=check_fwd_over_rev,
                     check_backward_ad=check_rev_over_rev, masked=masked)


def _random_grad_output(output: Tensor, non_contiguous: bool) -> Tensor:
    from ..tensor.creation import default_generator

    dtype = output.dtype if output.dtype.category >= dtypes.FLOATING else dtypes.float64
    values = default_generator().uniform(-1, 1, output.shape).astype(dtype.numpy)
    if dtype.is_complex:  # random imaginary parts too
        values = np.array(values + 1j * default_generator().uniform(-1, 1, output.shape),
                          dtype=dtype.numpy)
    if non_contiguous and values.ndim:
        # Every other element of a buffer twice as long in the last dim: same values, strided.
        buffer = np.zeros(values.shape[:-1] + (values.shape[-1] * 2,), dtype=values.dtype)
        buffer[..., ::2] = values
        values = buffer[..., ::2]
    result = Tensor._make(values, dtype)
    result.requires_grad_(True)
    return result


__all__ = ["GradcheckError", "gradcheck", "gradgradcheck"]


from .gradcheck_legacy import get_analytical_jacobian, get_numerical_jacobian  # noqa: E402, F401
