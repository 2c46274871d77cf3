"""Point-to-point messages of autojit.distributed, with torch.distributed's names: send, recv,
isend and irecv, over MPI's Isend and Irecv.

A message's size is the tensor's: the receiving process passes a tensor of the shape and dtype
the sender sends. Inside a compiled function they are graph breaks (the call runs eagerly),
since whether a process sends or receives, and what, is decided per process in Python.
"""

from __future__ import annotations

from .collectives import Memory, check_tensor, tracing
from .process_group import group_rank_of, resolve, warn_not_in_group
from .work import Work


def _peer(group, rank, group_rank, name: str, what: str):
    found = resolve(group)
    if found is None:
        warn_not_in_group(what)
        return None, None
    if rank is None and group_rank is None and name == "dst":
        raise ValueError(f"{what}: a destination rank is required (dst= or group_dst=)")
    if rank is None and group_rank is None:
        return found, None  # recv from any source
    return found, group_rank_of(found, rank, group_rank, name)


def _no_trace(tensor, what: str) -> None:
    if tracing():
        from ..tensor.graph_break import graph_break

        graph_break(f"{what} inside a compiled function", needs_data=False)


def isend(tensor, dst: int | None = None, group=None, tag: int = 0,
          group_dst: int | None = None) -> Work | None:
    """Send `tensor` to rank `dst` without waiting; the Work's wait() returns once the tensor
    may be changed again."""
    check_tensor(tensor, "tensor")
    _no_trace(tensor, "isend")
    found, peer = _peer(group, dst, group_dst, "dst", "isend")
    if found is None:
        return None
    if peer == found.rank():
        raise ValueError("Invalid destination rank: should not be the same as rank of the "
                         "current process.")
    memory = Memory(tensor, "send", False, found._channel)
    return Work(found._channel.send(memory.array, peer, tag), found.timeout, "send",
                result=[tensor], keep=(memory.array,))


def send(tensor, dst: int | None = None, group=None, tag: int = 0,
         group_dst: int | None = None) -> None:
    """Send `tensor` to rank `dst` (a world rank; `group_dst` a rank in `group`)."""
    work = isend(tensor, dst, group, tag, group_dst)
    if work is not None:
        work.wait()


def irecv(tensor, src: int | None = None, group=None, tag: int = 0,
          group_src: int | None = None) -> Work | None:
    """Receive into `tensor` from rank `src` (any rank when None) without waiting; the Work's
    source_rank() tells who sent it."""
    check_tensor(tensor, "tensor")
    _no_trace(tensor, "irecv")
    found, peer = _peer(group, src, group_src, "src", "irecv")
    if found is None:
        return None
    memory = Memory(tensor, "recv", True, found._channel)
    requests = found._channel.recv(memory.array, peer, tag)
    work = Work(requests, found.timeout, "recv", None, [tensor], (memory.array,))

    def finish():
        memory.written()
        work._source = found._ranks[requests[0].source()]

    work._on_complete = finish
    return work


def recv(tensor, src: int | None = None, group=None, tag: int = 0,
         group_src: int | None = None) -> int:
    """Receive into `tensor` from rank `src` (any rank when None); returns the sender's world
    rank (-1 outside `group`)."""
    work = irecv(tensor, src, group, tag, group_src)
    if work is None:
        return -1
    return work.source_rank()
