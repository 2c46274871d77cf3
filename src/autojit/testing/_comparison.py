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

__all__ = ["assert_close", "assert_allclose"]

# {dtype: (rtol, atol)}, torch's
_DTYPE_PRECISIONS = {
    dtypes.float16: (0.001, 1e-5),
    dtypes.bfloat16: (0.016, 1e-5),
    dtypes.float32: (1.3e-6, 1e-5),
    dtypes.float64: (1e-7, 1e-7),
}
_NUMBER_DTYPES = {int: dtypes.int64, float: dtypes.float64}


class _Failure(Exception):
    """A failed comparison: the exception type to raise, its message and the item's path."""

    def __init__(self, kind: type, message: str, path: tuple = ()):
        super().__init__(message)
        self.kind, self.message, self.path = kind, message, path

    def error(self, msg=None) -> Exception:
        if isinstance(msg, str):
            return self.kind(msg)
        message = self.message
        if self.path:
            message += ("\n\nThe failure occurred for item "
                        f"{''.join(str([item]) for item in self.path)}")
        return self.kind(msg(message) if callable(msg) else message)


class _Unsupported(Exception):
    """This kind of pair does not take these inputs: the next one is tried."""


def _dtype_text(dtype) -> str:
    return f"autojit.{dtype.name}" if isinstance(dtype, dtypes.DType) else str(dtype)


def _tolerances(dtype_list, rtol, atol, path, precisions=None) -> tuple:
    if (rtol is None) ^ (atol is None):
        raise _Failure(ValueError, "Both 'rtol' and 'atol' must be either specified or omitted, "
                       f"but got no {'rtol' if rtol is None else 'atol'}.", path)
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


# ---- the kinds of pairs ---------------------------------------------------------------------

def _none_pair(actual, expected, path, options):
    if not (actual is None or expected is None):
        raise _Unsupported
    if not (actual is None and expected is None):
        raise _Failure(AssertionError, f"None mismatch: {actual} is not {expected}", path)


def _boolean_pair(actual, expected, path, options):
    kinds = (bool, np.bool_)
    if not (isinstance(actual, kinds) and isinstance(expected, kinds)):
        raise _Unsupported
    actual, expected = bool(actual), bool(expected)
    if actual is not expected:
        raise _Failure(AssertionError, f"Booleans mismatch: {actual} is not {expected}", path)


def _number_pair(actual, expected, path, options):
    kinds = (int, float, complex, np.number)
    if not (isinstance(actual, kinds) and isinstance(expected, kinds)):
        raise _Unsupported
    actual, expected = (value.item() if isinstance(value, np.number) else value
                        for value in (actual, expected))
    rtol, atol = _tolerances([_NUMBER_DTYPES.get(type(value), dtypes.float64)
                              for value in (actual, expected)],
                             options["rtol"], options["atol"], path)
    if options["check_dtype"] and type(actual) is not type(expected):
        raise _Failure(AssertionError, f"The (d)types do not match: {type(actual)} != "
                       f"{type(expected)}.", path)
    if actual == expected:
        return
    if options["equal_nan"] and cmath.isnan(actual) and cmath.isnan(expected):
        return
    abs_diff = abs(actual - expected)
    if cmath.isfinite(abs_diff) and abs_diff <= atol + rtol * abs(expected):
        return
    raise _Failure(AssertionError, _scalar_message(actual, expected, rtol, atol), path)


def _tensor_of(value):
    if isinstance(value, Tensor):
        return value
    try:
        return as_tensor(value)
    except Exception:
        raise _Unsupported from None


def _tensor_pair(actual, expected, path, options):
    if not (isinstance(actual, type(expected)) or isinstance(expected, type(actual))):
        raise _Unsupported
    if not options["allow_subclasses"] and type(actual) is not type(expected):
        raise _Unsupported
    actual, expected = _tensor_of(actual), _tensor_of(expected)
    rtol, atol = _tolerances([actual.dtype, expected.dtype], options["rtol"], options["atol"],
                             path)

    def mismatch(name, mine, theirs):
        raise _Failure(AssertionError, f"The values for attribute '{name}' do not match: "
                       f"{mine} != {theirs}.", path)

    if actual.shape != expected.shape:
        mismatch("shape", actual.shape, expected.shape)
    if options["check_stride"] and actual.stride() != expected.stride():
        mismatch("stride()", actual.stride(), expected.stride())
    if options["check_device"] and actual.device != expected.device:
        mismatch("device", actual.device, expected.device)
    if options["check_dtype"] and actual.dtype is not expected.dtype:
        mismatch("dtype", _dtype_text(actual.dtype), _dtype_text(expected.dtype))
    if "meta" in (actual.device.type, expected.device.type):
        return
    actual, expected = actual.detach(), expected.detach()
    if actual.device != expected.device:
        actual, expected = actual.cpu(), expected.cpu()
    if actual.dtype is not expected.dtype:
        common = promote_types(actual.dtype, expected.dtype)
        actual, expected = actual.to(common), expected.to(common)
    matches = isclose(actual, expected, rtol=rtol, atol=atol, equal_nan=options["equal_nan"])
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
    raise _Failure(AssertionError, message, path)


def _object_pair(actual, expected, path, options):
    try:
        equal = actual == expected
    except Exception as error:
        raise _Failure(ValueError, f"{actual} == {expected} failed with:\n{error}.",
                       path) from error
    if not equal:
        raise _Failure(AssertionError, f"{actual} != {expected}", path)


_PAIRS = (_none_pair, _boolean_pair, _number_pair, _tensor_pair)


def _compare(actual, expected, path: tuple, options: dict, pairs) -> None:
    sequences, mappings = collections.abc.Sequence, collections.abc.Mapping
    if isinstance(actual, sequences) and not isinstance(actual, str) and \
            isinstance(expected, sequences) and not isinstance(expected, str):
        if len(actual) != len(expected):
            raise _Failure(AssertionError, f"The length of the sequences mismatch: "
                           f"{len(actual)} != {len(expected)}", path)
        for index in range(len(actual)):
            _compare(actual[index], expected[index], (*path, index), options, pairs)
        return
    if isinstance(actual, mappings) and isinstance(expected, mappings):
        actual_keys, expected_keys = set(actual.keys()), set(expected.keys())
        if actual_keys != expected_keys:
            raise _Failure(AssertionError, (
                "The keys of the mappings do not match:\n"
                f"Missing keys in the actual mapping: {sorted(expected_keys - actual_keys)}\n"
                "Additional keys in the actual mapping: "
                f"{sorted(actual_keys - expected_keys)}"), path)
        keys = actual_keys
        with contextlib.suppress(Exception):
            keys = sorted(keys)
        for key in keys:
            _compare(actual[key], expected[key], (*path, key), options, pairs)
        return
    for pair in pairs:
        try:
            pair(actual, expected, path, options)
            return
        except _Unsupported:
            continue
    raise _Failure(TypeError, f"No comparison pair was able to handle inputs of type "
                   f"{type(actual)} and {type(expected)}.", path)


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
    options = {"allow_subclasses": allow_subclasses, "rtol": rtol, "atol": atol,
               "equal_nan": equal_nan, "check_device": check_device,
               "check_dtype": check_dtype, "check_layout": check_layout,
               "check_stride": check_stride}
    try:
        _compare(actual, expected, (), options, _PAIRS)
    except _Failure as failure:
        raise failure.error(msg) from None


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
