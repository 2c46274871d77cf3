"""Hooks on tensors and autograd nodes, and retained gradients of non-leaf tensors.

Tensor.register_hook, retain_grad and register_post_accumulate_grad_hook are attached to
Tensor here; Node.register_hook and Node.register_prehook to the graph's Node class. Each
registration returns a RemovableHandle. Where the hooks live decides when they run; the engine
(engine.py) calls them:

- a leaf's hooks sit on the tensor (`_backward_hooks`) and run before its gradient is
  accumulated into .grad or captured by autograd.grad;
- a non-leaf's hooks sit on its grad_fn, keyed by the tensor's output number
  (`_tensor_hooks`), and run before that node runs; retain_grad's hook runs after them, so
  .grad holds the gradient the other hooks produced, as in the reference;
- node hooks (`_pre_hooks` before the node, `_hooks` after it) see all of the node's gradients.
"""

from __future__ import annotations

import weakref

from ..tensor.state import state
from ..tensor.symbolic import same_shape
from ..tensor.tensor import Tensor
from .handles import HookDict, RemovableHandle
from .nodes import Node


def _add_hook(owner, attribute: str, entry) -> RemovableHandle:
    if isinstance(owner, Node):
        Node.hooked = True  # the engine looks for node hooks from now on
    hooks = owner.__dict__.get(attribute)
    if hooks is None:
        hooks = HookDict()
        setattr(owner, attribute, hooks)
    handle = RemovableHandle(hooks)
    hooks[handle.id] = entry
    return handle


# ---- tensor hooks -----------------------------------------------------------------------------

def register_hook(self: Tensor, hook) -> RemovableHandle:
    """Call `hook(grad)` each time the gradient w.r.t. this tensor is computed.

    The hook may return a tensor, which replaces the gradient. Hooks run in registration order.

    >>> import autojit
    >>> x = autojit.tensor([1.0, 2.0], requires_grad=True)
    >>> handle = x.register_hook(lambda grad: grad * 10)
    >>> (x * 3).sum().backward()
    >>> x.grad
    tensor([30., 30.])
    >>> handle.remove()
    """
    # requires_grad (the property) first regenerates the grad_fn of a view whose base was
    # written since, so that the hook sits on the node of the view's current value, as torch's
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if not callable(hook):
        raise TypeError(f"register_hook expects a callable, but got {type(hook).__name__}")
    if self.grad_fn is None:
        return _add_hook(self, "_backward_hooks", hook)
    return _add_hook(self.grad_fn, "_tensor_hooks", (self._output_nr, hook))


def retain_grad(self: Tensor) -> None:
    """Populate .grad of this non-leaf tensor during backward (a no-op on leaves)."""
    if not self.requires_grad:  # the property: a written view's node regenerated first
        raise RuntimeError("can't retain_grad on Tensor that has requires_grad=False")
    if state.func_transforms:
        from .transform_checks import refuse_in_transform

        refuse_in_transform("retain_grad")
    if self.grad_fn is None or self._retains_grad:
        return
    node = self.grad_fn
    Node.hooked = True  # the engine looks for node hooks from now on
    retained = node.__dict__.get("_retained")
    if retained is None:
        retained = node._retained = {}
    # A weak reference: the node must not keep the tensor (and its data) alive.
    retained[self._output_nr] = weakref.ref(self)
    self._retains_grad = True


def register_post_accumulate_grad_hook(self: Tensor, hook) -> RemovableHandle:
    """Call `hook(tensor)` after a gradient was accumulated into this leaf's .grad."""
    if not self._requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    if self.grad_fn is not None:
        raise RuntimeError("post accumulate grad hooks cannot be registered on non-leaf tensors")
    return _add_hook(self, "_post_accumulate_hooks", hook)


def run_leaf_hooks(variable: Tensor, grad: Tensor | None) -> Tensor | None:
    """A leaf's hooks on its gradient (None where none reached it, as torch calls them)."""
    for hook in list(variable._backward_hooks.values()):
        replaced = hook(grad)
        if replaced is not None:
            grad = _checked_replacement(hook, replaced, grad)
    return grad


def run_tensor_hooks(node: Node, grads: list) -> list:
    """A node's tensor hooks, then retain_grad, on the gradients of its outputs."""
    grads = list(grads)
    tensor_hooks = node._tensor_hooks
    if tensor_hooks:
        for output_nr, hook in list(tensor_hooks.values()):
            if output_nr < len(grads):
                # called with None where no gradient reached the output (another output of
                # the node did), as torch calls it
                replaced = hook(grads[output_nr])
                if replaced is not None:
                    grads[output_nr] = _checked_replacement(hook, replaced,
                                                            grads[output_nr])
    retained = node._retained
    if retained:
        for output_nr, reference in retained.items():
            tensor = reference()
            if tensor is None or output_nr >= len(grads) or grads[output_nr] is None:
                continue
            grad = grads[output_nr]
            tensor._grad = grad.clone() if tensor._grad is None else tensor._grad + grad
    return grads


def _checked_replacement(hook, replaced, grad: Tensor) -> Tensor:
    if not isinstance(replaced, Tensor):
        raise TypeError(f"expected Variable, but hook returned '{type(replaced).__name__}'")
    if grad is None:  # nothing to compare with: torch takes it as it is
        return replaced
    if not same_shape(replaced.shape, grad.shape):
        name = getattr(hook, "__name__", type(hook).__name__)
        raise RuntimeError(f"hook '{name}' has changed the size of value (expected "
                           f"{list(grad.shape)}, got {list(replaced.shape)})")
    return replaced


# ---- node hooks -------------------------------------------------------------------------------

def register_node_hook(self: Node, hook) -> RemovableHandle:
    """`hook(grad_inputs, grad_outputs)` after the node ran; it may return new grad_inputs."""
    return _add_hook(self, "_hooks", hook)


def register_node_prehook(self: Node, hook) -> RemovableHandle:
    """`hook(grad_outputs)` before the node runs; it may return new grad_outputs."""
    return _add_hook(self, "_pre_hooks", hook)


Tensor.register_hook = register_hook
Tensor.retain_grad = retain_grad
Tensor.register_post_accumulate_grad_hook = register_post_accumulate_grad_hook
Node.register_hook = register_node_hook
Node.register_prehook = register_node_prehook
