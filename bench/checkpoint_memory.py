"""Peak memory of one SGD step of a deep MLP, with and without activation checkpointing, eager
and compiled.

The model is LAYERS Linear(WIDTH, WIDTH) + ReLU layers on a batch of BATCH float32 rows, with a
mean-square loss; the checkpointed step runs it through
`checkpoint_sequential(model, SEGMENTS, x, use_reentrant=False)`. Memory is what tracemalloc
sees, which is every NumPy array: the figure is the peak during one step (for compiled steps,
a step after the compiling calls) less what was held before the first step (parameters,
inputs), so a compiled plan's buffers, kept from call to call, count. "kept" is, for eager
steps, what the forward holds for backward once it has returned the loss. Usage:

    python bench/checkpoint_memory.py [--layers 16] [--width 1024] [--batch 256 1024]
                                      [--segments 4]
"""

from __future__ import annotations

import argparse
import gc
import time
import tracemalloc

import autojit
from autojit import nn
from autojit.utils.checkpoint import checkpoint_sequential


def make_step(layers: int, width: int, segments: int, checkpointed: bool, compiled: bool):
    """The training step, and its forward alone (the loss, for the eager activations column)."""
    autojit.manual_seed(0)
    model = nn.Sequential(*[module for _ in range(layers)
                            for module in (nn.Linear(width, width), nn.ReLU())])
    optimizer = autojit.optim.SGD(model.parameters(), lr=1e-3)

    def forward(x):
        out = checkpoint_sequential(model, segments, x, use_reentrant=False) if checkpointed \
            else model(x)
        return (out * out).mean()

    def step(x):
        loss = forward(x)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach()

    return (autojit.compile(step) if compiled else step), forward


def measure(layers: int, width: int, batch: int, segments: int, checkpointed: bool,
            compiled: bool) -> tuple[float, float | None, float]:
    """(peak MiB of one step above what was held before, MiB the forward keeps for backward
    (eager only), median seconds of three more steps)."""
    gc.collect()
    tracemalloc.start()
    step, forward = make_step(layers, width, segments, checkpointed, compiled)
    x = autojit.randn(batch, width)
    baseline = tracemalloc.get_traced_memory()[0]
    kept = None
    if not compiled:
        loss = forward(x)
        kept = (tracemalloc.get_traced_memory()[0] - baseline) / 2**20
        del loss
        gc.collect()
    for _ in range(3 if compiled else 1):  # trace, compile, then a steady step
        step(x).item()
    gc.collect()
    tracemalloc.reset_peak()
    step(x).item()
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    times = []
    for _ in range(3):  # untraced: tracemalloc slows every allocation
        started = time.perf_counter()
        step(x).item()
        times.append(time.perf_counter() - started)
    return (peak - baseline) / 2**20, kept, sorted(times)[1]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--layers", type=int, default=16)
    parser.add_argument("--width", type=int, default=1024)
    parser.add_argument("--batch", type=int, nargs="+", default=[256, 1024])
    parser.add_argument("--segments", type=int, default=4)
    args = parser.parse_args()
    print(f"MLP {args.layers} x Linear({args.width}, {args.width}) + ReLU, float32; "
          f"checkpoint_sequential with {args.segments} segments")
    print(f"{'batch':>5} {'':<9} {'checkpoint':>10} {'peak MiB':>9} {'kept MiB':>9} "
          f"{'step s':>7}")
    for batch in args.batch:
        for compiled in (False, True):
            for checkpointed in (False, True):
                peak, kept, seconds = measure(args.layers, args.width, batch, args.segments,
                                              checkpointed, compiled)
                kept_text = "-" if kept is None else f"{kept:.1f}"
                print(f"{batch:>5} {'compiled' if compiled else 'eager':<9} "
                      f"{str(checkpointed):>10} {peak:>9.1f} {kept_text:>9} {seconds:>7.2f}")


if __name__ == "__main__":
    main()
