"""The DistributedDataParallel checks of tests/test_distributed.py: DDP eagerly and compiled
against one process training on the combined batches, and against torch's DDP (gloo) on the
same data; no_sync, uneven last batches with DistributedSampler and set_epoch, unused
parameters, buffers, gradient_as_bucket_view and the state_dict keys; and SyncBatchNorm on
each rank's shard against BatchNorm on the combined batch.

Run in every rank by run_checks.py, as collectives_worker.py's (CHECKS lists them by name).
"""

from __future__ import annotations

import warnings

import numpy as np

STEPS = 20
CHECKS: list = []


def check(name: str):
    def register(function):
        CHECKS.append((name, function))
        return function
    return register


def data(step: int, batch: int = 16, features: int = 8, classes: int = 4):
    rng = np.random.default_rng(1000 + step)
    return (rng.standard_normal((batch, features)).astype(np.float32),
            rng.integers(0, classes, batch).astype(np.int64))


def shard(array: np.ndarray, rank: int, world: int) -> np.ndarray:
    size = len(array) // world
    return array[rank * size:(rank + 1) * size]


def mlp(rank: int, norm: bool = False, spare: bool = False):
    """A small MLP whose initial weights differ by rank (DDP must broadcast rank 0's)."""
    import autojit
    from autojit import nn

    autojit.manual_seed(7 + rank)
    layers = [nn.Linear(8, 32), nn.ReLU()]
    if norm:
        layers.append(nn.BatchNorm1d(32))
    layers += [nn.Linear(32, 32), nn.Tanh(), nn.Linear(32, 4)]
    model = nn.Sequential(*layers)
    if spare:
        model.spare = nn.Linear(3, 3)  # never used in forward
    return model


def torch_copy(model):
    """The torch module with `model`'s architecture and values."""
    import torch

    import autojit

    layers = []
    for layer in model:
        if isinstance(layer, autojit.nn.Linear):
            layers.append(torch.nn.Linear(layer.in_features, layer.out_features))
        elif isinstance(layer, autojit.nn.BatchNorm1d):
            layers.append(torch.nn.BatchNorm1d(layer.num_features))
        else:
            layers.append(getattr(torch.nn, type(layer).__name__)())
    copy = torch.nn.Sequential(*layers)
    if hasattr(model, "spare"):
        copy.spare = torch.nn.Linear(3, 3)
    copy.load_state_dict({key: torch.from_numpy(value.detach().numpy().copy())
                          for key, value in model.state_dict().items()})
    return copy


def values(module) -> dict:
    return {key: np.array(value.detach().numpy(), dtype=np.float64)
            for key, value in module.state_dict().items()}


def close(ours: dict, theirs: dict, what: str, tolerance: float = 2e-5) -> None:
    ours = {key.removeprefix("module."): value for key, value in ours.items()}
    theirs = {key.removeprefix("module."): value for key, value in theirs.items()}
    assert ours.keys() == theirs.keys(), (what, ours.keys(), theirs.keys())
    for key in ours:
        np.testing.assert_allclose(ours[key], theirs[key], rtol=tolerance, atol=tolerance,
                                   err_msg=f"{what}: {key}")


def train(model, steps, rank, world, compiled=False, sharded=True, framework=None):
    """SGD with momentum over `steps` batches, on this rank's shard or the whole batch."""
    import autojit
    import autojit.nn.functional as F

    framework = framework or autojit
    cross_entropy = F.cross_entropy if framework is autojit else \
        framework.nn.functional.cross_entropy
    optimizer = framework.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    def step(x, y):
        optimizer.zero_grad()
        loss = cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.detach()

    function = autojit.compile(step) if compiled else step
    for index in range(steps):
        x, y = data(index)
        if sharded:
            x, y = shard(x, rank, world), shard(y, rank, world)
        function(framework.tensor(x), framework.tensor(y))
    return function


@check("eager_matches_one_process")
def _eager(rank, world):
    from autojit.nn.parallel import DistributedDataParallel as DDP

    reference = mlp(0)
    train(reference, STEPS, rank, world, sharded=False)
    ddp = DDP(mlp(rank), bucket_cap_mb=0.002)
    assert len(ddp.reducer.buckets) > 1
    train(ddp, STEPS, rank, world)
    close(values(ddp), values(reference), "eager DDP against one process")


@check("compiled_matches_one_process")
def _compiled(rank, world):
    from autojit.nn.parallel import DistributedDataParallel as DDP

    reference = mlp(0)
    train(reference, STEPS, rank, world, sharded=False)
    ddp = DDP(mlp(rank), bucket_cap_mb=0.002)
    step = train(ddp, STEPS, rank, world, compiled=True)
    close(values(ddp), values(reference), "compiled DDP against one process")
    stats = step.stats()
    assert stats.eager_calls == 0 and stats.graph_breaks == 0, stats
    assert len(step.executables) == 1, step.executables
    plan = step.fusion_groups().splitlines()
    starts = [i for i, line in enumerate(plan) if "start collective" in line]
    finishes = [i for i, line in enumerate(plan) if "finish collective" in line]
    assert len(starts) == len(ddp.reducer.buckets) > 1, plan
    # The first bucket's all-reduce overlaps the rest of the backward: kernels and products
    # run between its start and its finish.
    between = plan[starts[0] + 1:finishes[0]]
    assert any("kernel" in line or "matmul" in line for line in between), plan


@check("compiled_module_forward")
def _compiled_forward(rank, world):
    """torch's `compile(DDP(model))`: the module's forward compiled, the backward eager."""
    import autojit
    from autojit.nn.parallel import DistributedDataParallel as DDP

    reference = mlp(0)
    train(reference, 6, rank, world, sharded=False)
    ddp = DDP(mlp(rank), bucket_cap_mb=0.002)
    compiled = autojit.compile(ddp)
    train(compiled, 6, rank, world)
    close(values(ddp), values(reference), "compiled DDP forward against one process")
    stats = compiled.stats()
    assert stats.eager_calls == 0 and stats.traces == 1, (stats, compiled.recompile_reasons)


@check("matches_torch_ddp")
def _torch(rank, world):
    import torch
    from torch.nn.parallel import DistributedDataParallel as TorchDDP

    from autojit.nn.parallel import DistributedDataParallel as DDP

    model = mlp(rank)
    theirs = TorchDDP(torch_copy(model), bucket_cap_mb=0.002)
    ours = DDP(model, bucket_cap_mb=0.002)
    assert list(ours.state_dict()) == list(theirs.state_dict())
    close(values(ours), values(theirs), "after construction")
    train(theirs, STEPS, rank, world, framework=torch)
    train(ours, STEPS, rank, world, compiled=True)
    close(values(ours), values(theirs), "compiled DDP against torch's DDP")


@check("buffers_like_torch")
def _buffers(rank, world):
    import torch
    from torch.nn.parallel import DistributedDataParallel as TorchDDP

    from autojit.nn.parallel import DistributedDataParallel as DDP

    for compiled in (False, True):
        model = mlp(rank, norm=True)
        theirs = TorchDDP(torch_copy(model))
        ours = DDP(model)
        train(theirs, 5, rank, world, framework=torch)
        train(ours, 5, rank, world, compiled=compiled)
        close(values(ours), values(theirs), f"BatchNorm under DDP, compiled={compiled}",
              tolerance=5e-5)


@check("no_sync")
def _no_sync(rank, world):
    import autojit
    import autojit.nn.functional as F
    from autojit.nn.parallel import DistributedDataParallel as DDP

    reference, ddp = mlp(0), DDP(mlp(rank))
    for module, sharded in ((reference, False), (ddp, True)):
        for index in range(3):
            x, y = data(index)
            if sharded:
                x, y = shard(x, rank, world), shard(y, rank, world)
            context = ddp.no_sync() if sharded and index < 2 else _nothing()
            with context:
                F.cross_entropy(module(autojit.tensor(x)), autojit.tensor(y)).backward()
    for ours, theirs in zip(ddp.module.parameters(), reference.parameters()):
        np.testing.assert_allclose(ours.grad.numpy(), theirs.grad.numpy(), rtol=1e-5,
                                   atol=1e-6)


class _nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc_info):
        return False


@check("sampler_uneven_last_batch_compiled")
def _sampler(rank, world):
    import autojit
    import autojit.nn.functional as F
    from autojit.nn.parallel import DistributedDataParallel as DDP
    from autojit.utils.data import DistributedSampler

    features = np.random.default_rng(5).standard_normal((37, 8)).astype(np.float32)
    labels = np.random.default_rng(6).integers(0, 4, 37)
    dataset = list(range(37))
    samplers = [DistributedSampler(dataset, num_replicas=world, rank=r, seed=3)
                for r in range(world)]
    mine = DistributedSampler(dataset, seed=3)  # num_replicas and rank from the group
    assert (mine.num_replicas, mine.rank) == (world, rank)
    orders = []
    reference, ddp = mlp(0), DDP(mlp(rank), bucket_cap_mb=0.002)
    optimizers = [autojit.optim.SGD(m.parameters(), lr=0.05) for m in (reference, ddp)]

    def stepper(model, optimizer):
        def step(x, y):
            optimizer.zero_grad()
            F.cross_entropy(model(x), y).backward()
            optimizer.step()
        return autojit.compile(step)

    ours, single = stepper(ddp, optimizers[1]), stepper(reference, optimizers[0])
    for epoch in range(2):
        for sampler in (*samplers, mine):
            sampler.set_epoch(epoch)
        indices = [list(sampler) for sampler in samplers]
        assert list(mine) == indices[rank]
        assert sorted(set(sum(indices, []))) == dataset  # every sample, padded to 38
        orders.append(indices[rank])
        for start in range(0, len(indices[0]), 8):  # batches of 8, 8 and a last one of 3
            parts = [part[start:start + 8] for part in indices]
            combined = sum(parts, [])
            single(autojit.tensor(features[combined]), autojit.tensor(labels[combined]))
            ours(autojit.tensor(features[parts[rank]]), autojit.tensor(labels[parts[rank]]))
    assert orders[0] != orders[1], "set_epoch did not reshuffle"
    close(values(ddp), values(reference), "uneven last batches")
    assert ours.stats().eager_calls == 0, ours.stats()


def branchy(framework, seed: int):
    """A module of `framework` (autojit or torch) whose middle layer is skipped on request,
    and whose `spare` layer is never used."""
    nn = framework.nn

    class Branchy(nn.Module):
        def __init__(self):
            super().__init__()
            self.first, self.middle, self.last = nn.Linear(8, 16), nn.Linear(16, 16), \
                nn.Linear(16, 4)
            self.spare = nn.Linear(3, 3)

        def forward(self, x, skip=False):
            h = self.first(x).relu()
            if not skip:
                h = self.middle(h).tanh()
            return self.last(h)

    framework.manual_seed(seed)
    return Branchy()


@check("find_unused_parameters_like_torch")
def _unused(rank, world):
    import torch
    from torch.nn.parallel import DistributedDataParallel as TorchDDP

    import autojit
    from autojit.nn.parallel import DistributedDataParallel as DDP

    model = branchy(autojit, rank)
    copy = branchy(torch, 0)
    copy.load_state_dict({key: torch.from_numpy(value.detach().numpy().copy())
                          for key, value in model.state_dict().items()})
    theirs = TorchDDP(copy, find_unused_parameters=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ours = DDP(model, find_unused_parameters=True)
    for step in range(2):
        x, y = data(step)
        x, y = shard(x, rank, world), shard(y, rank, world)
        for framework, module in ((torch, theirs), (autojit, ours)):
            # Rank 1 skips `middle`: unused there, used on rank 0; `spare` is used nowhere.
            output = module(framework.tensor(x), skip=rank == 1)
            framework.nn.functional.cross_entropy(output, framework.tensor(y)).backward()
        for (name, a), b in zip(ours.module.named_parameters(), theirs.module.parameters()):
            assert (a.grad is None) == (b.grad is None), (name, a.grad, b.grad)
            if a.grad is not None:
                np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-5,
                                           atol=1e-6, err_msg=name)


@check("unused_parameter_error")
def _unused_error(rank, world):
    import autojit
    from autojit.nn.parallel import DistributedDataParallel as DDP

    ddp = DDP(branchy(autojit, rank))
    x = autojit.tensor(shard(data(0)[0], rank, world))
    ddp(x).sum().backward()  # `spare` is unused: its bucket never completes
    try:
        ddp(x)
    except RuntimeError as error:
        assert "Expected to have finished reduction in the prior iteration" in str(error)
    else:
        raise AssertionError("a forward after an unfinished reduction did not raise")


@check("gradient_as_bucket_view")
def _bucket_view(rank, world):
    from autojit.nn.parallel import DistributedDataParallel as DDP

    plain, viewed = DDP(mlp(rank)), DDP(mlp(rank), gradient_as_bucket_view=True)
    train(plain, 5, rank, world)
    train(viewed, 5, rank, world)
    close(values(viewed), values(plain), "gradient_as_bucket_view", tolerance=1e-7)


@check("sync_batch_norm")
def _sync_batch_norm(rank, world):
    """SyncBatchNorm on each rank's shard is BatchNorm on the combined batch: outputs, the
    input's gradient, the parameters' gradients summed over the ranks and the running
    statistics (momentum=None), eagerly and compiled."""
    import autojit
    import autojit.distributed as dist
    from autojit import nn

    rng = np.random.default_rng(7)
    batches = [rng.standard_normal((8, 3, 4)).astype(np.float32) for _ in range(3)]
    scale = rng.standard_normal((8, 3, 4)).astype(np.float32)
    for compiled in (False, True):
        whole, synced = nn.BatchNorm1d(3, momentum=None), nn.SyncBatchNorm(3, momentum=None)
        for norm in (whole, synced):
            norm.weight.data = autojit.tensor([1.0, 2.0, 0.5])
            norm.bias.data = autojit.tensor([0.0, -1.0, 1.0])

        def step(norm, inputs, weights):
            out = norm(inputs)
            ((out * weights) ** 2).sum().backward()
            return out.detach()

        synced_step = autojit.compile(step) if compiled else step
        for batch in batches:
            inputs = autojit.tensor(batch, requires_grad=True)
            expected = step(whole, inputs, autojit.tensor(scale))
            part = autojit.tensor(shard(batch, rank, world), requires_grad=True)
            got = synced_step(synced, part, autojit.tensor(shard(scale, rank, world)))
            what = f"SyncBatchNorm, compiled={compiled}"
            close({"out": got.numpy(), "grad": part.grad.numpy()},
                  {"out": shard(expected.numpy(), rank, world),
                   "grad": shard(inputs.grad.numpy(), rank, world)}, what, tolerance=1e-4)
            summed = {}
            for name, parameter in synced.named_parameters():
                total = parameter.grad.clone()
                dist.all_reduce(total)
                summed[name] = total.numpy()
                parameter.grad = None
            close(summed, {name: p.grad.numpy() for name, p in whole.named_parameters()},
                  what, tolerance=1e-4)
            whole.zero_grad()
        close(values(synced), values(whole), f"SyncBatchNorm's buffers, compiled={compiled}",
              tolerance=1e-5)
