"""torch.testing._internal.common_utils on the public API: TestCase with torch's assertEqual
(its default tolerances per dtype, tensors against numbers and sequences), parametrize and
subtest, and the decorators torch's autograd tests import."""

from __future__ import annotations

import contextlib
import functools
import gc
import inspect
import itertools
import math
import os
import random
import re
import sys
import textwrap
import unittest
import warnings

import numpy as np
import torch

IS_WINDOWS = sys.platform == "win32"
IS_MACOS = sys.platform == "darwin"
IS_LINUX = sys.platform.startswith("linux")
IS_FBCODE = False
IS_SANDCASTLE = False
IS_ARM64 = False
TEST_WITH_TORCHDYNAMO = False
TEST_WITH_ROCM = False
TEST_WITH_ASAN = False
TEST_WITH_TSAN = False
TEST_PRIVATEUSE1 = False
TEST_CUDA = False
TEST_MPS = False
TEST_XPU = False
TEST_NUMPY = True
TEST_SCIPY = True
TEST_WITH_SLOW = os.environ.get("PYTORCH_TEST_WITH_SLOW", "0") == "1"
SEED = 1234

# torch.testing's default tolerances, by dtype name: (rtol, atol)
_TOLERANCES = {
    "float16": (1e-3, 1e-5), "bfloat16": (1.6e-2, 1e-5), "float32": (1.3e-6, 1e-5),
    "float64": (1e-7, 1e-7), "complex32": (1e-3, 1e-5), "complex64": (1.3e-6, 1e-5),
    "complex128": (1e-7, 1e-7),
}


def _dtype_name(dtype) -> str:
    return str(dtype).rsplit(".", 1)[-1]


def _is_tensor(value) -> bool:
    return isinstance(value, torch.Tensor)


def _numpy(tensor):
    """The values of a tensor as a NumPy array (complex128, float64, or its integer/bool type)."""
    tensor = tensor.detach()
    if tensor.layout != torch.strided:
        tensor = tensor.to_dense()
    tensor = tensor.cpu()
    if tensor.is_complex():
        return tensor.to(torch.complex128).resolve_conj().numpy()
    if tensor.is_floating_point():
        return tensor.to(torch.float64).numpy()
    return tensor.numpy()


def _number_like(value) -> bool:
    return isinstance(value, (bool, int, float, complex, np.number, np.bool_))


def _sequence_of_numbers(value) -> bool:
    if isinstance(value, (list, tuple)):
        return all(_number_like(item) or _sequence_of_numbers(item) for item in value)
    return False


class _Mismatch(AssertionError):
    pass


def _compare_arrays(actual, expected, rtol, atol, equal_nan, where):
    if actual.shape != expected.shape:
        raise _Mismatch(f"The values for attribute 'shape' do not match: {actual.shape} != "
                        f"{expected.shape}{where}.")
    if actual.dtype == np.bool_ or expected.dtype == np.bool_:
        if not np.array_equal(actual, expected):
            raise _Mismatch(f"Booleans mismatch{where}: {actual} != {expected}")
        return
    if actual.size == 0:
        return
    a = actual.astype(np.complex128 if np.iscomplexobj(actual) else np.float64)
    e = expected.astype(np.complex128 if np.iscomplexobj(expected) else np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        close = np.isclose(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan)
        # infinities of one sign are equal, whatever the tolerance
        close |= (a == e)
    if not close.all():
        bad = np.argwhere(~close.reshape(a.shape) if a.ndim else ~close.reshape(()))
        first = tuple(bad[0]) if len(bad) else ()
        diff = np.abs(a - e)
        raise _Mismatch(
            f"Tensor-likes are not close!{where}\n\nMismatched elements: {int((~close).sum())} / "
            f"{close.size}\nGreatest absolute difference: {np.nanmax(diff)}\n"
            f"First mismatch at index {first}: {a[first] if a.ndim else a} vs "
            f"{e[first] if e.ndim else e} (up to {atol} allowed, rtol {rtol})")


def _tolerance(dtypes, rtol, atol):
    if rtol is not None and atol is not None:
        return rtol, atol
    pairs = [_TOLERANCES.get(_dtype_name(d), (0.0, 0.0)) for d in dtypes]
    default = (max(p[0] for p in pairs), max(p[1] for p in pairs)) if pairs else (0.0, 0.0)
    return (default[0] if rtol is None else rtol), (default[1] if atol is None else atol)


def assert_equal(actual, expected, *, rtol=None, atol=None, equal_nan=True, exact_dtype=True,
                 where=""):
    """torch's TestCase.assertEqual, on the public API."""
    if actual is None or expected is None:
        if actual is not expected:
            raise _Mismatch(f"None mismatch{where}: {actual!r} != {expected!r}")
        return
    if _is_tensor(actual) or _is_tensor(expected):
        if not _is_tensor(actual):
            actual, expected = expected, actual
        if _is_tensor(expected):
            if exact_dtype and actual.dtype != expected.dtype:
                raise _Mismatch(f"The values for attribute 'dtype' do not match: {actual.dtype} "
                                f"!= {expected.dtype}{where}.")
            rtol_, atol_ = _tolerance([actual.dtype, expected.dtype], rtol, atol)
            if actual.is_sparse != expected.is_sparse and exact_dtype:
                raise _Mismatch(f"layout mismatch{where}: {actual.layout} != {expected.layout}")
            _compare_arrays(_numpy(actual), _numpy(expected), rtol_, atol_, equal_nan, where)
            return
        if _number_like(expected):
            if actual.numel() != 1:
                raise _Mismatch(f"Comparing a tensor of {actual.numel()} elements with a "
                                f"number{where}")
            rtol_, atol_ = _tolerance([actual.dtype], rtol, atol)
            _compare_arrays(_numpy(actual).reshape(()), np.asarray(expected).reshape(()),
                            rtol_, atol_, equal_nan, where)
            return
        if _sequence_of_numbers(expected) or isinstance(expected, np.ndarray):
            rtol_, atol_ = _tolerance([actual.dtype], rtol, atol)
            _compare_arrays(_numpy(actual), np.asarray(expected), rtol_, atol_, equal_nan, where)
            return
        if isinstance(expected, (list, tuple)) and actual.dim() > 0 \
                and len(expected) == len(actual):
            for index, (a, e) in enumerate(zip(actual, expected)):
                assert_equal(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan,
                             exact_dtype=exact_dtype, where=f"{where}, item [{index}]")
            return
        raise _Mismatch(f"Cannot compare a tensor with {type(expected).__name__}{where}")
    if isinstance(actual, np.ndarray) or isinstance(expected, np.ndarray):
        _compare_arrays(np.asarray(actual), np.asarray(expected),
                        *(_tolerance([], rtol, atol)), equal_nan, where)
        return
    if isinstance(actual, str) or isinstance(expected, str):
        if actual != expected:
            raise _Mismatch(f"Strings differ{where}: {actual!r} != {expected!r}")
        return
    if isinstance(actual, dict) and isinstance(expected, dict):
        if set(actual) != set(expected):
            raise _Mismatch(f"Keys differ{where}: {sorted(map(str, actual))} != "
                            f"{sorted(map(str, expected))}")
        for key in actual:
            assert_equal(actual[key], expected[key], rtol=rtol, atol=atol, equal_nan=equal_nan,
                         exact_dtype=exact_dtype, where=f"{where}, key {key!r}")
        return
    if isinstance(actual, (list, tuple)) and isinstance(expected, (list, tuple)) \
            or isinstance(actual, torch.Size) or isinstance(expected, torch.Size):
        actual, expected = list(actual), list(expected)
        if len(actual) != len(expected):
            raise _Mismatch(f"Sequences of lengths {len(actual)} and {len(expected)}{where}")
        for index, (a, e) in enumerate(zip(actual, expected)):
            assert_equal(a, e, rtol=rtol, atol=atol, equal_nan=equal_nan,
                         exact_dtype=exact_dtype, where=f"{where}, item [{index}]")
        return
    if isinstance(actual, (set, frozenset)) or isinstance(expected, (set, frozenset)):
        if actual != expected:
            raise _Mismatch(f"Sets differ{where}: {actual} != {expected}")
        return
    if _number_like(actual) and _number_like(expected) and not isinstance(actual, bool) \
            and not isinstance(expected, bool):
        rtol_, atol_ = (rtol or 0.0), (atol or 0.0)
        if rtol is None and atol is None and (isinstance(actual, float)
                                              or isinstance(expected, float)):
            rtol_, atol_ = _TOLERANCES["float64"]
        if complex(actual) == complex(expected):
            return
        if equal_nan and all(isinstance(v, float) and math.isnan(v) for v in (actual, expected)):
            return
        if abs(complex(actual) - complex(expected)) <= atol_ + rtol_ * abs(complex(expected)):
            return
        raise _Mismatch(f"Scalars are not close{where}: {actual} != {expected}")
    if actual != expected:
        raise _Mismatch(f"Objects differ{where}: {actual!r} != {expected!r}")


def _normalize_expected(text: str) -> str:
    return textwrap.dedent(text).strip()


class TestCase(unittest.TestCase):
    """torch's TestCase: seeded random state per test, torch's assertEqual and its helpers."""

    precision = 1e-5
    rel_tol = 0
    _default_dtype_check_enabled = False

    def setUp(self):
        super().setUp()
        torch.manual_seed(SEED)
        random.seed(SEED)
        np.random.seed(SEED)
        self._default_dtype = torch.get_default_dtype()

    def tearDown(self):
        torch.set_default_dtype(self._default_dtype)
        super().tearDown()

    def assertEqual(self, x, y, msg=None, *, atol=None, rtol=None, equal_nan=True,
                    exact_dtype=True, exact_device=False, exact_layout=False,
                    exact_stride=False, exact_is_coalesced=False):
        if atol is None and rtol is None and (self.precision != 1e-5 or self.rel_tol):
            atol, rtol = self.precision, self.rel_tol
        if (atol is None) != (rtol is None):
            atol = atol if atol is not None else 0.0
            rtol = rtol if rtol is not None else 0.0
        try:
            assert_equal(x, y, rtol=rtol, atol=atol, equal_nan=equal_nan,
                         exact_dtype=exact_dtype)
        except _Mismatch as error:
            message = str(error)
            if msg is not None:
                message = (msg() if callable(msg) else str(msg)) + "\n" + message
            raise self.failureException(message) from None

    def assertNotEqual(self, x, y, msg=None, *, atol=None, rtol=None, **kwargs):
        try:
            self.assertEqual(x, y, msg, atol=atol, rtol=rtol, **kwargs)
        except AssertionError:
            return
        raise self.failureException(msg or f"{x!r} == {y!r}")

    def assertExpectedInline(self, actual, expect, skip=0):
        self.assertEqual(_normalize_expected(actual), _normalize_expected(expect))

    def assertExpected(self, s, subname=None):
        raise unittest.SkipTest("expect files of torch's repository are not part of the suite")

    def assertExpectedRaisesInline(self, exc_type, callable_, expect, *args, **kwargs):
        try:
            callable_(*args, **kwargs)
        except exc_type as error:
            self.assertExpectedInline(str(error), expect)
            return
        self.fail("Did not raise when expected to")

    def assertWarnsOnceRegex(self, category, regex=""):
        return self.assertWarnsRegex(category, regex)

    @contextlib.contextmanager
    def assertNotWarn(self, callable_=None, msg=""):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if callable_ is not None:
                callable_()
                self.assertTrue(len(caught) == 0, msg)
                return
            yield
        self.assertTrue(len(caught) == 0, f"{msg} {[str(w.message) for w in caught]}")

    def assertLeaksNoCudaTensors(self, name=None):
        return contextlib.nullcontext()

    def runWithPytorchAPIUsageStderr(self, code):
        raise unittest.SkipTest("needs torch's API usage logger")

    def assertAtenOp(self, *args, **kwargs):
        raise unittest.SkipTest("needs torch's dispatcher")


def run_tests(argv=None):
    unittest.main(argv=argv)


# -- parametrization ----------------------------------------------------------------------------

class subtest:
    """One value of a parametrized argument, with an optional name and decorators."""

    def __init__(self, arg_values, name=None, decorators=None):
        self.arg_values = arg_values
        self.name = name
        self.decorators = decorators or []


def _value_name(value) -> str:
    if isinstance(value, torch.dtype):
        return _dtype_name(value)
    if callable(value) and hasattr(value, "__name__"):
        return value.__name__
    return str(value)


class parametrize:
    """@parametrize("x", [1, 2]) or @parametrize("x,y", [(1, 2), ...]), expanded by
    instantiate_parametrized_tests (or instantiate_device_type_tests)."""

    def __init__(self, arg_str, arg_values, name_fn=None):
        self.arg_names = [name.strip() for name in arg_str.split(",") if name.strip()]
        self.arg_values = list(arg_values)
        self.name_fn = name_fn

    def __call__(self, fn):
        fn.__dict__.setdefault("_parametrizations", []).insert(0, self)
        return fn

    def cases(self):
        for value in self.arg_values:
            decorators = []
            name = None
            if isinstance(value, subtest):
                decorators, name, value = value.decorators, value.name, value.arg_values
            values = value if len(self.arg_names) > 1 else (value,)
            if name is None:
                if self.name_fn is not None:
                    name = self.name_fn(*values)
                else:
                    name = "_".join(_value_name(v) for v in values)
                    if len(self.arg_names) == 1 or True:
                        name = "_".join(f"{n}_{_value_name(v)}"
                                        for n, v in zip(self.arg_names, values))
            yield dict(zip(self.arg_names, values)), name, decorators


def expand_parametrized(name, fn):
    """(test name, function) pairs of every combination of fn's parametrizations."""
    params = getattr(fn, "_parametrizations", [])
    if not params:
        return [(name, fn)]
    result = []
    for combination in itertools.product(*(list(p.cases()) for p in params)):
        kwargs, names, decorators = {}, [], []
        for case_kwargs, case_name, case_decorators in combination:
            kwargs.update(case_kwargs)
            names.append(case_name)
            decorators.extend(case_decorators)

        def bound(self, *args, _fn=fn, _kwargs=kwargs, **more):
            return _fn(self, *args, **_kwargs, **more)

        functools.update_wrapper(bound, fn)
        bound.__dict__.pop("_parametrizations", None)
        for decorator in decorators:
            bound = decorator(bound)
        result.append((f"{name}_{'_'.join(n for n in names if n)}", bound))
    return result


def instantiate_parametrized_tests(generic_cls):
    for name, fn in list(vars(generic_cls).items()):
        if not name.startswith("test") or not getattr(fn, "_parametrizations", None):
            continue
        delattr(generic_cls, name)
        for new_name, new_fn in expand_parametrized(name, fn):
            setattr(generic_cls, new_name, new_fn)
    return generic_cls


# -- decorators and helpers ----------------------------------------------------------------------

def _skip_decorator_factory(skip: bool, default_reason: str):
    def decorator_or_factory(arg=None, *args, **kwargs):
        if callable(arg) and not isinstance(arg, str):
            return unittest.skip(default_reason)(arg) if skip else arg

        def decorator(fn):
            return unittest.skip(arg or default_reason)(fn) if skip else fn
        return decorator
    return decorator_or_factory


skipIfTorchDynamo = _skip_decorator_factory(False, "")
xfailIfTorchDynamo = _skip_decorator_factory(False, "")
skipIfMPS = _skip_decorator_factory(False, "")
skipIfRocm = _skip_decorator_factory(False, "")
skipIfXpu = _skip_decorator_factory(False, "")
skipIfWindows = _skip_decorator_factory(False, "")
skipIfNoLapack = _skip_decorator_factory(False, "")
skipIfSlowGradcheckEnv = _skip_decorator_factory(False, "")
skipIfTorchInductor = _skip_decorator_factory(False, "")
markDynamoStrictTest = _skip_decorator_factory(False, "")
skipCUDANonDefaultStreamIf = lambda condition: (lambda fn: fn)  # noqa: E731


def slowTest(fn):
    if TEST_WITH_SLOW:
        return fn
    return unittest.skip("test is slow; run with PYTORCH_TEST_WITH_SLOW to enable test")(fn)


def skipIfNoSciPy(fn):
    return fn


@contextlib.contextmanager
def disable_gc():
    if gc.isenabled():
        try:
            gc.disable()
            yield
        finally:
            gc.enable()
    else:
        yield


@contextlib.contextmanager
def freeze_rng_state():
    state = torch.get_rng_state()
    try:
        yield
    finally:
        torch.set_rng_state(state)


@contextlib.contextmanager
def set_warn_always_context(new_val: bool):
    old = torch.is_warn_always_enabled()
    torch.set_warn_always(new_val)
    try:
        yield
    finally:
        torch.set_warn_always(old)


def gradcheck(fn, inputs, **kwargs):
    """torch's test gradcheck: batched gradients checked and fast mode by default."""
    defaults = {"check_batched_grad": True, "fast_mode": True}
    defaults.update(kwargs)
    return torch.autograd.gradcheck(fn, inputs, **defaults)


def gradgradcheck(fn, inputs, grad_outputs=None, **kwargs):
    defaults = {"check_batched_grad": True, "fast_mode": True}
    defaults.update(kwargs)
    return torch.autograd.gradgradcheck(fn, inputs, grad_outputs, **defaults)


def scoped_load_inline(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        raise unittest.SkipTest("builds a C++ extension")
    return wrapper


def make_tensor(*args, **kwargs):
    return torch.testing.make_tensor(*args, **kwargs)


def random_symmetric_matrix(l, *batches, **kwargs):  # noqa: E741
    dtype = kwargs.get("dtype", torch.double)
    device = kwargs.get("device", "cpu")
    a = torch.randn(*(batches + (l, l)), dtype=dtype, device=device)
    return (a + a.mT).div_(2)


def random_symmetric_pd_matrix(matrix_size, *batch_dims, **kwargs):
    dtype = kwargs.get("dtype", torch.double)
    device = kwargs.get("device", "cpu")
    a = torch.randn(*(batch_dims + (matrix_size, matrix_size)), dtype=dtype, device=device)
    return torch.matmul(a, a.mT) + torch.eye(matrix_size, dtype=dtype, device=device) * 1e-5


def noncontiguous_like(tensor):
    result = torch.repeat_interleave(tensor, 2, dim=-1)[..., ::2] if tensor.dim() else tensor
    return result.detach().requires_grad_(tensor.requires_grad)


def is_iterable_of_tensors(iterable, include_empty=False):
    if isinstance(iterable, torch.Tensor):
        return False
    try:
        if len(iterable) == 0:
            return include_empty
        return all(isinstance(t, torch.Tensor) for t in iterable)
    except TypeError:
        return False


TemporaryFileName = None  # set below


@contextlib.contextmanager
def _temporary_file_name(*args, **kwargs):
    import tempfile
    with tempfile.NamedTemporaryFile(delete=False) as handle:
        name = handle.name
    try:
        yield name
    finally:
        os.unlink(name)


TemporaryFileName = _temporary_file_name
_ = (inspect, re)
