"""One rank of tests/test_distributed.py's failure runs: a rank that fails must not leave the
others waiting for ever.

    mpiexec -n 2 python failure_worker.py raise     # rank 1 raises; rank 0 is in an all_reduce
    mpiexec -n 2 python failure_worker.py timeout   # rank 1 stops calling collectives

`raise`: rank 1's uncaught exception aborts the MPI job at once. `timeout`: rank 1 sleeps for a
minute, rank 0's all_reduce gives up after the group's 2 s timeout with DistBackendError,
which, uncaught, aborts the job. The test checks the exit status, the messages and that the
job ended long before the sleep would have.
"""

from __future__ import annotations

import sys
import time
from datetime import timedelta

import autojit
import autojit.distributed as dist


def main(mode: str) -> None:
    dist.init_process_group(timeout=timedelta(seconds=2))
    rank = dist.get_rank()
    tensor = autojit.ones(4)
    dist.all_reduce(tensor)  # both ranks take part once
    if rank == 1:
        if mode == "raise":
            raise ValueError("rank 1 failed on purpose")
        time.sleep(60)
    else:
        dist.all_reduce(tensor)  # rank 1 never joins this one
    print(f"rank {rank} finished", flush=True)


if __name__ == "__main__":
    main(sys.argv[1])
