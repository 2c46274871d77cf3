"""torch's deprecated call forms that its argument parser still accepts, with a number where the
current form has a tensor: `add(input, alpha, other)`, `addcmul(input, value, tensor1,
tensor2)`, `addmm(beta, input, alpha, mat1, mat2)` and the like (torch's deprecated.yaml).
Older optimizers and libraries still call them (`exp_avg.mul_(beta1).add_(1 - beta1, grad)`).

Each form is rewritten to the current one, with torch's UserWarning, given at the first such
call of the process as torch gives it; functional.py wraps the top-level functions, and
tensor_methods.py and tensor_names.py the methods and in-place methods. A call in the current
form goes straight through.
"""

from __future__ import annotations

import functools
import numbers

from ..tensor import once
from ..tensor.tensor import Tensor


def _number(value) -> bool:
    return isinstance(value, numbers.Number)


# name -> its deprecated forms: (the positional parameters, in order; the scalars among them are
# passed on by keyword). "input" is the tensor the method is called on.
_FORMS = {
    "add": (("input", "alpha", "other"),),
    "sub": (("input", "alpha", "other"),),
    "addcmul": (("input", "value", "tensor1", "tensor2"),),
    "addcdiv": (("input", "value", "tensor1", "tensor2"),),
    "addmm": (("beta", "input", "alpha", "mat1", "mat2"), ("beta", "input", "mat1", "mat2")),
    "addmv": (("beta", "input", "alpha", "mat", "vec"), ("beta", "input", "mat", "vec")),
    "addr": (("beta", "input", "alpha", "vec1", "vec2"), ("beta", "input", "vec1", "vec2")),
    "addbmm": (("beta", "input", "alpha", "batch1", "batch2"),
               ("beta", "input", "batch1", "batch2")),
    "baddbmm": (("beta", "input", "alpha", "batch1", "batch2"),
                ("beta", "input", "batch1", "batch2")),
}
_SCALARS = {"alpha", "value", "beta"}
# The current forms torch's warning suggests instead.
_CURRENT = {
    "add": ("other", "alpha"), "sub": ("other", "alpha"),
    "addcmul": ("tensor1", "tensor2", "value"), "addcdiv": ("tensor1", "tensor2", "value"),
    "addmm": ("mat1", "mat2", "beta", "alpha"), "addmv": ("mat", "vec", "beta", "alpha"),
    "addr": ("vec1", "vec2", "beta", "alpha"), "addbmm": ("batch1", "batch2", "beta", "alpha"),
    "baddbmm": ("batch1", "batch2", "beta", "alpha"),
}
# The top-level functions whose current forms include one with an out_dtype, which torch's
# warning lists second.
_OUT_DTYPE = {"addmm", "baddbmm"}
# torch warns at the first deprecated call of the process only (one warn-once in its parser):
# one key of tensor/once.py for every form.
_ONCE_KEY = "deprecated call form"


def _match(name: str, args: tuple, method: bool):
    """The deprecated form `args` (self first for a method) is in, or None."""
    for form in _FORMS[name]:
        if method:
            form = ("input", *(part for part in form if part != "input"))
        if len(args) != len(form):
            continue
        if all(_number(value) if part in _SCALARS else isinstance(value, Tensor)
               for part, value in zip(form, args)):
            return form
    return None


def _signature(parts, method: bool, out: bool) -> str:
    words = [f"{'Number' if part in _SCALARS else 'Tensor'} {part}" for part in parts
             if not (method and part == "input")]
    return ", ".join(words) + (", *, Tensor out = None" if out else "")


def _warn(name: str, form: tuple, method_name: str, method: bool) -> None:
    if _ONCE_KEY in once.given:
        return
    current = _CURRENT[name]
    tensors = ", ".join([*([] if method else ["Tensor input"]),
                         *(f"Tensor {part}" for part in current if part not in _SCALARS)])
    keywords = ", *, " + ", ".join(f"Number {part} = 1" for part in current
                                   if part in _SCALARS) + ("" if method else ", Tensor out = None")
    now = f"{method_name}({tensors}{keywords})"
    if not method and name in _OUT_DTYPE:
        now += f"\n\t{method_name}({tensors}, torch.dtype out_dtype{keywords})"
    once.warn_once(
        _ONCE_KEY, f"This overload of {method_name} is deprecated:\n\t{method_name}("
        f"{_signature(form, method, out=not method)})\nConsider using one of the following "
        f"signatures instead:\n\t{now}", UserWarning, stacklevel=3)


def _rewritten(name: str, form: tuple, args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    values = dict(zip(form, args))
    order = ("input", *(part for part in _CURRENT[name] if part not in _SCALARS))
    scalars = {part: values[part] for part in form if part in _SCALARS}
    return tuple(values[part] for part in order), {**kwargs, **scalars}


def function_form(function, name: str):
    """`function` (the top-level `name`) accepting torch's deprecated forms too."""
    shortest = min(len(form) for form in _FORMS[name])

    @functools.wraps(function)
    def accepting(*args, **kwargs):
        if len(args) >= shortest:
            form = _match(name, args, method=False)
            if form is not None:
                _warn(name, form, name, method=False)
                args, kwargs = _rewritten(name, form, args, kwargs)
        return function(*args, **kwargs)

    return accepting


def method_form(function, name: str, method_name: str | None = None):
    """`function(self, ...)` (the method `method_name`, `name` or its in-place form) accepting
    torch's deprecated forms too."""
    method_name = method_name or name
    shortest = min(len(form) for form in _FORMS[name])

    @functools.wraps(function)
    def accepting(self, *args, **kwargs):
        if len(args) + 1 >= shortest:
            form = _match(name, (self, *args), method=True)
            if form is not None:
                _warn(name, form, method_name, method=True)
                (self, *args), kwargs = _rewritten(name, form, (self, *args), kwargs)
        return function(self, *args, **kwargs)

    return accepting


NAMES = tuple(_FORMS)
