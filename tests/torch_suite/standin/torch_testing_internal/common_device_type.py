"""torch.testing._internal.common_device_type on the public API, for the CPU: each generic test
class becomes `<Name>CPU` with `device="cpu"` (and `dtype=` for @dtypes) bound into its tests.

torch's files aimed at an accelerator name it by `only_for="privateuse1"`; such a class is
instantiated for the CPU here, and tests marked for an accelerator alone (onlyCUDA,
onlyPRIVATEUSE1) are skipped, as torch's own CPU run skips them."""

from __future__ import annotations

import functools
import unittest

import torch

from .common_utils import _dtype_name, expand_parametrized

DEVICE = "cpu"


def _skip(reason):
    return lambda fn: unittest.skip(reason)(fn)


def onlyCPU(fn):
    return fn


onlyCUDA = _skip("only runs on CUDA")
onlyPRIVATEUSE1 = _skip("only runs on an accelerator")
onlyNativeDeviceTypes = onlyCPU


def onlyOn(device_type):
    return onlyCPU if device_type == "cpu" else _skip(f"only runs on {device_type}")


def skipMeta(fn):
    return fn


def skipCPUIf(condition, reason):
    return _skip(reason) if condition else (lambda fn: fn)


def skipCUDAIf(condition, reason):
    return lambda fn: fn


skipCUDAIfRocm = skipCUDAIf(False, "")


def expectedFailureMeta(fn):
    return fn


def expectedFailureMPS(fn):
    return fn


def largeTensorTest(size, device=None):
    return lambda fn: fn


class dtypes:
    """@dtypes(torch.float, torch.double): the test runs once per dtype (on the CPU)."""

    def __init__(self, *args, device_type="all"):
        if len(args) == 1 and isinstance(args[0], (list, tuple)) and args[0] \
                and not isinstance(args[0][0], torch.dtype):
            args = tuple(args[0])
        self.args = args
        self.device_type = device_type

    def __call__(self, fn):
        if self.device_type in ("all", "cpu"):
            fn.__dict__["_dtypes"] = list(self.args)
        return fn


class dtypesIfCPU(dtypes):
    def __init__(self, *args):
        super().__init__(*args, device_type="cpu")


class _other_device_dtypes(dtypes):
    def __init__(self, *args):
        super().__init__(*args, device_type="other")


dtypesIfCUDA = dtypesIfMPS = dtypesIfPRIVATEUSE1 = _other_device_dtypes


def deviceCountAtLeast(num_required_devices):
    def decorator(fn):
        if num_required_devices > 1:
            return unittest.skip("needs more than one device")(fn)
        fn.__dict__["_takes_devices"] = True
        return fn
    return decorator


def _bind(fn, **bound):
    @functools.wraps(fn)
    def test(self, *args, **kwargs):
        return fn(self, *args, **bound, **kwargs)
    test.__dict__.pop("_dtypes", None)
    return test


def instantiate_device_type_tests(generic_test_class, scope, except_for=None, only_for=None,
                                  include_lazy=False, allow_mps=False, allow_xpu=False):
    wanted = only_for if only_for is None or isinstance(only_for, (list, tuple)) else [only_for]
    if wanted is not None and not {"cpu", "privateuse1"} & set(wanted):
        return
    excluded = except_for if except_for is None or isinstance(except_for, (list, tuple)) \
        else [except_for]
    if excluded and "cpu" in excluded:
        return
    name = generic_test_class.__name__ + "CPU"
    members = {}
    for attr, value in vars(generic_test_class).items():
        if not attr.startswith("test") or not callable(value):
            continue
        takes = {"device": DEVICE}
        if getattr(value, "_takes_devices", False):
            takes = {"devices": [DEVICE]}
        for param_name, param_fn in expand_parametrized(attr, value):
            dtype_list = getattr(value, "_dtypes", None)
            if dtype_list:
                for dtype in dtype_list:
                    if isinstance(dtype, (list, tuple)):
                        suffix = "_".join(_dtype_name(d) for d in dtype)
                        members[f"{param_name}_cpu_{suffix}"] = _bind(param_fn, **takes,
                                                                     dtype=dtype)
                    else:
                        members[f"{param_name}_cpu_{_dtype_name(dtype)}"] = _bind(
                            param_fn, **takes, dtype=dtype)
            else:
                members[f"{param_name}_cpu"] = _bind(param_fn, **takes)
    bases = (generic_test_class,)
    cls = type(name, bases, members)
    cls.device_type = "cpu"
    for attr in list(vars(generic_test_class)):
        if attr.startswith("test"):
            setattr(cls, attr, None)
    cls.__module__ = generic_test_class.__module__
    cls.__qualname__ = name
    scope[name] = cls
    # torch removes the generic class so that it is not collected
    if scope.get(generic_test_class.__name__) is generic_test_class:
        del scope[generic_test_class.__name__]


def get_all_device_types():
    return ["cpu"]
