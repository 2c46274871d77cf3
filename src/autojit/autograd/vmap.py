"""vmap: a function mapped over a dimension of its inputs, as torch.func.vmap.

The mapped function runs once per index of the mapped dimension, on that index's slices, and
the results are stacked along out_dims. Each run is ordinary autojit ops, so vmap composes
with grad, jvp and the other transforms (per-sample gradients are `vmap(grad(loss))`) and with
`autojit.compile`, which traces the runs into one graph. in_dims and out_dims follow torch's
forms (an int, None, or a pytree prefix of the arguments or outputs), and so do the errors.

randomness: 'error' makes a random draw inside the function raise torch's error; 'different'
draws anew for each index; 'same' replays the generators' state so every index draws the same
numbers.
"""

from __future__ import annotations

import functools

from ..tensor.state import state
from ..tensor.tensor import Tensor
from .pytree import broadcast_prefix, tree_flatten, tree_unflatten

RANDOMNESS = ("error", "different", "same")


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
        results = []
        with _randomness(randomness) as random_mode:
            for index in range(size):
                random_mode.start_index()
                sliced = [leaf.select(dim, index) if dim is not None else leaf
                          for leaf, dim in zip(leaves, dims)]
                results.append(func(*tree_unflatten(sliced, spec), **kwargs))
        return _stack_outputs(results, out_dims, name)

    return wrapper


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
    if len(set(sizes)) > 1:
        raise ValueError(f"vmap: Expected all tensors to have the same size in the mapped "
                         f"dimension, got sizes {sizes} for the mapped dimension")
    return sizes[0]


def _stack_outputs(results: list, out_dims, name: str):
    from ..ops.joining import stack

    flat_results = [tree_flatten(result) for result in results]
    if not flat_results:
        raise ValueError(f"vmap({name}, ...): the mapped dimension has size 0; autojit's vmap "
                         "needs at least one element to learn the outputs' shapes")
    spec = flat_results[0][1]
    template = results[0]
    if isinstance(out_dims, tuple) and not isinstance(template, tuple):
        out_dims = out_dims[0] if len(out_dims) == 1 else out_dims
    dims = broadcast_prefix(out_dims, template, lambda: (
        f"vmap({name}, ..., out_dims={out_dims})(<inputs>): out_dims is not compatible with "
        "the structure of `outputs`."))
    stacked = []
    for position, dim in enumerate(dims):
        column = [leaves[position] for leaves, _ in flat_results]
        if dim is None:
            stacked.append(column[0])
            continue
        if not all(isinstance(item, Tensor) for item in column):
            raise ValueError(f"vmap({name}, ...): `{name}` must only return Tensors, got type "
                             f"{type(column[0])}. Did you mean to set out_dims= to None for "
                             "output?")
        rank = column[0].dim() + 1
        if not isinstance(dim, int) or not -rank <= dim < rank:
            raise ValueError(f"vmap({name}, ..., out_dims={out_dims}): Got out_dim={dim} for an "
                             f"output of dimensionality {rank - 1}, expected it to satisfy "
                             f"-{rank} <= out_dim < {rank}.")
        stacked.append(stack(column, dim=dim % rank))
    return tree_unflatten(stacked, spec)


class _randomness:  # noqa: N801 - a context manager used like a function
    """Sets the mode random draws read (tensor/random.py); under 'same', `start_index` puts
    the generators back to their state at entry, so every index draws the same numbers."""

    def __init__(self, mode: str):
        self.mode = mode
        self.saved = ()

    def __enter__(self):
        self.previous = state.vmap_randomness
        state.vmap_randomness = self.mode
        if self.mode == "same":
            from ..tensor.generator import default_generator, device_generators

            self.saved = [(generator, generator.get_state())
                          for generator in (default_generator, *device_generators())]
        return self

    def start_index(self) -> None:
        for generator, saved in self.saved:
            generator.set_state(saved)

    def __exit__(self, *exc):
        state.vmap_randomness = self.previous


__all__ = ["vmap"]
