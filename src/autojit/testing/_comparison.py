"""assert_close and assert_allclose: torch.testing's comparison, its rules and its messages.

torch's algorithm (torch/testing/_comparison.py), on autojit's tensors: the inputs are walked
together through sequences and mappings (the first difference in length or keys fails), and
each pair of leaves is compared by the first kind that takes it: None, booleans, Python and
NumPy numbers, tensor-likes (tensors, and what `as_tensor` turns into one: NumPy arrays, nested
lists of numbers), and anything else by `==`. Tensors must agree in shape and, unless told not
to check, device, dtype and strides; their values are close where `|actual - expected| <= atol
+ rtol * |expected|` (NaN only with equal_nan), with torch's default tolerances per dtype. The
first failure is raised, with torch's message (the mismatch count, the greatest differences and
their indices), or `msg` (a string, or a function of the generated message).
"""

from __future__ import annotations

import abc
import cmath
import collections.abc
import contextlib
import warnings

import numpy as np

from ..ops.masks import isclose
from ..tensor import dtypes
from ..tensor.creation import as_tensor, tensor
from ..tensor.tensor import Tensor
from ..tensor.type_info import promote_types

__all__ = ["BooleanPair", "ErrorMeta", "NonePair", "NumberPair", "ObjectPair", "Pair",
           "TensorLikePair", "UnsupportedInputs", "assert_allclose", "assert_close",
           "get_tolerances", "not_close_error_metas", "originate_pairs"]

# {dtype: (rtol, atol)}, torch's
_DTYPE_PRECISIONS = {
    dtypes.float16: (0.001, 1e-5),
    dtypes.bfloat16: (0.016, 1e-5),
    dtypes.float32: (1.3e-6, 1e-5),
    dtypes.float64: (1e-7, 1e-7),
}
_NUMBER_DTYPES = {int: dtypes.int64, float: dtypes.float64}


class ErrorMeta(Exception):
    """A failed comparison (torch's ErrorMeta): the exception type to raise, its message and
    the item's path (`id`); `to_error(msg)` makes the exception the user sees."""

    def __init__(self, type: type, msg: str, *, id: tuple = ()):  # noqa: A002
        super().__init__("A comparison failed: ErrorMeta.to_error() makes its user-facing "
                         "error.")
        self.type, self.msg, self.id = type, msg, id

    def to_error(self, msg=None) -> Exception:
        if isinstance(msg, str):
            return self.type(msg)
        message = self.msg
        if self.id:
            message += ("\n\nThe failure occurred for item "
                        f"{''.join(str([item]) for item in self.id)}")
        return self.type(msg(message) if callable(msg) else message)


class UnsupportedInputs(Exception):  # noqa: N818 - torch's name
    """A pair type does not take these inputs: the next one is tried."""


def _dtype_text(dtype) -> str:
    return f"autojit.{dtype.name}" if isinstance(dtype, dtypes.DType) else str(dtype)


def _tolerances(dtype_list, rtol, atol, path, precisions=None) -> tuple:
    if (rtol is None) ^ (atol is None):
        raise ErrorMeta(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                        f"but got no {'rtol' if rtol is None else 'atol'}.", id=path)
    if rtol is not None:
        return rtol, atol
    table = precisions or _DTYPE_PRECISIONS
    found = [table.get(dtype, (0.0, 0.0)) for dtype in dtype_list]
    return max(pair[0] for pair in found), max(pair[1] for pair in found)


def _mismatch_message(identifier, extra, abs_diff, abs_index, atol, rel_diff, rel_index,
                      rtol) -> str:
    equality = rtol == 0 and atol == 0

    def line(kind, diff, index, tolerance):
        text = (f"{kind.title()} difference: {diff}" if index is None
                else f"Greatest {kind} difference: {diff} at index {index}")
        return text + ("" if equality else f" (up to {tolerance} allowed)") + "\n"

    message = f"{identifier} are not {'equal' if equality else 'close'}!\n\n"
    if extra:
        message += f"{extra.strip()}\n"
    message += line("absolute", abs_diff, abs_index, atol)
    message += line("relative", rel_diff, rel_index, rtol)
    return message.strip()


def _scalar_message(actual, expected, rtol, atol, identifier="Scalars") -> str:
    abs_diff = abs(actual - expected)
    rel_diff = float("inf") if expected == 0 else abs_diff / abs(expected)
    return _mismatch_message(identifier, f"Expected {expected} but got {actual}.", abs_diff,
                             None, atol, rel_diff, None, rtol)


def _tensor_message(actual: np.ndarray, expected: np.ndarray, matches: np.ndarray, rtol,
                    atol) -> str:
    count = matches.size
    mismatched = count - int(matches.sum())
    extra = f"Mismatched elements: {mismatched} / {count} ({mismatched / count:.1%})"
    quotient = actual.dtype
    if actual.dtype.kind != "f":
        # Integers differ in int64; their quotient is true division, in the default dtype.
        actual, expected = actual.astype(np.int64), expected.astype(np.int64)
        quotient = dtypes.get_default_dtype().numpy
    with np.errstate(all="ignore"):
        abs_diff = np.abs(actual.reshape(-1) - expected.reshape(-1))
        abs_diff[matches.reshape(-1)] = 0
        rel_diff = (abs_diff.astype(quotient) /
                    np.abs(expected.reshape(-1)).astype(quotient)).astype(quotient)
    rel_diff[matches.reshape(-1)] = 0
    # torch.max's index: the first greatest value, NaN counting as the greatest.
    abs_at = int(np.argmax(abs_diff))
    rel_at = int(np.argmax(rel_diff))

    def unravel(flat):
        return tuple(int(i) for i in np.unravel_index(flat, matches.shape)) if \
            matches.shape else ()

    return _mismatch_message("Tensor-likes", extra, abs_diff[abs_at].item(), unravel(abs_at),
                             atol, rel_diff[rel_at].item(), unravel(rel_at), rtol)


def get_tolerances(*inputs, rtol, atol, id: tuple = ()) -> tuple:  # noqa: A002
    """The (rtol, atol) for inputs (tensors or dtypes): the given pair, or the greatest of
    torch's defaults for their dtypes."""
    kinds = [value.dtype if isinstance(value, Tensor) else value for value in inputs]
    return _tolerances(kinds, rtol, atol, id)


# ---- the kinds of pairs (torch's classes, which libraries subclass: torchvision's ImagePair) --

class Pair(abc.ABC):
    """Two leaves to compare: `compare()` raises an ErrorMeta (`_fail`) where they differ; the
    constructor raises UnsupportedInputs (`_inputs_not_supported`) for inputs it does not
    take, and the next pair type is tried."""

    def __init__(self, actual, expected, *, id: tuple = (), **unknown_parameters):  # noqa: A002
        self.actual, self.expected, self.id = actual, expected, id
        self._unknown_parameters = unknown_parameters

    @staticmethod
    def _inputs_not_supported():
        raise UnsupportedInputs

    @staticmethod
    def _check_inputs_isinstance(*inputs, cls):
        if not all(isinstance(value, cls) for value in inputs):
            Pair._inputs_not_supported()

    def _fail(self, type: type, msg: str, *, id: tuple = ()):  # noqa: A002
        raise ErrorMeta(type, msg, id=self.id if not id and hasattr(self, "id") else id)

    @abc.abstractmethod
    def compare(self) -> None:
        """Raise through `_fail` where actual and expected differ."""

    def extra_repr(self) -> list:
        return []

    def __repr__(self) -> str:
        fields = [("id", self.id), ("actual", self.actual), ("expected", self.expected),
                  *[(name, getattr(self, name)) if isinstance(name, str) else name
                    for name in self.extra_repr()]]
        body = ",\n".join(f"    {name}={value!s}," for name, value in fields)
        return f"{type(self).__name__}(\n{body}\n)"


class ObjectPair(Pair):
    """Any two objects, compared by `==`."""

    def compare(self) -> None:
        try:
            equal = self.actual == self.expected
        except Exception as error:
            raise ErrorMeta(ValueError, f"{self.actual} == {self.expected} failed with:\n"
                            f"{error}.", id=self.id) from error
        if not equal:
            self._fail(AssertionError, f"{self.actual} != {self.expected}")


class NonePair(Pair):
    """Inputs of which one is None: both must be."""

    def __init__(self, actual, expected, **other_parameters):
        if not (actual is None or expected is None):
            self._inputs_not_supported()
        super().__init__(actual, expected, **other_parameters)

    def compare(self) -> None:
        if not (self.actual is None and self.expected is None):
            self._fail(AssertionError, f"None mismatch: {self.actual} is not {self.expected}")


class BooleanPair(Pair):
    """Python and NumPy booleans."""

    def __init__(self, actual, expected, *, id: tuple = (), **other_parameters):  # noqa: A002
        self._check_inputs_isinstance(actual, expected, cls=self._supported_types)
        super().__init__(bool(actual), bool(expected), id=id, **other_parameters)

    @property
    def _supported_types(self) -> tuple:
        return (bool, np.bool_)

    def compare(self) -> None:
        if self.actual is not self.expected:
            self._fail(AssertionError,
                       f"Booleans mismatch: {self.actual} is not {self.expected}")


class NumberPair(Pair):
    """Python and NumPy numbers, close within torch's tolerances of their types (int64,
    float64, complex128)."""

    _TYPE_TO_DTYPE = {int: dtypes.int64, float: dtypes.float64, complex: dtypes.complex128}
    _NUMBER_TYPES = (int, float, complex)

    def __init__(self, actual, expected, *, id: tuple = (), rtol=None, atol=None,  # noqa: A002
                 equal_nan: bool = False, check_dtype: bool = False, **other_parameters):
        self._check_inputs_isinstance(actual, expected, cls=(*self._NUMBER_TYPES, np.number))
        actual, expected = (value.item() if isinstance(value, np.number) else value
                            for value in (actual, expected))
        super().__init__(actual, expected, id=id, **other_parameters)
        self.rtol, self.atol = _tolerances(
            [self._TYPE_TO_DTYPE.get(type(value), dtypes.float64) for value in (actual, expected)],
            rtol, atol, id)
        self.equal_nan, self.check_dtype = equal_nan, check_dtype

    def compare(self) -> None:
        actual, expected = self.actual, self.expected
        if self.check_dtype and type(actual) is not type(expected):
            self._fail(AssertionError, f"The (d)types do not match: {type(actual)} != "
                       f"{type(expected)}.")
        if actual == expected:
            return
        if self.equal_nan and cmath.isnan(actual) and cmath.isnan(expected):
            return
        abs_diff = abs(actual - expected)
        if cmath.isfinite(abs_diff) and abs_diff <= self.atol + self.rtol * abs(expected):
            return
        self._fail(AssertionError, _scalar_message(actual, expected, self.rtol, self.atol))

    def extra_repr(self) -> list:
        return ["rtol", "atol", "equal_nan", "check_dtype"]


class TensorLikePair(Pair):
    """Tensors, and what `as_tensor` makes one of (NumPy arrays, nested lists of numbers):
    their attributes (shape, layout, strides, device, dtype) as checked, then their values
    close within the tolerances."""

    def __init__(self, actual, expected, *, id: tuple = (), allow_subclasses: bool = True,  # noqa: A002
                 rtol=None, atol=None, equal_nan: bool = False, check_device: bool = True,
                 check_dtype: bool = True, check_layout: bool = True,
                 check_stride: bool = False, **other_parameters):
        actual, expected = self._process_inputs(actual, expected, id=id,
                                                allow_subclasses=allow_subclasses)
        super().__init__(actual, expected, id=id, **other_parameters)
        self.rtol, self.atol = _tolerances([actual.dtype, expected.dtype], rtol, atol, id)
        self.equal_nan, self.check_device, self.check_dtype = equal_nan, check_device, \
            check_dtype
        self.check_layout, self.check_stride = check_layout, check_stride

    def _process_inputs(self, actual, expected, *, id, allow_subclasses):  # noqa: A002
        related = isinstance(actual, type(expected)) or isinstance(expected, type(actual))
        if not related or not allow_subclasses and type(actual) is not type(expected):
            self._inputs_not_supported()
        return self._to_tensor(actual), self._to_tensor(expected)

    def _to_tensor(self, tensor_like) -> Tensor:
        if isinstance(tensor_like, Tensor):
            return tensor_like
        try:
            return as_tensor(tensor_like)
        except Exception:
            self._inputs_not_supported()

    def compare(self) -> None:
        actual, expected = self.actual, self.expected
        self._compare_attributes(actual, expected)
        if "meta" in (actual.device.type, expected.device.type):
            return
        actual, expected = self._equalize_attributes(actual, expected)
        self._compare_values(actual, expected)

    def _compare_attributes(self, actual, expected) -> None:
        def mismatch(name, mine, theirs):
            self._fail(AssertionError, f"The values for attribute '{name}' do not match: "
                       f"{mine} != {theirs}.")

        if actual.shape != expected.shape:
            mismatch("shape", actual.shape, expected.shape)
        if self.check_layout and actual.layout != expected.layout:
            mismatch("layout", actual.layout, expected.layout)
        elif self.check_stride and actual.stride() != expected.stride():
            mismatch("stride()", actual.stride(), expected.stride())
        if self.check_device and actual.device != expected.device:
            mismatch("device", actual.device, expected.device)
        if self.check_dtype and actual.dtype is not expected.dtype:
            mismatch("dtype", _dtype_text(actual.dtype), _dtype_text(expected.dtype))

    def _equalize_attributes(self, actual, expected) -> tuple:
        """Both on the CPU where their devices differ, in their promoted dtype where their
        dtypes do, and dense where their layouts do."""
        actual, expected = actual.detach(), expected.detach()
        if actual.device != expected.device:
            actual, expected = actual.cpu(), expected.cpu()
        if actual.dtype is not expected.dtype:
            common = promote_types(actual.dtype, expected.dtype)
            actual, expected = actual.to(common), expected.to(common)
        if actual.layout != expected.layout:
            actual, expected = (value.to_dense() if value.layout.name != "strided" else value
                                for value in (actual, expected))
        return actual, expected

    def _compare_values(self, actual, expected) -> None:
        if actual.layout.name != "strided":
            actual, expected = actual.to_dense(), expected.to_dense()
        self._compare_regular_values_close(actual, expected, rtol=self.rtol, atol=self.atol,
                                           equal_nan=self.equal_nan)

    def _compare_regular_values_close(self, actual, expected, *, rtol, atol,
                                      equal_nan: bool, identifier=None) -> None:
        matches = isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan)
        matched = matches.cpu().numpy()
        if matched.all():
            return
        mine, theirs = actual.cpu(), expected.cpu()
        if mine.dtype is dtypes.bfloat16:
            mine, theirs = mine.float(), theirs.float()
        if actual.ndim == 0:
            message = _scalar_message(mine.item(), theirs.item(), rtol, atol)
        else:
            message = _tensor_message(mine.numpy(), theirs.numpy(), matched, rtol, atol)
        if identifier is not None:
            message = message.replace("Tensor-likes", identifier, 1).replace(
                "Scalars", identifier, 1)
        self._fail(AssertionError, message)

    def extra_repr(self) -> list:
        return ["rtol", "atol", "equal_nan", "check_device", "check_dtype", "check_layout",
                "check_stride"]


def originate_pairs(actual, expected, *, pair_types, sequence_types=(collections.abc.Sequence,),
                    mapping_types=(collections.abc.Mapping,), id: tuple = (),  # noqa: A002
                    **options) -> list:
    """The pairs of leaves of actual and expected, walked together through sequences and
    mappings, each made by the first of `pair_types` that takes it (torch's
    originate_pairs); an ErrorMeta where the structures differ or no type takes a pair."""
    if isinstance(actual, sequence_types) and not isinstance(actual, str) and \
            isinstance(expected, sequence_types) and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise ErrorMeta(AssertionError, f"The length of the sequences mismatch: "
                            f"{len(actual)} != {len(expected)}", id=id)
        pairs = []
        for index in range(len(actual)):
            pairs.extend(originate_pairs(
                actual[index], expected[index], pair_types=pair_types,
                sequence_types=sequence_types, mapping_types=mapping_types,
                id=(*id, index), **options))
        return pairs
    if isinstance(actual, mapping_types) and isinstance(expected, mapping_types):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            raise ErrorMeta(AssertionError, (
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(expected_keys - actual_keys)}\n"
                "Additional keys in the actual mapping: "
                f"{sorted(actual_keys - expected_keys)}"), id=id)
        keys = actual_keys
        with contextlib.suppress(Exception):
            keys = sorted(keys)
        pairs = []
        for key in keys:
            pairs.extend(originate_pairs(
                actual[key], expected[key], pair_types=pair_types,
                sequence_types=sequence_types, mapping_types=mapping_types, id=(*id, key),
                **options))
        return pairs
    for pair_type in pair_types:
        try:
            return [pair_type(actual, expected, id=id, **options)]
        except UnsupportedInputs:
            continue
    raise ErrorMeta(TypeError, f"No comparison pair was able to handle inputs of type "
                    f"{type(actual)} and {type(expected)}.", id=id)


def not_close_error_metas(actual, expected, pair_types=(ObjectPair,),
                          sequence_types=(collections.abc.Sequence,),
                          mapping_types=(collections.abc.Mapping,), **options) -> list:
    """The ErrorMetas of the pairs that are not close (torch's not_close_error_metas): a
    structural mismatch raises its error at once; assert_close raises the first."""
    __tracebackhide__ = True
    try:
        pairs = originate_pairs(actual, expected, pair_types=pair_types,
                                sequence_types=sequence_types, mapping_types=mapping_types,
                                **options)
    except ErrorMeta as error_meta:
        raise error_meta.to_error() from None
    error_metas = []
    for pair in pairs:
        try:
            pair.compare()
        except ErrorMeta as error_meta:
            error_metas.append(error_meta)
    return error_metas


def assert_close(actual, expected, *, allow_subclasses: bool = True, rtol=None, atol=None,
                 equal_nan: bool = False, check_device: bool = True, check_dtype: bool = True,
                 check_layout: bool = True, check_stride: bool = False, msg=None) -> None:
    """Assert that `actual` and `expected` are close, as torch.testing.assert_close: tensors,
    numbers and (nested) sequences and mappings of them, `|actual - expected| <= atol + rtol *
    |expected|` elementwise, with torch's default tolerances per dtype (float32: rtol 1.3e-6,
    atol 1e-5; float64: 1e-7 and 1e-7; float16: 1e-3 and 1e-5; bfloat16: 1.6e-2 and 1e-5;
    integers and bools exactly), and torch's AssertionError message on failure (or `msg`).

    >>> import autojit
    >>> from autojit.testing import assert_close
    >>> assert_close(autojit.tensor([1.0, 2.0]), autojit.tensor([1.0, 2.0 + 1e-6]))
    >>> try:
    ...     assert_close(autojit.tensor([1.0, 2.0, 3.0]), autojit.tensor([1.0, 2.5, 3.0]))
    ... except AssertionError as error:
    ...     print(error)
    Tensor-likes are not close!
    <BLANKLINE>
    Mismatched elements: 1 / 3 (33.3%)
    Greatest absolute difference: 0.5 at index (1,) (up to 1e-05 allowed)
    Greatest relative difference: 0.20000000298023224 at index (1,) (up to 1.3e-06 allowed)
    """
    __tracebackhide__ = True
    error_metas = not_close_error_metas(
        actual, expected, pair_types=(NonePair, BooleanPair, NumberPair, TensorLikePair),
        allow_subclasses=allow_subclasses, rtol=rtol, atol=atol, equal_nan=equal_nan,
        check_device=check_device, check_dtype=check_dtype, check_layout=check_layout,
        check_stride=check_stride)
    if error_metas:
        raise error_metas[0].to_error(msg)


def assert_allclose(actual, expected, rtol=None, atol=None, equal_nan: bool = True,
                    msg: str = "") -> None:
    """Deprecated, as in torch: assert_close with looser default tolerances, equal_nan=True and
    no dtype check, non-tensor inputs made tensors first."""
    warnings.warn("`autojit.testing.assert_allclose()` is deprecated since 1.12 and will be "
                  "removed in a future release. Please use `autojit.testing.assert_close()` "
                  "instead. You can find detailed upgrade instructions in "
                  "https://github.com/pytorch/pytorch/issues/61844.", FutureWarning, stacklevel=2)
    if not isinstance(actual, Tensor):
        actual = tensor(actual)
    if not isinstance(expected, Tensor):
        expected = tensor(expected, dtype=actual.dtype)
    if rtol is None and atol is None:
        rtol, atol = _tolerances([actual.dtype, expected.dtype], None, None, (), {
            dtypes.float16: (1e-3, 1e-3), dtypes.float32: (1e-4, 1e-5),
            dtypes.float64: (1e-5, 1e-8)})
    assert_close(actual, expected, rtol=rtol, atol=atol, equal_nan=equal_nan,
                 check_device=True, check_dtype=False, check_stride=False, msg=msg or None)
