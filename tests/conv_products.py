"""The three products of a convolution (its value, input gradient and weight gradient) in
autojit and in float64 torch, and their comparison: shared by tests/test_conv_native_torch.py
and tests/test_conv_depthwise.py."""

from __future__ import annotations

import numpy as np

import autojit


def products_and_torchs(torch, name: str, x, w, options: dict, dtype: str) -> tuple:
    """([y, dx, dw] of autojit's `name` in `dtype`, the same of torch's in float64), the
    gradients for one random cotangent."""
    xs, ws = autojit.tensor(x, requires_grad=True), autojit.tensor(w, requires_grad=True)
    y = getattr(autojit.nn.functional, name)(xs, ws, **options)
    g = np.random.default_rng(1).standard_normal(tuple(y.shape)).astype(dtype)
    mine = [y, *autojit.autograd.grad(y, (xs, ws), autojit.tensor(g))]
    xt = torch.tensor(x, dtype=torch.float64, requires_grad=True)
    wt = torch.tensor(w, dtype=torch.float64, requires_grad=True)
    yt = getattr(torch.nn.functional, name)(xt, wt, **options)
    theirs = [yt, *torch.autograd.grad(yt, (xt, wt), torch.tensor(g, dtype=torch.float64))]
    return mine, theirs


def assert_near_torchs(mine: list, theirs: list, dtype: str) -> None:
    """Each of `mine` in `dtype`, of torch's shape, within a relative 1e-13 (float64) or 3e-6
    (float32) of the largest entry of torch's float64 result."""
    tolerance = 1e-13 if dtype == "float64" else 3e-6
    for ours, reference in zip(mine, theirs, strict=True):
        reference = reference.detach().numpy()
        assert ours.dtype == getattr(autojit, dtype) and tuple(ours.shape) == reference.shape
        error = np.abs(ours.detach().numpy() - reference).max() / np.abs(reference).max()
        assert error < tolerance


def second_derivatives(library, function, make, x, w, options: dict) -> list:
    """The gradients with respect to input and weight of a scalar made of the first gradients
    of `function` (a convolution of `library`, autojit or torch) at `make(x)`, `make(w)`."""
    xs, ws = make(x), make(w)
    y = function(xs, ws, **options)
    gx, gw = library.autograd.grad((y * y).sum(), (xs, ws), create_graph=True)
    total = gx.sin().sum() + (gw * gw).sum()
    return [t.detach().numpy() for t in library.autograd.grad(total, (xs, ws))]
