"""Custom autograd functions: Function, its ctx (FunctionCtx), once_differentiable.

A subclass of `Function` defines a static `forward` and `backward`; `Function.apply` runs the
forward with grad mode off (so the ops inside are not recorded) and, when an input requires
grad, makes one backward node the `grad_fn` of every differentiable output. That node is also
the `ctx` the forward saw, as in torch: each Function class gets a node class named
``<Name>Backward`` (a graph.Node), so the engine (engine.py) walks custom nodes like the
OpNodes that ops.registry.bind records. The node's `apply` runs the user's backward under the
engine's grad mode (= create_graph), so a backward written in autojit ops is itself recorded
and can be differentiated again; while tracing (ir/trace.py) the forward and backward only
append ops, since everything here goes through Tensor methods and never reads `_payload`.
"""

from __future__ import annotations

import inspect
import warnings

from ..ops.view_creation import mark_views
from ..tensor import dtypes
from ..tensor.state import state
from ..tensor.symbolic import same_shape
from ..tensor.tensor import Tensor
from .function_forward import push_tangents, saved_outputs_take_tangents
from .function_vmap import forward_under_vmap
from .graph import conform
from .nodes import Node, gradient_edge
from .saved_tensors import FREED_MESSAGE, SavedTensor, pack_saved


class FunctionCtx:
    """What `forward` (or `setup_context`) and `backward` receive as `ctx`.

    Any attribute may be set on it to pass values from forward to backward. Tensors needed by
    backward go through `save_for_backward`, which guards them against in-place modification.
    """

    __slots__ = ()
    # Defaults, overridden per node in its __dict__ when the forward calls the methods below.
    to_save = None
    dirty_tensors = None
    non_differentiable = None
    materialize_grads = True
    # torch's private switch: False gives backward None, not zeros, for the outputs that are
    # not differentiable (mark_non_differentiable, integer outputs)
    _materialize_non_diff_grads = True
    _non_differentiable_positions = frozenset()
    _saved = None  # SavedTensor entries, made once the forward has returned
    _released = False

    def save_for_backward(self, *tensors) -> None:
        """Keep tensors (or None) for backward; read them back through `saved_tensors`.

        Call it at most once, in forward or setup_context. Saved tensors are checked against
        their version counter when read, so an in-place write after saving raises.
        """
        for index, tensor in enumerate(tensors):
            if tensor is not None and not isinstance(tensor, Tensor):
                raise TypeError("save_for_backward can only save variables, but argument "
                                f"{index} is of type {type(tensor).__name__}")
        self.to_save = tensors

    def save_for_forward(self, *tensors) -> None:
        """Keep tensors (or None) for the jvp of forward mode, read back through
        `saved_tensors` inside jvp."""
        for index, tensor in enumerate(tensors):
            if tensor is not None and not isinstance(tensor, Tensor):
                raise TypeError("save_for_forward expects all arguments to be tensors; you "
                                f"should save non-tensors as attributes on ctx (argument "
                                f"{index} is of type {type(tensor).__name__})")
        self._saved_for_forward = tensors

    _saved_for_forward = None
    _in_jvp = False

    @property
    def saved_tensors(self) -> tuple:
        """The tensors given to save_for_backward, in order (None where None was saved); inside
        jvp, those given to save_for_forward."""
        if self._in_jvp:
            return tuple(self._saved_for_forward or ())
        if self._released:
            raise RuntimeError(FREED_MESSAGE)
        saved = self._saved
        if saved is None:  # read during forward, before the outputs exist
            return tuple(self.to_save or ())
        return tuple(None if entry is None else entry.unpack(self) for entry in saved)

    @property
    def _raw_saved_tensors(self) -> tuple:
        """torch's handles of the saved values, for register_hooks (saved_access.py)."""
        from .saved_access import raw_saved_tensors

        return raw_saved_tensors(self)

    @property
    def saved_variables(self) -> tuple:
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'", DeprecationWarning,
                      stacklevel=2)
        return self.saved_tensors

    def mark_dirty(self, *tensors: Tensor) -> None:
        """Declare inputs that forward modified in place; each must also be returned."""
        self.dirty_tensors = tensors

    def mark_non_differentiable(self, *tensors: Tensor) -> None:
        """Declare outputs that are not differentiable: they do not require grad.

        backward still receives a gradient argument for each; it is a zero tensor (or None
        after set_materialize_grads(False)).
        """
        self.non_differentiable = tensors

    def set_materialize_grads(self, value: bool) -> None:
        """Whether backward gets zeros (True, the default) or None for outputs without grad."""
        self.materialize_grads = bool(value)

    # The old Function attributes (torch-autograd-old-zh): counts and whether backward runs.
    @property
    def num_inputs(self) -> int:
        return len(self.next_functions)

    @property
    def num_outputs(self) -> int:
        return self.output_count

    @property
    def requires_grad(self) -> bool:
        return any(self.needs_input_grad)


class BackwardFunction(FunctionCtx, Node):
    """The node of one custom Function call: ctx during forward, grad_fn afterwards.

    Each Function subclass has its own subclass of this (``ExpBackward`` for ``Exp``) with
    `_forward_cls` pointing back at it.
    """

    __slots__ = ()
    _forward_cls = None
    _output_meta = ()  # per forward output: (shape, dtype) of a tensor, None for other objects
    _tensor_inputs = ()  # per forward input: whether it was a Tensor

    def apply(self, grads: list) -> list:
        grad_outputs = []
        for index, meta in enumerate(self._output_meta):
            grad = grads[index] if index < len(grads) else None
            if grad is None and meta is not None and self.materialize_grads and (
                    self._materialize_non_diff_grads
                    or index not in self._non_differentiable_positions):
                from ..tensor.creation import zeros

                grad = zeros(meta[0], dtype=meta[1])
            grad_outputs.append(grad)
        results = self._forward_cls._backward_function()(self, *grad_outputs)
        return self._checked_gradients(results)

    def _checked_gradients(self, results) -> list:
        """Validate what backward returned: count, types, shapes; conform shapes and dtypes."""
        if not isinstance(results, tuple):
            results = (results,)
        expected = len(self.next_functions)
        if len(results) > expected and all(r is None for r in results[expected:]):
            results = results[:expected]
        if len(results) != expected:
            raise RuntimeError(f"function {self.name()} returned an incorrect number of gradients "
                               f"(expected {expected}, got {len(results)})")
        checked = []
        for index, (grad, meta) in enumerate(zip(results, self.input_meta)):
            if grad is None:
                checked.append(None)
                continue
            if not self._tensor_inputs[index]:
                raise RuntimeError(f"function {self.name()} returned a gradient different than "
                                   f"None at position {index + 1}, but the corresponding forward "
                                   "input was not a Variable")
            if not isinstance(grad, Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(grad).__name__})")
            if meta is None:  # the input does not require grad: the gradient is dropped
                checked.append(None)
                continue
            shape, dtype = meta
            grad_shape = tuple(grad.shape)
            if not same_shape(grad_shape, shape) and not _expandable(shape, grad_shape):
                raise RuntimeError(f"Function {self.name()} returned an invalid gradient at index "
                                   f"{index} - got {list(grad_shape)} but expected shape "
                                   f"compatible with {list(shape)}")
            if not same_shape(grad_shape, shape) or grad._dtype is not dtype:
                grad = conform(grad, meta)
            checked.append(grad)
        return checked

    def release(self) -> None:
        if self._saved:
            self._released = True
            self._saved = None


def _expandable(shape: tuple, target: tuple) -> bool:
    """Whether `shape` broadcasts to `target` (so a gradient of `target` sums back to it)."""
    if len(shape) > len(target):
        return False
    lead = len(target) - len(shape)
    return all(extent in (1, target[lead + i]) for i, extent in enumerate(shape))


class Function:
    """Base class for differentiable operations written by the user.

    Subclass it with a static `forward(ctx, *args, **kwargs)` and a static
    `backward(ctx, *grad_outputs)` (or, in the setup_context style, a static `forward(*args)`
    without ctx plus a static `setup_context(ctx, inputs, output)`), then call
    `MyFunction.apply(*args)` (or `MyFunction()(*args)`). Never call forward directly.
    backward receives one gradient per forward output and returns one gradient (or None) per
    forward input.

    >>> import autojit
    >>> class Exp(autojit.autograd.Function):
    ...     @staticmethod
    ...     def forward(ctx, x):
    ...         result = x.exp()
    ...         ctx.save_for_backward(result)
    ...         return result
    ...     @staticmethod
    ...     def backward(ctx, grad_output):
    ...         (result,) = ctx.saved_tensors
    ...         return grad_output * result
    >>> x = autojit.tensor([0.0, 1.0], requires_grad=True)
    >>> y = Exp.apply(x)
    >>> y
    tensor([1.0000, 2.7183], grad_fn=<ExpBackward>)
    >>> y.sum().backward()
    >>> x.grad
    tensor([1.0000, 2.7183])
    """

    _backward_cls = BackwardFunction
    _signature = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        cls._backward_cls = type(cls.__name__ + "Backward", (BackwardFunction,),
                                 {"__slots__": (), "_forward_cls": cls,
                                  "__module__": cls.__module__})
        cls._signature = None

    def __init__(self, *args, **kwargs):
        pass

    def __call__(self, *args, **kwargs):
        """`Exp()(x)` is `Exp.apply(x)` (as OneFlow documents); a Function written in the old
        style, with a forward that is not a staticmethod, raises torch's error."""
        if not isinstance(inspect.getattr_static(type(self), "forward"), staticmethod):
            raise RuntimeError(
                "Legacy autograd function with non-static forward method is deprecated. Please "
                "use new-style autograd function with static forward method. (Example: "
                "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")
        return type(self).apply(*args, **kwargs)

    @staticmethod
    def forward(*args, **kwargs):
        """Compute the outputs (grad mode is off here). Overridden by every subclass."""
        raise NotImplementedError("You must implement the forward function for custom "
                                  "autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs: tuple, output) -> None:
        """Fill `ctx` from the inputs and the output, when forward does not take ctx."""
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        """Gradients w.r.t. the forward inputs from gradients w.r.t. its outputs."""
        raise NotImplementedError("You must implement either the backward or vjp method for "
                                  "your custom autograd.Function to use it with backward mode "
                                  "AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        """Forward mode: the tangents of the outputs from those of the inputs (a zero tensor
        for an input without one), reading what forward saved with `ctx.save_for_forward`."""
        raise NotImplementedError("You must implement the jvp function for custom "
                                  "autograd.Function to use it with forward mode AD.")

    # torch.func's vmap: False runs the Function's own `vmap` staticmethod (function_vmap.py);
    # True batches forward itself.
    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        """The Function's batching rule under torch.func.vmap: the outputs and their batch
        dimensions from the arguments and theirs (`info.batch_size`, `info.randomness`)."""
        raise NotImplementedError("To use autograd.Function with vmap, you must either override "
                                  "the vmap staticmethod or set generate_vmap_rule=True.")

    @classmethod
    def _backward_function(cls):
        backward, vjp = cls.backward, cls.vjp
        if backward is not Function.backward and vjp is not Function.vjp:
            raise RuntimeError("Implementing both 'backward' and 'vjp' for a custom Function is "
                               "not allowed. You should only implement one of them.")
        return vjp if vjp is not Function.vjp else backward

    @classmethod
    def apply(cls, *args, **kwargs):
        """Run forward on `args` and record the backward node when an input requires grad."""
        profiler = state.profiler
        if profiler is not None:
            tensors = tuple(a for a in args if isinstance(a, Tensor))
            return profiler.forward_event(cls.__name__, tensors,
                                          lambda: _apply(cls, args, kwargs))
        return _apply(cls, args, kwargs)


def _generated_backward_cls(cls):
    """The node class of a Function applied inside a torch.func transform, which torch runs as
    a generated Function: `<Name>GeneratedBackward`."""
    found = cls.__dict__.get("_generated_cls")
    if found is None:
        found = type(cls.__name__ + "GeneratedBackward", (cls._backward_cls,), {"__slots__": ()})
        cls._generated_cls = found
    return found


def _forward_signature(cls) -> inspect.Signature:
    signature = cls.__dict__.get("_signature")
    if signature is None:
        signature = cls._signature = inspect.signature(cls.forward)
    return signature


_SETUP_CONTEXT_NEEDED = (
    "In order to use an autograd.Function with functorch transforms (vmap, grad, jvp, jacrev, "
    "...), it must override the setup_context staticmethod. For more details, please see "
    "https://pytorch.org/docs/main/notes/extending.func.html")


def _apply(cls, args: tuple, kwargs: dict):
    uses_setup_context = cls.setup_context is not Function.setup_context
    if state.func_transforms and not uses_setup_context and not state.plain_autograd:
        raise RuntimeError(_SETUP_CONTEXT_NEEDED)
    if uses_setup_context:
        # setup_context sees every argument positionally, defaults included (as in torch).
        bound = _forward_signature(cls).bind(*args, **kwargs)
        bound.apply_defaults()
        args, kwargs = bound.args, bound.kwargs
    elif kwargs:
        # Keyword arguments naming forward's parameters count as inputs, in order.
        bound = _forward_signature(cls).bind(None, *args, **kwargs)
        args, kwargs = bound.args[1:], bound.kwargs

    node = (cls._backward_cls if not state.func_transforms or state.plain_autograd
            else _generated_backward_cls(cls))()
    tensor_inputs, needs, edges, meta = [], [], [], []
    for value in args:
        is_tensor = isinstance(value, Tensor)
        tensor_inputs.append(is_tensor)
        if is_tensor and value._requires_grad:
            needs.append(True)
            # Taken before forward runs: an input marked dirty gets a new grad_fn below.
            edges.append(gradient_edge(value))
            meta.append((tuple(value.shape), value._dtype))
        else:
            needs.append(False)
            edges.append((None, 0))
            meta.append(None)
    node.needs_input_grad = tuple(needs)
    node.next_functions = tuple(edges)
    node.input_meta = meta
    node._tensor_inputs = tuple(tensor_inputs)
    executable = state.grad_enabled and any(needs)

    # Forward mode sees the Function as one op: its forward runs below the dual levels, and
    # the outputs' tangents come from its jvp.
    levels = state.forward_levels
    previous, previous_forward = state.grad_enabled, state.fwd_grad_enabled
    state.grad_enabled = state.fwd_grad_enabled = False  # torch's forward runs with both off
    state.forward_levels = ()
    try:
        if uses_setup_context:
            # under vmap: the Function's vmap staticmethod or generated rule (function_vmap.py)
            raw = forward_under_vmap(cls, args, kwargs)
            cls.setup_context(node, args, raw)
        else:
            raw = cls.forward(node, *args, **kwargs)
    finally:
        state.grad_enabled, state.fwd_grad_enabled = previous, previous_forward
        state.forward_levels = levels

    is_tuple = isinstance(raw, tuple)
    results = _wrap_outputs(node, args, raw if is_tuple else (raw,), executable)
    if levels:
        push_tangents(cls, node, args, results, levels)
        saved_outputs_take_tangents(node, results)
    if executable and state.anomaly:
        from .anomaly import capture_forward_trace

        capture_forward_trace(node)
    return tuple(results) if is_tuple else results[0]


def _wrap_outputs(node: BackwardFunction, args: tuple, outputs: tuple, executable: bool) -> list:
    """Attach `node` to the differentiable outputs and turn saved tensors into SavedTensors."""
    inputs = {id(a) for a in args if isinstance(a, Tensor)}
    dirty = {id(t) for t in node.dirty_tensors or ()}
    non_differentiable = {id(t) for t in node.non_differentiable or ()}
    if dirty - inputs:
        warnings.warn("ctx.mark_dirty() received a tensor that was not an input. Only input "
                      "Tensors that have been mutated should be passed to ctx.mark_dirty().",
                      UserWarning, stacklevel=4)
    if dirty - {id(o) for o in outputs if isinstance(o, Tensor)}:
        raise RuntimeError("Some elements marked as dirty during the forward method were not "
                           "returned as output. The inputs that are modified inplace must all be "
                           "outputs of the Function.")
    results, output_meta, seen, views, wrapped, dirty_views = [], [], set(), [], {}, []
    not_differentiable: set = set()
    for index, output in enumerate(outputs):
        if not isinstance(output, Tensor):
            results.append(output)
            output_meta.append(None)
            continue
        output_meta.append((tuple(output.shape), output._dtype))
        key = id(output)
        if key in wrapped:  # returned twice: the same tensor twice, as torch returns it,
            again = wrapped[key]  # standing for the last of its places
            if again.grad_fn is node:
                again._output_nr = index
            results.append(again)
            continue
        differentiable = executable and key not in non_differentiable and \
            output._dtype.category >= dtypes.FLOATING
        if key in dirty and key not in seen:
            if executable and output._requires_grad and output.grad_fn is None:
                raise RuntimeError("a leaf Variable that requires grad has been used in an "
                                   "in-place operation.")
            output._bump_version()
            if output._view_source is not None:
                # The node now describes the view; no regeneration from its source.
                output._view_version = output._version_counter.value
        elif key in inputs:
            # An input returned unchanged comes out as a new tensor sharing its storage and
            # version counter, so the input keeps its grad_fn.
            output = output.detach()
            views.append(output)
        elif output._base is not None:
            views.append(output)
        seen.add(key)
        if differentiable:
            output.grad_fn = node
            output._output_nr = index
            output._requires_grad = True
            if key in dirty and output._base is not None:
                dirty_views.append(output)
        else:
            not_differentiable.add(index)
        results.append(output)
        wrapped[key] = output
    if dirty_views and sum(isinstance(r, Tensor) for r in results) > 1:
        raise RuntimeError(
            "If your Function modifies inplace an input that is a view of another Tensor, your "
            "Function cannot return more than one Tensor. This is not supported by the current "
            "autograd engine. You should either make sure the input is not a view (using "
            ".clone() for example) or make your Function only return one Tensor (potentially "
            "splitting it into two Functions: one doing the inplace that returns a single Tensor "
            "and a second one that does the other operations). You can ask on the forum "
            "https://discuss.pytorch.org/ if you need help to do this change.")
    for view in dirty_views:
        _base_takes_write(view)
    node.__dict__["_returned_views"] = {id(view) for view in views}  # (jvp's checks)
    if not_differentiable:
        node.__dict__["_non_differentiable_positions"] = frozenset(not_differentiable)
    # torch forbids writing a returned view in place: its custom backward would be bypassed
    differentiable_count = sum(1 for r in results if isinstance(r, Tensor) and r.grad_fn is node)
    mark_views(views, "multi_output" if differentiable_count > 1 else "custom_function")
    node._output_meta = tuple(output_meta)
    node.output_count = len(outputs)
    if executable:
        node._saved = _save(node, results) if node.to_save is not None else None
        for watch in state.saved_watch:  # a checkpoint's (utils/checkpoint.py)
            watch(node)
    else:
        # No backward will run (grad mode off, inference mode, no input requiring grad): as
        # torch, nothing is saved, so inference tensors and non-differentiable outputs given to
        # save_for_backward are not refused, and the node holds no tensors.
        node.to_save = None
    return results


def _base_takes_write(view: Tensor) -> None:
    """A view the Function wrote in place (mark_dirty): its base's history becomes the old base
    with the view's new value, from the Function's node, scattered in (torch's CopySlices),
    so that gradients of the base reach the Function's inputs."""
    from ..ops.inplace import scatter_through, view_steps

    base = view._base
    written = scatter_through(base, view_steps(view), view)
    if written.grad_fn is not None:
        base.grad_fn = written.grad_fn
        base._output_nr = written._output_nr
        base._requires_grad = True


def _save(node: BackwardFunction, results: list) -> tuple:
    """SavedTensors for ctx.to_save; an output is kept as storage so it does not hold itself."""
    output_numbers = {id(r): i for i, r in enumerate(results)
                      if isinstance(r, Tensor) and r.grad_fn is node}
    saved, outputs = [], {}
    for tensor in node.to_save:
        if tensor is None:
            saved.append(None)
        elif id(tensor) in output_numbers:
            saved.append(SavedTensor(tensor, True, output_numbers[id(tensor)]))
            outputs[id(saved[-1])] = (tensor, output_numbers[id(tensor)])
        else:
            saved.append(SavedTensor(tensor, False))
    if state.saved_tensor_hooks:  # autograd.graph.saved_tensors_hooks (graph.py)
        saved = pack_saved(saved, outputs)
    return tuple(saved)


class InplaceFunction(Function):
    """A Function with an `inplace` flag its forward may read (torch's InplaceFunction)."""

    def __init__(self, inplace: bool = False):
        super().__init__()
        self.inplace = inplace


# torch's name for the class of a custom Function's nodes (its `_backward_cls`'s base)
BackwardCFunction = BackwardFunction

__all__ = ["Function", "FunctionCtx", "InplaceFunction", "once_differentiable",
           "BackwardFunction", "BackwardCFunction"]

from .once_differentiable import once_differentiable  # noqa: E402, F401
