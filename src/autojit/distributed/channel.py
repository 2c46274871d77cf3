"""The transport under autojit.distributed: MPI through mpi4py, or, for a world of one process,
a local stand-in, behind one small interface (Channel) that process groups hold.

A channel moves NumPy arrays: each collective is begun non-blocking on the arrays' own memory
(mpi4py's buffer interface, no copy) and gives MPI requests, which work.py waits on with a
timeout. mpi4py is imported only here, and only when an MPI group is made, so `import autojit`
never loads it; without it, asking for MPI raises the error naming the extra
`autojit[distributed]`. Reductions on bool arrays are logical (MPI defines SUM on no boolean
type): SUM and MAX are a logical or, PRODUCT and MIN a logical and, as torch's backends give.
"""

from __future__ import annotations

import os

import numpy as np

INSTALL_HINT = ("autojit.distributed's MPI backend needs mpi4py and an MPI runtime, the extra "
                "autojit[distributed]: pip install 'autojit[distributed]' (mpi4py and the "
                "mpich wheel; or mpi4py built against your cluster's MPI)")

# Set by mpiexec (Hydra, PMIx, Open MPI, MVAPICH, Intel MPI) and by srun in the processes it
# starts: a process that has one was launched as a rank of an MPI job.
LAUNCH_VARIABLES = ("PMI_RANK", "PMI_SIZE", "PMIX_RANK", "OMPI_COMM_WORLD_RANK",
                    "MV2_COMM_WORLD_RANK", "MPI_LOCALRANKID", "PMI_FD")


# What mpiexec tells each process, Hydra's and PMI's names first, then Open MPI's.
_RANK = ("PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK")
_SIZE = ("PMI_SIZE", "OMPI_COMM_WORLD_SIZE")
_LOCAL_RANK = ("MPI_LOCALRANKID", "OMPI_COMM_WORLD_LOCAL_RANK")
_LOCAL_SIZE = ("MPI_LOCALNRANKS", "OMPI_COMM_WORLD_LOCAL_SIZE")


def _first(names: tuple, default: str) -> str:
    return next((os.environ[name] for name in names if name in os.environ), default)


def set_torchrun_variables(rank: int | None = None, size: int | None = None) -> None:
    """torchrun's RANK, WORLD_SIZE, LOCAL_RANK and LOCAL_WORLD_SIZE, from what mpiexec set
    (or the given rank and size); variables already set are kept."""
    os.environ.setdefault("RANK", str(rank) if rank is not None else _first(_RANK, "0"))
    os.environ.setdefault("WORLD_SIZE", str(size) if size is not None else _first(_SIZE, "1"))
    os.environ.setdefault("LOCAL_RANK", _first(_LOCAL_RANK, os.environ["RANK"]))
    os.environ.setdefault("LOCAL_WORLD_SIZE", _first(_LOCAL_SIZE, os.environ["WORLD_SIZE"]))


def launched_by_mpiexec() -> bool:
    """Whether this process was started as one rank of an MPI job (mpiexec, srun)."""
    return any(name in os.environ for name in LAUNCH_VARIABLES)


def load_mpi():
    """mpi4py's MPI module (MPI is initialized on this first import), or the error naming the
    extra that installs it."""
    try:
        from mpi4py import MPI
    except ImportError as error:
        raise ModuleNotFoundError(INSTALL_HINT) from error
    return MPI


def cuda_aware(MPI) -> bool:  # noqa: N803 - mpi4py's module name
    """Whether MPI reads and writes GPU memory itself: AUTOJIT_MPI_CUDA_AWARE=1 (or 0), else
    what the library says (MPIX_Query_cuda_support, where mpi4py has it)."""
    flag = os.environ.get("AUTOJIT_MPI_CUDA_AWARE")
    if flag is not None:
        return flag.lower() in ("1", "true", "yes")
    query = getattr(MPI, "Query_cuda_support", None)
    return bool(query()) if query is not None else False


def mpi_available() -> bool:
    """Whether mpi4py can be imported (without importing it, so without initializing MPI)."""
    import importlib.util

    return importlib.util.find_spec("mpi4py") is not None


class Done:
    """A request that completed when it was made (a local channel's, or an empty exchange)."""

    def Test(self) -> bool:  # noqa: N802 - mpi4py's Request method name
        return True

    def Cancel(self) -> None:  # noqa: N802
        pass


DONE = Done()


class Receive:
    """An MPI receive's request with the Status that tells who sent what it received."""

    def __init__(self, request, status):
        self.request, self.status = request, status

    def Test(self) -> bool:  # noqa: N802
        return self.request.Test(self.status)

    def Cancel(self) -> None:  # noqa: N802
        self.request.Cancel()

    def source(self) -> int:
        return self.status.Get_source()

_LOGICAL = {"sum": "LOR", "max": "LOR", "bor": "LOR", "product": "LAND", "min": "LAND",
            "band": "LAND", "bxor": "LXOR"}
_ARITHMETIC = {"sum": "SUM", "avg": "SUM", "product": "PROD", "max": "MAX", "min": "MIN",
               "band": "BAND", "bor": "BOR", "bxor": "BXOR"}


class MPIChannel:
    """Collectives over an mpi4py communicator, begun non-blocking."""

    backend = "mpi"

    def __init__(self, comm):
        self.comm = comm
        self.MPI = load_mpi()
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()
        self.cuda_aware = cuda_aware(self.MPI)

    def _op(self, op: str, dtype: np.dtype):
        names = _LOGICAL if dtype == np.bool_ else _ARITHMETIC
        return getattr(self.MPI, names[op])

    def _send(self, send: np.ndarray, recv: np.ndarray):
        return self.MPI.IN_PLACE if send is recv else send

    def all_reduce(self, send, recv, op: str):
        return [self.comm.Iallreduce(self._send(send, recv), recv, self._op(op, recv.dtype))]

    def broadcast(self, buffer, root: int):
        return [self.comm.Ibcast(buffer, root)]

    def all_gather(self, send, recv):
        return [self.comm.Iallgather(send, recv)]

    def reduce_scatter(self, send, recv, op: str):
        return [self.comm.Ireduce_scatter_block(send, recv, self._op(op, send.dtype))]

    def reduce(self, send, recv, op: str, root: int):
        send = self.MPI.IN_PLACE if send is recv and self.rank == root else send
        return [self.comm.Ireduce(send, recv, self._op(op, recv.dtype), root)]

    def gather(self, send, recv, root: int):
        return [self.comm.Igather(send, recv if self.rank == root else None, root)]

    def scatter(self, send, recv, root: int):
        return [self.comm.Iscatter(send if self.rank == root else None, recv, root)]

    def all_to_all(self, send, recv):
        return [self.comm.Ialltoall(send, recv)]

    def send(self, buffer, dst: int, tag: int):
        return [self.comm.Isend(buffer, dst, tag)]

    def recv(self, buffer, src: int | None, tag: int):
        """A request whose `source()` is the sender's rank once it completed (src None: any
        sender)."""
        status = self.MPI.Status()
        source = self.MPI.ANY_SOURCE if src is None else src
        return [Receive(self.comm.Irecv(buffer, source, tag), status)]

    def barrier(self):
        return [self.comm.Ibarrier()]

    # Python objects, pickled (blocking: used outside training steps).
    def broadcast_object(self, obj, root: int):
        return self.comm.bcast(obj, root)

    def all_gather_object(self, obj) -> list:
        return self.comm.allgather(obj)

    def gather_object(self, obj, root: int):
        return self.comm.gather(obj, root)

    def scatter_object(self, objects, root: int):
        return self.comm.scatter(objects, root)

    def split(self, ranks: list):
        """The channel of the sub-group `ranks` (world ranks of this channel), or None for a
        process outside it; every process of this channel must call it (MPI_Comm_create)."""
        group = self.comm.Get_group().Incl(ranks)
        comm = self.comm.Create(group)
        group.Free()
        return None if comm == self.MPI.COMM_NULL else MPIChannel(comm)

    def abort(self, code: int = 1) -> None:
        self.comm.Abort(code)

    def free(self) -> None:
        if self.comm != self.MPI.COMM_WORLD:
            self.comm.Free()


class LocalChannel:
    """A world of one process, without MPI: every collective is a copy, completed at once."""

    backend = "local"
    rank = 0
    size = 1
    cuda_aware = False

    def all_reduce(self, send, recv, op: str):
        _copy(recv, send)
        return [DONE]

    def broadcast(self, buffer, root: int):
        return [DONE]

    def all_gather(self, send, recv):
        _copy(recv, send)
        return [DONE]

    reduce_scatter = all_reduce

    def reduce(self, send, recv, op: str, root: int):
        _copy(recv, send)
        return [DONE]

    def gather(self, send, recv, root: int):
        _copy(recv, send)
        return [DONE]

    scatter = gather

    def all_to_all(self, send, recv):
        _copy(recv, send)
        return [DONE]

    def send(self, buffer, dst: int, tag: int):
        raise RuntimeError("send: this process is the only one of its group")

    def recv(self, buffer, src: int | None, tag: int):
        raise RuntimeError("recv: this process is the only one of its group, so nothing will "
                           "ever be sent to it")

    def barrier(self):
        return [DONE]

    def broadcast_object(self, obj, root: int):
        return obj

    def all_gather_object(self, obj) -> list:
        return [obj]

    def gather_object(self, obj, root: int):
        return [obj]

    def scatter_object(self, objects, root: int):
        return objects[0]

    def split(self, ranks: list):
        return LocalChannel() if ranks == [0] else None

    def abort(self, code: int = 1) -> None:
        os._exit(code)

    def free(self) -> None:
        pass


def _copy(target: np.ndarray, source: np.ndarray) -> None:
    if target is not source:
        np.copyto(target.reshape(-1), np.asarray(source).reshape(-1))
