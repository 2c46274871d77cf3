"""Recomputation across kernels: a value one kernel would store only for later kernels to read
back is computed again in those kernels instead, where that moves fewer bytes.

A reduction splits a run of elementwise work into kernels (fusion.py: an op that reads a sum
waits for the kernel that makes it), and whatever the first kernel computed that the second
reads then goes through memory: one store of the whole array and one load per reading kernel.
Second-order graphs are full of these: the double backward of a norm computes `2 v / |x|`
before the sum `x . v` that a later term needs, and the later kernel read it back. When such a
value is made from the first kernel's inputs by a few exactly rounded ops (arithmetic,
compares, selects: registry.Elementwise.exact, a few cycles a vector and the same bits wherever
they run), the later kernel reads those inputs instead, and the store goes.

`recompute_across_groups` runs in fusion.py's `_build_plan` on the closed groups, in plan order,
before any becomes a Kernel; it gives each group the nodes it recomputes (`group.recomputed`)
and returns, for each value no longer stored, the consumers that compute it themselves. See
docs/notes/cpu-codegen.md ("Recomputation across kernels") for the rule and its measurements.
"""

from __future__ import annotations

import math

from ...ir.graph import Value
from ...ops.registry import Elementwise
from .plan import value_operands

# The most nodes recomputed for one value: beyond, the kernel grows more than the bytes it
# saves are worth the compile time.
MAX_RECOMPUTED_NODES = 8
CACHE_LINE = 64


def _bytes(value) -> int | None:
    """The bytes of a value's array, or None where its size is known at run time only."""
    if not all(isinstance(extent, int) for extent in value.shape):
        return None
    return math.prod(value.shape) * value.dtype.itemsize


def _cheap(node) -> bool:
    lowering = node.op.lowering
    return isinstance(lowering, Elementwise) and lowering.exact


def _cone(value: Value, made: dict, group) -> tuple | None:
    """(nodes, leaves): the nodes of `group` (its own and those it recomputes, `made`: id of
    value -> node) that compute `value` from values made before it, in graph order, and those
    values; None where one of them is not cheap, or a reduction's, or there are too many."""
    nodes, leaves, seen = {}, {}, set()
    stack = [value]
    while stack:
        current = stack.pop()
        if id(current) in seen:
            continue
        seen.add(id(current))
        node = made.get(id(current))
        if node is None:
            leaves[id(current)] = current
            continue
        if id(current) in group.reduced or not _cheap(node):
            return None
        nodes[id(node)] = node
        if len(nodes) > MAX_RECOMPUTED_NODES:
            return None
        stack.extend(value_operands(node))
    return list(nodes.values()), list(leaves.values())


def _reads(group) -> set:
    """Ids of the values a group reads from memory (made before it)."""
    made = {id(node.output) for node in (*group.nodes, *group.recomputed)}
    return {id(operand) for node in (*group.nodes, *group.recomputed)
            for operand in value_operands(node) if id(operand) not in made}


def recompute_across_groups(groups: list, consumers: dict, returned: set,
                            positions: dict) -> dict:
    """Give groups (fusion._Group, closed, in plan order) the nodes of earlier groups whose
    values they would otherwise read back from memory, where each reading group reads no more
    bytes of other arrays than the value's; return id(value) -> ids of the consumer nodes that
    now compute it themselves (the value is no longer stored: every consumer outside its own
    kernel recomputes it). `positions`: id(node) -> its index in the graph."""
    group_of = {id(node): group for group in groups for node in group.nodes}
    covered: dict = {}
    for group in groups:
        made = {id(node.output): node for node in (*group.nodes, *group.recomputed)}
        inside = {id(node) for node in group.nodes}
        for node in group.nodes:
            value = node.output
            if not _cheap(node) or id(value) in returned or id(value) in group.view_ids:
                continue
            outside = [consumer for consumer in consumers.get(id(value), ())
                       if id(consumer) not in inside]
            targets = {id(group_of.get(id(consumer))): group_of.get(id(consumer))
                       for consumer in outside}
            if not outside or None in targets.values() or any(
                    target.shape != group.shape for target in targets.values()):
                continue  # a single-node step, a product or another shape reads it
            size = _bytes(value)
            cone = _cone(value, made, group) if size is not None else None
            if cone is None:
                continue
            nodes, leaves = cone
            if not all(_extra_bytes(leaves, target) <= size for target in targets.values()):
                continue
            for target in targets.values():
                known = {id(other) for other in target.recomputed}
                target.recomputed = sorted(
                    target.recomputed + [other for other in nodes if id(other) not in known],
                    key=lambda other: positions[id(other)])
            covered[id(value)] = {id(consumer) for consumer in outside}
    return covered


def _extra_bytes(leaves: list, target) -> int:
    """The bytes `target` would read to recompute from `leaves`, beyond what it reads now;
    a leaf of one cache line or less (a scalar, a bias) counts for nothing."""
    reads = _reads(target)
    total = 0
    for leaf in leaves:
        if id(leaf) not in reads:
            size = _bytes(leaf)
            if size is None:
                return math.inf
            total += size if size > CACHE_LINE else 0
    return total
