"""autojit.fx._names: the names torch.fx gives the objects a graph refers to (node targets,
annotations, constants), for autojit's objects.

A graph listing and the generated code name a function as torch does (`torch.relu`,
`torch.nn.functional.gelu`, `operator.add`, `math.sqrt`). autojit's functions live in other
modules than torch's (autojit.ops.*), so a function is named by the public namespace that holds
it: the dispatching wrapper of the `__torch_function__` protocol (tensor/torch_function.py)
carries its public name, and a plain function is looked up by its name in autojit's top level,
nn.functional, linalg, special and fft. Anything else from autojit is named by its module with
`autojit` read as `torch`, the name under which the drop-in reaches it. The generated code
writes such a name only where it resolves from the `torch` global (autojit itself) to the same
function; elsewhere it binds the object to a global of its own.
"""

from __future__ import annotations

import builtins
import sys
import types

__all__ = ["qualified_name", "resolve_torch_path", "torch_code_path", "type_repr", "unwrap"]

# Public namespaces searched for a plain function, in order: the top level wins.
_NAMESPACES = ("autojit", "autojit.nn.functional", "autojit.linalg", "autojit.special",
               "autojit.fft")
# The prefix the protocol puts before the names of these namespaces' functions (torch's C
# names: linalg_norm), which the public name drops.
_C_PREFIXES = {"torch.linalg": "linalg_", "torch.special": "special_", "torch.fft": "fft_"}


def unwrap(function):
    """The function under a `__torch_function__` dispatching wrapper, or the function itself."""
    return getattr(function, "__torch_function_wrapped__", function)


def _torch_module_name(module: str) -> str:
    if module == "autojit" or module.startswith("autojit."):
        return "torch" + module[len("autojit"):]
    return module


def _wrapper_name(function) -> str | None:
    name = getattr(function, "__torch_function_name__", None)
    if not isinstance(name, str):
        return None
    namespace, _, attribute = name.rpartition(".")
    if namespace == "torch.Tensor":
        return None  # its protocol name is torch's C name (add_ for __iadd__): looked up below
    prefix = _C_PREFIXES.get(namespace)
    if prefix and attribute.startswith(prefix):
        attribute = attribute[len(prefix):]
    return f"{namespace}.{attribute}"


def _public_name(function) -> str | None:
    name = getattr(function, "__name__", None)
    if not isinstance(name, str):
        return None
    inner = unwrap(function)
    for module_name in _NAMESPACES:
        module = sys.modules.get(module_name)
        if module is None:
            continue
        found = vars(module).get(name)
        if found is not None and unwrap(found) is inner:
            return _torch_module_name(module_name) + "." + name
    tensor = sys.modules.get("autojit.tensor.tensor")
    if tensor is not None:
        found = vars(tensor.Tensor).get(name)
        if found is not None and unwrap(found) is inner:
            return f"torch.Tensor.{name}"
    return None


def qualified_name(function) -> str:
    """torch.fx's `_get_qualified_name`: builtins by their bare name, autojit's public
    functions by torch's public name, anything else as module.name."""
    name = function.__name__
    if getattr(builtins, name, None) is function:
        return name
    found = _wrapper_name(function) or _public_name(function)
    if found is not None:
        return found
    if name == "<lambda>":
        raise RuntimeError("Unable to represent lambda")
    module = getattr(function, "__module__", None) or "builtins"
    return f"{_torch_module_name(module)}.{name}"


def pretty_target(target) -> str:
    """How a node's target prints in a graph listing (torch's `_pretty_print_target`)."""
    if isinstance(target, str):
        return target
    module = getattr(target, "__module__", None)
    name = getattr(target, "__name__", None)
    if module == "builtins" and name is not None:
        return f"builtins.{name}"
    if module == "_operator" and name is not None:
        return f"operator.{name}"
    return qualified_name(target)


def resolve_torch_path(path: str):
    """The object `path` ("torch.nn.functional.gelu") names on autojit, or None."""
    if not path.startswith("torch."):
        return None
    value = sys.modules["autojit"]  # loaded: fx is one of its packages
    for part in path.split(".")[1:]:
        try:
            value = getattr(value, part)
        except (AttributeError, ImportError):
            return None
    return value


def torch_code_path(value) -> str | None:
    """The dotted name generated code can use for `value` through its `torch` global (autojit),
    or None where that name does not reach the same object."""
    try:
        path = qualified_name(value)
    except (AttributeError, RuntimeError):
        return None
    found = resolve_torch_path(path)
    if found is None or unwrap(found) is not unwrap(value):
        return None
    return path


def type_repr(value) -> str:
    """torch.fx's `_type_repr`: a class as module.qualname (builtins bare, autojit's public
    classes by torch's name: torch.Tensor), a function by its name, anything else repr()."""
    if isinstance(value, type) and not isinstance(value, types.GenericAlias):
        if value.__module__ == "builtins":
            return value.__qualname__
        public = _public_name(value)
        if public is not None:
            return public
        return f"{_torch_module_name(value.__module__)}.{value.__qualname__}"
    if value is ...:
        return "..."
    if isinstance(value, types.FunctionType):
        return value.__name__
    text = repr(value)
    # An annotation such as Optional[Tensor] names its classes by module path: torch's names.
    for kind in _classes_in(value):
        public = _public_name(kind)
        if public is not None:
            text = text.replace(f"{kind.__module__}.{kind.__qualname__}", public)
    return text


def _classes_in(annotation) -> list:
    found = []
    for argument in getattr(annotation, "__args__", None) or ():
        if isinstance(argument, type):
            found.append(argument)
        found.extend(_classes_in(argument))
    return found


def constant_text(value) -> str | None:
    """torch's text for an autojit constant whose repr names autojit (a dtype, a memory format,
    a layout: `torch.float32`), else None."""
    kind = type(value)
    if kind.__name__ in _CONSTANT_KINDS and kind.__module__.startswith("autojit.tensor."):
        text = repr(value)
        if text.startswith("autojit."):
            return "torch." + text[len("autojit."):]
    return None


_CONSTANT_KINDS = frozenset(("DType", "memory_format", "layout"))
