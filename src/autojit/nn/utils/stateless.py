"""functional_call, torch.nn.utils.stateless's: call a module with some of its parameters and
buffers replaced by the given tensors for that call alone (the module is left as it was); and
`_reparametrize_module`, the context manager under it that libraries use directly (a Bayesian
layer running its module with sampled weights).

The replacement swaps the tensors into the modules' registries and back, so the forward runs
unchanged on them: gradients flow to the given tensors, and inside `autojit.compile` they are
ordinary traced inputs.
"""

from __future__ import annotations

from contextlib import contextmanager

from ...tensor.tensor import Tensor


def _owner(module, key: str):
    """The submodule holding the parameter or buffer `key` ("layer.0.weight"), and its name."""
    path, _, name = key.rpartition(".")
    return (module.get_submodule(path) if path else module), name


@contextmanager
def _swapped(module, tensors: dict, strict: bool):
    missing = []
    if strict:
        expected = {name for name, _ in module.named_parameters()} | \
            {name for name, _ in module.named_buffers()}
        missing = sorted(expected - set(tensors))
        unexpected = sorted(set(tensors) - expected)
        if missing or unexpected:
            lines = []
            if unexpected:
                lines.append("Unexpected key(s): " + ", ".join(repr(k) for k in unexpected) + ".")
            if missing:
                lines.append("Missing key(s): " + ", ".join(repr(k) for k in missing) + ".")
            raise RuntimeError("Error(s) in reparametrizing for " + type(module).__name__
                               + ":\n\t" + "\n\t".join(lines))
    saved = []
    try:
        for key, tensor in tensors.items():
            owner, name = _owner(module, key)
            for registry in (owner._parameters, owner._buffers):
                if name in registry:
                    saved.append((registry, name, registry[name]))
                    registry[name] = tensor
                    break
            else:
                saved.append((owner.__dict__, name, owner.__dict__.get(name, _ABSENT)))
                owner.__dict__[name] = tensor
        yield
    finally:
        for registry, name, original in reversed(saved):
            if original is _ABSENT:
                del registry[name]
            else:
                registry[name] = original


_ABSENT = object()


def _untie_named_tensors_map(module, parameters_and_buffers: dict) -> dict:
    """The dict with each tensor given for one name of a tied tensor (one tensor registered
    under several names) given for all its names; ValueError where two different tensors are
    given for names of one tied tensor."""
    names_of: dict = {}
    for name, tensor in [*module.named_parameters(remove_duplicate=False),
                         *module.named_buffers(remove_duplicate=False)]:
        names_of.setdefault(id(tensor), set()).add(name)
    tied = {name: names for names in names_of.values() if len(names) > 1 for name in names}
    given = [name for name in parameters_and_buffers if name in tied]
    for name in given:
        names = tied[name]
        values = {id(parameters_and_buffers[other]) for other in names
                  if other in parameters_and_buffers}
        if len(names & set(given)) > 1 and len(values) != 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(names)}, "
                             "which are tied. Consider using tie_weights=False")
    untied = dict(parameters_and_buffers)
    for name in given:
        for other in tied[name]:
            untied[other] = parameters_and_buffers[name]
    return untied


@contextmanager
def _reparametrize_module(module, parameters_and_buffers: dict, tie_weights: bool = False,
                          strict: bool = False, stack_weights: bool = False):
    """torch's context manager: inside it, `module`'s parameters and buffers named in the dict
    are the given tensors (with tie_weights, every name of a tied tensor is); a tensor the
    module puts in their place meanwhile is written back into the dict on exit.
    stack_weights (the order torch restores nested replacements in) changes nothing here: each
    name is restored to what it held on entry."""
    tensors = (_untie_named_tensors_map(module, parameters_and_buffers) if tie_weights
               else parameters_and_buffers)
    with _swapped(module, tensors, strict):
        try:
            yield
        finally:
            for key in parameters_and_buffers:
                owner, name = _owner(module, key)
                current = owner._parameters.get(name, owner._buffers.get(name))
                if current is None:
                    current = owner.__dict__.get(name)
                if isinstance(current, Tensor):
                    parameters_and_buffers[key] = current


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """module(*args, **kwargs) with its parameters and buffers named in the dict(s) replaced
    for this call; with tie_weights, a tensor given for one name of a tied parameter replaces
    it under all its names."""
    if isinstance(parameter_and_buffer_dicts, dict):
        tensors = dict(parameter_and_buffer_dicts)
    else:
        tensors = {}
        for part in parameter_and_buffer_dicts:
            duplicates = set(tensors) & set(part)
            if duplicates:
                raise ValueError(f"{sorted(duplicates)} appeared in multiple dictionaries; "
                                 "behavior of functional call is ambiguous")
            tensors.update(part)
    if args is None:
        args = ()
    elif not isinstance(args, tuple):
        args = (args,)
    with _reparametrize_module(module, tensors, tie_weights=tie_weights, strict=strict):
        return module(*args, **(kwargs or {}))


__all__ = ["functional_call"]  # and torch's private _reparametrize_module
