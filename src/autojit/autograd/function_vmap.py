"""An autograd.Function's forward inside vmap, as torch.func runs it: `forward_under_vmap`, for
function.py's apply to call in place of `cls.forward` for a Function with setup_context.

torch hands the Function to the innermost vmap level that batches one of its arguments
(levels batching none are skipped): there it calls the Function's `vmap` staticmethod with a
`VmapInfo`, the arguments' batch dims (None for one not batched, in the arguments' structure)
and the arguments with that level's batch dim exposed (an argument of vmap itself as it was
passed, batched along its in_dim, as torch's BatchedTensor keeps it; any other batched
first), and batches its outputs along the out_dims it returns. With `generate_vmap_rule =
True` the forward itself is batched, which is what autojit does for every op, so forward
simply runs on the batched arguments. A Function with neither is refused inside vmap, as in
torch; autojit's own Functions keep the generated rule.
"""

from __future__ import annotations

from typing import NamedTuple

from ..tensor.state import state
from ..tensor.tensor import Tensor
from .pytree import tree_flatten, tree_unflatten

_DOCS = "For more details, please see https://pytorch.org/docs/main/notes/extending.func.html"


class VmapInfo(NamedTuple):
    """What the vmap staticmethod learns of the vmap level it runs for."""

    batch_size: int
    randomness: str


def forward_under_vmap(cls, args: tuple, kwargs: dict):
    """cls.forward(*args, **kwargs), or its vmap staticmethod's result inside vmap."""
    levels = state.vmap_levels
    if not levels or state.plain_autograd:
        return cls.forward(*args, **kwargs)
    _check_vmap_support(cls, kwargs)
    return _at_level(cls, args, kwargs, levels)


def _own(cls) -> bool:
    return cls.__module__ == "autojit" or cls.__module__.startswith("autojit.")


def _has_vmap_rule(cls) -> bool:
    from .function import Function

    return getattr(cls, "vmap", None) is not getattr(Function, "vmap", None)


def _check_vmap_support(cls, kwargs: dict) -> None:
    if any(isinstance(leaf, Tensor) for leaf in tree_flatten(kwargs)[0]):
        raise NotImplementedError(
            "Run vmap on autograd.Function with kwarg-only Tensor args. Please do not pass "
            f"kwarg-only Tensors to autograd.Function. Got: {kwargs}")
    name = cls.__name__
    if getattr(cls, "generate_vmap_rule", False):
        if _has_vmap_rule(cls):
            raise RuntimeError(
                f"You tried to vmap over {name}, but it has both generate_vmap_rule=True and "
                "an overridden vmap staticmethod. Please set generate_vmap_rule=False or "
                f"delete the overridden vmap staticmethod to avoid ambiguity. {_DOCS}")
    elif not _has_vmap_rule(cls) and not _own(cls):
        raise RuntimeError(
            f"You tried to vmap over {name}, but it does not have vmap support. Please "
            "override and implement the vmap staticmethod or set generate_vmap_rule=True. "
            f"{_DOCS}")


def _at_level(cls, args: tuple, kwargs: dict, levels: tuple):
    from ..ops.batching import physical_of

    if not levels or getattr(cls, "generate_vmap_rule", False) or not _has_vmap_rule(cls):
        # the generated rule: forward on the batched arguments, every level batching it
        return _with_levels(levels, lambda: cls.forward(*args, **kwargs))
    level, size = levels[-1]
    leaves, spec = tree_flatten(args)
    unwrapped, dims = [], []
    for leaf in leaves:
        physical, is_batched = physical_of(leaf, level) if isinstance(leaf, Tensor) else (
            leaf, False)
        given = vmap_input(leaf, level) if is_batched else None
        if given is not None:  # vmap's own argument: as passed, batched along its in_dim
            physical, dim = given
        else:
            dim = 0 if is_batched else None
        unwrapped.append(physical)
        dims.append(dim)
    if all(dim is None for dim in dims):
        return _at_level(cls, args, kwargs, levels[:-1])
    # (torch's first vmap, legacy_vmap, refuses draws as randomness="error" does)
    mode = state.vmap_randomness
    info = VmapInfo(size, "error" if mode in (None, "legacy") else mode)
    in_dims = tree_unflatten(dims, spec)
    unwrapped_args = tree_unflatten(unwrapped, spec)
    result = _with_levels(levels[:-1],
                          lambda: cls.vmap(info, in_dims, *unwrapped_args, **kwargs))
    output, out_dims = _two_returns(result)
    return _batched_outputs(output, out_dims, leaves, unwrapped, level)


def vmap_input(tensor: Tensor, level: int):
    """(the argument, its in_dim) where `tensor` is what vmap made of an argument at `level`
    (vmap.py) and still holds it, else None: torch's BatchedTensor has its batch dim there."""
    found = tensor.__dict__.get("_vmap_input")
    if found is None or tensor._value.level != level or tensor._value.physical is not found[2]:
        return None
    return found[0], found[1]


def _with_levels(levels: tuple, run):
    previous = state.vmap_levels
    state.vmap_levels = levels
    try:
        return run()
    finally:
        state.vmap_levels = previous


def _two_returns(result) -> tuple:
    message = ("Expected the vmap staticmethod to have two returns, an output and out_dims "
               "with pytree structure compatible with the output. ")
    if not isinstance(result, tuple):
        raise RuntimeError(message + f"Got a {type(result)} instead")
    if len(result) != 2:
        raise RuntimeError(message + f"Got {len(result)} returns instead")
    return result


def _batched_outputs(output, out_dims, originals: list, unwrapped: list, level: int):
    """The vmap staticmethod's outputs batched at `level` along their out_dims; an argument it
    returns as is comes back as the argument itself (torch keeps that identity, which
    mark_dirty relies on)."""
    from ..ops.batching import batched

    leaves, spec = tree_flatten(output)
    dims = _broadcast_out_dims(out_dims, output, spec)
    given = {id(inner): outer for inner, outer in zip(unwrapped, originals)}
    results = []
    for leaf, dim in zip(leaves, dims):
        if not isinstance(leaf, Tensor):
            results.append(leaf)
        elif id(leaf) in given:
            results.append(given[id(leaf)])
        elif dim is None:
            results.append(leaf)
        else:
            results.append(batched(leaf.movedim(dim, 0) if dim else leaf, level))
    return tree_unflatten(results, spec)


def _broadcast_out_dims(out_dims, output, spec) -> list:
    """One out_dim per leaf of `output`: out_dims is a prefix of its structure, with the same
    container types where it has containers (torch's _broadcast_to_and_flatten)."""
    flat: list = []
    if not _broadcast(out_dims, output, flat):
        raise RuntimeError(
            "The autograd.Function's vmap staticmethod returned an incompatible (output, "
            f"out_dims) tuple. Expected out_dims={out_dims} to be compatible with the "
            f"structure of `output`. out_dims has structure {tree_flatten(out_dims)[1]} but "
            f"output has structure {spec}. {_DOCS}")
    return flat


def _broadcast(prefix, tree, out: list) -> bool:
    if isinstance(prefix, (tuple, list, dict)):
        if type(prefix) is not type(tree) or len(prefix) != len(tree):
            return False
        if isinstance(prefix, dict):
            if set(prefix) != set(tree):
                return False
            return all(_broadcast(prefix[key], tree[key], out) for key in tree)
        return all(_broadcast(item_prefix, item, out) for item_prefix, item in zip(prefix, tree))
    out.extend([prefix] * len(tree_flatten(tree)[0]))
    return True
