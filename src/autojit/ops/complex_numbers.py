"""Complex numbers: the primitives that make complex tensors from real parts (complex), take
them apart (view_as_real, view_as_complex), conjugate them (conj) and measure them (angle and
sgn of a complex tensor), and the functions of torch built on them (real, imag, polar,
conj_physical, resolve_conj, is_conj), and torch's negative bit (_neg_view, is_neg,
resolve_neg).

Each VJP follows torch's convention for complex gradients: the gradient of a real loss L with
respect to z = x + iy is dL/dx + i dL/dy, the conjugate Wirtinger derivative scaled by two
(docs/notes/complex.md). `real` and `imag` are views, as torch's: a select of view_as_real, so
that a write through them reaches the complex tensor and autograd sees a slice of a view
(inplace.py's scatter_through). `conj` is computed eagerly: its result carries torch's
conjugate bit (is_conj) but holds the conjugated values, so it shares no memory with its
input (docs/differences.md). In compiled code conj, complex, angle and sgn fuse into CPU
kernels with the complex elementwise ops (their Elementwise.complex_expression), and
view_as_real and view_as_complex are the NumPy views at a kernel's boundary
(docs/notes/complex.md).
"""

from __future__ import annotations

import numpy as np

from ..tensor import dtypes
from ..tensor.tensor import Tensor
from . import elementwise as ew
from .batching import broadcasting_rule, leading_batch_rule
from .layout import select
from .limited_rules import COMPLEX32
from .lowering import Elementwise, Extern
from .registry import bind, define_op
from .shape_rules import broadcast_shapes

NO_ATTRS: dict = {}
_COMPLEX = dtypes.COMPLEX


def _complex_input(x, function: str) -> Tensor:
    if not isinstance(x, Tensor):
        raise TypeError(f"{function}(): argument 'input' (position 1) must be Tensor, not "
                        f"{type(x).__name__}")
    return x


def _is_complex(x: Tensor) -> bool:
    return x._dtype.category == _COMPLEX


# ---- conj ---------------------------------------------------------------------------------------

# The conjugate of a real value is the value (the real template); a complex one negates the
# imaginary part (the complex template, codegen/cpu/llvm/complex.py).
CONJ = define_op(name="conj", arity=1, shape=lambda shape: shape,
                 dtype=lambda inputs, attrs: (None, inputs[0]._dtype), impl=np.conjugate,
                 vjp=lambda ctx, g: (conj_physical(g),), saves=(),
                 jvp=lambda inputs, tangents, out, attrs: conj_physical(tangents[0]),
                 lowering=Elementwise("{0}", exact=True, complex_expression="conj({0})"),
                 grad_name="ConjBackward0",
                 complex=True, limited=COMPLEX32)


def conj(input: Tensor) -> Tensor:  # noqa: A002 - torch's names
    """The complex conjugate of x, with torch's conjugate bit (`is_conj()`) flipped; x itself
    for a real tensor. The values are conjugated now: the result shares no memory with x
    (docs/differences.md)."""
    x = _complex_input(input, "conj")
    if not _is_complex(x):
        return x
    out = bind(CONJ, (x,), NO_ATTRS)
    out._is_conj = not x._is_conj
    if x._is_neg:
        out._is_neg = True  # torch's conj is a view: it keeps the negative bit
    return out


def conj_physical(input: Tensor) -> Tensor:  # noqa: A002
    """The complex conjugate of x, in storage of its own and without the conjugate bit; x
    itself for a real tensor."""
    x = _complex_input(input, "conj_physical")
    return bind(CONJ, (x,), NO_ATTRS) if _is_complex(x) else x


def resolve_conj(input: Tensor) -> Tensor:  # noqa: A002
    """x without its conjugate bit: a copy of its values when it has one, else x itself."""
    x = _complex_input(input, "resolve_conj")
    return ew.clone(x) if x._is_conj else x


def is_conj(input: Tensor) -> bool:  # noqa: A002
    """Whether x has torch's conjugate bit: a result of conj() not yet resolved."""
    return _complex_input(input, "is_conj")._is_conj


# ---- the negative bit ---------------------------------------------------------------------------

def neg_view(input: Tensor) -> Tensor:  # noqa: A002
    """-x with torch's negative bit (`is_neg()`) flipped, any dtype but bool (torch._neg_view).
    As conj() here, the values are negated now: the result shares no memory with x
    (docs/differences.md). Views of it keep the bit; `imag` of a conjugated tensor has it."""
    x = _complex_input(input, "_neg_view")
    if x._dtype is dtypes.bool_:
        raise dtypes.kernel_error("neg_cpu", x._dtype)
    out = ew.neg(x)
    out._is_neg = not x._is_neg
    if x._is_conj:
        out._is_conj = True  # torch's _neg_view is a view: it keeps the conjugate bit
    return out


def resolve_neg(input: Tensor) -> Tensor:  # noqa: A002
    """x without its negative bit: a copy of its values when it has one, else x itself."""
    x = _complex_input(input, "resolve_neg")
    return ew.clone(x) if x._is_neg else x


def is_neg(input: Tensor) -> bool:  # noqa: A002
    """Whether x has torch's negative bit: a result of `_neg_view()`, or the imaginary part of a
    conjugated tensor (`z.conj().imag`), not yet resolved, or a view of one."""
    return _complex_input(input, "is_neg")._is_neg


# ---- view_as_real, view_as_complex, real, imag ---------------------------------------------------

def _view_as_real_impl(x):
    # A trailing dim of one element becomes two of the part type: a view for any strides.
    return x[..., np.newaxis].view(x.real.dtype)


def _view_as_complex_impl(x):
    if x.dtype == np.float16:  # complex32's storage is complex64: a copy of the exact parts
        x = x.astype(np.float32)
    return x.view(np.complex64 if x.dtype == np.float32 else np.complex128)[..., 0]


VIEW_AS_REAL = define_op(
    name="view_as_real", arity=1, shape=lambda shape: (*shape, 2),
    dtype=lambda inputs, attrs: (None, inputs[0]._dtype.to_real()), impl=_view_as_real_impl,
    vjp=lambda ctx, g: (make_complex(select(g, -1, 0), select(g, -1, 1)),), saves=(),
    jvp=lambda inputs, tangents, out, attrs: view_as_real(tangents[0]),
    lowering=Extern("complex_view", ("data",), reinterprets=True), view=True,
    grad_name="ViewAsRealBackward0", static_vjp=True, complex=True, batch=leading_batch_rule,
    limited=COMPLEX32)


def _view_as_complex_shape(shape):
    if not shape:
        raise ValueError("Input tensor must have one or more dimensions")
    if shape[-1] != 2:
        raise ValueError("Tensor must have a last dimension of size 2")
    return tuple(shape[:-1])


VIEW_AS_COMPLEX = define_op(
    name="view_as_complex", arity=1, shape=_view_as_complex_shape,
    dtype=lambda inputs, attrs: (None, inputs[0]._dtype.to_complex()),
    impl=_view_as_complex_impl,
    vjp=lambda ctx, g: (view_as_real(g.resolve_conj()),), saves=(),
    jvp=lambda inputs, tangents, out, attrs: view_as_complex(tangents[0].contiguous()),
    lowering=Extern("complex_view", ("data",), reinterprets=True), view=True,
    grad_name="ViewAsComplexBackward0", static_vjp=True, complex=True, batch=leading_batch_rule,
    limited=COMPLEX32)


def view_as_real(input: Tensor) -> Tensor:  # noqa: A002
    """A real view of a complex tensor: a last dim of 2 holds each element's real and imaginary
    parts; writes through either are seen by the other."""
    x = _complex_input(input, "view_as_real")
    if not _is_complex(x):
        raise RuntimeError("view_as_real is only supported for complex tensors")
    if x._is_conj:
        raise RuntimeError(
            "view_as_real doesn't work on unresolved conjugated tensors.  To resolve the "
            "conjugate tensor so you can view it as real, use self.resolve_conj(); however, be "
            "warned that the resulting tensor will NOT alias the original.")
    return bind(VIEW_AS_REAL, (x,), NO_ATTRS)


def view_as_complex(input: Tensor) -> Tensor:  # noqa: A002
    """A complex view of a float16, float32 or float64 tensor whose last dim of 2 holds real
    and imaginary parts (contiguous in that dim), without that dim; shares x's memory (but
    float16's complex32, a read-only copy: docs/notes/complex32.md)."""
    x = _complex_input(input, "view_as_complex")
    if x._dtype not in (dtypes.float16, dtypes.float32, dtypes.float64):
        raise RuntimeError("view_as_complex is only supported for half, float and double "
                           "tensors, but got a tensor of scalar type: "
                           f"{dtypes.scalar_type_name(x._dtype)}")
    shape = tuple(x.shape)
    if not shape:
        raise RuntimeError("Input tensor must have one or more dimensions")
    if shape[-1] != 2:
        raise RuntimeError("Tensor must have a last dimension of size 2")
    data = x._payload
    if data is not None and data.__class__ is np.ndarray:
        itemsize = data.itemsize
        if data.strides[-1] != itemsize:
            raise RuntimeError("Tensor must have a last dimension with stride 1")
        if any(stride % (2 * itemsize) for stride, extent in
               zip(data.strides[:-1], data.shape[:-1]) if extent > 1):
            raise RuntimeError("Tensor must have a stride divisible by 2 for all but last "
                               "dimension")
    return bind(VIEW_AS_COMPLEX, (x,), NO_ATTRS)


def retyping_view(op):
    """(view, inverse) for a view op whose elements are not its input's (view_as_real and
    view_as_complex, the views of real and imag), else None: inplace.py writes through such a
    view by writing the inverse of what the view shows."""
    if op is VIEW_AS_REAL:
        return lambda x: bind(VIEW_AS_REAL, (x,), NO_ATTRS), view_as_complex_copy
    if op is VIEW_AS_COMPLEX:
        return view_as_complex_copy, lambda x: bind(VIEW_AS_REAL, (x,), NO_ATTRS)
    return None


def view_as_complex_copy(x: Tensor) -> Tensor:
    """The complex tensor of a real tensor's last-dim pairs, whatever its strides."""
    return make_complex(select(x, -1, 0), select(x, -1, 1))


def real(input: Tensor) -> Tensor:  # noqa: A002
    """The real parts of a complex tensor, a view (torch's select of view_as_real); x itself
    for a real tensor."""
    x = _complex_input(input, "real")
    if not _is_complex(x):
        return x
    # A conjugated tensor holds its values (conj above): its parts are views as any other's.
    return select(bind(VIEW_AS_REAL, (x,), NO_ATTRS), -1, 0)


def imag(input: Tensor) -> Tensor:  # noqa: A002
    """The imaginary parts of a complex tensor, a view (torch's select of view_as_real)."""
    x = _complex_input(input, "imag")
    if not _is_complex(x):
        raise RuntimeError("imag is not implemented for tensors with non-complex dtypes.")
    out = select(bind(VIEW_AS_REAL, (x,), NO_ATTRS), -1, 1)
    if x._is_conj:
        # torch reads the imaginary parts of a conjugated tensor as the negated parts of its
        # memory: a view with the negative bit flipped (here the values are negated already)
        out._is_neg = not x._is_neg
    return out


# ---- complex, polar --------------------------------------------------------------------------

def _rule_complex(inputs, attrs):
    real_part, imaginary = (x._dtype for x in inputs)
    if real_part not in _PART_DTYPES or imaginary is not real_part:
        if not (real_part.is_floating_point and imaginary.is_floating_point):
            raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                               f"{dtypes.scalar_type_name(real_part)} and "
                               f"{dtypes.scalar_type_name(imaginary)}")
        if imaginary is not real_part:
            raise RuntimeError(f"Expected object of scalar type "
                               f"{dtypes.scalar_type_name(real_part)} but got scalar type "
                               f"{dtypes.scalar_type_name(imaginary)} for second argument")
        raise RuntimeError("Expected both inputs to be Half, Float or Double tensors but got "
                           f"{dtypes.scalar_type_name(real_part)} and "
                           f"{dtypes.scalar_type_name(imaginary)}")
    return None, real_part.to_complex()


_PART_DTYPES = (dtypes.float16, dtypes.float32, dtypes.float64)


def _complex_impl(real_part, imaginary):
    # The parts stored as they are (real + 1j * imag would turn an infinite imaginary part's
    # 0 * inf into a NaN real part).
    dtype = np.complex128 if real_part.dtype == np.float64 else np.complex64  # complex32's too
    out = np.empty(np.broadcast_shapes(real_part.shape, imaginary.shape), dtype=dtype)
    out.real = real_part
    out.imag = imaginary
    return out


def _complex_jvp(inputs, tangents, out, attrs):
    real_tangent, imaginary_tangent = tangents
    if real_tangent is None:
        real_tangent = ew.fill_like(inputs[0], 0)
    if imaginary_tangent is None:
        imaginary_tangent = ew.fill_like(inputs[1], 0)
    return make_complex(real_tangent, imaginary_tangent)


COMPLEX = define_op(
    name="complex", arity=2, shape=broadcast_shapes, dtype=_rule_complex, impl=_complex_impl,
    vjp=lambda ctx, g: (real(g) if ctx.needs_input_grad[0] else None,
                        imag(g) if ctx.needs_input_grad[1] else None),
    saves=(), jvp=_complex_jvp,
    lowering=Elementwise("complex({0}, {1})", exact=True, complex_expression=True),
    static_vjp=True, complex=True, batch=broadcasting_rule, limited=COMPLEX32)


def make_complex(real: Tensor, imag: Tensor) -> Tensor:  # noqa: A002, F811 - torch's names
    """The complex tensor real + i imag of two float16, float32 or float64 tensors of one dtype,
    broadcasting (torch.complex)."""
    for position, (name, value) in enumerate((("real", real), ("imag", imag)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"complex(): argument '{name}' (position {position}) must be "
                            f"Tensor, not {type(value).__name__}")
    return bind(COMPLEX, (real, imag), NO_ATTRS)


def polar(abs: Tensor, angle: Tensor) -> Tensor:  # noqa: A002, F811 - torch's names
    """The complex tensor abs * (cos(angle) + i sin(angle)) of two float32 or float64 tensors
    of one dtype, broadcasting."""
    for position, (name, value) in enumerate((("abs", abs), ("angle", angle)), 1):
        if not isinstance(value, Tensor):
            raise TypeError(f"polar(): argument '{name}' (position {position}) must be "
                            f"Tensor, not {type(value).__name__}")
    _rule_complex((abs, angle), NO_ATTRS)
    if abs.dtype is dtypes.float16:  # torch's polar kernel has no complex32
        raise dtypes.kernel_error("polar_cpu", abs.dtype)
    return make_complex(abs * ew.cos(angle), abs * ew.sin(angle))


# ---- angle and sgn of complex tensors ----------------------------------------------------------

def _angle_vjp(ctx, g):
    # torch's angle_backward: the angle grows along i z / |z|^2; 0 at z = 0.
    z = ctx.inputs[0]
    return (ew.where(z == 0, 0, g * z / ew.abs(z).square() * 1j),)


def _angle_jvp(inputs, tangents, out, attrs):
    z = inputs[0]
    return ew.where(z == 0, 0, imag(tangents[0] * conj_physical(z)) / ew.abs(z).square())


ANGLE = define_op(
    name="angle", arity=1, shape=lambda shape: shape,
    dtype=lambda inputs, attrs: (None, inputs[0]._dtype.to_real()), impl=np.angle,
    vjp=_angle_vjp, saves=(0,), jvp=_angle_jvp,
    lowering=Elementwise("angle({0})", complex_expression=True),
    static_vjp=True, complex=True, batch=broadcasting_rule)


def _sgn_impl(z):
    modulus = np.abs(z)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(modulus == 0, 0, z / np.where(modulus == 0, 1, modulus)).astype(z.dtype)


def _sgn_part(z, out, value):
    """torch's sgn_backward, which is also its JVP: (v - s^2 conj(v)) / (2 |z|), 0 at z = 0,
    from ds = dz / (2|z|) - s^2 dz* / (2|z|)."""
    modulus = ew.abs(z)
    return ew.where(modulus == 0, 0, (value - out * out * conj_physical(value)) / (2 * modulus))


SGN = define_op(
    name="sgn", arity=1, shape=lambda shape: shape,
    dtype=lambda inputs, attrs: (None, inputs[0]._dtype), impl=_sgn_impl,
    vjp=lambda ctx, g: (_sgn_part(ctx.inputs[0], ctx.out, g),), saves=(0, "out"),
    jvp=lambda inputs, tangents, out, attrs: _sgn_part(inputs[0], out, tangents[0]),
    lowering=Elementwise("sgn({0})", exact=True, complex_expression=True), static_vjp=True,
    complex=True, limited=COMPLEX32,
    batch=broadcasting_rule)


def sgn(input: Tensor) -> Tensor:  # noqa: A002
    """Elementwise z / |z| of a complex tensor (0 at 0); sign(x) of a real one."""
    x = _complex_input(ew.operand(input, "sgn"), "sgn")
    return bind(SGN, (x,), NO_ATTRS) if _is_complex(x) else ew.sign(x)


def real_result(name: str, function):
    """function for an in-place method, refusing a complex tensor, into which its real result
    would be written back as complex numbers (torch's error for abs_)."""
    def checked(x, *args, **kwargs):
        if isinstance(x, Tensor) and _is_complex(x):
            raise RuntimeError(f"In-place {name} is not supported for complex tensors.")
        return function(x, *args, **kwargs)

    checked.__name__ = checked.__qualname__ = function.__name__
    checked.__doc__ = function.__doc__
    return checked


def complex_angle(x: Tensor) -> Tensor:
    """The argument of each element of a complex tensor, in (-pi, pi] (elementwise_extra.angle
    gives real tensors theirs)."""
    return bind(ANGLE, (x,), NO_ATTRS)
