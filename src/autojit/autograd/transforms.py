"""The function transforms of torch.func, on autojit's two AD modes: grad, grad_and_value, vjp,
jvp, linearize, jacrev, jacfwd and hessian (vmap is in vmap.py).

Reverse-mode transforms run the function on fresh differentiable aliases of the chosen
arguments and call autograd.grad on its output. When the output also depends on tensors that
require grad outside the transform (the arguments themselves, or parameters the function
closes over, as in MAML or a gradient penalty), the gradients are built with create_graph so
that the outer computation can differentiate them again; otherwise they are plain tensors, as
torch.func returns them. Forward-mode transforms open a dual level of their own
(forward_ad.py), so they nest with each other and with the reverse-mode ones: `jvp(grad(f))`
is forward-over-reverse. Every transform is ordinary autojit ops, so `autojit.compile` traces
it into one graph. See docs/autograd.md, "Function transforms".
"""

from __future__ import annotations

import functools

from ..tensor import dtypes
from ..tensor.state import state
from ..tensor.tensor import Tensor
from . import forward_ad
from .nodes import AccumulateGrad
from .pytree import tree_flatten, tree_unflatten
from .transform_checks import (
    GRAD,
    JVP,
    VJP,
    argnums_tuple,
    check_aux,
    check_outputs,
    check_real,
    check_tensor_list,
    refuses_saved_tensor_hooks,
    split_aux,
)
from .transform_levels import running

# ---- inference mode -----------------------------------------------------------------------

def _outside_inference(function):
    """`function` run with inference mode off: torch.func's transforms differentiate inside
    `inference_mode()` too, inference tensors included, and give tensors that are not
    inference tensors."""
    @functools.wraps(function)
    def run(*args, **kwargs):
        if not state.inference:
            return function(*args, **kwargs)
        state.inference = False
        try:
            return function(*args, **kwargs)
        finally:
            state.inference = True

    return run


# ---- argument handling --------------------------------------------------------------------

def _differentiable_alias(tensor, name: str) -> Tensor:
    """A fresh alias of `tensor` that requires grad and keeps its history and tangents (an
    inference tensor, which has neither: a new leaf over its storage)."""
    if not isinstance(tensor, Tensor):
        raise ValueError(f"Thing passed to transform API must be Tensor, got {type(tensor)}")
    if tensor.dtype.category < dtypes.FLOATING:
        raise RuntimeError(f"{name}: only Tensors of floating point dtype can be "
                           f"differentiated, got {tensor.dtype}")
    if tensor._is_inference:
        alias = Tensor._make(tensor._payload, tensor._dtype)
        alias.requires_grad_(True)
    else:
        previous = state.grad_enabled
        state.grad_enabled = True
        try:
            alias = tensor.view_as(tensor)
        finally:
            state.grad_enabled = previous
        if not alias.requires_grad:
            alias.requires_grad_(True)
    alias._func_unwrapped = tensor  # what the alias stands for, printed inside the transform
    return alias


def _prepare(args: tuple, argnums: tuple, name: str):
    """args with the differentiated ones replaced by aliases; the aliases' leaves and specs."""
    new_args = list(args)
    leaves_per_arg, specs = [], []
    for number in argnums:
        leaves, spec = tree_flatten(args[number])
        aliases = [_differentiable_alias(leaf, name) for leaf in leaves]
        new_args[number] = tree_unflatten(aliases, spec)
        leaves_per_arg.append(aliases)
        specs.append(spec)
    return tuple(new_args), leaves_per_arg, specs


def _reaches_outside(roots, own: set) -> bool:
    """Whether the history of `roots` reaches a tensor requiring grad other than `own` (ids of
    this transform's aliases): then the results must stay differentiable."""
    stack = [root.grad_fn for root in roots if isinstance(root, Tensor) and root.grad_fn]
    stack += [root for root in roots if isinstance(root, Tensor) and root.grad_fn is None
              and root.requires_grad and id(root) not in own]
    if any(isinstance(item, Tensor) for item in stack):
        return True
    seen: set = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            if id(node.variable) not in own:
                return True
            continue
        for next_node, _ in node.next_functions:
            if next_node is not None:
                stack.append(next_node)
    return False


def _plain(tree, keep: bool):
    """`tree`'s tensors detached unless the results stay differentiable."""
    if keep:
        return tree
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([leaf.detach() if isinstance(leaf, Tensor) else leaf
                           for leaf in leaves], spec)


def _zeros_for_unused(grads, leaves) -> list:
    from ..tensor.creation import zeros_like

    return [zeros_like(leaf) if grad is None else grad for grad, leaf in zip(grads, leaves)]


def _regrouped(flat: list, leaves_per_arg: list, specs: list) -> list:
    """Per differentiated argument, its gradients rebuilt in the argument's structure."""
    results, start = [], 0
    for group, spec in zip(leaves_per_arg, specs):
        results.append(tree_unflatten(flat[start:start + len(group)], spec))
        start += len(group)
    return results


def _run(func, args, kwargs, aliases: list, others=()):
    """func(*args, **kwargs) at a new grad level, its arguments the level's inputs (`aliases`
    those made for it), and `others` too (jacrev's arguments it does not differentiate, which
    func closes over)."""
    previous = state.grad_enabled
    state.grad_enabled = True
    try:
        with running(tree_flatten((args, kwargs, others))[0], aliases):
            return func(*args, **kwargs)
    finally:
        state.grad_enabled = previous


# ---- reverse mode -------------------------------------------------------------------------

def grad_and_value(func, argnums=0, has_aux: bool = False):
    """A function returning (gradient of func with respect to argnums, func's value).

    func must return a scalar tensor (with has_aux, a pair (scalar, aux)).
    """
    @functools.wraps(func)
    @refuses_saved_tensor_hooks
    @_outside_inference
    def wrapper(*args, **kwargs):
        # Called under no_grad, the transform still differentiates its function, but what
        # it returns has no history outside it (torch's grad level keeps the caller's mode).
        outer_grad = state.grad_enabled
        numbers = argnums_tuple(argnums, len(args))
        new_args, leaves_per_arg, specs = _prepare(args, numbers, "grad_and_value")
        aliases = [leaf for group in leaves_per_arg for leaf in group]
        output, aux = split_aux(_run(func, new_args, kwargs, aliases), has_aux, GRAD)
        if not isinstance(output, Tensor):
            raise RuntimeError("grad_and_value(f)(*args): Expected f(*args) to return a Tensor, "
                               f"got {type(output)}")
        if output.dim() != 0:
            raise RuntimeError(
                "grad_and_value(f)(*args): Expected f(*args) to return a scalar Tensor, got "
                f"tensor with {output.dim()} dims. Maybe you wanted to use the vjp or jacrev "
                "APIs instead?")
        leaves = [leaf for group in leaves_per_arg for leaf in group]
        own = {id(leaf) for leaf in leaves}
        keep = outer_grad and _reaches_outside([output], own)
        if output.requires_grad:
            from .api import grad

            grads = grad(output, leaves, create_graph=keep, allow_unused=True)
        else:
            grads = [None] * len(leaves)
        results = _regrouped(_zeros_for_unused(grads, leaves), leaves_per_arg, specs)
        gradient = tuple(results) if isinstance(argnums, tuple) else results[0]
        value = _plain(output, keep)
        if has_aux:
            check_aux(aux)
            return gradient, (value, _plain(aux, keep))
        return gradient, value

    return wrapper


def grad(func, argnums=0, has_aux: bool = False):
    """The gradient of a scalar function with respect to its argnums, as torch.func.grad.

    >>> import autojit
    >>> from autojit.func import grad
    >>> grad(lambda x: (x ** 3).sum())(autojit.tensor([1.0, 2.0]))
    tensor([ 3., 12.])
    """
    compute = grad_and_value(func, argnums, has_aux)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        gradient, value = compute(*args, **kwargs)
        if has_aux:
            return gradient, value[1]
        return gradient

    return wrapper


def vjp(func, *primals, has_aux: bool = False):
    """(func(*primals), vjp_fn[, aux]): vjp_fn(cotangents) gives the gradients of
    <func(*primals), cotangents> with respect to every primal, as torch.func.vjp."""
    return _vjp(func, primals, has_aux)


@refuses_saved_tensor_hooks
@_outside_inference
def _vjp(func, primals: tuple, has_aux: bool, others: tuple = ()):
    """vjp, with `others` inputs of its level as well (see _run)."""
    outer_grad = state.grad_enabled
    numbers = tuple(range(len(primals)))
    new_args, leaves_per_arg, specs = _prepare(primals, numbers, "vjp")
    aliases = [leaf for group in leaves_per_arg for leaf in group]
    output, aux = split_aux(_run(func, new_args, {}, aliases, others), has_aux, VJP)
    if has_aux:
        check_aux(aux)
    outputs, output_spec = tree_flatten(output)
    check_outputs(outputs, VJP)
    for item in outputs:
        if item.dtype.category < dtypes.FLOATING:
            raise RuntimeError("vjp(f, ...): All outputs of f must be floating-point or complex "
                               f"Tensors, got Tensor with dtype {item.dtype}")
    leaves = [leaf for group in leaves_per_arg for leaf in group]
    own = {id(leaf) for leaf in leaves}
    # Under no_grad the primal outputs come back without history, but vjp_fn called later
    # with grad on still builds the gradients' history, as torch's does.
    keep = _reaches_outside(outputs, own)

    @_outside_inference
    def vjp_fn(cotangents, *, retain_graph: bool = True, create_graph: bool | None = None):
        from .api import grad as autograd_grad

        flat, spec = tree_flatten(cotangents)
        if spec != output_spec:
            raise RuntimeError("Expected pytree structure of cotangents to be the same as "
                               f"pytree structure of outputs to the function. cotangents: "
                               f"{spec}, primal output: {output_spec}")
        for index, (cotangent, item) in enumerate(zip(flat, outputs)):
            if tuple(cotangent.shape) != tuple(item.shape):
                raise RuntimeError(f"Mismatch in shape: grad_output[{index}] has a shape of "
                                   f"{cotangent.shape} and output[{index}] has a shape of "
                                   f"{item.shape}.")
        differentiable = create_graph if create_graph is not None else state.grad_enabled and (
            keep or any(isinstance(c, Tensor) and (c.requires_grad or c._tangents)
                        for c in flat))
        pairs = [(item, cotangent) for item, cotangent in zip(outputs, flat)
                 if item.requires_grad]
        if pairs:
            grads = autograd_grad([item for item, _ in pairs], leaves,
                                  [cotangent for _, cotangent in pairs],
                                  retain_graph=retain_graph, create_graph=differentiable,
                                  allow_unused=True)
        else:
            grads = [None] * len(leaves)
        return tuple(_regrouped(_zeros_for_unused(grads, leaves), leaves_per_arg, specs))

    value = _plain(output, keep and outer_grad)
    if has_aux:
        return value, vjp_fn, _plain(aux, keep and outer_grad)
    return value, vjp_fn


# ---- forward mode -------------------------------------------------------------------------

def jvp(func, primals, tangents, *, strict: bool = False, has_aux: bool = False):
    """(func(*primals), J tangents[, aux]) by forward mode, as torch.func.jvp."""
    return _jvp(func, primals, tangents, strict, has_aux)


@_outside_inference
def _jvp(func, primals, tangents, strict: bool, has_aux: bool, others: tuple = ()):
    """jvp, with `others` inputs of its level as well (jacfwd's arguments it does not
    differentiate, which func closes over)."""
    if not isinstance(primals, tuple):
        raise RuntimeError("jvp(f, primals, tangents): Expected primals to be a tuple. E.g. it "
                           "should be valid to call f(*primals).")
    primal_leaves, primal_spec = tree_flatten(primals)
    tangent_leaves, tangent_spec = tree_flatten(tangents)
    if primal_spec != tangent_spec:
        raise RuntimeError("jvp(f, primals, tangents): Expected primals and tangents to have "
                           f"the same python structure. For example, if primals is a tuple of "
                           f"3 tensors, tangents also must be. Got primals with structure "
                           f"{primal_spec} and tangents with structure {tangent_spec}")
    check_tensor_list(primal_leaves, "primals")
    check_tensor_list(tangent_leaves, "tangents")
    level = forward_ad.enter_level()
    # jvp computes its tangents even where the caller turned forward grad off
    outer_fwd = state.fwd_grad_enabled
    state.fwd_grad_enabled = True
    try:
        duals = []
        for primal, tangent in zip(primal_leaves, tangent_leaves):
            if tuple(primal.shape) != tuple(tangent.shape):
                raise RuntimeError(
                    "Trying to set a forward gradient that has a different size than that of "
                    f"the original Tensor, this is not supported. Tensor is of size "
                    f"{list(primal.shape)} while the given forward gradient is of size "
                    f"{list(tangent.shape)}.")
            if tangent.dtype is not primal.dtype:
                tangent = tangent.to(primal.dtype)
            dual = forward_ad.attach_tangent(primal, tangent, level)
            dual._func_unwrapped = primal  # what the dual stands for, printed inside jvp
            duals.append(dual)
        with running((*duals, *tree_flatten(others)[0]), duals):
            output = func(*tree_unflatten(duals, primal_spec))
        output, aux = split_aux(output, has_aux, JVP)
        if has_aux:
            check_aux(aux)
        outputs, output_spec = tree_flatten(output)
        check_outputs(outputs, JVP)
        primals_out, tangents_out = [], []
        for item in outputs:
            tangent = forward_ad.tangent_of(item, level)
            if tangent is None and strict:
                raise RuntimeError("jvp(f, primals, tangents, strict=True): The output of f is "
                                   "independent of the inputs. This is not allowed with "
                                   "strict=True.")
            if tangent is None:
                from ..tensor.creation import zeros_like

                tangent = zeros_like(item)
            primals_out.append(forward_ad.strip_tangent(item, level))
            tangents_out.append(tangent)
        if has_aux:
            aux_leaves, aux_spec = tree_flatten(aux)
            aux = tree_unflatten([forward_ad.strip_tangent(leaf, level)
                                  if isinstance(leaf, Tensor) else leaf
                                  for leaf in aux_leaves], aux_spec)
    finally:
        state.fwd_grad_enabled = outer_fwd
        forward_ad.exit_level(level)
    result = (tree_unflatten(primals_out, output_spec), tree_unflatten(tangents_out, output_spec))
    return (*result, aux) if has_aux else result


def linearize(func, *primals):
    """(func(*primals), jvp_fn): jvp_fn(*tangents) is J tangents at primals."""
    output = func(*primals)

    def jvp_fn(*tangents):
        return jvp(func, primals, tangents)[1]

    return output, jvp_fn


# ---- Jacobians and Hessians ------------------------------------------------------------------
# Both Jacobians are one vmapped pass over a basis: jacrev maps the VJP over the rows of the
# identity (one cotangent per output element), jacfwd maps the JVP over its columns (one
# tangent per input element), so the whole Jacobian is one batched computation.

def _basis(like: Tensor) -> Tensor:
    """The one-hot tensors of like's shape, stacked: (like.numel(), *like.shape)."""
    from ..tensor.creation import eye

    count = like.numel()
    return eye(count, dtype=like.dtype, device=like.device).reshape((count, *like.shape))


def jacrev(func, argnums=0, *, has_aux: bool = False, chunk_size: int | None = None,
           _preallocate_and_copy: bool = False):
    """The Jacobian by reverse mode, the VJP mapped over one cotangent per output element, as
    torch.func.jacrev: for each output, shaped output.shape + input.shape."""
    _check_chunk_size(chunk_size)

    @functools.wraps(func)
    def wrapper(*args):
        from ..tensor.creation import zeros, zeros_like
        from .vmap import vmap

        check_real("jacrev", tree_flatten(args)[0], is_input=True)
        numbers = argnums_tuple(argnums, len(args))
        chosen = tuple(args[number] for number in numbers)

        def restricted(*differentiated):
            full = list(args)
            for number, value in zip(numbers, differentiated):
                full[number] = value
            return func(*full)

        others = tuple(value for number, value in enumerate(args) if number not in numbers)
        results = _vjp(restricted, chosen, has_aux, others)
        output, vjp_fn = results[0], results[1]
        outputs, output_spec = tree_flatten(output)
        check_real("jacrev", outputs, is_input=False)
        per_output = []
        for position, item in enumerate(outputs):
            def pull(cotangent, position=position):
                cotangents = [zeros_like(other) for other in outputs]
                cotangents[position] = cotangent
                return vjp_fn(tree_unflatten(cotangents, output_spec))

            if item.numel() and chunk_size == 1:
                # one row at a time needs no vmap, so a backward vmap cannot batch (a dynamic
                # shape, .item()) still works, as torch's does
                rows = _stacked([pull(row) for row in _basis(item).unbind(0)])
            elif item.numel():
                rows = vmap(pull, chunk_size=chunk_size)(_basis(item))
            else:
                rows = tuple(tree_map_tensors(
                    lambda leaf: zeros((0, *leaf.shape), dtype=leaf.dtype), value)
                    for value in chosen)
            jacobians = tuple(tree_map_tensors(
                lambda block, item=item: block.reshape((*item.shape, *block.shape[1:])), row)
                for row in rows)
            per_output.append(jacobians if isinstance(argnums, tuple) else jacobians[0])
        jacobian = tree_unflatten(per_output, output_spec)
        if has_aux:
            return jacobian, results[2]
        return jacobian

    return wrapper


def jacfwd(func, argnums=0, has_aux: bool = False, *, randomness: str = "error"):
    """The Jacobian by forward mode, the JVP mapped over one tangent per input element, as
    torch.func.jacfwd."""
    if randomness not in ("error", "different", "same"):
        raise RuntimeError(f"Only allowed values for randomness are 'error', 'different', or "
                           f"'same'. Got {randomness}")

    @functools.wraps(func)
    def wrapper(*args):
        from ..tensor.creation import zeros_like
        from .vmap import vmap

        check_real("jacfwd", tree_flatten(args)[0], is_input=True)
        numbers = argnums_tuple(argnums, len(args))
        chosen = [tree_flatten(args[number]) for number in numbers]
        flat_inputs = [leaf for leaves, _ in chosen for leaf in leaves]
        primal_tuple = tuple(flat_inputs)

        def restricted(*leaves):
            full, start = list(args), 0
            for number, (group, spec) in zip(numbers, chosen):
                full[number] = tree_unflatten(leaves[start:start + len(group)], spec)
                start += len(group)
            return func(*full)

        # the checks and messages of torch's jacfwd, whose function runs under its jvp
        others = tuple(value for number, value in enumerate(args) if number not in numbers)
        output, aux = split_aux(restricted(*flat_inputs), has_aux, JVP)
        if has_aux:
            check_aux(aux)
        outputs, output_spec = tree_flatten(output)
        check_outputs(outputs, JVP)
        check_real("jacfwd", outputs, is_input=False)
        blocks_per_input = []
        for position, leaf in enumerate(flat_inputs):
            def push(tangent, position=position):
                tangents = tuple(tangent if index == position else zeros_like(other)
                                 for index, other in enumerate(flat_inputs))
                return _jvp(restricted, primal_tuple, tangents, False, has_aux, others)[1]

            if leaf.numel():
                columns = tree_flatten(vmap(push, randomness=randomness)(_basis(leaf)))[0]
            else:
                columns = [_empty(item, (0, *item.shape)) for item in outputs]
            # columns[i]: (leaf.numel(), *output_i.shape) -> output_i.shape + leaf.shape
            blocks_per_input.append([
                column.movedim(0, -1).reshape((*item.shape, *leaf.shape))
                for column, item in zip(columns, outputs)])
        per_output = []
        for out_index in range(len(outputs)):
            blocks = [blocks[out_index] for blocks in blocks_per_input]
            grouped, start = [], 0
            for group, spec in chosen:
                grouped.append(tree_unflatten(blocks[start:start + len(group)], spec))
                start += len(group)
            per_output.append(tuple(grouped) if isinstance(argnums, tuple) else grouped[0])
        jacobian = tree_unflatten(per_output, output_spec)
        return (jacobian, aux) if has_aux else jacobian

    return wrapper


def _stacked(results: list) -> tuple:
    """Per-row results (tuples of pytrees) stacked along a new first dimension."""
    from ..ops.layout.joining import stack

    flat = [tree_flatten(result) for result in results]
    spec = flat[0][1]
    columns = zip(*(leaves for leaves, _ in flat))
    return tree_unflatten([stack(column) for column in columns], spec)


def tree_map_tensors(function, tree):
    leaves, spec = tree_flatten(tree)
    return tree_unflatten([function(leaf) if isinstance(leaf, Tensor) else leaf
                           for leaf in leaves], spec)


def hessian(func, argnums=0):
    """The Hessian of a scalar function, jacfwd(jacrev(func)), as torch.func.hessian."""
    return jacfwd(jacrev(func, argnums), argnums)


def _empty(like: Tensor, shape: tuple) -> Tensor:
    from ..tensor.creation import zeros

    return zeros(shape, dtype=like.dtype, device=like.device)


def _check_chunk_size(chunk_size) -> None:
    if chunk_size is not None and not (isinstance(chunk_size, int) and chunk_size > 0):
        raise ValueError("jacrev: `chunk_size` should be greater than 0.")


__all__ = ["grad", "grad_and_value", "vjp", "jvp", "linearize", "jacrev", "jacfwd", "hessian"]
