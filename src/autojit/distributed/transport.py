"""The transport a compiled collective runs on: ops/collective.py's node, run by the reference
interpreter (its impl, blocking) or by a compiled plan (begun where the node stands, finished
where its result is first read), reaches the process group through this object, which
autojit.distributed installs in `ops.collective.TRANSPORT` when it is imported
(docs/notes/layers.md).

Unlike the eager collectives (collectives.py), which write into the tensor given, a node makes
a new array: the plan may not write into its operand, which other steps read.
"""

from __future__ import annotations

import numpy as np

from .process_group import group_by_number
from .work import Work

_FLOATING = "fc"  # NumPy dtype kinds a ReduceOp.AVG divides


class Pending:
    """One collective node under way: its Work, what makes the result once it completed, and
    the array it sends (a contiguous copy, maybe), which MPI reads until then."""

    __slots__ = ("work", "produce", "device", "sent")

    def __init__(self, work: Work, produce, device, sent):
        self.work, self.produce, self.device, self.sent = work, produce, device, sent


def _contiguous(array) -> np.ndarray:
    # Not np.ascontiguousarray, which makes a 0-d array 1-d.
    return np.asarray(array, order="C")


class Transport:
    """run / start / progress / finish / rank, as ops/collective.py asks of its TRANSPORT."""

    def run(self, array, attrs: dict):
        return self.finish(self.start(array, attrs))

    def start(self, array, attrs: dict) -> Pending:
        found = group_by_number(attrs["group"])
        channel, size = found._channel, found.size()
        kind, op = attrs["kind"], attrs["op"]
        device = None
        if array.__class__ is not np.ndarray:  # a CudaArray: staged through the host
            device = array.device_index
            array = array.to_host()
        send = _contiguous(array)
        if op == "avg" and send.dtype.kind not in _FLOATING and kind in ("all_reduce",
                                                                           "reduce_scatter"):
            raise RuntimeError(f"result type Float can't be cast to the desired output type "
                               f"{send.dtype}")
        divisor = size if op == "avg" else 1
        sent = send
        if kind == "all_reduce":
            out = np.empty_like(send)
            requests = channel.all_reduce(send, out, op)
            produce = _divided(out, divisor)
        elif kind == "broadcast":
            out = send.copy()
            requests = channel.broadcast(out, attrs["root"])
            produce = _divided(out, 1)
        else:
            dim = attrs["dim"] % send.ndim
            moved = sent = _contiguous(np.moveaxis(send, dim, 0))
            if kind == "all_gather":
                received = np.empty((moved.shape[0] * size, *moved.shape[1:]), moved.dtype)
                requests = channel.all_gather(moved, received)
            else:
                received = np.empty((moved.shape[0] // size, *moved.shape[1:]), moved.dtype)
                requests = channel.reduce_scatter(moved, received, op)
            produce = _moved_back(received, dim, divisor)
        return Pending(Work(requests, found.timeout, kind), produce, device, sent)

    def progress(self, pending: Pending) -> None:
        pending.work.is_completed()

    def finish(self, pending: Pending):
        pending.work.wait()
        result = pending.produce()
        if pending.device is not None:
            from ..cuda.array import CudaArray

            return CudaArray.from_host(result, pending.device)
        return result

    def rank(self, number: int) -> int:
        return group_by_number(number).rank()


def _divided(out: np.ndarray, divisor: int):
    def produce():
        if divisor != 1:
            np.true_divide(out, divisor, out=out)
        return out
    return produce


def _moved_back(received: np.ndarray, dim: int, divisor: int):
    def produce():
        out = _contiguous(np.moveaxis(received, 0, dim))
        if divisor != 1:
            np.true_divide(out, divisor, out=out)
        return out
    return produce
