"""functorch under the drop-in (`from functorch import vmap, grad, jacrev`): the function
transforms torch.func took over from it, which are autojit.func's, and functorch's own module
API, make_functional, make_functional_with_buffers and combine_state_for_ensemble, here on
autojit.func.functional_call.
"""

from __future__ import annotations

import copy

from ..func import (  # noqa: F401 - functorch's names
    functional_call,
    functionalize,
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    vjp,
    vmap,
)
from ..nn.module import Module
from ..ops.joining import stack


class FunctionalModuleWithBuffers(Module):
    """What make_functional_with_buffers returns: `f(params, buffers, *args, **kwargs)` runs
    the model with those parameters and buffers."""

    def __init__(self, stateless_model: Module, param_names: tuple, buffer_names: tuple):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names, self.buffer_names = param_names, buffer_names

    def forward(self, params, buffers, *args, **kwargs):
        tensors = dict(zip(self.param_names, params))
        tensors.update(zip(self.buffer_names, buffers))
        return functional_call(self.stateless_model, tensors, args, kwargs)


class FunctionalModule(Module):
    """What make_functional returns: `f(params, *args, **kwargs)` runs the model with those
    parameters."""

    def __init__(self, stateless_model: Module, param_names: tuple):
        super().__init__()
        self.stateless_model = stateless_model
        self.param_names = param_names

    def forward(self, params, *args, **kwargs):
        return functional_call(self.stateless_model, dict(zip(self.param_names, params)), args,
                               kwargs)


def _state(model: Module, disable_autograd_tracking: bool):
    model = copy.deepcopy(model)
    names = tuple(name for name, _ in model.named_parameters())
    params = tuple(parameter for _, parameter in model.named_parameters())
    if disable_autograd_tracking:
        for parameter in params:
            parameter.requires_grad_(False)
    return model, names, params


def make_functional(model: Module, disable_autograd_tracking: bool = False):
    """(func, params): func(params, *args) is model(*args) with those parameters (a copy of
    the model's, which are the initial ones)."""
    if any(True for _ in model.buffers()):
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    stateless, names, params = _state(model, disable_autograd_tracking)
    return FunctionalModule(stateless, names), params


def make_functional_with_buffers(model: Module, disable_autograd_tracking: bool = False):
    """(func, params, buffers): func(params, buffers, *args) is model(*args) with those."""
    stateless, names, params = _state(model, disable_autograd_tracking)
    buffer_names = tuple(name for name, _ in stateless.named_buffers())
    buffers = tuple(buffer for _, buffer in stateless.named_buffers())
    return FunctionalModuleWithBuffers(stateless, names, buffer_names), params, buffers


def combine_state_for_ensemble(models):
    """(func, params, buffers) of same-class models, each parameter and buffer stacked over
    the models on a new first dim (detached), to vmap func over."""
    models = list(models)
    if not models:
        raise RuntimeError("combine_state_for_ensemble: Expected at least one model, got 0.")
    if len({model.training for model in models}) != 1:
        raise RuntimeError("combine_state_for_ensemble: Expected all models to have the same "
                           "training/eval mode.")
    if len({type(model) for model in models}) != 1:
        raise RuntimeError("combine_state_for_ensemble: Expected all models to be of the same "
                           "class.")
    parts = [make_functional_with_buffers(model) for model in models]
    params = tuple(stack(shards).detach() for shards in zip(*(part[1] for part in parts)))
    buffers = tuple(stack(shards).detach() for shards in zip(*(part[2] for part in parts)))
    return parts[0][0], params, buffers


__all__ = ["FunctionalModule", "FunctionalModuleWithBuffers", "combine_state_for_ensemble",
           "functionalize", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "make_functional", "make_functional_with_buffers", "vjp", "vmap"]
