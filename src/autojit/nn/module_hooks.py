"""Module hooks at call time: the call with its forward and backward hooks (call_with_hooks),
and the backward hooks' registration (register_full_backward_hook and
register_full_backward_pre_hook).

Module.__call__ (module.py) asks `backward_hook_for(module)` for a BackwardHook when the module
has backward hooks. That object passes the forward's tensor arguments, and then its tensor
results, through BackwardHookFunction, an identity custom Function (autograd/function.py), so
that each set of tensors gets one autograd node. Hooks on those two nodes (autograd/hooks.py,
run by autograd/engine.py) see the gradients: the node of the results runs first, receives the
gradients w.r.t. the module's outputs and runs the pre-hooks; the node of the arguments runs
once every gradient w.r.t. the module's inputs is summed, and calls the hooks with both. What
the hooks return replaces the gradients flowing on, so backward, autograd.grad and
create_graph see the hooks' results like any other gradients.
"""

from __future__ import annotations

import warnings

from ..autograd.function import Function
from ..autograd.hooks import HookDict, RemovableHandle
from ..tensor.state import state
from ..tensor.tensor import Tensor
from . import module_global_hooks as global_hooks

__all__ = ["BackwardHookMixin", "BackwardHook", "BackwardHookFunction", "backward_hook_for",
           "call_with_hooks"]

INPLACE_MESSAGE = (
    "Output {} of BackwardHookFunction is a view and is being modified inplace. This view was "
    "created inside a custom Function (or because an input was returned as-is) and the "
    "autograd logic to handle view+inplace would override the custom backward associated with "
    "the custom Function, leading to incorrect gradients. This behavior is forbidden. You can "
    "fix this by cloning the output of the custom Function.")


class BackwardHookFunction(Function):
    """The identity on any number of tensors: one node whose hooks see all their gradients."""

    @staticmethod
    def forward(ctx, *args):
        ctx.mark_non_differentiable(*[arg for arg in args if not arg.requires_grad])
        return args

    @staticmethod
    def backward(ctx, *grads):
        return grads


def _pack_with_none(positions, values, size: int) -> tuple:
    packed = [None] * size
    for position, value in zip(positions, values):
        packed[position] = value
    return tuple(packed)


def _checked(hook, replaced, meta) -> Tensor | None:
    """A gradient a hook returned: None, or a tensor of the shape the gradient has."""
    if replaced is None:
        return None
    if not isinstance(replaced, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(replaced).__name__}'")
    shape = meta[0]
    if tuple(replaced.shape) != shape:
        name = getattr(hook, "__name__", type(hook).__name__)
        raise RuntimeError(f"hook '{name}' has changed the size of value (expected "
                           f"{list(shape)}, got {list(replaced.shape)})")
    return replaced


class BackwardHook:
    """The backward hooks of one module call: wraps its inputs and outputs, then, during
    backward, gathers the gradients w.r.t. the outputs and calls the user's hooks."""

    def __init__(self, module, hooks: list, pre_hooks: list) -> None:
        self.module = module
        self.hooks = hooks
        self.pre_hooks = pre_hooks
        self.grad_outputs = None
        self.input_count = -1
        self.input_positions = None  # positions of the tensor arguments, None when not wrapped
        self.input_meta = ()  # per tensor argument: (shape, dtype, device, requires_grad)
        # (output number, wrapped tensor, version) per argument that requires grad, until
        # forward returned.
        self.input_versions = ()
        self.output_count = -1
        self.output_positions = None
        self.output_meta = ()

    def _wrap(self, values: tuple, install):
        """Pass the tensors among values through BackwardHookFunction; `install` gets its node.

        Returns the values with the tensors replaced, the tensors' positions (None when no
        tensor requires grad or grad mode is off, in which case nothing is wrapped) and, per
        tensor, (shape, dtype, device, requires_grad).
        """
        positions = [index for index, value in enumerate(values) if isinstance(value, Tensor)]
        tensors = [values[index] for index in positions]
        if not (state.grad_enabled and any(tensor.requires_grad for tensor in tensors)):
            return values, None, ()
        meta = tuple((tuple(tensor.shape), tensor.dtype, tensor.device, tensor.requires_grad)
                     for tensor in tensors)
        wrapped = BackwardHookFunction.apply(*tensors)
        install(next(tensor.grad_fn for tensor in wrapped if tensor.grad_fn is not None))
        items = list(values)
        for position, tensor in zip(positions, wrapped):
            items[position] = tensor
        # A named tuple is rebuilt from its fields.
        result = tuple(items) if type(values) is tuple else type(values)(*items)
        return result, positions, meta

    def setup_input_hook(self, args: tuple) -> tuple:
        """The forward's arguments, their tensors replaced by the hooked ones."""
        wrapped, self.input_positions, self.input_meta = self._wrap(
            args, lambda node: node.register_hook(self._input_hook))
        self.input_count = len(args)
        if self.input_positions is not None:
            self.input_versions = tuple(
                (index, wrapped[position], wrapped[position]._version)
                for index, (position, meta) in enumerate(zip(self.input_positions,
                                                              self.input_meta)) if meta[3])
        return wrapped

    def check_inputs_unmodified(self) -> None:
        """Raise when forward modified a hooked argument in place (its gradient would be
        attributed to the wrong value)."""
        versions, self.input_versions = self.input_versions, ()  # the node must not keep them
        for index, tensor, version in versions:
            if tensor._version != version:
                raise RuntimeError(INPLACE_MESSAGE.format(index))

    def setup_output_hook(self, result):
        """The forward's result, its tensors replaced by the hooked ones."""
        if not isinstance(result, (Tensor, tuple)):
            warnings.warn("For backward hooks to be called, module output should be a Tensor or "
                          f"a tuple of Tensors but received {type(result)}", stacklevel=4)
        single = not isinstance(result, tuple)
        values = (result,) if single else result
        wrapped, self.output_positions, self.output_meta = self._wrap(
            values, lambda node: node.register_hook(self._output_hook))
        self.output_count = len(values)
        return wrapped[0] if single else wrapped

    def _output_hook(self, grad_inputs: tuple, grad_outputs: tuple):
        # Runs when the gradients w.r.t. the module's outputs are complete.
        self.grad_outputs = _pack_with_none(self.output_positions, grad_outputs,
                                            self.output_count)
        expected = len(self.grad_outputs)
        for hook in self.pre_hooks:
            replaced = hook(self.module, self.grad_outputs)
            if replaced is None:
                continue
            if len(replaced) != expected:
                raise RuntimeError("Backward pre hook returned an invalid number of grad_output, "
                                   f"got {len(replaced)}, but expected {expected}")
            self.grad_outputs = tuple(replaced)
            for index, position in enumerate(self.output_positions):
                _checked(hook, self.grad_outputs[position], self.output_meta[index])
        grad_outputs = self.grad_outputs
        if self.input_positions is None:
            # No argument requires grad: the hooks get called here, with None for grad_input.
            warnings.warn("Full backward hook is firing when gradients are computed with respect "
                          "to module outputs since no inputs require gradients.", stacklevel=6)
            grad_inputs = (None,) * self.input_count
            for hook in self.hooks:
                replaced = hook(self.module, grad_inputs, self.grad_outputs)
                if replaced is not None and not (isinstance(replaced, tuple)
                                                 and all(value is None for value in replaced)):
                    raise RuntimeError("Backward hook for Modules where no input requires "
                                       "gradient should always return None or None for all "
                                       "gradients.")
            self.grad_outputs = None
        return [grad_outputs[position] for position in self.output_positions]

    def _input_hook(self, grad_inputs: tuple, grad_outputs: tuple):
        # Runs when the gradients w.r.t. the module's inputs are complete.
        if self.grad_outputs is None:
            # The gradient reached the inputs without passing through the outputs (a second
            # backward through the first one's graph): there is nothing to report.
            return None
        from ..tensor.creation import zeros

        grads = [grad if grad is not None or meta[3] else
                 zeros(meta[0], dtype=meta[1], device=meta[2])
                 for grad, meta in zip(grad_inputs, self.input_meta)]
        packed = _pack_with_none(self.input_positions, grads, self.input_count)
        for hook in self.hooks:
            replaced = hook(self.module, packed, self.grad_outputs)
            if replaced is None:
                continue
            if len(replaced) != len(packed):
                raise RuntimeError("Backward hook returned an invalid number of grad_input, got "
                                   f"{len(replaced)}, but expected {len(packed)}")
            packed = tuple(replaced)
            for index, position in enumerate(self.input_positions):
                _checked(hook, packed[position], self.input_meta[index])
        self.grad_outputs = None
        return [packed[position] for position in self.input_positions]


def backward_hook_for(module) -> BackwardHook | None:
    """The BackwardHook of one call of module, or None when it has no backward hooks."""
    hooks, pre_hooks = module._backward_hooks, module._backward_pre_hooks
    if not (hooks or pre_hooks or global_hooks.backward_hooks or
            global_hooks.backward_pre_hooks):
        return None
    # The hooks registered now are the ones this call reports to, even if removed before
    # backward; the global ones (module_global_hooks.py) first, as torch orders them.
    return BackwardHook(module, [*global_hooks.backward_hooks.values(), *hooks.values()],
                        [*global_hooks.backward_pre_hooks.values(), *pre_hooks.values()])


def call_with_hooks(module, args: tuple, kwargs: dict):
    """A module call with its hooks: the forward pre-hooks (global ones first, see
    module_global_hooks.py), the backward hooks' wrapping of the arguments, forward, the
    forward hooks (global ones first) and the wrapping of the result; Module.__call__
    (module.py) comes here when the module or the global registries hold a hook."""
    result = None
    called = set()
    # The global hooks (module_global_hooks.py) run before the module's own, as torch's.
    forward_hooks = [*global_hooks.forward_hooks.items(), *module._forward_hooks.items()]
    with_kwargs = module._forward_hooks_with_kwargs | global_hooks.forward_hooks_with_kwargs
    always = module._forward_hooks_always_called | global_hooks.forward_hooks_always_called
    try:
        for hook_id, hook in [*global_hooks.forward_pre_hooks.items(),
                              *module._forward_pre_hooks.items()]:
            if hook_id in module._forward_pre_hooks_with_kwargs:
                replaced = hook(module, args, kwargs)
                if replaced is not None:
                    if not (isinstance(replaced, tuple) and len(replaced) == 2):
                        raise RuntimeError("forward pre-hook must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {replaced}.")
                    args, kwargs = replaced
            else:
                replaced = hook(module, args)
                if replaced is not None:
                    args = replaced if isinstance(replaced, tuple) else (replaced,)
        # Backward hooks see the tensors through identity nodes (BackwardHook above).
        backward_hook = backward_hook_for(module)
        if backward_hook is not None:
            args = backward_hook.setup_input_hook(args)
        result = module.forward(*args, **kwargs)
        if backward_hook is not None:
            backward_hook.check_inputs_unmodified()
        for hook_id, hook in forward_hooks:
            called.add(hook_id)
            if hook_id in with_kwargs:
                replaced = hook(module, args, kwargs, result)
            else:
                replaced = hook(module, args, result)
            if replaced is not None:
                result = replaced
        if backward_hook is not None:
            result = backward_hook.setup_output_hook(result)
        return result
    except Exception:
        for hook_id, hook in forward_hooks:
            if hook_id in always and hook_id not in called:
                if hook_id in with_kwargs:
                    hook(module, args, kwargs, result)
                else:
                    hook(module, args, result)
        raise


def _add_hook(hooks: HookDict, hook, prepend: bool) -> RemovableHandle:
    handle = RemovableHandle(hooks)
    hooks[handle.id] = hook
    if prepend:
        rest = [(key, value) for key, value in hooks.items() if key != handle.id]
        hooks.clear()
        hooks[handle.id] = hook
        hooks.update(rest)
    return handle


class BackwardHookMixin:
    """Module's registration methods for backward hooks (Module keeps the two HookDicts)."""

    def register_full_backward_pre_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_output)`` when the gradients w.r.t. the module's outputs
        are computed, before those w.r.t. its inputs.

        ``grad_output`` is a tuple with one entry per output (None for outputs that are not
        tensors or got no gradient). The hook may return a tuple of the same length, used in
        place of ``grad_output`` from then on. With prepend=True it runs before the hooks
        already registered.

            >>> import autojit
            >>> from autojit import nn
            >>> layer = nn.Linear(2, 1)
            >>> handle = layer.register_full_backward_pre_hook(
            ...     lambda module, grad_output: (grad_output[0] * 10,))
            >>> x = autojit.ones(1, 2, requires_grad=True)
            >>> layer(x).sum().backward()
            >>> layer.bias.grad
            tensor([10.])
            >>> handle.remove()
        """
        return _add_hook(self._backward_pre_hooks, hook, prepend)

    def register_full_backward_hook(self, hook, prepend: bool = False) -> RemovableHandle:
        """Call ``hook(module, grad_input, grad_output)`` when the gradients w.r.t. the
        module's inputs are computed.

        ``grad_input`` has one entry per positional argument of the call (None for arguments
        that are not tensors; keyword arguments are not included) and ``grad_output`` one per
        output. The hook may return a tuple like ``grad_input``, used in its place. When no
        argument requires grad, the hook fires once the gradients w.r.t. the outputs are known,
        with None for every ``grad_input`` entry. Forward must not modify its tensor arguments
        in place.

            >>> import autojit
            >>> from autojit import nn
            >>> layer = nn.Linear(2, 1)
            >>> with autojit.no_grad():
            ...     _ = layer.weight.copy_(autojit.tensor([[2.0, 3.0]]))
            >>> seen = []
            >>> handle = layer.register_full_backward_hook(
            ...     lambda module, grad_input, grad_output: seen.append((grad_input, grad_output)))
            >>> x = autojit.ones(1, 2, requires_grad=True)
            >>> (layer(x) * 3).sum().backward()
            >>> seen
            [((tensor([[6., 9.]]),), (tensor([[3.]]),))]
            >>> handle.remove()
        """
        return _add_hook(self._backward_hooks, hook, prepend)
