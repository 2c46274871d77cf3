"""The gradient reducer behind DistributedDataParallel: parameters grouped into buckets, a
post-accumulate-grad hook on each, and one all-reduce per bucket, begun as soon as the
backward has accumulated every gradient of that bucket.

Buckets hold parameters in the reverse of the module's order (the backward reaches the last
layers first), one dtype and device each, up to a byte cap (1 MiB for the first bucket by
default, so its all-reduce starts early, then `bucket_cap_mb`, 25 MiB), as torch's reducer.
Buckets are reduced in their order on every process, whatever order their gradients become
ready in: MPI matches collectives by the order processes call them. A bucket's gradients are
flattened into one tensor and averaged with `all_reduce(op=AVG, async_op=True)`; once the last
bucket has begun, the reducer waits for each and writes the averages into the `.grad`s.

The same code runs eagerly and traced: inside autojit.compile the hooks fire while the
backward is traced, each all_reduce becomes a collective node at the point the bucket was
ready, and the compiled plan overlaps it with the rest of the backward (codegen's
schedule/overlap.py). All the state of one backward lives in a `_Pass` that is dropped when the
backward ends, so a compiled step leaves the reducer as it found it. See
docs/notes/distributed.md.
"""

from __future__ import annotations

import functools
import warnings

from ... import distributed as dist
from ...autograd import no_grad
from ...ops.functional import cat
from ...tensor import dtypes
from ...tensor.creation import tensor, zeros
from ...tensor.state import state
from ...tensor.tensor import Tensor

DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024
DEFAULT_BUCKET_CAP_MB = 25

_UNFINISHED = (
    "Expected to have finished reduction in the prior iteration before starting a new one. "
    "This error indicates that your module has parameters that were not used in producing "
    "loss. You can enable unused parameter detection by passing the keyword argument "
    "`find_unused_parameters=True` to `autojit.nn.parallel.DistributedDataParallel`, and by "
    "making sure all `forward` function outputs participate in calculating loss. If you "
    "already have done the above, then the distributed data parallel module wasn't able to "
    "locate the output tensors in the return value of your module's `forward` function.")
_NO_UNUSED = (
    "find_unused_parameters=True was specified in DDP constructor, but did not find any unused "
    "parameters in the forward pass. This flag results in an extra traversal of the autograd "
    "graph every iteration, which can adversely affect performance. If your model indeed never "
    "has any unused parameters in the forward pass, consider turning this flag off.")


class Bucket:
    """Parameters whose gradients are all-reduced together, as one flat tensor."""

    def __init__(self, index: int):
        self.index = index
        self.params: list = []  # (parameter index, parameter)
        self.nbytes = 0


def assign_buckets(params: list, caps: list) -> list:
    """Buckets over `params` in reverse order; bucket i closes once it holds `caps[i]` bytes
    (the last cap serves the buckets after), one dtype and device per bucket."""
    buckets: list = []
    open_buckets: dict = {}  # (dtype, device) -> the bucket being filled
    for index in reversed(range(len(params))):
        param = params[index]
        key = (param.dtype, str(param.device))
        bucket = open_buckets.get(key)
        if bucket is None:
            bucket = open_buckets[key] = Bucket(len(buckets))
            buckets.append(bucket)
        bucket.params.append((index, param))
        bucket.nbytes += param.numel() * param.element_size()
        if bucket.nbytes >= caps[min(bucket.index, len(caps) - 1)]:
            del open_buckets[key]
    return buckets


class _Pass:
    """What one backward of the reducer has done so far."""

    def __init__(self, reducer: Reducer, unused: list):
        self.remaining = [len(bucket.params) for bucket in reducer.buckets]
        self.ready: set = set()
        self.unused = unused  # parameter indices the forward did not use (find_unused)
        self.started = False
        self.next_bucket = 0
        self.launched: list = []  # (bucket, flat gradients, Work)


class Reducer:
    """Averages the gradients of `params` over `group` during the backward."""

    def __init__(self, params: list, group, caps: list, find_unused: bool,
                 gradient_as_bucket_view: bool):
        self.params = params
        self.group = group
        self.find_unused = find_unused
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.buckets = assign_buckets(params, caps)
        self.bucket_of = {index: bucket.index for bucket in self.buckets
                          for index, _ in bucket.params}
        self._pass: _Pass | None = None
        self._warned_no_unused = False
        # A group of one process has nothing to average: no hooks, the backward is the
        # module's own (the same results, without copying every gradient twice).
        self.handles = [] if group.size() == 1 else [param.register_post_accumulate_grad_hook(
            functools.partial(self._grad_ready, index)) for index, param in enumerate(params)]

    # ---- the forward's side ------------------------------------------------------------

    def ensure_prior_reduction_finished(self) -> None:
        if self._pass is not None and self._pass.started:
            self._pass = None
            raise RuntimeError(_UNFINISHED)

    def prepare_for_backward(self, outputs) -> None:
        """The next backward averages the gradients; with find_unused, the parameters
        `outputs` do not depend on are ready at once (their share is zero)."""
        unused = []
        if self.find_unused:
            reached = _reachable_leaves(outputs)
            unused = [index for index, param in enumerate(self.params)
                      if id(param) not in reached]
            if not unused and not self._warned_no_unused:
                self._warned_no_unused = True
                warnings.warn(_NO_UNUSED, UserWarning, stacklevel=4)
        self._pass = _Pass(self, unused)

    def skip_backward(self) -> None:
        """The next backward does not synchronize (no_sync, or no grad in the forward)."""
        self._pass = None

    # ---- the backward's side -----------------------------------------------------------

    def _grad_ready(self, index: int, param: Tensor) -> None:
        current = self._pass
        if current is None:
            return  # a backward without DDP's forward before it, or under no_sync
        if not current.started:
            current.started = True
            for unused in current.unused:
                self._mark_ready(current, unused)
        # MPI moves a non-blocking collective along only inside MPI calls: a poll of the
        # buckets under way at each gradient keeps them going while the backward runs (a
        # compiled plan polls between its steps instead, codegen/schedule/overlap.py).
        for _, _, work in current.launched:
            work.is_completed()
        self._mark_ready(current, index)

    def _mark_ready(self, current: _Pass, index: int) -> None:
        if index in current.ready:
            self._pass = None
            raise RuntimeError(
                f"Expected to mark a variable ready only once. This error is caused by one of "
                f"the following reasons: 1) Use of a module parameter outside the `forward` "
                f"function. 2) Reused parameters in multiple reentrant backward passes. "
                f"Parameter at index {index} has been marked as ready twice.")
        current.ready.add(index)
        number = self.bucket_of[index]
        current.remaining[number] -= 1
        # Launch in bucket order: every process must begin the same all-reduces in one order.
        while current.next_bucket < len(self.buckets) and \
                current.remaining[current.next_bucket] == 0:
            self._launch(current, self.buckets[current.next_bucket])
            current.next_bucket += 1
        if current.next_bucket == len(self.buckets):
            self._finish(current)

    def _launch(self, current: _Pass, bucket: Bucket) -> None:
        with no_grad():
            grads = [param.grad if param.grad is not None else
                     zeros(param.shape, dtype=param.dtype, device=param.device)
                     for _, param in bucket.params]
            flat = cat([grad.reshape(-1) for grad in grads])
            work = dist.all_reduce(flat, op=dist.ReduceOp.AVG, group=self.group,
                                   async_op=True)
        current.launched.append((bucket, flat, work))

    def _finish(self, current: _Pass) -> None:
        """Every bucket has begun: wait for each, and write the averages into the .grads."""
        self._pass = None
        for _, _, work in current.launched:
            work.wait()
        used = self._globally_used(current) if current.unused else None
        with no_grad():
            for bucket, flat, _ in current.launched:
                offset = 0
                for index, param in bucket.params:
                    count = param.numel()
                    average = flat[offset:offset + count].view(param.shape)
                    offset += count
                    if param.grad is None:
                        if used is None or used[index]:
                            param.grad = average if self.gradient_as_bucket_view else \
                                average.clone()
                    elif self.gradient_as_bucket_view:
                        param.grad = average
                    else:
                        param.grad.copy_(average)

    def _globally_used(self, current: _Pass):
        """Which parameters some process used (torch leaves the .grad of one used by no
        process untouched): eagerly, a MAX all-reduce of this process's map. A compiled step
        takes every parameter as used somewhere, since its graph cannot branch on the map."""
        if state.tracer is not None:
            return None
        unused = set(current.unused)
        used = tensor([index not in unused for index in range(len(self.params))],
                      dtype=dtypes.int32)
        dist.all_reduce(used, op=dist.ReduceOp.MAX, group=self.group)
        return [bool(flag) for flag in used.tolist()]

    def remove_hooks(self) -> None:
        for handle in self.handles:
            handle.remove()


def _reachable_leaves(outputs) -> set:
    """The ids of the leaf tensors the autograd graph of `outputs` reaches."""
    roots = [node for node in (tensor.grad_fn for tensor in _tensors(outputs)) if node is not None]
    reached: set = set()
    seen: set = set()
    while roots:
        node = roots.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        variable = getattr(node, "variable", None)
        if variable is not None:
            reached.add(id(variable))
        roots.extend(next_node for next_node, _ in node.next_functions if next_node is not None)
    for output in _tensors(outputs):
        if output.grad_fn is None and output.requires_grad:
            reached.add(id(output))  # a parameter returned as it is
    return reached


def _tensors(value):
    if isinstance(value, Tensor):
        yield value
    elif isinstance(value, (list, tuple)):
        for item in value:
            yield from _tensors(item)
    elif isinstance(value, dict):
        for item in value.values():
            yield from _tensors(item)
