"""torch's `_foreach_*` functions: one op applied to each tensor of a list (torch's multi-tensor
kernels, which optimizers and EMA helpers call: `torch._foreach_mul_(params, decay)`).

Each is the op itself run on every tensor in turn, through the tensor's own method, so values,
dtypes, broadcasting, in-place checks and autograd are those of the op. The second operand is,
as in torch's overloads, one number, a list of numbers, a list of tensors, or one 0-d tensor
(`addcmul`/`addcdiv` also take their `value`s as a 1-d tensor). The out-of-place forms return a
tuple of new tensors, the in-place forms (`_`) the list given. `NAMES` lists them all; autojit's
namespace loads them from here on first use. They are torch.ops.aten's too, with torch's overload
names (`aten._foreach_maximum_.Scalar`, which timm looks for), each the one function here.
"""

from __future__ import annotations

import numbers

from ..tensor import dtypes
from ..tensor.creation import tensor as number_tensor
from ..tensor.tensor import Tensor
from . import registry
from .aten_namespace import register

_UNARY = ("abs", "acos", "asin", "atan", "ceil", "cos", "cosh", "erf", "erfc", "exp", "expm1",
          "floor", "frac", "lgamma", "log", "log10", "log1p", "log2", "neg", "reciprocal",
          "round", "rsqrt", "sigmoid", "sign", "sin", "sinh", "sqrt", "tan", "tanh", "trunc")
_BINARY = ("add", "sub", "mul", "div", "maximum", "minimum", "clamp_min", "clamp_max", "pow")
_WITH_ALPHA = ("add", "sub")  # their tensor and tensor-list forms take alpha=
_TENSOR_OTHER = ("maximum", "minimum")  # whose Tensor method takes no number


def _tensors(self) -> list:
    tensors = list(self)
    if not tensors:
        raise RuntimeError("Tensor list must have at least one tensor.")
    return tensors


def _operands(name: str, tensors: list, other, *, tensor_per_list: bool = False) -> list:
    """The operand each tensor takes: `other` itself (a number, a 0-d tensor) or its item."""
    if isinstance(other, (list, tuple)):
        if any(isinstance(item, Tensor) for item in other):
            if len(other) != len(tensors):
                raise RuntimeError("Tensor lists must have the same number of tensors, got "
                                   f"{len(tensors)} and {len(other)}")
        elif len(other) != len(tensors):
            raise RuntimeError("Tensor list must have same number of elements as scalar list.")
        return list(other)
    if isinstance(other, Tensor):
        if tensor_per_list:  # addcmul/addcdiv's scalars: one per tensor, in a 1-d tensor
            return _operands(name, tensors, other.tolist())
        if other.dim() != 0:
            raise RuntimeError("scalar tensor expected to be 0 dim but it has "
                               f"{other.dim()} dimensions and {other.numel()} elements.")
        return [other] * len(tensors)
    if not isinstance(other, numbers.Number):
        raise TypeError(f"_foreach_{name}() received an invalid combination of arguments - got "
                        f"({type(other).__name__})")
    return [other] * len(tensors)


def _check_alpha(name: str, other, alpha) -> dict:
    if alpha == 1:
        return {}
    if isinstance(other, numbers.Number) or (isinstance(other, (list, tuple)) and other
                                             and not isinstance(other[0], Tensor)):
        raise TypeError(f"_foreach_{name}() received an invalid combination of arguments - got "
                        "a scalar or a list of scalars with alpha=, which only the tensor and "
                        "tensor-list forms take")
    return {"alpha": alpha}


def _operand(name: str, args: tuple, kwargs: dict, names: tuple):
    """The second operand, given positionally or by one of torch's overloads' names for it
    (`other`, `scalar`, `scalars`; `exponent` for pow, `weight(s)` for lerp, `value`,
    `scalar(s)` for addcmul and addcdiv)."""
    given = [kwargs.pop(key) for key in names if key in kwargs]
    if kwargs:
        raise TypeError(f"_foreach_{name}() got an unexpected keyword argument "
                        f"'{next(iter(kwargs))}'")
    if len(args) + len(given) != 1:
        raise TypeError(f"_foreach_{name}() received an invalid combination of arguments")
    return (*args, *given)[0]


def _run(method: str, self, *operand_lists, inplace: bool, **kwargs):
    tensors = _tensors(self)
    results = []
    for index, tensor in enumerate(tensors):
        operands = [operands[index] for operands in operand_lists]
        results.append(getattr(tensor, method)(*operands, **kwargs))
    return self if inplace else tuple(results)


def _unary(name: str, inplace: bool):
    method = name + "_" if inplace else name

    def function(self):
        results = _run(method, self, inplace=inplace)
        if inplace:
            return results
        title = "".join(part.title() for part in name.split("_"))
        return registry.share_node(results, tuple(self), f"Foreach{title}Backward0")

    return function


def _binary(name: str, inplace: bool):
    method = name + "_" if inplace else name

    def function(self, *args, alpha=1, **kwargs):
        names = ("exponent",) if name == "pow" else ("other", "scalar", "scalars")
        other = _operand(name, args, kwargs, names)
        if name == "pow" and not inplace and isinstance(self, numbers.Number):
            return tuple(Tensor.__rpow__(exponent, self) for exponent in _tensors(other))
        tensors = _tensors(self)
        kwargs = _check_alpha(name, other, alpha) if name in _WITH_ALPHA else {}
        if alpha != 1 and name not in _WITH_ALPHA:
            raise TypeError(f"_foreach_{name}() got an unexpected keyword argument 'alpha'")
        operands = _operands(name, tensors, other)
        if name in _TENSOR_OTHER and not inplace:
            # Tensor.maximum takes a tensor only, torch's foreach kernels a number too: the
            # number as a 0-d tensor, which promotes as a wrapped number does (a float one
            # kept in float64 beside a floating tensor, which gives the result its dtype)
            operands = [number_tensor(operand, device=each.device, dtype=dtypes.float64
                                      if isinstance(operand, float) and
                                      each.is_floating_point() else None)
                        if isinstance(operand, numbers.Number) else operand
                        for operand, each in zip(operands, tensors)]
        results = _run(method, self, operands, inplace=inplace, **kwargs)
        return results if inplace else _torch_node(name, tensors, other, results)

    return function


# torch's node of each out-of-place binary form, by the second operand's kind (one number, a
# list of numbers, a list of tensors, one 0-d tensor): its name's suffix and what it shows
_SUFFIXES = {
    **dict.fromkeys(("add", "sub"), {"scalar": "1Scalar", "scalars": "1ScalarList",
                                     "list": "0List", "tensor": "1Scalar"}),
    "mul": {"scalar": "1Scalar", "scalars": "1ScalarList", "list": "0List", "tensor": "0Tensor"},
    "div": {"scalar": "1Scalar", "scalars": "1ScalarList", "list": "0", "tensor": "0Tensor"},
    **dict.fromkeys(("maximum", "minimum"), {"scalar": "0", "scalars": "1", "list": "0List",
                                             "tensor": "0"}),
    **dict.fromkeys(("clamp_min", "clamp_max"), {"scalar": "0Scalar", "scalars": "0ScalarList",
                                                 "list": "1List", "tensor": "0Scalar"}),
    "pow": {"scalar": "0Scalar", "scalars": "1", "list": "0", "tensor": "0Scalar"},
}
_SHOWN = {("div", "list"): ("self", "other"), ("maximum", "scalar"): ("self", "scalar"),
          ("maximum", "tensor"): ("self", "scalar"), ("maximum", "scalars"): ("self", "scalars"),
          ("pow", "scalars"): ("self", "exponent"), ("pow", "list"): ("self", "exponent")}
_SHOWN.update({("minimum", kind): shown for (op, kind), shown in _SHOWN.items()
               if op == "maximum"})


def _torch_node(name: str, tensors: list, other, results: tuple) -> tuple:
    """The results of an out-of-place binary form on one node, torch's
    (ForeachMaximumBackward1, ...), showing what torch's shows (`_saved_scalars`, ...)."""
    if isinstance(other, (list, tuple)):
        kind = "list" if any(isinstance(item, Tensor) for item in other) else "scalars"
    else:
        kind = "tensor" if isinstance(other, Tensor) else "scalar"

    def saved():  # (read when asked: a 0-d tensor's number is not read while tracing)
        values = {"self": tuple(tensors),
                  "scalars": tuple(other) if kind == "scalars" else None,
                  "scalar": other.item() if kind == "tensor" else other,
                  "other": tuple(other) if kind == "list" else None,
                  "exponent": tuple(other) if kind in ("list", "scalars") else None}
        return {key: values[key] for key in _SHOWN.get((name, kind), ())}

    title = "".join(part.title() for part in name.split("_"))
    inputs = (*tensors, *(other if kind == "list" else ()))
    return registry.share_node(results, inputs, f"Foreach{title}Backward{_SUFFIXES[name][kind]}",
                               saved)


def _pointwise(name: str, inplace: bool):
    """addcmul/addcdiv: self + value * tensor1 (op) tensor2, value one number or one each."""
    method = name + "_" if inplace else name

    def function(self, tensor1, tensor2, *args, **kwargs):
        value = _operand(name, args or (1,) if not kwargs else args, kwargs,
                         ("value", "scalar", "scalars"))
        tensors = _tensors(self)
        for other in (tensor1, tensor2):
            _operands(name, tensors, list(other))
        values = _operands(name, tensors, value, tensor_per_list=True)
        for index, tensor in enumerate(tensors):
            tensors[index] = getattr(tensor, method)(tensor1[index], tensor2[index],
                                                     value=values[index])
        return self if inplace else tuple(tensors)

    return function


def _lerp(inplace: bool):
    method = "lerp_" if inplace else "lerp"

    def function(self, tensors1, *args, **kwargs):
        weight = _operand("lerp", args, kwargs, ("weight", "weights"))
        tensors = _tensors(self)
        ends = _operands("lerp", tensors, list(tensors1))
        return _run(method, self, ends, _operands("lerp", tensors, weight), inplace=inplace)

    return function


def _foreach_zero_(self):
    """Fill every tensor with zeros, in place."""
    return _run("zero_", self, inplace=True)


def _foreach_copy_(self, src, non_blocking: bool = False):
    """Copy each tensor of `src` into its counterpart, in place."""
    tensors = _tensors(self)
    return _run("copy_", self, _operands("copy_", tensors, list(src)), inplace=True)


def _foreach_clone(self):
    """A copy of each tensor."""
    return _run("clone", self, inplace=False)


def _foreach_norm(self, ord=2, dtype=None):
    """Each tensor's vector norm (linalg.vector_norm), a 0-d tensor each."""
    from .linalg.norms import vector_norm

    return tuple(vector_norm(tensor, ord, dtype=dtype) for tensor in _tensors(self))


def _foreach_powsum(self, ord=2, dtype=None):
    """Each tensor's sum of |x| ** ord (its norm before the root), a 0-d tensor each."""
    results = []
    for tensor in _tensors(self):
        if dtype is not None:
            tensor = tensor.to(dtype)
        results.append(tensor.abs().pow(ord).sum())
    return tuple(results)


def _foreach_max(self):
    """Each tensor's largest element, a 0-d tensor each."""
    return _run("max", self, inplace=False)


def _foreach_mm(self, mat2):
    """Each matrix product self[i] @ mat2[i]."""
    tensors = _tensors(self)
    return _run("mm", self, _operands("mm", tensors, list(mat2)), inplace=False)


def _named(function, name: str, doc: str):
    function.__name__ = function.__qualname__ = name
    function.__doc__ = doc
    return function


_FUNCTIONS = {}
for _inplace in (False, True):
    _suffix = "_" if _inplace else ""
    for _op in _UNARY:
        _FUNCTIONS[f"_foreach_{_op}{_suffix}"] = _unary(_op, _inplace)
    for _op in _BINARY:
        _FUNCTIONS[f"_foreach_{_op}{_suffix}"] = _binary(_op, _inplace)
    for _op in ("addcmul", "addcdiv"):
        _FUNCTIONS[f"_foreach_{_op}{_suffix}"] = _pointwise(_op, _inplace)
    _FUNCTIONS[f"_foreach_lerp{_suffix}"] = _lerp(_inplace)
for _name, _function in _FUNCTIONS.items():
    _form = "in place, returning the list given" if _name.endswith("_") else "a tuple of results"
    globals()[_name] = _named(_function, _name, f"torch.{_name}: Tensor.{_name[9:]} on each "
                              f"tensor of a list ({_form}).")

NAMES = (*_FUNCTIONS, "_foreach_zero_", "_foreach_copy_", "_foreach_clone", "_foreach_norm",
         "_foreach_powsum", "_foreach_max", "_foreach_mm")


# torch.ops.aten's overloads of each (torch's `_out` forms left out)
_OVERLOADS = {
    **dict.fromkeys(("add", "mul", "div"), ("Scalar", "List", "ScalarList", "Tensor")),
    **dict.fromkeys(("sub", "maximum", "minimum", "clamp_min", "clamp_max"),
                    ("Scalar", "List", "ScalarList")),
    **dict.fromkeys(("addcmul", "addcdiv"), ("Scalar", "ScalarList", "Tensor")),
    "lerp": ("List", "Scalar", "ScalarList"), "pow_": ("List", "Scalar", "ScalarList"),
    "pow": ("List", "Scalar", "ScalarList", "ScalarAndTensor"),
    "norm": ("Scalar",), "powsum": ("Scalar",),
}


def _aten_form(function):
    """The aten operator's form: its out-of-place results are a list (torch._foreach_*'s a
    tuple)."""
    def aten_function(*args, **kwargs):
        result = function(*args, **kwargs)
        return list(result) if isinstance(result, tuple) else result

    aten_function.__doc__ = function.__doc__
    return aten_function


for _name in NAMES:
    _op = _name[len("_foreach_"):]
    _keys = _OVERLOADS.get(_op) or _OVERLOADS.get(_op.rstrip("_")) or ("default",)
    _aten = _aten_form(globals()[_name])
    register(_name, call=_aten, **dict.fromkeys(_keys, _aten))
