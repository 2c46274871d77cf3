"""Sparse COO tensors in the autograd graph: the nodes through which their gradients, sparse
tensors themselves, flow (ops/sparse/coo.py computes with their values; this module links those
computations to the sparse tensors, as torch's SparseCooTensorWithDimsAndTensorsBackward0 and
ValuesBackward0 do).

A sparse tensor that requires grad has an edge of its own (its grad_fn, or the AccumulateGrad
of a leaf), so hooks, .grad and autograd.grad see sparse gradients as in torch; its values, as
the sparse ops read them, are an alias whose ValuesBackward0 node turns their gradient into a
sparse one of the tensor's indices. A sparse tensor built from values that require grad gets a
SparseCooTensorWithDimsAndTensorsBackward0 node, which reads a (sparse or dense) gradient at
its stored positions. Ops whose gradients torch gives another layout (mm's dense gradient of a
sparse operand, to_dense, clone, gather with sparse_grad) attach a node of their own (`attach`).
"""

from __future__ import annotations

from ..ops.sparse import coo as sparse_coo
from ..ops.sparse.coo import SparseTensor, coalesce, to_dense
from ..ops.sparse.gradients import sparse_lookup
from ..tensor.state import state
from ..tensor.tensor import Tensor
from .nodes import Node, gradient_edge

_classes: dict = {}


class SparseNode(Node):
    """A node whose backward is a Python function of the output gradient."""

    __slots__ = ("backward", "saved")

    def apply(self, grads):
        grad = grads[0]
        if grad is None:
            return [None] * len(self.next_functions)
        return list(self.backward(grad))

    def __getattr__(self, name: str):
        # torch's accessors of saved values (_saved_self, _saved_other) where the op saved any
        saved = self.saved if name.startswith("_saved_") else None
        if saved and name[len("_saved_"):] in saved:
            return saved[name[len("_saved_"):]]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")


def _node(name: str, sources: tuple, backward, saved=None) -> SparseNode:
    cls = _classes.get(name)
    if cls is None:
        cls = _classes[name] = type(name, (SparseNode,), {"__slots__": ()})
    node = cls()
    node.backward = backward
    node.saved = saved
    edges, needs = [], []
    for source in sources:
        wants = isinstance(source, Tensor) and source._requires_grad
        needs.append(wants)
        edges.append(gradient_edge(source) if wants else (None, 0))
    node.next_functions = tuple(edges)
    node.needs_input_grad = tuple(needs)
    node.input_meta = [None] * len(sources)
    return node


def _values_alias(sparse: SparseTensor, values: Tensor) -> Tensor:
    """The values as the sparse ops read them: the same data, whose gradient flows into the
    sparse tensor's edge as a sparse gradient of its indices (ValuesBackward0)."""
    alias = Tensor._make(values._payload, values._dtype, values._version_counter)
    indices, shape, coalesced = sparse._sparse_indices, tuple(sparse.shape), sparse._coalesced

    def backward(grad):
        if coalesced:
            return (SparseTensor._build(indices, grad, shape, True),)
        return (_deduplicated(indices, grad, shape),)

    node = _node("ValuesBackward0", (sparse,), backward)
    alias.grad_fn = node
    alias._requires_grad = True
    return alias


def _deduplicated(indices: Tensor, grad: Tensor, shape) -> SparseTensor:
    """The gradient at an uncoalesced tensor's stored positions, each position once: every
    copy of a position reads the same gradient there, so their mean is it (torch's
    sparse_mask of the dense gradient)."""
    summed = coalesce(SparseTensor._build(indices, grad, shape))
    ones = grad.new_ones(int(indices.shape[1]))
    counts = coalesce(SparseTensor._build(indices, ones, shape[:int(indices.shape[0])]))
    counts = counts._sparse_values.reshape(-1, *([1] * (grad.ndim - 1)))
    return SparseTensor._build(summed._sparse_indices, summed._sparse_values / counts, shape,
                               True)


def link(sparse: SparseTensor) -> None:
    """A sparse tensor built from values that require grad: its node reads the gradient at its
    stored positions into the values' gradient."""
    values = sparse._sparse_values
    indices, shape = sparse._sparse_indices, tuple(sparse.shape)

    def backward(grad):
        return (sparse_lookup(grad, indices, shape),)

    sparse.grad_fn = _node("SparseCooTensorWithDimsAndTensorsBackward0", (values,), backward)
    sparse._requires_grad = True
    sparse._sparse_values = _values_alias(sparse, values)


def link_leaf(sparse: SparseTensor) -> None:
    """A sparse leaf that requires grad: its values' gradient reaches its AccumulateGrad."""
    sparse._sparse_values = _values_alias(sparse, sparse._sparse_values)


def attach(out: Tensor, sources: tuple, backward, name: str, saved=None) -> Tensor:
    """Make `out` (computed without a graph) the output of a node over `sources`, whose
    gradients backward(grad) gives (one per source, None where it needs none)."""
    if not state.grad_enabled or not any(isinstance(s, Tensor) and s._requires_grad
                                         for s in sources):
        return out
    node = _node(name, sources, backward, saved)
    out.grad_fn = node
    out._requires_grad = True
    if out.__class__ is SparseTensor:
        out._sparse_values = _values_alias(out, out._sparse_values)
    return out


def _to_dense_backward(sparse: SparseTensor, masked: bool):
    indices, shape = sparse._sparse_indices, tuple(sparse.shape)

    def backward(grad):
        if not masked:
            return (to_dense(grad),)
        # torch's grad.sparse_mask(self): the gradient at the stored positions, once each
        mask = coalesce(SparseTensor._build(indices, indices.new_zeros(indices.shape[1]),
                                            shape[:int(indices.shape[0])]))
        values = sparse_lookup(grad, mask._sparse_indices, shape)
        return (SparseTensor._build(mask._sparse_indices, values, shape, True),)

    return backward


sparse_coo.AUTOGRAD = (link, link_leaf, attach, _to_dense_backward)
