"""autojit.jit: torch.jit's names for the programs and libraries written against TorchScript, in
a system whose compiler is autojit.compile.

autojit has no TorchScript. `script` and `trace` return autojit.compile's callable (a module
stays a module: RecursiveScriptModule, below); the decorators and type hints TorchScript reads
(ignore, unused, export, interface, Final, annotate, Attribute) leave the code as it is, since
autojit traces Python as it runs; `is_scripting()` is True inside a scripted call, so code
takes the branch TorchScript would compile (scripting.py), and `is_tracing()` is False; `fork`
runs its function at once; `freeze` gives a module whose weights are constants of its calls;
and `save` and `load` write and read autojit's archives of scripted modules (archives.py),
not TorchScript's.

This module sits above nn and the compiler, beside func: it wraps what autojit.compile returns
and adds nothing to how a call is compiled (compiler/api.py).
"""


from __future__ import annotations

import copy
import importlib as _importlib
import inspect
import io
import warnings
from typing import Final

from .. import futures as _futures
from ..compiler.api import CompiledFunction
from ..compiler.api import compile as compile_function
from ..nn.module import Module
from ..tensor.tensor import Tensor
from . import archives
from .scripting import is_scripting, run_as_script

__all__ = [
    "Attribute",
    "Final",
    "Future",
    "RecursiveScriptModule",
    "ScriptFunction",
    "ScriptModule",
    "TracerWarning",
    "annotate",
    "export",
    "fork",
    "freeze",
    "ignore",
    "interface",
    "is_scripting",
    "is_tracing",
    "load",
    "optimize_for_inference",
    "save",
    "script",
    "script_if_tracing",
    "script_method",
    "trace",
    "trace_module",
    "unused",
    "wait",
]

# The attribute torch's decorators set on a function: libraries that read it find the same.
_MODIFIER = "_torchscript_modifier"

# A module's registries a scripted module shares with it (Module.__init__ makes them).
_REGISTRIES = ("_parameters", "_buffers", "_non_persistent_buffers_set", "_modules")


class TracerWarning(Warning):
    """torch.jit.TracerWarning: never issued here (a compiled call guards what a TorchScript
    trace would have fixed), defined so that warnings filters naming it still work."""


# ---- what TorchScript would be told ----------------------------------------------------------


def is_tracing() -> bool:
    """False, inside autojit.compile too. torch.jit.is_tracing is about torch.jit.trace's
    recorder, which fixes Python values and control flow into one graph; code asks so that it
    can record sizes as tensors. autojit.compile guards those values and traces again when they
    change, so the eager branch is right. autojit.compiler.is_compiling() says whether autojit
    is tracing a call."""
    return False


def annotate(the_type, the_value):
    """the_value: the type is a hint for TorchScript's type inference, which autojit has not."""
    return the_value


def Attribute(value, type):  # noqa: A002 - torch's argument name
    """value: `self.names = jit.Attribute({}, Dict[str, int])` in a module's __init__ types an
    attribute for TorchScript, as torch.jit.Attribute does where TorchScript is off."""
    return value


def _mark(fn, modifier: str):
    setattr(fn, _MODIFIER, modifier)
    return fn


def ignore(drop=False, **kwargs):
    """`@ignore` or `@ignore(drop=False)`: TorchScript leaves the function as a Python call; the
    function runs as Python here anyway, traced by autojit.compile like any other."""
    if callable(drop):
        return _mark(drop, "ignore")
    if not isinstance(drop, bool):
        raise RuntimeError(
            f"Argument to @torch.jit.ignore must be a bool or a function but got {drop}"
        )
    drop_on_export = kwargs.pop("drop_on_export", None)
    if drop_on_export:
        warnings.warn(
            "ignore(drop_on_export=True) has been deprecated. TorchScript will now "
            "drop the function call on compilation. Use torch.jit.unused now.",
            FutureWarning,
            stacklevel=2,
        )
        drop = drop_on_export
    elif drop:
        warnings.warn(
            "ignore(True) has been deprecated. TorchScript will now drop the "
            "function call on compilation. Use torch.jit.unused now.",
            FutureWarning,
            stacklevel=2,
        )
    return lambda fn: _mark(fn, "unused" if drop else "ignore")


def unused(fn):
    """`@unused`: TorchScript replaces the function with a raise; it runs as it is here, as it
    does in torch outside TorchScript. On a property, marks its getter and setter."""
    if isinstance(fn, property):
        for accessor in (fn.fget, fn.fset):
            if accessor is not None:
                _mark(accessor, "unused")
        return fn
    return _mark(fn, "unused")


def export(fn):
    """`@export` on a module's method: `script(module)` compiles the method as well as forward,
    as TorchScript does (the scripted module's attribute of that name is the compiled method)."""
    return _mark(fn, "export")


def script_method(fn):
    """fn: a ScriptModule's whole call is compiled (ScriptModule), its methods with it."""
    return fn


def interface(obj):
    """obj: a class TorchScript takes as an interface type is an ordinary class here."""
    if not inspect.isclass(obj):
        raise RuntimeError("interface must be applied to a class")
    return obj


def script_if_tracing(fn):
    """fn: TorchScript would script it when a trace calls it; autojit.compile traces it when a
    compiled function calls it."""
    return fn


_script_if_tracing = script_if_tracing  # the private name torch.jit keeps it under too


def _overload(func):
    """func itself: an overload declaration for TorchScript (the definition that follows under
    the same name is what Python calls), as torch.jit._overload returns it."""
    return func


def _overload_method(func):
    """func itself: a method's overload declaration for TorchScript."""
    return func


# ---- script and trace --------------------------------------------------------------------------


class _Scripted:
    """What scripted functions and modules share: a call runs with is_scripting() True unless
    jit.trace made it (scripting.py), and save / save_to_buffer write jit.save's archive."""

    _as_script = True  # False for what jit.trace returns: is_scripting() stays False

    def __call__(self, *args, **kwargs):
        if self._as_script:
            return run_as_script(super().__call__, *args, **kwargs)
        return super().__call__(*args, **kwargs)

    def save(self, f, **kwargs) -> None:
        """jit.save(self, f): an archive that jit.load reads back (archives.py)."""
        save(self, f, **kwargs)

    def save_to_buffer(self, _extra_files=None) -> bytes:
        """The bytes jit.save would write."""
        buffer = io.BytesIO()
        save(self, buffer, _extra_files)
        return buffer.getvalue()


class ScriptFunction(_Scripted, CompiledFunction):
    """What script and trace return for a function: autojit.compile's CompiledFunction (its
    calls, guards and inspection), of a type that torch.jit.ScriptFunction checks can name."""


def _script_function(fn, as_script: bool = True) -> CompiledFunction:
    compiled = compile_function(fn)
    if type(compiled) is not CompiledFunction:
        return compiled
    # compile settled the options (backend, recompile limit, a disabled function's eager run):
    # the same, under the type torch gives a scripted function.
    function = ScriptFunction(
        fn,
        backend=compiled.backend,
        fullgraph=compiled.fullgraph,
        dynamic=compiled.dynamic,
        recompile_limit=compiled.recompile_limit,
    )
    function._as_script = as_script
    return function


class ScriptModule(_Scripted, Module):
    """torch.jit.ScriptModule. A subclass's instance is compiled in place when it is made
    (Module.compile), as TorchScript compiles a ScriptModule's script methods when it is
    constructed; scripted, traced and frozen modules (RecursiveScriptModule) are ScriptModules
    too."""

    _compiles_itself = True

    def __init__(self) -> None:
        super().__init__()
        if self._compiles_itself:
            self.compile()


class RecursiveScriptModule(ScriptModule):
    """What script and trace return for a module, as torch's RecursiveScriptModule: calling it
    runs `autojit.compile(module)`. It shares the module's parameters, buffers and submodules,
    so that parameters(), state_dict() and load_state_dict() have the module's own names (not
    OptimizedModule's `_orig_mod.` ones), as a scripted module's do in torch; train(), eval()
    and to() act on the module, and an attribute it does not have is the module's (then the
    compiled call's: `stats()`, `guards()`, `ir()`)."""

    _compiles_itself = False
    _frozen = False
    _own_attributes = frozenset({"_original", "_compiled", "_frozen", "_as_script"})

    def __init__(self, module: Module, compiled) -> None:
        # The module first: Module.__init__ sets training, which the property below passes on.
        object.__setattr__(self, "_original", module)
        training = module.training
        super().__init__()
        module.training = training
        object.__setattr__(self, "_compiled", compiled)
        for name in _REGISTRIES:
            object.__setattr__(self, name, module.__dict__[name])

    @property
    def training(self) -> bool:
        return self._original.training

    @training.setter
    def training(self, mode: bool) -> None:
        self._original.training = mode

    @property
    def original_name(self) -> str:
        """The class name of the module scripted, as torch's scripted module has it."""
        return type(self._original).__name__

    def forward(self, *args, **kwargs):
        return self._compiled(*args, **kwargs)

    # A module may define these differently from Module's (a train that keeps batch norms in
    # eval mode, a state_dict with its own keys): the module's own run.
    def train(self, mode: bool = True) -> RecursiveScriptModule:
        self._original.train(mode)
        return self

    def state_dict(self, *args, **kwargs):
        return self._original.state_dict(*args, **kwargs)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        return self._original.load_state_dict(state_dict, strict=strict, assign=assign)

    # Containers stay indexable, as torch's scripted Sequential and ModuleList are.
    def __getitem__(self, index):
        return self._original[index]

    def __len__(self) -> int:
        return len(self._original)

    def __iter__(self):
        return iter(self._original)

    def __bool__(self) -> bool:  # not len(): a module that is no container is still true
        return True

    def __getattr__(self, name: str):
        original = self.__dict__.get("_original")
        if original is None:  # not set up yet (being copied or unpickled)
            raise AttributeError(f"'RecursiveScriptModule' object has no attribute '{name}'")
        try:
            return getattr(original, name)
        except AttributeError:
            if name.startswith("_"):
                raise
            return getattr(self.__dict__["_compiled"], name)

    def __setattr__(self, name: str, value) -> None:
        if name in self._own_attributes or hasattr(type(self), name):
            super().__setattr__(name, value)
        else:
            setattr(self._original, name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._own_attributes:
            super().__delattr__(name)
        else:
            delattr(self._original, name)

    def extra_repr(self) -> str:
        return f"original_name={self.original_name}"


def _scripted_module(module: Module, as_script: bool = True) -> RecursiveScriptModule:
    scripted = RecursiveScriptModule(module, compile_function(module))
    scripted._as_script = as_script
    for name in _exported_methods(type(module)):
        # In the instance dict, the compiled method is found before the module's own.
        scripted.__dict__[name] = _script_function(getattr(module, name), as_script)
    return scripted


def _exported_methods(cls) -> list:
    names = {
        name
        for klass in cls.__mro__
        for name, value in vars(klass).items()
        if getattr(value, _MODIFIER, None) == "export"
    }
    return sorted(names - {"forward"})


def script(obj, optimize=None, _frames_up=0, _rcb=None, example_inputs=None):
    """`autojit.compile(obj)` under torch.jit.script's name, for a function (a ScriptFunction)
    or a module (a RecursiveScriptModule sharing the module's parameters, with its exported
    methods compiled too); a ScriptModule or a compiled function is returned as it is.

    A class is returned as it is: a class TorchScript compiles is an ordinary class here (an
    nn.Module subclass raises, as in torch: script an instance). A dict or a list is copied, as
    torch copies it into a TorchScript container. example_inputs, which TorchScript would run to
    infer argument types, and _frames_up and _rcb are not needed: autojit.compile reads the
    types from each call.
    """
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect.", FutureWarning, stacklevel=2)
    if isinstance(obj, ScriptModule | CompiledFunction):
        return obj
    if isinstance(obj, Module):
        return _scripted_module(obj)
    if inspect.isclass(obj):
        if issubclass(obj, Module):
            raise RuntimeError(
                f"Type '{obj}' cannot be compiled since it inherits from "
                "nn.Module, pass an instance instead"
            )
        return obj
    if isinstance(obj, dict):
        return dict(obj)
    if isinstance(obj, list):
        return list(obj)
    if not callable(obj):
        raise TypeError(
            f"script expects a function, an nn.Module, a class, a dict or a list, "
            f"got {type(obj).__name__}"
        )
    return _script_function(obj)


def _example_arguments(example_inputs, example_kwarg_inputs) -> tuple[tuple, dict]:
    """(args, kwargs) of the example call, read as torch.jit.trace reads them: a tensor or a
    dict alone is the one argument, another iterable the arguments."""
    if isinstance(example_kwarg_inputs, dict):
        return (), example_kwarg_inputs
    if example_inputs is None:
        raise RuntimeError("example_kwarg_inputs should be a dict")
    if isinstance(example_inputs, Tensor | dict):
        return (example_inputs,), {}
    return tuple(example_inputs), {}


def trace(
    func,
    example_inputs=None,
    optimize=None,
    check_trace=True,
    check_inputs=None,
    check_tolerance=1e-5,
    strict=True,
    _force_outplace=False,
    _module_class=None,
    _compilation_unit=None,
    example_kwarg_inputs=None,
    _store_inputs=True,
):
    """`script(func)`, run once on the example inputs, as torch.jit.trace runs func to record
    it: an error in the function surfaces here, and the compiled executable for those inputs is
    built. A module, or its bound forward, gives a RecursiveScriptModule; a function, a
    ScriptFunction. Unlike a TorchScript trace, the result is not fixed to the example's sizes
    and branches: autojit.compile guards them and traces again for other inputs, so check_trace,
    check_inputs, check_tolerance and strict have nothing to check.
    """
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect.", FutureWarning, stacklevel=2)
    if isinstance(func, ScriptModule):
        warnings.warn(
            "The input to trace is already a ScriptModule, tracing it is a no-op. "
            "Returning the object as is.",
            stacklevel=2,
        )
        return func
    owner = getattr(func, "__self__", None)
    if isinstance(owner, Module):
        if func.__name__ != "forward":
            raise AttributeError(
                "trace doesn't support compiling individual module's "
                "functions.\nPlease use trace_module"
            )
        func = owner
    if isinstance(func, Module):
        inputs = example_inputs
        if inputs is None:
            if not isinstance(example_kwarg_inputs, dict):
                raise RuntimeError("example_kwarg_inputs should be a dict")
            inputs = example_kwarg_inputs
        return trace_module(
            func,
            {"forward": inputs},
            example_inputs_is_kwarg=isinstance(example_kwarg_inputs, dict),
        )
    if isinstance(func, CompiledFunction) or not inspect.isfunction(func):
        compiled = script(func)
    else:  # traced, not scripted: is_scripting() stays False in its calls
        compiled = _script_function(func, as_script=False)
    args, kwargs = _example_arguments(example_inputs, example_kwarg_inputs)
    compiled(*args, **kwargs)
    return compiled


def trace_module(
    mod,
    inputs,
    optimize=None,
    check_trace=True,
    check_inputs=None,
    check_tolerance=1e-5,
    strict=True,
    _force_outplace=False,
    _module_class=None,
    _compilation_unit=None,
    example_inputs_is_kwarg=False,
    _store_inputs=True,
):
    """`script(mod)` with each method named in `inputs` ({name: example inputs}) compiled and
    run once on its example, as torch.jit.trace_module traces each."""
    if optimize is not None:
        warnings.warn("`optimize` is deprecated and has no effect.", FutureWarning, stacklevel=2)
    if not isinstance(mod, Module):
        raise AttributeError("expected torch.nn.Module as the first argument")
    if not isinstance(inputs, dict):
        raise AttributeError("expected a dictionary of (method_name, input) pairs")
    traced = mod if isinstance(mod, ScriptModule) else _scripted_module(mod, as_script=False)
    for name, example in inputs.items():
        if name != "forward" and name not in traced.__dict__:
            traced.__dict__[name] = _script_function(getattr(mod, name), as_script=False)
        method = traced if name == "forward" else traced.__dict__[name]
        if example_inputs_is_kwarg and isinstance(example, dict):
            method(**example)
        else:
            method(*_example_arguments(example, None)[0])
    return traced


# ---- fork and wait ------------------------------------------------------------------------------


Future = _futures.Future  # torch.jit.Future is torch.futures.Future (torch.Future's subclass)


def fork(func, *args, **kwargs) -> Future:
    """func(*args, **kwargs), run now, as torch.jit.fork runs it outside TorchScript (an error
    raises here); wait(future) gives the result. Inside a compiled function the call's ops are
    traced into its graph, where the scheduler orders them with the rest."""
    future: Future = Future()
    future.set_result(func(*args, **kwargs))
    return future


def wait(future: Future):
    """The result of the call fork started."""
    if not isinstance(future, Future):
        raise TypeError(f"wait expects a Future from fork, got {type(future).__name__}")
    return future.wait()


# ---- freezing ------------------------------------------------------------------------------------


def freeze(mod, preserved_attrs=None, optimize_numerics: bool = True) -> RecursiveScriptModule:
    """A scripted module in eval mode, frozen: calls run a copy of its module tree whose
    weights are constants, tensors that share the parameters' storage but do not require grad
    (an in-place update of a parameter shows in the frozen module's calls, as in torch; its
    outputs do not require grad for the weights). The copy stays in eval mode whatever the
    module is set to later. The module's other attributes stay reachable, so preserved_attrs
    need not name them; optimize_numerics has nothing to change here.
    """
    if not isinstance(mod, ScriptModule):
        raise RuntimeError(
            "Freezing expects a ScriptModule as input. Please use "
            "torch.jit.script or torch.jit.trace to script your 'nn.Module'."
        )
    if mod.training:
        raise RuntimeError(
            "Freezing is currently only implemented for modules in eval mode. "
            "Please call .eval() on your module before freezing."
        )
    if mod._frozen:
        return mod
    module = mod._original if isinstance(mod, RecursiveScriptModule) else mod
    # deepcopy's memo maps each tensor to what the copy holds: the parameters detached, the
    # buffers themselves. Everything else (modules, hooks, settings) is copied.
    memo = {id(parameter): parameter.detach() for parameter in module.parameters()}
    memo.update({id(buffer): buffer for buffer in module.buffers()})
    copied = copy.deepcopy(module, memo)
    frozen = RecursiveScriptModule(copied, compile_function(copied))
    frozen._frozen = True
    return frozen


def optimize_for_inference(mod, other_methods=None) -> RecursiveScriptModule:
    """`freeze(mod.eval())`, as torch's sets a module that is not frozen to eval mode and
    freezes it; torch's inference passes (fusions, MKLDNN layouts) are autojit.compile's
    kernels here."""
    if not isinstance(mod, ScriptModule):
        raise RuntimeError(
            "optimize_for_inference expects a ScriptModule as input. Please use "
            "torch.jit.script or torch.jit.trace to script your 'nn.Module'."
        )
    if mod._frozen:
        return mod
    return freeze(mod.eval(), preserved_attrs=other_methods)


# ---- archives ------------------------------------------------------------------------------------


def _payload(m) -> dict:
    """What an archive keeps of a scripted module or function (archives.py)."""
    if isinstance(m, RecursiveScriptModule):
        return {"kind": "frozen" if m._frozen else "module", "object": m._original,
                "as_script": m._as_script}
    if isinstance(m, ScriptModule):
        # Compiled again when loaded: what the compiled call holds is not the module's state.
        kept = copy.copy(m)
        kept.__dict__.pop("_compiled_call_impl", None)
        return {"kind": "script_module", "object": kept, "as_script": m._as_script}
    if isinstance(m, ScriptFunction):
        return {"kind": "function", "object": m.fn, "as_script": m._as_script}
    raise AttributeError(f"'{type(m).__name__}' object has no attribute 'save': jit.save takes "
                         "what jit.script or jit.trace returned")


def save(m, f, _extra_files=None) -> None:
    """Write the scripted or traced module or function `m` to f (a path or a binary file
    object), with `_extra_files` ({name: str or bytes}) beside it, so that jit.load gives it
    back: a scripted module with the same weights, buffers, submodules, attributes and
    training mode, compiled again on its first call.

    The file is autojit's archive (archives.py), not TorchScript: torch cannot read it, and
    loading it imports the module's classes, as loading a whole model saved with torch.save
    does, so the code that defines them must be importable where it is loaded.
    """
    archives.write(_payload(m), f, _extra_files)


def load(f, map_location=None, _extra_files=None, _restore_shapes=False):
    """The scripted module or function jit.save wrote to f (a path or a binary file object),
    its tensors moved by `map_location` as autojit.load moves them; each name in
    `_extra_files` gets that file's bytes (b"" where the archive has none). A TorchScript archive
    written by torch raises NotImplementedError: autojit has no TorchScript. Loading runs what
    the file names (it is a pickle): load only files you trust."""
    payload = archives.read(f, map_location, _extra_files)
    kind, obj, as_script = payload["kind"], payload["object"], payload.get("as_script", True)
    if kind == "function":
        return _script_function(obj, as_script)
    if kind == "script_module":
        obj.compile()
        obj._as_script = as_script
        return obj
    if kind == "frozen":
        frozen = RecursiveScriptModule(obj, compile_function(obj))
        frozen._frozen = True
        return frozen
    return _scripted_module(obj, as_script)


# torch.jit's own aliases of fork and wait, which older code calls.
_fork, _wait = fork, wait

# torch.jit.annotations, as a submodule: the name `annotations` (__future__'s feature until
# here) is the module from now on.
annotations = _importlib.import_module(f"{__name__}.annotations")
