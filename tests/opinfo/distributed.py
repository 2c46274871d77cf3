"""Op table rows for the `collective` primitive (ops/collective.py), through the differentiable
collectives of autojit.distributed.nn.functional, in a process group of this one process.

With one process every collective is the identity (an all_gather adds nothing, a
reduce_scatter splits nothing), which is what the reference says; the rows still run the
primitive's impl, its VJP and JVP (the adjoint collectives), its batching rule and, compiled,
its background steps. tests/test_distributed.py runs the same collectives across processes.
"""

from __future__ import annotations

from autojit.distributed import ReduceOp
from autojit.distributed import nn as dist_nn
from autojit.distributed.channel import LocalChannel
from autojit.distributed.process_group import ProcessGroup, _state

from . import ALL_NUMERIC, OpInfo, Sample, uniform

functional = dist_nn.functional

# A group of its own, not the default one: the table does not initialize (or depend on) the
# process's default group, which other tests make and destroy.
_GROUP = ProcessGroup(LocalChannel(), [0], -1, 60.0, "local")


def _group() -> ProcessGroup:
    _state.groups[_GROUP.number] = _GROUP  # again, should a test have destroyed every group
    return _GROUP


def _all_reduce(x, op=ReduceOp.SUM):
    return functional.all_reduce(x, op, group=_group())


def _broadcast(x):
    return functional.broadcast(x, 0, group=_group())


def _all_gather(x):
    return functional.all_gather(x, group=_group())


def _all_gather_tensor(x, dim=0):
    return functional.all_gather_tensor(x, dim, group=_group())


def _reduce_scatter(x, op=ReduceOp.SUM, dim=0):
    return functional.reduce_scatter_tensor(x, op, dim, group=_group())


def _same(x, *args, **kwargs):
    return x


def _reduce_samples(rng, dtype):
    ops = [ReduceOp.SUM, ReduceOp.MAX, ReduceOp.MIN, ReduceOp.PRODUCT]
    if dtype.kind == "f":
        ops.append(ReduceOp.AVG)
    return [Sample((uniform(rng, (3, 4), dtype),), {"op": op}) for op in ops] + \
        [Sample((uniform(rng, (), dtype),))]


def _gather_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype),)), Sample((uniform(rng, (2, 3), dtype), 1))]


def _scatter_samples(rng, dtype):
    return [Sample((uniform(rng, (3, 4), dtype),)),
            Sample((uniform(rng, (2, 3), dtype), ReduceOp.SUM, 1))]


ROWS = [
    OpInfo("distributed.nn.functional.all_reduce", _all_reduce, _same, _reduce_samples,
           primitives=("collective",), dtypes=ALL_NUMERIC, cuda=False),
    OpInfo("distributed.nn.functional.broadcast", _broadcast, _same,
           lambda rng, dtype: [Sample((uniform(rng, (3, 4), dtype),))],
           primitives=("collective",), dtypes=ALL_NUMERIC, cuda=False),
    OpInfo("distributed.nn.functional.all_gather", _all_gather, lambda x: (x,),
           lambda rng, dtype: [Sample((uniform(rng, (2, 3), dtype),))],
           primitives=("collective",), dtypes=ALL_NUMERIC, cuda=False),
    OpInfo("distributed.nn.functional.all_gather_tensor", _all_gather_tensor, _same,
           _gather_samples, primitives=("collective",), dtypes=ALL_NUMERIC, cuda=False),
    OpInfo("distributed.nn.functional.reduce_scatter_tensor", _reduce_scatter, _same,
           _scatter_samples, primitives=("collective",), dtypes=ALL_NUMERIC, cuda=False),
]

