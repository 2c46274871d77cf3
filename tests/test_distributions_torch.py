"""autojit.distributions against torch.distributions, one row per distribution
(tests/distribution_cases.py), in float64: log_prob, cdf, icdf, mean, mode, variance, stddev,
entropy, enumerate_support; batch, event and sample shapes, expand; and the first and second
derivatives of log_prob and entropy with respect to every tensor parameter.

Sampling is checked statistically in tests/test_distributions_sampling.py (a seed draws other
numbers than torch's); KL divergences in tests/test_distributions_kl.py.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch
from distribution_cases import CASES, build, tensor, value

import autojit

IDS = [case.id for case in CASES]
# torch's Wishart.rsample warns on every call (docs/differences.md); autojit's only when a
# sample is singular.
pytestmark = pytest.mark.filterwarnings("ignore:Singular sample detected")
PROPERTIES = ("mean", "mode", "variance", "stddev")
DIFFERENTIATED = ("mean", "variance", "covariance_matrix", "precision_matrix", "scale_tril")


def _np(x):
    return x.detach().numpy() if hasattr(x, "detach") else np.asarray(x)


def assert_close(ours, theirs, what, rtol=1e-8, atol=1e-10):
    ours, theirs = _np(ours), _np(theirs)
    if theirs.dtype == np.float32:
        rtol, atol = max(rtol, 2e-5), max(atol, 1e-6)
    assert ours.shape == theirs.shape, f"{what}: shape {ours.shape} != {theirs.shape}"
    np.testing.assert_allclose(ours, theirs, rtol=rtol, atol=atol, equal_nan=True,
                               err_msg=what)


def _both(getter):
    """(theirs, error): torch's result, or the NotImplementedError it raised."""
    try:
        return getter(), None
    except NotImplementedError as error:
        return None, error


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_values(case):
    ours, _ = build(case, autojit)
    theirs, _ = build(case, torch)
    assert tuple(ours.batch_shape) == tuple(theirs.batch_shape)
    assert tuple(ours.event_shape) == tuple(theirs.event_shape)
    assert ours.has_rsample == theirs.has_rsample
    assert ours.has_enumerate_support == theirs.has_enumerate_support
    assert_close(ours.log_prob(value(case, autojit)), theirs.log_prob(value(case, torch)),
                 "log_prob")
    unit = np.random.default_rng(0).uniform(0.05, 0.95, case.unit_shape)
    checks = {name: (lambda d, lib, name=name: getattr(d, name)) for name in PROPERTIES}
    checks.update({
        "entropy": lambda d, lib: d.entropy(),
        "perplexity": lambda d, lib: d.perplexity(),
        "cdf": lambda d, lib: d.cdf(value(case, lib)),
        "icdf": lambda d, lib: d.icdf(tensor(lib, unit, dtype=case.dtype)),
        "enumerate_support": lambda d, lib: d.enumerate_support(),
        "enumerate_support(expand=False)": lambda d, lib: d.enumerate_support(expand=False),
    })
    for name, check in checks.items():
        expected, error = _both(lambda check=check: check(theirs, torch))
        if error is not None:
            with pytest.raises(NotImplementedError):
                check(ours, autojit)
        elif name in case.missing:
            with pytest.raises(NotImplementedError, match="gammainc"):
                check(ours, autojit)
        else:
            assert_close(check(ours, autojit), expected, name)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_gradients_to_second_order(case):
    """d/dtheta and d2/dtheta2 of log_prob(value).sum() + entropy().sum(), plus the moments
    and matrices where they are finite and differentiable, against torch."""
    def loss(lib):
        d, leaves = build(case, lib, requires_grad=True)
        total = d.log_prob(value(case, lib)).sum()
        entropy, error = _both(lambda: d.entropy())
        if error is None:
            total = total + entropy.sum()
        for name in DIFFERENTIATED:
            part, error = _both(lambda name=name: getattr(d, name, None))
            if part is not None and part.requires_grad and bool(lib.isfinite(part).all()):
                total = total + 0.1 * part.sum()
        return total, leaves

    results = []
    for lib in (autojit, torch):
        total, leaves = loss(lib)
        if not leaves:
            pytest.skip("no tensor parameters")
        first = lib.autograd.grad(total, leaves, create_graph=True)
        weights = [tensor(lib, np.random.default_rng(i).uniform(-1, 1, tuple(g.shape)),
                          dtype=case.dtype) for i, g in enumerate(first)]
        combined = sum((g * w).sum() for g, w in zip(first, weights))
        second = lib.autograd.grad(combined, leaves, allow_unused=True)
        results.append((first, second))
    (ours_first, ours_second), (theirs_first, theirs_second) = results
    for i, (ours, theirs) in enumerate(zip(ours_first, theirs_first)):
        assert_close(ours, theirs, f"first derivative, parameter {i}", rtol=1e-7)
    for i, (ours, theirs) in enumerate(zip(ours_second, theirs_second)):
        if theirs is None:
            assert ours is None or not _np(ours).any(), f"second derivative {i}"
        else:
            assert_close(ours, theirs, f"second derivative, parameter {i}", rtol=1e-6,
                         atol=1e-9)


@pytest.mark.parametrize("sample_shape", [(), (4,), (2, 3)])
@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_sample_and_expand_shapes(case, sample_shape):
    ours, _ = build(case, autojit)
    theirs, _ = build(case, torch)
    autojit.manual_seed(0)
    samples = ours.sample(sample_shape)
    assert tuple(samples.shape) == tuple(theirs.sample(sample_shape).shape)
    assert samples.dtype.is_floating_point == theirs.sample().dtype.is_floating_point
    if ours.has_rsample:
        assert tuple(ours.rsample(sample_shape).shape) == tuple(samples.shape)
    # log_prob of the distribution's own samples has shape sample_shape + batch_shape.
    assert tuple(ours.log_prob(samples).shape) == \
        tuple(theirs.log_prob(theirs.sample(sample_shape)).shape)
    if sample_shape == (2, 3):
        return
    batch = (5,) + tuple(ours.batch_shape)
    expanded, expected = ours.expand(batch), theirs.expand(batch)
    assert type(expanded) is type(ours)
    assert tuple(expanded.batch_shape) == tuple(expected.batch_shape)
    assert tuple(expanded.event_shape) == tuple(expected.event_shape)
    assert_close(expanded.log_prob(value(case, autojit).unsqueeze(1)),
                 expected.log_prob(value(case, torch).unsqueeze(1)), "expanded log_prob")
    assert tuple(expanded.sample(sample_shape).shape) == \
        tuple(expected.sample(sample_shape).shape)
