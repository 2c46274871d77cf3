"""vmap: a function mapped over a dimension of its inputs, as torch.func.vmap.

The mapped arguments become BatchedTensors (ops/batching.py) at a new vmap level: each shows
one example's shape and holds the whole batch, first dim first. The function runs once, every
primitive on a batched operand runs through its batching rule as one batched op, and the
results' batch dims are moved to out_dims. So a vmapped function is one batched computation,
it composes with grad, jvp and the other transforms (per-sample gradients are
`vmap(grad(loss))`, differentiated per example because autograd records at the batched
tensors' level), and `autojit.compile` traces it into one graph. in_dims and out_dims follow
torch's forms (an int, None, or a pytree prefix of the arguments or outputs), and so do the
errors.

randomness: 'error' makes a random draw inside the function raise torch's error; 'different'
draws a batch of draws; 'same' draws once for all examples. `legacy_vmap` is torch's first vmap
(torch._vmap_internals._vmap), which torch.autograd.grad's is_grads_batched, gradcheck's
batched checks and autograd.functional's vectorized jacobians batch with: the same mapping,
whose random draws raise that vmap's own message (tensor/random.py).
"""

from __future__ import annotations

import functools
import itertools

from ..ops.batching import batched, physical_of, with_batch
from ..tensor.state import state
from ..tensor.tensor import Tensor
from .pytree import broadcast_prefix, tree_flatten, tree_unflatten
from .transform_levels import VMAP_DEPTHS

_levels = itertools.count(1)

RANDOMNESS = ("error", "different", "same")
LEGACY = "legacy"  # the randomness mode of legacy_vmap: a draw raises torch's first vmap's error


def vmap(func, in_dims=0, out_dims=0, randomness: str = "error", *,
         chunk_size: int | None = None):
    """func mapped over dimension in_dims of its inputs, results stacked along out_dims.

    >>> import autojit
    >>> from autojit.func import vmap
    >>> vmap(lambda row: row.sum())(autojit.tensor([[1.0, 2.0], [3.0, 4.0]]))
    tensor([3., 7.])
    """
    if randomness not in RANDOMNESS:
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError(f"vmap: chunk_size should be None or greater than 0. (got "
                         f"{chunk_size})")
    return mapped(func, in_dims, out_dims, randomness, chunk_size)


def legacy_vmap(func, in_dims=0, out_dims=0):
    """torch's first vmap (torch._vmap_internals._vmap): vmap with no randomness modes, under
    which any random op raises "vmap: We do not yet support calling random operations inside
    of vmap"."""
    return mapped(func, in_dims, out_dims, LEGACY, None)


def mapped(func, in_dims, out_dims, randomness: str, chunk_size):
    """The mapped function of vmap and legacy_vmap, in any randomness mode (LEGACY included),
    its arguments unchecked."""
    name = getattr(func, "__name__", repr(func))

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        if not args:
            raise ValueError(f"vmap({name})(<inputs>): got no inputs. Maybe you forgot to add "
                             "inputs, or you are trying to vmap over a function with no inputs. "
                             "The latter is unsupported.")
        dims = _input_dims(in_dims, args, name)
        leaves, spec = tree_flatten(args)
        size = _batch_size(leaves, dims, name)
        if chunk_size is not None and chunk_size < size:
            return _chunked(wrapper_for_chunks, args, dims, size, chunk_size, out_dims)
        return _run_batched(func, leaves, spec, dims, size, kwargs, out_dims, randomness, name)

    def wrapper_for_chunks(*chunk_args):
        return mapped(func, in_dims, out_dims, randomness, None)(*chunk_args)

    return wrapper


def _run_batched(func, leaves, spec, dims, size, kwargs, out_dims, randomness, name):
    level = next(_levels)
    wrapped = []
    for leaf, dim in zip(leaves, dims):
        if dim is None:
            wrapped.append(leaf)
            continue
        physical = leaf.movedim(dim, 0) if dim else leaf
        batched_leaf = batched(physical, level)
        batched_leaf._requires_grad = physical._requires_grad
        # torch's BatchedTensor keeps its batch dim where in_dims put it, which a custom
        # Function's vmap staticmethod sees (function_vmap.py); autojit's is always first
        batched_leaf._vmap_input = (leaf, dim, physical)
        wrapped.append(batched_leaf)
    previous_levels, previous_mode = state.vmap_levels, state.vmap_randomness
    state.vmap_levels = (*previous_levels, (level, size))
    state.vmap_randomness = randomness
    try:
        state.func_transforms += 1
        VMAP_DEPTHS[level] = state.func_transforms  # torch's level number, for printing
        try:
            result = func(*tree_unflatten(wrapped, spec), **kwargs)
        finally:
            state.func_transforms -= 1
            del VMAP_DEPTHS[level]
    finally:
        state.vmap_levels, state.vmap_randomness = previous_levels, previous_mode
    return _unwrap_outputs(result, out_dims, level, size, name)


def _chunked(mapped, args, dims, size, chunk_size, out_dims):
    """vmap with chunk_size: the batch in chunks, each mapped alone, the results concatenated
    along their out_dims."""
    from ..ops.layout.joining import cat

    leaves, spec = tree_flatten(args)
    pieces = []
    for start in range(0, size, chunk_size):
        length = min(chunk_size, size - start)
        chunk = [leaf.narrow(dim, start, length) if dim is not None else leaf
                 for leaf, dim in zip(leaves, dims)]
        pieces.append(mapped(*tree_unflatten(chunk, spec)))
    flat = [tree_flatten(piece)[0] for piece in pieces]
    out_spec = tree_flatten(pieces[0])[1]
    if isinstance(out_dims, tuple) and not isinstance(pieces[0], tuple):
        out_dims = out_dims[0] if len(out_dims) == 1 else out_dims
    along = broadcast_prefix(out_dims, pieces[0], lambda: "out_dims does not fit the outputs")
    joined = []
    for position, dim in enumerate(along):
        column = [leaves_of_piece[position] for leaves_of_piece in flat]
        joined.append(column[0] if dim is None else cat(column, dim=dim % column[0].dim()))
    return tree_unflatten(joined, out_spec)


def _input_dims(in_dims, args: tuple, name: str) -> list:
    """The mapped dim (or None) of each leaf of args, normalized and checked."""
    if not isinstance(in_dims, (int, tuple)) and in_dims is not None:
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): expected `in_dims` to "
                         f"be int or a (potentially nested) tuple matching the structure of "
                         f"inputs, got: {type(in_dims)}.")
    if isinstance(in_dims, tuple) and len(in_dims) != len(args):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not "
                         f"compatible with the structure of `inputs`. in_dims has structure "
                         f"{tree_flatten(in_dims)[1]} but inputs has structure "
                         f"{tree_flatten(args)[1]}.")
    prefix = in_dims if isinstance(in_dims, tuple) else tuple(in_dims for _ in args)
    dims = broadcast_prefix(prefix, args, lambda: (
        f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims is not compatible with the "
        f"structure of `inputs`."))
    leaves = tree_flatten(args)[0]
    normalized = []
    for leaf, dim in zip(leaves, dims):
        if dim is None:
            normalized.append(None)
            continue
        if not isinstance(dim, int):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): in_dims must be "
                             f"int or None, got {type(dim)}")
        if not isinstance(leaf, Tensor):
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} "
                             f"for an input but the input is of type {type(leaf)}. We cannot "
                             "vmap over non-Tensor arguments, please use None as the respective "
                             "in_dim")
        rank = leaf.dim()
        if not -rank <= dim < rank:
            raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dim={dim} "
                             f"for some input, but that input is a Tensor of dimensionality "
                             f"{rank} so expected in_dim to satisfy -{rank} <= in_dim < {rank}.")
        normalized.append(dim % rank)
    if all(dim is None for dim in normalized):
        raise ValueError(f"vmap({name}, in_dims={in_dims}, ...)(<inputs>): Got in_dims="
                         f"{in_dims} and inputs were not Tensors or in_dims were all None. "
                         "At least one input must be a Tensor mapped over a dimension.")
    return normalized


def _batch_size(leaves: list, dims: list, name: str) -> int:
    sizes = [leaf.shape[dim] for leaf, dim in zip(leaves, dims) if dim is not None]
    # By comparison, not by a set: a traced size is a symbol, and the comparison is the guard
    # that the sizes agree.
    if any(size != sizes[0] for size in sizes[1:]):
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _unwrap_outputs(result, out_dims, level: int, size: int, name: str):
    """The function's outputs with their batch dim (of `level`) moved to out_dims; an output
    that does not depend on the mapped inputs is broadcast along the batch."""
    leaves, spec = tree_flatten(result)
    template = result
    if isinstance(out_dims, tuple) and not isinstance(template, tuple):
        out_dims = out_dims[0] if len(out_dims) == 1 else out_dims
    dims = broadcast_prefix(out_dims, template, lambda: (
        f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with "
        "the structure of `outputs`."))
    unwrapped = []
    for leaf, dim in zip(leaves, dims):
        if not isinstance(leaf, Tensor):
            if dim is None:
                unwrapped.append(leaf)
                continue
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(leaf)}. Did you mean to set out_dims= to None for "
                             "output?")
        physical, is_batched = physical_of(leaf, level)
        if dim is None:
            if is_batched:
                raise ValueError(f"vmap({name}, ..., out_dims={out_dims})(<inputs>): Cannot "
                                 "return a BatchedTensor when out_dim is None")
            unwrapped.append(physical)
            continue
        if not is_batched:
            physical = with_batch(physical, size)
        rank = physical.dim()
        if not isinstance(dim, int) or not -rank <= dim < rank:
            raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): Got out_dim={dim} for an "
                             f"output of dimensionality {rank - 1}, expected it to satisfy "
                             f"-{rank} <= out_dim < {rank}.")
        dim %= rank
        unwrapped.append(physical.movedim(0, dim) if dim else physical)
    return tree_unflatten(unwrapped, spec)


__all__ = ["legacy_vmap", "mapped", "vmap"]
