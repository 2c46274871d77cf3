"""autojit.distributions' supporting API against torch: constraints (check, repr, event_dim),
transforms (forward, inverse, log-determinant, shapes), the constraint registry, the utils,
argument validation (the errors' types and messages, eagerly and compiled), and a compiled
REINFORCE/PPO/SAC-style training step, which must equal the eager one.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import autojit
import autojit.distributions as D

LIBS = {"autojit": (autojit, D), "torch": (torch, torch.distributions)}


def both(function):
    """function(lib, namespace) for autojit and for torch."""
    return [function(*LIBS[name]) for name in ("autojit", "torch")]


def t(lib, values):
    return lib.tensor(np.asarray(values, dtype=np.float64))


def assert_same(ours, theirs, rtol=1e-9):
    if isinstance(theirs, torch.Tensor):
        ours = ours.detach().numpy()
        theirs = theirs.detach().numpy()
    np.testing.assert_allclose(np.asarray(ours, dtype=np.float64),
                               np.asarray(theirs, dtype=np.float64), rtol=rtol, atol=1e-12)


# ---- constraints -------------------------------------------------------------------------------

CONSTRAINTS = {
    "real": lambda c, lib: c.real, "positive": lambda c, lib: c.positive,
    "nonnegative": lambda c, lib: c.nonnegative, "boolean": lambda c, lib: c.boolean,
    "unit_interval": lambda c, lib: c.unit_interval, "simplex": lambda c, lib: c.simplex,
    "real_vector": lambda c, lib: c.real_vector, "one_hot": lambda c, lib: c.one_hot,
    "nonnegative_integer": lambda c, lib: c.nonnegative_integer,
    "positive_integer": lambda c, lib: c.positive_integer,
    "integer_interval": lambda c, lib: c.integer_interval(0, 3),
    "interval": lambda c, lib: c.interval(-1.0, 0.5),
    "half_open_interval": lambda c, lib: c.half_open_interval(-1.0, 0.5),
    "greater_than": lambda c, lib: c.greater_than(0.2),
    "greater_than_eq": lambda c, lib: c.greater_than_eq(0.2),
    "less_than": lambda c, lib: c.less_than(0.2),
    "multinomial": lambda c, lib: c.multinomial(3),
    "independent": lambda c, lib: c.independent(c.positive, 1),
    "lower_triangular": lambda c, lib: c.lower_triangular,
    "lower_cholesky": lambda c, lib: c.lower_cholesky,
    "corr_cholesky": lambda c, lib: c.corr_cholesky, "square": lambda c, lib: c.square,
    "symmetric": lambda c, lib: c.symmetric,
    "positive_definite": lambda c, lib: c.positive_definite,
    "positive_semidefinite": lambda c, lib: c.positive_semidefinite,
    "cat": lambda c, lib: c.cat([c.positive, c.real], 0, [1, 3]),
    "stack": lambda c, lib: c.stack([c.positive, c.real, c.unit_interval], 1),
}
_rng = np.random.default_rng(0)
_SYMMETRIC = _rng.normal(size=(4, 4))
# torch's symmetric-matrix checks return only the symmetry check when any matrix of the batch
# is not symmetric (autojit's judge each matrix alone), so the batches do not mix them.
CONSTRAINT_VALUES = [
    np.array([[0.0, 1.0, 0.5], [-0.3, 2.0, np.nan], [1.0, 3.0, 0.25]]),
    np.array([[0.25, 0.25, 0.5, 0.0], [1.0, 0.0, 0.0, 0.0], [0.5, 0.6, -0.1, 0.0]]),
    np.stack([np.eye(4), np.diag([1.0, 2.0, 0.0, 3.0]), _SYMMETRIC + _SYMMETRIC.T,
              _SYMMETRIC @ _SYMMETRIC.T + np.eye(4)]),
    np.stack([np.tril(_rng.normal(size=(4, 4))), _rng.normal(size=(4, 4))]),
    np.abs(np.linalg.cholesky(np.eye(4) + np.ones((4, 4)))),
]


@pytest.mark.parametrize("name", CONSTRAINTS)
def test_constraints_check_and_describe_as_torchs(name):
    ours, theirs = both(lambda lib, d: CONSTRAINTS[name](d.constraints, lib))
    assert repr(ours) == repr(theirs)
    assert ours.is_discrete == theirs.is_discrete
    assert ours.event_dim == theirs.event_dim
    for values in CONSTRAINT_VALUES:
        if values.ndim < theirs.event_dim or values.shape[0] < 4 and name == "cat":
            continue
        try:
            expected = theirs.check(torch.tensor(values))
        except (RuntimeError, ValueError, AssertionError, IndexError):
            continue
        np.testing.assert_array_equal(ours.check(autojit.tensor(values)).numpy(),
                                      expected.numpy())


def test_dependent_constraints():
    uniform = D.Uniform(autojit.zeros(2), autojit.ones(2))
    assert D.constraints.is_dependent(D.Uniform.support)
    assert not D.constraints.is_dependent(D.constraints.real)
    assert repr(uniform.support).startswith("Interval(lower_bound=tensor([0., 0.])")
    with pytest.raises(ValueError, match="Cannot determine validity of dependent constraint"):
        D.constraints.dependent.check(autojit.zeros(1))
    with pytest.raises(NotImplementedError, match="cannot be determined statically"):
        D.constraints.dependent.event_dim  # noqa: B018
    custom = D.constraints.dependent(is_discrete=True, event_dim=1)
    assert custom.is_discrete and custom.event_dim == 1


# ---- transforms --------------------------------------------------------------------------------

TRANSFORMS = {
    "exp": (lambda d, lib: d.ExpTransform(), (2, 3)),
    "exp_inv": (lambda d, lib: d.ExpTransform().inv, (2, 3)),
    "affine": (lambda d, lib: d.AffineTransform(t(lib, [1.0, -2.0, 0.5]),
                                                t(lib, [2.0, -0.5, 3.0])), (2, 3)),
    "affine_numbers_event": (lambda d, lib: d.AffineTransform(1.5, -2.0, event_dim=1), (2, 3)),
    "sigmoid": (lambda d, lib: d.SigmoidTransform(), (2, 3)),
    "tanh": (lambda d, lib: d.TanhTransform(), (2, 3)),
    "softplus": (lambda d, lib: d.SoftplusTransform(), (2, 3)),
    "power": (lambda d, lib: d.PowerTransform(t(lib, 2.5)), (2, 3)),
    "abs": (lambda d, lib: d.AbsTransform(), (2, 3)),
    "softmax": (lambda d, lib: d.SoftmaxTransform(), (2, 3)),
    "stick_breaking": (lambda d, lib: d.StickBreakingTransform(), (2, 3)),
    "lower_cholesky": (lambda d, lib: d.LowerCholeskyTransform(), (2, 3, 3)),
    "positive_definite": (lambda d, lib: d.PositiveDefiniteTransform(), (2, 3, 3)),
    "corr_cholesky": (lambda d, lib: d.CorrCholeskyTransform(), (2, 6)),
    "compose": (lambda d, lib: d.ComposeTransform([d.TanhTransform(),
                                                   d.AffineTransform(1.0, 2.0)]), (2, 3)),
    "independent": (lambda d, lib: d.IndependentTransform(d.SigmoidTransform(), 1), (2, 3)),
    "reshape": (lambda d, lib: d.ReshapeTransform((2, 3), (6,)), (4, 2, 3)),
    "cat": (lambda d, lib: d.CatTransform([d.ExpTransform(), d.TanhTransform()], -1, [1, 2]),
            (2, 3)),
    "stack": (lambda d, lib: d.StackTransform([d.ExpTransform(), d.SigmoidTransform()], 1),
              (3, 2)),
    "cdf": (lambda d, lib: d.CumulativeDistributionTransform(d.Normal(0.5, 2.0)), (2, 3)),
}


@pytest.mark.parametrize("name", TRANSFORMS)
def test_transforms_as_torchs(name):
    build, shape = TRANSFORMS[name]
    x = np.random.default_rng(1).normal(size=shape) * 0.8
    if name == "power":
        x = np.abs(x) + 0.1
    ours, theirs = both(lambda lib, d: build(d, lib))
    xs = [autojit.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)]
    ys = [ours(xs[0]), theirs(xs[1])]
    assert_same(ys[0], ys[1])
    assert_same(ours.inv(ys[0]), theirs.inv(ys[1]), rtol=1e-7)
    assert ours.bijective == theirs.bijective
    assert repr(ours.domain) == repr(theirs.domain)
    assert repr(ours.codomain) == repr(theirs.codomain)
    assert tuple(ours.forward_shape(shape)) == tuple(theirs.forward_shape(shape))
    assert tuple(ours.inverse_shape(tuple(ys[1].shape))) == \
        tuple(theirs.inverse_shape(tuple(ys[1].shape)))
    assert ours.inv.inv is ours
    try:
        expected = theirs.log_abs_det_jacobian(xs[1], ys[1])
    except NotImplementedError:
        with pytest.raises(NotImplementedError):
            ours.log_abs_det_jacobian(xs[0], ys[0])
        return
    ldj = ours.log_abs_det_jacobian(xs[0], ys[0])
    assert_same(ldj, expected, rtol=1e-8)
    assert_same(ours.inv.log_abs_det_jacobian(ys[0], xs[0]),
                theirs.inv.log_abs_det_jacobian(ys[1], xs[1]), rtol=1e-8)
    (ours_grad,) = autojit.autograd.grad(ldj.sum() + ys[0].sum(), xs[0])
    (theirs_grad,) = torch.autograd.grad(expected.sum() + ys[1].sum(), xs[1])
    assert_same(ours_grad, theirs_grad, rtol=1e-7)
    try:
        theirs_sign = theirs.sign
    except NotImplementedError:
        return
    assert_same(ours.sign, theirs_sign)


def test_transform_cache_and_equality():
    tanh = D.TanhTransform(cache_size=1)
    x = autojit.tensor([30.0])  # tanh(x) rounds to 1, whose atanh is inf
    y = tanh(x)
    assert tanh.inv(y) is x
    assert D.TanhTransform() == D.TanhTransform() and D.ExpTransform() != D.TanhTransform()
    assert D.AffineTransform(1.0, 2.0) == D.AffineTransform(1.0, 2.0)
    assert D.ExpTransform().inv == D.ExpTransform().inv
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        D.ExpTransform(cache_size=2)
    assert D.identity_transform(x) is x


@pytest.mark.parametrize("name", ["real", "positive", "greater_than", "less_than", "interval",
                                  "unit_interval", "simplex", "independent",
                                  "lower_cholesky", "positive_definite", "corr_cholesky",
                                  "cat", "stack"])
def test_biject_to_and_transform_to(name):
    for registry in ("biject_to", "transform_to"):
        ours, theirs = both(lambda lib, d: CONSTRAINTS[name](d.constraints, lib))
        try:
            expected = getattr(torch.distributions, registry)(theirs)
        except NotImplementedError:
            with pytest.raises(NotImplementedError, match="Cannot transform"):
                getattr(D, registry)(ours)
            continue
        transform = getattr(D, registry)(ours)
        assert repr(transform).replace("autojit", "torch") == repr(expected)
        size = {"corr_cholesky": (6,), "lower_cholesky": (3, 3), "positive_definite": (3, 3),
                "cat": (4,), "stack": (2, 3)}.get(name, (3,))
        x = np.random.default_rng(2).normal(size=size)
        y = transform(autojit.tensor(x))
        assert_same(y, expected(torch.tensor(x)), rtol=1e-8)
        assert bool(ours.check(y).all())


# ---- utils ---------------------------------------------------------------------------------------

def test_utils_as_torchs():
    from torch.distributions import utils as torch_utils

    from autojit.distributions import utils

    p = np.array([[0.0, 0.2, 0.8], [1.0, 0.5, 1e-20]])
    for binary in (False, True):
        assert_same(utils.probs_to_logits(autojit.tensor(p), binary),
                    torch_utils.probs_to_logits(torch.tensor(p), binary))
        assert_same(utils.logits_to_probs(autojit.tensor(p * 3), binary),
                    torch_utils.logits_to_probs(torch.tensor(p * 3), binary))
    assert_same(utils.clamp_probs(autojit.tensor(p)), torch_utils.clamp_probs(torch.tensor(p)))
    vec = np.arange(1.0, 13.0).reshape(2, 6)
    for diag in (0, -1):
        n = 3 if diag == 0 else 4
        matrix = utils.vec_to_tril_matrix(autojit.tensor(vec), diag)
        assert_same(matrix, torch_utils.vec_to_tril_matrix(torch.tensor(vec), diag))
        assert_same(utils.tril_matrix_to_vec(matrix, diag), vec)
        assert tuple(matrix.shape) == (2, n, n)
    loc, scale = utils.broadcast_all(autojit.zeros(2, 1, dtype=autojit.float64), 3.0)
    assert tuple(scale.shape) == (2, 1) and scale.dtype is autojit.float64
    assert utils.broadcast_all(1.0, 2.0)[0].dtype is autojit.get_default_dtype()
    for lib, u in ((autojit, utils), (torch, torch_utils)):
        with pytest.raises(ValueError, match="Input arguments must all be instances"):
            u.broadcast_all(lib.zeros(2), "a")
    with pytest.raises(RuntimeError, match="must match the size of tensor b"):
        utils.broadcast_all(autojit.zeros(2), autojit.zeros(3))

    class Counted:
        calls = 0

        @utils.lazy_property
        def value(self):
            Counted.calls += 1
            return autojit.ones(1, requires_grad=True) * 2

    counted = Counted()
    with autojit.no_grad():
        assert counted.value.requires_grad  # computed with grad enabled
    assert counted.value is counted.value and Counted.calls == 1
    assert isinstance(Counted.value, property)


# ---- validation --------------------------------------------------------------------------------

ERRORS = {
    "negative scale": lambda lib, d: d.Normal(lib.zeros(3), -lib.ones(3)),
    "nan loc": lambda lib, d: d.Normal(lib.tensor([0.0, math.nan]), 1.0),
    "probs above 1": lambda lib, d: d.Bernoulli(probs=lib.tensor([0.5, 1.5])),
    "probs and logits": lambda lib, d: d.Bernoulli(probs=lib.tensor(0.5),
                                                   logits=lib.tensor(0.0)),
    "neither": lambda lib, d: d.Categorical(),
    "probs 0-d": lambda lib, d: d.Categorical(probs=lib.tensor(0.5)),
    "simplex": lambda lib, d: d.OneHotCategorical(probs=lib.tensor([[-0.5, 1.5]])),
    "uniform bounds": lambda lib, d: d.Uniform(lib.ones(2), lib.zeros(2)),
    "dirichlet 0-d": lambda lib, d: d.Dirichlet(lib.tensor(1.0)),
    "dirichlet negative": lambda lib, d: d.Dirichlet(lib.tensor([1.0, -1.0])),
    "geometric zero": lambda lib, d: d.Geometric(probs=lib.tensor([0.0, 0.5])),
    "mvn two matrices": lambda lib, d: d.MultivariateNormal(lib.zeros(2), lib.eye(2),
                                                            scale_tril=lib.eye(2)),
    "mvn not positive definite": lambda lib, d: d.MultivariateNormal(
        lib.zeros(2), lib.tensor([[1.0, 2.0], [2.0, 1.0]])),
    "mvn loc 0-d": lambda lib, d: d.MultivariateNormal(lib.tensor(0.0), lib.eye(2)),
    "scale_tril not lower": lambda lib, d: d.MultivariateNormal(
        lib.zeros(2), scale_tril=lib.tensor([[1.0, 1.0], [0.0, 1.0]])),
    "lowrank shapes": lambda lib, d: d.LowRankMultivariateNormal(lib.zeros(3), lib.ones(2, 1),
                                                                  lib.ones(3)),
    "binomial count": lambda lib, d: d.Binomial(lib.tensor([2.5]), probs=lib.tensor([0.5])),
    "multinomial count": lambda lib, d: d.Multinomial(lib.tensor(3), probs=lib.ones(2)),
    "independent ndims": lambda lib, d: d.Independent(d.Normal(lib.zeros(2), 1.0), 2),
    "mixture not categorical": lambda lib, d: d.MixtureSameFamily(
        d.Normal(0.0, 1.0), d.Normal(lib.zeros(2), 1.0)),
    "mixture components": lambda lib, d: d.MixtureSameFamily(
        d.Categorical(logits=lib.zeros(3)), d.Normal(lib.zeros(2), 1.0)),
    "transforms not a list": lambda lib, d: d.TransformedDistribution(d.Normal(0.0, 1.0), 3),
    "log_prob outside support": lambda lib, d: d.Exponential(lib.ones(2)).log_prob(
        -lib.ones(2)),
    "log_prob not a tensor": lambda lib, d: d.Normal(0.0, 1.0).log_prob(0.5),
    "log_prob event shape": lambda lib, d: d.Dirichlet(lib.ones(3)).log_prob(
        lib.ones(2) / 2),
    "log_prob batch shape": lambda lib, d: d.Normal(lib.zeros(3), 1.0).log_prob(lib.zeros(2)),
    "categorical value": lambda lib, d: d.Categorical(logits=lib.zeros(3)).log_prob(
        lib.tensor([3])),
    "kl missing": lambda lib, d: d.kl_divergence(d.Normal(0.0, 1.0), d.Poisson(1.0)),
    "default validate args": lambda lib, d: d.Distribution.set_default_validate_args(2),
    "enumerate inhomogeneous": lambda lib, d: d.Binomial(lib.tensor([1.0, 2.0]),
                                                         lib.tensor([0.5, 0.5]))
    .enumerate_support(),
    "reshape sizes": lambda lib, d: d.ReshapeTransform((2, 3), (5,)),
    "wishart df": lambda lib, d: d.Wishart(lib.tensor([1.5, 3.0]), lib.eye(3)),
    "lkj dim": lambda lib, d: d.LKJCholesky(1, 1.0),
}


@pytest.mark.parametrize("name", ERRORS)
def test_errors_as_torchs(name):
    raised = []
    for lib_name in ("autojit", "torch"):
        lib, namespace = LIBS[lib_name]
        with pytest.raises(Exception) as error:
            ERRORS[name](lib, namespace)
        raised.append(error.value)
    ours, theirs = raised
    assert type(ours) is type(theirs), (ours, theirs)
    expected = str(theirs).replace("torch.", "autojit.")
    assert str(ours) == expected


def test_validate_args_switches():
    assert D.Distribution._validate_args is True
    D.Normal(autojit.zeros(2), -autojit.ones(2), validate_args=False)  # not checked
    D.Distribution.set_default_validate_args(False)
    try:
        normal = D.Normal(autojit.zeros(2), -autojit.ones(2))
        assert bool(normal.log_prob(autojit.zeros(2)).isnan().all())
        with pytest.raises(ValueError):
            D.Normal(autojit.zeros(2), -autojit.ones(2), validate_args=True)
    finally:
        D.Distribution.set_default_validate_args(True)
    # expand keeps the instance's setting without checking again.
    assert D.Normal(0.0, 1.0, validate_args=False).expand((2,))._validate_args is False


def test_validation_in_a_compiled_function():
    """A traced check cannot read the data: the kernel reports it, and the call raises eager's
    ValueError (without the values); valid arguments run compiled."""
    @autojit.compile(fullgraph=True)
    def loss(scale, value):
        return D.Normal(autojit.zeros(3), scale).log_prob(value).sum()

    good = loss(autojit.ones(3), autojit.zeros(3))
    assert good.item() == pytest.approx(-3 * 0.5 * math.log(2 * math.pi))
    with pytest.raises(ValueError) as error:
        loss(-autojit.ones(3), autojit.zeros(3))
    assert str(error.value).startswith("Expected parameter scale (Tensor of shape (3,)) of "
                                       "distribution Normal(loc: autojit.Size([3]), scale: "
                                       "autojit.Size([3])) to satisfy the constraint "
                                       "GreaterThan(lower_bound=0.0), but found invalid values")

    @autojit.compile(fullgraph=True)
    def rate_loss(value):
        return D.Exponential(autojit.ones(2)).log_prob(value).sum()

    assert rate_loss(autojit.ones(2)).item() == pytest.approx(-2.0)
    with pytest.raises(ValueError, match=r"Expected value argument .* to be within the support"):
        rate_loss(-autojit.ones(2))


# ---- compiled training steps ---------------------------------------------------------------------

def _policy_step_for(params, optimizer):
    """One PPO-style update of `params`: a clipped ratio of a Categorical policy, an entropy
    bonus, a Gaussian log-likelihood, a tanh-squashed reparameterized action (SAC), and a KL
    term. The parameters and the optimizer are captured, as a model's are."""
    weight, mean_weight, log_std = params

    def step(obs, actions, continuous, old_log_prob, advantages):
        policy = D.Categorical(logits=obs @ weight)
        log_prob = policy.log_prob(actions)
        ratio = (log_prob - old_log_prob).exp()
        surrogate = autojit.minimum(ratio * advantages, ratio.clamp(0.8, 1.2) * advantages)
        gaussian = D.Normal(obs @ mean_weight, log_std.exp())
        squashed = D.TransformedDistribution(gaussian, [D.TanhTransform(cache_size=1)])
        action = squashed.rsample()
        sac = (squashed.log_prob(action).sum(-1) - action.square().sum(-1)).mean()
        kl = D.kl_divergence(gaussian, D.Normal(0.0, 1.0)).sum(-1).mean()
        loss = (-surrogate.mean() - 0.01 * policy.entropy().mean() + sac + 0.1 * kl
                - gaussian.log_prob(continuous).sum(-1).mean())
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        return loss

    return step


def test_compiled_policy_step_equals_eager():
    generator = np.random.default_rng(0)
    data = [autojit.tensor(generator.normal(size=(8, 4)), dtype=autojit.float32),
            autojit.tensor(generator.integers(0, 3, 8)),
            autojit.tensor(generator.normal(size=(8, 2)), dtype=autojit.float32),
            autojit.tensor(generator.normal(size=8) * 0.1 - 1.0, dtype=autojit.float32),
            autojit.tensor(generator.normal(size=8), dtype=autojit.float32)]
    initial = [generator.normal(size=(4, 3)) * 0.5, generator.normal(size=(4, 2)) * 0.5,
               np.zeros(2)]
    runs = []
    for compiled in (False, True):
        params = [autojit.tensor(p, dtype=autojit.float32, requires_grad=True) for p in initial]
        step = _policy_step_for(params, autojit.optim.Adam(params, lr=1e-2))
        step = autojit.compile(step, fullgraph=True) if compiled else step
        autojit.manual_seed(5)
        losses = [step(*data).item() for _ in range(3)]
        runs.append((losses, [p.detach().numpy().copy() for p in params]))
    (eager_losses, eager_params), (compiled_losses, compiled_params) = runs
    np.testing.assert_allclose(compiled_losses, eager_losses, rtol=1e-5)
    for ours, expected in zip(compiled_params, eager_params):
        np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-6)
    assert step.stats().eager_calls == 0


def test_compiled_reinforce_with_samples_equals_eager():
    """REINFORCE: sample actions from the policy inside the compiled step (a random input of
    the graph, drawn in eager's order), score them, and differentiate log_prob."""
    weight0 = np.random.default_rng(1).normal(size=(3, 4))

    def step(weight, obs):
        policy = D.Categorical(logits=obs @ weight)
        actions = policy.sample()
        reward = (actions == 2).to(autojit.float32)
        loss = -(policy.log_prob(actions) * (reward - reward.mean())).sum()
        (gradient,) = autojit.autograd.grad(loss, weight)
        return actions, gradient

    obs = autojit.tensor(np.random.default_rng(2).normal(size=(16, 3)), dtype=autojit.float32)
    outputs = []
    for function in (step, autojit.compile(step, fullgraph=True)):
        weight = autojit.tensor(weight0, dtype=autojit.float32, requires_grad=True)
        autojit.manual_seed(3)
        outputs.append([x.numpy() for x in function(weight, obs)])
    np.testing.assert_array_equal(outputs[0][0], outputs[1][0])
    np.testing.assert_allclose(outputs[0][1], outputs[1][1], rtol=1e-5, atol=1e-6)
