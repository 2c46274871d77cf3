"""autojit.func: torch.func's function transforms, on autojit's forward and reverse mode.

grad, grad_and_value, vjp, jvp, linearize, jacrev, jacfwd and hessian are in
autograd/transforms.py, vmap in autograd/vmap.py; this package adds what needs nn:
functional_call (a module called with replacement parameters) and stack_module_state (the
parameters of an ensemble of modules stacked, to vmap over). Every transform composes with the
others and with `autojit.compile`.
"""

from ..autograd.transforms import (
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    vjp,
)
from ..autograd.vmap import vmap
from .modules import (
    debug_unwrap,
    functional_call,
    functionalize,
    replace_all_batch_norm_modules_,
    stack_module_state,
)

__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian",
           "vmap", "functional_call", "stack_module_state", "functionalize",
           "replace_all_batch_norm_modules_", "debug_unwrap"]
