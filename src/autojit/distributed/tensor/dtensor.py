"""DTensor: a tensor placed on a DeviceMesh, each process holding its local part (a shard, a
replica or a partial value along each mesh dimension), torch.distributed.tensor's class.

It is a Tensor subclass whose own elements are the local part, with torch's global view of
sizes (`shape`, `size()`, `dim()`, `numel()`) through `__torch_function__`. What moves data
is here, with the collectives of distributed/collectives.py: `from_local`, `to_local`,
`redistribute` between any placements, `full_tensor`, and `distribute_tensor`. An op on
DTensors whose every placement is Replicate runs on the local parts and gives a replicated
DTensor; any other op raises NotImplementedError naming the op and the placements (torch's
per-op sharding rules are not built: docs/drop-in.md), so that nothing computes on a shard as
if it were the whole.
"""

from __future__ import annotations

from ...autograd.pytree import tree_flatten, tree_map
from ...tensor import torch_function
from ...tensor.tensor import Size, Tensor
from .. import collectives
from ..device_mesh import DeviceMesh
from .placement_types import Partial, Placement, Replicate, Shard

__all__ = ["DTensor", "distribute_tensor"]

_REDUCE_OPS = {"sum": "SUM", "avg": "AVG", "max": "MAX", "min": "MIN", "product": "PRODUCT"}


class DTensor(Tensor):
    """A tensor placed on `device_mesh` by `placements` (see the module docstring). Make one
    with DTensor.from_local or distribute_tensor."""

    _local: Tensor | None  # None for a leaf: its own elements are the local part
    _device_mesh: DeviceMesh
    _placements: tuple
    _global_shape: tuple

    @staticmethod
    def _wrap(local: Tensor, mesh: DeviceMesh, placements: tuple, shape: tuple,
              leaf: bool = False) -> DTensor:
        # A view in `local`'s graph (gradients reach it), or a leaf of its own (a parameter).
        made = Tensor._make_subclass(DTensor, local) if leaf else local.as_subclass(DTensor)
        made._local = None if leaf else local
        made._device_mesh = mesh
        made._placements = tuple(placements)
        made._global_shape = tuple(shape)
        if leaf and local.requires_grad:
            with torch_function.DisableTorchFunctionSubclass():
                made.requires_grad_(True)
                # Its gradient is placed as it is, as each accumulation leaves it.
                made.register_post_accumulate_grad_hook(_placed_grad)
        return made

    @staticmethod
    def from_local(local_tensor: Tensor, device_mesh: DeviceMesh | None = None,
                   placements=None, *, run_check: bool = False, shape=None,
                   stride=None) -> DTensor:
        """A DTensor of each process's `local_tensor` placed by `placements` (Replicate on
        every mesh dimension when None); its global shape is `shape`, or the local one with
        each sharded dimension's sizes added up across the mesh dimension."""
        mesh = device_mesh if device_mesh is not None else _default_mesh()
        placements = _normalized(placements, mesh, local_tensor.dim())
        if shape is None:
            sizes = list(local_tensor.shape)
            for mesh_dim, placement in enumerate(placements):
                if placement.is_shard():
                    sizes[placement.dim] = _summed(sizes[placement.dim], mesh, mesh_dim)
            shape = tuple(sizes)
        return DTensor._wrap(local_tensor, mesh, placements, tuple(shape))

    @property
    def _local_tensor(self) -> Tensor:
        if self._local is not None:
            return self._local
        with torch_function.DisableTorchFunctionSubclass():  # a plain view of a leaf's own
            return self.view(tuple(self.shape))

    def to_local(self, *, grad_placements=None) -> Tensor:
        """This process's part."""
        return self._local_tensor

    @property
    def device_mesh(self) -> DeviceMesh:
        return self._device_mesh

    @property
    def placements(self) -> tuple:
        return self._placements

    def redistribute(self, device_mesh: DeviceMesh | None = None, placements=None, *,
                     async_op: bool = False, forward_dtype=None,
                     backward_dtype=None) -> DTensor:
        """The same tensor placed by `placements` on the same mesh: shards gathered or split,
        partial values reduced, along each mesh dimension in turn."""
        mesh = self._device_mesh
        if device_mesh is not None and device_mesh != mesh:
            raise NotImplementedError("Cross device mesh comm not supported yet!")
        wanted = _normalized(placements, mesh, len(self._global_shape))
        local = self._local_tensor
        current = list(self._placements)
        for mesh_dim, (have, want) in enumerate(zip(current, wanted)):
            if have == want:
                continue
            local = _replicated(local, have, mesh, mesh_dim, self._global_shape, current)
            current[mesh_dim] = Replicate()
            local = _placed(local, want, mesh, mesh_dim)
            current[mesh_dim] = want
        return DTensor._wrap(local, mesh, wanted, self._global_shape)

    def full_tensor(self, *, grad_placements=None) -> Tensor:
        """The whole tensor on each process (every placement made Replicate)."""
        replicated = self.redistribute(placements=[Replicate()] * self._device_mesh.ndim)
        return replicated._local_tensor

    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if getattr(func, "__name__", None) == "__get__" and \
                getattr(func, "__self__", None) is vars(Tensor)["shape"] and args:
            return Size(args[0]._global_shape)
        name = getattr(func, "__name__", str(func))
        if name in _GLOBAL_SIZES and args and isinstance(args[0], DTensor):
            return _GLOBAL_SIZES[name](args[0]._global_shape, *args[1:], **kwargs)
        if name in ("__get__", "__set__") or name in _OWN:
            # A property (dtype, grad, requires_grad) or an autograd method of the DTensor
            # object itself.
            with torch_function.DisableTorchFunctionSubclass():
                result = func(*args, **kwargs)
            if getattr(func, "__self__", None) is vars(Tensor)["grad"] and \
                    result.__class__ is Tensor:
                # a DTensor's gradient is placed as the DTensor is
                own = args[0]
                return DTensor._wrap(result, own._device_mesh, own._placements,
                                     own._global_shape)
            return result
        leaves, _ = tree_flatten((args, kwargs))
        found = [leaf for leaf in leaves if isinstance(leaf, DTensor)]
        first = found[0]
        mesh, placements, shape = first._device_mesh, first._placements, first._global_shape
        replicated = all(leaf._device_mesh == mesh and all(
            p.is_replicate() for p in leaf._placements) for leaf in found)
        # An elementwise op of DTensors placed alike, with numbers, computes shard by shard.
        alike = not replicated and _elementwise(name) and all(
            isinstance(leaf, DTensor) and (leaf._device_mesh, leaf._placements,
                                           leaf._global_shape) == (mesh, placements, shape)
            for leaf in leaves if isinstance(leaf, Tensor))
        if not (replicated or alike):
            placed = ", ".join(str(list(leaf._placements)) for leaf in found)
            raise NotImplementedError(
                f"{name} on DTensors placed {placed}: autojit's DTensor computes only on "
                "DTensors replicated on every mesh dimension, and elementwise on DTensors "
                "placed alike; call .full_tensor() or .redistribute(placements=[Replicate()]) "
                "first (docs/drop-in.md)")
        local_args, local_kwargs = tree_map(
            lambda leaf: leaf._local_tensor if isinstance(leaf, DTensor) else leaf,
            (args, kwargs))
        with torch_function.DisableTorchFunctionSubclass():
            result = func(*local_args, **local_kwargs)
        if name.endswith("_") and result is local_args[0]:
            return args[0]  # an in-place op gives its DTensor back
        if replicated:
            return tree_map(lambda leaf: DTensor._wrap(
                leaf, mesh, (Replicate(),) * mesh.ndim, tuple(leaf.shape))
                if isinstance(leaf, Tensor) and not isinstance(leaf, DTensor) else leaf, result)
        return tree_map(lambda leaf: DTensor._wrap(leaf, mesh, placements, shape)
                        if isinstance(leaf, Tensor) and not isinstance(leaf, DTensor)
                        else leaf, result)

    def __repr__(self) -> str:
        return (f"DTensor(local_tensor={self._local_tensor!r}, device_mesh="
                f"{self._device_mesh!r}, placements={self._placements})")


# The methods that act on the DTensor object itself, not on its elements.
_OWN = frozenset(("requires_grad_", "retain_grad", "register_hook", "backward",
                  "register_post_accumulate_grad_hook", "__setstate__", "__reduce_ex__",
                  "__deepcopy__", "data_ptr", "untyped_storage", "element_size", "is_contiguous",
                  "__format__"))


# Ops that act element by element and are composites (no Elementwise primitive of their
# name), or that keep each element where it is (copies, casts, fills, the *_like factories).
_ELEMENTWISE_COMPOSITES = frozenset((
    "detach", "clone", "contiguous", "to", "float", "double", "half", "bfloat16", "type_as",
    "zero", "fill", "copy", "zeros_like", "ones_like", "empty_like", "full_like", "rand_like",
    "randn_like", "lerp", "addcmul", "addcdiv", "clamp", "clamp_min", "clamp_max", "clip",
    "where", "maximum", "minimum", "square", "rsqrt", "reciprocal", "sigmoid", "relu", "gelu",
    "silu", "tanh", "masked_fill", "nan_to_num", "__add__", "__radd__", "__sub__", "__rsub__",
    "__mul__", "__rmul__", "__truediv__", "__rtruediv__", "__neg__", "__pow__", "__iadd__",
    "__isub__", "__imul__", "__itruediv__"))


def _elementwise(name: str) -> bool:
    """Whether the op of this public name is elementwise (its primitive's lowering is, or it
    is one of the composites above); `add_` is `add`'s."""
    from ...ops.lowering import Elementwise
    from ...ops.registry import REGISTRY

    base = name[:-1] if name.endswith("_") and not name.endswith("__") else name
    if base in _ELEMENTWISE_COMPOSITES:
        return True
    op = REGISTRY.get(base)
    return op is not None and op.lowering.__class__ is Elementwise


def _placed_grad(param: DTensor) -> None:
    grad = param._grad
    if grad is not None and grad.__class__ is Tensor:
        param._grad = DTensor._wrap(grad, param._device_mesh, param._placements,
                                    param._global_shape)


def _numel(shape) -> int:
    total = 1
    for size in shape:
        total *= size
    return total


_GLOBAL_SIZES = {
    "size": lambda shape, dim=None: Size(shape) if dim is None else shape[dim],
    "dim": lambda shape: len(shape),
    "numel": _numel,
    "nelement": _numel,
}


def _default_mesh() -> DeviceMesh:
    from .. import process_group as pg

    if not pg.is_initialized():
        pg.init_process_group()
    return DeviceMesh("cpu", list(range(pg.get_world_size())))


def _normalized(placements, mesh: DeviceMesh, ndim: int) -> tuple:
    if placements is None:
        return (Replicate(),) * mesh.ndim
    placements = tuple(placements)
    if len(placements) != mesh.ndim:
        raise ValueError(f"`placements` must have the same length as `device_mesh.ndim`! "
                         f"Found placements length: {len(placements)}, and device_mesh.ndim: "
                         f"{mesh.ndim}.")
    out = []
    for placement in placements:
        if not isinstance(placement, Placement):
            raise TypeError(f"placements must be Placement objects, got {placement!r}")
        if isinstance(placement, Shard) and placement.dim < 0:
            placement = type(placement)(placement.dim + ndim)
        out.append(placement)
    return tuple(out)


def _summed(size: int, mesh: DeviceMesh, mesh_dim: int) -> int:
    group = mesh.get_group(mesh_dim)
    parts = [None] * mesh.size(mesh_dim)
    from ..objects import all_gather_object

    all_gather_object(parts, size, group=group)
    return sum(parts)


def _replicated(local: Tensor, have: Placement, mesh: DeviceMesh, mesh_dim: int,
                global_shape: tuple, current: list) -> Tensor:
    """`local` made whole along `mesh_dim`."""
    from ..process_group import ReduceOp

    group = mesh.get_group(mesh_dim)
    if have.is_replicate():
        return local
    if have.is_partial():
        whole = local.clone()
        collectives.all_reduce(whole, getattr(ReduceOp, _REDUCE_OPS[have.reduce_op]),
                               group=group)
        return whole
    # A shard: gathered with each chunk padded to the full chunk's size, then trimmed.
    count = mesh.size(mesh_dim)
    size = local.shape[have.dim]
    parts = [None] * count
    from ..objects import all_gather_object

    all_gather_object(parts, size, group=group)
    full = max(parts)
    padded = local
    if size < full:
        pad = list(local.shape)
        pad[have.dim] = full - size
        padded = _padded(local, pad, have.dim)
    gathered = [padded.new_empty(padded.shape) for _ in range(count)]
    collectives.all_gather(gathered, padded.contiguous(), group=group)
    pieces = [part.narrow(have.dim, 0, length) for part, length in zip(gathered, parts)]
    from ...ops.layout.joining import cat

    return cat(pieces, have.dim)


def _padded(local: Tensor, pad_shape: list, dim: int) -> Tensor:
    from ...ops.layout.joining import cat

    return cat([local, local.new_zeros(pad_shape)], dim)


def _placed(whole: Tensor, want: Placement, mesh: DeviceMesh, mesh_dim: int) -> Tensor:
    """This process's part, placed by `want` along `mesh_dim`, of `whole`."""
    if want.is_replicate():
        return whole
    coordinate = mesh.get_local_rank(mesh_dim)
    if want.is_partial():
        # The whole value on the mesh dimension's first process and the reduction's identity
        # on the others (for a sum); avg, max and min keep the value on each.
        if want.reduce_op == "sum" and coordinate != 0:
            return whole.new_zeros(whole.shape)
        return whole
    size, start = Shard.local_shard_size_and_offset(whole.shape[want.dim],
                                                    mesh.size(mesh_dim), coordinate)
    return whole.narrow(want.dim, start, size).contiguous()


def distribute_tensor(tensor: Tensor, device_mesh: DeviceMesh | None = None, placements=None,
                      *, src_data_rank: int | None = 0) -> DTensor:
    """`tensor`, whole on each process, placed on the mesh by `placements` (each process
    keeps its part; with `src_data_rank`, the part comes from that process's tensor)."""
    mesh = device_mesh if device_mesh is not None else _default_mesh()
    placements = _normalized(placements, mesh, tensor.dim())
    if any(p.is_partial() for p in placements):
        raise RuntimeError("Trying to distribute tensor with Partial placement, which is "
                           "not supported. Use Replicate() or Shard() placements instead.")
    local = tensor.detach()
    if src_data_rank is not None and mesh.size() > 1:
        local = local.clone()
        collectives.broadcast(local, src=src_data_rank)
    for mesh_dim, placement in enumerate(placements):
        local = _placed(local, placement, mesh, mesh_dim)
    return DTensor._wrap(local.requires_grad_(tensor.requires_grad), mesh, placements,
                         tuple(tensor.shape), leaf=True)


__all__ += ["Partial", "Replicate", "Shard"]
