"""The collective checks of tests/test_distributed.py: every collective of autojit.distributed,
for each ReduceOp and dtype, eagerly and (for a float and an integer dtype) compiled, against
torch.distributed's gloo backend on the same data in the same process.

Each check is `function(rank, world)`, run in every rank by run_checks.py; CHECKS lists them by
name, so the test module can parametrize over them without running anything.
"""

from __future__ import annotations

import numpy as np

DTYPES = ("float32", "float64", "float16", "bfloat16", "int32", "int64", "int8", "uint8",
          "bool")
OPS = ("SUM", "AVG", "MAX", "MIN", "PRODUCT")
COMPILED_DTYPES = ("float32", "int64")

CHECKS: list = []  # (name, function)


def check(name: str):
    def register(function):
        CHECKS.append((name, function))
        return function
    return register


def rank_data(rank: int, dtype: str, shape=(3, 4)) -> np.ndarray:
    """Values that differ between ranks, so a reduction is seen (small, so products and int8
    sums stay in range; bools mixed)."""
    size = int(np.prod(shape))
    base = (np.arange(size) * 7 + rank * 3) % 5
    if dtype == "bool":
        return (base % 2 == 0).reshape(shape)
    values = base.astype(np.float64) - (2 if dtype[0] != "u" else 0)
    if dtype.startswith("float") or dtype == "bfloat16":
        values = values * 0.75 + rank * 0.125
    return values.astype("float32" if dtype == "bfloat16" else dtype).reshape(shape)


def pair(data: np.ndarray, dtype: str):
    """The same values as an autojit tensor and a torch tensor of `dtype`."""
    import torch

    import autojit

    ours = autojit.tensor(data)
    theirs = torch.from_numpy(data.copy())
    if dtype == "bfloat16":
        ours, theirs = ours.to(autojit.bfloat16), theirs.to(torch.bfloat16)
    return ours, theirs


def as_numpy(tensor) -> np.ndarray:
    """A tensor's values as float64 or its own dtype (bfloat16 through float32)."""
    if hasattr(tensor, "detach") and type(tensor).__module__.startswith("torch"):
        if tensor.dtype.__repr__() == "torch.bfloat16":
            tensor = tensor.float()
        return tensor.detach().numpy()
    import autojit

    if tensor.dtype is autojit.bfloat16:
        tensor = tensor.float()
    return tensor.detach().numpy()


def same(ours, theirs, what: str) -> None:
    a, b = as_numpy(ours), as_numpy(theirs)
    if a.shape != b.shape or not np.array_equal(a.astype(np.float64), b.astype(np.float64)):
        raise AssertionError(f"{what}: autojit {a.tolist()} != torch {b.tolist()}")


def outcome(call):
    """(result, None) or (None, the exception)."""
    try:
        return call(), None
    except Exception as error:  # noqa: BLE001 - compared with torch's
        return None, error


def same_outcome(ours_call, theirs_call, what: str):
    ours, our_error = outcome(ours_call)
    theirs, their_error = outcome(theirs_call)
    if (our_error is None) != (their_error is None):
        raise AssertionError(f"{what}: autojit raised {our_error!r}, torch {their_error!r}")
    if our_error is not None:
        if type(our_error).__name__ != type(their_error).__name__ or \
                str(our_error) != str(their_error):
            raise AssertionError(f"{what}: autojit raised {our_error!r}, torch "
                                 f"{their_error!r}")
        return None
    return ours, theirs


# ---- all_reduce, for every ReduceOp and dtype ---------------------------------------------

def _all_reduce_check(dtype: str, op: str):
    def run(rank, world):
        import torch.distributed as tdist

        import autojit.distributed as dist

        ours, theirs = pair(rank_data(rank, dtype), dtype)
        done = same_outcome(lambda: dist.all_reduce(ours, getattr(dist.ReduceOp, op)),
                            lambda: tdist.all_reduce(theirs, getattr(tdist.ReduceOp, op)),
                            f"all_reduce {dtype} {op}")
        if done is not None:
            same(ours, theirs, f"all_reduce {dtype} {op}")
    return run


for _dtype in DTYPES:
    for _op in OPS:
        check(f"all_reduce-{_dtype}-{_op}")(_all_reduce_check(_dtype, _op))


def _compiled_all_reduce_check(dtype: str, op: str):
    def run(rank, world):
        import torch.distributed as tdist

        import autojit
        import autojit.distributed as dist

        @autojit.compile(fullgraph=True)
        def step(t, scale):
            t.mul_(scale)
            work = dist.all_reduce(t, getattr(dist.ReduceOp, op), async_op=True)
            work.wait()
            return t + 1

        for call in range(3):  # traced once, then the executable's plan
            ours, theirs = pair(rank_data(rank + call, dtype), dtype)
            result = step(ours, 2)
            theirs.mul_(2)
            tdist.all_reduce(theirs, getattr(tdist.ReduceOp, op))
            same(ours, theirs, f"compiled all_reduce {dtype} {op}, call {call}")
            same(result, theirs + 1, f"compiled all_reduce result {dtype} {op}")
        if step.stats().eager_calls:
            raise AssertionError(f"the compiled step ran eagerly: {step.stats()}")
    return run


for _dtype in COMPILED_DTYPES:
    for _op in OPS:
        if _op != "AVG" or _dtype.startswith("float"):
            check(f"compiled_all_reduce-{_dtype}-{_op}")(_compiled_all_reduce_check(_dtype, _op))


# ---- the other collectives ------------------------------------------------------------------

@check("broadcast")
def _broadcast(rank, world):
    import torch.distributed as tdist

    import autojit.distributed as dist

    for dtype in DTYPES:
        ours, theirs = pair(rank_data(rank, dtype), dtype)
        dist.broadcast(ours, src=1)
        tdist.broadcast(theirs, src=1)
        same(ours, theirs, f"broadcast {dtype}")
    work = dist.broadcast(ours, src=0, async_op=True)
    work.wait()
    assert work.is_completed() and work.is_success()


@check("reduce")
def _reduce(rank, world):
    import torch.distributed as tdist

    import autojit.distributed as dist

    for dtype in ("float32", "int64"):
        for op in ("SUM", "MAX", "MIN", "PRODUCT"):
            ours, theirs = pair(rank_data(rank, dtype), dtype)
            dist.reduce(ours, dst=1, op=getattr(dist.ReduceOp, op))
            tdist.reduce(theirs, dst=1, op=getattr(tdist.ReduceOp, op))
            if rank == 1:
                same(ours, theirs, f"reduce {dtype} {op}")
            else:
                same(ours, pair(rank_data(rank, dtype), dtype)[0], "reduce leaves the others")


@check("all_gather")
def _all_gather(rank, world):
    import torch
    import torch.distributed as tdist

    import autojit
    import autojit.distributed as dist

    for dtype in DTYPES:
        ours, theirs = pair(rank_data(rank, dtype), dtype)
        ours_list = [autojit.zeros_like(ours) for _ in range(world)]
        theirs_list = [torch.zeros_like(theirs) for _ in range(world)]
        dist.all_gather(ours_list, ours)
        tdist.all_gather(theirs_list, theirs)
        for a, b in zip(ours_list, theirs_list):
            same(a, b, f"all_gather {dtype}")
        out_theirs = torch.zeros((world * 3, 4), dtype=theirs.dtype)
        tdist.all_gather_into_tensor(out_theirs, theirs)
        # Concatenated along dim 0, and stacked (NCCL's other layout; gloo has only the first).
        for shape in ((world * 3, 4), (world, 3, 4)):
            out_ours = autojit.zeros(shape, dtype=ours.dtype)
            dist.all_gather_into_tensor(out_ours, ours)
            same(out_ours.reshape(world * 3, 4), out_theirs, f"all_gather_into_tensor {dtype}")


@check("reduce_scatter")
def _reduce_scatter(rank, world):
    import torch
    import torch.distributed as tdist

    import autojit
    import autojit.distributed as dist

    for dtype in ("float32", "float64", "int32", "int64"):
        for op in OPS:
            if op == "AVG" and not dtype.startswith("float"):
                continue
            data = rank_data(rank, dtype, (world * 3, 4))
            ours, theirs = pair(data, dtype)
            out_ours, out_theirs = autojit.zeros(3, 4, dtype=ours.dtype), \
                torch.zeros(3, 4, dtype=theirs.dtype)
            dist.reduce_scatter_tensor(out_ours, ours, getattr(dist.ReduceOp, op))
            tdist.reduce_scatter_tensor(out_theirs, theirs, getattr(tdist.ReduceOp, op))
            same(out_ours, out_theirs, f"reduce_scatter_tensor {dtype} {op}")
    parts = [autojit.tensor(rank_data(rank + index, "float32")) for index in range(world)]
    out = autojit.zeros(3, 4)
    dist.reduce_scatter(out, parts)
    expected = sum(rank_data(r + rank, "float32") for r in range(world))
    np.testing.assert_array_equal(out.numpy(), expected)


@check("gather_scatter")
def _gather_scatter(rank, world):
    import torch
    import torch.distributed as tdist

    import autojit
    import autojit.distributed as dist

    ours, theirs = pair(rank_data(rank, "float32"), "float32")
    gathered = [autojit.zeros(3, 4) for _ in range(world)] if rank == 1 else None
    theirs_gathered = [torch.zeros(3, 4) for _ in range(world)] if rank == 1 else None
    dist.gather(ours, gathered, dst=1)
    tdist.gather(theirs, theirs_gathered, dst=1)
    if rank == 1:
        for a, b in zip(gathered, theirs_gathered):
            same(a, b, "gather")
    parts = [autojit.tensor(rank_data(r + 5, "int64")) for r in range(world)] if rank == 0 \
        else None
    theirs_parts = [torch.from_numpy(rank_data(r + 5, "int64")) for r in range(world)] \
        if rank == 0 else None
    out, theirs_out = autojit.zeros(3, 4, dtype=autojit.int64), torch.zeros(3, 4,
                                                                              dtype=torch.int64)
    dist.scatter(out, parts, src=0)
    tdist.scatter(theirs_out, theirs_parts, src=0)
    same(out, theirs_out, "scatter")


@check("point_to_point")
def _point_to_point(rank, world):
    import autojit
    import autojit.distributed as dist

    if rank == 0:
        dist.send(autojit.arange(6.0), dst=1, tag=3)
        work = dist.isend(autojit.ones(2, dtype=autojit.int32) * 7, dst=1)
        work.wait()
        back = autojit.zeros(2)
        assert dist.recv(back) == 1  # from any source
        np.testing.assert_array_equal(back.numpy(), [5.0, 6.0])
    else:
        got = autojit.zeros(6)
        assert dist.recv(got, src=0, tag=3) == 0
        np.testing.assert_array_equal(got.numpy(), np.arange(6.0))
        ints = autojit.zeros(2, dtype=autojit.int32)
        work = dist.irecv(ints, src=0)
        work.wait()
        assert work.source_rank() == 0
        np.testing.assert_array_equal(ints.numpy(), [7, 7])
        dist.send(autojit.tensor([5.0, 6.0]), dst=0)


@check("objects_barrier_groups")
def _objects(rank, world):
    import autojit
    import autojit.distributed as dist

    objects = [{"rank": rank}, None]
    dist.broadcast_object_list(objects, src=1)
    assert objects == [{"rank": 1}, None], objects
    everyone = [None] * world
    dist.all_gather_object(everyone, ("hello", rank))
    assert everyone == [("hello", r) for r in range(world)]
    dist.barrier()
    dist.barrier(async_op=True).wait()
    alone = dist.new_group([1])
    both = dist.new_group()
    if rank == 1:
        assert dist.get_rank(alone) == 0 and dist.get_world_size(alone) == 1
    else:
        assert alone is dist.GroupMember.NON_GROUP_MEMBER and dist.get_rank(alone) == -1
    t = autojit.tensor([float(rank + 1)])
    dist.all_reduce(t, group=both)
    assert t.item() == 3.0
    assert dist.get_process_group_ranks(both) == [0, 1]
    dist.destroy_process_group(both)


@check("all_to_all_single")
def _all_to_all(rank, world):
    import torch
    import torch.distributed as tdist

    ours, theirs = pair(rank_data(rank, "float64", (world * 2, 3)), "float64")
    import autojit
    import autojit.distributed as dist

    out, theirs_out = autojit.zeros(world * 2, 3, dtype=autojit.float64), \
        torch.zeros(world * 2, 3, dtype=torch.float64)
    dist.all_to_all_single(out, ours)
    tdist.all_to_all_single(theirs_out, theirs)
    same(out, theirs_out, "all_to_all_single")


@check("differentiable_functional")
def _functional(rank, world):
    import torch
    import torch.distributed.nn.functional as tfunctional

    import autojit
    from autojit.distributed.nn import functional

    data = rank_data(rank, "float64")
    for name in ("all_reduce", "all_gather", "broadcast"):
        x = autojit.tensor(data, requires_grad=True)
        tx = torch.tensor(data, requires_grad=True)
        if name == "all_reduce":
            y, ty = functional.all_reduce(x * x), tfunctional.all_reduce(tx * tx)
        elif name == "broadcast":
            y, ty = functional.broadcast(x * x, src=1), tfunctional.broadcast(tx * tx, src=1)
        else:
            y = autojit.stack(functional.all_gather(x * x))
            ty = torch.stack(tfunctional.all_gather(tx * tx))
        weights = np.arange(y.numel(), dtype=np.float64).reshape(tuple(y.shape)) + rank
        (y * autojit.tensor(weights)).sum().backward()
        (ty * torch.tensor(weights)).sum().backward()
        np.testing.assert_allclose(y.detach().numpy(), ty.detach().numpy(), rtol=1e-12)
        np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-12,
                                   err_msg=f"gradient of {name}")
