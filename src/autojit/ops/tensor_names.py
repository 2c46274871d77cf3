"""Tensor's methods beside tensor_methods.py's table: torch's other names of its ops (greater,
absolute, multiply, ...), the methods of the ops in aliases.py, elementwise/extra.py,
special/number_functions.py, linalg/contractions.py, statistics.py, indexing/scatter_views.py and
linalg/lu.py with their in-place forms, the in-place layout methods (unsqueeze_, squeeze_, t_,
transpose_, swapaxes_, swapdims_, resize_), `.H` and `.mH`, `y in x`, the answers torch's tensors
give about kinds autojit does not have (is_sparse, is_quantized, ...), and `axis=`/`keepdims=` on
the methods torch accepts them on; and torch's top-level forms of the in-place methods
(autojit.abs_(x), autojit.zero_(x), ...), which __init__.py exports.

Imported by tensor_methods.py's importer (__init__.py) after it: the tables here add to and
replace entries of its tables (div takes rounding_mode, norm takes "nuc").
"""

from __future__ import annotations

import warnings

import numpy as np

from ..tensor import torch_function
from ..tensor.graph_break import graph_break
from ..tensor.state import state
from ..tensor.tensor import Tensor
from . import (
    aliases,
    complex_numbers,
    deprecated_forms,
    factory_forms,
    inplace,
    keyword_forms,
    layout,
    linalg,
    registry,
    statistics,
    storage,
    tensor_methods,
)
from . import elementwise as ew
from .batching import batched
from .composite import exp2, log2, log10, rsqrt, tan
from .elementwise import extra as elementwise_extra
from .elementwise import math_composites
from .indexing import scatter_views
from .inplace import apply_inplace, check_inplace
from .linalg import contractions
from .linalg import extras as linalg_extras
from .linalg import lu as linalg_lu
from .linalg import removed as removed_linalg
from .special import number_functions

# ---- methods -----------------------------------------------------------------------------------


def _lu_method(self, pivot: bool = True, get_infos: bool = False):
    """`x.lu()`: the deprecated torch.lu (LU and pivots; with info when get_infos)."""
    return linalg_lu.lu_top_level(self, pivot, get_infos)


def _lu_solve_method(self, LU_data, LU_pivots):  # noqa: N803 - torch's names
    """`b.lu_solve(LU_data, LU_pivots)`: the deprecated torch.lu_solve."""
    return linalg_lu.lu_solve_top_level(self, LU_data, LU_pivots)


def _split_with_sizes(self, split_sizes, dim: int = 0):
    """The pieces of x along `dim` of the given sizes (which add up to its extent)."""
    return layout.split(self, list(split_sizes), dim)


def _unsafe_split(self, split_size, dim: int = 0):
    """split, whose pieces torch lets the caller write in place (no multi-output view rule)."""
    outputs, name = layout.split_pieces(self, split_size, dim)
    # Eagerly not views for autograd: each piece has a version counter of its own, so a write
    # into one leaves what the others saved valid, as torch's (a traced piece stays a view,
    # the trace's record of what its writes reach).
    for out in outputs:
        if out._payload is not None:
            fields = out.__dict__
            for name_ in ("_base", "_view_source", "_view_version"):
                fields.pop(name_, None)
            out._counter = None
    return registry.share_node(outputs, (self,), f"Unsafe{name}Backward0")


def _unsafe_split_with_sizes(self, split_sizes, dim: int = 0):
    """unsafe_split with the pieces' sizes."""
    return _unsafe_split(self, list(split_sizes), dim)


def _unsafe_chunk(self, chunks: int, dim: int = 0):
    """chunk, whose pieces torch lets the caller write in place."""
    return _unsafe_split(self, layout.chunk_sections(self, chunks, dim), dim)


def _ndimension(self) -> int:
    """The number of dims (x.dim())."""
    return self.ndim


def _dim_order(self, *, ambiguity_check=False):
    """The dims from the outermost in memory to the innermost (by decreasing stride)."""
    strides = self.stride()
    return tuple(sorted(range(self.ndim), key=lambda d: -strides[d]))


def _new_empty_strided(self, size, stride, *, dtype=None, device=None,
                       requires_grad: bool = False, layout=None, pin_memory: bool = False):
    """An uninitialized tensor of `size` with element strides `stride`, with x's dtype and
    device unless given."""
    from ..tensor.creation_extra import empty_strided

    return empty_strided(size, stride, dtype=dtype or self.dtype,
                         device=device or self.device, requires_grad=requires_grad)


def _answer(name: str, value, doc: str):
    def method(self):
        return value

    method.__name__ = method.__qualname__ = name
    method.__doc__ = doc
    return method


def _each_element(name: str):
    """apply_, map_ and map2_: a Python callable over the elements, on CPU tensors."""
    def method(self, *args):
        *others, function = args
        if self.is_cuda or any(isinstance(o, Tensor) and o.is_cuda for o in others):
            raise TypeError(f"{name} is only implemented on CPU tensors")
        arrays = [np.broadcast_to(o._host(name), tuple(self.shape)) for o in others]
        values = self._host(name)
        result = np.empty(values.shape, values.dtype)
        for position in np.ndindex(values.shape):
            result[position] = function(values[position].item(),
                                        *(a[position].item() for a in arrays))
        return apply_inplace(self, name, lambda _old: Tensor._make(result, self.dtype))

    method.__name__ = method.__qualname__ = name
    others = " and the others' elements" if name != "apply_" else ""
    method.__doc__ = (f"Apply a Python callable to each element of x{others}, in place (CPU "
                      "tensors; not differentiable).")
    return method


# name -> function(self, *args, **kwargs), as tensor_methods.METHODS
METHODS = {
    # torch's other names
    "absolute": ew.abs, "greater": ew.gt, "greater_equal": ew.ge, "less": ew.lt,
    "less_equal": ew.le, "not_equal": ew.ne, "multiply": ew.mul,
    "subtract": math_composites.sub, "divide": elementwise_extra.div,
    "div": elementwise_extra.div, "true_divide": ew.div, "ger": linalg.outer,
    # aliases.py, elementwise/extra.py, special/number_functions.py
    "positive": elementwise_extra.positive, "ravel": aliases.ravel,
    "adjoint": aliases.adjoint, "narrow_copy": aliases.narrow_copy,
    "argwhere": aliases.argwhere, "isreal": aliases.isreal, "is_nonzero": aliases.is_nonzero,
    "is_same_size": aliases.is_same_size, "float_power": elementwise_extra.float_power,
    "fmax": elementwise_extra.fmax, "fmin": elementwise_extra.fmin,
    "signbit": elementwise_extra.signbit, "ldexp": elementwise_extra.ldexp,
    "frexp": elementwise_extra.frexp, "gcd": number_functions.gcd,
    "lcm": number_functions.lcm, "igamma": number_functions.igamma,
    "igammac": number_functions.igammac,
    # linalg/contractions.py, statistics.py
    "inner": contractions.inner, "vdot": contractions.vdot, "addr": contractions.addr,
    "dist": contractions.dist, "renorm": contractions.renorm,
    "norm": contractions.norm_method, "diff": statistics.diff, "cov": statistics.cov,
    "corrcoef": statistics.corrcoef, "histogram": statistics.histogram,
    "mode": statistics.mode, "unique_consecutive": statistics.unique_consecutive,
    # torch's older name of householder_product
    "orgqr": linalg_extras.orgqr,
    # linalg/removed.py: torch's removed functions, raising with their replacements
    **removed_linalg.METHODS,
    # indexing/scatter_views.py
    "index_reduce": scatter_views.index_reduce,
    "select_scatter": scatter_views.select_scatter,
    "slice_scatter": scatter_views.slice_scatter,
    "diagonal_scatter": scatter_views.diagonal_scatter,
    "as_strided": scatter_views.as_strided, "unfold": scatter_views.unfold,
    "as_strided_scatter": scatter_views.as_strided_scatter,
    "sum_to_size": scatter_views.sum_to_size,
    "storage_offset": scatter_views.storage_offset,
    # storage.py
    "storage": storage.storage, "untyped_storage": storage.untyped_storage,
    "data_ptr": storage.data_ptr, "set_": storage.set_,
    # linalg/lu.py
    "lu": _lu_method, "lu_solve": _lu_solve_method,
    "cholesky_solve": linalg_lu.cholesky_solve,
    "cholesky_inverse": linalg_lu.cholesky_inverse,
    "triangular_solve": linalg_lu.triangular_solve, "matrix_exp": linalg_lu.matrix_exp,
    "geqrf": linalg_extras.geqrf, "ormqr": linalg_extras.ormqr,
    # shapes and memory
    "split_with_sizes": _split_with_sizes, "unsafe_chunk": _unsafe_chunk,
    "unsafe_split": _unsafe_split, "unsafe_split_with_sizes": _unsafe_split_with_sizes,
    "ndimension": _ndimension, "dim_order": _dim_order,
    "new_empty_strided": _new_empty_strided, "angle": elementwise_extra.angle,
}

for _name, _function in METHODS.items():
    if _name in deprecated_forms.NAMES:  # also torch's deprecated forms, `x.addr(2, u, v)`
        setattr(Tensor, _name, tensor_methods._named(deprecated_forms.method_form(
            _function, _name), _name))
        continue
    setattr(Tensor, _name, tensor_methods._method(_function))
Tensor.ndimension.__doc__ = _ndimension.__doc__

for _name in ("apply_", "map_", "map2_"):
    setattr(Tensor, _name, _each_element(_name))
Tensor.is_distributed = _answer("is_distributed", False,
                                "False: autojit has no distributed tensors.")


def _is_pinned(self, device=None) -> bool:
    """False: autojit's host memory is not pinned (docs/differences.md); `device` is torch's
    deprecated argument."""
    return False


Tensor.is_pinned = _is_pinned


def _pin_memory(self, device=None):
    """torch's copy into page-locked host memory, for faster copies to a GPU; with no GPU
    present it raises torch's RuntimeError, as a torch without one does."""
    import sys

    cuda = sys.modules.get(__name__.rsplit(".", 2)[0] + ".cuda")  # (loaded once a GPU is used)
    if cuda is None or not cuda.is_available():
        raise RuntimeError("Cannot access accelerator device when none is available.")
    return self.clone()


Tensor.pin_memory = _pin_memory


def _new(self, *args, **kwargs) -> Tensor:
    """torch's legacy `x.new(...)`: a tensor of x's dtype (and device) from sizes, data or
    nothing, as the legacy constructors make them."""
    kwargs.setdefault("device", self.device)
    return Tensor._legacy_new(self.dtype, args, kwargs)


def _is_set_to(self, tensor: Tensor) -> bool:
    """Whether x and `tensor` are the same view of the same storage (shape, strides and first
    element)."""
    if self._payload is None or tensor._payload is None:
        return self is tensor
    return (self._payload.__array_interface__ == tensor._payload.__array_interface__
            and np.shares_memory(self._payload, tensor._payload))


Tensor.new = _new
Tensor.is_set_to = _is_set_to


# ---- in-place forms ----------------------------------------------------------------------------

INPLACE = {
    "absolute_": complex_numbers.real_result("abs", ew.abs), "negative_": ew.neg,
    "multiply_": ew.mul,
    "subtract_": math_composites.sub, "divide_": elementwise_extra.div,
    "div_": elementwise_extra.div, "true_divide_": ew.div,
    "eq_": ew.eq, "ne_": ew.ne, "lt_": ew.lt, "le_": ew.le, "gt_": ew.gt, "ge_": ew.ge,
    "greater_": ew.gt, "greater_equal_": ew.ge, "less_": ew.lt, "less_equal_": ew.le,
    "not_equal_": ew.ne, "logical_and_": ew.logical_and, "logical_or_": ew.logical_or,
    "logical_xor_": ew.logical_xor, "logical_not_": ew.logical_not,
    "cos_": ew.cos, "sin_": ew.sin, "tan_": tan, "erf_": ew.erf, "exp2_": exp2,
    "expm1_": ew.expm1, "log10_": log10, "log1p_": ew.log1p, "log2_": log2, "rsqrt_": rsqrt,
    "gcd_": number_functions.gcd, "lcm_": number_functions.lcm,
    "ldexp_": elementwise_extra.ldexp, "igamma_": number_functions.igamma,
    "igammac_": number_functions.igammac, "renorm_": contractions.renorm,
    "addr_": contractions.addr, "index_reduce_": scatter_views.index_reduce,
}
for _name, _function in INPLACE.items():
    _method_function = tensor_methods._inplace(_name, _function)
    if _name[:-1] in deprecated_forms.NAMES:
        _method_function = deprecated_forms.method_form(_method_function, _name[:-1], _name)
    setattr(Tensor, _name, _method_function)
Tensor.float_power_ = elementwise_extra.float_power_
Tensor.fill_diagonal_ = scatter_views.fill_diagonal_


# ---- in-place layout changes -------------------------------------------------------------------

_STATE = ("_base", "_view_source", "_view_version", "_traced_view", "_tangents")


def _stand_in(self: Tensor) -> Tensor:
    """A tensor that is `self` as it is now (same storage, version counter and history), for
    the layout op to read while self takes its result's metadata."""
    if self._batched:  # inside vmap: a BatchedTensor over the same physical tensor
        old = batched(self._value.physical, self._value.level)
    else:
        old = Tensor._make(self._payload, self._dtype, self._version_counter)
        old._value = self._value
    old.grad_fn, old._output_nr = self.grad_fn, self._output_nr
    old._requires_grad = self._requires_grad
    for name in _STATE:
        if name in self.__dict__:
            setattr(old, name, self.__dict__[name])
    return old


def _layout_inplace(name: str, function):
    def method(self, *args, **kwargs):
        if state.tracer is not None:
            graph_break(f"{name}() (an in-place change of a tensor's shape)", needs_data=False)
        if state.grad_levels:
            inplace.CHECK_CAPTURED(self, name)
        check_inplace(self, name)
        old = _stand_in(self)
        result = function(old, *args, **kwargs)
        self._payload = result._payload
        if self._batched:
            self._value = result._value
        self._version_counter = result._version_counter
        if result.grad_fn is not None:
            self.grad_fn, self._output_nr = result.grad_fn, result._output_nr
        if old._base is not None:  # a view keeps its base, through the stand-in
            for attribute in _STATE:
                if attribute in result.__dict__:
                    setattr(self, attribute, result.__dict__[attribute])
        elif state.forward_levels and result._tangents:
            self._tangents = result._tangents  # forward AD: the tangent in the new layout
        return self

    method.__name__ = method.__qualname__ = name
    method.__doc__ = (f"In-place version of `{name[:-1]}`: x takes the new shape (a view of the "
                      "same storage).")
    return method


for _name, _function in (("unsqueeze_", layout.unsqueeze), ("squeeze_", layout.squeeze),
                         ("t_", layout.t), ("transpose_", layout.transpose),
                         ("swapaxes_", layout.transpose), ("swapdims_", layout.transpose)):
    setattr(Tensor, _name, _layout_inplace(_name, _function))


def resize_(self, *size, memory_format=None) -> Tensor:
    """Give x the shape `size` in place, keeping its leading elements in row-major order (new
    ones are uninitialized); x must not require grad."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = tuple(size[0])
    size = tuple(int(s) for s in size)
    if state.grad_levels:
        inplace.CHECK_CAPTURED(self, "resize_")
    if self._requires_grad and state.grad_enabled:
        raise RuntimeError("cannot resize variables that require grad")
    if self._payload is None:
        return _traced_resize(self, size)
    if tuple(self._payload.shape) == size:
        return self  # as torch: a resize to the same shape is a no-op, its version unchanged
    count = int(np.prod(size, dtype=np.int64))
    flat = self._payload.reshape(-1) if self._payload.flags.c_contiguous else None
    if flat is not None and count <= flat.shape[0]:
        self._payload = flat[:count].reshape(size)
    else:
        data = np.empty(count, self._payload.dtype)
        old = np.ascontiguousarray(self._payload).reshape(-1)
        data[:min(count, old.shape[0])] = old[:count]
        self._payload = data.reshape(size)
    self._bump_version()
    return self


def _traced_resize(self: Tensor, size: tuple) -> Tensor:
    """resize_ of a value the traced function computed: a new traced value of the new size
    (its leading elements in row-major order, the new ones zero where eager's are
    uninitialized), as torch.compile traces a resize. An argument, a captured tensor's
    storage or a view keeps its size outside the function: a graph break there."""
    tracer = state.tracer
    if tracer is None or self._traced_view is not None or self._batched or \
            tracer.argument_array(self) is not None:
        graph_break("resize_() of an argument or a view (its storage outside the function)",
                    needs_data=False)
    count = int(np.prod(size, dtype=np.int64))
    flat = layout.reshape(self, -1)
    have = flat.shape[0]
    if count <= have:
        flat = flat[:count]
    else:
        from ..tensor.creation import zeros

        flat = layout.cat([flat, zeros(count - have, dtype=self.dtype, device=self.device)])
    self._value = tracer.value_of(layout.reshape(flat, size))
    self._bump_version()
    return self


def resize_as_(self, the_template: Tensor, *, memory_format=None) -> Tensor:
    """resize_ to the shape of another tensor."""
    return resize_(self, tuple(the_template.shape))


def _resize(self, *size) -> Tensor:
    """A copy of x resized (deprecated in torch: use reshape)."""
    warnings.warn("non-inplace resize is deprecated", UserWarning, stacklevel=2)
    return resize_(self.detach().clone(), *size)


Tensor.resize_ = resize_
Tensor.resize_as_ = resize_as_
Tensor.resize = _resize


# ---- attributes and protocols --------------------------------------------------------------------

Tensor.H = property(aliases.conjugate_transpose,
                    doc="The conjugate transpose of a matrix (2-D only); for real tensors, x.T.")
Tensor.mH = property(aliases.matrix_adjoint,
                     doc="The conjugate transpose of each matrix; for real tensors, x.mT.")
Tensor.__contains__ = aliases.contains


def _as_subclass(self, cls):
    """x as an instance of `cls`, a subclass of Tensor: a view of the same data that stays in
    x's autograd graph (gradients through it reach x), as torch's as_subclass."""
    if not (isinstance(cls, type) and issubclass(cls, Tensor)):
        raise TypeError("Creating a Tensor subclass from a class that does not inherit from "
                        "Tensor is not possible. Make sure your class inherits from Tensor.")
    torch_function.arm(cls)
    # (the shape read past the property, which a TorchFunctionMode would see)
    data = self._payload
    alias = layout.reshape(self, tuple(data.shape if data is not None else self._value.shape))
    alias.__class__ = cls
    return alias


Tensor.as_subclass = _as_subclass
# torch's address of the tensor's C++ object, which libraries use as an identity key.
Tensor._cdata = property(lambda self: id(self), doc="A number identifying this tensor object.")
Tensor.output_nr = property(lambda self: self._output_nr,
                            doc="Which output of its grad_fn this tensor is (0 for a leaf).")
for _name, _what in (("is_sparse", "sparse"), ("is_sparse_csr", "sparse CSR"),
                     ("is_quantized", "quantized"), ("is_nested", "nested"),
                     ("is_mkldnn", "MKL-DNN"), ("is_mps", "MPS"), ("is_xpu", "XPU"),
                     ("is_vulkan", "Vulkan"), ("is_ipu", "IPU"), ("is_xla", "XLA"),
                     ("is_mtia", "MTIA"), ("is_maia", "MAIA")):
    setattr(Tensor, _name, property(lambda self: False,
                                    doc=f"False: autojit has no {_what} tensors."))


# ---- axis= and keepdims= on the methods ----------------------------------------------------------

for _name in sorted(aliases.NUMPY_KEYWORD_METHODS):
    if hasattr(Tensor, _name):
        setattr(Tensor, _name, aliases.numpy_keywords(getattr(Tensor, _name), _name))


# ---- torch's top-level forms of the in-place methods ------------------------------------------

TOP_LEVEL_INPLACE = (
    "abs_", "acos_", "acosh_", "addmv_", "arccos_", "arccosh_", "arcsin_", "arcsinh_",
    "arctan_", "arctanh_", "asin_", "asinh_", "atan_", "atanh_", "ceil_", "clamp_",
    "conj_physical_",
    "clamp_max_", "clamp_min_", "clip_", "cos_", "cosh_", "deg2rad_", "detach_", "erf_",
    "erfc_", "exp2_", "exp_", "expm1_", "fill_", "fix_", "floor_", "frac_", "gcd_", "i0_",
    "index_put_", "lcm_", "ldexp_", "log10_", "log1p_", "log2_", "log_", "logit_",
    "nan_to_num_", "neg_", "negative_", "rad2deg_", "reciprocal_", "resize_as_", "round_",
    "rsqrt_", "sigmoid_", "sin_", "sinc_", "sinh_", "sqrt_", "square_", "tan_", "tanh_",
    "trunc_", "xlogy_", "zero_",
)


def _top_level(name: str):
    method = getattr(Tensor, name)

    def function(input, *args, **kwargs):  # noqa: A002 - torch's names
        return method(input, *args, **kwargs)

    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"`x.{name}(...)`, as a function: {(method.__doc__ or '').strip()}"
    return function


# and of the methods torch also has as functions
TOP_LEVEL_FORWARDED = ("is_conj", "is_neg", "resolve_neg", "_neg_view", "is_signed",
                       "is_inference", "get_device", "split_with_sizes", "unsafe_chunk",
                       "unsafe_split", "unsafe_split_with_sizes")
TOP_LEVEL_FUNCTIONS = {name: _top_level(name)
                       for name in TOP_LEVEL_INPLACE + TOP_LEVEL_FORWARDED}


def _copy_form(name: str, function):
    """torch's *_copy functions: the view op, then a copy of each result."""
    def copy(input, *args, **kwargs):  # noqa: A002
        result = function(input, *args, **kwargs)
        if isinstance(result, (tuple, list)):
            return tuple(part.clone() for part in result)
        return result.clone()

    copy.__name__ = copy.__qualname__ = name
    copy.__doc__ = f"`{name[:-5]}(...)` copied into storage of its own (not a view)."
    return copy


def _slice(input, dim: int = 0, start=None, end=None, step: int = 1):  # noqa: A002
    index = [slice(None)] * input.ndim
    index[dim] = slice(start, end, step)
    return input[tuple(index)]


_VIEWS = {
    "alias_copy": lambda x: x, "as_strided_copy": scatter_views.as_strided,
    "detach_copy": lambda x: x.detach(), "diagonal_copy": lambda x, *a, **k: x.diagonal(*a, **k),
    "expand_copy": lambda x, *a, **k: x.expand(*a, **k), "permute_copy": layout.permute,
    "select_copy": layout.select, "slice_copy": _slice, "split_copy": layout.split,
    "split_with_sizes_copy": _split_with_sizes, "squeeze_copy": layout.squeeze,
    "t_copy": layout.t, "transpose_copy": layout.transpose, "unbind_copy": layout.unbind,
    "unfold_copy": scatter_views.unfold, "unsqueeze_copy": layout.unsqueeze,
    "view_copy": layout.reshape,
    "view_as_real_copy": complex_numbers.view_as_real,
    "view_as_complex_copy": complex_numbers.view_as_complex,
}
for _name, _function in _VIEWS.items():
    TOP_LEVEL_FUNCTIONS[_name] = _copy_form(_name, _function)


def fill(input: Tensor, value) -> Tensor:  # noqa: A002
    """A new tensor shaped and typed like x, every element `value`."""
    return ew.fill_like(input, value) if not isinstance(value, Tensor) else \
        ew.fill_like(input, 0) + value.to(input.dtype)


def detach(input: Tensor) -> Tensor:  # noqa: A002
    """x without autograd history (`x.detach()`), sharing its storage."""
    return input.detach()


TOP_LEVEL_FUNCTIONS["fill"] = fill
TOP_LEVEL_FUNCTIONS["detach"] = detach

# layout= and pin_memory= of the factory methods (factory_forms.py).
for _name in ("new_zeros", "new_ones", "new_empty", "new_full", "new_tensor",
              "new_empty_strided"):
    setattr(Tensor, _name, factory_forms.factory_form(getattr(Tensor, _name), _name, out=False))

# torch's keyword names for the methods' parameters (x.new_zeros(size=...), x.split(split_size=
# ...)); last, so that they wrap every method above.
keyword_forms.accept_on_class(Tensor, keyword_forms.METHODS)
