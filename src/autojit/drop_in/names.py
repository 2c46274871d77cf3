"""What the drop-in says torch is: the table of torch's modules whose autojit counterpart has
another name, the version `torch.__version__` reads, and the error for a name autojit lacks.

finder.py resolves `torch.X` to `autojit.X` unless MODULES names another module for it (or for
a package above it: an entry covers the submodules under it).
"""

from __future__ import annotations

import importlib
import re
import types

# torch's modules whose counterpart is not autojit's module of the same name: the drop-in's
# modules for torch's names that autojit itself does not have at that place (torch._C for its
# exception classes and flags, torch.onnx whose functions raise, the protocol of
# torch.overrides, torch._functorch's helpers, torch._ops' HigherOrderOperator), autojit's
# modules at another path, and functorch, which torch ships beside itself.
MODULES = {
    "functorch": "autojit.drop_in.functorch",
    "torch._C": "autojit.drop_in._C",
    "torch._VF": "autojit.drop_in._VF",
    "torch._functorch": "autojit.drop_in._functorch",
    "torch._jit_internal": "autojit.drop_in._jit_internal",
    "torch._ops": "autojit.drop_in._ops",
    "torch._vmap_internals": "autojit.drop_in._vmap_internals",
    "torch.multiprocessing": "autojit.drop_in.multiprocessing",
    "torch.onnx": "autojit.drop_in.onnx",
    "torch.overrides": "autojit.drop_in.overrides",
    "torch.serialization": "autojit.interop.serialization",
}
# What a module needs loaded beside it: torch.serialization's load rebuilds nn.Parameter, which
# nn registers with it.
NEEDS = {"torch.serialization": "autojit.nn.parameter"}

# The torch release whose API autojit follows (its tests compare with torch 2.13.0): libraries
# compare torch.__version__ with the release a feature arrived in. The local label says whose
# build it is, as torch's "+cpu" does.
TORCH_RELEASE = "2.13.0"

_RELEASE = re.compile(r"(\d+(?:\.\d+)*)(?:[.-]?(a|b|rc|alpha|beta|c|pre|preview)[.-]?(\d*))?")


def _release_key(text: str) -> tuple:
    match = _RELEASE.match(text.strip().lstrip("vV"))
    if match is None:
        raise ValueError(f"Invalid version: {text!r}")
    numbers = [int(part) for part in match.group(1).split(".")]
    numbers += [0] * (4 - len(numbers))
    # A pre-release sorts before its release (2.0.0rc1 < 2.0.0), as PEP 440 orders them.
    pre = (0, match.group(2), int(match.group(3) or 0)) if match.group(2) else (1, "", 0)
    return (*numbers, pre)


class TorchVersion(str):
    """torch.__version__: a string that compares with version strings and tuples by release
    (`torch.__version__ >= "2.0"`, `>= (1, 12)`), as torch's TorchVersion does."""

    def _other_key(self, other) -> tuple:
        if isinstance(other, tuple | list):
            return _release_key(".".join(str(part) for part in other))
        return _release_key(str(other))

    def _compare(self, other, compare) -> bool:
        try:
            other_key = self._other_key(other)
        except ValueError:
            return NotImplemented
        return compare(_release_key(self), other_key)

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b)

    def __eq__(self, other):
        if isinstance(other, str) and str.__eq__(self, other):
            return True
        result = self._compare(other, lambda a, b: a == b)
        return False if result is NotImplemented else result

    def __ne__(self, other):
        return not self.__eq__(other)

    __hash__ = str.__hash__


TORCH_VERSION = TorchVersion(TORCH_RELEASE + "+autojit")


def explain_missing_attributes(module: types.ModuleType, torch_name: str) -> None:
    """Make a missing attribute of `module` (whose torch name is `torch_name`) a submodule
    where torch has one by that name (torch imports its submodules with itself, so programs
    reach `torch._C` or `torch.nn.modules` without importing them), and otherwise raise an
    AttributeError that gives torch's name and says autojit lacks it. A module's own
    __getattr__ (lazy loading) is kept: only its AttributeError for the name asked is
    reworded."""
    original = vars(module).get("__getattr__")
    if getattr(original, "drop_in_wrapper", False):
        return

    def __getattr__(name: str):
        if original is not None:
            try:
                return original(name)
            except AttributeError as error:
                if repr(name) not in str(error):
                    raise
        if not name.startswith("__"):
            try:
                return importlib.import_module(f"{torch_name}.{name}")
            except ImportError:
                pass
        raise AttributeError(
            f"{torch_name}.{name} is missing from autojit, which stands in for torch here "
            f"(module {module.__name__!r} has no attribute {name!r})", name=name,
            obj=module) from None

    __getattr__.drop_in_wrapper = True
    # Through __dict__: some modules' classes check what is assigned to them (backends' flags).
    vars(module)["__getattr__"] = __getattr__
