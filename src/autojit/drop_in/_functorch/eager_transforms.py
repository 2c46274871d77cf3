"""torch._functorch.eager_transforms under the drop-in: torch.func's transforms (autojit.func's)
and the argument helper `_slice_argnums`, which picks the arguments `argnums` names with
torch's checks and error messages.
"""

from __future__ import annotations

from ...autograd.transform_checks import argnums_tuple
from ...func import (  # noqa: F401 - torch._functorch.eager_transforms' names
    functionalize,
    grad,
    grad_and_value,
    hessian,
    jacfwd,
    jacrev,
    jvp,
    linearize,
    vjp,
)


def _slice_argnums(args: tuple, argnums, as_tuple: bool = True):
    """The arguments `argnums` (an int or a tuple of ints, negative ones counting from the
    end) picks out of `args`, in the order it names them: a tuple, or with an int argnums and
    `as_tuple=False` the argument itself."""
    numbers = argnums_tuple(argnums, len(args))
    if isinstance(argnums, int) and not as_tuple:
        return args[numbers[0]]
    return tuple(args[number] for number in numbers)


__all__ = ["functionalize", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "linearize", "vjp"]
