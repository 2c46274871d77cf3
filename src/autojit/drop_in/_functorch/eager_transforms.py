"""torch._functorch.eager_transforms under the drop-in: torch.func's transforms (autojit.func's)
and the argument helper `_slice_argnums`, which picks the arguments `argnums` names with
torch's checks and error messages.
"""

from __future__ import annotations

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


def _validate_and_wrap_argnum(argnum, num_args: int) -> int:
    """`argnum` as a non-negative index into `num_args` positional arguments."""
    if not isinstance(argnum, int):
        raise RuntimeError(f"argnum must be int, got: {type(argnum)}")
    if 0 <= argnum < num_args:
        return argnum
    if -num_args <= argnum < 0:
        return argnum + num_args
    raise RuntimeError(f"Got argnum={argnum}, but only {num_args} positional inputs")


def _validate_and_wrap_argnums(argnums, num_args: int):
    if isinstance(argnums, int):
        return _validate_and_wrap_argnum(argnums, num_args)
    return tuple(_validate_and_wrap_argnum(argnum, num_args) for argnum in argnums)


def _check_unique_non_empty(argnums) -> None:
    if isinstance(argnums, tuple):
        if not argnums:
            raise RuntimeError("argnums must be non-empty")
        if len(set(argnums)) != len(argnums):
            raise RuntimeError(f"argnums elements must be unique, got {argnums}")


def _slice_argnums(args: tuple, argnums, as_tuple: bool = True):
    """The arguments `argnums` (an int or a tuple of ints, negative ones counting from the
    end) picks out of `args`, in the order it names them: a tuple, or with an int argnums and
    `as_tuple=False` the argument itself."""
    if not isinstance(argnums, int | tuple):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    argnums = _validate_and_wrap_argnums(argnums, len(args))
    _check_unique_non_empty(argnums)
    if isinstance(argnums, int):
        return (args[argnums],) if as_tuple else args[argnums]
    return tuple(args[number] for number in argnums)


__all__ = ["functionalize", "grad", "grad_and_value", "hessian", "jacfwd", "jacrev", "jvp",
           "linearize", "vjp"]
