"""dtypes and type promotion.

Every Tensor carries one of the ten DType objects below (torch's other dtypes are named, as
MissingDType, and refused). Ops ask `result_type` which dtype a
mix of tensors and Python scalars computes in; the rules are torch's (see
docs/notes/type-promotion.md): dimensioned tensors decide within a category, zero-dim tensors
and Python scalars only lift the category (bool < integer < floating), and a Python float never
upcasts a float32 tensor.

bfloat16 has no NumPy dtype: its tensors hold float32 arrays whose values are all bfloat16
numbers (`round_to_bfloat16`), so NumPy computes on them in float32 and each op's result is
rounded again (docs/notes/bfloat16.md).
"""

from __future__ import annotations

import numpy as np

from .symbolic import SymInt

BOOL, INTEGER, FLOATING = 0, 1, 2


class DType:
    """A tensor element type; printed as ``autojit.float32`` and ``f32`` in IR text."""

    __slots__ = ("name", "numpy", "short", "category", "itemsize", "is_signed")

    def __init__(self, name: str, numpy_dtype, short: str, category: int):
        self.name = name
        self.numpy = np.dtype(numpy_dtype)
        self.short = short
        self.category = category
        self.itemsize = self.numpy.itemsize
        # torch's dtype.is_signed: False for bool and uint8 only.
        self.is_signed = self.numpy.kind in "if"

    @property
    def is_floating_point(self) -> bool:
        return self.category == FLOATING

    def __repr__(self) -> str:
        return f"autojit.{self.name}"

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

# torch's ScalarType names, which its messages quote ("expected Double but got Float").
SCALAR_TYPE_NAMES = {"float16": "Half", "float32": "Float", "float64": "Double", "int32": "Int",
                     "int64": "Long", "bool": "Bool", "bfloat16": "BFloat16", "uint8": "Byte",
                     "int8": "Char", "int16": "Short"}


# The C++ names of the element types, which other messages of torch quote ("long int").
C_TYPE_NAMES = {"float16": "c10::Half", "float32": "float", "float64": "double",
                "int32": "int", "int64": "long int", "bool": "bool",
                "bfloat16": "c10::BFloat16", "uint8": "unsigned char", "int8": "signed char",
                "int16": "short int"}


def scalar_type_name(dtype: DType) -> str:
    """torch's name of the element type in its messages: "Float", "Long", "Bool", ..."""
    return SCALAR_TYPE_NAMES[dtype.name]


def c_type_name(dtype: DType) -> str:
    """The C++ name of the element type in torch's messages: "float", "long int", ..."""
    return C_TYPE_NAMES[dtype.name]


class MissingDType:
    """A dtype of torch's that autojit has no tensors of (complex numbers; unsigned integers
    wider than a byte). Its name exists, so that code which only compares dtypes with it
    (`x.dtype == torch.complex64`, a table keyed by dtype) runs; a tensor of it cannot be made,
    and asking for one raises TypeError naming it (to_dtype, dtype_argument)."""

    __slots__ = ("name", "itemsize", "is_complex", "is_signed")

    def __init__(self, name: str, itemsize: int, is_complex: bool):
        self.name, self.itemsize, self.is_complex = name, itemsize, is_complex
        self.is_signed = is_complex

    is_floating_point = False

    def __repr__(self) -> str:
        return f"autojit.{self.name}"

    def __reduce__(self):
        return (missing_from_name, (self.name,))


complex32 = MissingDType("complex32", 4, True)
complex64 = MissingDType("complex64", 8, True)
complex128 = MissingDType("complex128", 16, True)
uint16 = MissingDType("uint16", 2, False)
uint32 = MissingDType("uint32", 4, False)
uint64 = MissingDType("uint64", 8, False)
MISSING = {d.name: d for d in (complex32, complex64, complex128, uint16, uint32, uint64)}
chalf, cfloat, cdouble = complex32, complex64, complex128


def missing_from_name(name: str) -> MissingDType:
    return MISSING[name]


def refuse_missing(dtype: MissingDType):
    raise TypeError(f"autojit has no tensors of dtype {dtype.name}: its dtypes are "
                    "float16, bfloat16, float32, float64, uint8, int8, int16, int32, int64 and "
                    "bool (no complex numbers)")


half, float, double = float16, float32, float64  # noqa: A001 - torch's aliases
int, long, short = int32, int64, int16  # noqa: A001

ALL = (bool_, uint8, int8, int16, int32, int64, float16, bfloat16, float32, float64)
# A float32 array is float32's: bfloat16 is never inferred from NumPy data.
_BY_NUMPY = {d.numpy: d for d in ALL if d is not bfloat16}
_BY_NAME = {d.name: d for d in ALL}
# Rank within a category decides promotion between two dtypes of the same category.
# uint8 and int8 share a rank: neither holds the other, and promote() gives int16 for the pair.
_RANK = {bool_: 0, uint8: 1, int8: 1, int16: 2, int32: 3, int64: 4, float16: 5, bfloat16: 5,
         float32: 6, float64: 7}

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


def from_name(name: str) -> DType:
    return _BY_NAME[name]


def from_numpy(numpy_dtype) -> DType:
    """The DType of a NumPy dtype; the integer types autojit lacks (uint16 and wider unsigned
    ones) map to int64, float types to float64."""
    numpy_dtype = np.dtype(numpy_dtype)
    found = _BY_NUMPY.get(numpy_dtype)
    if found is not None:
        return found
    if numpy_dtype.kind in "iu":
        return int64
    if numpy_dtype.kind == "f":
        return float64
    raise TypeError(f"can't convert np.ndarray of type {numpy_dtype} to an autojit dtype; "
                    "the only supported types are: float64, float32, float16, int64, int32, int16, "
                    "int8, uint8, bool")


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
    if isinstance(dtype, str) and dtype in _BY_NAME:
        return _BY_NAME[dtype]
    if isinstance(dtype, MissingDType):
        refuse_missing(dtype)
    return from_numpy(dtype)


_py_int = (0).__class__
_py_float = (0.0).__class__


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
    if isinstance(dtype, str):
        raise TypeError(f"{function}(): argument 'dtype' must be autojit.dtype, not str")
    if isinstance(dtype, MissingDType):
        refuse_missing(dtype)
    return from_numpy(dtype)
# A symbolic size (symbolic.SymInt) is an int in type promotion.
_integers = (_py_int, SymInt)


def promote(a: DType, b: DType) -> DType:
    """The smallest dtype that holds both (torch.promote_types)."""
    if a is b:
        return a
    if a.category != b.category:
        return a if a.category > b.category else b
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
_FILL_TYPE_NAMES = {"uint8": "uint8_t", "int8": "int8_t", "int16": "int16_t", "int32": "int"}


def check_fits(value, dtype: DType, fill: bool = True) -> None:
    """torch's error for a number outside an integer dtype narrower than int64 (NaN is never
    inside), where it fills a tensor (`fill`: full, fill_, clamp's bounds) or makes one
    (tensor); an int down to -max fits uint8, wrapping as two's complement does (-1 is 255).
    Ints in arithmetic wrap whatever their size (wrap_integer)."""
    if dtype.category != INTEGER or dtype.itemsize == 8 or isinstance(value, bool):
        return
    info = np.iinfo(dtype.numpy)
    low = -info.max if not dtype.is_signed and isinstance(value, _integers) else info.min
    if not low <= value <= info.max:
        name = _FILL_TYPE_NAMES[dtype.name] if fill else dtype.name
        raise RuntimeError(f"value cannot be converted to type {name} without overflow")


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


def scalar_dtype(value) -> DType:
    """The dtype a Python scalar would have as a tensor of its own."""
    if isinstance(value, bool):
        return bool_
    if isinstance(value, _integers):
        return int64
    return get_default_dtype()


def scalar_category(value) -> int:
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, _integers):
        return INTEGER
    return FLOATING


def result_type(dimensioned: list[DType], zero_dim: list[DType], scalars: list) -> DType:
    """torch.result_type over three priority groups: tensors with dims, zero-dim tensors, scalars.

    A lower-priority group only matters when it brings a higher category; zero-dim tensors then
    contribute their own dtype, scalars the default dtype of their category.
    """
    result = None
    for group in (dimensioned, zero_dim):
        group_type = None
        for dtype in group:
            group_type = dtype if group_type is None else promote(group_type, dtype)
        if group_type is not None and (result is None or group_type.category > result.category):
            result = group_type
    if scalars:
        category = max(scalar_category(s) for s in scalars)
        if result is None:
            result = _promote_scalars(scalars)
        elif category > result.category:
            result = get_default_dtype() if category == FLOATING else int64
    return result


def _promote_scalars(scalars) -> DType:
    result = scalar_dtype(scalars[0])
    for s in scalars[1:]:
        result = promote(result, scalar_dtype(s))
    return result
