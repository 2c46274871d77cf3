"""Tensor's op methods and operators, attached from the functional ops in one table.

tensor/tensor.py holds the Tensor's state; the ops live in ops/. This module binds the two: each
entry below makes `x.name(...)` call the op function with x first, and the operators (+, @, <, ...)
map to the same functions, with the reflected forms (2 - x) swapping the operands.
"""

from __future__ import annotations

import numbers

import numpy as np

from ..tensor import dtypes
from ..tensor.state import PLAIN, state
from ..tensor.tensor import Tensor
from . import (
    aliases,
    complex_numbers,
    composite,
    counting,
    deprecated_forms,
    factories,
    indexing,
    inplace,
    layout,
    linalg,
    masks,
    memory_formats,
    quantiles,
    random,
    reduction,
    registry,
    scans,
    sorting,
)
from . import elementwise as ew
from .elementwise import _DIRECT, NO_ATTRS, bitwise, math_composites
from .elementwise import math_primitives as ewm
from .fft import spectral
from .indexing import masked, scatter, static_nonzero, subscript
from .indexing import update as index_update
from .layout import diagonal, joining, splitting, triangular
from .linalg import (
    decompositions as linalg_decompositions,
)
from .linalg import (
    determinants as linalg_determinants,
)
from .linalg import (
    linalg_products,
    products,
)
from .linalg import (
    solvers as linalg_solvers,
)
from .nn import softmax
from .registry import bind
from .special import functions as special_functions


def _where(self, condition, y):
    """x where `condition` holds, else y, broadcasting (torch.Tensor.where)."""
    return ew.where(condition, self, y)


# name -> function(self, *args, **kwargs)
METHODS = {
    # elementwise
    "neg": ew.neg, "negative": ew.neg, "abs": ew.abs, "sign": ew.sign, "exp": ew.exp,
    "log": ew.log, "sqrt": ew.sqrt, "sin": ew.sin, "cos": ew.cos, "tanh": ew.tanh,
    "sigmoid": ew.sigmoid, "erf": ew.erf, "log1p": ew.log1p, "expm1": ew.expm1,
    "floor": ew.floor, "add": math_composites.add, "sub": math_composites.sub, "mul": ew.mul,
    "div": ew.div, "pow": ew.pow, "maximum": ew.maximum, "minimum": ew.minimum,
    "floor_divide": ew.floor_divide, "remainder": ew.remainder, "eq": ew.eq, "ne": ew.ne,
    "lt": ew.lt, "le": ew.le, "gt": ew.gt, "ge": ew.ge, "logical_and": ew.logical_and,
    "logical_or": ew.logical_or, "logical_xor": ew.logical_xor,
    "logical_not": ew.logical_not, "isnan": ew.isnan, "where": _where,
    "bitwise_and": bitwise.bitwise_and, "bitwise_or": bitwise.bitwise_or,
    "bitwise_xor": bitwise.bitwise_xor, "bitwise_not": bitwise.bitwise_not,
    "hash_tensor": bitwise.hash_tensor, "bitwise_left_shift": bitwise.bitwise_left_shift,
    "bitwise_right_shift": bitwise.bitwise_right_shift,
    "clone": memory_formats.clone, "square": composite.square, "reciprocal": composite.reciprocal,
    "rsqrt": composite.rsqrt, "exp2": composite.exp2, "log2": composite.log2,
    "log10": composite.log10, "tan": composite.tan, "relu": ewm.relu,
    "round": composite.round,
    "clamp": composite.clamp, "clip": composite.clamp,
    # reductions
    "sum": reduction.sum_, "prod": reduction.prod_, "amax": reduction.amax,
    "amin": reduction.amin, "argmax": reduction.argmax, "argmin": reduction.argmin,
    "any": reduction.any_, "all": reduction.all_, "mean": composite.mean, "var": composite.var,
    "std": composite.std, "norm": composite.norm, "logsumexp": composite.logsumexp,
    # layout
    "reshape": layout.reshape, "view": layout.view, "expand": layout.expand,
    "broadcast_to": layout.broadcast_to, "permute": layout.permute, "narrow": layout.narrow,
    "view_as": layout.view_as, "reshape_as": layout.reshape_as, "expand_as": layout.expand_as,
    "flatten": layout.flatten, "unflatten": layout.unflatten, "squeeze": layout.squeeze,
    "unsqueeze": layout.unsqueeze, "transpose": layout.transpose, "swapaxes": layout.swapaxes,
    "swapdims": layout.swapdims, "t": layout.t, "movedim": layout.movedim,
    "moveaxis": layout.moveaxis, "select": layout.select, "unbind": layout.unbind,
    "split": layout.split, "chunk": layout.chunk, "repeat": layout.repeat,
    "tile": layout.tile_method,
    "tensor_split": splitting.tensor_split, "hsplit": splitting.hsplit,
    "vsplit": splitting.vsplit, "dsplit": splitting.dsplit,
    # indexing
    "gather": indexing.gather, "scatter_add": scatter.scatter_add,
    "index_select": indexing.index_select, "take_along_dim": indexing.take_along_dim,
    "nonzero": indexing.nonzero, "masked_fill": indexing.masked_fill, "flip": joining.flip_method,
    "max": indexing.max, "min": indexing.min,
    # linear algebra
    "matmul": linalg.matmul, "mm": linalg.mm, "bmm": linalg.bmm, "dot": linalg.dot,
    "outer": linalg.outer,
    # ---- sorting, order statistics, scans, triangular parts ----
    "sort": sorting.sort, "argsort": sorting.argsort, "msort": sorting.msort,
    "topk": sorting.topk, "kthvalue": sorting.kthvalue, "median": sorting.median,
    "nanmedian": sorting.nanmedian, "quantile": quantiles.quantile,
    "nanquantile": quantiles.nanquantile, "unique": counting.unique,
    "bincount": counting.bincount, "histc": counting.histc, "cumsum": scans.cumsum,
    "cumprod": scans.cumprod,
    "cummax": scans.cummax, "cummin": scans.cummin, "logcumsumexp": scans.logcumsumexp,
    "tril": triangular.tril, "triu": triangular.triu,
    # random sampling (ops/random/__init__.py)
    "bernoulli": random.bernoulli_method, "multinomial": random.multinomial_method,
    # torch.linalg's methods (ops/linalg/*.py)
    "inverse": linalg_solvers.inverse, "cholesky": linalg_solvers.cholesky_top_level,
    "det": linalg_determinants.det_top_level, "logdet": linalg_determinants.logdet,
    "slogdet": linalg_determinants.slogdet_top_level, "qr": linalg_decompositions.qr_top_level,
    "svd": linalg_decompositions.svd_top_level, "pinverse": linalg_products.pinverse,
    "matrix_power": linalg_products.matrix_power,
    # ---- scatter, gather and masks (indexing/scatter.py, indexing/update.py, indexing/masked.py)
    "scatter": scatter.scatter, "scatter_reduce": scatter.scatter_reduce,
    "index_add": index_update.index_add, "index_copy": index_update.index_copy,
    "index_fill": index_update.index_fill, "index_put": index_update.tensor_index_put,
    "put": index_update.put, "take": index_update.take,
    "masked_scatter": masked.masked_scatter, "masked_select": masked.masked_select,
    "nonzero_static": static_nonzero.nonzero_static,
    # ---- joining, rearranging and diagonals (layout/joining.py, layout/diagonal.py) ----
    "roll": joining.roll, "fliplr": joining.fliplr, "flipud": joining.flipud,
    "rot90": joining.rot90, "repeat_interleave": joining.repeat_interleave,
    "diag": diagonal.diag, "diagonal": diagonal.diagonal, "diag_embed": diagonal.diag_embed,
    "diagflat": diagonal.diagflat, "trace": diagonal.trace,
    # ---- arithmetic, trigonometric and special functions, tests and masks, softmax ---------
    "lerp": math_composites.lerp, "addcmul": math_composites.addcmul,
    "addcdiv": math_composites.addcdiv, "addmm": products.addmm, "addmv": products.addmv,
    "addbmm": products.addbmm, "baddbmm": products.baddbmm, "mv": products.mv,
    "kron": products.kron, "cross": products.cross, "atan2": ewm.atan2, "arctan2": ewm.atan2,
    "hypot": ewm.hypot, "logaddexp": ewm.logaddexp, "logaddexp2": ewm.logaddexp2,
    "xlogy": ewm.xlogy, "fmod": ewm.fmod, "frac": math_composites.frac, "trunc": ewm.trunc,
    "fix": ewm.trunc, "ceil": ewm.ceil, "sgn": complex_numbers.sgn,
    "heaviside": math_composites.heaviside,
    "copysign": ewm.copysign, "nextafter": ewm.nextafter, "asin": ewm.asin, "acos": ewm.acos,
    "atan": ewm.atan, "arcsin": ewm.asin, "arccos": ewm.acos, "arctan": ewm.atan,
    "sinh": math_composites.sinh, "cosh": math_composites.cosh, "asinh": math_composites.asinh,
    "acosh": ewm.acosh, "atanh": math_composites.atanh,
    "arcsinh": math_composites.asinh, "arccosh": ewm.acosh,
    "arctanh": math_composites.atanh, "sinc": math_composites.sinc, "erfc": ewm.erfc,
    "erfinv": special_functions.erfinv, "lgamma": special_functions.lgamma,
    "digamma": special_functions.digamma, "polygamma": special_functions.polygamma_method,
    "i0": special_functions.i0, "mvlgamma": special_functions.mvlgamma_method,
    "logit": ewm.logit, "deg2rad": math_composites.deg2rad,
    "rad2deg": math_composites.rad2deg, "isfinite": masks.isfinite, "isinf": masks.isinf,
    "isneginf": masks.isneginf, "isposinf": masks.isposinf, "nan_to_num": masks.nan_to_num,
    "nansum": masks.nansum, "nanmean": masks.nanmean, "clamp_min": masks.clamp_min,
    "clamp_max": masks.clamp_max, "allclose": masks.allclose, "isclose": masks.isclose,
    "equal": masks.equal, "count_nonzero": masks.count_nonzero, "aminmax": masks.aminmax,
    "softmax": softmax.softmax, "log_softmax": softmax.log_softmax,
    # ---- complex numbers (complex_numbers.py)
    "conj": complex_numbers.conj, "conj_physical": complex_numbers.conj_physical,
    "resolve_conj": complex_numbers.resolve_conj, "is_conj": complex_numbers.is_conj,
    "_neg_view": complex_numbers.neg_view, "resolve_neg": complex_numbers.resolve_neg,
    "is_neg": complex_numbers.is_neg,
    "stft": spectral.stft, "istft": spectral.istft,
}


def _method(function):
    def method(self, *args, **kwargs):
        # Without keywords, a plain call: passing an empty dict on costs more.
        return function(self, *args, **kwargs) if kwargs else function(self, *args)

    method.__name__ = method.__qualname__ = function.__name__
    method.__doc__ = function.__doc__
    method.__wrapped__ = function  # inspect.signature and help() show the op's parameters
    method.plain_method = True  # a wrapper may call `function` itself (keyword_forms.py)
    return method


def _named(method, name: str):
    method.__name__ = method.__qualname__ = name
    return method


for _name, _function in METHODS.items():
    if _name in aliases.NEW_VIEWS:  # x.permute(0, 1) is a new tensor, as in torch
        _function = aliases.new_view(_function)
    if _name in deprecated_forms.NAMES:  # also torch's deprecated forms, `x.add(2, y)`
        setattr(Tensor, _name, _named(deprecated_forms.method_form(_function, _name), _name))
        continue
    setattr(Tensor, _name, _method(_function))
# x.maximum(2): a Python number where torch's signature takes a Tensor (elementwise/__init__.py).
for _name, _parameters in ew.TENSOR_PARAMETERS.items():
    if "other" in _parameters:
        setattr(Tensor, _name, _method(ewm.tensor_parameters(METHODS[_name], _name, ("other",),
                                                             method=True)))
# The data path's view methods, called once per sample, are their functions themselves (x
# first): the wrapper's frame and argument repacking would be a third of their cost.
# squeeze keeps torch's new tensor where it changes nothing (aliases.new_view).
for _name in ("view", "reshape", "flatten", "squeeze", "unsqueeze"):
    _function = METHODS[_name]
    setattr(Tensor, _name, aliases.new_view(_function) if _name in aliases.NEW_VIEWS else _function)


def _squeeze_dims(squeeze):
    """Tensor.squeeze also taking several dims as separate arguments (`x.squeeze(0, 1)`), as
    torch's method does (its function form takes one int or a tuple)."""
    def squeeze_method(x, *dim, **kwargs):
        return squeeze(x, dim, **kwargs) if len(dim) > 1 else squeeze(x, *dim, **kwargs)

    squeeze_method.__name__ = squeeze_method.__qualname__ = "squeeze"
    squeeze_method.__doc__, squeeze_method.__wrapped__ = squeeze.__doc__, squeeze
    return squeeze_method


Tensor.squeeze = _squeeze_dims(Tensor.squeeze)


# ---- operators --------------------------------------------------------------------------------

def _reflected(function):
    def reflected(self, other):
        return function(other, self)

    reflected.__doc__ = f"`{function.__name__}(other, self)`: the operator with x on the right."
    reflected.__name__ = reflected.__qualname__ = function.__name__
    reflected.reflects = (reflected, function)
    return reflected


def _is_bool(value) -> bool:
    return value.dtype is dtypes.bool_ if isinstance(value, Tensor) else isinstance(value, bool)


def _logical(logical_function, bitwise_function, name, reflected=False):
    """`&`, `|` or `^`: the logical op of two bools (what autojit has always traced for masks),
    else the bitwise op, which refuses floats with torch's error."""
    def operator(self, other):
        if _is_bool(self) and _is_bool(other):
            return logical_function(self, other)
        return bitwise_function(other, self) if reflected else bitwise_function(self, other)

    operator.__doc__ = (f"`{name}`: {logical_function.__name__} of bool tensors, "
                        f"{bitwise_function.__name__} of integer ones.")
    operator.__name__ = operator.__qualname__ = bitwise_function.__name__
    return operator


def _invert(self):
    """`~x`: logical_not of a bool tensor, bitwise_not of an integer one."""
    if self.dtype is dtypes.bool_:
        return ew.logical_not(self)
    if self.dtype.category >= dtypes.FLOATING:
        raise TypeError("~ (operator.invert) is only implemented on integer and Boolean-type "
                        "tensors")
    return bitwise.bitwise_not(self)


def _positive(self):
    """`+x`: x itself."""
    return self


OPERATORS = {
    "__add__": ew.add, "__radd__": _reflected(ew.add), "__sub__": ew.sub,
    "__rsub__": _reflected(ew.sub), "__mul__": ew.mul, "__rmul__": _reflected(ew.mul),
    "__truediv__": ew.div, "__rtruediv__": _reflected(ew.div), "__rdiv__": _reflected(ew.div),
    "__floordiv__": ew.floor_divide, "__rfloordiv__": _reflected(ew.floor_divide),
    "__mod__": ew.remainder, "__rmod__": _reflected(ew.remainder), "__pow__": ew.pow,
    "__rpow__": _reflected(ew.pow), "__neg__": ew.neg, "__abs__": ew.abs,
    "__eq__": ew.eq, "__ne__": ew.ne, "__lt__": ew.lt, "__le__": ew.le, "__gt__": ew.gt,
    "__ge__": ew.ge, "__and__": _logical(ew.logical_and, bitwise.bitwise_and, "&"),
    "__or__": _logical(ew.logical_or, bitwise.bitwise_or, "|"),
    "__xor__": _logical(ew.logical_xor, bitwise.bitwise_xor, "^"),
    "__rand__": _logical(ew.logical_and, bitwise.bitwise_and, "&", reflected=True),
    "__ror__": _logical(ew.logical_or, bitwise.bitwise_or, "|", reflected=True),
    "__rxor__": _logical(ew.logical_xor, bitwise.bitwise_xor, "^", reflected=True),
    "__lshift__": bitwise.bitwise_left_shift, "__rshift__": bitwise.bitwise_right_shift,
    "__rlshift__": _reflected(bitwise.bitwise_left_shift),
    "__rrshift__": _reflected(bitwise.bitwise_right_shift),
    "__invert__": _invert, "__pos__": _positive,
    "__matmul__": linalg.matmul, "__rmatmul__": _reflected(linalg.matmul),
    "__getitem__": subscript.getitem, "__setitem__": subscript.setitem,
}
# Operators whose other operand may be of another type: where the op refuses it (a TypeError),
# the operator returns NotImplemented, as torch's do, so that Python asks the other operand's
# reflected method (a library's container type with its own __rmul__), and else raises its
# "unsupported operand type(s)" TypeError.
_UNARY = {"__neg__", "__abs__", "__invert__", "__pos__", "__getitem__", "__setitem__"}
_OPERANDS = (Tensor, numbers.Number, np.ndarray, np.generic)


def _deferring(function, name: str):
    def operator(self, other):
        if not isinstance(self, Tensor):
            # Tensor.__radd__(2, x), called unbound: torch's C methods check their self.
            raise TypeError(f"descriptor '{name}' for 'Tensor' objects doesn't "
                            f"apply to a '{type(self).__name__}' object")
        try:
            return function(self, other)
        except TypeError:
            if isinstance(other, _OPERANDS):
                raise  # the op's own error about an operand it knows (a dtype, a backend)
            return NotImplemented

    operator.__name__ = operator.__qualname__ = function.__name__
    operator.__doc__ = function.__doc__
    op, swapped = _bound_op(function)
    if op is None:
        return operator
    # A binary elementwise op (elementwise._call2) of a tensor and an operand that needs no
    # conversion is bound here, in the operator's frame: the op function's own frame was a
    # tenth of a small comparison's cost and is paid by every `a * b` of an eager loop.
    # Anything else takes `operator`, which does the same through the function.
    if swapped:
        def direct(self, other):
            if other.__class__ in _DIRECT and isinstance(self, Tensor):
                try:
                    return bind(op, (other, self), NO_ATTRS)
                except TypeError:
                    if isinstance(other, _OPERANDS):
                        raise
                    return NotImplemented
            return operator(self, other)
    else:
        def direct(self, other):
            if other.__class__ in _DIRECT and isinstance(self, Tensor):
                try:
                    return bind(op, (self, other), NO_ATTRS)
                except TypeError:
                    if isinstance(other, _OPERANDS):
                        raise
                    return NotImplemented
            return operator(self, other)

    direct.__name__ = direct.__qualname__ = function.__name__
    direct.__doc__ = function.__doc__
    return direct


def _bound_op(function):
    """(op, swapped) where `function` is elementwise._call2's function of `op`, or the
    reflected form of one (swapped); (None, False) otherwise."""
    swapped = False
    reflects = getattr(function, "reflects", None)
    if reflects is not None and reflects[0] is function:
        function, swapped = reflects[1], True
    binds = getattr(function, "binds", None)
    if binds is None or binds[0] is not function:
        return None, False
    return binds[1], swapped


for _name, _function in OPERATORS.items():
    setattr(Tensor, _name, _function if _name in _UNARY else _deferring(_function, _name))
Tensor.T = property(layout.full_transpose, doc="x with all dims reversed (a view).")
Tensor.real = property(complex_numbers.real, lambda self, value: complex_numbers.real(
    self).copy_(value), doc="The real parts of a complex tensor, a view (x itself when real); "
                            "assigning writes them.")
Tensor.imag = property(complex_numbers.imag, lambda self, value: complex_numbers.imag(
    self).copy_(value), doc="The imaginary parts of a complex tensor, a view; assigning writes "
                            "them.")
Tensor.mT = property(layout.matrix_transpose, doc="x with its last two dims swapped (a view).")
# __eq__ is elementwise: identity hashing, like torch; object.__hash__ is a C slot, so dicts
# keyed by tensors (optimizer state) look them up without a Python call.
Tensor.__hash__ = object.__hash__


# ---- conversions: to, cuda, cpu, the dtype methods, type_as, __dlpack__, contiguous, ... -------
# (tensor_conversions.py attaches them when it is imported, here)

from . import tensor_conversions  # noqa: E402, F401

# ---- in-place --------------------------------------------------------------------------------

def _inplace(name, function):
    def method(self, *args, **kwargs):
        return inplace.apply_inplace(self, name, lambda source: function(source, *args, **kwargs))

    method.__name__ = method.__qualname__ = name
    method.__doc__ = f"In-place version of `{name[:-1]}`: the result is written into x."
    method.__wrapped__ = function
    return method


def _underived(name: str, function):
    """`function` as the in-place op torch gives no derivative (acosh_, asinh_, atanh_): a
    backward reaching its result raises torch's NotImplementedError, and so does forward mode
    on a tangent, instead of differentiating the out-of-place op."""
    def compute(source, *args, **kwargs):
        if state.forward_levels and source._tangents:
            raise NotImplementedError(
                f"Trying to use forward AD with {name}_ that does not support it because it "
                "has not been implemented yet.\nPlease file an issue to PyTorch at "
                "https://github.com/pytorch/pytorch/issues/new?template=feature-request.yml "
                "so that we can prioritize its implementation.")
        result = function(source, *args, **kwargs)
        if not (state.grad_enabled and source._requires_grad):
            return result
        return registry.DELAYED_ERROR(
            f"the derivative for 'inplace version of {name}' is not implemented.", result,
            source, NotImplementedError, f"{name.capitalize()}Backward1")

    return compute


INPLACE = {
    "add_": math_composites.add, "sub_": math_composites.sub, "mul_": ew.mul, "div_": ew.div,
    "pow_": ew.pow,
    "clamp_": composite.clamp, "clip_": composite.clamp, "neg_": ew.neg, "exp_": ew.exp,
    "log_": ew.log, "sqrt_": ew.sqrt, "abs_": complex_numbers.real_result("abs", ew.abs),
    "sigmoid_": ew.sigmoid,
    "tanh_": ew.tanh, "relu_": ewm.relu, "floor_divide_": ew.floor_divide,
    "remainder_": ew.remainder, "maximum_": ew.maximum, "minimum_": ew.minimum,
    # ---- scans, triangular parts ----
    "cumsum_": scans.cumsum, "cumprod_": scans.cumprod, "tril_": triangular.tril,
    "triu_": triangular.triu,
    # ---- scatter, gather and masks (indexing/scatter.py, indexing/update.py, indexing/masked.py)
    "scatter_": scatter.scatter, "scatter_add_": scatter.scatter_add,
    "scatter_reduce_": scatter.scatter_reduce, "index_add_": index_update.index_add,
    "index_copy_": index_update.index_copy, "index_fill_": index_update.index_fill,
    "index_put_": index_update.tensor_index_put, "put_": index_update.put,
    "masked_fill_": indexing.masked_fill, "masked_scatter_": masked.masked_scatter,
    # ---- arithmetic, trigonometric and special functions, tests and masks ----------------------
    "lerp_": math_composites.lerp, "addcmul_": math_composites.addcmul,
    "addcdiv_": math_composites.addcdiv, "addmm_": products.addmm, "addmv_": products.addmv,
    "addbmm_": products.addbmm, "baddbmm_": products.baddbmm, "atan2_": ewm.atan2,
    "arctan2_": ewm.atan2, "hypot_": ewm.hypot, "xlogy_": ewm.xlogy, "fmod_": ewm.fmod,
    "reciprocal_": composite.reciprocal, "square_": composite.square,
    "frac_": math_composites.frac, "trunc_": ewm.trunc, "fix_": ewm.trunc,
    "round_": composite.round, "ceil_": ewm.ceil, "floor_": ew.floor, "sign_": ew.sign,
    "sgn_": complex_numbers.sgn, "heaviside_": math_composites.heaviside,
    "copysign_": ewm.copysign, "conj_physical_": complex_numbers.conj_physical,
    "nextafter_": ewm.nextafter, "asin_": ewm.asin, "acos_": ewm.acos, "atan_": ewm.atan,
    "arcsin_": ewm.asin, "arccos_": ewm.acos, "arctan_": ewm.atan,
    "sinh_": math_composites.sinh, "cosh_": math_composites.cosh,
    "asinh_": _underived("asinh", math_composites.asinh),
    "acosh_": _underived("acosh", ewm.acosh),
    "atanh_": _underived("atanh", math_composites.atanh),
    "arcsinh_": _underived("asinh", math_composites.asinh),
    "arccosh_": _underived("acosh", ewm.acosh),
    "arctanh_": _underived("atanh", math_composites.atanh),
    "sinc_": math_composites.sinc, "erfc_": ewm.erfc, "erfinv_": special_functions.erfinv,
    "lgamma_": special_functions.lgamma, "digamma_": special_functions.digamma,
    "polygamma_": special_functions.polygamma_method, "i0_": special_functions.i0,
    "mvlgamma_": special_functions.mvlgamma_method,
    "logit_": ewm.logit, "deg2rad_": math_composites.deg2rad,
    "rad2deg_": math_composites.rad2deg, "nan_to_num_": masks.nan_to_num,
    "clamp_min_": masks.clamp_min, "clamp_max_": masks.clamp_max,
    "bitwise_and_": bitwise.bitwise_and, "bitwise_or_": bitwise.bitwise_or,
    "bitwise_xor_": bitwise.bitwise_xor, "bitwise_not_": bitwise.bitwise_not,
    "bitwise_left_shift_": bitwise.bitwise_left_shift,
    "bitwise_right_shift_": bitwise.bitwise_right_shift,
}
for _name, _function in INPLACE.items():
    _method_function = _inplace(_name, _function)
    if _name[:-1] in deprecated_forms.NAMES:
        _method_function = deprecated_forms.method_form(_method_function, _name[:-1], _name)
    setattr(Tensor, _name, _method_function)

for _name, _method_name in (("__iadd__", "add_"), ("__isub__", "sub_"), ("__imul__", "mul_"),
                            ("__itruediv__", "div_"), ("__ipow__", "pow_"),
                            ("__iand__", "bitwise_and_"), ("__ior__", "bitwise_or_"),
                            ("__ixor__", "bitwise_xor_"), ("__ilshift__", "bitwise_left_shift_"),
                            ("__irshift__", "bitwise_right_shift_")):
    setattr(Tensor, _name, _deferring(getattr(Tensor, _method_name), _name))


def zero_(self):
    """Fill x with zeros, in place."""
    return inplace.apply_inplace(self, "zero_", lambda source: ew.fill_like(source, 0))


def fill_(self, value):
    """Fill x with `value`, in place."""
    if not isinstance(value, Tensor):
        dtypes.check_fits(value, self.dtype)
    return inplace.apply_inplace(self, "fill_", lambda source: ew.fill_like(source, value))


def copy_(self, source, non_blocking: bool = False):
    """Write `source` (broadcast, cast) into x, in place; the gradient flows to source."""
    if state.dispatch == PLAIN and source.__class__ is Tensor and source._dtype is self._dtype:
        # Nothing to record (grad mode off, nothing else active) and an array of x's own
        # dtype and shape: the write alone, as apply_inplace's plain path ends (torch's copy_
        # also keeps the sign of a zero, which the general path's 0 + source does not).
        data, values = self._payload, source._payload
        if data.__class__ is np.ndarray and values.__class__ is np.ndarray and \
                data.shape == values.shape and not (self._is_inference or self._batched or
                                                    source._batched):
            inplace.write_storage(self, source)
            return self
    source = _as_tensor(source)
    if self.is_meta and not source.is_meta:  # copied across devices, as torch's copy_ is
        source = source.to("meta")
    if self._dtype in dtypes.UNSIGNED:  # no addition for uint64: 0 | x is x, and broadcasts
        # as + does
        return inplace.apply_inplace(
            self, "copy_", lambda old: ew.fill_like(old, 0) | source.to(old.dtype))
    if self._dtype.float8 is not None:  # nor for float8: the cast, broadcast, is the copy
        return inplace.apply_inplace(
            self, "copy_", lambda old: ew.clone(source.to(old.dtype).expand(old.shape)))
    return inplace.apply_inplace(
        self, "copy_", lambda old: ew.fill_like(old, 0) + source.to(old.dtype))


def _as_tensor(value) -> Tensor:
    from ..tensor.creation import as_tensor

    return value if isinstance(value, Tensor) else as_tensor(value)


# The in-place random fills: normal_, uniform_, bernoulli_, random_, ... (ops/random/__init__.py).
for _name, _function in random.INPLACE_METHODS.items():
    setattr(Tensor, _name, _function)

Tensor.zero_ = zero_
Tensor.fill_ = fill_
Tensor.copy_ = copy_


# ---- factory methods (factories.py) ----------------------------------------------------------

Tensor.new_tensor = factories.new_tensor
Tensor.new_zeros = factories.new_zeros
Tensor.new_ones = factories.new_ones
Tensor.new_full = factories.new_full
Tensor.new_empty = factories.new_empty

