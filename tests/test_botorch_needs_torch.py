"""What BoTorch's own tests needed of autojit, against torch: `nn.Module` deriving from object
alone (BoTorch's tests compare an input transform's `__mro__` with `(..., Module, ABC,
object)`), with its methods still Module's own; the layout of an elementwise result whose
operands order their dims differently, which torch takes from the first operand that tells
them apart (BoTorch's `batched_multinomial` views a standardized permuted tensor with
`view(-1, n)`); `linalg.cholesky_ex` of a matrix with a NaN pivot, whose info is not 0
and which does not raise (BoTorch's cached-Cholesky sampling retries on it); the errors of
the linalg functions on singular matrices (torch's LinAlgError, which BoTorch and
linear_operator catch, and its messages); a scrambled SobolEngine without a seed drawing from
the default generator (BoTorch seeds its samplers with `manual_seed`); and `special.log_ndtr`
computed in the input's precision, with torch's gradients far in the tails.
"""

from __future__ import annotations

import abc
import math
import re

import numpy as np
import pytest

import autojit as aj

torch = pytest.importorskip("torch")


def _names(classes) -> list:
    return [cls.__name__ for cls in classes]


def test_module_hierarchy_as_torch():
    def hierarchy(lib):
        class Transform(lib.nn.Module, abc.ABC):
            pass

        return [_names(lib.nn.Module.__mro__), _names(lib.nn.Module.__bases__),
                _names(lib.nn.Linear.__mro__), _names(Transform.__mro__)]

    assert hierarchy(aj) == hierarchy(torch)


@pytest.mark.parametrize("name", ["to", "state_dict", "load_state_dict", "double", "_apply",
                                  "register_full_backward_hook", "compile", "to_empty",
                                  "share_memory", "cpu", "type"])
def test_module_methods_are_modules_own(name):
    def facts(lib):
        method = getattr(lib.nn.Module, name)
        bound = getattr(lib.nn.Linear(2, 3), name)
        return [name in vars(lib.nn.Module), method.__qualname__,
                repr(bound).split(" of ")[0]]

    assert facts(aj) == facts(torch)


def test_module_methods_still_work():
    def run(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.Tanh(), lib.nn.Linear(3, 1))
        state = model.state_dict()
        model.double()
        seen = []
        model[0].register_full_backward_hook(lambda module, gin, gout: seen.append(
            [tuple(g.shape) for g in gout]))
        out = model(lib.ones(4, 2, dtype=lib.float64)).sum()
        out.backward()
        result = model.load_state_dict(state)
        return [list(state), str(model[0].weight.dtype).split(".")[-1], seen,
                round(out.item(), 10), repr(result)]

    assert run(aj) == run(torch)


_INTERNAL_ASSERT = re.compile(r"^false INTERNAL ASSERT FAILED at .*please report a bug to "
                              r"PyTorch\. ")


def _outcome(call, lib=None):
    """A call's value, or its error: whether it is the library's LinAlgError (torch's is
    `torch._C._LinAlgError`), a RuntimeError, and its message (less the prefix of torch's
    internal asserts, which names its C++ source line)."""
    try:
        return "value", call()
    except Exception as error:  # noqa: BLE001 - compared, not handled
        linalg = lib is not None and isinstance(error, lib.linalg.LinAlgError)
        return ("error", linalg, isinstance(error, RuntimeError),
                _INTERNAL_ASSERT.sub("", str(error)))


def _layout_cases(lib):
    """Elementwise results over operands laid out differently: each case's strides, and what
    view(-1) (or view(-1, 5)) gives."""
    lib.manual_seed(0)
    transposed, rows = lib.rand(3, 4).t(), lib.rand(4, 3)
    permuted = lib.rand(5, 3, 2, dtype=lib.float64).permute(1, 2, 0)  # BoTorch's acq values
    mean = permuted.mean(dim=-2, keepdim=True)
    std = permuted.std(dim=-2, keepdim=True)
    cases = {
        "transposed + rows": lambda: transposed + rows,
        "rows + transposed": lambda: rows + transposed,
        "transposed * rows": lambda: transposed * rows,
        "transposed + a row": lambda: transposed + rows[0],
        "transposed + a column": lambda: transposed + lib.ones(4, 1),
        "where, transposed condition": lambda: lib.where(transposed > 0.5, rows, transposed),
        "where, row-major condition": lambda: lib.where(rows > 0.5, transposed, rows),
        "permuted - its mean": lambda: permuted - mean,
        "mean - permuted": lambda: mean - permuted,
        "standardized": lambda: ((permuted - mean) / std).exp(),
        "a chain": lambda: (transposed - rows) * rows + transposed,
    }
    facts = {}
    for name, make in cases.items():
        result = make()
        facts[name] = (result.stride(), _outcome(lambda r=result: r.view(-1).shape[0]),
                       _outcome(lambda r=result: tuple(r.view(-1, r.shape[-1]).shape)),
                       np.round(result.detach().numpy(), 6).tolist())
    return facts


def test_elementwise_layout_of_disagreeing_operands_as_torch():
    assert _layout_cases(aj) == _layout_cases(torch)


def test_compiled_elementwise_layout_of_disagreeing_operands_as_eager():
    def standardized(lib, values):
        mean = values.mean(dim=-2, keepdim=True)
        weights = ((values - mean) * 0.5).exp()
        return weights, weights.view(-1, values.shape[-1])

    data = np.random.default_rng(1).uniform(size=(5, 3, 2))
    expected = standardized(torch, torch.tensor(data).permute(1, 2, 0))
    compiled = aj.compile(lambda values: standardized(aj, values))
    for _ in range(2):
        got = compiled(aj.tensor(data).permute(1, 2, 0))
        for mine, theirs in zip(got, expected):
            assert mine.stride() == theirs.stride()
            np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-12)


NAN, INF = math.nan, math.inf
CHOLESKY_MATRICES = {
    "nan first pivot": [[NAN, 0.0], [0.0, 1.0]],
    "nan off the diagonal": [[1.0, NAN], [NAN, 1.0]],
    "nan last pivot": [[4.0, 2.0], [2.0, NAN]],
    "nan after a negative pivot": [[1.0, 0.0, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, NAN]],
    "nan before a negative pivot": [[1.0, 0.0, 0.0], [0.0, NAN, 0.0], [0.0, 0.0, -1.0]],
    "infinite last pivot": [[1.0, 0.0], [0.0, INF]],
    "infinite pivot below a row": [[2.0, 1.0], [1.0, INF]],
    "infinite off the diagonal": [[1.0, INF], [INF, 1.0]],
    "positive-definite": [[2.0, 1.0], [1.0, 2.0]],
    "indefinite": [[1.0, 2.0], [2.0, 1.0]],
}


@pytest.mark.parametrize("name", list(CHOLESKY_MATRICES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_cholesky_ex_info_and_cholesky_of_nan_and_inf_as_torch(name, dtype):
    def run(lib):
        matrix = lib.tensor(CHOLESKY_MATRICES[name], dtype=getattr(lib, dtype))
        factor, info = lib.linalg.cholesky_ex(matrix)
        facts = [info.item(), _outcome(lambda: lib.linalg.cholesky_ex(
            matrix, check_errors=True).info.item(), lib)]
        if info.item() == 0:  # the factor is LAPACK's only where it succeeds
            facts.append(np.round(factor.numpy(), 6).tolist())
        return facts + [_outcome(lambda: np.round(lib.linalg.cholesky(matrix).numpy(),
                                                  6).tolist(), lib)]

    assert run(aj) == run(torch)


def test_cholesky_ex_of_a_batch_of_nan_matrices_as_torch():
    """BoTorch's cached Cholesky: a batch whose samples are all NaN gets info 1 for each
    matrix, then jitter and a NotPSDError from linear_operator, not a LinAlgError."""
    def run(lib):
        factor, info = lib.linalg.cholesky_ex(lib.full((2, 3, 3), NAN, dtype=lib.float64))
        return info.tolist(), tuple(factor.shape)

    assert run(aj) == run(torch)


def _singular_cases(lib, check=True):
    """Each linalg function on singular matrices (one, and the second of a batch), with
    check_errors=check for the _ex forms."""
    one = lib.tensor([[1.0, 0.0], [1.0, 0.0]])
    batch = lib.stack([lib.eye(2), one])
    symmetric = lib.stack([lib.eye(2), lib.ones(2, 2)])
    linalg = lib.linalg
    return {
        "cholesky_ex": lambda: linalg.cholesky_ex(lib.zeros(3, 2, 2), check_errors=check),
        "cholesky_ex indefinite": lambda: linalg.cholesky_ex(
            lib.tensor([[1.0, 2.0], [2.0, 1.0]]), check_errors=check),
        "cholesky": lambda: linalg.cholesky(batch),
        "inv_ex": lambda: linalg.inv_ex(one, check_errors=check),
        "inv_ex batch": lambda: linalg.inv_ex(batch, check_errors=check),
        "inv": lambda: linalg.inv(batch),
        "inverse": lambda: lib.inverse(one),
        "solve_ex": lambda: linalg.solve_ex(one, lib.ones(2), check_errors=check),
        "solve_ex batch": lambda: linalg.solve_ex(batch, lib.ones(2, 2), check_errors=check),
        "solve": lambda: linalg.solve(one, lib.ones(2)),
        "lu_factor_ex": lambda: linalg.lu_factor_ex(one, check_errors=check),
        "lu_factor_ex batch": lambda: linalg.lu_factor_ex(batch, check_errors=check),
        "lu_factor": lambda: linalg.lu_factor(batch),
        "ldl_factor_ex": lambda: linalg.ldl_factor_ex(lib.zeros(2, 2), check_errors=check),
        "ldl_factor_ex batch": lambda: linalg.ldl_factor_ex(symmetric, check_errors=check),
        "ldl_factor": lambda: linalg.ldl_factor(symmetric),
        "cholesky_inverse": lambda: lib.cholesky_inverse(one),
        "cholesky_inverse batch": lambda: lib.cholesky_inverse(batch),
        "cholesky_inverse upper": lambda: lib.cholesky_inverse(batch.mT, upper=True),
    }


@pytest.mark.parametrize("name", list(_singular_cases(torch)))
def test_singular_matrices_raise_as_torch(name):
    """torch's error type for each function (LinAlgError, a RuntimeError, which
    linear_operator's and BoTorch's retries catch; a plain RuntimeError from lu_factor and
    ldl_factor) and its message; the _ex forms raise only with check_errors=True."""
    def run(lib):
        return _outcome(lambda: _singular_cases(lib)[name]() and None, lib)

    assert run(aj) == run(torch)


@pytest.mark.parametrize("name", [name for name in _singular_cases(torch) if "_ex" in name])
def test_ex_forms_without_check_errors_return_the_info_as_torch(name):
    def run(lib):
        return _singular_cases(lib, check=False)[name]().info.tolist()

    assert run(aj) == run(torch)


@pytest.mark.parametrize("dimension", [1, 3, 40])
def test_unseeded_scrambled_sobol_draws_from_the_default_generator_as_torch(dimension):
    """BoTorch seeds its samplers with `manual_seed` (MatheronPathModel's `seed`, fork_rng):
    a scrambled SobolEngine without a seed is then torch's, and leaves the default generator
    where torch's leaves it."""
    def run(lib):
        lib.manual_seed(7)
        engine = lib.quasirandom.SobolEngine(dimension, scramble=True)
        return (engine.shift.tolist(), engine.draw(5, dtype=lib.float64).tolist(),
                lib.rand(3).tolist())

    assert run(aj) == run(torch)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_log_ndtr_and_its_gradient_far_in_the_tails_as_torch(dtype):
    """torch computes log_ndtr in the input's precision, -t^2 rounded there (t = x/sqrt 2), so
    its gradient exp(-(out + x^2/2)) / sqrt(2 pi) is 0 or inf far in the lower tail (BoTorch's
    test of its own log_ndtr reads torch's infinities); autojit's values and gradients are
    torch's, with the same infinities."""
    def run(lib):
        powers = [float(f"1e{k}") for k in range(100 if dtype == "float64" else 20)]
        steps = [k / 4 for k in range(-24, 25)]
        x = lib.tensor([-p for p in powers] + powers + steps, dtype=getattr(lib, dtype),
                       requires_grad=True)
        out = lib.special.log_ndtr(x)
        out.sum().backward()
        return out.detach().numpy(), x.grad.numpy()

    (out, grad), (expected_out, expected_grad) = run(aj), run(torch)
    rtol = 1e-6 if dtype == "float32" else 1e-14
    np.testing.assert_allclose(out, expected_out, rtol=rtol, atol=0)
    np.testing.assert_array_equal(np.isinf(grad), np.isinf(expected_grad))
    np.testing.assert_allclose(grad, expected_grad, rtol=rtol, atol=0)
