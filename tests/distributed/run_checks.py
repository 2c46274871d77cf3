"""One rank of tests/test_distributed.py's main job: the checks of collective_checks.py and
ddp_checks.py, in order, each rank running each check together with the other.

Started by `python -m autojit.distributed.run --nproc-per-node 2` (the launcher under test,
which sets torchrun's variables: checked here); beside autojit's MPI group, torch's gloo group
runs on the same processes for the differential checks (MASTER_ADDR and MASTER_PORT are set by
the test). Writes `rank<r>.json` into $AUTOJIT_TEST_OUT: [check name, passed, detail] per check.
"""

from __future__ import annotations

import datetime
import json
import os
import sys
import traceback
import warnings

import collective_checks
import ddp_checks
import dtensor_checks


def main() -> None:
    import torch.distributed as tdist

    import autojit
    import autojit.distributed as dist

    warnings.filterwarnings("ignore", module="torch")
    autojit.set_num_threads(1)
    dist.init_process_group(timeout=datetime.timedelta(seconds=120))
    rank, world = dist.get_rank(), dist.get_world_size()
    tdist.init_process_group("gloo", rank=rank, world_size=world)
    results = []
    launched = [os.environ.get("RANK"), os.environ.get("WORLD_SIZE")] == [str(rank), str(world)]
    results.append(["launcher_variables", launched, "" if launched else
                    f"RANK={os.environ.get('RANK')} WORLD_SIZE={os.environ.get('WORLD_SIZE')}"])
    for name, function in collective_checks.CHECKS + ddp_checks.CHECKS + dtensor_checks.CHECKS:
        try:
            function(rank, world)
            results.append([name, True, ""])
        except Exception:  # noqa: BLE001 - reported per check
            results.append([name, False, traceback.format_exc()[-3000:]])
        dist.barrier()  # a failed check must not leave the ranks in different collectives
    with open(os.path.join(os.environ["AUTOJIT_TEST_OUT"], f"rank{rank}.json"), "w") as file:
        json.dump(results, file)
    tdist.destroy_process_group()
    dist.destroy_process_group()


if __name__ == "__main__":
    sys.exit(main())
