"""kl_divergence against torch for every pair torch registers: the values (float64), and the
first and second derivatives with respect to both distributions' parameters; register_kl's
dispatch (the most specific registered pair, a subclass's own pair first) and the errors of a
missing pair.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
import torch.distributions.kl as torch_kl

import autojit
import autojit.distributions as D
from autojit.distributions.kl import _KL_REGISTRY

B = (3,)


def _pos(rng, low=0.5, high=2.0):
    return rng.uniform(low, high, B)


# Parameters (args, kwargs) per class, batch shape (3,), every parameter a float64 array.
PARAMS = {
    "Bernoulli": lambda r: ((), {"probs": r.uniform(0.1, 0.9, B)}),
    "Beta": lambda r: ((_pos(r), _pos(r)), {}),
    "Binomial": lambda r: ((np.full(B, 5.0),), {"probs": r.uniform(0.1, 0.9, B)}),
    "Categorical": lambda r: ((), {"probs": r.dirichlet(np.ones(4), size=3)}),
    "OneHotCategorical": lambda r: ((), {"logits": r.normal(size=(3, 4))}),
    "ContinuousBernoulli": lambda r: ((), {"probs": r.uniform(0.1, 0.9, B)}),
    "Dirichlet": lambda r: ((r.uniform(0.5, 2.0, (3, 4)),), {}),
    "Exponential": lambda r: ((_pos(r),), {}),
    "Gamma": lambda r: ((_pos(r, 1.0, 4.0), _pos(r)), {}),
    "Gumbel": lambda r: ((r.normal(size=B), _pos(r)), {}),
    "Geometric": lambda r: ((), {"probs": r.uniform(0.1, 0.9, B)}),
    "HalfNormal": lambda r: ((_pos(r),), {}),
    "Laplace": lambda r: ((r.normal(size=B), _pos(r)), {}),
    "Normal": lambda r: ((r.normal(size=B), _pos(r)), {}),
    "Pareto": lambda r: ((_pos(r), _pos(r, 2.5, 4.0)), {}),
    "Poisson": lambda r: ((_pos(r),), {}),
    "Uniform": lambda r: ((r.normal(size=B) - 3, r.normal(size=B) + 3), {}),
    "Cauchy": lambda r: ((r.normal(size=B), _pos(r)), {}),
    "MultivariateNormal": lambda r: ((r.normal(size=(3, 3)),),
                                     {"scale_tril": np.tril(r.normal(size=(3, 3, 3)), -1)
                                      + 2 * np.eye(3)}),
    "LowRankMultivariateNormal": lambda r: ((r.normal(size=(3, 3)), r.normal(size=(3, 3, 2)),
                                             r.uniform(0.5, 1.5, (3, 3))), {}),
}
PAIRS = sorted((p.__name__, q.__name__) for p, q in _KL_REGISTRY
               if p.__name__ in PARAMS and q.__name__ in PARAMS)


def build(lib, name, seed, requires_grad=False):
    args, kwargs = PARAMS[name](np.random.default_rng(seed))

    def leaf(array):
        t = lib.tensor(array, dtype=lib.float64)
        return t.requires_grad_(True) if requires_grad else t

    args, kwargs = [leaf(a) for a in args], {k: leaf(v) for k, v in kwargs.items()}
    namespace = D if lib is autojit else torch.distributions
    # Binomial's count is not differentiable.
    leaves = [t for t in [*args, *kwargs.values()] if name != "Binomial" or t is not args[0]]
    return getattr(namespace, name)(*args, **kwargs), leaves


def test_every_torch_pair_is_registered():
    ours = {(p.__name__, q.__name__) for p, q in _KL_REGISTRY}
    theirs = {(p.__name__, q.__name__) for p, q in torch_kl._KL_REGISTRY}
    assert ours == theirs


@pytest.mark.parametrize("pair", PAIRS, ids=["-".join(pair) for pair in PAIRS])
def test_kl_and_its_derivatives(pair):
    results = []
    for lib in (autojit, torch):
        p, p_leaves = build(lib, pair[0], 1, requires_grad=True)
        q, q_leaves = build(lib, pair[1], 2, requires_grad=True)
        kl = (D if lib is autojit else torch.distributions).kl_divergence(p, q)
        leaves = p_leaves + q_leaves
        finite = bool(lib.isfinite(kl).all())
        if not finite or not kl.requires_grad:
            results.append((kl, None, None))
            continue
        first = lib.autograd.grad(kl.sum(), leaves, create_graph=True, allow_unused=True)
        used = [(g, x) for g, x in zip(first, leaves) if g is not None]
        weights = [lib.tensor(np.random.default_rng(i).uniform(-1, 1, tuple(g.shape)),
                              dtype=lib.float64) for i, (g, _) in enumerate(used)]
        combined = sum((g * w).sum() for (g, _), w in zip(used, weights))
        second = (lib.autograd.grad(combined, [x for _, x in used], allow_unused=True)
                  if combined.requires_grad else [None] * len(used))
        results.append((kl, first, second))
    (ours, ours_first, ours_second), (theirs, theirs_first, theirs_second) = results
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-8,
                               atol=1e-10)
    if theirs_first is None:
        return
    for ours_g, theirs_g in zip(ours_first, theirs_first):
        assert (ours_g is None) == (theirs_g is None)
        if ours_g is not None:
            np.testing.assert_allclose(ours_g.detach().numpy(), theirs_g.detach().numpy(),
                                       rtol=1e-7, atol=1e-10)
    for ours_h, theirs_h in zip(ours_second, theirs_second):
        if theirs_h is None:
            assert ours_h is None or not ours_h.numpy().any()
        else:
            np.testing.assert_allclose(ours_h.numpy(), theirs_h.numpy(), rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("name", ["Normal", "Gamma", "Bernoulli", "Exponential"])
def test_exponential_family_bregman_divergence(name):
    """The generic ExponentialFamily pair (the Bregman divergence of the log normalizer, by
    autograd) equals the closed form."""
    p, _ = build(autojit, name, 1)
    q, _ = build(autojit, name, 2)
    bregman = D.kl._KL_REGISTRY[D.ExponentialFamily, D.ExponentialFamily](p, q)
    np.testing.assert_allclose(bregman.detach().numpy(), D.kl_divergence(p, q).numpy(),
                               rtol=1e-9)


def test_independent_and_transformed_pairs():
    for lib in (autojit, torch):
        namespace = D if lib is autojit else torch.distributions
        p = namespace.Normal(lib.zeros(2, 3, dtype=lib.float64), lib.ones(2, 3, dtype=lib.float64))
        q = namespace.Normal(lib.ones(2, 3, dtype=lib.float64), 2 * lib.ones(2, 3,
                                                                             dtype=lib.float64))
        independent = namespace.kl_divergence(namespace.Independent(p, 1),
                                              namespace.Independent(q, 1))
        assert tuple(independent.shape) == (2,)
        transform = namespace.ExpTransform()
        transformed = namespace.kl_divergence(namespace.TransformedDistribution(p, transform),
                                              namespace.TransformedDistribution(q, transform))
        np.testing.assert_allclose(transformed.numpy(), namespace.kl_divergence(p, q).numpy())
    log_normal = D.LogNormal(autojit.zeros(3), autojit.ones(3))
    with pytest.raises(NotImplementedError):  # different transforms
        D.kl_divergence(log_normal, D.TransformedDistribution(
            D.Normal(autojit.zeros(3), autojit.ones(3)), D.SigmoidTransform()))


def test_register_kl_dispatch_and_errors():
    class MyNormal(D.Normal):
        pass

    p, q = D.Normal(0.0, 1.0), MyNormal(1.0, 2.0)
    assert D.kl_divergence(p, q).item() == pytest.approx(D.kl_divergence(p, D.Normal(1.0, 2.0))
                                                         .item())

    @D.register_kl(MyNormal, MyNormal)
    def _kl_mine(p, q):
        return autojit.tensor(42.0)

    assert D.kl_divergence(MyNormal(0.0, 1.0), q).item() == 42.0
    assert D.kl_divergence(p, q).item() != 42.0  # p is a plain Normal
    del _KL_REGISTRY[MyNormal, MyNormal]
    D.kl._KL_MEMOIZE.clear()
    messages = []
    for lib in (torch, autojit):
        namespace = D if lib is autojit else torch.distributions
        with pytest.raises(NotImplementedError) as error:
            namespace.kl_divergence(namespace.Normal(0.0, 1.0),
                                    namespace.VonMises(lib.zeros(()), lib.ones(())))
        messages.append(str(error.value))
    assert messages[0] == messages[1]
    with pytest.raises(NotImplementedError, match="q.total_count > p.total_count"):
        D.kl_divergence(D.Binomial(2, probs=autojit.tensor(0.5)),
                        D.Binomial(3, probs=autojit.tensor(0.5)))
    assert "Normal` and :class:`~autojit.distributions.Normal" in D.kl_divergence.__doc__
