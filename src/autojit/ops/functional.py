"""The op functions of the top-level namespace (autojit.exp, autojit.sum, autojit.cat, ...).

One list, so that __init__.py stays a table of names. Each function is defined in ops/.
"""

from .composite import (  # noqa: F401
    clamp,
    exp2,
    gelu,
    log2,
    log10,
    logsumexp,
    mean,
    norm,
    reciprocal,
    relu,
    round,
    rsqrt,
    silu,
    softplus,
    square,
    std,
    tan,
    var,
)

# ---- sorting, order statistics, scans, triangular parts, einsum ----
from .counting import bincount, histc, unique  # noqa: F401
from .diagonal import diag, diag_embed, diagflat, diagonal, trace  # noqa: F401
from .einsum import einsum  # noqa: F401
from .elementwise import (  # noqa: F401
    abs,
    add,
    clone,
    cos,
    div,
    eq,
    erf,
    exp,
    expm1,
    floor,
    floor_divide,
    ge,
    gt,
    isnan,
    le,
    log,
    log1p,
    logical_and,
    logical_not,
    logical_or,
    logical_xor,
    lt,
    maximum,
    minimum,
    mul,
    ne,
    neg,
    pow,
    remainder,
    sigmoid,
    sign,
    sin,
    sqrt,
    sub,
    tanh,
    where,
)
from .index_update import index_add, index_copy, index_fill, index_put, put, take  # noqa: F401
from .indexing import flip, gather, index_select, masked_fill, nonzero, take_along_dim  # noqa: F401
from .indexing import max as max  # noqa: F401, A004, PLC0414
from .indexing import min as min  # noqa: F401, A004, PLC0414
from .joining import (  # noqa: F401
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    cartesian_prod,
    column_stack,
    dstack,
    fliplr,
    flipud,
    hstack,
    meshgrid,
    repeat_interleave,
    roll,
    rot90,
    row_stack,
    vstack,
)
from .layout import (  # noqa: F401
    broadcast_to,
    cat,
    chunk,
    expand,
    flatten,
    moveaxis,
    movedim,
    narrow,
    permute,
    reshape,
    select,
    split,
    squeeze,
    stack,
    swapaxes,
    swapdims,
    t,
    tile,
    transpose,
    unbind,
    unflatten,
    unsqueeze,
)
from .linalg import bmm, dot, matmul, mm, outer  # noqa: F401

# ---- torch.linalg's top-level aliases (torch.det, torch.inverse, ...); autojit.linalg holds
# the rest (ops/linalg_namespace.py).
from .linalg_decompositions import qr_top_level as qr  # noqa: F401
from .linalg_decompositions import svd_top_level as svd  # noqa: F401
from .linalg_determinants import det_top_level as det  # noqa: F401
from .linalg_determinants import logdet  # noqa: F401
from .linalg_determinants import slogdet_top_level as slogdet  # noqa: F401
from .linalg_products import matrix_power, pinverse  # noqa: F401
from .linalg_solvers import cholesky_top_level as cholesky  # noqa: F401
from .linalg_solvers import inverse  # noqa: F401
from .masked import masked_scatter, masked_select, nonzero_static  # noqa: F401
from .random import bernoulli, multinomial, normal, poisson  # noqa: F401
from .reduction import all_ as all  # noqa: F401
from .reduction import amax, amin, argmax, argmin  # noqa: F401
from .reduction import any_ as any  # noqa: F401
from .reduction import prod_ as prod  # noqa: F401
from .reduction import sum_ as sum  # noqa: F401
from .scans import cummax, cummin, cumprod, cumsum, logcumsumexp  # noqa: F401
from .scatter import scatter, scatter_add, scatter_reduce  # noqa: F401
from .searching import bucketize, searchsorted  # noqa: F401
from .sorting import argsort, kthvalue, median, msort, nanmedian, sort, topk  # noqa: F401
from .triangular import tril, tril_indices, triu, triu_indices  # noqa: F401

clip = clamp
negative = neg
multiply = mul
divide = div
subtract = sub
true_divide = div

__all__ = [name for name in dir() if not name.startswith("_")]

# The families the API reference groups these ops by (docs/api/ops.md, written by
# tools/api_reference.py); tests/test_api_reference.py checks that they hold each name of
# __all__ once. Defined after __all__, so it is not exported with the ops.
FAMILIES = {
    "Arithmetic": (
        "add", "sub", "subtract", "mul", "multiply", "div", "divide", "true_divide",
        "floor_divide", "remainder", "pow", "neg", "negative", "reciprocal", "square",
    ),
    "Elementwise math": (
        "abs", "sign", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt",
        "sin", "cos", "tan", "tanh", "sigmoid", "erf", "floor", "round", "clamp", "clip",
    ),
    "Activations": ("relu", "gelu", "silu", "softplus"),
    "Comparisons and logic": (
        "eq", "ne", "lt", "le", "gt", "ge", "maximum", "minimum", "isnan", "logical_and",
        "logical_or", "logical_xor", "logical_not", "where",
    ),
    "Reductions": (
        "sum", "prod", "mean", "var", "std", "norm", "logsumexp", "amax", "amin", "max", "min",
        "argmax", "argmin", "any", "all",
    ),
    "Shape, layout and copies": (
        "reshape", "expand", "broadcast_to", "permute", "transpose", "swapaxes", "swapdims", "t",
        "movedim", "moveaxis", "squeeze", "unsqueeze", "flatten", "unflatten", "narrow",
        "select", "cat", "stack", "split", "chunk", "unbind", "tile", "clone",
    ),
    "Indexing": (
        "gather", "scatter_add", "index_select", "take_along_dim", "masked_fill", "nonzero",
        "flip",
    ),
    "Linear algebra": ("matmul", "mm", "bmm", "dot", "outer"),
    # ---- sorting, order statistics, scans, triangular parts, einsum ----
    "Sorting and order statistics": (
        "sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "unique",
        "bincount", "histc", "searchsorted", "bucketize",
    ),
    "Cumulative ops": ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"),
    "Triangular parts and einsum": ("tril", "triu", "tril_indices", "triu_indices", "einsum"),
    # random sampling from tensors of probabilities, rates, means and stds (ops/random.py)
    "Random sampling": ("bernoulli", "normal", "poisson", "multinomial"),
    # torch.linalg's top-level forms (autojit.linalg has the full set).
    "Linear algebra: decompositions and inverses": (
        "inverse", "det", "logdet", "slogdet", "cholesky", "qr", "svd", "pinverse",
        "matrix_power",
    ),
    # ---- scatter, gather and masks ----
    "Scatter and masks": (
        "scatter", "scatter_reduce", "index_add", "index_copy", "index_fill", "index_put",
        "put", "take", "masked_scatter", "masked_select", "nonzero_static",
    ),
    # ---- joining, rearranging and diagonals ----
    "Joining and rearranging": (
        "hstack", "vstack", "row_stack", "dstack", "column_stack", "atleast_1d", "atleast_2d",
        "atleast_3d", "block_diag", "cartesian_prod", "meshgrid", "roll", "fliplr", "flipud",
        "rot90", "repeat_interleave",
    ),
    "Diagonals": ("diag", "diagonal", "diag_embed", "diagflat", "trace"),
}
