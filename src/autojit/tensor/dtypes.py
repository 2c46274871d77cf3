"""dtypes and type promotion.

Every Tensor carries one of the sixteen DType objects below. Ops ask `result_type` which dtype a
mix of tensors and Python scalars computes in; the rules are torch's (see
docs/notes/type-promotion.md): dimensioned tensors decide within a category, zero-dim tensors
and Python scalars only lift the category (bool < integer < floating < complex), and a Python
float never upcasts a float32 tensor. complex64 and complex128 are NumPy's complex types
(docs/notes/complex.md).

bfloat16 has no NumPy dtype: its tensors hold float32 arrays whose values are all bfloat16
numbers (`round_to_bfloat16`), so NumPy computes on them in float32 and each op's result is
rounded again (docs/notes/bfloat16.md). complex32 (chalf), torch's complex of float16 parts,
has none either: its tensors hold complex64 arrays whose parts are all float16 numbers
(`round_to_complex32`), rounded again after each op (docs/notes/complex32.md).

uint16, uint32 and uint64 are NumPy's own types, with torch's limited support of them (its
"barebones" unsigned types): no promotion with any other integer or complex dtype, and only the
ops whose torch kernels take them (`DType.limited`; docs/notes/unsigned-integers.md).
"""

from __future__ import annotations

import numpy as np

from . import float8 as _float8
from .symbolic import SymInt

BOOL, INTEGER, FLOATING, COMPLEX = 0, 1, 2, 3


# The name reprs give the package (`autojit.float32`, `autojit.Size([2])`): "torch" once the
# drop-in stands in for torch (drop_in/__init__.py), so that a torch program prints as under
# torch.
REPR_PREFIX = ["autojit"]


class DType:
    """A tensor element type; printed as ``autojit.float32`` and ``f32`` in IR text."""

    __slots__ = ("name", "numpy", "short", "category", "itemsize", "is_signed", "_real",
                 "_complex", "limited", "float8")

    def __init__(self, name: str, numpy_dtype, short: str, category: int):
        self.name = name
        self.numpy = np.dtype(numpy_dtype)
        self.short = short
        self.category = category
        self.itemsize = self.numpy.itemsize
        # torch's dtype.is_signed: False for bool and uint8 only.
        self.is_signed = self.numpy.kind in "ifc"
        self._real = self._complex = None  # to_real() and to_complex(), set below
        # torch's limited support: only the ops whose kernels list the dtype compute in it
        # (the registry refuses the others with torch's NotImplementedError), and it promotes
        # with no other integer dtype (uint16, uint32, uint64).
        self.limited = False
        self.float8 = None  # the format of a float8 dtype (tensor/float8.py)

    @property
    def is_floating_point(self) -> bool:
        """Whether the dtype is a real floating type (complex dtypes are not)."""
        return self.category == FLOATING

    @property
    def is_complex(self) -> bool:
        """Whether the dtype is complex32, complex64 or complex128."""
        return self.category == COMPLEX

    def to_real(self) -> DType:
        """The real dtype of a complex one's parts (complex64 -> float32); any other dtype is
        its own."""
        return self._real or self

    def to_complex(self) -> DType:
        """The complex dtype whose parts are this floating dtype (float64 -> complex128,
        float16 -> complex32); a complex dtype is its own."""
        if self.category == COMPLEX:
            return self
        if self._complex is None:
            raise RuntimeError(f"Unknown Complex ScalarType for {SCALAR_TYPE_NAMES[self.name]}")
        return self._complex

    def __repr__(self) -> str:
        return f"{REPR_PREFIX[0]}.{self.name}"

    def __reduce__(self):
        return (from_name, (self.name,))


float16 = DType("float16", np.float16, "f16", FLOATING)
# Stored as float32 (see the module's docstring); an element is two bytes in torch.
bfloat16 = DType("bfloat16", np.float32, "bf16", FLOATING)
bfloat16.itemsize = 2
float32 = DType("float32", np.float32, "f32", FLOATING)
float64 = DType("float64", np.float64, "f64", FLOATING)
uint8 = DType("uint8", np.uint8, "u8", INTEGER)
int8 = DType("int8", np.int8, "i8", INTEGER)
int16 = DType("int16", np.int16, "i16", INTEGER)
int32 = DType("int32", np.int32, "i32", INTEGER)
int64 = DType("int64", np.int64, "i64", INTEGER)
bool_ = DType("bool", np.bool_, "bool", BOOL)
uint16 = DType("uint16", np.uint16, "u16", INTEGER)
uint32 = DType("uint32", np.uint32, "u32", INTEGER)
uint64 = DType("uint64", np.uint64, "u64", INTEGER)
# torch's "barebones" unsigned types (docs/notes/unsigned-integers.md).
UNSIGNED = (uint16, uint32, uint64)
for _unsigned in UNSIGNED:
    _unsigned.limited = True
complex64 = DType("complex64", np.complex64, "c64", COMPLEX)
complex128 = DType("complex128", np.complex128, "c128", COMPLEX)
# Stored as complex64 (see the module's docstring); an element is four bytes in torch. torch's
# support of it is limited, as of the unsigned types (DType.limited).
complex32 = DType("complex32", np.complex64, "c32", COMPLEX)
complex32.itemsize, complex32.limited = 4, True
complex64._real, complex128._real, complex32._real = float32, float64, float16
float32._complex, float64._complex, float16._complex = complex64, complex128, complex32
# bfloat16 has float32's range: torch maps it to complex64.
bfloat16._complex = complex64

# The float8 dtypes: stored as float32 arrays of the format's numbers, as bfloat16 is, with
# torch's limited support (tensor/float8.py, docs/notes/float8.md).
FLOAT8 = tuple(DType(_name, np.float32, "f8" + _name[6:], FLOATING)
               for _name in _float8.FORMATS)
for _float8_dtype in FLOAT8:
    _float8_dtype.itemsize, _float8_dtype.limited = 1, True
    _float8_dtype.float8 = _float8.FORMATS[_float8_dtype.name]
    _float8_dtype.is_signed = _float8_dtype.float8.signed
float8_e4m3fn, float8_e5m2, float8_e4m3fnuz, float8_e5m2fnuz, float8_e8m0fnu = FLOAT8

# torch's ScalarType names, which its messages quote ("expected Double but got Float").
SCALAR_TYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "int32": "Int",
                     "int64": "Long", "bool": "Bool", "bfloat16": "BFloat16", "uint8": "Byte",
                     "int8": "Char", "int16": "Short", "complex64": "ComplexFloat",
                     "complex128": "ComplexDouble", "uint16": "UInt16", "uint32": "UInt32",
                     "uint64": "UInt64", "complex32": "ComplexHalf",
                     "float8_e4m3fn": "Float8_e4m3fn", "float8_e5m2": "Float8_e5m2",
                     "float8_e4m3fnuz": "Float8_e4m3fnuz", "float8_e5m2fnuz": "Float8_e5m2fnuz",
                     "float8_e8m0fnu": "Float8_e8m0fnu"}


# The C++ names of the element types, which other messages of torch quote ("long int").
C_TYPE_NAMES = {"float16": "c10::Half", "float32": "float", "float64": "double",
                "int32": "int", "int64": "long int", "bool": "bool",
                "bfloat16": "c10::BFloat16", "uint8": "unsigned char", "int8": "signed char",
                "int16": "short int", "complex64": "c10::complex<float>",
                "complex128": "c10::complex<double>", "uint16": "short unsigned int",
                "uint32": "unsigned int", "uint64": "long unsigned int",
                "complex32": "c10::complex<c10::Half>",
                **{d.name: "c10::" + SCALAR_TYPE_NAMES[d.name] for d in FLOAT8}}


def scalar_type_name(dtype: DType) -> str:
    """torch's name of the element type in its messages: "Float", "Long", "Bool", ..."""
    return SCALAR_TYPE_NAMES[dtype.name]


def c_type_name(dtype: DType) -> str:
    """The C++ name of the element type in torch's messages: "float", "long int", ..."""
    return C_TYPE_NAMES[dtype.name]


def kernel_error(kernel: str, dtype: DType) -> NotImplementedError:
    """torch's error for a kernel that has no loop for `dtype`:
    '"arange_cpu" not implemented for 'UInt64''."""
    return NotImplementedError(f'"{kernel}" not implemented for '
                               f"'{SCALAR_TYPE_NAMES[dtype.name]}'")


half, float, double = float16, float32, float64  # noqa: A001 - torch's aliases
int, long, short = int32, int64, int16  # noqa: A001
cfloat, cdouble, chalf = complex64, complex128, complex32

ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64, complex64,
       complex128, uint16, uint32, uint64, complex32)
# A float32 array is float32's and a complex64 one complex64's: bfloat16 and complex32 are
# never inferred from NumPy data.
_BY_NUMPY = {d.numpy: d for d in ALL if d is not bfloat16 and d is not complex32}
_BY_NAME = {d.name: d for d in ALL + FLOAT8}
# Rank within a category decides promotion between two dtypes of the same category.
# uint8 and int8 share a rank: neither holds the other, and promote() gives int16 for the pair.
# The wider unsigned types never reach it (promote() settles their pairs first).
_RANK = {bool_: 0, uint8: 1, int8: 1, int16: 2, int32: 3, int64: 4, float16: 5, bfloat16: 5,
         float32: 6, float64: 7, complex32: 8, complex64: 9, complex128: 10, uint16: 2,
         uint32: 3, uint64: 4, **{d: 5 for d in FLOAT8}}
_UNSIGNED_SET = frozenset(UNSIGNED)

_default_float = [float32]


def get_default_dtype() -> DType:
    """The dtype of tensors made from Python floats (float32 at first)."""
    return _default_float[0]


def set_default_dtype(d: DType, /) -> None:
    """Make `d` (float16, float32 or float64) the default floating-point dtype (torch's
    positional-only `d`)."""
    if not isinstance(d, DType):
        raise TypeError("invalid dtype object: only floating-point types are supported as the "
                        "default type")
    if not d.is_floating_point:
        raise TypeError("only floating-point types are supported as the default type")
    _default_float[0] = d


def get_default_complex_dtype() -> DType:
    """The dtype of tensors made from Python complex numbers: complex128 when the default dtype
    is float64, complex64 for float32 and bfloat16, complex32 for float16."""
    return _default_float[0].to_complex()


def from_name(name: str) -> DType:
    return _BY_NAME[name]


def from_numpy(numpy_dtype) -> DType:
    """The DType of a NumPy dtype; other float types (longdouble) map to float64."""
    numpy_dtype = np.dtype(numpy_dtype)
    found = _BY_NUMPY.get(numpy_dtype)
    if found is not None:
        return found
    if numpy_dtype.kind in "iu":
        return int64
    if numpy_dtype.kind == "f":
        return float64
    if numpy_dtype.kind == "c":
        return complex128
    raise TypeError(f"can't convert np.ndarray of type {numpy_dtype} to an autojit dtype; "
                    "the only supported types are: float64, float32, float16, complex64, "
                    "complex128, int64, int32, int16, int8, uint64, uint32, uint16, uint8, "
                    "bool")


def to_dtype(dtype) -> DType:
    """Accept a DType, a NumPy dtype, a Python type or a name such as 'float32'."""
    if isinstance(dtype, DType):
        return dtype
    if dtype is bool:
        return bool_
    if dtype is _py_int:
        return int64
    if dtype is _py_float:
        return get_default_dtype()
    if dtype is _py_complex:
        return get_default_complex_dtype()
    if isinstance(dtype, str) and dtype in _BY_NAME:
        return _BY_NAME[dtype]
    return from_numpy(dtype)


_py_int = (0).__class__
_INFINITY = (0.0).__class__("inf")  # (the module rebinds `float`: torch's alias)
_py_float = (0.0).__class__
_py_complex = (0j).__class__


def dtype_argument(dtype, function: str) -> DType:
    """The `dtype=` argument of a public function, read as torch reads it: a dtype, or the
    Python types float (float64), int (int64) and bool. A string raises torch's TypeError
    (`zeros(2, dtype="float")`); a NumPy dtype is accepted."""
    if isinstance(dtype, DType):
        return dtype
    if dtype is _py_float:
        return float64
    if dtype is _py_int:
        return int64
    if dtype is bool:
        return bool_
    if dtype is _py_complex:
        return complex128
    if isinstance(dtype, str):
        raise TypeError(f"{function}(): argument 'dtype' must be autojit.dtype, not str")
    return from_numpy(dtype)
# A symbolic size (symbolic.SymInt) is an int in type promotion.
_integers = (_py_int, SymInt)


def promote(a: DType, b: DType) -> DType:
    """The smallest dtype that holds both (torch.promote_types); a complex dtype with a wider
    floating one takes the floating one's precision (complex64 and float64 give complex128;
    complex32 and bfloat16 complex64). uint16, uint32 and uint64 promote with floating dtypes
    only (to the floating one), as in torch, whose RuntimeError the other pairs raise."""
    if a is b:
        return a
    if a.float8 is not None or b.float8 is not None:
        raise RuntimeError("Promotion for Float8 Types is not supported, attempted to promote "
                           f"{SCALAR_TYPE_NAMES[a.name]} and {SCALAR_TYPE_NAMES[b.name]}")
    if a in _UNSIGNED_SET or b in _UNSIGNED_SET:
        unsigned, other = (a, b) if a.limited else (b, a)
        if other.category == FLOATING:
            return other
        raise RuntimeError("Promotion for uint16, uint32, uint64 types is not supported, "
                           f"attempted to promote {SCALAR_TYPE_NAMES[a.name]} and "
                           f"{SCALAR_TYPE_NAMES[b.name]}")
    if a.category != b.category:
        high, low = (a, b) if a.category > b.category else (b, a)
        if high.category == COMPLEX and low.category == FLOATING and (
                _RANK[low] > _RANK[high.to_real()] or
                _RANK[low] == _RANK[high.to_real()] and low is not high.to_real()):
            return low.to_complex()  # (bfloat16 with complex32: bfloat16's, complex64)
        return high
    if {a, b} == {float16, float32} or {a, b} == {float16, bfloat16}:
        return float32
    if {a, b} == {uint8, int8}:
        return int16
    return a if _RANK[a] > _RANK[b] else b


def wrap_integer(value: int, dtype: DType) -> int:
    """A Python int wrapped into the range of the integer `dtype`, as torch converts numbers
    (300 as uint8 is 44, -1 is 255); one inside it is returned as it is."""
    bits = 8 * dtype.itemsize
    wrapped = value & ((1 << bits) - 1)
    if dtype.is_signed and wrapped >> (bits - 1):
        wrapped -= 1 << bits
    return value if wrapped == value else wrapped


# The C types torch's fill functions name in their overflow error (full, fill_).
_FILL_TYPE_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int",
                    "uint16": "uint16_t", "uint32": "uint32_t", "int64": "int64_t",
                    "uint64": "uint64_t"}


def check_int_argument(value: int) -> None:
    """torch's OverflowError for a Python int it cannot read as an int64 or a uint64 scalar
    (an operand, a fill value): anything outside [-2**63, 2**64)."""
    if not -2 ** 63 <= value < 2 ** 64:
        raise OverflowError("int too big to convert" if value > 0 else
                            "can't convert negative int to unsigned")


def check_fits(value, dtype: DType, fill: bool = True) -> None:
    """torch's error for a number outside an integer dtype (NaN is never inside), where it
    fills a tensor (`fill`: full, fill_, clamp's bounds, and there an int torch cannot read
    at all, check_int_argument) or makes one (tensor); an int down to -max fits the unsigned
    dtypes, wrapping as two's complement does (-1 is 255 in uint8, 2**64 - 1 in uint64). Ints
    in arithmetic wrap whatever their size (wrap_integer). A complex number has no real dtype
    to fit into, as torch says in its words."""
    if fill and value.__class__ is _py_int:
        check_int_argument(value)
    if dtype is complex32 and fill:  # each part must be within float16's finite range
        parts = (value.real, value.imag) if isinstance(value, _py_complex) else (value,)
        if any(65504.0 < abs(part) < _INFINITY for part in parts if not isinstance(part, bool)):
            raise RuntimeError("value cannot be converted to type c10::complex<c10::Half> "
                               "without overflow")
    if isinstance(value, _py_complex) and dtype.category != COMPLEX:
        name = {"float32": "float", "float64": "double", "int64": "int64_t"}.get(
            dtype.name, _FILL_TYPE_NAMES.get(dtype.name, dtype.name))
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")
    if dtype.category != INTEGER or isinstance(value, bool):
        return
    if dtype.itemsize == 8:
        # int64 takes an int of [-2**63, 2**63); uint64 one of [-2**63, 2**64) (negative ones
        # wrap) and a float of [0, 2**64]; NaN fits neither.
        if dtype is int64:
            fits = value.__class__ is not _py_int or value < 2 ** 63 or not fill
        else:
            fits = isinstance(value, _integers) or 0 <= value <= 2.0 ** 64
        if not fits:
            raise RuntimeError(f"value cannot be converted to type {_FILL_TYPE_NAMES[dtype.name]}"
                               " without overflow")
        return
    info = np.iinfo(dtype.numpy)
    low = -info.max if not dtype.is_signed and isinstance(value, _integers) else info.min
    if not low <= value <= info.max:
        name = _FILL_TYPE_NAMES[dtype.name] if fill else dtype.name
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")


# torch's warning, given once per process, when it first makes a complex32 tensor.
COMPLEX32_WARNING = ("ComplexHalf support is experimental and many operators don't support it "
                     "yet.")


def round_to_complex32(values) -> np.ndarray:
    """Complex values with each part rounded to the nearest float16 number (ties to even,
    overflow to infinity), as complex64, the way torch converts to complex32: a wider part
    goes through float32 first (c10::Half of a double is of its float), so complex128 and
    float64 values round twice, as torch's do."""
    values = np.asarray(values).astype(np.complex64)  # (a copy: the result is its own)
    with np.errstate(over="ignore"):
        values.real = values.real.astype(np.float16)
        values.imag = values.imag.astype(np.float16)
    return values


def round_to_bfloat16(values) -> np.ndarray:
    """float32 values rounded to the nearest bfloat16 number (ties to even), as float32, the
    way torch converts a float to bfloat16 (c10::BFloat16's round_to_nearest_even): the upper
    16 bits of the float32 after adding 0x7FFF plus the lowest kept bit; NaN becomes the
    quiet NaN 0x7FC0. Wider inputs go through float32 first, as torch's conversions do."""
    values = np.asarray(values, dtype=np.float32)
    bits = values.view(np.uint32)
    rounded = (bits + (np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1)))) \
        & np.uint32(0xFFFF0000)
    rounded = np.where(np.isnan(values), np.uint32(0x7FC00000), rounded).astype(np.uint32)
    return rounded.view(np.float32)


def round_to_float8(values, dtype: DType) -> np.ndarray:
    """Values rounded to the float8 `dtype`'s numbers, as float32 (tensor/float8.py)."""
    return _float8.round_to(values, dtype.float8)


def scalar_dtype(value) -> DType:
    """The dtype a Python scalar would have as a tensor of its own."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, _integers):
        return int64
    if isinstance(value, _py_complex):
        return get_default_complex_dtype()
    return get_default_dtype()


def scalar_category(value) -> int:
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, _integers):
        return INTEGER
    if isinstance(value, _py_complex):
        return COMPLEX
    return FLOATING


def result_type(dimensioned: list[DType], zero_dim: list[DType], scalars: list) -> DType:
    """torch.result_type over three priority groups: tensors with dims, zero-dim tensors, scalars.

    A lower-priority group only matters when it brings a higher category; zero-dim tensors then
    contribute their own dtype, scalars the default dtype of their category. A complex lower
    group lifting a floating higher one keeps the floating one's precision (torch's
    combine_categories: float64 with a complex64 0-d tensor is complex128).
    """
    groups = []
    for group in (dimensioned, zero_dim):
        group_type = None
        for dtype in group:
            group_type = dtype if group_type is None else promote(group_type, dtype)
        groups.append(group_type)
    groups.append(_promote_scalars(scalars) if scalars else None)
    return _combine(groups[0], _combine(groups[1], groups[2]))


def _combine(higher: DType | None, lower: DType | None) -> DType | None:
    """torch's combine_categories: the higher-priority group's dtype, lifted to the lower
    group's category when that one is higher."""
    if higher is None:
        return lower
    if lower is None or lower.category <= higher.category:
        return higher
    if lower.category == COMPLEX:
        # A floating dtype keeps its precision; an integer or bool one takes the complex.
        return higher.to_complex() if higher.category == FLOATING else lower
    if higher.category == BOOL or lower.category == FLOATING:
        return promote(higher, lower)
    return higher


def _promote_scalars(scalars) -> DType:
    """The Python scalars' dtype as torch wraps numbers: the default dtype of the highest
    category among them (int64 for ints, the default floating or complex dtype)."""
    category = max(scalar_category(s) for s in scalars)
    if category == BOOL:
        return bool_
    if category == INTEGER:
        return int64
    return get_default_complex_dtype() if category == COMPLEX else get_default_dtype()
