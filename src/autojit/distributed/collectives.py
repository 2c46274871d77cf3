"""The collectives of autojit.distributed, with torch.distributed's names, arguments and
in-place semantics: all_reduce, broadcast, reduce, all_gather, all_gather_into_tensor,
reduce_scatter, reduce_scatter_tensor, gather, scatter, all_to_all_single and barrier; the
point-to-point send/recv/isend/irecv are in p2p.py, the object collectives in objects.py.

Eagerly each begins a non-blocking MPI collective on the tensor's own memory (no copy on the
CPU; a CUDA tensor goes through a host copy unless MPI is CUDA-aware) and, with
`async_op=True`, returns the Work; else it waits. While a function is traced
(autojit.compile), the tensor is symbolic: the call records a `collective` node
(ops/collective.py) and writes its result into the tensor, an in-place write the compiled
executable repeats, and an `async_op=True` call returns a completed Work, since the plan
itself waits for the exchange where its result is first read (docs/notes/distributed.md).
"""

from __future__ import annotations

import numpy as np

from ..autograd import no_grad
from ..ops.collective import collective
from ..ops.inplace import write_storage
from ..tensor import dtypes
from ..tensor.state import state
from ..tensor.tensor import Tensor
from .process_group import RedOpType, ReduceOp, group_rank_of, resolve, warn_not_in_group
from .work import Work, completed_work

_OP_NAMES = {RedOpType.SUM: "sum", RedOpType.AVG: "avg", RedOpType.PRODUCT: "product",
             RedOpType.MIN: "min", RedOpType.MAX: "max", RedOpType.BAND: "band",
             RedOpType.BOR: "bor", RedOpType.BXOR: "bxor"}
# c10's names of the dtypes, which torch's messages use.
_SCALAR_NAMES = {"float16": "Half", "bfloat16": "BFloat16", "float32": "Float",
                 "float64": "Double", "uint8": "Byte", "int8": "Char", "int16": "Short",
                 "int32": "Int", "int64": "Long", "bool": "Bool"}


# ---- argument checks ----------------------------------------------------------------------

def check_tensor(param, name: str) -> None:
    if not isinstance(param, Tensor):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"Tensor but got {type(param)} instead.")


def check_tensor_list(param, name: str) -> None:
    if not isinstance(param, list):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[Tensor] but got {type(param)} instead.")
    if not all(isinstance(p, Tensor) for p in param):
        raise TypeError(f"Invalid function argument. Expected parameter `{name}` of type "
                        f"List[Tensor] but got {type(param)} with elements of type "
                        f"{[type(p) for p in param]}.")


def reduction_name(op, dtype, what: str) -> str:
    """The transport's name of ReduceOp `op` for tensors of `dtype`, or torch's error."""
    if not isinstance(op, RedOpType):
        raise TypeError(f"{what}: op must be a ReduceOp (ReduceOp.SUM, ...), got {op!r}")
    name = _OP_NAMES.get(op)
    if name is None:
        raise ValueError(f"{what}: {op} is not supported by autojit.distributed")
    if name == "avg" and not dtype.is_floating_point:
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{_SCALAR_NAMES[dtype.name]}")
    if name in ("band", "bor", "bxor") and dtype.is_floating_point:
        raise RuntimeError(f"{what}: {op} needs integer or bool tensors, got "
                           f"{_SCALAR_NAMES[dtype.name]}")
    return name


def _same_dtype(tensors: list, what: str) -> None:
    dtype = tensors[0].dtype
    for tensor in tensors[1:]:
        if tensor.dtype is not dtype:
            raise ValueError(f"{what}: the tensors must have the same dtype, got {dtype} and "
                             f"{tensor.dtype}")


def tracing() -> bool:
    """Whether the call is being traced by autojit.compile: the collective becomes a node (a
    tensor from outside the function has its data while tracing, yet must not be exchanged
    now, once, but on every run)."""
    return state.tracer is not None


# ---- the memory the transport reads and writes --------------------------------------------

class Memory:
    """A tensor's data as a buffer the transport can use: its own array for a contiguous CPU
    tensor; for a CUDA tensor its device memory where MPI is CUDA-aware (cuda_aware), else a
    host copy, written back (`written()`) once the collective completed."""

    def __init__(self, tensor: Tensor, what: str, write: bool, channel):
        self.tensor = tensor
        self.write = write
        self.copied = False
        data = tensor._payload
        if data.__class__ is np.ndarray:
            if not data.flags.c_contiguous:
                raise RuntimeError(f"{what}: Tensors must be contiguous")
            self.array = data
        elif channel.cuda_aware and data._view is None:
            self.array = data.flat  # read through __cuda_array_interface__
        else:  # a CUDA tensor, staged through the host
            self.array = data.to_host()
            self.copied = True

    def written(self, divisor: int = 1) -> None:
        """The collective completed: divide (ReduceOp.AVG), round bfloat16, copy a staged
        array back, bump the version (an in-place write, as torch's collectives are)."""
        if not self.write:
            return
        if self.array.__class__ is not np.ndarray:  # device memory written by MPI
            self.tensor._payload._written()
            if divisor != 1:
                with no_grad():
                    self.tensor.div_(divisor)
            else:
                self.tensor._bump_version()
            return
        if divisor != 1:
            self.array /= divisor
        if self.tensor._dtype is dtypes.bfloat16:
            self.array[...] = dtypes.round_to_bfloat16(self.array)
        if self.copied:
            self.tensor._payload[...] = self.array
        self.tensor._bump_version()


def run(found, requests: list, what: str, finish, async_op: bool, result=None, keep=()):
    """Wait for `requests` (or hand them over as a Work); `finish` runs once they completed.
    `keep`: the arrays the requests use, held until then."""
    work = Work(requests, found.timeout, what, finish, result, keep)
    if async_op:
        return work
    work.wait()
    return None


def _averaged(memory: Memory, found, name: str):
    def finish():
        memory.written(found.size() if name == "avg" else 1)
    return finish


def _write_traced(target: Tensor, value: Tensor) -> None:
    """The traced in-place write of a collective's result: the tensor holds the node's value
    from here on (no copy node, which would read the result at once and so end the overlap;
    a tensor from outside the function gets it written back after each run)."""
    with no_grad():
        write_storage(target, value.reshape(target.shape))


def _attrs(found) -> dict:
    return {"group": found.number, "world": found.size()}


# ---- the collectives ----------------------------------------------------------------------

def all_reduce(tensor: Tensor, op=ReduceOp.SUM, group=None, async_op: bool = False):
    """Reduce `tensor` across the group's processes, in place: every process ends with the
    result (ReduceOp.SUM, AVG, PRODUCT, MIN, MAX, BAND, BOR, BXOR)."""
    check_tensor(tensor, "tensor")
    name = reduction_name(op, tensor.dtype, "all_reduce")
    found = resolve(group)
    if found is None:
        warn_not_in_group("all_reduce")
        return None
    if tracing():
        _write_traced(tensor, collective(tensor.detach(), "all_reduce", name, **_attrs(found)))
        return completed_work("all_reduce", [tensor]) if async_op else None
    memory = Memory(tensor, "all_reduce", True, found._channel)
    requests = found._channel.all_reduce(memory.array, memory.array, name)
    return run(found, requests, "all_reduce", _averaged(memory, found, name), async_op,
               [tensor], (memory.array,))


def broadcast(tensor: Tensor, src: int | None = None, group=None, async_op: bool = False,
              group_src: int | None = None):
    """Copy `tensor` of rank `src` (a world rank; `group_src` a rank in the group) into
    `tensor` of every other process of the group."""
    check_tensor(tensor, "tensor")
    found = resolve(group)
    if found is None:
        warn_not_in_group("broadcast")
        return None
    root = group_rank_of(found, src, group_src, "src", default=None)
    if tracing():
        _write_traced(tensor, collective(tensor.detach(), "broadcast", root=root,
                                         **_attrs(found)))
        return completed_work("broadcast", [tensor]) if async_op else None
    memory = Memory(tensor, "broadcast", found.rank() != root, found._channel)
    requests = found._channel.broadcast(memory.array, root)
    return run(found, requests, "broadcast", memory.written, async_op, [tensor],
               (memory.array,))


def reduce(tensor: Tensor, dst: int | None = None, op=ReduceOp.SUM, group=None,
           async_op: bool = False, group_dst: int | None = None):
    """Reduce `tensor` across the group into `tensor` of rank `dst`; the other processes'
    tensors are left as they are."""
    check_tensor(tensor, "tensor")
    name = reduction_name(op, tensor.dtype, "reduce")
    found = resolve(group)
    if found is None:
        warn_not_in_group("reduce")
        return None
    root = group_rank_of(found, dst, group_dst, "dst", default=None)
    if tracing():
        # In a graph, an all_reduce of which only `dst` keeps the result.
        result = collective(tensor.detach(), "all_reduce", name, **_attrs(found))
        if found.rank() == root:
            _write_traced(tensor, result)
        return completed_work("reduce", [tensor]) if async_op else None
    memory = Memory(tensor, "reduce", found.rank() == root, found._channel)
    received = memory.array if found.rank() == root else np.empty_like(memory.array)
    requests = found._channel.reduce(memory.array, received, name, root)
    return run(found, requests, "reduce", _averaged(memory, found, name), async_op, [tensor],
               (memory.array, received))


def all_gather(tensor_list: list, tensor: Tensor, group=None, async_op: bool = False):
    """Gather `tensor` of every process into `tensor_list` (one tensor per rank, in rank
    order), on every process."""
    check_tensor_list(tensor_list, "tensor_list")
    check_tensor(tensor, "tensor")
    found = resolve(group)
    if found is None:
        warn_not_in_group("all_gather")
        return None
    _check_parts(tensor_list, tensor, found, "all_gather", "tensor_list")
    if tracing():
        gathered = collective(tensor.detach().reshape(1, *tensor.shape), "all_gather",
                              **_attrs(found))
        for index, part in enumerate(tensor_list):
            _write_traced(part, gathered[index])
        return completed_work("all_gather", tensor_list) if async_op else None
    memory = Memory(tensor, "all_gather", False, found._channel)
    stacked = np.empty((found.size(), *memory.array.shape), memory.array.dtype)
    requests = found._channel.all_gather(memory.array, stacked)
    return run(found, requests, "all_gather", _scatter_rows(stacked, tensor_list), async_op,
               tensor_list, (memory.array, stacked))


def _check_parts(parts: list, tensor: Tensor, found, what: str, name: str) -> None:
    if len(parts) != found.size():
        raise ValueError(f"{what}: {name} must hold one tensor per rank of the group "
                         f"({found.size()}), got {len(parts)}")
    for part in parts:
        if tuple(part.shape) != tuple(tensor.shape) or part.dtype is not tensor.dtype:
            raise ValueError(f"{what}: every tensor of {name} must have the shape and dtype "
                             f"of `tensor` ({list(tensor.shape)}, {tensor.dtype}), got "
                             f"{list(part.shape)}, {part.dtype}")


def _scatter_rows(stacked: np.ndarray, tensors: list):
    """Once `stacked` holds one row per rank: each row copied into its tensor."""
    def finish():
        for row, part in zip(stacked, tensors):
            part._payload[...] = row  # an ndarray, or a CudaArray that copies it to the device
            part._bump_version()
    return finish


def _gathered_shape(output: Tensor, input_: Tensor, found, what: str, reduce_: bool):
    """Check torch's two layouts of the gathered tensor: the inputs concatenated along dim 0
    (W * n, ...) or stacked (W, *shape)."""
    small, large = (output, input_) if reduce_ else (input_, output)
    shape, size = tuple(small.shape), found.size()
    concatenated = (shape[0] * size, *shape[1:]) if shape else None
    if tuple(large.shape) not in (concatenated, (size, *shape)):
        names = ("input", "output") if reduce_ else ("output", "input")
        raise ValueError(f"{what}: the {names[0]} tensor's shape {list(large.shape)} must be "
                         f"the world size ({size}) times the {names[1]} tensor's "
                         f"{list(shape)}, along dim 0 or as a new first dim")
    if output.dtype is not input_.dtype:
        raise ValueError(f"{what}: output and input must have the same dtype, got "
                         f"{output.dtype} and {input_.dtype}")


def all_gather_into_tensor(output_tensor: Tensor, input_tensor: Tensor, group=None,
                           async_op: bool = False):
    """Gather `input_tensor` of every process into `output_tensor`, concatenated along dim 0
    (shape (W * n, ...)) or stacked ((W, n, ...)), in rank order."""
    check_tensor(output_tensor, "output_tensor")
    check_tensor(input_tensor, "input_tensor")
    found = resolve(group)
    if found is None:
        warn_not_in_group("all_gather_into_tensor")
        return None
    _gathered_shape(output_tensor, input_tensor, found, "all_gather_into_tensor", False)
    if tracing():
        flat = input_tensor.detach().reshape(1, -1)
        _write_traced(output_tensor, collective(flat, "all_gather", **_attrs(found)))
        return completed_work("all_gather_into_tensor", [output_tensor]) if async_op else None
    source = Memory(input_tensor, "all_gather_into_tensor", False, found._channel)
    target = Memory(output_tensor, "all_gather_into_tensor", True, found._channel)
    requests = found._channel.all_gather(source.array, target.array)
    return run(found, requests, "all_gather_into_tensor", target.written, async_op,
               [output_tensor], (source.array, target.array))


def reduce_scatter_tensor(output: Tensor, input: Tensor, op=ReduceOp.SUM,  # noqa: A002
                          group=None, async_op: bool = False):
    """Reduce `input` (the W parts of every process, concatenated along dim 0 or stacked)
    across the group; rank r receives the reduction of part r in `output`."""
    check_tensor(output, "output")
    check_tensor(input, "input")
    name = reduction_name(op, input.dtype, "reduce_scatter_tensor")
    found = resolve(group)
    if found is None:
        warn_not_in_group("reduce_scatter_tensor")
        return None
    _gathered_shape(output, input, found, "reduce_scatter_tensor", True)
    if tracing():
        flat = input.detach().reshape(found.size(), -1)
        _write_traced(output, collective(flat, "reduce_scatter", name, **_attrs(found)))
        return completed_work("reduce_scatter_tensor", [output]) if async_op else None
    source = Memory(input, "reduce_scatter_tensor", False, found._channel)
    target = Memory(output, "reduce_scatter_tensor", True, found._channel)
    requests = found._channel.reduce_scatter(source.array, target.array, name)
    return run(found, requests, "reduce_scatter_tensor", _averaged(target, found, name),
               async_op, [output], (source.array, target.array))


def reduce_scatter(output: Tensor, input_list: list, op=ReduceOp.SUM, group=None,
                   async_op: bool = False):
    """Reduce `input_list` (one tensor per rank) across the group; rank r receives the
    reduction of every process's `input_list[r]` in `output`."""
    check_tensor(output, "output")
    check_tensor_list(input_list, "input_list")
    found = resolve(group)
    if found is None:
        warn_not_in_group("reduce_scatter")
        return None
    _check_parts(input_list, output, found, "reduce_scatter", "input_list")
    from ..ops.functional import stack

    with no_grad():
        stacked = stack([part.detach() for part in input_list])
    return reduce_scatter_tensor(output, stacked, op, group, async_op)


def gather(tensor: Tensor, gather_list: list | None = None, dst: int | None = None,
           group=None, async_op: bool = False, group_dst: int | None = None):
    """Gather `tensor` of every process into `gather_list` of rank `dst` (one tensor per
    rank); the other processes pass gather_list=None."""
    check_tensor(tensor, "tensor")
    found = resolve(group)
    if found is None:
        warn_not_in_group("gather")
        return None
    root = group_rank_of(found, dst, group_dst, "dst")
    is_root = found.rank() == root
    if is_root:
        if gather_list is None:
            raise ValueError("Argument ``gather_list`` must be specified on destination rank.")
        check_tensor_list(gather_list, "gather_list")
        _check_parts(gather_list, tensor, found, "gather", "gather_list")
    elif gather_list:
        raise ValueError("Argument ``gather_list`` must NOT be specified on non-destination "
                         "ranks.")
    if tracing():
        gathered = collective(tensor.detach().reshape(1, *tensor.shape), "all_gather",
                              **_attrs(found))
        for index, part in enumerate(gather_list if is_root else []):
            _write_traced(part, gathered[index])
        return completed_work("gather", gather_list or []) if async_op else None
    memory = Memory(tensor, "gather", False, found._channel)
    stacked = np.empty((found.size(), *memory.array.shape), memory.array.dtype)
    requests = found._channel.gather(memory.array, stacked, root)
    finish = _scatter_rows(stacked, gather_list) if is_root else None
    return run(found, requests, "gather", finish, async_op, gather_list or [],
               (memory.array, stacked))


def scatter(tensor: Tensor, scatter_list: list | None = None, src: int | None = None,
            group=None, async_op: bool = False, group_src: int | None = None):
    """Rank `src`'s `scatter_list[r]` (one tensor per rank) is copied into `tensor` of rank r;
    the other processes pass scatter_list=None."""
    check_tensor(tensor, "tensor")
    found = resolve(group)
    if found is None:
        warn_not_in_group("scatter")
        return None
    root = group_rank_of(found, src, group_src, "src")
    is_root = found.rank() == root
    if is_root:
        if scatter_list is None:
            raise ValueError("Argument ``scatter_list`` must be specified on source rank.")
        check_tensor_list(scatter_list, "scatter_list")
        _check_parts(scatter_list, tensor, found, "scatter", "scatter_list")
    elif scatter_list:
        raise ValueError("Argument ``scatter_list`` must NOT be specified on non-source ranks.")
    if tracing():
        from ..ops.functional import stack
        from ..tensor.creation import zeros

        # In a graph, a broadcast of the root's parts, of which each process keeps its own.
        parts = stack([part.detach() for part in scatter_list]) if is_root else \
            zeros((found.size(), *tensor.shape), dtype=tensor.dtype)
        sent = collective(parts, "broadcast", root=root, **_attrs(found))
        _write_traced(tensor, sent[found.rank()])
        return completed_work("scatter", [tensor]) if async_op else None
    memory = Memory(tensor, "scatter", True, found._channel)
    stacked = np.stack([part._host("scatter") for part in scatter_list]) if is_root else None
    requests = found._channel.scatter(stacked, memory.array, root)
    return run(found, requests, "scatter", memory.written, async_op, [tensor],
               (stacked, memory.array))


def all_to_all_single(output: Tensor, input: Tensor, output_split_sizes=None,  # noqa: A002
                      input_split_sizes=None, group=None, async_op: bool = False):
    """Split `input` into W equal parts along dim 0 and send part r to rank r; `output`
    receives the parts of every rank, in rank order (equal splits only)."""
    check_tensor(output, "output")
    check_tensor(input, "input")
    found = resolve(group)
    if found is None:
        warn_not_in_group("all_to_all_single")
        return None
    if output_split_sizes is not None or input_split_sizes is not None:
        raise NotImplementedError("all_to_all_single: uneven splits are not supported by "
                                  "autojit.distributed yet")
    if tuple(output.shape) != tuple(input.shape) or not input.shape or \
            input.shape[0] % found.size():
        raise ValueError(f"all_to_all_single: input {list(input.shape)} and output "
                         f"{list(output.shape)} must have one shape, whose first dim divides "
                         f"by the world size {found.size()}")
    if tracing():
        from ..tensor.graph_break import graph_break

        graph_break("all_to_all_single inside a compiled function", needs_data=False)
    source = Memory(input, "all_to_all_single", False, found._channel)
    target = Memory(output, "all_to_all_single", True, found._channel)
    requests = found._channel.all_to_all(source.array, target.array)
    return run(found, requests, "all_to_all_single", target.written, async_op, [output],
               (source.array, target.array))


def barrier(group=None, async_op: bool = False, device_ids=None):
    """Block until every process of the group has reached this barrier."""
    found = resolve(group)
    if found is None:
        warn_not_in_group("barrier")
        return None
    if state.tracer is not None:
        from ..tensor.graph_break import graph_break

        graph_break("barrier() inside a compiled function", needs_data=False)
    return run(found, found._channel.barrier(), "barrier", None, async_op)
