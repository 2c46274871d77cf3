"""Product simplification: the pass that gives matrix products the layout and size their
consumers want. It runs in the pass pipeline (pipeline.py) after algebraic simplification.

Two rewrites of 2-D `matmul` nodes, both common in adjoint graphs:

- `permute(a @ b, (1, 0))` -> `b.T @ a.T` when the product has no other use. Autodiff makes
  these for weight gradients (`(h.T @ g).T`); a kernel adding such a gradient to another one
  read the product's result across its rows: 92 us for a 256x256 add in the gradient-penalty
  step, against ~15 us for two row-major operands. BLAS reads the transposed operands through
  their strides, so the product costs the same.
- A product with an operand broadcast along the inner dimension (the adjoint of `sum()` or
  `mean()` is an expanded scalar, and its weight gradient `h.T @ expand(g)` a product) is a
  sum times the broadcast value: `expand(s, (m, k)) @ b` with s of shape (m, 1) or (1, 1) is
  `s * b.sum(0, keepdim=True)`, expanded to (m, n) where s has one row; the same on the right.
  A product with an operand broadcast along its outer dimension is one row (or column) of
  products, expanded. The reductions then fuse into the kernels that make their operands,
  where BLAS took 24-28 us for a 1x128 by 128x256 product through a stride-0 view.

Three more turn batched products into one 2-D product, which the plan runs through the
generated gemm and its native program (a batched product runs through NumPy's matmul, one
library call per matrix, off the native program):

- `x @ w` with x of three dims or more and w a matrix (every step's input projection of an
  LSTM at once, a Linear layer over a batch of sequences) -> the product of x's rows as one
  matrix, reshaped back; where x is a transposed view whose last dim stays last (a
  batch-first sequence read time-major), the product of the untransposed value, transposed
  after, so that the rows are x's memory;
- `(a @ b).sum(batch dims)` with a and b batched alike (the weight gradient of such a
  product: every step's x^T @ g summed) -> one product over the batch folded into the inner
  dim, `a'` [m, batch * k] times `b'` [batch * k, n];
- a sum of 2-D products `a_1 @ b_1 + a_2 @ b_2 + ...` that nothing else reads term by term
  (an LSTM's hidden weight gradient: one `g_t^T @ h_t` per time step) -> `cat(a_i, 1) @
  cat(b_i, 0)`, one product of inner extent the sum of theirs, where copying the operands
  moves fewer bytes than adding each term into the result. Where the `a_i` are
  transposes of values that some cat in the graph joins (the gradients of every time step's
  gates, joined into the input projection's gradient) the terms take that cat's order, so
  that the cat built here is the same node (CSE merges them) and the product reads it.

Unlike algebraic simplification (simplify.py) these are not bitwise: a sum taken before a
multiplication by a broadcast factor, a product of transposes, or a sum of products taken
as one product, rounds as another order of the same sum would, which is the freedom BLAS
already takes inside every product.
"""

from __future__ import annotations

from ...ops import elementwise as ew
from ...ops import layout, linalg, reduction
from ..graph import Graph, Node, Value
from .rewriter import GraphRewriter, sum_terms
from .rewriter import emit_inferred as _emit
from .rewriter import producer_of as _producer

TRANSPOSE = {"dims": (1, 0)}






def _transpose(rewriter: GraphRewriter, value: Value) -> Value:
    """value.T (2-D), reading through a permute rather than stacking a second one."""
    permute = _producer(value, layout.PERMUTE)
    if permute is not None and tuple(permute.attrs["dims"]) == (1, 0):
        return permute.inputs[0]
    return _emit(rewriter, layout.PERMUTE, [value], dict(TRANSPOSE))


def _as_2d(rewriter: GraphRewriter, value: Value) -> Value:
    if len(value.shape) == 2:
        return value
    shape = (1,) * (2 - len(value.shape)) + tuple(value.shape)
    return _emit(rewriter, layout.RESHAPE, [value], {"shape": shape})


def _broadcast(value) -> tuple | None:
    """For a 2-D operand made by broadcasting (an expand, or a transposed expand): (the
    expand's input, whether it is read transposed, its shape as 2-D); else None."""
    if not isinstance(value, Value):
        return None
    transposed = False
    permute = _producer(value, layout.PERMUTE)
    if permute is not None and tuple(permute.attrs["dims"]) == (1, 0):
        value, transposed = permute.inputs[0], True
    expand = _producer(value, layout.EXPAND)
    if expand is None or not isinstance(expand.inputs[0], Value) or \
            len(expand.inputs[0].shape) > 2:
        return None
    source = expand.inputs[0]
    shape = (1,) * (2 - len(source.shape)) + tuple(source.shape)
    return source, transposed, shape[::-1] if transposed else shape


def _source(rewriter: GraphRewriter, broadcast: tuple) -> Value:
    """The broadcast operand's source as the 2-D value that broadcasts to it."""
    source, transposed, _ = broadcast
    source = _as_2d(rewriter, source)
    return _transpose(rewriter, source) if transposed else source


def _sum(rewriter: GraphRewriter, value: Value, axis: int) -> Value:
    """value.sum(axis, keepdim=True) for a 2-D value; a transposed value is summed in its
    source's order and the small result transposed, so the sum fuses with the kernel that
    makes the source."""
    permute = _producer(value, layout.PERMUTE)
    if permute is not None and tuple(permute.attrs["dims"]) == (1, 0):
        total = _emit(rewriter, reduction.SUM, [permute.inputs[0]],
                      {"dim": (1 - axis,), "keepdim": True})
        return _transpose(rewriter, total)
    return _emit(rewriter, reduction.SUM, [value], {"dim": (axis,), "keepdim": True})


def _broadcast_product(rewriter: GraphRewriter, node: Node, inputs: list) -> Value | None:
    """The product of a broadcast operand without BLAS (see the module docstring), or None.
    Floating dtypes only: an integer sum widens to int64."""
    first, second = inputs
    out = node.output
    if not out.dtype.is_floating_point or first.dtype is not out.dtype or \
            second.dtype is not out.dtype:
        return None
    (rows, inner), columns = first.shape, second.shape[1]
    left, right = _broadcast(first), _broadcast(second)
    # A source broadcast along both dims is one of the first kind, unless the inner dim has
    # no entries (an empty batch): the one row or column kept must then span the inner dim.
    if left is not None and left[2][1] == 1 and inner > 1:
        result = _emit(rewriter, ew.MUL, [_source(rewriter, left), _sum(rewriter, second, 0)], {})
    elif left is not None and left[2] == (1, inner) and rows > 1:
        result = _emit(rewriter, linalg.MATMUL, [_source(rewriter, left), second], {})
    elif right is not None and right[2][0] == 1 and inner > 1:
        result = _emit(rewriter, ew.MUL, [_sum(rewriter, first, 1), _source(rewriter, right)], {})
    elif right is not None and right[2] == (inner, 1) and columns > 1:
        result = _emit(rewriter, linalg.MATMUL, [first, _source(rewriter, right)], {})
    else:
        return None
    if result.shape != out.shape:
        result = _emit(rewriter, layout.EXPAND, [result], {"shape": out.shape})
    return result


def _transposed_product(rewriter: GraphRewriter, node: Node, inputs: list, uses: dict):
    """`permute(a @ b, (1, 0))` with the product used nowhere else -> `b.T @ a.T`."""
    product = _producer(node.inputs[0], linalg.MATMUL)
    if product is None or tuple(node.attrs["dims"]) != (1, 0) or \
            uses.get(id(product.output), 0) != 1 or \
            any(len(x.shape) != 2 for x in product.inputs):
        return None
    first, second = rewriter.operands(product)
    return _emit(rewriter, linalg.MATMUL, [_transpose(rewriter, second),
                                           _transpose(rewriter, first)], {})


def _uses(graph: Graph) -> dict:
    """id(value) -> how many node operands and graph outputs read it."""
    uses: dict = {}
    for node in graph.nodes:
        for operand in node.inputs:
            if isinstance(operand, Value):
                uses[id(operand)] = uses.get(id(operand), 0) + 1
    for entry in graph.outputs:
        uses[id(entry.value)] = uses.get(id(entry.value), 0) + 1
    return uses


def _known(*shapes) -> bool:
    return all(isinstance(extent, int) for shape in shapes for extent in shape)


def _flattened_product(rewriter: GraphRewriter, node: Node, inputs: list):
    """`x @ w`, x of 3 dims or more and w 2-D -> one 2-D product of x's rows, reshaped."""
    x, w = inputs
    out = node.output
    if not (isinstance(x, Value) and isinstance(w, Value)) or len(x.shape) < 3 or \
            len(w.shape) != 2 or not _known(x.shape, w.shape):
        return None
    order = None
    permute = _producer(x, layout.PERMUTE)
    if permute is not None and tuple(permute.attrs["dims"])[-1] == len(x.shape) - 1:
        # Rows permuted among themselves: multiply the source's rows and permute the result.
        order, x = tuple(permute.attrs["dims"]), permute.inputs[0]
    rows = _emit(rewriter, layout.RESHAPE, [x], {"shape": (_count(x.shape[:-1]), x.shape[-1])})
    product = _emit(rewriter, linalg.MATMUL, [rows, w], {})
    result = _emit(rewriter, layout.RESHAPE, [product],
                   {"shape": tuple(x.shape[:-1]) + (w.shape[1],)})
    if order is not None:
        result = _emit(rewriter, layout.PERMUTE, [result], {"dims": order})
    return result if result.shape == out.shape and result.dtype is out.dtype else None


def _count(shape) -> int:
    total = 1
    for extent in shape:
        total *= extent
    return total


def _summed_batch_product(rewriter: GraphRewriter, node: Node, inputs: list, uses: dict):
    """`(a @ b).sum(batch dims)`, a and b batched alike, the product read only here -> one
    2-D product over the batch folded into the inner dim (then reshaped to the sum's)."""
    product = _producer(node.inputs[0], linalg.MATMUL)
    if product is None or uses.get(id(product.output), 0) != 1:
        return None
    a, b = rewriter.operands(product)
    rewriter.operands(node)
    out = node.output
    if not (isinstance(a, Value) and isinstance(b, Value)) or len(a.shape) < 3 or \
            len(a.shape) != len(b.shape) or a.shape[:-2] != b.shape[:-2] or \
            not _known(a.shape, b.shape) or a.dtype is not b.dtype or \
            not a.dtype.is_floating_point:
        return None
    batch = len(a.shape) - 2
    if tuple(sorted(node.attrs["dim"])) != tuple(range(batch)) or \
            node.attrs.get("dtype") is not None:
        return None
    (m, k), n = a.shape[-2:], b.shape[-1]
    count = _count(a.shape[:-2])
    # a' = a's matrices side by side: its transpose is a^T's rows stacked, a reshape of a
    # view that is free where a is itself a transposed view (a weight gradient's x^T).
    dims = tuple(range(batch)) + (batch + 1, batch)
    stacked = _emit(rewriter, layout.RESHAPE, [_emit(rewriter, layout.PERMUTE, [a],
                                                     {"dims": dims})], {"shape": (count * k, m)})
    left = _emit(rewriter, layout.PERMUTE, [stacked], {"dims": (1, 0)})
    right = _emit(rewriter, layout.RESHAPE, [b], {"shape": (count * k, n)})
    result = _emit(rewriter, linalg.MATMUL, [left, right], {})
    if result.shape != out.shape:
        result = _emit(rewriter, layout.RESHAPE, [result], {"shape": out.shape})
    return result if result.dtype is out.dtype else None




def _cat_orders(graph: Graph) -> dict:
    """id(value) -> (cat node, position) for each value a cat joins through a reshape that
    adds a leading dim of 1 (a time step's gradient joined along time)."""
    orders: dict = {}
    for node in graph.nodes:
        if node.op is not layout.CAT or node.attrs.get("dim") != 0:
            continue
        for position, piece in enumerate(node.inputs):
            reshape = _producer(piece, layout.RESHAPE)
            if reshape is not None and isinstance(reshape.inputs[0], Value) and \
                    tuple(piece.shape) == (1,) + tuple(reshape.inputs[0].shape):
                orders[id(reshape.inputs[0])] = (node, position)
    return orders


def _joined_products(rewriter: GraphRewriter, root: Node, uses: dict, orders: dict):
    """A sum of 2-D products, each read only by the sum -> one product of cats."""
    out = root.output
    if len(out.shape) != 2 or not out.dtype.is_floating_point or not _known(out.shape):
        return None
    terms = sum_terms(root, uses)
    products = []
    for term in terms:
        product = _producer(term, linalg.MATMUL)
        if product is not None and uses.get(id(term), 0) == 1 and all(
                isinstance(x, Value) and len(x.shape) == 2 and x.dtype is out.dtype
                for x in product.inputs) and term.shape == out.shape:
            products.append(product)
    if len(products) < 2:
        return None
    # One product of cats copies the operands once, (m + n) * K elements for an inner extent
    # K in all; one gemm per term adding into the last's result (matmul_steps.py's epilogue)
    # reads and writes the m x n result once per term. Join only where the copies are the
    # smaller traffic: many terms of small inner extent (64 time steps' g_t^T @ h_t, each
    # over a batch of 32, into a 1024 x 256 gradient), not two products of square matrices.
    (m, n), inner = out.shape, sum(product.inputs[0].shape[1] for product in products)
    if inner * (m + n) >= (len(products) - 1) * m * n:
        return None
    others = [term for term in terms if _producer(term, linalg.MATMUL) not in products]
    # The order of the terms: a cat's that joins the untransposed left operands, if one does.
    sources = [_producer(product.inputs[0], layout.PERMUTE) for product in products]
    if all(source is not None and tuple(source.attrs["dims"]) == (1, 0) for source in sources):
        places = [orders.get(id(source.inputs[0])) for source in sources]
        if all(place is not None for place in places) and \
                len({id(place[0]) for place in places}) == 1:
            ranked = sorted(zip(places, products), key=lambda pair: pair[0][1])
            products = [product for _, product in ranked]
    rewriter.operands(root)
    lefts = [rewriter.operand(product.inputs[0]) for product in products]
    rights = [rewriter.operand(product.inputs[1]) for product in products]
    transposed = [_producer(left, layout.PERMUTE) for left in lefts]
    if all(source is not None and tuple(source.attrs["dims"]) == (1, 0)
           for source in transposed):
        # cat(g_i^T, 1) is cat(g_i, 0)^T: join the gradients as rows (a cat along time,
        # shaped as the one that joins them already, where there is one).
        pieces = [_emit(rewriter, layout.RESHAPE, [source.inputs[0]],
                        {"shape": (1,) + tuple(source.inputs[0].shape)})
                  for source in transposed]
        if len({piece.shape for piece in pieces}) == 1:
            joined = _emit(rewriter, layout.CAT, pieces, {
                "dim": 0, "sizes": (1,) * len(pieces)})
            rows = _emit(rewriter, layout.RESHAPE, [joined], {
                "shape": (len(pieces) * pieces[0].shape[1], pieces[0].shape[2])})
        else:
            rows = _emit(rewriter, layout.CAT, [source.inputs[0] for source in transposed], {
                "dim": 0, "sizes": tuple(source.inputs[0].shape[0] for source in transposed)})
        left = _emit(rewriter, layout.PERMUTE, [rows], {"dims": (1, 0)})
    else:
        left = _emit(rewriter, layout.CAT, lefts, {
            "dim": 1, "sizes": tuple(value.shape[1] for value in lefts)})
    right = _emit(rewriter, layout.CAT, rights, {
        "dim": 0, "sizes": tuple(value.shape[0] for value in rights)})
    result = _emit(rewriter, linalg.MATMUL, [left, right], {})
    for term in others:
        result = _emit(rewriter, ew.ADD, [result, rewriter.operand(term)], {})
    return result if result.shape == out.shape and result.dtype is out.dtype else None


def _sum_root(node: Node, uses: dict, readers: dict) -> bool:
    out = node.output
    if uses.get(id(out), 0) != 1:
        return True
    reader = readers.get(id(out))
    return reader is None or reader.op is not ew.ADD or reader.output.shape != out.shape or \
        reader.output.dtype is not out.dtype


def product_simplification(graph: Graph) -> Graph:
    """Transposed products computed as products of transposes, products of broadcast
    operands as sums, and batched products and sums of products as single 2-D products (see
    the module docstring). Values keep their shapes and dtypes; nodes made dead are left to
    dead-code elimination."""
    rewriter = GraphRewriter(graph)
    uses = _uses(graph)
    readers = {id(operand): node for node in graph.nodes for operand in node.inputs
               if isinstance(operand, Value)}
    orders = _cat_orders(graph)
    for node in graph.nodes:
        inputs = rewriter.operands(node)
        result = None
        if node.op is linalg.MATMUL and all(isinstance(x, Value) and len(x.shape) == 2
                                            for x in inputs):
            result = _broadcast_product(rewriter, node, inputs)
        elif node.op is linalg.MATMUL:
            result = _flattened_product(rewriter, node, inputs)
        elif node.op is layout.PERMUTE:
            result = _transposed_product(rewriter, node, inputs, uses)
        elif node.op is reduction.SUM:
            result = _summed_batch_product(rewriter, node, inputs, uses)
        elif node.op is ew.ADD and _sum_root(node, uses, readers):
            result = _joined_products(rewriter, node, uses, orders)
        if result is not None:
            rewriter.alias(node, result)
        else:
            rewriter.copy(node, inputs)
    return rewriter.finish()
