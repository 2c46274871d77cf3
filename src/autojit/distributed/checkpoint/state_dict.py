"""torch.distributed.checkpoint.state_dict's helpers on modules and optimizers whose
parameters are whole on each process (autojit's, with or without DistributedDataParallel):
the state dicts are the module's and the optimizer's own, with StateDictOptions' choices of
full or only the parameters that train, and strict loading."""

from __future__ import annotations

import dataclasses

__all__ = ["StateDictOptions", "get_model_state_dict", "get_optimizer_state_dict",
           "get_state_dict", "set_model_state_dict", "set_optimizer_state_dict",
           "set_state_dict"]


@dataclasses.dataclass
class StateDictOptions:
    full_state_dict: bool = False
    cpu_offload: bool = False
    ignore_frozen_params: bool = False
    keep_submodule_prefixes: bool = True
    strict: bool = True
    broadcast_from_rank0: bool = False
    flatten_optimizer_state_dict: bool = False
    dsd_fqn_modifiers: str = "_fqn_modifiers"


def _unwrapped(model):
    return getattr(model, "module", model) if type(model).__name__ == \
        "DistributedDataParallel" else model


def get_model_state_dict(model, *, submodules=None, options: StateDictOptions | None = None):
    """The model's state dict; without the frozen parameters under ignore_frozen_params."""
    options = options or StateDictOptions()
    model = _unwrapped(model)
    state = model.state_dict()
    if options.ignore_frozen_params:
        frozen = {name for name, p in model.named_parameters() if not p.requires_grad}
        state = type(state)((k, v) for k, v in state.items() if k not in frozen)
    return state


def get_optimizer_state_dict(model, optimizers, *, submodules=None,
                             options: StateDictOptions | None = None):
    """The optimizer's state dict (of the first, where a list is given)."""
    optimizer = optimizers[0] if isinstance(optimizers, (list, tuple)) else optimizers
    return optimizer.state_dict()


def get_state_dict(model, optimizers, *, submodules=None,
                   options: StateDictOptions | None = None):
    return (get_model_state_dict(model, options=options),
            get_optimizer_state_dict(model, optimizers, options=options))


def set_model_state_dict(model, model_state_dict, *, options: StateDictOptions | None = None):
    """Load `model_state_dict` into the model; the missing and unexpected keys."""
    options = options or StateDictOptions()
    return _unwrapped(model).load_state_dict(model_state_dict, strict=options.strict)


def set_optimizer_state_dict(model, optimizers, optim_state_dict, *,
                             options: StateDictOptions | None = None) -> None:
    optimizer = optimizers[0] if isinstance(optimizers, (list, tuple)) else optimizers
    optimizer.load_state_dict(optim_state_dict)


def set_state_dict(model, optimizers, *, model_state_dict, optim_state_dict,
                   options: StateDictOptions | None = None):
    set_optimizer_state_dict(model, optimizers, optim_state_dict, options=options)
    return set_model_state_dict(model, model_state_dict, options=options)
