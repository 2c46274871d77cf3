"""register_parametrization, remove_parametrizations, is_parametrized and cached, with
torch.nn.utils.parametrize's names and state_dict layout: a parameter or buffer `name` of a
module becomes `module.parametrizations[name].original`, and reading `module.name` computes
parametrization(original) on every access.

As in torch, the module's class is swapped for a generated subclass carrying a property per
parametrized name. The property's computation is autojit ops, so gradients reach `original`
and a compiled training step traces it with the forward. A right_inverse that returns several
tensors (weight_norm's magnitude and direction) gives `original0`, `original1`, ..., as
torch's.
"""

from __future__ import annotations

from contextlib import contextmanager

from ...autograd import no_grad
from ...tensor.tensor import Tensor
from ..container import ModuleDict, ModuleList
from ..parameter import Parameter

_cache_enabled = 0
_cache: dict = {}


@contextmanager
def cached():
    """Within this context, each parametrized tensor is computed once and reused."""
    global _cache_enabled
    _cache_enabled += 1
    try:
        yield
    finally:
        _cache_enabled -= 1
        if not _cache_enabled:
            _cache.clear()


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order to `original` (a Parameter or a
    buffer, which `right_inverse` of each, in reverse, initializes from the tensor)."""

    def __init__(self, modules, original, unsafe: bool = False) -> None:
        super().__init__(modules)
        self.unsafe = unsafe
        self._set_originals(original)
        if not unsafe:
            # torch's consistency check: the parametrization of the original (computed here,
            # so that its hooks run as torch's do) keeps the tensor's dtype and shape.
            _check_same(self(), original, "unparametrized {what}: {expected}\n"
                                          "parametrized {what}: {found}")

    def _set_originals(self, original) -> None:
        with no_grad():
            value = original
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    try:
                        value = module.right_inverse(value)
                    except NotImplementedError:  # original is kept as it is, as torch does
                        pass
        self.is_tensor = hasattr(value, "shape")
        if not self.is_tensor:
            # Several tensors (weight_norm's magnitude and direction): original0, original1...
            self.ntensors = len(value)
            for index, tensor in enumerate(value):
                tensor = tensor.detach()
                if isinstance(original, Parameter):
                    self.register_parameter(f"original{index}",
                                            Parameter(tensor, original.requires_grad))
                else:
                    self.register_buffer(f"original{index}", tensor)
            return
        if value is not original:
            if tuple(value.shape) != tuple(original.shape) or value.dtype != original.dtype:
                raise ValueError("When `right_inverse` outputs one tensor, it may not change "
                                 "the shape or dtype of the original tensor.")
            with no_grad():
                original.copy_(value)
        if isinstance(original, Parameter):
            self.register_parameter("original", original)
        else:
            self.register_buffer("original", original)

    def right_inverse(self, value) -> None:
        """Set `original` so that the parametrized tensor becomes `value`."""
        with no_grad():
            for module in reversed(list(self)):
                if hasattr(module, "right_inverse"):
                    value = module.right_inverse(value)
            if self.is_tensor:
                self.original.copy_(value)
            else:
                for index, tensor in enumerate(value):
                    getattr(self, f"original{index}").copy_(tensor)

    def forward(self):
        """The parametrized tensor: each parametrization applied to original, in order."""
        modules = list(self)
        if self.is_tensor:
            value = modules[0](self.original)
        else:
            value = modules[0](*(getattr(self, f"original{index}")
                                 for index in range(self.ntensors)))
        for module in modules[1:]:
            value = module(value)
        return value


def _check_same(value, original, lines: str) -> None:
    """torch's check that a parametrization returns a tensor of the dtype and shape of what it
    parametrizes (`original`), with its messages: `lines` formats their last two lines from
    the property (dtype or shape) and the two values."""
    if not isinstance(value, Tensor):
        raise ValueError(f"A parametrization must return a tensor. Got {type(value).__name__}.")
    flag = "the `unsafe` flag" if lines.startswith("module.") else "`unsafe` flag"
    for what in ("dtype", "shape"):
        expected, found = getattr(original, what), getattr(value, what)
        if found != expected:
            raise ValueError(f"Registering a parametrization may not change the {what} of the "
                             f"tensor, unless {flag} is enabled.\n" +
                             lines.format(what=what, expected=expected, found=found))


def _check_returned(value, original, tensor_name: str) -> None:
    """torch's checks of what a right_inverse returns, with its messages."""
    if not isinstance(value, Tensor):
        raise ValueError("parametrization.right_inverse must return a tensor. Got: "
                         f"{type(value).__name__}")
    for what in ("dtype", "shape"):
        expected, found = getattr(original, what), getattr(value, what)
        if found != expected:
            raise ValueError(
                f"The tensor returned by parametrization.right_inverse must have the same "
                f"{what} as module.{tensor_name}, unless the `unsafe` flag is enabled.\n"
                f"module.{tensor_name}.{what}: {expected}\nreturned {what}: {found}")


def _inject_new_class(module) -> None:
    cls = module.__class__
    module.__class__ = type(f"Parametrized{cls.__name__}", (cls,), {})


def _inject_property(module, tensor_name: str) -> None:
    def get_parametrized(self):
        parametrization = self.parametrizations[tensor_name]
        if _cache_enabled:
            key = (id(self), tensor_name)
            if key not in _cache:
                _cache[key] = parametrization()
            return _cache[key]
        return parametrization()

    def set_original(self, value) -> None:
        self.parametrizations[tensor_name].right_inverse(value)

    setattr(module.__class__, tensor_name, property(get_parametrized, set_original))


def is_parametrized(module, tensor_name: str | None = None) -> bool:
    """Whether the module has any parametrization (or one on `tensor_name`)."""
    parametrizations = getattr(module, "parametrizations", None)
    if parametrizations is None or not isinstance(parametrizations, ModuleDict):
        return False
    if tensor_name is None:
        return len(parametrizations) > 0
    return tensor_name in parametrizations


def register_parametrization(module, tensor_name: str, parametrization, *,
                             unsafe: bool = False):
    """Make module.<tensor_name> parametrization(original); a second registration on the
    same name chains after the first. Returns the module."""
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        if not unsafe:
            current = getattr(module, tensor_name)
            value = parametrization(current)
            _check_same(value, current, f"module.{tensor_name}.{{what}}: {{expected}}\n"
                                        f"parametrization(module.{tensor_name}).{{what}}: "
                                        "{found}")
            if hasattr(parametrization, "right_inverse"):
                try:
                    inverse = parametrization.right_inverse(value)
                except NotImplementedError:
                    inverse = None
                if inverse is not None:
                    _check_returned(inverse, current, tensor_name)
        module.parametrizations[tensor_name].append(parametrization)
        module.parametrizations[tensor_name].unsafe |= unsafe
    elif tensor_name in module._buffers or tensor_name in module._parameters:
        original = getattr(module, tensor_name)
        parametrizations = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            _inject_new_class(module)
            module.parametrizations = ModuleDict()
        module.parametrizations[tensor_name] = parametrizations
        _inject_property(module, tensor_name)
    else:
        raise ValueError(f"Module '{module}' does not have a parameter, a buffer, or a "
                         f"parametrized element with name '{tensor_name}'")
    return module


def remove_parametrizations(module, tensor_name: str, leave_parametrized: bool = True):
    """Undo the parametrizations of tensor_name: a plain parameter (or buffer) again, holding
    the parametrized value (leave_parametrized) or `original`. Returns the module."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"Module {module} does not have a parametrization on {tensor_name}")
    parametrizations = module.parametrizations[tensor_name]
    if not parametrizations.is_tensor:
        if not leave_parametrized:
            raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a "
                             "tensor that is parametrized in terms of a sequence of tensors.")
        with no_grad():
            value = getattr(module, tensor_name)
        original = Parameter(value.detach(), parametrizations.original0.requires_grad) \
            if isinstance(parametrizations.original0, Parameter) else value.detach()
        leave_parametrized = False  # the value is in `original` already
    else:
        original = parametrizations.original
    if leave_parametrized:
        with no_grad():
            value = getattr(module, tensor_name)
            if tuple(value.shape) != tuple(original.shape) or value.dtype != original.dtype:
                raise ValueError("Cannot leave unparametrized (`leave_parametrized=False`) a "
                                 "tensor that is parametrized in terms of a sequence of "
                                 "tensors or changes its shape or dtype.")
            original.copy_(value)
    delattr(module.__class__, tensor_name)
    del module.parametrizations[tensor_name]
    if isinstance(original, Parameter):
        module.register_parameter(tensor_name, original)
    else:
        module.register_buffer(tensor_name, original)
    if not is_parametrized(module):
        delattr(module, "parametrizations")
        module.__class__ = module.__class__.__bases__[0]
    return module


def type_before_parametrizations(module) -> type:
    """The module's class before register_parametrization swapped it."""
    return module.__class__.__bases__[0] if is_parametrized(module) else type(module)


__all__ = ["cached", "ParametrizationList", "is_parametrized", "register_parametrization",
           "remove_parametrizations", "type_before_parametrizations"]
