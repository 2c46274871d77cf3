"""autojit.drop_in: autojit standing in for torch, for the programs and libraries written
against torch that cannot be edited to say autojit.

- `python -m autojit.drop_in train.py [args]` (or `-m module [args]`) runs a program with
  `import torch` resolving to autojit (__main__.py);
- `autojit.drop_in.install()` does the same inside a running interpreter (a notebook, an
  embedding application), before anything imports torch;
- `pytest -p autojit.drop_in` runs a torch library's own test suite on autojit: the plugin
  installs the drop-in before the suite's conftest files and test modules are imported.

install() puts a finder first on sys.meta_path (finder.py): `torch`, each `torch.X` and
`functorch` resolve to autojit's module of that name, the same module object under both names,
so that every module is loaded once. `torch.__version__` reads the torch release whose API
autojit follows (names.py); `torch.compile` is autojit.compile. This package is the top layer:
it imports the layers below on demand, and nothing in autojit imports it. docs/drop-in.md has
what it covers and its limits.
"""

from __future__ import annotations

import importlib
import sys

from . import finder, names

__all__ = ["TORCH_VERSION", "install", "is_installed"]

TORCH_VERSION = names.TORCH_VERSION


def is_installed() -> bool:
    """Whether `import torch` resolves to autojit in this process."""
    return any(isinstance(entry, finder.TorchFinder) for entry in sys.meta_path)


def _real_torch_modules() -> list[str]:
    found = []
    for name, module in list(sys.modules.items()):
        if name.partition(".")[0] not in finder.ROOTS or module is None:
            continue
        if not getattr(module, "__name__", "").startswith("autojit"):
            found.append(name)
    return sorted(found)


def install() -> None:
    """Make `import torch` (and every `import torch.X`, and `functorch`) give autojit's modules,
    from now on in this process. Call it before anything imports torch: with torch's own modules
    already loaded the two would be half mixed, so that raises RuntimeError. Calling it again
    does nothing."""
    if is_installed():
        return
    loaded = _real_torch_modules()
    if loaded:
        raise RuntimeError(
            "autojit.drop_in.install(): torch is already imported in this process "
            f"({', '.join(loaded[:3])}{', ...' if len(loaded) > 3 else ''}), so autojit cannot "
            "stand in for it: install the drop-in before anything imports torch (first thing "
            "in the program, or run it with `python -m autojit.drop_in`)")
    autojit = importlib.import_module("autojit")
    sys.meta_path.insert(0, finder.TorchFinder())
    autojit.__version__ = TORCH_VERSION
    autojit.version.__version__ = TORCH_VERSION
    # Libraries check the name of the module they were given (`torch.__name__ == "torch"`);
    # autojit loads its lazy packages by this name, which the finder resolves to the same ones.
    autojit.__name__ = "torch"
    # torch's package holds itself as `torch.torch` (kornia annotates with torch.torch.Tensor).
    autojit.torch = autojit
    # ... and torch.autograd holds it too, as the module imports torch (torch.autograd.torch).
    autojit.autograd.torch = autojit
    # Reprs name torch, as a torch program printed under torch (`torch.Size([2])`).
    importlib.import_module("autojit.tensor.dtypes").REPR_PREFIX[0] = "torch"
    importlib.import_module("torch")
    # torch._dynamo.OptimizedModule, the class of a compiled module, which libraries test for
    # (torch_geometric's is_torch_instance): nn's, which _dynamo (nn's sibling) cannot import.
    importlib.import_module("autojit._dynamo").OptimizedModule = autojit.nn.OptimizedModule
    finder.alias_loaded_modules()
    # torchvision's compiled operators link libtorch: its load of them defines autojit's.
    from . import torchvision_ops

    autojit.ops.aten_namespace.EXTENSION_LOADERS[("torchvision", "_C")] = \
        torchvision_ops.register
    _watch_class_definitions()
    _install_in_spawned_processes()


def _watch_class_definitions() -> None:
    """Switch the `__torch_function__` protocol on when a class that is not a Tensor defines
    `__torch_function__` (linear_operator's LinearOperator, a tensor-like of a library), or a
    Tensor subclass defines `__torch_dispatch__`: torch
    dispatches `torch.clone(op)` to it from the start, while autojit's checking wrappers are
    installed only once such a type exists (a Tensor subclass does that when its first
    instance is made, a TorchFunctionMode when it is entered). A class statement costs one dict
    lookup more, and a look over its attributes (`unbound.keep_unbound`)."""
    import builtins

    from ..tensor import torch_function
    from ..tensor.tensor import Tensor
    from ..tensor.torch_function import TorchFunctionMode
    from .unbound import keep_unbound

    original = builtins.__build_class__

    def build_class(function, name, *bases, **keywords):
        # Before the class body runs: a body that registers handlers by torch function
        # (`{torch.clone: ...}`) must see the functions dispatch will hand its handler. A
        # Tensor subclass switches the protocol on when its first instance is made, and a
        # TorchFunctionMode when it is entered; autojit's own classes are neither.
        names = getattr(getattr(function, "__code__", None), "co_names", ())
        tensor_base = any(isinstance(base, type) and issubclass(base, Tensor) for base in bases)
        if not torch_function.ACTIVE and not getattr(function, "__module__", "").startswith(
                "autojit.") and (
                ("__torch_function__" in names and not tensor_base and not any(
                    isinstance(base, type) and issubclass(base, TorchFunctionMode)
                    for base in bases)) or
                # A wrapper subclass (torch_geometric's HashTensor): the module defining it
                # may keep torch's functions next (`_old_index_select = torch.index_select`),
                # which must be the dispatching ones that hand its instances to the class.
                ("__torch_dispatch__" in names and tensor_base)):
            torch_function.activate()
        kind = original(function, name, *bases, **keywords)
        # A library's class keeping one of torch's builtin functions as an attribute
        # (`conv = torch.conv2d`), which must not bind the instance it is read through.
        if isinstance(kind, type) and not getattr(function, "__module__", "").startswith(
                "autojit"):
            keep_unbound(kind)
        return kind

    builtins.__build_class__ = build_class


class _Installer:
    """Unpickled first in a process started by spawn or forkserver (it rides in the data the
    parent sends before the child imports the main module): installs the drop-in there."""

    def __reduce__(self):
        return (install, ())


def _install_in_spawned_processes() -> None:
    import multiprocessing.spawn as spawn

    original = spawn.get_preparation_data

    def get_preparation_data(name):
        data = original(name)
        data["autojit_drop_in"] = _Installer()  # spawn.prepare() ignores keys it does not know
        return data

    spawn.get_preparation_data = get_preparation_data


def pytest_load_initial_conftests(early_config, parser, args):
    """pytest's hook, run before a suite's conftest files are imported (`pytest -p
    autojit.drop_in`): the suite's `import torch` gives autojit."""
    install()
