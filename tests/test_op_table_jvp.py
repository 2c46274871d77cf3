"""The op table, forward mode: every differentiable row's JVP, in float64.

For each sample, one random tangent per differentiable input is pushed forward through a dual
level (autograd/forward_ad.py), and the output tangent J t is checked two ways: against the
central difference (f(x + eps t) - f(x - eps t)) / 2 eps, and against reverse mode by the
transpose identity <u, J t> = <J^T u, t> for a random cotangent u. A primitive with its own
`jvp` rule is checked against its VJP this way; one without is checked through the transposed
VJP. The rows and samples are tests/test_op_table.py's.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from opinfo import OpInfo
from test_op_table import (
    ROWS,
    call_arguments,
    describe,
    flat_tensors,
    reseed,
    rows_where,
    samples_for,
)

import autojit
import autojit.autograd.forward_ad as forward_ad
from autojit.ops import REGISTRY


def _directional(row, args, kwargs, inputs, tangents, eps):
    """(f(x + eps t) - f(x - eps t)) / 2 eps for each floating output."""
    originals = [x._payload.copy() for x in inputs]
    results = []
    for sign in (1.0, -1.0):
        for x, original, tangent in zip(inputs, originals, tangents):
            x._payload[...] = original + sign * eps * tangent
        reseed(row)
        with autojit.no_grad():
            results.append([np.array(t._payload, dtype=np.float64)
                            for t in flat_tensors(row.function(*args, **kwargs))])
    for x, original in zip(inputs, originals):
        x._payload[...] = original
    return [(plus - minus) / (2 * eps) for plus, minus in zip(*results)]


def _check_row(row):
    for index, sample in enumerate(samples_for(row, "float64")):
        args, kwargs = call_arguments(row, sample, requires_grad=True)
        inputs = [t for t in flat_tensors(list(args)) if t.requires_grad]
        if not inputs:
            continue
        where = describe(row, "float64", index, sample)
        rng = np.random.default_rng(index)
        tangents = [rng.uniform(-1, 1, x.shape) for x in inputs]
        with forward_ad.dual_level():
            duals = {id(x): forward_ad.make_dual(x, autojit.tensor(t))
                     for x, t in zip(inputs, tangents)}
            dual_args = tuple(_replace(arg, duals) for arg in args)
            reseed(row)
            outputs = flat_tensors(row.function(*dual_args, **kwargs))
            pushed = [forward_ad.unpack_dual(o).tangent for o in outputs]
            primals = [forward_ad.unpack_dual(o).primal for o in outputs]
        floating = [i for i, o in enumerate(outputs) if o.dtype.is_floating_point]
        numerical = _directional(row, args, kwargs, inputs, tangents, row.grad_eps)
        atol, rtol = row.grad_atol, row.grad_rtol
        for i in floating:
            got = np.zeros(outputs[i].shape) if pushed[i] is None else np.asarray(pushed[i])
            np.testing.assert_allclose(got, numerical[i], atol=atol, rtol=rtol,
                                       err_msg=f"{where}: JVP of output {i} vs finite "
                                               "differences")
        # The transpose identity, against the reverse-mode gradients of the same primals.
        differentiable = [i for i in floating if primals[i].requires_grad]
        if not differentiable:
            continue
        cotangents = [rng.uniform(-1, 1, outputs[i].shape) for i in differentiable]
        reseed(row)
        fresh = [t for t in flat_tensors(row.function(*args, **kwargs))]
        grads = autojit.autograd.grad([fresh[i] for i in differentiable], inputs,
                                      [autojit.tensor(u) for u in cotangents],
                                      allow_unused=True)
        backward = sum(float(np.sum(np.asarray(g) * t)) for g, t in zip(grads, tangents)
                       if g is not None)
        forward = sum(float(np.sum(u * (0 if pushed[i] is None else np.asarray(pushed[i]))))
                      for i, u in zip(differentiable, cotangents))
        # An output computed in a narrower dtype rounds the two products differently: the
        # tangent and the cotangent are each rounded to it.
        rtol = max([1e-7] + [max(1e-5, 8 * autojit.finfo(outputs[i].dtype).eps)
                             for i in differentiable if outputs[i].dtype is not autojit.float64])
        if row.grad_atol > OpInfo.grad_atol:  # a result rounded to a narrow dtype inside the
            rtol = max(rtol, row.grad_atol)   # row (bfloat16's): gradcheck's tolerance
        assert abs(forward - backward) <= 1e-8 + rtol * abs(backward), (
            f"{where}: <u, J t> = {forward!r} but <J^T u, t> = {backward!r}")


def _replace(value, duals: dict):
    if isinstance(value, autojit.Tensor):
        return duals.get(id(value), value)
    if isinstance(value, (list, tuple)):
        return type(value)(_replace(v, duals) for v in value)
    return value


# Rows of complex dtypes only are checked in forward mode by tests/test_complex_autograd_torch.py
# (gradcheck with check_forward_ad, which perturbs real and imaginary parts).
@pytest.mark.parametrize("row", rows_where(
    lambda row: row.differentiable and row.seed is None and "float64" in row.dtypes, "jvp"))
def test_jvp(row):
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=".*not a double precision")
        _check_row(row)


def test_every_differentiable_primitive_has_a_jvp_rule():
    """Every primitive with a VJP has its own JVP rule in its registry entry (the transposed
    VJP is only a fallback), and none without a VJP has one."""
    missing = sorted(op.name for op in REGISTRY.values() if op.vjp is not None and op.jvp is None)
    assert not missing, f"differentiable primitives without a JVP rule: {missing}"
    for op in REGISTRY.values():
        assert op.jvp is None or callable(op.jvp), op.name
        assert op.jvp is None or op.vjp is not None, f"{op.name} has a JVP but no VJP"


assert ROWS
