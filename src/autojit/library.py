"""autojit.library: torch.library's custom operators, defined in Python and called as
`torch.ops.<namespace>.<name>`.

- `custom_op("ns::name", mutates_args=...)` turns a typed Python function into an operator
  (its schema inferred from the annotations, `infer_schema`); `register_kernel` gives it
  another function for a device type, `register_fake` a function of shapes and dtypes (run on
  meta tensors), `register_autograd` a backward (and `setup_context`) so that gradients flow
  through it; without one, a backward through it raises torch's error;
- `Library(ns, "DEF" | "FRAGMENT" | "IMPL")` defines operators from schema strings
  (`define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")`) and gives them
  kernels per dispatch key (`impl(name, fn, "CPU")`); `define` and `impl` are its functions.

Calling an operator picks its kernel by the device of its tensor arguments ("CPU", "CUDA",
"Meta", then the device-neutral "CompositeExplicitAutograd" and
"CompositeImplicitAutograd", the function of custom_op); inside an autocast region of the
device, its "Autocast<device>" kernel first, unless `_ExcludeDispatchKeyGuard` excludes it
(as the autocast kernel does when it calls the operator again). A kernel given with
`Library.impl` runs as a composite does: its ops record autograd history. custom_op's
functions run below autograd, as torch's do: their ops record nothing, and the results get a
node that runs the registered backward. Inside autojit.compile such a call is one graph node
that runs the kernel on the call's values, as torch.compile keeps a custom operator opaque
(library_graph.py), where the operator has a fake impl and the call allows it; a kernel
registered with `Library.impl` for "CompositeImplicitAutograd" is traced like any other code.
The schema text an operator is defined by, parsed or inferred from annotations, is
library_schema.py's.
"""

from __future__ import annotations

import enum
import threading
import warnings

from .autograd.function import Function
from .autograd.grad_mode import no_grad
from .library_graph import graph_form
from .library_schema import Argument, Schema, infer_schema
from .ops.aten_namespace import OpOverload, OpOverloadPacket, register_namespace
from .ops.autocast import is_autocast_enabled
from .tensor.state import state
from .tensor.tensor import Tensor

__all__ = ["Library", "custom_op", "define", "get_ctx", "impl", "infer_schema",
           "register_autograd", "register_fake", "register_kernel"]

# ---- dispatch keys --------------------------------------------------------------------------

class DispatchKey(enum.Enum):
    """The keys a kernel is registered under (torch._C.DispatchKey's names for them)."""

    CPU = "CPU"
    CUDA = "CUDA"
    Meta = "Meta"
    Autograd = "Autograd"
    AutogradCPU = "AutogradCPU"
    AutogradCUDA = "AutogradCUDA"
    AutocastCPU = "AutocastCPU"
    AutocastCUDA = "AutocastCUDA"
    AutocastXPU = "AutocastXPU"
    CompositeImplicitAutograd = "CompositeImplicitAutograd"
    CompositeExplicitAutograd = "CompositeExplicitAutograd"
    # functorch's keys: no kernel is registered under them (autojit's transforms do not
    # dispatch), but programs name them, to exclude them as torch's functorch tests do.
    Functionalize = "Functionalize"
    FuncTorchBatched = "FuncTorchBatched"
    FuncTorchGradWrapper = "FuncTorchGradWrapper"


class DispatchKeySet:
    """A set of dispatch keys (`DispatchKeySet(DispatchKey.AutocastCPU) | ...`)."""

    def __init__(self, *keys):
        self.keys = frozenset(key.value if isinstance(key, DispatchKey) else str(key)
                              for key in keys)

    def __or__(self, other: DispatchKeySet) -> DispatchKeySet:
        return DispatchKeySet(*self.keys, *other.keys)

    def has(self, key) -> bool:
        return (key.value if isinstance(key, DispatchKey) else key) in self.keys

    def __repr__(self) -> str:
        return f"DispatchKeySet({', '.join(sorted(self.keys))})"


_excluded = threading.local()


def _excluded_keys() -> frozenset:
    return getattr(_excluded, "keys", frozenset())


class _ExcludeDispatchKeyGuard:
    """`with _ExcludeDispatchKeyGuard(keys):` the kernels under `keys` are skipped inside (an
    autocast kernel calling its operator again reaches the device's kernel)."""

    def __init__(self, keys: DispatchKeySet):
        self.keys = keys.keys

    def __enter__(self):
        self._saved = _excluded_keys()
        _excluded.keys = self._saved | self.keys
        return self

    def __exit__(self, *exc) -> bool:
        _excluded.keys = self._saved
        return False


def _dispatch_tls_local_exclude_set() -> DispatchKeySet:
    """The keys excluded in this thread (by the _ExcludeDispatchKeyGuards entered), as torch's
    torch._C._dispatch_tls_local_exclude_set() answers."""
    return DispatchKeySet(*_excluded_keys())


# ---- operators and namespaces -----------------------------------------------------------------

_OPERATORS: dict = {}  # "ns::name.overload" -> CustomOperator
_DEFINED: dict = {}  # namespace -> the Library that DEF'd it


class FakeContext:
    """What get_ctx() gives inside a fake impl: sizes a result has that depend on values
    cannot be made, autojit's meta tensors having concrete sizes."""

    def new_dynamic_size(self, *, min: int = 0, max=None):  # noqa: A002
        raise NotImplementedError(
            "a fake impl asked for a data-dependent size (new_dynamic_size / "
            "create_unbacked_symint): autojit's meta tensors have concrete sizes")

    create_unbacked_symint = new_dynamic_size


_fake_context: list = []


def get_ctx() -> FakeContext:
    """The context of the fake impl running now."""
    if not _fake_context:
        raise RuntimeError("get_ctx() called outside of a fake impl (register_fake)")
    return _fake_context[-1]


class _NoFormula(Function):
    """The node of a custom op's results that has no registered backward: reaching it in a
    backward raises torch's error."""

    @staticmethod
    def forward(ctx, name, inputs, *inputs_and_results):
        ctx.name = name
        return tuple(result.detach() for result in inputs_and_results[inputs:])

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(f"Trying to backward through {ctx.name} but no autograd formula "
                           "was registered. Please use register_autograd to add one.")


class _NotImplementedGradient(Function):
    """The node of a Library-defined operator's results that has no autograd kernel: torch's
    fallback, which warns when a backward reaches it and passes no gradient on (custom_op's
    operators raise instead: _NoFormula)."""

    @staticmethod
    def forward(ctx, name, inputs, *inputs_and_results):
        ctx.name, ctx.inputs = name, inputs
        return tuple(result.detach() for result in inputs_and_results[inputs:])

    @staticmethod
    def backward(ctx, *grads):
        warnings.warn(
            f"{ctx.name}: an autograd kernel was not registered to the Autograd key(s) but we "
            "are trying to backprop through it. This may lead to silently incorrect behavior. "
            "This behavior is deprecated and will be removed in a future version of PyTorch. "
            "If your operator is differentiable, please ensure you have registered an autograd "
            "kernel to the correct Autograd key (e.g. DispatchKey::Autograd, "
            "DispatchKey::CompositeImplicitAutograd). If your operator is not differentiable, "
            "or to squash this warning and use the previous behavior, please register "
            "torch::CppFunction::makeFallthrough() to DispatchKey::Autograd.", stacklevel=2)
        return (None, None) + (None,) * (ctx.inputs + len(grads))


class CustomOperator:
    """One operator overload: its schema, kernels by dispatch key, fake impl and backward."""

    def __init__(self, namespace: str, schema: Schema):
        self.namespace, self.schema = namespace, schema
        self.name = f"{namespace}::{schema.name}"
        self.kernels: dict = {}  # dispatch key -> (function, runs below autograd)
        self.fake = None
        self.backward = self.setup_context = None
        self.custom_def = None  # the CustomOpDef made by custom_op, if any
        packet = register_namespace(namespace).packet(schema.name)
        self.overload = OpOverload(packet, schema.overload, self)
        self.overload.namespace = namespace
        self.overload._schema = schema.text(self.name)
        packet._overloads[schema.overload] = self.overload

    def __call__(self, *args, **kwargs):
        tensors = [value for value in _flat(args) + _flat(list(kwargs.values()))
                   if isinstance(value, Tensor)]
        kinds = {tensor.device.type for tensor in tensors}
        if "meta" in kinds:
            return self._fake(args, kwargs)
        key = "CUDA" if "cuda" in kinds else "CPU"
        autocast = f"Autocast{key}"
        if autocast in self.kernels and autocast not in _excluded_keys() and \
                is_autocast_enabled(key.lower()):
            return self.kernels[autocast][0](*args, **kwargs)
        function, below = self.kernel(key)
        if not below:
            return function(*args, **kwargs)
        if key == "CPU" and any(tensor._payload is None for tensor in tensors):
            # traced: one graph node that runs the kernel, where the call allows it
            function = graph_form(self, function, args, kwargs) or function
        return self._below_autograd(function, tensors, args, kwargs)

    def kernel(self, key: str) -> tuple:
        """(function, runs below autograd) for dispatch key "CPU" or "CUDA"."""
        for candidate in (key, "CompositeExplicitAutograd", "CompositeImplicitAutograd"):
            if candidate in self.kernels:
                return self.kernels[candidate]
        raise NotImplementedError(
            f"Could not run '{self.name}' with arguments from the '{key}' backend. This "
            "could be because the operator doesn't exist for this backend, or was omitted "
            "during the selective/custom build process (if using custom build).")

    def _below_autograd(self, function, tensors: list, args: tuple, kwargs: dict):
        differentiable = state.grad_enabled and any(tensor.requires_grad for tensor in tensors)
        if differentiable and self.backward is not None:
            return _call_with_formula(self, function, args, kwargs)
        with no_grad():
            result = function(*args, **kwargs)
        self._bump_mutated(args, kwargs)
        _check_no_alias(self, result, tensors)
        if not differentiable:
            return result
        results = [value for value in _flat([result]) if isinstance(value, Tensor) and (
            value.dtype.is_floating_point or value.dtype.is_complex)]
        if not results:
            return result
        inputs = [tensor for tensor in tensors if tensor.requires_grad]
        if self.custom_def is None:  # defined through a Library: torch's warning fallback
            wrapped = _NotImplementedGradient.apply(self.name, len(inputs), *inputs, *results)
        else:
            wrapped = _NoFormula.apply(f"{self.namespace}.{self.schema.name}."
                                       f"{self.schema.overload}", len(inputs), *inputs, *results)
        replaced = {id(value): made for value, made in zip(results, wrapped)}
        return _rebuild(result, replaced)

    def _bump_mutated(self, args: tuple, kwargs: dict) -> None:
        names = [argument.name for argument in self.schema.arguments]
        for index in self.schema.mutated():
            value = args[index] if index < len(args) else kwargs.get(names[index])
            for tensor in _flat([value]):
                if isinstance(tensor, Tensor):
                    tensor._bump_version()

    def _fake(self, args: tuple, kwargs: dict):
        function = self.fake or (self.kernels.get("Meta") or (None,))[0]
        if function is None and self.custom_def is not None:
            raise RuntimeError(
                f"There was no fake impl registered for {self.custom_def!r}. This is necessary "
                "for torch.compile/export/fx tracing to work. Please use "
                f"`{self.schema.name}.register_fake` to add an fake impl.")
        if function is None:
            raise NotImplementedError(
                f"{self.name}: attempted to run this operator with Meta tensors, but there was "
                "no fake impl or Meta kernel registered. You may have run into this message "
                "while using an operator with PT2 compilation APIs (torch.compile/torch.export);"
                " in order to use this operator with those APIs you'll need to add a fake "
                "impl.")
        _fake_context.append(FakeContext())
        try:
            return function(*args, **kwargs)
        finally:
            _fake_context.pop()


def _flat(values) -> list:
    found = []
    for value in values:
        if isinstance(value, (list, tuple)):
            found.extend(_flat(value))
        else:
            found.append(value)
    return found


def _rebuild(result, replaced: dict):
    if isinstance(result, Tensor):
        return replaced.get(id(result), result)
    if isinstance(result, (list, tuple)):
        return type(result)(_rebuild(item, replaced) for item in result)
    return result


def _check_no_alias(operator: CustomOperator, result, inputs: list) -> None:
    """torch's rule for custom_op functions: a result is not an input, nor a view of one."""
    for value in _flat([result]):
        if isinstance(value, Tensor) and any(value is tensor or (
                value._payload is not None and tensor._payload is not None and
                value._payload.__class__ is tensor._payload.__class__ and
                _shares(value._payload, tensor._payload)) for tensor in inputs):
            raise RuntimeError(
                f"{operator.schema.name} (with implementation in {operator.kernels}): The output "
                "of this custom operator (1) must not also be an input to this custom operator "
                "and (2) may not alias any inputs to this custom operator or other returns. The "
                "most common way to trigger this error is if we have y = custom_op(x) and y "
                "and x are the same Tensor. Please instead return a clone of the offending "
                "output tensor(s) (e.g. return x.clone()) or refactor the custom operator to "
                "not return y.")


def _shares(a, b) -> bool:
    import numpy as np

    return a.__class__ is np.ndarray and np.may_share_memory(a, b)


def _call_with_formula(operator: CustomOperator, function, args: tuple, kwargs: dict):
    """The custom op run under a Function whose backward is the registered one: its forward
    runs the kernel below autograd, setup_context sees the inputs and output."""
    names = [argument.name for argument in operator.schema.arguments]
    bound = list(args) + [kwargs.get(name, _default(operator.schema.arguments[index]))
                          for index, name in enumerate(names) if index >= len(args)]

    class Call(Function):
        @staticmethod
        def forward(ctx, *inputs):
            with no_grad():
                result = function(*args, **kwargs)
            operator._bump_mutated(args, kwargs)
            if operator.setup_context is not None:
                operator.setup_context(ctx, tuple(inputs), result)
            return result

        @staticmethod
        def backward(ctx, *grads):
            found = operator.backward(ctx, *grads)
            found = found if isinstance(found, tuple) else (found,)
            if len(found) != len(bound):
                raise RuntimeError(
                    f"{operator.name}: the backward registered with register_autograd returned "
                    f"{len(found)} gradients, one per input expected ({len(bound)})")
            return found

    Call.__name__ = Call.__qualname__ = \
        f"GeneratedBackwardFor_{operator.namespace}_{operator.schema.name}_" \
        f"{operator.schema.overload}"
    return Call.apply(*bound)


def _default(argument: Argument):
    if argument.default is None:
        return None
    text = argument.default
    if text in ("None", "True", "False"):
        return {"None": None, "True": True, "False": False}[text]
    if text.startswith('"'):
        return text[1:-1]
    try:
        return int(text)
    except ValueError:
        pass
    try:
        return float(text)
    except ValueError:
        return text


def _find(op) -> CustomOperator:
    """The operator `op` names: "ns::name[.overload]", an OpOverload, a packet or a CustomOpDef."""
    if isinstance(op, CustomOperator):
        return op
    if isinstance(op, CustomOpDef):
        return op._operator
    if isinstance(op, OpOverload) and isinstance(op._function, CustomOperator):
        return op._function
    if isinstance(op, OpOverloadPacket):
        op = f"{op.namespace}::{op._opname}"
    if isinstance(op, str):
        name, _, overload = op.partition(".")
        found = _OPERATORS.get(f"{name}.{overload or 'default'}")
        if found is not None:
            return found
    raise RuntimeError(f"operator {op} does not exist")


def _define(namespace: str, schema_text: str) -> CustomOperator:
    schema = Schema(schema_text)
    key = f"{namespace}::{schema.name}.{schema.overload}"
    if key in _OPERATORS:
        raise RuntimeError(f"Tried to register an operator ({key.replace('.default', '')}) "
                           "with the same name and overload name multiple times.")
    operator = _OPERATORS[key] = CustomOperator(namespace, schema)
    return operator


# ---- the public API -------------------------------------------------------------------------

_BELOW_AUTOGRAD = ("CPU", "CUDA", "CompositeExplicitAutograd")


class Library:
    """A block of operator definitions ("DEF": the namespace's one; "FRAGMENT": more of a
    namespace) or of kernels for them ("IMPL", for `dispatch_key` unless each impl names one)."""

    def __init__(self, ns: str, kind: str, dispatch_key: str = ""):
        if kind not in ("IMPL", "DEF", "FRAGMENT"):
            raise ValueError(f"Unsupported kind: {kind}")
        if kind == "DEF":
            if ns in _DEFINED:
                raise RuntimeError(
                    f"Only a single TORCH_LIBRARY can be used to register the namespace {ns}; "
                    "please put all of your definitions in a single TORCH_LIBRARY block.  If "
                    "you were trying to specify implementations, consider using "
                    "TORCH_LIBRARY_IMPL (which can be duplicated).")
            _DEFINED[ns] = self
        register_namespace(ns)
        self.ns, self.kind, self.dispatch_key = ns, kind, dispatch_key
        self._op_defs: set = set()

    def define(self, schema: str, alias_analysis: str = "", *, tags=()) -> str:
        """Define an operator from its schema ("name(Tensor x, float s=2.0) -> Tensor");
        returns its name."""
        if self.kind == "IMPL":
            raise RuntimeError("define() is not allowed in an IMPL library")
        operator = _define(self.ns, schema)
        self._op_defs.add(operator.name)
        return operator.schema.name

    def impl(self, op_name, fn, dispatch_key: str = "", *, with_keyset: bool = False):
        """Give the operator `op_name` (a name in this namespace, or an OpOverload) the kernel
        `fn` for `dispatch_key` (CPU, CUDA, Meta, CompositeImplicitAutograd, ...)."""
        key = dispatch_key or self.dispatch_key or "CompositeImplicitAutograd"
        if isinstance(op_name, str) and "::" not in op_name:
            op_name = f"{self.ns}::{op_name}"
        operator = _find(op_name)
        if key == "Meta":
            operator.fake = fn
        # A backend's kernel runs below autograd, as the dispatcher calls it (so that a
        # compiled function keeps the call one node: library_graph.py); a composite one is
        # made of differentiable ops and is traced through.
        operator.kernels[key] = (fn, key in _BELOW_AUTOGRAD)

    def _destroy(self) -> None:
        if _DEFINED.get(self.ns) is self:
            del _DEFINED[self.ns]


def define(qualname: str, schema: str, *, lib=None, tags=()) -> None:
    """Define the operator `qualname` ("ns::name") with `schema` ("(Tensor x) -> Tensor")."""
    namespace, _, name = qualname.partition("::")
    _define(namespace, name + schema)


def impl(qualname: str, types, func=None, *, lib=None):
    """Give the operator `qualname` a kernel for the device types `types` ("cpu", "cuda",
    or "default"); usable as a decorator."""
    def register(function):
        register_kernel(qualname, types, function)
        return function

    return register(func) if func is not None else register


class CustomOpDef:
    """What custom_op returns: the operator, callable, with its registration methods."""

    def __init__(self, namespace: str, name: str, schema: str, function):
        self._namespace, self._name = namespace, name
        self._init_fn = function
        self._operator = _define(namespace, name + schema)
        self._operator.custom_def = self
        self._operator.kernels["CompositeExplicitAutograd"] = (function, True)
        self._opoverload = self._operator.overload
        self.__name__ = name
        self.__doc__ = function.__doc__

    def __call__(self, *args, **kwargs):
        return self._operator(*args, **kwargs)

    def register_kernel(self, device_types, fn=None, /):
        """Run `fn` instead for the device types given ("cpu", "cuda"); a decorator too."""
        def register(function):
            register_kernel(self._operator, device_types, function)
            return function

        return register(fn) if fn is not None else register

    def register_fake(self, fn, /):
        """Run `fn` (shapes and dtypes only) where the inputs are meta tensors."""
        self._operator.fake = fn
        return fn

    def register_autograd(self, backward, /, *, setup_context=None) -> None:
        """Make the operator differentiable: `backward(ctx, *grads)` gives one gradient per
        input, after `setup_context(ctx, inputs, output)` saved what it needs."""
        self._operator.backward, self._operator.setup_context = backward, setup_context

    def __repr__(self) -> str:
        return f"<CustomOpDef({self._namespace}::{self._name})>"


def custom_op(name: str, fn=None, /, *, mutates_args, device_types=None, schema=None,
              tags=None):
    """Make `fn` the operator `name` ("ns::name"), called as `torch.ops.ns.name` too; a
    decorator when `fn` is not given. `mutates_args` names the arguments it writes in place
    (or "unknown"); the schema is inferred from the annotations unless given."""
    def inner(function):
        namespace, _, opname = name.partition("::")
        if not namespace or not opname:
            raise ValueError(f"Expected name to be of form 'namespace::op_name', got {name}")
        schema_text = schema if schema is not None else infer_schema(
            function, mutates_args=mutates_args)
        result = CustomOpDef(namespace, opname, schema_text, function)
        if device_types is not None:
            result._operator.kernels.pop("CompositeExplicitAutograd")
            register_kernel(result._operator, device_types, function)
        return result

    return inner(fn) if fn is not None else inner


def register_kernel(op, device_types, func=None, /, *, lib=None):
    """Give `op` the kernel `func` for `device_types` ("cpu", "cuda", a list, or None for
    all); a decorator when `func` is not given."""
    def register(function):
        operator = _find(op)
        types = [device_types] if isinstance(device_types, str) or device_types is None \
            else list(device_types)
        for kind in types:
            key = {"cpu": "CPU", "cuda": "CUDA", None: "CompositeExplicitAutograd",
                   "default": "CompositeExplicitAutograd"}.get(kind)
            if key is None:
                raise ValueError(f"Unknown device type: {kind}")
            operator.kernels[key] = (function, True)
        return function

    return register(func) if func is not None else register


def register_fake(op, fn=None, /, *, lib=None, _stacklevel: int = 1):
    """Give `op` ("ns::name", an OpOverload or a CustomOpDef) its fake impl: a function of
    shapes and dtypes run on meta tensors; a decorator when `fn` is not given."""
    def register(function):
        _find(op).fake = function
        return function

    return register(fn) if fn is not None else register


def register_autograd(op, backward, /, *, setup_context=None, lib=None) -> None:
    """Make `op` differentiable with `backward(ctx, *grads)` (and `setup_context`)."""
    if isinstance(op, str) and f"{op.partition('.')[0]}.default" not in _OPERATORS and \
            "::" in op:
        namespace, _, name = op.partition("::")
        raise AttributeError(f"'_OpNamespace' '{namespace}' object has no attribute "
                             f"'{name.partition('.')[0]}'")
    operator = _find(op)
    operator.backward, operator.setup_context = backward, setup_context
