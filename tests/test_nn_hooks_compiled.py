"""Module hooks under autojit.compile: global module hooks are traced with the module and a
change to them traces again; a forward hook that stores activations (feature extraction)
compiles, the stored tensors written back with each call's values."""

from __future__ import annotations

import numpy as np

import autojit
from autojit import nn
from autojit.nn.modules import module as module_api


def _model():
    autojit.manual_seed(0)
    return nn.Sequential(nn.Linear(4, 8), nn.ReLU(), nn.Linear(8, 2))


def test_global_forward_hooks_compile_and_changes_to_them_retrace():
    model = _model()
    compiled = autojit.compile(model, fullgraph=True)
    x = autojit.randn(3, 4)
    plain = model(x).detach().numpy()
    np.testing.assert_allclose(compiled(x).detach().numpy(), plain, rtol=1e-6)
    handle = module_api.register_module_forward_hook(
        lambda module, args, out: out * 2 if isinstance(module, nn.Linear) else None)
    try:
        expected = model(x).detach().numpy()
        np.testing.assert_allclose(compiled(x).detach().numpy(), expected, rtol=1e-6)
        np.testing.assert_allclose(expected, plain * 4 - model[2].bias.detach().numpy() * 2,
                                   rtol=1e-5, atol=1e-6)
    finally:
        handle.remove()
    np.testing.assert_allclose(compiled(x).detach().numpy(), plain, rtol=1e-6)
    assert compiled.stats().recompiles == 1  # the trace without hooks serves again


def test_forward_hook_storing_activations_compiles_without_a_break():
    model = _model()
    activations = {}

    def keep(name):
        def hook(module, args, out):
            activations[name] = out.detach()
        return hook

    model[0].register_forward_hook(keep("fc1"))
    model[2].register_forward_hook(keep("fc2"))
    compiled = autojit.compile(model, fullgraph=True)
    for scale in (1.0, -2.0, 3.0):  # each call leaves that call's activations
        x = autojit.randn(3, 4) * scale
        out = compiled(x)
        np.testing.assert_allclose(activations["fc2"].numpy(), out.detach().numpy(),
                                   rtol=1e-6)
        fc1 = model[0](x).detach().numpy()
        np.testing.assert_allclose(activations["fc1"].numpy(), fc1, rtol=1e-5, atol=1e-6)
        out.sum().backward()  # the result is differentiated outside: a compiled backward
    assert compiled.stats().eager_calls == 0 and model[0].weight.grad is not None
