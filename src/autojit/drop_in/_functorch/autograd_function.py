"""torch._functorch.autograd_function under the drop-in: the helpers torch's functorch uses
to run an autograd.Function's backward under vmap, which programs reach for too.
CtxWithSavedTensors (a ctx whose saved_tensors are replaced, every other attribute read and
written through to the ctx it wraps) and reductify / reductify_leaf (a gradient computed with
a batch dim brought to the batch dim, or the lack of one, of its input).
"""

from __future__ import annotations

from ...func import vmap
from ...tensor.tensor import Tensor


class WrappedCtx:
    """A ctx seen through: attributes are read from and written to the wrapped ctx, except
    the reserved names, which are the wrapper's own (a ctx using one raises)."""

    _pt_reserved_attrs: tuple = ("_pt_reserved_attrs", "_pt_inner_ctx")

    def __init__(self, ctx):
        if not isinstance(ctx, WrappedCtx):
            reserved = type(self)._pt_reserved_attrs
            if any(hasattr(ctx, name) for name in reserved):
                raise RuntimeError(f"PyTorch reserves the {reserved} field on ctx. Please name "
                                   "your fields on ctx something else to avoid name collision.")
        self._pt_inner_ctx = ctx

    def __getattr__(self, name: str):
        return getattr(self._pt_inner_ctx, name)

    def __setattr__(self, name: str, value) -> None:
        if name in type(self)._pt_reserved_attrs:
            self.__dict__[name] = value
        else:
            setattr(self._pt_inner_ctx, name, value)


class CtxWithSavedTensors(WrappedCtx):
    """The ctx with `saved_tensors` replaced by `new_saved_tensors` (anything at all)."""

    _pt_reserved_attrs = ("_pt_new_saved_tensors", *WrappedCtx._pt_reserved_attrs)

    def __init__(self, ctx, new_saved_tensors):
        super().__init__(ctx)
        self._pt_new_saved_tensors = new_saved_tensors

    @property
    def saved_tensors(self):
        return self._pt_new_saved_tensors


def reductify_leaf(grad_input: Tensor | None, grad_input_bdim: int | None,
                   input_bdim: int | None, batch_size: int, target_shape=None):
    """grad_input, whose batch dim is grad_input_bdim (None: it has none), as the gradient of
    an input whose batch dim is input_bdim: summed over the batch when the input has none,
    expanded over it when the gradient has none, the batch dim moved to the input's; with
    `target_shape` each sample's gradient is also summed to that shape."""
    if grad_input is None:
        return None
    if input_bdim is None:
        return grad_input if grad_input_bdim is None else grad_input.sum(grad_input_bdim)
    if grad_input_bdim is None:
        grad_input = grad_input.unsqueeze(input_bdim)
        shape = list(grad_input.shape)
        shape[input_bdim] = batch_size
        grad_input, grad_input_bdim = grad_input.expand(shape), input_bdim
    if target_shape is not None:
        return vmap(Tensor.sum_to_size, in_dims=(grad_input_bdim, None),
                    out_dims=input_bdim)(grad_input, target_shape)
    if grad_input_bdim != input_bdim:
        grad_input = grad_input.movedim(grad_input_bdim, input_bdim)
    return grad_input


def reductify(grad_input, grad_input_bdim, input_bdim, batch_size: int, target_shapes=None):
    """reductify_leaf over a tuple of gradients (a single one is taken as a tuple of one)."""
    grads = grad_input if isinstance(grad_input, tuple) else (grad_input,)
    grad_bdims = grad_input_bdim if isinstance(grad_input_bdim, tuple) else (grad_input_bdim,)
    bdims = input_bdim if isinstance(input_bdim, tuple) else (input_bdim,)
    shapes = (None,) * len(grads) if target_shapes is None else target_shapes
    return tuple(reductify_leaf(grad, grad_bdim, bdim, batch_size, shape)
                 for grad, grad_bdim, bdim, shape in zip(grads, grad_bdims, bdims, shapes))


__all__ = ["CtxWithSavedTensors", "WrappedCtx", "reductify", "reductify_leaf"]
