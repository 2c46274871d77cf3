"""Process groups, as torch.distributed has them: init_process_group, new_group,
destroy_process_group, get_rank, get_world_size and the questions around them, and the table of
groups by number that compiled collectives refer to.

The default group is MPI's COMM_WORLD (backend "mpi"), or a world of this one process (backend
"local", no MPI needed) when the process was not started by mpiexec and no backend was asked
for. Groups are numbered in the order they are made, which every process follows (torch asks
that every process call new_group in the same order), so a number names the same group in
every process: a traced collective's node keeps the number (ops/collective.py), and the
transport (transport.py) finds the group by it when the graph runs.

In an MPI job of several processes an uncaught exception aborts the job (MPI_Abort), as mpi4py's
`python -m mpi4py` does: the other ranks would otherwise wait in their next collective until
the timeout. See docs/notes/distributed.md.
"""

from __future__ import annotations

import enum
import itertools
import sys
import time
import warnings
from datetime import timedelta

from .channel import (
    INSTALL_HINT,
    LocalChannel,
    MPIChannel,
    launched_by_mpiexec,
    load_mpi,
    set_torchrun_variables,
)
from .work import seconds

# torch's default timeout of a process group's collectives.
default_pg_timeout = timedelta(minutes=30)


class Backend(str):
    """The transports a process group may run on: "mpi" (MPI through mpi4py) and "local" (a
    world of one process, without MPI)."""

    UNDEFINED = "undefined"
    MPI = "mpi"
    LOCAL = "local"
    GLOO = "gloo"
    NCCL = "nccl"

    def __new__(cls, name: str):
        if not isinstance(name, str):
            raise ValueError(f"Backend constructor parameter must be string-ish, but got "
                             f"{type(name)}")
        value = getattr(Backend, name.upper(), Backend.UNDEFINED)
        if value == Backend.UNDEFINED:
            value = name.lower()
        return super().__new__(cls, value)


class RedOpType(enum.Enum):
    """The reductions, with torch's numbering."""

    SUM = 0
    AVG = 1
    PRODUCT = 2
    MIN = 3
    MAX = 4
    BAND = 5
    BOR = 6
    BXOR = 7
    PREMUL_SUM = 8
    UNUSED = 9

    def __str__(self) -> str:
        return f"RedOpType.{self.name}"


class ReduceOp:
    """The reductions of all_reduce, reduce and reduce_scatter: `ReduceOp.SUM`, `AVG`,
    `PRODUCT`, `MIN`, `MAX`, and the bitwise `BAND`, `BOR`, `BXOR` of integer tensors."""

    RedOpType = RedOpType
    SUM = RedOpType.SUM
    AVG = RedOpType.AVG
    PRODUCT = RedOpType.PRODUCT
    MIN = RedOpType.MIN
    MAX = RedOpType.MAX
    BAND = RedOpType.BAND
    BOR = RedOpType.BOR
    BXOR = RedOpType.BXOR
    PREMUL_SUM = RedOpType.PREMUL_SUM
    UNUSED = RedOpType.UNUSED


class ProcessGroup:
    """A set of processes that run collectives together; `rank()` is this process's place in
    it, `size()` how many there are."""

    def __init__(self, channel, ranks: list, number: int, timeout: float, backend: str):
        self._channel = channel
        self._ranks = list(ranks)  # the world ranks of the members, in group-rank order
        self.number = number
        self.timeout = timeout
        self._backend = Backend(backend)

    def rank(self) -> int:
        return self._channel.rank

    def size(self) -> int:
        return self._channel.size

    def name(self) -> str:
        return str(self._backend)

    @property
    def group_name(self) -> str:
        return str(self.number)

    @property
    def group_desc(self) -> str:
        return "default_pg" if self.number == _state.world_number else "undefined"

    def __repr__(self) -> str:
        return (f"<ProcessGroup {self.number} ({self._backend}): rank {self.rank()} of "
                f"{self.size()}, world ranks {self._ranks}>")


class _NonGroupMember:
    def __repr__(self) -> str:
        return "GroupMember.NON_GROUP_MEMBER"


class GroupMember:
    """`GroupMember.WORLD`: the default group once initialized (None before);
    `GroupMember.NON_GROUP_MEMBER`: what new_group gives a process outside the new group."""

    WORLD: ProcessGroup | None = None
    NON_GROUP_MEMBER = _NonGroupMember()


group = GroupMember  # torch's alias: `dist.group.WORLD`


class _State:
    def __init__(self):
        self.groups: dict = {}  # number -> ProcessGroup
        self.world_number: int | None = None
        self.numbers = itertools.count()
        self.previous_excepthook = None


_state = _State()


# ---- the default group --------------------------------------------------------------------

def init_process_group(backend: str | None = None, init_method: str | None = None,
                       timeout: timedelta | None = None, world_size: int = -1, rank: int = -1,
                       store=None, group_name: str = "", pg_options=None,
                       device_id=None) -> None:
    """Initialize the default process group.

    backend: "mpi" runs over MPI (mpi4py, the extra autojit[distributed]); None picks MPI when
    the process was started by mpiexec (or srun), and otherwise a world of this one process
    ("local"), which needs no MPI. world_size and rank, when given, must be what the MPI job
    says. init_method, store and pg_options are torch's rendezvous arguments; MPI's launcher
    has done the rendezvous already, so they are accepted and not used.

    >>> import autojit.distributed as dist
    >>> dist.init_process_group()   # a plain `python`: a world of one
    >>> dist.get_rank(), dist.get_world_size(), dist.get_backend()
    (0, 1, 'local')
    >>> dist.destroy_process_group()
    """
    if is_initialized():
        raise ValueError("trying to initialize the default process group twice!")
    if backend is None:
        backend = Backend.MPI if launched_by_mpiexec() else Backend.LOCAL
    backend = Backend(backend)
    if backend == Backend.MPI:
        channel = MPIChannel(load_mpi().COMM_WORLD)
        set_torchrun_variables(channel.rank, channel.size)
    elif backend == Backend.LOCAL:
        if world_size not in (-1, 1):
            raise ValueError(
                f"init_process_group: world_size={world_size} was asked for, but this process "
                "was not started by mpiexec, so it is a world of one: launch the script with "
                f"`mpiexec -n {world_size} python script.py` or `python -m "
                f"autojit.distributed.run --nproc-per-node {world_size} script.py`")
        channel = LocalChannel()
    else:
        raise ValueError(f"init_process_group: backend {str(backend)!r} is not available: "
                         "autojit.distributed runs over MPI (backend='mpi', or None to pick MPI "
                         "under mpiexec and a single process otherwise)")
    if world_size not in (-1, channel.size):
        raise ValueError(f"init_process_group: world_size={world_size}, but the MPI job has "
                         f"{channel.size} processes")
    if rank not in (-1, channel.rank):
        raise ValueError(f"init_process_group: rank={rank}, but this process is rank "
                         f"{channel.rank} of the MPI job")
    limit = seconds(default_pg_timeout if timeout is None else timeout)
    number = next(_state.numbers)
    world = ProcessGroup(channel, list(range(channel.size)), number, limit, backend)
    _state.groups[number] = world
    _state.world_number = number
    GroupMember.WORLD = world
    if channel.size > 1:
        _abort_on_uncaught_exceptions(channel)


_ABORT_GRACE_SECONDS = 1.0


def _abort_on_uncaught_exceptions(channel) -> None:
    """An uncaught exception prints its traceback, then aborts every process of the job
    (MPI_Abort): the others would otherwise block in their next collective."""
    if _state.previous_excepthook is not None:
        return
    previous = _state.previous_excepthook = sys.excepthook

    def abort(exc_type, exc, traceback):
        previous(exc_type, exc, traceback)
        sys.stdout.flush()
        sys.stderr.write(f"autojit.distributed: rank {channel.rank} raised an uncaught "
                         f"{exc_type.__name__}; aborting the MPI job\n")
        sys.stderr.flush()
        # mpiexec forwards each rank's output asynchronously, and an abort kills what it has
        # not forwarded yet: on a busy machine the traceback was lost. Give it a moment.
        time.sleep(_ABORT_GRACE_SECONDS)
        channel.abort(1)

    sys.excepthook = abort


def is_initialized() -> bool:
    """Whether the default process group has been initialized."""
    return _state.world_number is not None


def is_available() -> bool:
    """Whether autojit.distributed can be used: always (a world of one needs no MPI;
    is_mpi_available() says whether MPI can be)."""
    return True


def is_mpi_available() -> bool:
    """Whether the MPI backend can be used: mpi4py is installed (autojit[distributed])."""
    from .channel import mpi_available

    return mpi_available()


def is_gloo_available() -> bool:
    return False


def is_nccl_available() -> bool:
    return False


def is_torchelastic_launched() -> bool:
    return False


def destroy_process_group(group: ProcessGroup | None = None) -> None:
    """Destroy `group`, or, with None, every group and the default one (init_process_group may
    then be called again; MPI itself stays initialized until the process exits)."""
    if group is None or group is GroupMember.WORLD:
        world = default_group()
        for number, member in list(_state.groups.items()):
            if member is not world:
                member._channel.free()
            del _state.groups[number]
        _state.world_number = None
        GroupMember.WORLD = None
        if _state.previous_excepthook is not None:
            sys.excepthook, _state.previous_excepthook = _state.previous_excepthook, None
        return
    if group is GroupMember.NON_GROUP_MEMBER:
        return
    if _state.groups.get(group.number) is not group:
        raise ValueError("Invalid process group specified")
    group._channel.free()
    del _state.groups[group.number]


def default_group() -> ProcessGroup:
    if _state.world_number is None:
        raise ValueError("Default process group has not been initialized, please make sure to "
                         "call init_process_group.")
    return _state.groups[_state.world_number]


def resolve(group) -> ProcessGroup | None:
    """The ProcessGroup a collective's `group=` names (None: the default one), or None for a
    process outside it."""
    if group is None or group is GroupMember.WORLD:
        return default_group()
    if group is GroupMember.NON_GROUP_MEMBER:
        default_group()
        return None
    if not isinstance(group, ProcessGroup):
        raise TypeError(f"group must be a ProcessGroup or None, got {type(group).__name__}")
    if _state.groups.get(group.number) is not group:
        raise ValueError("Invalid process group specified (it was destroyed)")
    return group


def group_by_number(number: int) -> ProcessGroup:
    """The group a compiled collective names by its number (ops/collective.py)."""
    found = _state.groups.get(number)
    if found is None:
        raise RuntimeError(f"the process group number {number} this collective was traced with "
                           "has been destroyed; call the function again after making its "
                           "groups anew (a compiled function retraces when its guards change)")
    return found


def new_group(ranks: list | None = None, timeout: timedelta | None = None, backend=None,
              pg_options=None, use_local_synchronization: bool = False, group_desc=None,
              device_id=None):
    """A group of the world ranks `ranks` (all when None). Every process of the world must call
    it, in the same order as its other new_group calls; a process outside `ranks` gets
    GroupMember.NON_GROUP_MEMBER."""
    world = default_group()
    members = list(range(world.size())) if ranks is None else sorted(int(r) for r in ranks)
    if len(set(members)) != len(members):
        raise ValueError(f"new_group: ranks {list(ranks)} hold a rank twice")
    for member in members:
        if not 0 <= member < world.size():
            raise ValueError(f"Invalid rank {member}, rank should be in the interval "
                             f"[0, {world.size() - 1}]")
    number = next(_state.numbers)  # taken in every process, members or not
    channel = world._channel.split(members)
    if channel is None:
        return GroupMember.NON_GROUP_MEMBER
    limit = world.timeout if timeout is None else seconds(timeout)
    made = ProcessGroup(channel, members, number, limit, world.name())
    _state.groups[number] = made
    return made


# ---- questions about groups ---------------------------------------------------------------

def get_rank(group=None) -> int:
    """This process's rank in `group` (the default group when None); -1 outside it."""
    found = resolve(group)
    return -1 if found is None else found.rank()


def get_world_size(group=None) -> int:
    """How many processes `group` has (the default group when None); -1 outside it."""
    found = resolve(group)
    return -1 if found is None else found.size()


def get_backend(group=None) -> str:
    """The backend of `group`: "mpi" or "local"."""
    found = resolve(group)
    if found is None:
        raise ValueError("Invalid process group specified")
    return found.name()


def get_process_group_ranks(group) -> list:
    """The world ranks of `group`'s members, in group-rank order."""
    found = resolve(group)
    if found is None:
        raise ValueError("Invalid process group specified")
    return list(found._ranks)


def get_group_rank(group, global_rank: int) -> int:
    """The rank in `group` of world rank `global_rank`."""
    found = resolve(group)
    if found is None or global_rank not in found._ranks:
        raise ValueError(f"Global rank {global_rank} is not part of group {group}")
    return found._ranks.index(global_rank)


def get_global_rank(group, group_rank: int) -> int:
    """The world rank of rank `group_rank` of `group`."""
    found = resolve(group)
    if found is None or not 0 <= group_rank < len(found._ranks):
        raise ValueError(f"Group rank {group_rank} is not part of group {group}")
    return found._ranks[group_rank]


def group_rank_of(found: ProcessGroup, global_rank: int | None, group_rank: int | None,
                  what: str, default: int | None = 0) -> int:
    """A collective's root as a rank in `found`, from torch's `src`/`dst` (a world rank) or
    `group_src`/`group_dst` (a rank in the group)."""
    if global_rank is not None and group_rank is not None:
        raise ValueError(f"Can not specify both {what} and group_{what}")
    if group_rank is not None:
        rank = group_rank
    elif global_rank is not None:
        if global_rank not in found._ranks:
            raise ValueError(f"Global rank {global_rank} is not part of group {found}")
        return found._ranks.index(global_rank)
    else:
        rank = default
    if rank is None or not 0 <= rank < found.size():
        raise ValueError(f"Invalid {what} rank {rank}: the group has {found.size()} ranks")
    return rank


def warn_not_in_group(what: str) -> None:
    world = default_group()
    warnings.warn(f"Running {what} on global rank {world.rank()} which does not belong to the "
                  "given group.", stacklevel=3)


__all__ = ["Backend", "GroupMember", "ProcessGroup", "ReduceOp", "default_pg_timeout",
           "destroy_process_group", "get_backend", "get_global_rank", "get_group_rank",
           "get_process_group_ranks", "get_rank", "get_world_size", "group",
           "init_process_group", "is_available", "is_initialized", "is_mpi_available",
           "new_group", "INSTALL_HINT"]
