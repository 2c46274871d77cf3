"""autojit.testing against torch.testing: assert_close's passes and failures with the same
exception types and messages (tolerances per dtype, NaN, dtype/device/shape/stride checks,
nested sequences and mappings, numbers, msg), the deprecated assert_allclose, and make_tensor's
ranges, layouts and errors.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_compare import torch

import autojit


def _outcome(framework, function):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            function(framework)
        except Exception as error:  # noqa: BLE001 - the outcome compared
            # The frameworks' names in the message: the dtype's prefix, the class's module.
            return type(error).__name__, str(error).replace("torch.", "autojit.")
    return None


NAN = float("nan")
CASES = {
    "close": lambda t: t.testing.assert_close(t.tensor([1.0, 2.0]), t.tensor([1.0, 2.0 + 1e-6])),
    "not_close": lambda t: t.testing.assert_close(t.tensor([1.0, 2.0, 3.0]),
                                                  t.tensor([1.0, 2.5, 3.0])),
    "not_close_2d": lambda t: t.testing.assert_close(t.arange(12.0).reshape(3, 4),
                                                     t.arange(12.0).reshape(3, 4) * 1.01),
    "nan": lambda t: t.testing.assert_close(t.tensor([NAN]), t.tensor([NAN])),
    "equal_nan": lambda t: t.testing.assert_close(t.tensor([NAN]), t.tensor([NAN]),
                                                  equal_nan=True),
    "dtype": lambda t: t.testing.assert_close(t.ones(1), t.ones(1, dtype=t.float64)),
    "dtype_unchecked": lambda t: t.testing.assert_close(t.ones(1), t.ones(1, dtype=t.float64),
                                                        check_dtype=False),
    "shape": lambda t: t.testing.assert_close(t.ones(2), t.ones(3)),
    "integers": lambda t: t.testing.assert_close(t.tensor([1, 2]), t.tensor([1, 3])),
    "uint8": lambda t: t.testing.assert_close(t.tensor([250], dtype=t.uint8),
                                              t.tensor([3], dtype=t.uint8)),
    "zero_dim": lambda t: t.testing.assert_close(t.tensor(1.0), t.tensor(1.1)),
    "floats": lambda t: t.testing.assert_close(1.0, 1.1),
    "floats_close": lambda t: t.testing.assert_close(1.0, 1.0 + 1e-9),
    "ints": lambda t: t.testing.assert_close(1, 2),
    "int_and_float": lambda t: t.testing.assert_close(1, 1.0),
    "booleans": lambda t: t.testing.assert_close(True, False),
    "none": lambda t: t.testing.assert_close(None, 1),
    "lists": lambda t: t.testing.assert_close([t.ones(2), 1], [t.ones(2), 2]),
    "list_lengths": lambda t: t.testing.assert_close([1, 2], [1]),
    "mappings": lambda t: t.testing.assert_close({"a": t.ones(2), "b": t.zeros(1)},
                                                 {"a": t.ones(2), "b": t.ones(1)}),
    "mapping_keys": lambda t: t.testing.assert_close({"a": 1}, {"b": 1}),
    "msg": lambda t: t.testing.assert_close(t.ones(2), t.zeros(2), msg="custom"),
    "msg_callable": lambda t: t.testing.assert_close(t.ones(2), t.zeros(2),
                                                     msg=lambda text: "prefix " + text),
    "rtol_only": lambda t: t.testing.assert_close(t.ones(2), t.ones(2), rtol=1e-3),
    "tolerances": lambda t: t.testing.assert_close(t.ones(2), t.ones(2) * 1.01, rtol=0.02,
                                                   atol=0),
    "numpy_arrays": lambda t: t.testing.assert_close(np.arange(3.0), np.arange(3.0) + 1),
    "requires_grad": lambda t: t.testing.assert_close(t.ones(2, requires_grad=True) * 2,
                                                      t.full((2,), 2.0)),
    "float16": lambda t: t.testing.assert_close(t.tensor([1.0], dtype=t.float16),
                                                t.tensor([1.0005], dtype=t.float16)),
    "infinity": lambda t: t.testing.assert_close(t.tensor([float("inf")]), t.tensor([1.0])),
    "strings": lambda t: t.testing.assert_close("a", "b"),
    "tuples": lambda t: t.testing.assert_close((1, 2.0), (1, 2.5)),
    "empty": lambda t: t.testing.assert_close(t.ones(0), t.ones(0)),
    "stride": lambda t: t.testing.assert_close(t.ones(2, 3).t(), t.ones(3, 2),
                                               check_stride=True),
    "allclose": lambda t: t.testing.assert_allclose(t.tensor([1.0]), [1.00001]),
    "allclose_fails": lambda t: t.testing.assert_allclose(t.tensor([1.0]), [1.1]),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_assert_close_as_torch(name):
    assert _outcome(autojit, CASES[name]) == _outcome(torch, CASES[name])


def test_assert_allclose_is_deprecated():
    with pytest.warns(FutureWarning, match="assert_allclose\\(\\)` is deprecated"):
        autojit.testing.assert_allclose(autojit.ones(1), autojit.ones(1))


def test_make_tensor_as_torch():
    for t in (torch, autojit):
        x = t.testing.make_tensor(3, 4, dtype=t.float32, device="cpu", low=-1, high=1)
        assert x.shape == (3, 4) and x.dtype is t.float32
        assert bool(((x >= -1) & (x < 1)).all())
        ints = t.testing.make_tensor((50,), dtype=t.int64, device="cpu")
        assert bool(((ints >= -9) & (ints < 10)).all())
        flags = t.testing.make_tensor(20, dtype=t.bool, device="cpu")
        assert flags.dtype is t.bool
        nonzero = t.testing.make_tensor(100, dtype=t.int8, device="cpu", low=-1, high=2,
                                        exclude_zero=True)
        assert bool((nonzero != 0).all())
        strided = t.testing.make_tensor(2, 3, dtype=t.float64, device="cpu",
                                        noncontiguous=True, requires_grad=True)
        assert not strided.is_contiguous() and strided.requires_grad
        laid = t.testing.make_tensor(2, 3, 4, 5, dtype=t.float32, device="cpu",
                                     memory_format=t.channels_last)
        assert laid.is_contiguous(memory_format=t.channels_last)
        small = t.testing.make_tensor(100, dtype=t.uint8, device="cpu", low=-5, high=3)
        assert bool((small < 3).all())


MAKE_TENSOR_ERRORS = {
    "low_high": lambda t: t.testing.make_tensor(2, dtype=t.float32, device="cpu", low=2, high=1),
    "nan": lambda t: t.testing.make_tensor(2, dtype=t.float32, device="cpu", low=float("nan")),
    "interval": lambda t: t.testing.make_tensor(2, dtype=t.uint8, device="cpu", low=-5, high=-1),
    "requires_grad_int": lambda t: t.testing.make_tensor(2, dtype=t.int64, device="cpu",
                                                         requires_grad=True),
    "exclusive": lambda t: t.testing.make_tensor(2, 2, dtype=t.float32, device="cpu",
                                                 noncontiguous=True,
                                                 memory_format=t.channels_last),
}


@pytest.mark.parametrize("name", sorted(MAKE_TENSOR_ERRORS))
def test_make_tensor_errors_as_torch(name):
    mine, theirs = (_outcome(t, MAKE_TENSOR_ERRORS[name]) for t in (autojit, torch))
    assert mine[0] == theirs[0]
    if name != "exclusive":  # torch's message prints the format's repr
        assert mine[1] == theirs[1]


def _image_pair_assert(t, actual, expected, **options):
    """torchvision's test helper, written on torch.testing._comparison's classes: a
    TensorLikePair subclass comparing images by their mean absolute error, and its
    assert_close through not_close_error_metas."""
    comparison = t.testing._comparison

    class ImagePair(comparison.TensorLikePair):
        def __init__(self, actual, expected, *, mae=False, **other_parameters):
            super().__init__(actual, expected, **other_parameters)
            self.mae = mae

        def compare(self):
            actual, expected = self.actual, self.expected
            self._compare_attributes(actual, expected)
            actual, expected = self._equalize_attributes(actual, expected)
            if self.mae:
                if actual.dtype is t.uint8:
                    actual, expected = actual.to(t.int), expected.to(t.int)
                mae = float(t.abs(actual - expected).float().mean())
                if mae > self.atol:
                    self._fail(AssertionError, f"The MAE of the images is {mae}, but only "
                               f"{self.atol} is allowed.")
            else:
                super()._compare_values(actual, expected)

    error_metas = comparison.not_close_error_metas(
        actual, expected, pair_types=(comparison.NonePair, comparison.BooleanPair,
                                      comparison.NumberPair, ImagePair,
                                      comparison.TensorLikePair), **options)
    if error_metas:
        raise error_metas[0].to_error(options.get("msg"))


CLASS_CASES = {
    "image_mae_fails": lambda t: _image_pair_assert(
        t, t.tensor([[10, 20]], dtype=t.uint8), t.tensor([[12, 20]], dtype=t.uint8), mae=True,
        rtol=0, atol=0.5),
    "image_mae_passes": lambda t: _image_pair_assert(
        t, t.tensor([[10, 20]], dtype=t.uint8), t.tensor([[11, 20]], dtype=t.uint8), mae=True,
        rtol=0, atol=1),
    "image_values": lambda t: _image_pair_assert(
        t, [t.ones(2), {"k": t.zeros(3)}], [t.ones(2), {"k": t.ones(3)}]),
    "image_dtype": lambda t: _image_pair_assert(t, t.ones(2), t.ones(2, dtype=t.float64)),
    "image_none": lambda t: _image_pair_assert(t, None, t.ones(1)),
}


@pytest.mark.parametrize("name", sorted(CLASS_CASES))
def test_comparison_classes_as_torch(name):
    assert _outcome(autojit, CLASS_CASES[name]) == _outcome(torch, CLASS_CASES[name])


def test_not_close_error_metas_and_pairs_as_torch():
    def metas(t):
        comparison = t.testing._comparison
        found = comparison.not_close_error_metas(
            [t.ones(2), {"k": t.zeros(1), "j": 3}], [t.ones(2), {"k": t.ones(1), "j": 4}],
            pair_types=(comparison.NumberPair, comparison.TensorLikePair))
        objects = comparison.not_close_error_metas("a", "b")  # ObjectPair by default
        pair = comparison.NumberPair(1, 1.0, id=(), check_dtype=True)
        try:
            pair.compare()
        except comparison.ErrorMeta as error:
            objects.append(error)
        try:
            comparison.BooleanPair(1, True, id=())
        except comparison.UnsupportedInputs:
            objects.append("unsupported")
        return [(meta.type.__name__, meta.msg.replace("torch.", "autojit."), meta.id)
                if not isinstance(meta, str) else meta for meta in (*found, *objects)]

    assert metas(autojit) == metas(torch)
