"""Selective activation checkpointing: torch.utils.checkpoint's CheckpointPolicy,
SelectiveCheckpointContext and create_selective_checkpoint_contexts, re-exported by
utils/checkpoint.py.

`checkpoint(fn, x, use_reentrant=False, context_fn=partial(create_selective_checkpoint_contexts,
policy_fn))` asks `policy_fn(ctx, op, *args, **attrs)` about every primitive the segment's
forward records for autograd (op is the registry's Op, `op.name` its name: "matmul", "exp";
`ctx.op_output` its result). The tensors the checkpoint would recompute are kept instead where
they are the results of ops whose policy is MUST_SAVE or PREFER_SAVE (or the CPU-offload
policies, whose results stay where they are): _Segment (checkpoint.py) asks
`saves_result_of(node)` before replacing a saved entry by a _RecomputedTensor. The
recomputation runs the whole function as before, so what selective checkpointing changes in
autojit is which activations stay in memory between forward and backward, not the work done;
docs/notes/checkpointing.md says why.
"""

from __future__ import annotations

import enum
import threading

from ..ops import registry

__all__ = ["CheckpointPolicy", "SelectiveCheckpointContext",
           "create_selective_checkpoint_contexts"]


class CheckpointPolicy(enum.Enum):
    """Whether an op's result is saved for backward or recomputed, in selective
    checkpointing; MUST_* and PREFER_* are the same in eager mode, as in torch."""

    MUST_SAVE = 0
    PREFER_SAVE = 1
    MUST_RECOMPUTE = 2
    PREFER_RECOMPUTE = 3
    MUST_CPU_OFFLOAD = 4
    PREFER_CPU_OFFLOAD = 5


_SAVED = {CheckpointPolicy.MUST_SAVE, CheckpointPolicy.PREFER_SAVE,
          CheckpointPolicy.MUST_CPU_OFFLOAD, CheckpointPolicy.PREFER_CPU_OFFLOAD}


class SelectiveCheckpointContext:
    """What a policy function receives first: `op_output`, the op's result, and
    `is_recompute`, always False (the policy is asked during the forward only, as torch's)."""

    def __init__(self, *, is_recompute: bool, op_output=None) -> None:
        self.is_recompute = is_recompute
        self.op_output = op_output


class _SelectiveForward:
    """The forward context of selective checkpointing: while it is active on its thread, each
    op recorded for autograd is shown to the policy, and the nodes of the ops to save are
    remembered."""

    def __init__(self, policy_fn) -> None:
        self.policy_fn = policy_fn
        self.saved_nodes: set = set()  # ids of the autograd nodes whose results are kept
        self._thread = None
        self._record = None

    def saves_result_of(self, node) -> bool:
        return id(node) in self.saved_nodes

    def __enter__(self):
        self._thread = threading.get_ident()
        self._record = registry.RECORD
        thread, record = self._thread, self._record

        def recording(op, inputs, attrs, out, special=True):
            record(op, inputs, attrs, out, special)
            if threading.get_ident() == thread:
                self._ask(op, inputs, attrs, out)

        registry.RECORD = recording
        return self

    def __exit__(self, *exc_info) -> bool:
        registry.RECORD = self._record
        return False

    def _ask(self, op, inputs, attrs, out) -> None:
        context = SelectiveCheckpointContext(is_recompute=False, op_output=out)
        policy = self.policy_fn(context, op, *inputs, **attrs)
        if isinstance(policy, bool):  # torch's older form: True saves
            policy = CheckpointPolicy.MUST_SAVE if policy else CheckpointPolicy.PREFER_RECOMPUTE
        if not isinstance(policy, CheckpointPolicy):
            raise TypeError(f"selective checkpointing: the policy function returned "
                            f"{policy!r} for {op.name}; it must return a CheckpointPolicy or "
                            "a bool")
        if policy in _SAVED and out.grad_fn is not None:
            self.saved_nodes.add(id(out.grad_fn))


class _SelectiveRecompute:
    """The recomputation context of selective checkpointing: the recomputation reruns the
    whole function, so it has nothing to do."""

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> bool:
        return False


def create_selective_checkpoint_contexts(policy_fn_or_list, allow_cache_entry_mutation=False):
    """The (forward, recomputation) contexts of selective checkpointing, for checkpoint's
    `context_fn`.

    `policy_fn_or_list` is a function `policy_fn(ctx, op, *args, **attrs)` returning a
    CheckpointPolicy (or a bool, True meaning MUST_SAVE) for each primitive op the checkpointed
    function records, or a list of ops whose results are saved (MUST_SAVE; every other op
    PREFER_RECOMPUTE). Ops are autojit's primitives, the entries of `autojit.ops.registry.REGISTRY`
    (or their names in the list form; torch's `aten.mm.default` and `aten.bmm.default` are
    both autojit's "matmul").

        >>> import functools
        >>> import autojit
        >>> from autojit.utils.checkpoint import checkpoint, create_selective_checkpoint_contexts
        >>> w = autojit.ones(3, 3, requires_grad=True)
        >>> context_fn = functools.partial(create_selective_checkpoint_contexts, ["matmul"])
        >>> y = checkpoint(lambda x: (x @ w).tanh().sum(), autojit.ones(2, 3),
        ...                use_reentrant=False, context_fn=context_fn)
        >>> y.backward()
        >>> w.grad.shape
        autojit.Size([3, 3])
    """
    if isinstance(policy_fn_or_list, list):
        ops = set()
        for op in policy_fn_or_list:
            found = registry.REGISTRY.get(op) if isinstance(op, str) else op
            if not isinstance(found, registry.Op):
                raise ValueError(f"Expected op in `op_list` to be an OpOverload but got: {op} "
                                 f"of type {type(op)}. autojit's ops are its primitives: "
                                 "autojit.ops.registry.REGISTRY's values, or their names.")
            ops.add(found)

        def policy_fn(ctx, op, *args, **kwargs):
            return (CheckpointPolicy.MUST_SAVE if op in ops else
                    CheckpointPolicy.PREFER_RECOMPUTE)
    elif callable(policy_fn_or_list):
        policy_fn = policy_fn_or_list
    else:
        raise TypeError("policy_fn_or_list must be either a function or a list of ops.")
    return _SelectiveForward(policy_fn), _SelectiveRecompute()
