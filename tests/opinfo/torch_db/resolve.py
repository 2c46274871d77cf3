"""The autojit callable of a torch OpInfo, found as a torch user porting the call would find it.

An OpInfo's `op` is either a torch function (`torch.abs`, `torch.linalg.norm`,
`torch.nn.functional.softmax`), an aten operator of torch.ops (`torch.ops.aten.slice.Tensor`,
found in `autojit.ops.aten`, as under the drop-in), a Tensor method, or a lambda of torch's
op database calling torch's names (`lambda x, n: torch.polygamma(n, x)`, `lambda x: x.T`).
A function is looked up by the OpInfo's name in autojit's namespaces, a method on
autojit.Tensor; a lambda is run as written with `torch` meaning autojit (its globals rebound),
so the call it makes is the one a user's code makes.
"""

from __future__ import annotations

import contextlib
import types

import torch

import autojit

RANDOM_WRAPPER = "wrapper_set_seed"
# Ops torch's database wraps in wrapper_set_seed whose result is no draw.
NOT_RANDOM = {"item"}
SEED = 42
_seeding = [True]


def _seeded(function, *args, **kwargs):
    """torch's wrapper_set_seed, for autojit: the same seed before every call. Inside
    `seeded_outside` the caller seeds instead (a compiled function is seeded before it runs:
    seeding while tracing is a graph break)."""
    if _seeding[-1]:
        autojit.manual_seed(SEED)
    return function(*args, **kwargs)


@contextlib.contextmanager
def seeded_outside():
    autojit.manual_seed(SEED)
    _seeding.append(False)
    try:
        yield
    finally:
        _seeding.pop()


def _attribute(root, dotted: str):
    value = root
    for part in dotted.split("."):
        value = getattr(value, part, None)
        if value is None:
            return None
    return value


def is_random(opinfo) -> bool:
    """Whether torch's database reseeds around the op (its values are draws, not comparable
    across libraries)."""
    code = getattr(opinfo.op, "__code__", None)
    return opinfo.name not in NOT_RANDOM and code is not None and RANDOM_WRAPPER in code.co_names


def _is_database_lambda(function) -> bool:
    module = getattr(function, "__module__", "") or ""
    return isinstance(function, types.FunctionType) and (
        module.startswith("torch.testing") or "<lambda>" in function.__qualname__)


def rebound(function):
    """`function` with its globals `torch` -> autojit and wrapper_set_seed -> _seeded."""
    names = dict(function.__globals__)
    names["torch"] = autojit
    names[RANDOM_WRAPPER] = _seeded
    return types.FunctionType(function.__code__, names, function.__name__,
                              function.__defaults__, function.__closure__)


def _aten_path(op):
    """`ops.aten.slice.Tensor` for torch.ops.aten.slice.Tensor (an OpOverload), `ops.aten.slice`
    for its packet, as a user's call of torch.ops ports; else None."""
    if isinstance(op, torch._ops.OpOverload):
        return f"ops.{op.namespace}.{op._opname}.{op._overloadname}"
    if isinstance(op, torch._ops.OpOverloadPacket):
        return "ops." + op._qualified_op_name.replace("::", ".")
    return None


def autojit_callable(opinfo):
    """autojit's callable for `opinfo`, or None when autojit has no such name."""
    if _is_database_lambda(opinfo.op):
        return _lambda_callable(opinfo)
    path = _aten_path(opinfo.op)
    if path is not None:
        found = _attribute(autojit, path)
        return found if callable(found) else None
    name = opinfo.name.removeprefix("torch.")
    found = _attribute(autojit, name)
    if callable(found):
        return found
    method = getattr(autojit.Tensor, name, None)
    if callable(method):
        return method
    return None


def _lambda_callable(opinfo):
    """A lambda is usable when every torch name it reaches exists in autojit."""
    code = opinfo.op.__code__
    if not _names_exist(code):
        return None
    return rebound(opinfo.op)


def _names_exist(code) -> bool:
    """Every `torch.a.b` chain of the code (and of lambdas nested in it) exists in autojit;
    method names (x.T, x.resize_) are checked on autojit.Tensor when the code calls them."""
    import dis

    chain: list = []
    for instruction in dis.get_instructions(code):
        if instruction.opname in ("LOAD_GLOBAL", "LOAD_NAME") and instruction.argval == "torch":
            chain = ["torch"]
            continue
        if chain and instruction.opname in ("LOAD_ATTR", "LOAD_METHOD"):
            chain.append(instruction.argval)
            continue
        if (instruction.opname in ("LOAD_ATTR", "LOAD_METHOD")
                and hasattr(torch.Tensor, instruction.argval)
                and not hasattr(autojit.Tensor, instruction.argval)):
            return False
        if chain and len(chain) > 1 and _attribute(autojit, ".".join(chain[1:])) is None:
            return False
        chain = []
    if chain and len(chain) > 1 and _attribute(autojit, ".".join(chain[1:])) is None:
        return False
    for constant in code.co_consts:
        if isinstance(constant, types.CodeType) and not _names_exist(constant):
            return False
    return True
