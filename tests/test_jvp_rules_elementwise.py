"""Forward mode through the elementwise primitives' own JVP rules, against torch.

Every differentiable primitive of ops/elementwise/__init__.py, elementwise_math.py,
special_functions.py and loss.py has an explicit `jvp` in its registry entry; forward mode
would otherwise transpose its VJP (correct, several times slower). The checks here run with
that fallback made to fail for these primitives, so they see the rules themselves: tangents at
the special points against torch.autograd.forward_ad (values, NaN and infinities, dtypes, and
None where torch gives no tangent), a compiled JVP against the eager one, and nested levels
against torch's second derivative. tests/test_op_table_jvp.py checks every rule on random
points against finite differences and the VJP.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import autojit
import autojit.autograd.forward_ad as forward_ad
from autojit.ops import elementwise
from autojit.ops.elementwise import math_primitives as elementwise_math
from autojit.ops.nn import loss
from autojit.ops.registry import Op
from autojit.ops.special import functions as special_functions

torch = pytest.importorskip("torch")
torch_forward_ad = pytest.importorskip("torch.autograd.forward_ad")

MODULES = (elementwise, elementwise_math, special_functions, loss)
PRIMITIVES = {op.name: op for module in MODULES for op in vars(module).values()
              if isinstance(op, Op)}
NAN, INF = math.nan, math.inf


@pytest.fixture
def explicit_rules_only(monkeypatch):
    """Forward mode may not transpose the VJP of this file's primitives."""
    fallback = forward_ad.transposed_jvp

    def refuse(op, *args):
        assert op.name not in PRIMITIVES, f"{op.name} fell back to its transposed VJP"
        return fallback(op, *args)

    monkeypatch.setattr(forward_ad, "transposed_jvp", refuse)


def test_every_differentiable_elementwise_primitive_has_a_jvp_rule():
    assert len(PRIMITIVES) > 50  # the modules' primitives were found
    missing = sorted(name for name, op in PRIMITIVES.items()
                     if op.vjp is not None and op.jvp is None)
    assert not missing, f"differentiable primitives without a JVP rule: {missing}"


def _F(lib):
    return lib.nn.functional


# (name, function(lib, *inputs), the float64 inputs, which of them are dual)
CASES = [
    ("div_by_zero", lambda lib, x, y: x / y,
     ([1.0, -1.0, 0.0, 2.0, INF], [0.0, 0.0, 0.0, 4.0, 2.0]), (True, True)),
    ("maximum_ties_nan", lambda lib, x, y: lib.maximum(x, y),
     ([1.0, 2.0, NAN, 3.0, -1.0], [1.0, NAN, 0.0, -1.0, 3.0]), (True, True)),
    ("minimum_ties_nan", lambda lib, x, y: lib.minimum(x, y),
     ([1.0, 2.0, NAN, 3.0, -1.0], [1.0, NAN, 0.0, -1.0, 3.0]), (True, True)),
    ("atan2_origin", lambda lib, y, x: lib.atan2(y, x),
     ([0.0, 1.0, 0.0, -2.0], [0.0, 0.0, -1.0, 3.0]), (True, True)),
    ("pow_zeros", lambda lib, x, y: lib.pow(x, y),
     ([0.0, 0.0, 2.0, -1.0, 0.0], [0.0, -1.0, 0.5, 2.0, 2.0]), (True, True)),
    ("pow_scalar_exponent", lambda lib, x: x ** 0 + x ** 3 + 2.0 ** x, ([0.0, -1.5, 2.0],),
     (True,)),
    ("xlogy_zero", lambda lib, x, y: lib.xlogy(x, y),
     ([0.0, 0.0, 1.0, 2.0], [0.0, -1.0, 2.0, 0.0]), (True, True)),
    ("where", lambda lib, c, x, y: lib.where(c > 0, x, y),
     ([1.0, -1.0, 2.0], [1.0, 2.0, 3.0], [4.0, 5.0, 6.0]), (False, True, True)),
    # Zeros, not None: torch gives a piecewise-constant op's output a zero tangent.
    ("floor_is_zero", lambda lib, x: lib.floor(x), ([1.5, -0.5, 0.0],), (True,)),
    ("sign_is_zero", lambda lib, x: lib.sign(x), ([1.5, -0.5, 0.0],), (True,)),
    ("copysign_sign_only", lambda lib, x, y: lib.copysign(x, y),
     ([1.0, -2.0, 3.0], [-1.0, 1.0, 0.0]), (False, True)),
    ("copysign", lambda lib, x, y: lib.copysign(x, y),
     ([1.0, -2.0, 0.0], [-1.0, 1.0, 0.0]), (True, True)),
    ("cast", lambda lib, x: x.to(lib.float32), ([1.0, -2.0],), (True,)),
    ("logit_outside", lambda lib, x: lib.logit(x), ([-0.5, 0.25, 1.5, 0.0],), (True,)),
    ("i1_near_zero", lambda lib, x: lib.special.i1(x), ([0.0, 1e-300, 2.0],), (True,)),
    ("lgamma_digamma", lambda lib, x: lib.lgamma(x) * lib.digamma(x), ([0.5, 2.5, -1.5],),
     (True,)),
    ("bce", lambda lib, p, t: _F(lib).binary_cross_entropy(p, t, reduction="none"),
     ([0.25, 0.5, 0.9], [0.0, 0.5, 1.0]), (True, True)),
    ("logaddexp_infinite", lambda lib, x, y: lib.logaddexp(x, y),
     ([INF, -INF, 1.0], [1.0, -INF, 2.0]), (True, True)),
]


def _tangent(lib, values, position):
    count = len(values)
    return lib.tensor([(-1) ** position * (0.5 + 0.37 * i + position) for i in range(count)],
                      dtype=lib.float64)


def _pushed(lib, dual_api, function, inputs, dual):
    tensors = [lib.tensor(values, dtype=lib.float64) for values in inputs]
    with dual_api.dual_level():
        arguments = [dual_api.make_dual(x, _tangent(lib, values, i)) if is_dual else x
                     for i, (x, values, is_dual) in enumerate(zip(tensors, inputs, dual))]
        tangent = dual_api.unpack_dual(function(lib, *arguments)).tangent
    if tangent is None:
        return None
    return str(tangent.dtype).split(".")[-1], np.array(tangent.detach().tolist())


@pytest.mark.parametrize("name, function, inputs, dual", CASES, ids=[case[0] for case in CASES])
def test_tangents_match_torch(explicit_rules_only, name, function, inputs, dual):
    got = _pushed(autojit, forward_ad, function, inputs, dual)
    expected = _pushed(torch, torch_forward_ad, function, inputs, dual)
    if expected is None:
        assert got is None, f"{name}: torch gives no tangent, autojit {got}"
        return
    assert got is not None, f"{name}: autojit gives no tangent, torch {expected}"
    assert got[0] == expected[0], f"{name}: tangent dtype {got[0]}, torch's {expected[0]}"
    np.testing.assert_allclose(got[1], expected[1], rtol=1e-9, atol=0, equal_nan=True,
                               err_msg=name)


def _jvp_program(x, y, tx):
    with forward_ad.dual_level():
        dx = forward_ad.make_dual(x, tx)
        out = (autojit.maximum(dx * y, dx.exp()) / (y + 2) + autojit.atan2(dx, y)
               + autojit.where(x > 0, dx.sin(), dx ** 2) + autojit.lgamma(dx.abs() + 1)
               + autojit.xlogy(dx, y).tanh())
        return forward_ad.unpack_dual(out).tangent


def test_compiled_jvp_equals_eager(explicit_rules_only):
    x = autojit.tensor(np.linspace(-1.0, 1.0, 6))
    y = autojit.tensor(np.linspace(0.5, 2.0, 6))
    tx = autojit.tensor(np.linspace(1.0, 2.0, 6))
    eager = _jvp_program(x, y, tx)
    compiled = autojit.compile(_jvp_program)
    for _ in range(2):  # the trace, then the cached executable
        np.testing.assert_allclose(np.asarray(compiled(x, y, tx)), np.asarray(eager),
                                   rtol=1e-12)
    assert compiled.eager_reason is None and compiled.executables


def test_clone_tangent_is_a_copy(explicit_rules_only):
    tangent = autojit.ones(3, dtype=autojit.float64)
    with forward_ad.dual_level():
        copy = forward_ad.make_dual(autojit.zeros(3, dtype=autojit.float64), tangent).clone()
        forward_ad.unpack_dual(copy).tangent.mul_(2)
    assert np.asarray(tangent).tolist() == [1.0, 1.0, 1.0]


def test_nested_levels_give_the_second_derivative(explicit_rules_only):
    values = [0.3, -1.2, 2.0]
    x = autojit.tensor(values, dtype=autojit.float64)
    ones = autojit.ones(3, dtype=autojit.float64)
    outer = forward_ad.enter_level()
    inner = forward_ad.enter_level()
    try:
        dual = forward_ad.make_dual(forward_ad.make_dual(x, ones, level=0), ones, level=1)
        y = dual.exp() * dual.sin() / (dual * dual + 1) + autojit.special.erfc(dual)
        first = forward_ad.unpack_dual(y, level=1).tangent
        second = forward_ad.unpack_dual(first, level=0).tangent
    finally:
        forward_ad.exit_level(inner)
        forward_ad.exit_level(outer)
    reference = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    out = reference.exp() * reference.sin() / (reference * reference + 1) + torch.erfc(reference)
    (gradient,) = torch.autograd.grad(out.sum(), reference, create_graph=True)
    (hessian,) = torch.autograd.grad(gradient.sum(), reference)
    np.testing.assert_allclose(np.asarray(first), gradient.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(second), hessian.numpy(), rtol=1e-10)


def test_forward_over_reverse(explicit_rules_only):
    """Tangents pushed through the VJPs' own ops: binary_cross_entropy_backward's rule among
    them, which only a gradient computes."""
    rng = np.random.default_rng(0)
    p, target, y = (autojit.tensor(rng.uniform(0.1, 0.9, 4), requires_grad=True)
                    for _ in range(3))

    def function(p, target, y):
        return (autojit.nn.functional.binary_cross_entropy(p, target)
                + (autojit.atan2(p, y) * autojit.maximum(p, y) / y).sum()
                + autojit.xlogy(p, y).exp().sum())

    assert autojit.autograd.gradgradcheck(function, (p, target, y), check_fwd_over_rev=True)
