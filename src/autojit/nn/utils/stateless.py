"""functional_call, torch.nn.utils.stateless's: call a module with some of its parameters and
buffers replaced by the given tensors for that call alone (the module is left as it was).

The replacement swaps the tensors into the modules' registries and back, so the forward runs
unchanged on them: gradients flow to the given tensors, and inside `autojit.compile` they are
ordinary traced inputs.
"""

from __future__ import annotations

from contextlib import contextmanager


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


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """module(*args, **kwargs) with its parameters and buffers named in the dict(s) replaced
    for this call; tie_weights is accepted (a tied tensor appears under one name here)."""
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
    with _swapped(module, tensors, strict):
        return module(*args, **(kwargs or {}))


__all__ = ["functional_call"]
