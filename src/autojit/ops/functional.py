"""The op functions of the top-level namespace (autojit.exp, autojit.sum, autojit.cat, ...).

One list, so that __init__.py stays a table of names. Each function is defined in ops/.
"""

from . import deprecated_forms as _deprecated_forms
from .aliases import NEW_VIEWS as _layout_new_views
from .aliases import NUMPY_KEYWORD_FUNCTIONS as _NUMPY_KEYWORD_FUNCTIONS
from .aliases import (  # noqa: F401
    adjoint,
    argwhere,
    broadcast_tensors,
    is_nonzero,
    is_same_size,
    isreal,
    narrow_copy,
    ravel,
    unravel_index,
)
from .aliases import new_view as _new_view
from .aliases import numpy_keywords as _numpy_keywords
from .complex_numbers import (  # noqa: F401
    conj,
    conj_physical,
    imag,
    polar,
    real,
    resolve_conj,
    sgn,
    view_as_complex,
    view_as_real,
)
from .complex_numbers import make_complex as complex  # noqa: F401, A004
from .composite import (  # noqa: F401
    clamp,
    exp2,
    gelu,
    log2,
    log10,
    logsumexp,
    mean,
    reciprocal,
    rsqrt,
    silu,
    softplus,
    square,
    std,
    tan,
    var,
)
from .counting import bincount, histc, unique  # noqa: F401
from .elementwise import TENSOR_PARAMETERS as _TENSOR_PARAMETERS
from .elementwise import (  # noqa: F401
    abs,
    cos,
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
    tanh,
)
from .elementwise import div as _true_divide
from .elementwise.bitwise import (  # noqa: F401
    bitwise_and,
    bitwise_left_shift,
    bitwise_not,
    bitwise_or,
    bitwise_right_shift,
    bitwise_xor,
    hash_tensor,
)
from .elementwise.extra import (  # noqa: F401
    angle,
    div,
    float_power,
    fmax,
    fmin,
    frexp,
    isin,
    ldexp,
    positive,
    signbit,
)
from .elementwise.math_composites import (  # noqa: F401
    add,
    addcdiv,
    addcmul,
    asinh,
    atanh,
    cosh,
    deg2rad,
    frac,
    heaviside,
    lerp,
    rad2deg,
    rsub,
    sinc,
    sinh,
    sub,
)
from .elementwise.math_primitives import (  # noqa: F401
    acos,
    acosh,
    asin,
    atan,
    atan2,
    ceil,
    copysign,
    erfc,
    fmod,
    hypot,
    logaddexp,
    logaddexp2,
    logit,
    nextafter,
    relu,
    trunc,
    xlogy,
)
from .elementwise.math_primitives import tensor_parameters as _tensor_parameters
from .fft.spectral import istft, stft  # noqa: F401
from .histogramdd import histogramdd  # noqa: F401
from .indexing import flip, gather, index_select, masked_fill, take_along_dim  # noqa: F401
from .indexing.masked import masked_scatter, masked_select  # noqa: F401
from .indexing.scatter import scatter, scatter_add, scatter_reduce  # noqa: F401
from .indexing.scatter_views import (  # noqa: F401
    as_strided,
    as_strided_scatter,
    diagonal_scatter,
    index_reduce,
    select_scatter,
    slice_scatter,
)
from .indexing.static_nonzero import nonzero_static  # noqa: F401
from .indexing.update import index_add, index_copy, index_fill, index_put, put, take  # noqa: F401
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
from .layout.diagonal import diag, diag_embed, diagflat, diagonal, trace  # noqa: F401
from .layout.joining import (  # noqa: F401
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
from .layout.splitting import dsplit, hsplit, tensor_split, vsplit  # noqa: F401
from .layout.triangular import tril, tril_indices, triu, triu_indices  # noqa: F401
from .linalg import bmm, dot, mm, outer  # noqa: F401

# ---- sorting, order statistics, scans, triangular parts, einsum ----
from .linalg.contractions import (  # noqa: F401
    addr,
    chain_matmul,
    combinations,
    dist,
    frobenius_norm,
    inner,
    norm,
    nuclear_norm,
    renorm,
    tensordot,
    vander,
    vdot,
)

# ---- torch.linalg's top-level aliases (torch.det, torch.inverse, ...); autojit.linalg holds
# the rest (ops/linalg/namespace.py).
from .linalg.decompositions import qr_top_level as qr  # noqa: F401
from .linalg.decompositions import svd_top_level as svd  # noqa: F401
from .linalg.determinants import det_top_level as det  # noqa: F401
from .linalg.determinants import logdet  # noqa: F401
from .linalg.determinants import slogdet_top_level as slogdet  # noqa: F401
from .linalg.einsum import einsum  # noqa: F401
from .linalg.extras import geqrf, ormqr  # noqa: F401
from .linalg.linalg_products import matrix_power, pinverse  # noqa: F401
from .linalg.lobpcg import lobpcg  # noqa: F401
from .linalg.lowrank import pca_lowrank, svd_lowrank  # noqa: F401
from .linalg.lu import (  # noqa: F401
    cholesky_inverse,
    cholesky_solve,
    lu_unpack,
    matrix_exp,
    triangular_solve,
)
from .linalg.lu import lu_solve_top_level as lu_solve  # noqa: F401
from .linalg.lu import lu_top_level as lu  # noqa: F401
from .linalg.products import (  # noqa: F401
    addbmm,
    addmm,
    addmv,
    baddbmm,
    cdist,
    cosine_similarity,
    cross,
    kron,
    mv,
)
from .linalg.removed import eig, lstsq, matrix_rank, solve, symeig  # noqa: F401
from .linalg.solvers import cholesky_top_level as cholesky  # noqa: F401
from .linalg.solvers import inverse  # noqa: F401
from .masks import (  # noqa: F401
    allclose,
    clamp_max,
    clamp_min,
    count_nonzero,
    equal,
    isclose,
    isfinite,
    isinf,
    isneginf,
    isposinf,
    nan_to_num,
    nanmean,
    nansum,
)
from .memory_formats import clone  # noqa: F401
from .nn.softmax import log_softmax, softmax  # noqa: F401
from .out_argument import with_out as _with_out
from .out_forms import aminmax, matmul, nonzero, prod, round, where  # noqa: F401
from .out_forms import max as max  # noqa: F401, A004, PLC0414
from .out_forms import min as min  # noqa: F401, A004, PLC0414
from .out_forms import sum as sum  # noqa: F401, A004, PLC0414
from .quantiles import nanquantile, quantile  # noqa: F401
from .random import bernoulli, multinomial, normal, poisson  # noqa: F401
from .random.gamma import binomial  # noqa: F401
from .reduction import all_ as all  # noqa: F401
from .reduction import amax, amin, argmax, argmin  # noqa: F401
from .reduction import any_ as any  # noqa: F401
from .scans import cummax, cummin, cumprod, cumsum, logcumsumexp  # noqa: F401
from .searching import bucketize, searchsorted  # noqa: F401
from .sorting import argsort, kthvalue, median, msort, nanmedian, sort, topk  # noqa: F401
from .special.functions import digamma, erfinv, i0, lgamma, mvlgamma, polygamma  # noqa: F401
from .special.number_functions import gcd, igamma, igammac, lcm  # noqa: F401
from .statistics import (  # noqa: F401
    corrcoef,
    cov,
    cumulative_trapezoid,
    diff,
    gradient,
    histogram,
    mode,
    std_mean,
    trapezoid,
    trapz,
    unique_consecutive,
    var_mean,
)

# torch's out= on the top-level forms of the math ops (out_argument.py; the methods take none):
# op name -> None where out may have any dtype torch's casting rule allows, else the kind of
# torch's further check of out's dtype (out_argument.OUT_CHECKS).
_WITH_OUT = {
    "lerp": None, "addcmul": None, "addcdiv": None, "addmm": "expected", "addmv": "expected",
    "addbmm": "mat2", "baddbmm": "expected", "mv": "expected", "kron": None, "cross": "expected",
    "atan2": None, "hypot": None, "logaddexp": None, "logaddexp2": None, "xlogy": None,
    "fmod": None, "frac": "found", "trunc": "found", "ceil": "found", "heaviside": "heaviside",
    "copysign": None, "nextafter": None, "asin": None, "acos": None, "atan": None, "sinh": None,
    "cosh": None, "asinh": None, "acosh": None, "atanh": None, "sinc": None, "erfc": None,
    "erfinv": None, "lgamma": None, "digamma": None, "polygamma": None, "i0": None,
    "mvlgamma": None,
    "logit": None, "deg2rad": None, "rad2deg": None, "isposinf": "boolean",
    "isneginf": "boolean", "nan_to_num": "nan_to_num", "nansum": "reduction",
    "nanmean": "reduction",
    "clamp_min": "found", "clamp_max": "found", "softmax": "expected", "log_softmax": "expected",
    # the older elementwise ops and mean (tests/test_out_older_ops_torch.py)
    "add": None, "sub": None, "mul": None, "div": None, "maximum": None, "minimum": None,
    "pow": None, "remainder": None, "floor_divide": None, "exp": None, "exp2": None,
    "expm1": None, "log": None, "log2": None, "log10": None, "log1p": None, "sqrt": None,
    "rsqrt": None, "sin": None, "cos": None, "tan": None, "tanh": None, "sigmoid": None,
    "erf": None, "square": None, "reciprocal": None, "abs": "found", "neg": "found",
    "floor": "found", "mean": None,
    # the reductions that write their result (the others: out_forms.py), clamp
    "amax": "input", "amin": "input", "argmax": "expected", "argmin": "expected",
    "logsumexp": "floating", "std": None, "var": None, "clamp": "found",
    "any": "bool_result", "all": "bool_result",
    # comparisons, logical ops and products
    "eq": None, "ne": None, "lt": None, "le": None, "gt": None, "ge": None,
    "logical_and": None, "logical_or": None, "logical_xor": None, "logical_not": None,
    "sign": "found", "mm": "expected", "bmm": "expected",
    "dot": "dot", "outer": None, "cat": "cat", "stack": "cat",
    # torch's other names and the ops of aliases.py, elementwise/extra.py,
    # special/number_functions.py
    "narrow_copy": None, "fmax": None, "fmin": None, "ldexp": None, "signbit": "boolean",
    "gcd": None, "lcm": None, "igamma": None, "igammac": None, "diff": None, "addr": None,
    "inner": None, "vdot": "dot", "renorm": None,
    # bitwise ops, angle, isin and the scatter views (tests/test_ecosystem_keywords.py)
    "bitwise_and": None, "bitwise_or": None, "bitwise_xor": None, "bitwise_not": None,
    "bitwise_left_shift": None, "bitwise_right_shift": None, "angle": None, "isin": "boolean",
    "hash_tensor": "hash",
    "slice_scatter": None, "index_reduce": None, "frobenius_norm": None, "nuclear_norm": None,
    # complex numbers (complex_numbers.py)
    "complex": "scalar_type", "polar": "scalar_type", "conj_physical": "found", "sgn": "found",
}
# A Python number where torch's signature takes a Tensor only is refused (elementwise/__init__.py).
for _name, _parameters in _TENSOR_PARAMETERS.items():
    globals()[_name] = _tensor_parameters(globals()[_name], _name, _parameters)
# The ops whose out may not share memory with an input (torch's assert_no_overlap).
_NO_OVERLAP = {"cat"}
for _name, _check in _WITH_OUT.items():
    globals()[_name] = _with_out(globals()[_name], _check, name=_name,
                                 no_overlap=_name in _NO_OVERLAP)
# The view ops give a new tensor even where they change nothing (aliases.py).
for _name in _layout_new_views:
    if _name in globals():
        globals()[_name] = _new_view(globals()[_name])
# torch's deprecated forms with a number first (`add(x, 2, y)`, `addmm(beta, x, m1, m2)`).
for _name in _deprecated_forms.NAMES:
    globals()[_name] = _deprecated_forms.function_form(globals()[_name], _name)

clip = clamp
negative = neg
multiply = mul
divide = div
subtract = sub
# true_divide takes no rounding_mode (div and divide do).
true_divide = _with_out(_true_divide, None, name="true_divide")
absolute = abs
greater, greater_equal, less, less_equal, not_equal = gt, ge, lt, le, ne
concat = concatenate = cat
ger = outer
# torch's aliases of the math ops above
arccos, arcsin, arctan, arctan2 = acos, asin, atan, atan2
arccosh, arcsinh, arctanh = acosh, asinh, atanh
fix = trunc

# axis= for dim= and keepdims= for keepdim=, where torch's functions take them (aliases.py).
for _name in sorted(_NUMPY_KEYWORD_FUNCTIONS):
    if _name in globals():
        globals()[_name] = _numpy_keywords(globals()[_name], _name)
concat = concatenate = cat

__all__ = [name for name in dir() if not name.startswith("_")]

# The families the API reference groups these ops by (docs/api/ops.md, written by
# tools/api_reference.py); tests/test_api_reference.py checks that they hold each name of
# __all__ once. Defined after __all__, so it is not exported with the ops.
FAMILIES = {
    "Arithmetic": (
        "add", "sub", "subtract", "rsub", "mul", "multiply", "div", "divide", "true_divide",
        "floor_divide", "remainder", "pow", "neg", "negative", "reciprocal", "square",
        "float_power", "positive",
    ),
    "Elementwise math": (
        "abs", "sign", "exp", "exp2", "expm1", "log", "log1p", "log2", "log10", "sqrt", "rsqrt",
        "sin", "cos", "tan", "tanh", "sigmoid", "erf", "floor", "round", "clamp", "clip",
        "absolute", "angle",
    ),
    "Activations": ("relu", "gelu", "silu", "softplus"),
    "Comparisons and logic": (
        "eq", "ne", "lt", "le", "gt", "ge", "maximum", "minimum", "isnan", "logical_and",
        "logical_or", "logical_xor", "logical_not", "where", "greater", "greater_equal", "less",
        "less_equal", "not_equal", "fmax", "fmin", "isin",
    ),
    "Bitwise ops": (
        "bitwise_and", "bitwise_or", "bitwise_xor", "bitwise_not", "bitwise_left_shift",
        "bitwise_right_shift", "hash_tensor",
    ),
    "Reductions": (
        "sum", "prod", "mean", "var", "std", "norm", "logsumexp", "amax", "amin", "max", "min",
        "argmax", "argmin", "any", "all",
    ),
    "Shape, layout and copies": (
        "reshape", "expand", "broadcast_to", "permute", "transpose", "swapaxes", "swapdims", "t",
        "movedim", "moveaxis", "squeeze", "unsqueeze", "flatten", "unflatten", "narrow",
        "select", "cat", "stack", "split", "chunk", "tensor_split", "hsplit", "vsplit", "dsplit",
        "unbind", "tile", "clone", "ravel", "adjoint", "narrow_copy", "concat", "concatenate",
        "broadcast_tensors", "as_strided",
    ),
    "Indexing": (
        "gather", "scatter_add", "index_select", "take_along_dim", "masked_fill", "nonzero",
        "flip", "argwhere", "unravel_index",
    ),
    "Linear algebra": (
        "matmul", "mm", "bmm", "dot", "outer", "ger", "inner", "vdot", "tensordot", "chain_matmul",
    ),
    # ---- sorting, order statistics, scans, triangular parts, einsum ----
    "Sorting and order statistics": (
        "sort", "argsort", "msort", "topk", "kthvalue", "median", "nanmedian", "quantile",
        "nanquantile", "unique", "unique_consecutive",
        "bincount", "histc", "searchsorted", "bucketize",
    ),
    "Cumulative ops": ("cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"),
    "Triangular parts and einsum": ("tril", "triu", "tril_indices", "triu_indices", "einsum"),
    # random sampling from tensors of probabilities, rates, means and stds (ops/random/__init__.py)
    "Random sampling": ("bernoulli", "normal", "poisson", "multinomial", "binomial"),
    # torch.linalg's top-level forms (autojit.linalg has the full set).
    "Linear algebra: decompositions and inverses": (
        "inverse", "det", "logdet", "slogdet", "cholesky", "qr", "svd", "pinverse",
        "matrix_power", "lu", "lu_solve", "lu_unpack", "cholesky_solve", "cholesky_inverse",
        "triangular_solve", "matrix_exp", "frobenius_norm", "nuclear_norm", "geqrf", "ormqr",
        "svd_lowrank", "pca_lowrank", "lobpcg",
    ),
    # torch's names removed in 1.9, which raise naming their replacements (linalg/removed.py)
    "Linear algebra: removed functions": ("eig", "lstsq", "matrix_rank", "solve", "symeig"),
    # ---- scatter, gather and masks ----
    "Scatter and masks": (
        "scatter", "scatter_reduce", "index_add", "index_copy", "index_fill", "index_put",
        "put", "take", "masked_scatter", "masked_select", "nonzero_static", "index_reduce",
        "select_scatter", "slice_scatter", "diagonal_scatter", "as_strided_scatter",
    ),
    # ---- joining, rearranging and diagonals ----
    "Joining and rearranging": (
        "hstack", "vstack", "row_stack", "dstack", "column_stack", "atleast_1d", "atleast_2d",
        "atleast_3d", "block_diag", "cartesian_prod", "meshgrid", "roll", "fliplr", "flipud",
        "rot90", "repeat_interleave", "combinations", "vander",
    ),
    "Diagonals": ("diag", "diagonal", "diag_embed", "diagflat", "trace"),
    # ---- arithmetic, trigonometric and special functions, tests and masks, the softmax family
    "Arithmetic, rounding and signs": (
        "lerp", "addcmul", "addcdiv", "fmod", "frac", "trunc", "fix", "ceil", "sgn",
        "heaviside", "copysign", "nextafter", "hypot", "logaddexp", "logaddexp2", "xlogy",
        "frexp", "ldexp", "gcd", "lcm", "signbit",
    ),
    "Trigonometric and hyperbolic": (
        "asin", "acos", "atan", "atan2", "arcsin", "arccos", "arctan", "arctan2", "sinh",
        "cosh", "asinh", "acosh", "atanh", "arcsinh", "arccosh", "arctanh", "sinc", "deg2rad",
        "rad2deg",
    ),
    "Special functions": (
        "erfc", "erfinv", "lgamma", "digamma", "polygamma", "mvlgamma", "i0", "logit", "igamma",
        "igammac",
    ),
    "Tests and masks": (
        "isfinite", "isinf", "isposinf", "isneginf", "nan_to_num", "nansum", "nanmean",
        "clamp_min", "clamp_max", "isclose", "allclose", "equal", "count_nonzero", "aminmax",
        "is_nonzero", "is_same_size", "isreal",
    ),
    "Products and distances": (
        "addmm", "addmv", "addbmm", "baddbmm", "mv", "kron", "cross", "cdist",
        "cosine_similarity", "addr", "dist", "renorm",
    ),
    "Softmax": ("softmax", "log_softmax"),
    "Short-time Fourier transforms": ("stft", "istft"),
    "Complex numbers": (
        "complex", "polar", "real", "imag", "view_as_real", "view_as_complex", "conj",
        "conj_physical", "resolve_conj",
    ),
    # ---- statistics, differences and integrals (statistics.py)
    "Statistics, differences and integrals": (
        "std_mean", "var_mean", "mode", "cov", "corrcoef", "histogram", "histogramdd", "diff",
        "gradient",
        "trapezoid", "trapz", "cumulative_trapezoid",
    ),
}
