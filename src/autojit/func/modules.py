"""The module side of autojit.func: functional_call, stack_module_state,
replace_all_batch_norm_modules_, and the two transforms that are the identity here
(functionalize, debug_unwrap).

functional_call is nn.utils.stateless's, with tie_weights: a tensor replaced under one name
is replaced under every name it is tied to. functionalize runs the function as it is:
autojit's tracer already turns in-place writes into new values (ir/aliasing.py), and eagerly
the results are the same either way; it counts as a running transform, as in torch, which
refuses there what every torch.func transform refuses (an autograd.Function without
setup_context, requires_grad_, torch.autograd.functional).
"""

from __future__ import annotations

import functools

from ..nn.utils import stateless
from ..ops.layout.joining import stack
from ..tensor.state import state


def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights: bool = True, strict: bool = False):
    """module(*args, **kwargs) with the named parameters and buffers replaced for this call.

    With tie_weights, a replacement given for one name of a tied tensor (the same Parameter
    registered under two names, as an embedding and an output layer share one) is used under
    all of its names.
    """
    return stateless.functional_call(module, parameter_and_buffer_dicts, args, kwargs,
                                     tie_weights=tie_weights, strict=strict)


def stack_module_state(models) -> tuple[dict, dict]:
    """(parameters, buffers) of same-class models, each name's tensors stacked on a new first
    dim; the stacked parameters are new leaves that require grad where the models' did."""
    models = list(models)
    if not models:
        raise RuntimeError("stack_module_state: Expected at least one model, got 0.")
    if len({model.training for model in models}) != 1:
        raise RuntimeError("stack_module_state: Expected all models to have the same "
                           "training/eval mode.")
    if not all(type(model) is type(models[0]) for model in models):
        raise RuntimeError("stack_module_state: Expected all models to be of the same class.")
    all_parameters = [dict(model.named_parameters()) for model in models]
    parameters = {}
    for name in all_parameters[0]:
        tensors = [found[name] for found in all_parameters]
        wanted = {tensor.requires_grad for tensor in tensors}
        if len(wanted) > 1:
            raise RuntimeError(f"Expected {name} from each model to have the same "
                               ".requires_grad")
        stacked = stack([tensor.detach() for tensor in tensors])
        parameters[name] = stacked.requires_grad_(True) if wanted.pop() else stacked
    all_buffers = [dict(model.named_buffers()) for model in models]
    buffers = {name: stack([found[name].detach() for found in all_buffers])
               for name in all_buffers[0]}
    return parameters, buffers


def replace_all_batch_norm_modules_(root):
    """Stop every batch norm in `root` from tracking running statistics (in place), as vmap
    over a batch norm needs; returns root."""
    for module in root.modules():
        if hasattr(module, "track_running_stats") and hasattr(module, "running_mean"):
            module.running_mean = None
            module.running_var = None
            module.num_batches_tracked = None
            module.track_running_stats = False
    return root


def functionalize(func, *, remove: str = "mutations"):
    """func run as it is, as a transform: autojit's tracer already removes mutations when it
    compiles."""
    if remove not in ("mutations", "mutations_and_views"):
        raise RuntimeError(f"functionalize(f, remove='mutations'): received invalid argument for "
                           f"remove={remove}. Valid options are:\n     remove='mutations': all "
                           "inplace and out= operators will be removed from the program, and "
                           "replaced with their out-of-place equivalents.\n     "
                           "remove='mutations_and_views': In addition to the above, all aliasing "
                           "operators {view} will be replaced with their non-aliasing "
                           "counterparts, {view}_copy.\n")

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        state.func_transforms += 1
        try:
            return func(*args, **kwargs)
        finally:
            state.func_transforms -= 1

    return wrapper


def debug_unwrap(tensor, *, recurse: bool = True):
    """The tensor itself: autojit's transforms do not wrap tensors."""
    return tensor


__all__ = ["functional_call", "stack_module_state", "replace_all_batch_norm_modules_",
           "functionalize", "debug_unwrap"]
