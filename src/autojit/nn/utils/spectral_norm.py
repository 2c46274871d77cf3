"""spectral_norm and remove_spectral_norm, torch.nn.utils's hook form: a weight divided by
its largest singular value, estimated by power iteration (Miyato et al., 2018).

The parameter becomes `<name>_orig`, with buffers `<name>_u` and `<name>_v` (the singular
vectors' estimates, torch's state_dict keys). A forward pre-hook recomputes module.<name>: in
training mode it first runs n_power_iterations steps, updating u and v in place under no_grad;
sigma = u . (W v) then keeps its gradient to W, as torch's. The hook stores a tensor on the
module, so inside `autojit.compile` it breaks the graph, as the hook-form weight_norm does.
"""

from __future__ import annotations

from ...autograd import no_grad
from ...tensor.creation import empty
from ..init import normal_
from ..parameter import Parameter


def _normalize(x, eps: float):
    """x / max(||x||, eps), as torch.nn.functional.normalize over dim 0."""
    return x / x.norm().clamp(min=eps)


class SpectralNorm:
    """The forward pre-hook that recomputes module.<name> as <name>_orig / sigma."""

    def __init__(self, name: str = "weight", n_power_iterations: int = 1, dim: int = 0,
                 eps: float = 1e-12) -> None:
        self.name = name
        self.dim = dim
        if n_power_iterations <= 0:
            raise ValueError("Expected n_power_iterations to be positive, but got "
                             f"n_power_iterations={n_power_iterations}")
        self.n_power_iterations = n_power_iterations
        self.eps = eps

    def reshape_weight_to_matrix(self, weight):
        """The weight as a matrix with `dim` as its rows."""
        if self.dim != 0:
            weight = weight.permute(self.dim, *[d for d in range(weight.ndim) if d != self.dim])
        return weight.reshape(weight.shape[0], -1)

    def compute_weight(self, module, do_power_iteration: bool):
        """weight_orig / sigma, after power iteration steps on u and v when asked."""
        weight = getattr(module, self.name + "_orig")
        u = getattr(module, self.name + "_u")
        v = getattr(module, self.name + "_v")
        matrix = self.reshape_weight_to_matrix(weight)
        if do_power_iteration:
            with no_grad():
                for _ in range(self.n_power_iterations):
                    v.copy_(_normalize(matrix.T @ u, self.eps))
                    u.copy_(_normalize(matrix @ v, self.eps))
                u, v = u.clone(), v.clone()
        sigma = (u * (matrix @ v)).sum()
        return weight / sigma

    def remove(self, module) -> None:
        """Fold the normalized weight back into one parameter <name>."""
        with no_grad():
            weight = self.compute_weight(module, do_power_iteration=False)
        delattr(module, self.name)
        delattr(module, self.name + "_u")
        delattr(module, self.name + "_v")
        delattr(module, self.name + "_orig")
        module.register_parameter(self.name, Parameter(weight.detach()))

    def __call__(self, module, inputs) -> None:
        setattr(module, self.name,
                self.compute_weight(module, do_power_iteration=module.training))

    @staticmethod
    def apply(module, name: str, n_power_iterations: int, dim: int, eps: float) -> SpectralNorm:
        """Register the buffers and the hook on module (u and v drawn from N(0, 1))."""
        for hook in module._forward_pre_hooks.values():
            if isinstance(hook, SpectralNorm) and hook.name == name:
                raise RuntimeError(f"Cannot register two spectral_norm hooks on the same "
                                   f"parameter {name}")
        hook = SpectralNorm(name, n_power_iterations, dim, eps)
        weight = module._parameters[name]
        with no_grad():
            rows, cols = hook.reshape_weight_to_matrix(weight).shape
            u = _normalize(normal_(empty(rows, dtype=weight.dtype)), hook.eps)
            v = _normalize(normal_(empty(cols, dtype=weight.dtype)), hook.eps)
        delattr(module, name)
        module.register_parameter(name + "_orig", weight)
        setattr(module, name, weight.detach())
        module.register_buffer(name + "_u", u)
        module.register_buffer(name + "_v", v)
        module.register_forward_pre_hook(hook)
        return hook


def spectral_norm(module, name: str = "weight", n_power_iterations: int = 1,
                  eps: float = 1e-12, dim: int | None = None):
    """Divide module.<name> by its spectral norm, estimated by power iteration at each
    training-mode forward; dim defaults to 0 (1 for transposed convolutions). Returns the
    module."""
    if dim is None:
        dim = 1 if type(module).__name__.startswith("ConvTranspose") else 0
    SpectralNorm.apply(module, name, n_power_iterations, dim, eps)
    return module


def remove_spectral_norm(module, name: str = "weight"):
    """Undo spectral_norm: one parameter <name> again; returns the module."""
    for key, hook in list(module._forward_pre_hooks.items()):
        if isinstance(hook, SpectralNorm) and hook.name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"spectral_norm of '{name}' not found in {module}")


__all__ = ["spectral_norm", "remove_spectral_norm"]
