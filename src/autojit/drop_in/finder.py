"""The import finder of the drop-in: `torch`, every `torch.X` and `functorch` resolved to
autojit's module of that name, the very object (an alias in sys.modules, never a second copy).

A name resolves, in order, to the module names.py's table gives it (torch's modules whose
autojit counterpart lives elsewhere, and the drop-in's own stand-ins for torch's private
modules), to `autojit.X` where that module exists, or to a module the parent has as an
attribute (`torch.linalg`, registered by autojit under its public name). Anything else raises
ModuleNotFoundError naming the module and saying autojit has none: returning None instead would
let the next finder load autojit's file a second time under torch's name, which is how a naive
hook ends up with two Optimizer classes.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types

from . import names

ROOTS = ("torch", "functorch")


def target_name(fullname: str) -> str | None:
    """The autojit module that `fullname` (a torch module name) aliases, or None when autojit
    has none."""
    for prefix in sorted(names.MODULES, key=len, reverse=True):
        if fullname == prefix or fullname.startswith(prefix + "."):
            return names.MODULES[prefix] + fullname[len(prefix):]
    if fullname == "torch":
        return "autojit"
    return "autojit" + fullname[len("torch"):] if fullname.startswith("torch.") else None


def torch_name(module_name: str) -> str:
    """The torch name an autojit module stands for: the inverse of target_name, so that the
    drop-in's own modules keep the names they stand in for (`autojit.drop_in._functorch.utils`
    is `torch._functorch.utils`, not `torch.drop_in...`)."""
    for prefix, target in sorted(names.MODULES.items(), key=lambda item: -len(item[1])):
        if module_name == target or module_name.startswith(target + "."):
            return prefix + module_name[len(target):]
    return "torch" + module_name[len("autojit"):]


def _attribute_module(module_name: str):
    """The module a loaded parent holds under the last part of `module_name` (autojit.linalg,
    a module of the ops layer registered under its public name), else None. The parent's
    __dict__ is read rather than getattr, which would load a lazy attribute here."""
    parent, _, child = module_name.rpartition(".")
    found = vars(sys.modules[parent]).get(child) if parent in sys.modules else None
    return found if isinstance(found, types.ModuleType) else None


def _kind(module_name: str) -> bool | None:
    """Whether `module_name` is a package (True), a plain module (False) or nothing (None).
    Every parent of the name is loaded already: torch's parents are imported first."""
    module = sys.modules.get(module_name) or _attribute_module(module_name)
    if module is not None:
        return hasattr(module, "__path__")
    try:
        found = importlib.util.find_spec(module_name)
    except (ImportError, ValueError):
        return None
    return None if found is None else found.submodule_search_locations is not None


def missing_module(fullname: str) -> ModuleNotFoundError:
    """The error for a torch module autojit does not have."""
    return ModuleNotFoundError(
        f"No module named {fullname!r}: it is missing from autojit, which stands in for torch "
        "here (autojit.drop_in; docs/drop-in.md lists what it has)", name=fullname)


def alias_loaded_modules() -> None:
    """Register under torch's names the autojit modules loaded already (sys.modules aliases).

    The import system, loading `torch.autograd.gradcheck` for the first time under that name,
    sets it as the parent's attribute `gradcheck`, over the function autojit.autograd bound
    there after importing its submodule (torch keeps the function: its own import of the
    submodule happened before the rebinding). A module found in sys.modules is returned with
    no such assignment, so each loaded module is entered there under torch's name too."""
    loaded = [(name, module) for name, module in list(sys.modules.items())
              if module is not None and (name == "autojit" or name.startswith("autojit."))]
    # A module autojit enters under a second name (a distribution's module at torch's path,
    # autojit.distributions.normal for autojit.distributions.continuous.normal) first, so that
    # its missing attributes are explained by the name torch has.
    loaded.sort(key=lambda item: getattr(item[1], "__name__", item[0]) == item[0])
    for name, module in loaded:
        alias = torch_name(name)
        if alias not in sys.modules and target_name(alias) == name:
            sys.modules[alias] = module
            names.explain_missing_attributes(module, alias)


class AliasLoader(importlib.abc.Loader):
    """Gives the import system the autojit module itself. The module's own `__spec__`, which
    the import system replaces with torch's name's spec, is put back, so that the module keeps
    one identity (its name, spec and file are autojit's)."""

    def __init__(self, target: str):
        self.target = target

    def create_module(self, spec):
        if spec.name in names.NEEDS:
            importlib.import_module(names.NEEDS[spec.name])
        module = (sys.modules.get(self.target) or _attribute_module(self.target)
                  or importlib.import_module(self.target))
        self._spec = module.__spec__
        alias_loaded_modules()  # the submodules the target imported with itself
        return module

    def exec_module(self, module):
        alias = module.__spec__.name
        module.__spec__ = self._spec
        names.explain_missing_attributes(module, alias)


class TorchFinder(importlib.abc.MetaPathFinder):
    """The meta path finder install() puts first: every torch and functorch name is its."""

    def find_spec(self, fullname, path=None, target=None):
        if fullname.partition(".")[0] not in ROOTS:
            return None
        aliased = target_name(fullname)
        is_package = None if aliased is None else _kind(aliased)
        if is_package is None:
            raise missing_module(fullname)
        return importlib.machinery.ModuleSpec(fullname, AliasLoader(aliased),
                                              is_package=is_package)
