"""torch._functorch.make_functional under the drop-in: functorch's module API on
autojit.func.functional_call. make_functional and make_functional_with_buffers (a model as a
function of its parameters and buffers), combine_state_for_ensemble (the state of same-class
models stacked, to vmap over), and the older functional_init and functional_init_with_buffers
(a model class's instances' weights, stacked for an ensemble, and `fn(weights, data)`).
"""

from __future__ import annotations

import copy

from ...func import functional_call
from ...nn.module import Module
from ...ops.layout.joining import stack


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


def _named(members) -> tuple[tuple, tuple]:
    """(names, tensors) of a module's named parameters or buffers (tied ones once)."""
    pairs = tuple(members)
    return tuple(name for name, _ in pairs), tuple(tensor for _, tensor in pairs)


def make_functional(model: Module, disable_autograd_tracking: bool = False):
    """(func, params): func(params, *args) is model(*args) with those parameters (a copy of
    the model's, which are the initial ones)."""
    if any(True for _ in model.buffers()):
        raise RuntimeError("make_functional(model): `model` has buffers. Please use "
                           "make_functional_with_buffers(model) instead.")
    stateless = copy.deepcopy(model)
    names, params = _named(stateless.named_parameters())
    if disable_autograd_tracking:
        for parameter in params:
            parameter.requires_grad_(False)
    return FunctionalModule(stateless, names), params


def make_functional_with_buffers(model: Module, disable_autograd_tracking: bool = False):
    """(func, params, buffers): func(params, buffers, *args) is model(*args) with those."""
    stateless = copy.deepcopy(model)
    names, params = _named(stateless.named_parameters())
    buffer_names, buffers = _named(stateless.named_buffers())
    if disable_autograd_tracking:
        for parameter in params:
            parameter.requires_grad_(False)
    return FunctionalModuleWithBuffers(stateless, names, buffer_names), params, buffers


def _stack_detached(per_model) -> tuple:
    """Each position's tensors over the models stacked on a new first dim, detached."""
    return tuple(stack(shards).detach() for shards in zip(*per_model))


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
    params = _stack_detached(part[1] for part in parts)
    buffers = _stack_detached(part[2] for part in parts)
    return parts[0][0], params, buffers


def make_functional_deprecated_v1(model: Module):
    """(weights, fn, weight_names): fn(weights, data) is model(*data) with those weights."""
    if any(True for _ in model.buffers()):
        raise RuntimeError("make_functional_deprecated_v1(model): `model` has buffers. Please "
                           "use make_functional_with_buffers_deprecated_v1(model) instead.")
    names, weights = _named(model.named_parameters())

    def fn(weights, data):
        return functional_call(model, dict(zip(names, weights)), tuple(data))

    return weights, fn, names


def make_functional_with_buffers_deprecated_v1(model: Module):
    """(weights, buffers, fn, weight_names, buffer_names): fn(weights, buffers, data) is
    model(*data) with those weights and buffers."""
    names, weights = _named(model.named_parameters())
    buffer_names, buffers = _named(model.named_buffers())

    def fn(weights, buffers, data):
        tensors = dict(zip(names, weights))
        tensors.update(zip(buffer_names, buffers))
        return functional_call(model, tensors, tuple(data))

    return weights, buffers, fn, names, buffer_names


def _ensemble_size(ensemble_shape) -> int | None:
    if len(ensemble_shape) >= 2:
        raise ValueError("NYI: ensemble_shape with more than 1 element")
    if len(ensemble_shape) == 0:
        return None
    if ensemble_shape[0] <= 0:
        raise ValueError(f"num_models {ensemble_shape[0]} should be > 0")
    return ensemble_shape[0]


def functional_init(model_class, ensemble_shape=(), device="cpu"):
    """`init(*args, **kwargs)` makes model_class(*args, **kwargs) on `device` and returns
    (weights, fn, weight_names) as make_functional_deprecated_v1 does; with
    `ensemble_shape=(n,)` it makes n models and each weight is the n models' stacked."""

    def wrapped(*args, **kwargs):
        count = _ensemble_size(ensemble_shape)
        if count is None:
            return make_functional_deprecated_v1(model_class(*args, **kwargs).to(device))
        models = [model_class(*args, **kwargs).to(device) for _ in range(count)]
        _, fn, names = make_functional_deprecated_v1(model_class(*args, **kwargs))
        weights = _stack_detached(make_functional_deprecated_v1(model)[0] for model in models)
        return weights, fn, names

    return wrapped


def functional_init_with_buffers(model_class, ensemble_shape=(), device="cpu"):
    """functional_init with buffers: `init(*args, **kwargs)` returns (weights, buffers, fn,
    weight_names, buffer_names), the weights and buffers of `ensemble_shape=(n,)` models
    stacked. With no ensemble_shape it returns what functional_init does, as torch's does."""

    def wrapped(*args, **kwargs):
        count = _ensemble_size(ensemble_shape)
        if count is None:
            return make_functional_deprecated_v1(model_class(*args, **kwargs).to(device))
        models = [model_class(*args, **kwargs).to(device) for _ in range(count)]
        _, _, fn, names, buffer_names = make_functional_with_buffers_deprecated_v1(
            model_class(*args, **kwargs))
        states = [make_functional_with_buffers_deprecated_v1(model)[:2] for model in models]
        weights = _stack_detached(state[0] for state in states)
        buffers = _stack_detached(state[1] for state in states)
        return weights, buffers, fn, names, buffer_names

    return wrapped


__all__ = ["FunctionalModule", "FunctionalModuleWithBuffers", "combine_state_for_ensemble",
           "functional_init", "functional_init_with_buffers", "make_functional",
           "make_functional_with_buffers"]
