"""Slice simplification: the pass that takes zero padding out of adjoint graphs. It runs in
the pass pipeline (pipeline.py) after algebraic simplification.

The adjoint of a slice is `embed_slice`: zeros of the sliced tensor's shape with the gradient
written where the slice was. A composite that cuts a tensor into parts (an LSTM's gates,
`gates.chunk(4, -1)`, and its time steps, `projected[t]`) gets back, in its backward, one
zero-padded tensor per part, summed: four [batch, 4 * hidden] buffers per time step and one
[steps, batch, 4 * hidden] buffer per step of the sequence, each mostly zeros. Three rewrites:

- `permute(embed_slice(g))`, the embed used nowhere else -> `embed_slice(permute(g))`, the
  slices permuted with it (a batch-first sequence's gradient is embedded, then transposed to
  time-major);
- `slice(embed_slice(g, S), S2)` -> `g` where S2 is S, a slice of `g` where S2 lies inside S,
  zeros where they do not meet (read as a fill, which fuses into the kernel that reads it);
- a sum of `embed_slice`s of parts that do not overlap, along one dim, each part spanning the
  others -> one `cat` of the parts along that dim (zeros filling the gaps), plus the terms of
  the sum that are not embeds. torch's backward of `chunk` is the same `cat`.

The sum and the cat agree to the last bit except in the sign of a zero gradient (-0.0 + 0.0 is
+0.0 in the sum, -0.0 in the cat), and, where the sum also adds other terms, in the order they
are added, as products.py's rewrites are not bitwise either.
"""

from __future__ import annotations

from ...ops import elementwise as ew
from ...ops import layout
from ..graph import Graph, Node, Value
from .rewriter import GraphRewriter, sum_terms
from .rewriter import emit_inferred as _emit
from .rewriter import producer_of as _producer


def _plain(slices) -> bool:
    """Whether every (start, stop, step) is a known int range of step 1."""
    return all(isinstance(start, int) and isinstance(stop, int) and step == 1
               for start, stop, step in slices)


def _zeros(rewriter: GraphRewriter, like: Value, shape: tuple) -> Value:
    """Zeros of `shape` in `like`'s dtype: a fill over a broadcast of one element of `like`
    (a view, which the fill never reads), so that they fuse into the kernel reading them."""
    one = _emit(rewriter, layout.SLICE, [like], {"slices": tuple((0, 1, 1) for _ in like.shape)})
    anchor = _emit(rewriter, layout.EXPAND, [one], {"shape": tuple(shape)}) \
        if tuple(shape) != one.shape else one
    return _emit(rewriter, ew.FILL, [anchor], {"value": 0.0 if like.dtype.is_floating_point
                                               else 0})


def _permuted_embed(rewriter: GraphRewriter, node: Node, inputs: list, uses: dict):
    """permute(embed_slice(g)) -> embed_slice(permute(g)), the embed used only here."""
    embed = _producer(node.inputs[0], layout.EMBED_SLICE)
    if embed is None or uses.get(id(embed.output), 0) != 1:
        return None
    dims = tuple(node.attrs["dims"])
    (g,) = rewriter.operands(embed)
    rewriter.operands(node)  # what is emitted stands for this node
    full, slices = embed.attrs["full_shape"], embed.attrs["slices"]
    permuted = _emit(rewriter, layout.PERMUTE, [g], {"dims": dims})
    return _emit(rewriter, layout.EMBED_SLICE, [permuted], {
        "full_shape": tuple(full[axis] for axis in dims),
        "slices": tuple(slices[axis] for axis in dims)})


def _sliced_embed(rewriter: GraphRewriter, node: Node, inputs: list):
    """slice(embed_slice(g, S), S2): g, a slice of g, or zeros (see the module docstring)."""
    embed = _producer(inputs[0], layout.EMBED_SLICE)
    if embed is None:
        return None
    inner, outer = embed.attrs["slices"], node.attrs["slices"]
    if not (_plain(inner) and _plain(outer)) or not all(
            isinstance(extent, int) and extent for extent in node.output.shape):
        return None
    g = embed.inputs[0]
    if any(stop <= start or outer_stop <= start or stop <= outer_start
           for (start, stop, _), (outer_start, outer_stop, _) in zip(inner, outer)):
        return _zeros(rewriter, g, node.output.shape)
    if all(start <= outer_start and outer_stop <= stop
           for (start, stop, _), (outer_start, outer_stop, _) in zip(inner, outer)):
        within = tuple((outer_start - start, outer_stop - start, 1)
                       for (start, _, _), (outer_start, outer_stop, _) in zip(inner, outer))
        if all(part == (0, extent, 1) for part, extent in zip(within, g.shape)):
            return g
        return _emit(rewriter, layout.SLICE, [g], {"slices": within})
    return None




def _part(value, out: Value, uses: dict):
    """(dim, start, stop, the embedded value) for an embed_slice term of a sum of `out`'s type
    that writes a part along one dim, used only in the sum; else None."""
    embed = _producer(value, layout.EMBED_SLICE)
    if embed is None or uses.get(id(value), 0) != 1 or value.shape != out.shape or \
            not all(isinstance(extent, int) for extent in out.shape) or \
            value.dtype is not out.dtype or not _plain(embed.attrs["slices"]):
        return None
    partial = [(axis, start, stop) for axis, ((start, stop, _), extent) in
               enumerate(zip(embed.attrs["slices"], out.shape)) if (start, stop) != (0, extent)]
    if len(partial) > 1:
        return None
    axis, start, stop = partial[0] if partial else (0, 0, out.shape[0] if out.shape else 0)
    if not out.shape or stop <= start:
        return None
    return axis, start, stop, embed.inputs[0]


def _joined_embeds(rewriter: GraphRewriter, root: Node, uses: dict):
    """The sum ending at `root` with its embeds of disjoint parts as one cat, or None."""
    out = root.output
    terms = sum_terms(root, uses)
    parts = [_part(term, out, uses) for term in terms]
    axes = {part[0] for part in parts if part is not None}
    if len(axes) != 1:
        return None
    (axis,) = axes
    pieces = sorted((part for part in parts if part is not None), key=lambda part: part[1])
    if len(pieces) < 2 or any(earlier[2] > later[1] for earlier, later in
                              zip(pieces, pieces[1:])):
        return None
    rewriter.operands(root)  # what is emitted stands for the root
    joined, position = [], 0
    for _, start, stop, value in pieces + [(axis, out.shape[axis], out.shape[axis], None)]:
        if start > position:
            gap = tuple(start - position if dim == axis else extent
                        for dim, extent in enumerate(out.shape))
            joined.append(_zeros(rewriter, rewriter.operand(pieces[0][3]), gap))
        if value is not None:
            joined.append(rewriter.operand(value))
        position = stop
    sizes = tuple(piece.shape[axis] for piece in joined)
    result = _emit(rewriter, layout.CAT, joined, {"dim": axis, "sizes": sizes}) \
        if len(joined) > 1 else joined[0]
    for term, part in zip(terms, parts):
        if part is None:
            result = _emit(rewriter, ew.ADD, [result, rewriter.operand(term)], {})
    return result if result.shape == out.shape and result.dtype is out.dtype else None


def _uses(graph: Graph) -> dict:
    uses: dict = {}
    for node in graph.nodes:
        for operand in node.inputs:
            if isinstance(operand, Value):
                uses[id(operand)] = uses.get(id(operand), 0) + 1
    for entry in graph.outputs:
        uses[id(entry.value)] = uses.get(id(entry.value), 0) + 1
    return uses


def _sum_root(node: Node, uses: dict, readers: dict) -> bool:
    """Whether an `add` node ends a sum: its value is not a term of a larger sum of its type
    (read once, by an add of the same type)."""
    out = node.output
    if uses.get(id(out), 0) != 1:
        return True
    reader = readers.get(id(out))
    return reader is None or reader.op is not ew.ADD or reader.output.shape != out.shape or \
        reader.output.dtype is not out.dtype


def slice_simplification(graph: Graph) -> Graph:
    """Slices of embeds read the embedded value, and sums of embeds of disjoint parts are
    cats (see the module docstring). Values keep their shapes and dtypes; nodes made dead are
    left to dead-code elimination."""
    rewriter = GraphRewriter(graph)
    uses = _uses(graph)
    readers = {id(operand): node for node in graph.nodes for operand in node.inputs
               if isinstance(operand, Value)}
    for node in graph.nodes:
        inputs = rewriter.operands(node)
        result = None
        if node.op is layout.PERMUTE:
            result = _permuted_embed(rewriter, node, inputs, uses)
        elif node.op is layout.SLICE:
            result = _sliced_embed(rewriter, node, inputs)
        elif node.op is ew.ADD and _sum_root(node, uses, readers):
            result = _joined_embeds(rewriter, node, uses)
        if result is not None:
            rewriter.alias(node, result)
        else:
            rewriter.copy(node, inputs)
    return rewriter.finish()
