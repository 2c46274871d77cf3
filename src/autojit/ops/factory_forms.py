"""The arguments torch's factories take beside sizes and dtypes: `out=` (the tensor is made
into a given one, `torch.eye(n, out=t)`), `layout=` and `pin_memory=`.

`out=` makes the result in out's dtype and on its device (a dtype= that differs is torch's
RuntimeError), resizes out without a warning where the shape differs (factories resize as
torch's do), writes the values into it and returns it. `layout=` may be None or
autojit.strided (autojit.sparse_coo for the factories of empty sparse tensors, zeros and
empty, which ops/sparse/coo.py makes); `pin_memory=True` raises torch's error on a system
without an accelerator's pinned memory, as autojit's host memory is not pinned.

`factory_form` wraps the factories __init__.py exports; the tensor layer's functions
themselves (tensor/creation.py) take sizes, dtype, device and requires_grad.
"""

from __future__ import annotations

import functools
import inspect

from ..tensor import dtypes
from ..tensor.layouts import check_layout, sparse_coo
from ..tensor.tensor import Tensor
from .out_argument import check_out_type, write_out

_PINNED = ("pin_memory=True requires a CUDA or other accelerator backend; no pinned memory "
           "allocator is available on this system.")
# Made by sparse/coo.py when a factory is asked for an empty sparse tensor: (function name,
# args, kwargs) -> the sparse tensor.
SPARSE_FACTORY = None


def _write(name: str, out: Tensor, result: Tensor, requires_grad: bool) -> Tensor:
    shape = tuple(result.shape)
    if tuple(out.shape) != shape:
        out.resize_(shape)
    write_out(name, out, result)
    if requires_grad:
        out.requires_grad_(True)
    return out


def factory_form(function, name: str, out: bool = True, sparse: bool = False):
    """`function` (the factory `name`) taking torch's `layout=`, `pin_memory=` and, with
    `out`, `out=` (`sparse`: layout=sparse_coo makes an empty sparse tensor)."""
    own = set(inspect.signature(function).parameters)

    @functools.wraps(function)
    def factory(*args, **kwargs):
        if not kwargs:
            return function(*args)
        layout = check_layout(kwargs.pop("layout", None), name, sparse)
        if "layout" in own:
            kwargs["layout"] = None
        if kwargs.pop("pin_memory", False):
            raise RuntimeError(_PINNED)
        if "pin_memory" in own:
            kwargs["pin_memory"] = False
        if layout is sparse_coo:
            return SPARSE_FACTORY(name, args, kwargs)
        target = kwargs.pop("out", None) if out else None
        if target is None:
            return function(*args, **kwargs)
        check_out_type(name, target)
        dtype = kwargs.get("dtype")
        if dtype is not None and dtypes.dtype_argument(dtype, name) is not target.dtype:
            raise RuntimeError(f"dtype {dtypes.scalar_type_name(dtypes.to_dtype(dtype))} does "
                               f"not match dtype of out parameter "
                               f"({dtypes.scalar_type_name(target.dtype)})")
        kwargs["dtype"] = target.dtype
        kwargs.setdefault("device", target.device)
        requires_grad = kwargs.pop("requires_grad", False)
        return _write(name, target, function(*args, **kwargs), requires_grad)

    signature = inspect.signature(function)
    parameters = list(signature.parameters.values())
    extra = [("layout", None), ("pin_memory", False)] + ([("out", None)] if out else [])
    for extra_name, default in extra:
        if extra_name not in own:
            parameters.append(inspect.Parameter(extra_name, inspect.Parameter.KEYWORD_ONLY,
                                                default=default))
    try:
        factory.__signature__ = signature.replace(parameters=parameters)
    except ValueError:
        pass
    return factory


# The factories with torch's out= (and a layout), those with a layout only (the *_like ones,
# the windows, tensor), and those whose layout=sparse_coo makes an empty sparse tensor.
WITH_OUT = ("zeros", "ones", "empty", "full", "eye", "arange", "linspace", "logspace", "rand",
            "randn", "randint", "randperm", "range")
WITHOUT_OUT = ("zeros_like", "ones_like", "empty_like", "full_like", "rand_like", "randn_like",
               "randint_like", "tensor", "scalar_tensor", "empty_strided", "hann_window",
               "hamming_window", "bartlett_window", "blackman_window", "kaiser_window",
               "tril_indices", "triu_indices")
SPARSE = ("zeros", "empty", "zeros_like", "empty_like")


def accept_all(namespace: dict) -> None:
    """Wrap the factories of `namespace` (autojit's globals)."""
    for name in WITH_OUT + WITHOUT_OUT:
        if name in namespace:
            namespace[name] = factory_form(namespace[name], name, out=name in WITH_OUT,
                                           sparse=name in SPARSE)
