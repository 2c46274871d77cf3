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
from .indexing import flip, gather, index_select, masked_fill, nonzero, scatter_add, take_along_dim  # noqa: F401
from .indexing import max as max  # noqa: F401, A004, PLC0414
from .indexing import min as min  # noqa: F401, A004, PLC0414
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
from .reduction import all_ as all  # noqa: F401
from .reduction import amax, amin, argmax, argmin  # noqa: F401
from .reduction import any_ as any  # noqa: F401
from .reduction import prod_ as prod  # noqa: F401
from .reduction import sum_ as sum  # noqa: F401

clip = clamp
negative = neg
multiply = mul
divide = div
subtract = sub
true_divide = div

__all__ = [name for name in dir() if not name.startswith("_")]
