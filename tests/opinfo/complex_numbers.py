"""Op table rows for complex tensors: the primitives of ops/complex_numbers.py (complex,
view_as_real, view_as_complex, conj, angle and sgn of complex tensors) with the functions built
on them (polar, real, imag, conj_physical, resolve_conj), and the complex forms of the ops that
take complex tensors (rows named "complex:<op>").

Complex rows run in complex64 and complex128; the driver differentiates them in complex128
(gradcheck perturbs real and imaginary parts in turn) and compares with the NumPy reference.
Values keep away from the branch cuts of log and sqrt (the negative real axis) and from 0 where
the function is not differentiable there (abs, angle, sgn). The compiled driver
(tests/test_compile_op_table.py) runs the rows with real inputs, complex results included,
without a graph break: a compiled plan runs complex ops through their NumPy impls
(docs/notes/complex.md).
"""

from __future__ import annotations

import numpy as np

import autojit

from . import FLOATING, OpInfo, Sample

COMPLEX = ("complex64", "complex128")
_PARTS = {np.dtype("complex64"): np.float32, np.dtype("complex128"): np.float64}


def values(rng, shape, dtype, low=-2.0, high=2.0):
    """Complex values with real and imaginary parts uniform on [low, high)."""
    part = _PARTS[np.dtype(dtype)]
    return np.asarray(rng.uniform(low, high, shape).astype(part)
                      + 1j * rng.uniform(low, high, shape).astype(part), dtype=dtype)


def off_the_cut(rng, shape, dtype):
    """Complex values with a positive real part: away from log's and sqrt's branch cut."""
    part = _PARTS[np.dtype(dtype)]
    return np.asarray(rng.uniform(0.5, 2.0, shape).astype(part)
                      + 1j * rng.uniform(-2.0, 2.0, shape).astype(part), dtype=dtype)


def unary_samples(make=values):
    def samples(rng, dtype):
        return [Sample((make(rng, (3, 4), dtype),)), Sample((make(rng, (2, 3), dtype),)),
                Sample((make(rng, (), dtype),))]

    return samples


def binary_samples(first=values, second=values, scalar=1.5 - 0.5j):
    """Same shapes, broadcasting, a 0-d operand, a Python complex on either side."""
    def samples(rng, dtype):
        return [
            Sample((first(rng, (3, 4), dtype), second(rng, (3, 4), dtype))),
            Sample((first(rng, (3, 1), dtype), second(rng, (4,), dtype))),
            Sample((first(rng, (2, 3), dtype), second(rng, (), dtype))),
            Sample((first(rng, (2, 3), dtype), scalar)),
            Sample((scalar, second(rng, (3, 2), dtype))),
        ]

    return samples


def real_samples(arity, shapes=((3, 4), (2, 3), ())):
    """float32/float64 operands (broadcast against each other for two)."""
    def samples(rng, dtype):
        found = [Sample(tuple(np.asarray(rng.uniform(0.25, 2.0, shape), dtype=dtype)
                              for _ in range(arity))) for shape in shapes]
        if arity == 2:
            found.append(Sample((rng.uniform(0.25, 2.0, (3, 1)).astype(dtype),
                                 rng.uniform(-2.0, 2.0, (4,)).astype(dtype))))
        return found

    return samples


def as_complex_of(reference):
    """A reference whose complex result has the complex dtype of its first real operand."""
    def result(*arrays):
        wanted = np.complex64 if arrays[0].dtype == np.float32 else np.complex128
        return np.asarray(reference(*arrays)).astype(wanted)

    return result


def keep_dtype(reference):
    """A reference in the dtype of its first array operand (NumPy promotes a Python complex
    scalar with complex64 to complex128; torch keeps the tensor's)."""
    def result(*args, **kwargs):
        arrays = [a for arg in args for a in (arg if isinstance(arg, list) else [arg])
                  if isinstance(a, np.ndarray)]
        first = arrays[0]
        out = np.asarray(reference(*args, **kwargs))
        if out.dtype.kind not in "fc":  # bools
            return out
        return out.astype(first.dtype if out.dtype.kind == "c" else first.real.dtype)

    return result


def complex_row(op, reference, samples, primitives, **options):
    """The complex form of an op that has a real row elsewhere."""
    return OpInfo(f"complex:{op}", getattr(autojit, op), keep_dtype(reference), samples,
                  primitives=primitives, dtypes=COMPLEX, cuda=False, **options)


def _sgn(z):
    modulus = np.abs(z)
    return np.where(modulus == 0, 0, z / np.where(modulus == 0, 1, modulus))


def _matrices(rng, dtype):
    return [Sample((values(rng, (3, 4), dtype), values(rng, (4, 2), dtype))),
            Sample((values(rng, (2, 3, 4), dtype), values(rng, (4, 5), dtype))),
            Sample((values(rng, (4,), dtype), values(rng, (4, 3), dtype)))]


def _pairs(rng, dtype):
    return [Sample((rng.uniform(-2, 2, (3, 2)).astype(dtype),)),
            Sample((rng.uniform(-2, 2, (2, 3, 2)).astype(dtype),)),
            Sample((rng.uniform(-2, 2, (2,)).astype(dtype),))]


def _reduce_samples(rng, dtype):
    return [Sample((values(rng, (3, 4), dtype),)),
            Sample((values(rng, (3, 4), dtype),), {"dim": 1}),
            Sample((values(rng, (2, 3, 4), dtype),), {"dim": (0, 2), "keepdim": True})]


def _norm(z, dim=None, keepdim=False):
    return np.sqrt(np.sum(np.abs(z) ** 2, axis=dim, keepdims=keepdim))


def _var(z, dim=None, keepdim=False):
    return np.var(z, axis=dim, keepdims=keepdim, ddof=1)


def _where_samples(rng, dtype):
    return [Sample((rng.random((3, 4)) < 0.5, values(rng, (3, 4), dtype),
                    values(rng, (3, 4), dtype))),
            Sample((rng.random((3, 1)) < 0.5, values(rng, (4,), dtype), 0.5j))]


ROWS = [
    # ---- the primitives and functions of ops/complex_numbers.py
    OpInfo("complex", autojit.complex, as_complex_of(lambda re, im: re + 1j * im),
           real_samples(2), primitives=("complex",), cuda=False),
    OpInfo("polar", autojit.polar, as_complex_of(lambda r, theta: r * np.exp(1j * theta)),
           real_samples(2), primitives=("complex", "mul", "cos", "sin"),
           cuda=False),
    OpInfo("view_as_complex", autojit.view_as_complex,
           as_complex_of(lambda x: x[..., 0] + 1j * x[..., 1]), _pairs,
           primitives=("view_as_complex",), cuda=False),
    OpInfo("view_as_real", autojit.view_as_real,
           keep_dtype(lambda z: np.stack((z.real, z.imag), axis=-1)), unary_samples(),
           primitives=("view_as_real",), dtypes=COMPLEX, cuda=False),
    OpInfo("real", autojit.real, keep_dtype(np.real), unary_samples(),
           primitives=("view_as_real", "slice", "reshape"), dtypes=COMPLEX, cuda=False),
    OpInfo("imag", autojit.imag, keep_dtype(np.imag), unary_samples(),
           primitives=("view_as_real", "slice", "reshape"), dtypes=COMPLEX, cuda=False),
    OpInfo("conj", autojit.conj, keep_dtype(np.conj), unary_samples(), primitives=("conj",),
           dtypes=COMPLEX, cuda=False),
    OpInfo("conj_physical", autojit.conj_physical, keep_dtype(np.conj), unary_samples(),
           primitives=("conj",), dtypes=COMPLEX, cuda=False),
    OpInfo("resolve_conj", lambda z: autojit.resolve_conj(autojit.conj(z)), keep_dtype(np.conj),
           unary_samples(), primitives=("conj", "clone"), dtypes=COMPLEX, cuda=False),
    OpInfo("sgn", autojit.sgn, keep_dtype(_sgn), unary_samples(), primitives=("sgn",),
           dtypes=COMPLEX, cuda=False),
    OpInfo("complex:angle", autojit.angle, keep_dtype(np.angle), unary_samples(),
           primitives=("angle",), dtypes=COMPLEX, cuda=False),
    # ---- elementwise ops on complex tensors
    complex_row("abs", np.abs, unary_samples(), ("abs",)),
    complex_row("neg", np.negative, unary_samples(), ("neg",)),
    complex_row("exp", np.exp, unary_samples(), ("exp",)),
    complex_row("log", np.log, unary_samples(off_the_cut), ("log",)),
    complex_row("sqrt", np.sqrt, unary_samples(off_the_cut), ("sqrt",)),
    complex_row("sin", np.sin, unary_samples(), ("sin",)),
    complex_row("cos", np.cos, unary_samples(), ("cos",)),
    complex_row("tanh", np.tanh, unary_samples(), ("tanh",)),
    complex_row("sigmoid", lambda z: 1 / (1 + np.exp(-z)), unary_samples(), ("sigmoid",)),
    complex_row("log1p", np.log1p, unary_samples(off_the_cut), ("log1p",)),
    complex_row("expm1", np.expm1, unary_samples(), ("expm1",)),
    complex_row("reciprocal", np.reciprocal, unary_samples(off_the_cut), ("div",)),
    complex_row("square", np.square, unary_samples(), ("mul",)),
    complex_row("rsqrt", lambda z: 1 / np.sqrt(z), unary_samples(off_the_cut), ("sqrt", "div")),
    complex_row("tan", np.tan, unary_samples(), ("sin", "cos", "div")),
    complex_row("sinh", np.sinh, unary_samples(), ("exp", "sub", "mul")),
    complex_row("cosh", np.cosh, unary_samples(), ("exp", "add", "mul")),
    complex_row("asinh", np.arcsinh, unary_samples(off_the_cut),
                ("mul", "add", "sqrt", "log"), atol=1e-4),
    complex_row("atanh", np.arctanh, unary_samples(off_the_cut), ("log1p", "sub", "mul")),
    complex_row("asin", np.arcsin, unary_samples(), ("asin",)),
    complex_row("acos", np.arccos, unary_samples(), ("acos",)),
    complex_row("atan", np.arctan, unary_samples(), ("atan",)),
    complex_row("acosh", np.arccosh, unary_samples(), ("acosh",)),
    complex_row("log2", np.log2, unary_samples(off_the_cut), ("log", "div")),
    complex_row("log10", np.log10, unary_samples(off_the_cut), ("log", "div")),
    complex_row("exp2", np.exp2, unary_samples(), ("pow",)),
    complex_row("add", np.add, binary_samples(), ("add",)),
    complex_row("sub", np.subtract, binary_samples(), ("sub",)),
    complex_row("mul", np.multiply, binary_samples(), ("mul",)),
    complex_row("div", np.divide, binary_samples(second=off_the_cut), ("div",)),
    complex_row("pow", np.power, binary_samples(first=off_the_cut), ("pow",)),
    # torch.eq and ne take a Python number second only (the last sample has it first).
    complex_row("eq", np.equal, lambda rng, dtype: binary_samples()(rng, dtype)[:-1], ("eq",),
                differentiable=False),
    complex_row("ne", np.not_equal, lambda rng, dtype: binary_samples()(rng, dtype)[:-1],
                ("ne",), differentiable=False),
    complex_row("isnan", np.isnan, unary_samples(), ("isnan",), differentiable=False),
    complex_row("logical_not", np.logical_not, unary_samples(), ("logical_not",),
                differentiable=False),
    OpInfo("complex:where", autojit.where,
           lambda c, x, y: np.where(c, x, y).astype(x.dtype), _where_samples,
           primitives=("where",), dtypes=COMPLEX, cuda=False, grad_inputs=(1, 2)),
    # ---- reductions, products and layouts
    complex_row("sum", lambda z, dim=None, keepdim=False: np.sum(z, axis=dim, keepdims=keepdim),
                _reduce_samples, ("sum",)),
    complex_row("prod", lambda z, dim=None, keepdim=False: np.prod(z, axis=dim,
                                                                   keepdims=keepdim),
                lambda rng, dtype: [Sample((values(rng, (2, 3), dtype),)),
                                    Sample((values(rng, (3, 4), dtype), 1))], ("prod",)),
    complex_row("cumprod", lambda z, dim: np.cumprod(z, axis=dim),
                lambda rng, dtype: [Sample((values(rng, (3, 4), dtype), 1)),
                                    Sample((values(rng, (4,), dtype), 0))], ("cumprod",)),
    complex_row("mean", lambda z, dim=None, keepdim=False: np.mean(z, axis=dim,
                                                                   keepdims=keepdim),
                _reduce_samples, ("mean",)),
    complex_row("var", _var, _reduce_samples, ("sum", "div", "sub", "mul", "add")),
    complex_row("norm", _norm, _reduce_samples, ("vector_norm", "mul")),
    complex_row("matmul", np.matmul, _matrices, ("matmul",)),
    complex_row("cat", lambda *arrays: np.concatenate(arrays[0]),
                lambda rng, dtype: [Sample(([values(rng, (2, 3), dtype),
                                             values(rng, (1, 3), dtype)],))], ("cat",)),
    OpInfo("complex:getitem", lambda z: z[1:, ::2], keep_dtype(lambda z: z[1:, ::2]),
           lambda rng, dtype: [Sample((values(rng, (3, 4), dtype),))], primitives=("slice",),
           dtypes=COMPLEX, cuda=False),
    OpInfo("complex:to", lambda x: x.to(autojit.complex128),
           lambda x: x.astype(np.complex128), real_samples(1), primitives=("cast",),
           dtypes=FLOATING, cuda=False),
]
