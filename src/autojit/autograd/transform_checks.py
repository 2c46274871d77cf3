"""The argument and output checks of the function transforms (transforms.py), raising torch.func's
errors with its messages, so code that catches or matches them behaves the same under autojit.

torch words each error for the API that raises it: grad's as `grad_and_value(f)(*args)`, vjp's
(and jacrev's, which runs vjp) as `vjp(f, *primals)`, jvp's (and jacfwd's) as
`jvp(f, primals, tangents)`; the constants below are those prefixes.
"""

from __future__ import annotations

import functools
import sys

from ..tensor.state import state
from ..tensor.tensor import Tensor
from .graph_api import disable_saved_tensors_hooks
from .pytree import tree_flatten

GRAD = "grad_and_value(f)(*args)"
VJP = "vjp(f, *primals)"
JVP = "jvp(f, primals, tangents)"

_NO_SAVED_TENSOR_HOOKS = ("torch.func.{grad, vjp, jacrev, hessian} don't yet support saved tensor "
                          "hooks. Please open an issue with your use case.")


def refuses_saved_tensor_hooks(function):
    """`function` run where saved-tensor hooks may be neither active nor entered: torch's
    reverse-mode transforms refuse them (the hooks would see its level's wrapped tensors)."""
    @functools.wraps(function)
    def run(*args, **kwargs):
        with disable_saved_tensors_hooks(_NO_SAVED_TENSOR_HOOKS):
            return function(*args, **kwargs)

    return run


def argnums_tuple(argnums, count: int) -> tuple:
    """`argnums` (an int or a tuple of ints) as a tuple of indices in range(count)."""
    if not isinstance(argnums, (int, tuple)):
        raise RuntimeError(f"argnums must be int or Tuple[int, ...], got: {type(argnums)}")
    numbers = argnums if isinstance(argnums, tuple) else (argnums,)
    normalized = tuple(_argnum(number, count) for number in numbers)
    if isinstance(argnums, tuple):
        # torch checks these on the wrapped indices: (0, -2) of two arguments repeats 0
        if not normalized:
            raise RuntimeError("argnums must be non-empty")
        if len(set(normalized)) != len(normalized):
            raise RuntimeError(f"argnums elements must be unique, got {normalized}")
    return normalized


def _argnum(number, count: int) -> int:
    if not isinstance(number, int):
        raise RuntimeError(f"argnum must be int, got: {type(number)}")
    if not -count <= number < count:
        raise RuntimeError(f"Got argnum={number}, but only {count} positional inputs")
    return number % count


def split_aux(output, has_aux: bool, api: str):
    """(output, aux) of a function run with has_aux; aux's leaves must be tensors."""
    if not has_aux:
        return output, None
    if not (isinstance(output, tuple) and len(output) == 2):
        raise RuntimeError(f"{api}: output of function f should be a tuple: (output, aux) if "
                           "has_aux is True")
    return output


def check_aux(aux) -> None:
    """torch unwraps aux from the transform's level leaf by leaf, and refuses anything else."""
    for leaf in tree_flatten(aux)[0]:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"Expected tensors, got unsupported type {type(leaf)}")


def check_outputs(leaves: list, api: str) -> None:
    """vjp's and jvp's outputs: at least one, and only tensors."""
    if not leaves or (len(leaves) == 1 and leaves[0] is None):
        raise RuntimeError(f"{api}: Expected f to be a function that has non-empty output "
                           f"(got output = {leaves})")
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"{api}: expected f(*primals) to return only tensors, got "
                               f"unsupported type {type(leaf)}")


def check_tensor_list(leaves: list, argname: str) -> None:
    """jvp's primals and tangents: at least one leaf, and only tensors."""
    if not leaves:
        raise RuntimeError(f"{JVP}: Expected {argname} to contain at least one Tensor.")
    for leaf in leaves:
        if not isinstance(leaf, Tensor):
            raise RuntimeError(f"{JVP}: Expected {argname} to only contain Tensors, got "
                               f"{type(leaf)}")


def check_real(api: str, leaves, is_input: bool) -> None:
    """jacrev and jacfwd refuse complex inputs and outputs, as torch's do."""
    for index, leaf in enumerate(leaves):
        if isinstance(leaf, Tensor) and leaf.dtype.is_complex:
            kind = "inputs" if is_input else "outputs"
            raise RuntimeError(f"{api}: Expected all {kind} to be real but received complex "
                               f"tensor at flattened input idx: {index}")


_IN_TRANSFORM = {
    "requires_grad_": "Tensor.requires_grad_() (or perhaps using torch.autograd.functional.* "
                      "APIs)",
    "retain_grad": "Tensor.retain_grad()",
}


def _unsupported_in_transform(method: str) -> RuntimeError:
    return RuntimeError(
        f"You are attempting to call {_IN_TRANSFORM[method]} inside of a function being "
        "transformed by a functorch transform. This is unsupported, please attempt to use the "
        "functorch transforms (e.g. grad, vjp, jacrev, jacfwd, hessian) or call "
        f"{method}() outside of a function being transformed instead.")


_DISPATCH_WRAPPER = "autojit.tensor.torch_function"


def refuse_in_transform(method: str) -> None:
    """Raise torch's error for `method` (requires_grad_ or retain_grad) called by the user's
    function while a torch.func transform runs it. The caller two frames up is checked: torch
    lets its own factories and modules set requires_grad there, and autojit's code (a factory's
    requires_grad=True, the transforms' own inputs) sets it through this same method."""
    if state.plain_autograd or not state.func_transforms:
        return
    frame = sys._getframe(2)
    # __torch_function__ dispatch (on while a subclass or mode is in use) calls the method from
    # its own wrapper; the caller that counts is the wrapper's
    while frame is not None and frame.f_globals.get("__name__") == _DISPATCH_WRAPPER:
        frame = frame.f_back
    caller = frame.f_globals.get("__name__", "") if frame is not None else ""
    if caller == "autojit" or caller.startswith("autojit."):
        return
    raise _unsupported_in_transform(method)


def refuse_functional_in_transform(name: str, args: tuple, kwargs: dict) -> None:
    """torch.autograd.functional's APIs mark their inputs with requires_grad_(), which a running
    transform refuses; jacobian's forward mode makes dual tensors instead, which vmap has no
    batching rule for (under the other transforms torch's fails later, here it runs)."""
    strategy = kwargs.get("strategy", args[5] if len(args) > 5 else "reverse-mode")
    if name == "jacobian" and strategy == "forward-mode":
        if state.vmap_levels:
            raise RuntimeError("Batching rule not implemented for aten::_make_dual; the "
                               "fallback path doesn't work on out= or view ops.")
        return
    raise _unsupported_in_transform("requires_grad_")


Tensor._refuse_in_transform = staticmethod(refuse_in_transform)  # (tensor.py's requires_grad_)
