"""Handwritten digits with DistributedDataParallel: the digits MLP trained by several processes.

    python -m autojit.distributed.run --nproc-per-node 2 examples/ddp_digits.py
    mpiexec -n 2 python examples/ddp_digits.py          # the same, with MPI's launcher
    python examples/ddp_digits.py                       # one process (a world of one)
    python examples/ddp_digits.py --eager               # the step run eagerly (--compile: the
                                                        # default, compiled)

Each process loads scikit-learn's 8x8 digits, wraps the MLP in DistributedDataParallel (which
gives every process rank 0's initial weights) and reads its own share of each epoch through a
DistributedSampler; the training step (forward, backward, Adam) is compiled, and the gradient
all-reduce is part of its graph, overlapped with the backward. The global batch is
--batch-size, split evenly between the processes, so the run trains the model one process
would train on the same batches. Rank 0 prints the loss and test accuracy of each epoch; every
process checks at the end that its parameters equal rank 0's. Needs the extra
autojit[distributed] for more than one process (pip install 'autojit[distributed]'), and
scikit-learn (autojit[examples]).

The exit status is 1 when the test accuracy ends below --min-accuracy (0.95; 0.85 with
--quick).
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
from digits_mlp import load_digits
from example_support import add_mode_arguments, limit_blas_threads

import autojit
import autojit.distributed as dist
import autojit.nn.functional as F
from autojit import nn
from autojit.nn.parallel import DistributedDataParallel
from autojit.utils.data import DataLoader, DistributedSampler, TensorDataset


def parse_arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--epochs", type=int, default=12, help="passes over the data (12)")
    parser.add_argument("--batch-size", type=int, default=64,
                        help="global batch: the samples of one step over all processes (64)")
    parser.add_argument("--lr", type=float, default=2e-3, help="Adam's learning rate (2e-3)")
    parser.add_argument("--seed", type=int, default=0, help="split, initialization, shuffle")
    parser.add_argument("--quick", action="store_true", help="3 epochs, a smoke test")
    add_mode_arguments(parser, compiled_by_default=True)
    parser.add_argument("--min-accuracy", type=float, help="the bar the exit status checks")
    args = parser.parse_args(argv)
    if args.quick:
        args.epochs = 3
    if args.min_accuracy is None:
        args.min_accuracy = 0.85 if args.quick else 0.95
    return args


def main(argv=None) -> int:
    args = parse_arguments(argv)
    limit_blas_threads()
    dist.init_process_group()
    rank, world = dist.get_rank(), dist.get_world_size()
    if args.batch_size % world:
        raise SystemExit(f"--batch-size {args.batch_size} must divide by the {world} processes")
    autojit.set_num_threads(1 if world > 1 else autojit.get_num_threads())
    train_x, train_y, test_x, test_y = load_digits(args.seed)

    autojit.manual_seed(args.seed + rank)  # different on purpose: DDP broadcasts rank 0's
    model = DistributedDataParallel(nn.Sequential(
        nn.Linear(64, 128), nn.ReLU(), nn.Linear(128, 128), nn.ReLU(), nn.Linear(128, 10)))
    optimizer = autojit.optim.Adam(model.parameters(), lr=args.lr)
    sampler = DistributedSampler(TensorDataset(train_x, train_y), seed=args.seed)
    loader = DataLoader(TensorDataset(train_x, train_y), batch_size=args.batch_size // world,
                        sampler=sampler)

    def step(x, y):
        optimizer.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.detach()

    train_step = step if args.eager else autojit.compile(step)
    for epoch in range(args.epochs):
        sampler.set_epoch(epoch)  # a new shuffle each epoch, the same in every process
        losses = [train_step(x, y) for x, y in loader]
        loss = autojit.stack(losses).mean()
        dist.all_reduce(loss, op=dist.ReduceOp.AVG)
        with autojit.no_grad():
            accuracy = (model(test_x).argmax(dim=1) == test_y).float().mean().item()
        if rank == 0:
            print(f"epoch {epoch + 1:2d}  loss {loss.item():.4f}  test accuracy {accuracy:.3f}")

    # Every process holds the same model: compare each parameter with rank 0's.
    for parameter in model.parameters():
        reference = parameter.detach().clone()
        dist.broadcast(reference, src=0)
        if not np.array_equal(reference.numpy(), parameter.detach().numpy()):
            raise SystemExit(f"rank {rank}: parameters differ from rank 0's")
    if rank == 0:
        mode = "eager" if args.eager else "compiled"
        stats = "" if args.eager else f", {train_step.stats().eager_calls} eager calls"
        print(f"{world} processes, {mode} step{stats}: final test accuracy {accuracy:.3f}")
    dist.destroy_process_group()
    return 0 if accuracy >= args.min_accuracy else 1


if __name__ == "__main__":
    sys.exit(main())
