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
schedule/overlap.py). The state of one backward has a fixed structure, reset in place, so a
compiled step (or a compiled forward) leaves the reducer as Python values the compiler
replays. See docs/notes/distributed.md.
"""

from __future__ import annotations

import functools
import itertools
import warnings
import weakref

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


_REDUCERS: weakref.WeakValueDictionary = weakref.WeakValueDictionary()
_NUMBERS = itertools.count()


def _grad_ready(number: int, index: int, param: Tensor) -> None:
    """The post-accumulate-grad hook of parameter `index` of reducer `number`."""
    reducer = _REDUCERS.get(number)
    if reducer is not None:
        reducer.grad_ready(index, param)


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


class Reducer:
    """Averages the gradients of `params` over `group` during the backward.

    The state of one backward is kept in fields of fixed structure, reset in place by each
    forward and left as a finished backward leaves it: a compiled step or forward then writes
    only values the compiler replays after each run, never a new object or a longer list,
    which would make every call trace again (docs/notes/distributed.md)."""

    def __init__(self, params: list, group, caps: list, find_unused: bool,
                 gradient_as_bucket_view: bool):
        self.params = params
        self.group = group
        self.find_unused = find_unused
        self.gradient_as_bucket_view = gradient_as_bucket_view
        self.buckets = assign_buckets(params, caps)
        self.bucket_of = [0] * len(params)
        for bucket in self.buckets:
            for index, _ in bucket.params:
                self.bucket_of[index] = bucket.index
        # One backward: armed by the forward, started by its first gradient; the gradients
        # still missing per bucket, which parameters are ready or unused, the next bucket to
        # begin, and the all-reduces under way (flat gradients, Work), one per bucket begun.
        self._armed = False
        self._started = False
        self._remaining = [0] * len(self.buckets)
        self._ready = [True] * len(params)
        self._unused = [False] * len(params)
        self._next_bucket = len(self.buckets)
        self._launched: list = []
        self._warned_no_unused = False
        # A group of one process has nothing to average: no hooks, the backward is the
        # module's own (the same results, without copying every gradient twice).
        # The hooks name the reducer by a number: a compiled function's guards walk what a
        # captured tensor's hooks reach, and must not find this state there, which a compiled
        # forward leaves armed (the module path reaches it before the call, as it stands).
        self.number = next(_NUMBERS)
        _REDUCERS[self.number] = self
        self.handles = [] if group.size() == 1 else [param.register_post_accumulate_grad_hook(
            functools.partial(_grad_ready, self.number, index))
            for index, param in enumerate(params)]

    # ---- the forward's side ------------------------------------------------------------

    def ensure_prior_reduction_finished(self) -> None:
        if self._armed and self._started:
            self._settle()
            raise RuntimeError(_UNFINISHED)

    def prepare_for_backward(self, outputs) -> None:
        """The next backward averages the gradients; with find_unused, the parameters
        `outputs` do not depend on are ready at once (their share is zero)."""
        reached = _reachable_leaves(outputs) if self.find_unused else None
        for index, param in enumerate(self.params):
            self._ready[index] = False
            self._unused[index] = reached is not None and id(param) not in reached
        if reached is not None and not any(self._unused) and not self._warned_no_unused:
            self._warned_no_unused = True
            warnings.warn(_NO_UNUSED, UserWarning, stacklevel=4)
        for bucket in self.buckets:
            self._remaining[bucket.index] = len(bucket.params)
        self._next_bucket = 0
        self._started = False
        self._armed = True

    def skip_backward(self) -> None:
        """The next backward does not synchronize (no_sync, or no grad in the forward)."""
        self._armed = False

    def _settle(self) -> None:
        """The state a finished backward leaves."""
        self._armed = self._started = False
        for index in range(len(self.params)):
            self._ready[index] = True
            self._unused[index] = False
        for bucket in self.buckets:
            self._remaining[bucket.index] = 0
        self._next_bucket = len(self.buckets)
        del self._launched[:]

    # ---- the backward's side -----------------------------------------------------------

    def grad_ready(self, index: int, param: Tensor) -> None:
        if not self._armed:
            return  # a backward without DDP's forward before it, or under no_sync
        if not self._started:
            self._started = True
            for unused, flag in enumerate(self._unused):
                if flag:
                    self._mark_ready(unused)
        # MPI moves a non-blocking collective along only inside MPI calls: a poll of the
        # buckets under way at each gradient keeps them going while the backward runs (a
        # compiled plan polls between its steps instead, codegen/schedule/overlap.py).
        for _, _, work in self._launched:
            work.is_completed()
        self._mark_ready(index)

    def _mark_ready(self, index: int) -> None:
        if self._ready[index]:
            self._settle()
            raise RuntimeError(
                f"Expected to mark a variable ready only once. This error is caused by one of "
                f"the following reasons: 1) Use of a module parameter outside the `forward` "
                f"function. 2) Reused parameters in multiple reentrant backward passes. "
                f"Parameter at index {index} has been marked as ready twice.")
        self._ready[index] = True
        self._remaining[self.bucket_of[index]] -= 1
        # Launch in bucket order: every process must begin the same all-reduces in one order.
        while self._next_bucket < len(self.buckets) and \
                self._remaining[self._next_bucket] == 0:
            self._launch(self.buckets[self._next_bucket])
            self._next_bucket += 1
        if self._next_bucket == len(self.buckets):
            self._finish()

    def _launch(self, bucket: Bucket) -> None:
        with no_grad():
            grads = [param.grad if param.grad is not None else
                     zeros(param.shape, dtype=param.dtype, device=param.device)
                     for _, param in bucket.params]
            flat = cat([grad.reshape(-1) for grad in grads])
            work = dist.all_reduce(flat, op=dist.ReduceOp.AVG, group=self.group,
                                   async_op=True)
        self._launched.append((bucket, flat, work))

    def _finish(self) -> None:
        """Every bucket has begun: wait for each, and write the averages into the .grads."""
        launched = list(self._launched)
        used = self._globally_used() if any(self._unused) else None
        self._settle()
        for _, _, work in launched:
            work.wait()
        with no_grad():
            for bucket, flat, _ in launched:
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

    def _globally_used(self):
        """Which parameters some process used (torch leaves the .grad of one used by no
        process untouched): eagerly, a MAX all-reduce of this process's map, begun after the
        buckets (every process begins it at the same point). A compiled step takes every
        parameter as used somewhere, since its graph cannot branch on the map."""
        if state.tracer is not None:
            return None
        used = tensor([not flag for flag in self._unused], dtype=dtypes.int32)
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
