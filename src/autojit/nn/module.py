"""Module: the base class of every layer and model, holding parameters, buffers and children.

A Module keeps three ordered registries filled by attribute assignment (__setattr__): its
Parameters, its buffers (tensors that are state but not trained, such as running statistics)
and its child Modules. Everything that walks a model (parameters(), state_dict(), train(),
to(), repr) walks these registries. Calling a module runs its forward pre-hooks, forward() and
forward hooks; forward itself is ordinary autojit code, so a model runs eagerly, records
autograd history, and traces into one graph under autojit.compile, where its parameters are
captured tensors of the graph. state_dict and load_state_dict live in module_state.py,
the backward hooks in module_hooks.py, Module.compile in module_compile.py, to() and the dtype
and device casts in module_conversion.py.
"""

from __future__ import annotations

from ..autograd.hooks import HookDict, RemovableHandle
from ..tensor import dtypes
from ..tensor.state import state
from ..tensor.tensor import Tensor
from . import module_global_hooks as global_hooks
from .module_compile import CompileMixin
from .module_conversion import ConversionMixin
from .module_hooks import BackwardHookMixin, call_with_hooks
from .module_memory import MemoryMixin
from .module_state import StateDictMixin
from .parameter import Buffer, Parameter

__all__ = ["Module"]

# The scalar names torch uses in tensor type names ("torch.FloatTensor").
_TENSOR_TYPE_NAMES = dtypes.SCALAR_TYPE_NAMES


def typename(value) -> str:
    """The name of a value's type as the registration errors print it."""
    if isinstance(value, Tensor):
        return f"{dtypes.REPR_PREFIX[0]}.{_TENSOR_TYPE_NAMES[value.dtype.name]}Tensor"
    kind = type(value)
    module = kind.__module__
    if module in (None, "builtins"):
        return kind.__qualname__
    return f"{module}.{kind.__qualname__}"


def add_indent(text: str, spaces: int) -> str:
    """Indent every line but the first (nested module reprs); blank lines stay empty."""
    lines = text.split("\n")
    if len(lines) == 1:
        return text
    first = lines.pop(0)
    rest = [(" " * spaces) + line if line.strip() else "" for line in lines]
    return first + "\n" + "\n".join(rest)


def _forward_unimplemented(self, *input):  # noqa: A002
    raise NotImplementedError(
        f'Module [{type(self).__name__}] is missing the required "forward" function')


def _add_hook(hooks: HookDict, hook, prepend: bool) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        rest = [(key, value) for key, value in hooks.items() if key != handle.id]
        hooks.clear()
        hooks[handle.id] = hook
        hooks.update(rest)
    return handle


class Module:
    """Base class for all neural network modules.

    Subclasses assign layers and Parameters as attributes in ``__init__`` (after calling
    ``super().__init__()``) and define ``forward``::

        >>> import autojit
        >>> from autojit import nn
        >>> class TwoLayer(nn.Module):
        ...     def __init__(self):
        ...         super().__init__()
        ...         self.hidden = nn.Linear(4, 8)
        ...         self.out = nn.Linear(8, 2)
        ...     def forward(self, x):
        ...         return self.out(self.hidden(x).relu())
        >>> [name for name, _ in TwoLayer().named_parameters()]
        ['hidden.weight', 'hidden.bias', 'out.weight', 'out.bias']
    """

    _version = 1
    training: bool
    forward = _forward_unimplemented
    # The dicts whose entries users reach as attributes (`model.fc1.weight`): compiled guards
    # name them that way (compiler/reachability.py).
    _attribute_dicts = ("_modules", "_parameters", "_buffers")

    def __init__(self) -> None:
        # object.__setattr__: these registries must exist before Module.__setattr__ can run.
        set_field = super().__setattr__
        set_field("training", True)
        set_field("_parameters", {})
        set_field("_buffers", {})
        set_field("_non_persistent_buffers_set", set())
        set_field("_modules", {})
        set_field("_forward_hooks", HookDict())
        set_field("_forward_hooks_with_kwargs", set())
        set_field("_forward_hooks_always_called", set())
        set_field("_forward_pre_hooks", HookDict())
        set_field("_forward_pre_hooks_with_kwargs", set())
        set_field("_backward_hooks", HookDict())
        set_field("_backward_pre_hooks", HookDict())

    # ---- registration -------------------------------------------------------------------

    def register_buffer(self, name: str, tensor: Tensor | None, persistent: bool = True) -> None:
        """Add a tensor that is module state but not a parameter (saved unless persistent=False)."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"buffer name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError('buffer name can\'t contain "."')
        if name == "":
            raise KeyError('buffer name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._buffers:
            raise KeyError(f"attribute '{name}' already exists")
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{typename(tensor)}' object to buffer '{name}' "
                            "(autojit Tensor or None required)")
        if global_hooks.buffer_registration_hooks:
            tensor = global_hooks.registered(global_hooks.buffer_registration_hooks, self, name,
                                             tensor)
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name: str, param: Parameter | None) -> None:
        """Add a Parameter (or None, a placeholder skipped by parameters() and state_dict())."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        if not isinstance(name, str):
            raise TypeError(f"parameter name should be a string. Got {typename(name)}")
        if "." in name:
            raise KeyError('parameter name can\'t contain "."')
        if name == "":
            raise KeyError('parameter name can\'t be empty string ""')
        if hasattr(self, name) and name not in self._parameters:
            raise KeyError(f"attribute '{name}' already exists")
        if param is None:
            self._parameters[name] = None
        elif not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{typename(param)}' object to parameter '{name}' "
                            "(autojit.nn.Parameter or None required)")
        elif param.grad_fn is not None:
            raise ValueError(
                f"Cannot assign non-leaf Tensor to parameter '{name}'. Model parameters must be "
                f"created explicitly. To express '{name}' as a function of another Tensor, "
                "compute the value in the forward() method.")
        else:
            if global_hooks.parameter_registration_hooks:
                param = global_hooks.registered(global_hooks.parameter_registration_hooks, self,
                                                name, param)
            self._parameters[name] = param

    def add_module(self, name: str, module: Module | None) -> None:
        """Add a child module, reachable as the attribute `name`."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        if global_hooks.module_registration_hooks:
            module = global_hooks.registered(global_hooks.module_registration_hooks, self, name,
                                             module)
        self._modules[name] = module

    def register_module(self, name: str, module: Module | None) -> None:
        """Alias for add_module."""
        self.add_module(name, module)

    def get_submodule(self, target: str) -> Module:
        """The submodule at a dotted path such as ``"encoder.layers.0"`` ("" is self)."""
        if target == "":
            return self
        module = self
        for item in target.split("."):
            if not hasattr(module, item):
                raise AttributeError(module._get_name() + " has no attribute `" + item + "`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError("`" + item + "` is not an nn.Module")
        return module

    def get_parameter(self, target: str) -> Parameter:
        """The parameter at a dotted path such as ``"encoder.weight"``."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(module._get_name() + " has no attribute `" + name + "`")
        param = getattr(module, name)
        if not isinstance(param, Parameter):
            raise AttributeError("`" + name + "` is not an nn.Parameter")
        return param

    def get_buffer(self, target: str) -> Tensor:
        """The buffer at a dotted path such as ``"norm.running_mean"``."""
        module_path, _, name = target.rpartition(".")
        module = self.get_submodule(module_path)
        if not hasattr(module, name):
            raise AttributeError(module._get_name() + " has no attribute `" + name + "`")
        if name not in module._buffers:
            raise AttributeError("`" + name + "` is not a buffer")
        return getattr(module, name)

    # ---- attribute access ---------------------------------------------------------------

    def __getattr__(self, name: str):
        # Only reached when normal lookup fails: parameters, buffers and children live in the
        # registries, not in __dict__.
        fields = self.__dict__
        for registry in ("_parameters", "_buffers", "_modules"):
            entries = fields.get(registry)
            if entries is not None and name in entries:
                return entries[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name: str, value) -> None:
        def remove_from(*registries):
            for registry in registries:
                if name in registry:
                    if isinstance(registry, dict):
                        del registry[name]
                    else:
                        registry.discard(name)

        params = self.__dict__.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(self.__dict__, self._buffers, self._modules,
                        self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as parameter '{name}' "
                                "(autojit.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = self.__dict__.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(self.__dict__, self._parameters, self._buffers,
                        self._non_persistent_buffers_set)
            if global_hooks.module_registration_hooks:
                value = global_hooks.registered(global_hooks.module_registration_hooks, self,
                                                name, value)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{typename(value)}' as child module '{name}' "
                                "(autojit.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = self.__dict__.get("_buffers")
        if isinstance(value, Buffer) or buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{typename(value)}' as buffer '{name}' "
                                "(autojit.Tensor or None expected)")
            persistent = value.persistent if isinstance(value, Buffer) else \
                name not in self._non_persistent_buffers_set
            self.register_buffer(name, value, persistent)
            return
        super().__setattr__(name, value)

    def __delattr__(self, name: str) -> None:
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __dir__(self):
        keys = (dir(self.__class__) + list(self.__dict__) + list(self._parameters)
                + list(self._modules) + list(self._buffers))
        return sorted(key for key in keys if not key[0].isdigit())

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)

    # ---- walking the module tree --------------------------------------------------------

    def _named_members(self, get_members, prefix: str = "", recurse: bool = True,
                       remove_duplicate: bool = True):
        seen = set()  # ids: a tensor's == is elementwise, so a set of tensors cannot be used
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for name, member in get_members(module):
                if member is None or id(member) in seen:
                    continue
                if remove_duplicate:
                    seen.add(id(member))
                yield module_prefix + ("." if module_prefix else "") + name, member

    def parameters(self, recurse: bool = True):
        """Iterate over the module's parameters (each shared parameter once)."""
        for _name, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix: str = "", recurse: bool = True,
                         remove_duplicate: bool = True):
        """Iterate over (dotted name, parameter) pairs."""
        yield from self._named_members(lambda module: module._parameters.items(), prefix,
                                       recurse, remove_duplicate)

    def buffers(self, recurse: bool = True):
        """Iterate over the module's buffers."""
        for _name, buffer in self.named_buffers(recurse=recurse):
            yield buffer

    def named_buffers(self, prefix: str = "", recurse: bool = True,
                      remove_duplicate: bool = True):
        """Iterate over (dotted name, buffer) pairs."""
        yield from self._named_members(lambda module: module._buffers.items(), prefix,
                                       recurse, remove_duplicate)

    def children(self):
        """Iterate over the immediate child modules."""
        for _name, module in self.named_children():
            yield module

    def named_children(self):
        """Iterate over (name, child module) pairs, each child once."""
        seen = set()
        for name, module in self._modules.items():
            if module is not None and id(module) not in seen:
                seen.add(id(module))
                yield name, module

    def modules(self, remove_duplicate: bool = True):
        """Iterate over all modules of the tree, this one first."""
        for _name, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(self, memo: set | None = None, prefix: str = "",
                      remove_duplicate: bool = True):
        """Iterate over (dotted name, module) pairs of the whole tree, depth first."""
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            yield from module.named_modules(memo, prefix + ("." if prefix else "") + name,
                                            remove_duplicate)

    def apply(self, fn) -> Module:
        """Call fn on every submodule (children first) and then on self; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    # ---- modes and gradients --------------------------------------------------------------

    def train(self, mode: bool = True) -> Module:
        """Set training mode on this module and all its descendants; returns self."""
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self) -> Module:
        """Set evaluation mode (train(False)); returns self."""
        return self.train(False)

    def requires_grad_(self, requires_grad: bool = True) -> Module:
        """Set requires_grad on every parameter; returns self."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset every parameter's .grad: to None by default, else to zeros in place."""
        tracing = state.tracer is not None
        for param in self.parameters():
            if tracing:
                # Through the property while a compiled function is traced: a .grad set to
                # None and made again by a backward is a new tensor on every call, and one
                # zeroed in place is one whose identity is guarded.
                if set_to_none:
                    param.grad = None
                    continue
                grad = param.grad
            else:
                grad = param._grad
            if grad is None:
                continue
            if set_to_none:
                param._grad = None
            else:
                if grad.grad_fn is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                grad.zero_()

    # ---- calling and hooks ----------------------------------------------------------------

    def register_forward_pre_hook(self, hook, *, prepend: bool = False,
                                  with_kwargs: bool = False) -> RemovableHandle:
        """Call ``hook(module, args)`` before forward; it may return replacement args.

        With with_kwargs=True the hook is ``hook(module, args, kwargs)`` and may return a
        replacement ``(args, kwargs)`` pair.
        """
        handle = _add_hook(self._forward_pre_hooks, hook, prepend)
        if with_kwargs:
            self._forward_pre_hooks_with_kwargs.add(handle.id)
        return handle

    def register_forward_hook(self, hook, *, prepend: bool = False, with_kwargs: bool = False,
                              always_call: bool = False) -> RemovableHandle:
        """Call ``hook(module, args, output)`` after forward; it may return a new output.

        With with_kwargs=True the hook is ``hook(module, args, kwargs, output)``; with
        always_call=True it also runs when forward raised.
        """
        handle = _add_hook(self._forward_hooks, hook, prepend)
        if with_kwargs:
            self._forward_hooks_with_kwargs.add(handle.id)
        if always_call:
            self._forward_hooks_always_called.add(handle.id)
        return handle

    def __call__(self, *args, **kwargs):
        compiled = self.__dict__.get("_compiled_call_impl")
        if compiled is not None:  # Module.compile (module_compile.py)
            return compiled(*args, **kwargs)
        return self._call_impl(*args, **kwargs)

    def _call_impl(self, *args, **kwargs):
        if not (self._forward_hooks or self._forward_pre_hooks or self._backward_hooks
                or self._backward_pre_hooks or global_hooks.any_call_hooks()):
            return self.forward(*args, **kwargs)
        return call_with_hooks(self, args, kwargs)

    # ---- printing -------------------------------------------------------------------------

    def _get_name(self) -> str:
        return self.__class__.__name__

    def extra_repr(self) -> str:
        """The module's own settings for its repr (one line, or several); override it."""
        return ""

    def __repr__(self) -> str:
        extra = self.extra_repr()
        extra_lines = extra.split("\n") if extra else []
        child_lines = [f"({key}): " + add_indent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        text = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                text += extra_lines[0]
            else:
                text += "\n  " + "\n  ".join(lines) + "\n"
        return text + ")"


def _take_parts(parts: tuple) -> None:
    """Puts the methods and class attributes of the parts kept in other files into Module's own
    namespace, the first part's where two share a name, as inheriting them in this order would,
    but not a name Module defines. torch's nn.Module derives from object alone, and libraries
    compare class hierarchies (BoTorch's tests check a transform's `__mro__` down to
    `Module, ABC, object`): the parts are not bases. Functions are renamed Module's, as bound
    methods and tracebacks name them in torch."""
    own = set(vars(Module))
    for part in parts:
        for name, value in vars(part).items():
            if name in own or name in ("__module__", "__qualname__", "__doc__", "__dict__",
                                       "__weakref__"):
                continue
            if callable(value) and hasattr(value, "__qualname__") and \
                    not isinstance(value, type):
                value.__qualname__ = f"Module.{name}"
            setattr(Module, name, value)
            own.add(name)


_take_parts((StateDictMixin, BackwardHookMixin, CompileMixin, MemoryMixin, ConversionMixin))
