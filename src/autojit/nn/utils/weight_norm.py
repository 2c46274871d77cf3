"""weight_norm and remove_weight_norm, torch.nn.utils's hook form: a parameter split into a
magnitude `<name>_g` and a direction `<name>_v` (Salimans and Kingma, 2016), recombined
before every forward by a forward pre-hook.

The recombination, w = v * (g / ||v||) with the norm over every dim but `dim`, is autojit ops
on the two parameters, so gradients reach g and v (and double backward works) and a compiled
training step captures it with the rest of the forward.
"""

from __future__ import annotations

from ..parameter import Parameter


def norm_except_dim(v, pow: float = 2, dim: int = 0):  # noqa: A002 - torch's name
    """The pow-norm of v over every dim but `dim`, kept as a broadcastable shape (the whole
    norm, a scalar, for dim=-1: torch's sentinel for dim=None)."""
    if dim == -1:
        return v.norm(pow)
    others = tuple(axis for axis in range(v.ndim) if axis != dim)
    return v.norm(pow, dim=others, keepdim=True)


class WeightNorm:
    """The forward pre-hook that recomputes module.<name> from <name>_g and <name>_v."""

    def __init__(self, name: str, dim: int) -> None:
        self.name = name
        self.dim = -1 if dim is None else dim

    def compute_weight(self, module):
        """v * (g / ||v||), from the module's two parameters."""
        g = getattr(module, self.name + "_g")
        v = getattr(module, self.name + "_v")
        return v * (g / norm_except_dim(v, 2, self.dim))

    @staticmethod
    def apply(module, name: str, dim: int) -> WeightNorm:
        """Split module.<name> into <name>_g and <name>_v and register the hook."""
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, WeightNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two weight_norm hooks on the same "
                                   f"parameter {name}")
        hook = WeightNorm(name, dim)
        weight = getattr(module, name)
        del module._parameters[name]
        module.register_parameter(name + "_g",
                                  Parameter(norm_except_dim(weight, 2, hook.dim).detach()))
        module.register_parameter(name + "_v", Parameter(weight.detach()))
        setattr(module, name, hook.compute_weight(module))
        module.register_forward_pre_hook(hook)
        return hook

    def remove(self, module) -> None:
        """Fold g and v back into one parameter <name>."""
        weight = self.compute_weight(module).detach()
        delattr(module, self.name)
        del module._parameters[self.name + "_g"]
        del module._parameters[self.name + "_v"]
        setattr(module, self.name, Parameter(weight))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name, self.compute_weight(module))


def weight_norm(module, name: str = "weight", dim: int | None = 0):
    """Reparametrize module.<name> as <name>_g * <name>_v / ||<name>_v|| (norm over every dim
    but `dim`; dim=None: the whole tensor); returns the module."""
    WeightNorm.apply(module, name, dim)
    return module


def remove_weight_norm(module, name: str = "weight"):
    """Undo weight_norm: one parameter <name> again; returns the module."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, WeightNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"weight_norm of '{name}' not found in {module}")


__all__ = ["weight_norm", "remove_weight_norm"]
