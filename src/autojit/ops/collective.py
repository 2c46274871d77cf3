"""Collectives as a primitive: `collective`, the node a graph holds where the processes of a
process group exchange data (autojit.distributed): an all_reduce, a broadcast, an all_gather or
a reduce_scatter, named by its `kind` attribute.

Eagerly, autojit.distributed's functions call the transport on a tensor's memory themselves;
this primitive is what they record while a function is traced (autojit.compile), so that a
compiled training step holds its gradient all-reduce as a node, and what
`autojit.distributed.nn.functional` binds for differentiable collectives. Its lowering is an
Extern that communicates (every process runs it, once per run; the passes keep it) with a
Background: a compiled plan starts it where it stands and waits for it just before the first
step that reads its result, so the steps in between (the rest of the backward) overlap the
exchange. See docs/notes/distributed.md.

The transport is autojit.distributed's, a layer above this one: it installs itself in
`TRANSPORT` when imported (docs/notes/layers.md). Attributes: `kind`; `op`, the reduction
("sum", "avg", "product", "max", "min", "band", "bor", "bxor"); `root`, the broadcast's source
(a rank in the group); `dim`, the dim all_gather concatenates along and reduce_scatter splits;
`group`, the process group's number; `world`, its size (the shape rule needs it).
"""

from __future__ import annotations

from ..tensor.tensor import Tensor
from .dtype_rules import rule_first
from .registry import Background, Extern, bind, define_op

KINDS = ("all_reduce", "broadcast", "all_gather", "reduce_scatter")
REDUCE_OPS = ("sum", "avg", "product", "max", "min", "band", "bor", "bxor")

# autojit.distributed installs its transport here when imported: an object with
#   run(array, attrs) -> ndarray             the collective, blocking (the op's impl);
#   start(array, attrs) -> handle            the same, begun in the background;
#   progress(handle), finish(handle) -> ndarray
#   rank(group) -> int                       this process's rank in the group.
TRANSPORT = None

_NOT_INITIALIZED = ("Default process group has not been initialized, please make sure to call "
                    "init_process_group.")


def transport():
    if TRANSPORT is None:
        raise ValueError(_NOT_INITIALIZED)
    return TRANSPORT


def _shape(shape, *, kind, op, root, dim, group, world):
    if kind in ("all_reduce", "broadcast"):
        return tuple(shape)
    if not shape:
        raise ValueError(f"{kind} needs a tensor of at least one dim, got a 0-d one")
    if not -len(shape) <= dim < len(shape):
        raise ValueError(f"Dimension out of range (expected to be in range of "
                         f"[{-len(shape)}, {len(shape) - 1}], but got {dim})")
    dim %= len(shape)
    if kind == "all_gather":
        return (*shape[:dim], shape[dim] * world, *shape[dim + 1:])
    if shape[dim] % world:
        raise ValueError(f"reduce_scatter: the input's size {shape[dim]} along dim {dim} is not "
                         f"divisible by the world size {world}")
    return (*shape[:dim], shape[dim] // world, *shape[dim + 1:])


def _impl(x, **attrs):
    return transport().run(x, attrs)


def _start(x, **attrs):
    return transport().start(x, attrs)


def _progress(handle) -> None:
    transport().progress(handle)


def _finish(handle):
    return transport().finish(handle)


def collective(x: Tensor, kind: str, op: str = "sum", *, group: int, world: int, root: int = 0,
               dim: int = 0) -> Tensor:
    """The collective `kind` of x over process group number `group` (of `world` processes),
    differentiable: its gradient is the adjoint collective (an all_reduce's is an all_reduce
    of the gradients, an all_gather's a reduce_scatter)."""
    if kind not in KINDS:
        raise ValueError(f"collective: kind {kind!r} is not one of {KINDS}")
    if op not in REDUCE_OPS:
        raise ValueError(f"collective: op {op!r} is not one of {REDUCE_OPS}")
    return bind(COLLECTIVE, (x,), {"kind": kind, "op": op, "root": root, "dim": dim,
                                   "group": group, "world": world})


def _again(x: Tensor, attrs: dict, **changes) -> Tensor:
    return bind(COLLECTIVE, (x,), {**attrs, **changes})


def _summed(g: Tensor, attrs: dict) -> Tensor:
    return _again(g, attrs, kind="all_reduce", op="sum")


def _others_product(x: Tensor, out: Tensor, attrs: dict) -> Tensor:
    """For an all_reduce product, d out / d x: the product of the other processes' values.
    out / x where x is not zero; where it is, the product of the others' nonzero values when
    no other process holds a zero there, else 0 (the counting torch's prod gradient does)."""
    from .elementwise import where

    is_zero = x == 0
    zeros = _summed(is_zero.to(x.dtype), attrs)
    nonzero = _again(where(is_zero, 1, x), attrs, kind="all_reduce", op="product")
    return where(is_zero, where(zeros == 1, nonzero, 0), out / where(is_zero, 1, x))


def _extreme_share(x: Tensor, out: Tensor, attrs: dict) -> Tensor:
    """For an all_reduce max or min: 1 / (how many processes hold the extreme) where this one
    holds it, else 0, so that tied processes share the gradient evenly, as torch's amax."""
    held = (x == out).to(x.dtype)
    return held / _summed(held, attrs)


def _vjp(ctx, g):
    attrs = ctx.attrs
    kind, op = attrs["kind"], attrs["op"]
    if kind == "all_gather":
        return (_again(g, attrs, kind="reduce_scatter", op="sum"),)
    if kind == "reduce_scatter":
        if op not in ("sum", "avg"):
            raise RuntimeError(f"reduce_scatter: the gradient of ReduceOp.{op.upper()} is not "
                               "implemented (only SUM and AVG are differentiable)")
        gathered = _again(g, attrs, kind="all_gather")
        return (gathered / attrs["world"] if op == "avg" else gathered,)
    if kind == "broadcast":
        total = _summed(g, attrs)
        if transport().rank(attrs["group"]) == attrs["root"]:
            return (total,)
        return (total * 0,)
    if op in ("sum", "avg"):
        return (_again(g, attrs, op=op),)
    x, out = ctx.inputs[0], ctx.out
    if op == "product":
        return (_summed(g, attrs) * _others_product(x, out, attrs),)
    if op in ("max", "min"):
        return (_summed(g, attrs) * _extreme_share(x, out, attrs),)
    raise RuntimeError(f"all_reduce: ReduceOp.{op.upper()} is not differentiable")


def _jvp(inputs, tangents, out, attrs):
    (tangent,) = tangents
    if tangent is None:
        return None
    kind, op = attrs["kind"], attrs["op"]
    if kind != "all_reduce" or op in ("sum", "avg"):
        if kind == "reduce_scatter" and op not in ("sum", "avg"):
            raise RuntimeError(f"reduce_scatter: the derivative of ReduceOp.{op.upper()} is "
                               "not implemented (only SUM and AVG are differentiable)")
        return _again(tangent, attrs)
    x = inputs[0]
    if op == "product":
        return _summed(tangent * _others_product(x, out, attrs), attrs)
    if op in ("max", "min"):
        return _summed(tangent * _extreme_share(x, out, attrs), attrs)
    raise RuntimeError(f"all_reduce: ReduceOp.{op.upper()} is not differentiable")


def _batch(op, inputs, flags, attrs, size):
    """vmap: the batch dim rides along as one more dim of the exchanged tensor, in front; a
    gather or scatter along `dim` then runs along dim + 1 of the physical tensor."""
    x = inputs[0]
    if attrs["kind"] in ("all_gather", "reduce_scatter"):
        dim = attrs["dim"] % (x.ndim - 1)
        return bind(op, (x,), {**attrs, "dim": dim + 1})
    return bind(op, (x,), attrs)


COLLECTIVE = define_op(
    name="collective", arity=1, shape=_shape, dtype=rule_first, impl=_impl, vjp=_vjp,
    jvp=_jvp, saves=(0, "out"), batch=_batch, grad_name="CollectiveBackward0",
    lowering=Extern("collective", ("data",), communicates=True,
                    background=Background(_start, _progress, _finish)))

__all__ = ["COLLECTIVE", "KINDS", "REDUCE_OPS", "collective", "transport"]
