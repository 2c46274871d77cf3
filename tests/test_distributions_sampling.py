"""Sampling of autojit.distributions. A seed draws other numbers than torch's (autojit's
generators are NumPy's PCG64), so samples are checked by their distribution: 10^5 draws of
each univariate distribution against torch's CDF (a Kolmogorov-Smirnov distance) or pmf, and
the mean and covariance of the multivariate ones. rsample's gradients are checked at the drawn
values against torch's formulas: the implicit reparameterization gradient
-(dF/dtheta) / f, torch's `_standard_gamma_grad` and its Dirichlet backward. The same seed
draws the same samples eagerly and compiled.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from distribution_cases import CASES, build

import autojit
import autojit.distributions as D

N = 100_000
BY_ID = {case.id: case for case in CASES}
CONTINUOUS = ["normal", "lognormal", "uniform", "laplace", "cauchy", "exponential", "gamma",
              "chi2", "beta", "studentT", "halfnormal", "halfcauchy", "gumbel", "pareto",
              "weibull", "kumaraswamy", "fisher_snedecor", "inverse_gamma", "von_mises",
              "relaxed_bernoulli", "continuous_bernoulli", "tanh_normal", "mixture",
              "generalized_pareto"]
DISCRETE = ["poisson", "geometric_probs", "bernoulli_logits", "categorical_probs",
            "binomial", "negative_binomial"]
MULTIVARIATE = ["dirichlet", "mvn_covariance", "mvn_precision", "lowrank_mvn", "multinomial",
                "onehot", "relaxed_onehot", "logistic_normal", "lkj_cholesky", "wishart"]


def _torch_like(x):
    return torch.from_numpy(np.ascontiguousarray(x.detach().numpy()))


def _draw(case_id):
    ours, _ = build(BY_ID[case_id], autojit)
    theirs, _ = build(BY_ID[case_id], torch)
    autojit.manual_seed(7)
    return ours, theirs, ours.sample((N,))


@pytest.mark.parametrize("case_id", CONTINUOUS)
def test_continuous_samples_follow_the_cdf(case_id):
    ours, theirs, samples = _draw(case_id)
    assert tuple(samples.shape) == (N,) + tuple(ours.batch_shape)
    values = _torch_like(samples)
    if case_id == "von_mises":
        # No CDF in torch: the circular mean and the concentration's mean resultant length.
        np.testing.assert_allclose(np.angle(np.exp(1j * values.numpy()).mean(0)),
                                   theirs.loc.numpy(), atol=0.03)
        np.testing.assert_allclose(np.abs(np.exp(1j * values.numpy()).mean(0)),
                                   1 - theirs.variance.numpy(), atol=0.01)
        return
    ordered, _ = values.sort(0)
    try:
        levels = theirs.cdf(ordered).numpy()
    except NotImplementedError:
        # No CDF in torch: the two-sample distance to torch's own samples.
        torch.manual_seed(0)
        mine = ordered.numpy().reshape(N, -1)
        reference = np.sort(theirs.sample((N,)).numpy().reshape(N, -1), 0)
        distance = max(
            np.abs(np.searchsorted(mine[:, i], pooled, side="right")
                   - np.searchsorted(reference[:, i], pooled, side="right")).max() / N
            for i in range(mine.shape[1])
            for pooled in [np.concatenate([mine[:, i], reference[:, i]])])
        assert distance < 0.012, f"two-sample Kolmogorov-Smirnov distance {distance}"
        return
    empirical = np.arange(1, N + 1).reshape((N,) + (1,) * (levels.ndim - 1)) / N
    distance = np.abs(levels - empirical).max()
    assert distance < 0.008, f"Kolmogorov-Smirnov distance {distance}"  # p < 1e-5 by chance


@pytest.mark.parametrize("case_id", DISCRETE)
def test_discrete_samples_follow_the_pmf(case_id):
    ours, theirs, samples = _draw(case_id)
    values = samples.numpy()
    for k in np.unique(values)[:8]:
        frequency = (values == k).mean(0)
        probability = theirs.log_prob(torch.tensor(k, dtype=torch.float64).expand(
            theirs.batch_shape)).exp().numpy()
        tolerance = 5 * np.sqrt(probability * (1 - probability) / N) + 1e-4
        assert (np.abs(frequency - probability) <= tolerance).all(), k


@pytest.mark.parametrize("case_id", MULTIVARIATE)
def test_multivariate_sample_moments(case_id):
    ours, theirs, samples = _draw(case_id)
    values = samples.numpy().reshape(N, -1, samples.shape[-1])
    try:
        mean = theirs.mean.numpy()
    except NotImplementedError:
        mean = None
    if mean is None:  # no closed-form moments: against torch's own samples
        torch.manual_seed(0)
        reference = theirs.sample((N,)).numpy().reshape(N, -1, samples.shape[-1])
        mean, covariance = reference.mean(0), None
    else:
        mean = mean.reshape(values.shape[1:]) if mean.size == values[0].size else \
            np.broadcast_to(mean, values.shape[1:])
        # The covariance of the samples, for the normal distributions.
        covariance = theirs.covariance_matrix if case_id.startswith(("mvn", "lowrank")) \
            else None
    spread = values.std(0)
    assert (np.abs(values.mean(0) - mean) <= 5 * spread / np.sqrt(N) + 1e-6).all()
    if covariance is not None:
        centered = values - values.mean(0)
        empirical = np.einsum("nbi,nbj->bij", centered, centered) / N
        np.testing.assert_allclose(empirical, covariance.numpy().reshape(empirical.shape),
                                   atol=0.05 * np.abs(covariance.numpy()).max())


# Distributions whose rsample is a monotone map of one noise per element: dx/dtheta is the
# implicit reparameterization gradient -(dF/dtheta)(x) / f(x), whatever the map.
# (Gamma's is checked against torch's formula below: torch's gamma CDF has no derivative in
# the concentration.)
IMPLICIT = ["normal", "lognormal", "uniform", "laplace", "cauchy", "exponential", "halfnormal",
            "halfcauchy", "weibull", "kumaraswamy", "continuous_bernoulli", "tanh_normal",
            "generalized_pareto"]


@pytest.mark.parametrize("case_id", IMPLICIT)
def test_rsample_gradient_is_the_implicit_one(case_id):
    case = BY_ID[case_id]
    ours, leaves = build(case, autojit, requires_grad=True)
    autojit.manual_seed(3)
    x = ours.rsample()
    gradients = autojit.autograd.grad(x.sum(), leaves)
    theirs, torch_leaves = build(case, torch, requires_grad=True)
    at = _torch_like(x)
    cdf_gradients = torch.autograd.grad(theirs.cdf(at).sum(), torch_leaves)
    density = theirs.log_prob(at).exp()
    for ours_g, cdf_g in zip(gradients, cdf_gradients):
        np.testing.assert_allclose(ours_g.numpy(), (-cdf_g / density).detach().numpy(),
                                   rtol=2e-5, atol=1e-8)


def test_gamma_rsample_gradient_is_torchs_standard_gamma_grad():
    concentration = autojit.tensor([0.1, 0.7, 2.5, 9.0, 40.0], dtype=autojit.float64,
                                   requires_grad=True)
    rate = autojit.tensor([1.0, 2.0, 0.5, 1.5, 3.0], dtype=autojit.float64, requires_grad=True)
    autojit.manual_seed(0)
    x = D.Gamma(concentration, rate).rsample((4,))
    d_concentration, d_rate = autojit.autograd.grad(x.sum(), [concentration, rate])
    standard = _torch_like(x) * torch.from_numpy(rate.detach().numpy())
    expected = torch._standard_gamma_grad(
        torch.from_numpy(concentration.detach().numpy()).expand(4, 5), standard)
    np.testing.assert_allclose(d_concentration.numpy(),
                               (expected / torch.from_numpy(rate.detach().numpy())).sum(0),
                               rtol=1e-10)
    np.testing.assert_allclose(d_rate.numpy(),
                               -(_torch_like(x) / torch.from_numpy(rate.detach().numpy()))
                               .sum(0), rtol=1e-10)


def test_dirichlet_and_beta_rsample_gradients_are_torchs():
    from torch.distributions.dirichlet import _Dirichlet_backward

    concentration = autojit.tensor([[0.3, 1.5, 4.0], [8.0, 7.0, 0.9]], dtype=autojit.float64,
                                   requires_grad=True)
    weights = np.random.default_rng(0).normal(size=(5, 2, 3))
    autojit.manual_seed(0)
    x = D.Dirichlet(concentration).rsample((5,))
    (ours,) = autojit.autograd.grad((x * autojit.tensor(weights)).sum(), concentration,
                                    retain_graph=True)
    expected = _Dirichlet_backward(_torch_like(x), torch.from_numpy(
        concentration.detach().numpy()).expand(5, 2, 3), torch.from_numpy(weights)).sum(0)
    np.testing.assert_allclose(ours.numpy(), expected.numpy(), rtol=1e-10)
    assert x.grad_fn.name() == "_DirichletBackward"
    (first,) = autojit.autograd.grad(x.sum(), concentration, create_graph=True)
    assert not first.requires_grad  # once differentiable, as torch's
    a = autojit.tensor([2.0, 0.5], dtype=autojit.float64, requires_grad=True)
    b = autojit.tensor([3.0, 0.7], dtype=autojit.float64, requires_grad=True)
    autojit.manual_seed(1)
    sample = D.Beta(a, b).rsample()
    ours_a, ours_b = autojit.autograd.grad(sample.sum(), [a, b])
    pair = torch.stack([_torch_like(sample), 1 - _torch_like(sample)], -1)
    stacked = torch.tensor([[2.0, 3.0], [0.5, 0.7]], dtype=torch.float64)
    grad_out = torch.tensor([[1.0, 0.0], [1.0, 0.0]], dtype=torch.float64)
    expected = _Dirichlet_backward(pair, stacked, grad_out)
    np.testing.assert_allclose(ours_a.numpy(), expected[:, 0].numpy(), rtol=1e-10)
    np.testing.assert_allclose(ours_b.numpy(), expected[:, 1].numpy(), rtol=1e-10)


def test_normal_rsample_second_derivative():
    """loc + eps * scale: the sample's derivatives are those of its formula, to any order."""
    loc = autojit.tensor([0.5, -1.0], dtype=autojit.float64, requires_grad=True)
    scale = autojit.tensor([2.0, 0.5], dtype=autojit.float64, requires_grad=True)
    autojit.manual_seed(0)
    x = D.Normal(loc, scale).rsample()
    eps = (x - loc) / scale
    (d_scale,) = autojit.autograd.grad((x ** 2).sum(), scale, create_graph=True)
    np.testing.assert_allclose(d_scale.detach().numpy(), (2 * x * eps).detach().numpy())
    (d2,) = autojit.autograd.grad(d_scale.sum(), scale)
    np.testing.assert_allclose(d2.numpy(), (2 * eps ** 2).detach().numpy())


SEEDED = ["normal", "gamma", "dirichlet", "categorical_logits", "bernoulli_probs", "binomial",
          "poisson", "mvn_covariance", "relaxed_onehot", "uniform", "wishart", "lkj_cholesky"]


@pytest.mark.parametrize("case_id", SEEDED)
def test_seeded_samples_are_reproducible_and_compile(case_id):
    case = BY_ID[case_id]

    def draw():
        d, _ = build(case, autojit)
        return d.rsample((3,)) if d.has_rsample else d.sample((3,))

    autojit.manual_seed(11)
    first = draw()
    autojit.manual_seed(11)
    assert (draw() == first).all()
    compiled = autojit.compile(draw, fullgraph=True)
    autojit.manual_seed(11)
    np.testing.assert_allclose(compiled().numpy(), first.numpy(), rtol=1e-12)
