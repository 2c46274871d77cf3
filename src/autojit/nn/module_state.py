"""Module's state dict: saving parameters, buffers and a module's extra state
(get_extra_state) by dotted name, and loading them back.

Module (module.py) inherits these methods. state_dict walks the module tree and collects every
parameter and persistent buffer; load_state_dict walks it again, copying each tensor into the
module's own (under no_grad, so parameters stay leaves and keep their identity), and reports
every missing key, unexpected key and shape mismatch together in one error.
"""

from __future__ import annotations

import itertools
from collections import OrderedDict, namedtuple
from collections.abc import Mapping
from types import MappingProxyType

from ..autograd.grad_mode import no_grad
from ..autograd.hooks import HookDict, RemovableHandle
from ..tensor.tensor import Tensor
from .parameter import Parameter, is_lazy


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    """What load_state_dict returns: the keys it did not find and the keys it did not use."""

    __slots__ = ()

    def __repr__(self) -> str:
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


_NO_HOOKS = MappingProxyType({})
# The state-dict key of a module's get_extra_state(), after its prefix (torch's
# nn.modules.module._EXTRA_STATE_KEY_SUFFIX).
EXTRA_STATE_KEY_SUFFIX = "_extra_state"


class StateDictMixin:
    """state_dict() and load_state_dict() for Module, with torch's hooks around them."""

    # A module's state-dict hooks, made when the first is registered (few modules have any).
    _state_dict_hooks = _state_dict_pre_hooks = _NO_HOOKS
    _load_state_dict_pre_hooks = _load_state_dict_post_hooks = _NO_HOOKS

    def _hook_dict(self, name: str) -> HookDict:
        found = self.__dict__.get(name)
        if found is None:
            found = HookDict()
            object.__setattr__(self, name, found)
        return found

    def _add_state_hook(self, name: str, hook) -> RemovableHandle:
        hooks = self._hook_dict(name)
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        return handle

    def _register_state_dict_hook(self, hook) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata)` after the module's state is
        saved; a state dict it returns replaces the one being filled."""
        return self._add_state_hook("_state_dict_hooks", hook)

    def register_state_dict_post_hook(self, hook) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata)` after the module's state is
        saved; it may change state_dict in place and must return None."""
        def checked(module, state_dict, prefix, local_metadata):
            if hook(module, state_dict, prefix, local_metadata) is not None:
                raise RuntimeError("state_dict post-hook must return None")

        return self._add_state_hook("_state_dict_hooks", checked)

    def register_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """`hook(module, prefix, keep_vars)` before the module's state is saved."""
        return self._add_state_hook("_state_dict_pre_hooks", hook)

    def _register_load_state_dict_pre_hook(self, hook, with_module: bool = False):
        """`hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
        error_msgs)` (the module first, with_module=True) before the module loads its state."""
        if with_module:
            return self._add_state_hook(
                "_load_state_dict_pre_hooks",
                lambda *args, **kwargs: hook(self, *args, **kwargs))
        return self._add_state_hook("_load_state_dict_pre_hooks", hook)

    def register_load_state_dict_pre_hook(self, hook) -> RemovableHandle:
        """`hook(module, state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs)` before the module loads its state."""
        return self._register_load_state_dict_pre_hook(hook, with_module=True)

    def register_load_state_dict_post_hook(self, hook) -> RemovableHandle:
        """`hook(module, incompatible_keys)` once the module and its children loaded: it may
        clear keys from incompatible_keys' lists, and must return None."""
        return self._add_state_hook("_load_state_dict_post_hooks", hook)

    def get_extra_state(self):
        """What a module keeps beyond its parameters and buffers, saved in its state dict
        under `_extra_state` where a subclass defines this (with set_extra_state)."""
        raise RuntimeError("Reached a code path in Module.get_extra_state() that should never "
                           "be called. Please file an issue at https://github.com/pytorch/"
                           "pytorch/issues/new?template=bug-report.yml to report this bug.")

    def set_extra_state(self, state) -> None:
        """Restore what get_extra_state() returned, from a loaded state dict."""
        raise RuntimeError("Reached a code path in Module.set_extra_state() that should never "
                           "be called. Please file an issue at https://github.com/pytorch/"
                           "pytorch/issues/new?template=bug-report.yml to report this bug.")

    def _save_to_state_dict(self, destination, prefix: str, keep_vars: bool) -> None:
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buffer in self._buffers.items():
            if buffer is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buffer if keep_vars else buffer.detach()
        if type(self).get_extra_state is not StateDictMixin.get_extra_state:
            destination[prefix + EXTRA_STATE_KEY_SUFFIX] = self.get_extra_state()

    def state_dict(self, *, destination=None, prefix: str = "", keep_vars: bool = False):
        """An OrderedDict of every parameter and persistent buffer by dotted name.

        The tensors share storage with the module's (detached unless keep_vars=True).
        """
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        for hook in list(self._state_dict_pre_hooks.values()):
            hook(self, prefix, keep_vars)
        metadata = getattr(destination, "_metadata", None)
        local_metadata = {"version": self._version}
        if metadata is not None:
            metadata[prefix[:-1]] = local_metadata
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        for hook in list(self._state_dict_hooks.values()):
            result = hook(self, destination, prefix, local_metadata)
            if result is not None:
                destination = result
        return destination

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict, missing_keys,
                              unexpected_keys, error_msgs) -> None:
        for hook in list(self._load_state_dict_pre_hooks.values()):
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent = {name: buffer for name, buffer in self._buffers.items()
                      if name not in self._non_persistent_buffers_set}
        local_state = {name: value for name, value in
                       itertools.chain(self._parameters.items(), persistent.items())
                       if value is not None}
        assign = local_metadata.get("assign_to_params_buffers", False)
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            input_param = state_dict[key]
            if not isinstance(input_param, Tensor):
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  "autojit.Tensor or Tensor-like object from checkpoint but "
                                  f"received {type(input_param)}")
                continue
            # A lazy (uninitialized) parameter has no shape to check: the module's own hook
            # materializes it before (torch's LazyModuleMixin, torch_geometric's Linear).
            lazy = is_lazy(param)
            if not lazy and param.ndim == 0 and input_param.ndim == 1 and \
                    input_param.shape[0] == 1:
                input_param = input_param[0]
            if not lazy and input_param.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{input_param.shape} from checkpoint, the shape in current "
                                  f"model is {param.shape}.")
                continue
            try:
                with no_grad():
                    if assign:
                        if isinstance(param, Parameter):
                            if not isinstance(input_param, Parameter):
                                input_param = Parameter(input_param,
                                                        requires_grad=param.requires_grad)
                            else:
                                input_param.requires_grad_(param.requires_grad)
                        setattr(self, name, input_param)
                    else:
                        param.copy_(input_param)
            except Exception as error:  # noqa: BLE001 - reported with the others below
                error_msgs.append(
                    f'While copying the parameter named "{key}", whose dimensions in the model '
                    f"are {param.size()} and whose dimensions in the checkpoint are "
                    f"{input_param.size()}, an exception occurred : {error.args}.")
        extra_state_key = prefix + EXTRA_STATE_KEY_SUFFIX
        if type(self).set_extra_state is not StateDictMixin.set_extra_state:
            if extra_state_key in state_dict:
                self.set_extra_state(state_dict[extra_state_key])
            elif strict:
                missing_keys.append(extra_state_key)
        elif strict and extra_state_key in state_dict:
            unexpected_keys.append(extra_state_key)
        if strict:
            for key in state_dict:
                if key.startswith(prefix) and key != extra_state_key:
                    input_name = key[len(prefix):].split(".", 1)
                    if len(input_name) > 1:
                        if input_name[0] not in self._modules:
                            unexpected_keys.append(key)
                    elif input_name[0] not in local_state:
                        unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict: bool = True, assign: bool = False):
        """Copy parameters and buffers from state_dict into this module and its descendants.

        With strict=True the keys must match state_dict()'s exactly; every problem (missing
        and unexpected keys, shape mismatches) is reported in one RuntimeError. Returns a named
        tuple (missing_keys, unexpected_keys). With assign=True the module takes the given
        tensors instead of copying into its own.
        """
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        missing_keys: list[str] = []
        unexpected_keys: list[str] = []
        error_msgs: list[str] = []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)

        def load(module, local_state: dict, prefix: str = "") -> None:
            local_metadata = {} if metadata is None else dict(metadata.get(prefix[:-1], {}))
            if assign:
                local_metadata["assign_to_params_buffers"] = True
            module._load_from_state_dict(local_state, prefix, local_metadata, True,
                                         missing_keys, unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    load(child, {key: value for key, value in local_state.items()
                                 if key.startswith(child_prefix)}, child_prefix)
            if module._load_state_dict_post_hooks:
                incompatible = _IncompatibleKeys(missing_keys, unexpected_keys)
                for hook in list(module._load_state_dict_post_hooks.values()):
                    if hook(module, incompatible) is not None:
                        raise AssertionError(
                            "Hooks registered with ``register_load_state_dict_post_hook`` are "
                            "not expected to return new values, if incompatible_keys need to "
                            "be modified, it should be done inplace.")

        load(self, state_dict)
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{key}"' for key in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{key}"' for key in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self.__class__.__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)
