"""The DTensor checks of tests/test_distributed.py: autojit's DTensor and DeviceMesh on two
processes against torch's (gloo) in the same processes: each rank's local part after
distribute_tensor and after each redistribute (shards gathered with uneven sizes, split again,
partial values reduced), full_tensor, compute_local_shape_and_global_offset, elementwise ops
on shards, gradients placed as their parameter, and the functional collectives.

Each check is `function(rank, world)`, run in every rank by run_checks.py.
"""

from __future__ import annotations

import numpy as np

CHECKS: list = []  # (name, function)


def check(name: str):
    def register(function):
        CHECKS.append((name, function))
        return function
    return register


def _libraries():
    import torch
    import torch.distributed.tensor as tdt
    from torch.distributed.tensor._utils import compute_local_shape_and_global_offset as tshape

    import autojit
    import autojit.distributed.tensor as adt
    from autojit.distributed.tensor._utils import compute_local_shape_and_global_offset as ashape

    return (autojit, adt, ashape), (torch, tdt, tshape)


def _same(ours, theirs, what: str) -> None:
    ours = ours.detach().numpy() if hasattr(ours, "detach") else np.asarray(ours)
    theirs = theirs.detach().numpy() if hasattr(theirs, "detach") else np.asarray(theirs)
    if ours.shape != theirs.shape or not np.allclose(ours, theirs, rtol=1e-6, atol=1e-6):
        raise AssertionError(f"{what}: autojit {ours.tolist()} but torch {theirs.tolist()}")


@check("dtensor_placements_and_redistribution")
def _placements(rank: int, world: int) -> None:
    (aj, adt, ashape), (torch, tdt, tshape) = _libraries()
    amesh, tmesh = adt.init_device_mesh("cpu", (world,)), tdt.init_device_mesh("cpu", (world,))
    data = np.arange(5 * 3, dtype=np.float32).reshape(5, 3) + 100 * rank  # rank 0's is sent
    routes = [
        ([adt.Shard(0)], [tdt.Shard(0)], [adt.Replicate()], [tdt.Replicate()]),
        ([adt.Shard(1)], [tdt.Shard(1)], [adt.Shard(0)], [tdt.Shard(0)]),
        ([adt.Replicate()], [tdt.Replicate()], [adt.Shard(1)], [tdt.Shard(1)]),
        ([adt.Shard(0)], [tdt.Shard(0)], [adt.Shard(0)], [tdt.Shard(0)]),
    ]
    for ours_from, theirs_from, ours_to, theirs_to in routes:
        ours = adt.distribute_tensor(aj.tensor(data), amesh, ours_from)
        theirs = tdt.distribute_tensor(torch.from_numpy(data.copy()), tmesh, theirs_from)
        _same(ours.to_local(), theirs.to_local(), f"distribute_tensor {ours_from}")
        if tuple(ours.shape) != tuple(theirs.shape):
            raise AssertionError(f"global shape {ours.shape} but torch {theirs.shape}")
        moved, moved_theirs = ours.redistribute(amesh, ours_to), \
            theirs.redistribute(tmesh, theirs_to)
        _same(moved.to_local(), moved_theirs.to_local(), f"{ours_from} to {ours_to}")
        _same(moved.full_tensor(), moved_theirs.full_tensor(), f"full_tensor of {ours_to}")
        _same(ashape((5, 3), amesh, ours_to), tshape((5, 3), tmesh, theirs_to),
              f"local shape of {ours_to}")
        _same(ashape((5, 3), amesh, ours_to)[1], tshape((5, 3), tmesh, theirs_to)[1],
              f"offset of {ours_to}")
    local = np.full((2,), rank + 1.0, np.float32)
    ours = adt.DTensor.from_local(aj.tensor(local), amesh, [adt.Partial()])
    theirs = tdt.DTensor.from_local(torch.from_numpy(local.copy()), tmesh, [tdt.Partial()])
    _same(ours.full_tensor(), theirs.full_tensor(), "Partial made whole")
    ours = adt.DTensor.from_local(aj.tensor(local), amesh, [adt.Shard(0)])
    theirs = tdt.DTensor.from_local(torch.from_numpy(local.copy()), tmesh, [tdt.Shard(0)])
    if tuple(ours.shape) != tuple(theirs.shape):
        raise AssertionError(f"from_local's global shape {ours.shape} but torch {theirs.shape}")


@check("dtensor_training_on_shards")
def _training(rank: int, world: int) -> None:
    (aj, adt, _), (torch, tdt, _) = _libraries()
    amesh, tmesh = adt.init_device_mesh("cpu", (world,)), tdt.init_device_mesh("cpu", (world,))
    data = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
    ours = adt.distribute_tensor(aj.tensor(data, requires_grad=True), amesh, [adt.Shard(0)])
    theirs = torch.nn.Parameter(tdt.distribute_tensor(torch.from_numpy(data.copy()), tmesh,
                                                      [tdt.Shard(0)]))
    for parameter, lib in ((ours, aj), (theirs, torch)):
        for optimizer in (lib.optim.SGD([parameter], lr=0.5, momentum=0.9),
                          lib.optim.Adam([parameter], lr=0.1),
                          lib.optim.AdamW([parameter], lr=0.1, weight_decay=0.1)):
            for _ in range(2):
                optimizer.zero_grad()
                ((parameter * parameter).to_local() * 3).sum().backward()
                optimizer.step()
    _same(ours.to_local(), theirs.to_local(), "SGD, Adam and AdamW on shards")
    if not isinstance(ours.grad, adt.DTensor) or ours.grad.placements != (adt.Shard(0),):
        raise AssertionError(f"the gradient is {type(ours.grad).__name__}, not a Shard(0) DTensor")


@check("functional_collectives")
def _functional(rank: int, world: int) -> None:
    import torch.distributed as tdist
    import torch.distributed._functional_collectives as tfc

    import autojit
    import autojit.distributed as dist
    import autojit.distributed._functional_collectives as afc

    data = np.arange(4, dtype=np.float32) + rank
    group = list(range(world))
    pairs = [
        (afc.all_reduce(autojit.tensor(data), "sum", group),
         tfc.all_reduce(__import__("torch").from_numpy(data.copy()), "sum", tdist.group.WORLD)),
        (afc.all_gather_tensor(autojit.tensor(data), 0, group),
         tfc.all_gather_tensor(__import__("torch").from_numpy(data.copy()), 0,
                               tdist.group.WORLD)),
        (afc.reduce_scatter_tensor(autojit.tensor(data), "sum", 0, group),
         tfc.reduce_scatter_tensor(__import__("torch").from_numpy(data.copy()), "sum", 0,
                                   tdist.group.WORLD)),
        (afc.all_to_all_single(autojit.tensor(data), None, None, group),
         tfc.all_to_all_single(__import__("torch").from_numpy(data.copy()), None, None,
                               tdist.group.WORLD)),
    ]
    for number, (ours, theirs) in enumerate(pairs):
        _same(afc.wait_tensor(ours), tfc.wait_tensor(theirs), f"functional collective {number}")
    x = autojit.tensor(data, requires_grad=True)
    afc.all_to_all_single_autograd(x * 2, None, None, group).sum().backward()
    _same(x.grad, np.full(4, 2.0), "all_to_all_single_autograd's gradient")
    dist.barrier()
