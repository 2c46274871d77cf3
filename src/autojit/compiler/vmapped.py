"""A compiled function called inside `vmap` (`vmap(autojit.compile(f))`, the torch.func idiom
of per-sample gradients compiled): api.py's CompiledFunction hands such a call here.

Its batched arguments (ops/batching.py's BatchedTensors, at the vmap levels open around the
call) are peeled at the innermost level among them, and the call becomes `vmap(f)` over the
physical tensors, mapped along dim 0 where an argument was batched and not at all where it
was not, with the enclosing vmap's randomness. That mapped function is compiled once per
pattern of batched arguments (a CompiledFunction of its own, with the same options, its
executables kept), so the call runs the batched graph `autojit.compile(vmap(f))` would run,
and its results are batched again at the peeled level; the call counts in the function's
stats() as compiled or eager as the mapped function ran it. A physical tensor batched at an outer
level is a batched argument of the inner compiled call in turn, so nested vmaps peel one level
each. See docs/notes/vmap.md.

Autograd at the examples' level (`vmap(grad(autojit.compile(loss)))`, where grad makes the
arguments require grad inside the vmap) records on the BatchedTensors, which a graph run on the
physical tensors cannot give back. A call with an argument that requires grad (while grad mode
is on) therefore runs eagerly, with a CompileWarning once per compiled function: compiled, the
idiom is `autojit.compile(vmap(grad(loss)))`, or `vmap(autojit.compile(grad(loss)))` on detached
parameters.
"""

from __future__ import annotations

from ..autograd import vmap as vmap_module
from ..autograd.pytree import tree_flatten, tree_unflatten
from ..ops.batching import BatchedTensor, batched, physical_of
from ..tensor.state import state
from ..tensor.tensor import Tensor

# The marker call_in_vmap returns for a call with no batched argument (run as any other).
NOT_BATCHED = object()


def call_in_vmap(compiled, args: tuple, kwargs: dict, warn):
    """Run `compiled` on `args` and `kwargs` of which some are batched (see the module
    docstring); NOT_BATCHED when none is. `warn(message)` gives a CompileWarning."""
    leaves, spec = tree_flatten((args, kwargs))
    levels = [leaf._value.level for leaf in leaves if leaf.__class__ is BatchedTensor]
    if not levels:
        return NOT_BATCHED
    if state.grad_enabled and any(isinstance(leaf, Tensor) and leaf.requires_grad
                                  for leaf in leaves):
        if not compiled.__dict__.get("_vmap_grad_warned"):
            compiled._vmap_grad_warned = True
            warn(f"autojit.compile: {compiled.name()} runs eagerly inside vmap: an argument "
                 "requires grad (a grad inside the vmap differentiates each example, at a level "
                 "a graph run on the whole batch cannot record); compile the vmapped function "
                 "instead (autojit.compile(vmap(grad(f)))), or pass detached tensors")
        compiled._stats.calls += 1
        compiled._stats.eager_calls += 1
        return compiled.fn(*args, **kwargs)
    level = max(levels)
    physical, flags = [], []
    for leaf in leaves:
        value, flag = physical_of(leaf, level) if isinstance(leaf, Tensor) else (leaf, False)
        physical.append(value)
        flags.append(flag)
    key = (tuple(flags), state.vmap_randomness)
    # (key, the arguments' TreeSpec, the compiled mapped function), per pattern met
    cache = compiled.__dict__.setdefault("_vmapped", [])
    mapped = next((found for known, known_spec, found in cache
                   if known == key and known_spec == spec), None)
    if mapped is None:
        mapped = type(compiled)(
            vmap_module.mapped(_flat_call(compiled.fn, spec),
                               tuple(0 if flag else None for flag in flags), 0,
                               state.vmap_randomness, None),
            backend=compiled.backend, fullgraph=compiled.fullgraph,
            recompile_limit=compiled.recompile_limit, dynamic=compiled.dynamic)
        cache.append((key, spec, mapped))
    # The call runs with this level closed, as the vmap that opened it sees its function.
    levels_open = state.vmap_levels
    state.vmap_levels = tuple(entry for entry in levels_open if entry[0] != level)
    eager_before = mapped._stats.eager_calls
    try:
        result = mapped(*physical)
    finally:
        state.vmap_levels = levels_open
    # Counted as the function's calls too (its stats() answer whether it stays compiled).
    compiled._stats.calls += 1
    if mapped._stats.eager_calls > eager_before:
        compiled._stats.eager_calls += 1
    else:
        compiled._stats.compiled_calls += 1
    out, out_spec = tree_flatten(result)
    return tree_unflatten([batched(leaf, level) if isinstance(leaf, Tensor) else leaf
                           for leaf in out], out_spec)


def _flat_call(fn, spec):
    """`fn` called on the flattened (args, kwargs) leaves."""

    def call(*leaves):
        args, kwargs = tree_unflatten(list(leaves), spec)
        return fn(*args, **kwargs)

    call.__name__ = getattr(fn, "__name__", "vmapped")
    return call
