"""A custom autograd.Function and hooks, in training: `python examples/custom_function_and_hooks.py`

The model classifies two interleaved half-moons (a toy 2-D data set made with NumPy) while its
hidden activations are quantized to five levels, {-1, -0.5, 0, 0.5, 1}. Rounding has a zero
gradient almost everywhere, so nothing would train through it; the fix is a custom
autograd.Function, a straight-through estimator: forward rounds, backward passes the gradient
through unchanged where the input lies in [-1, 1] (and blocks it where the clamp saturates).

Around it, the example shows the hooks autograd offers:

- Tensor.register_hook on every parameter clips each gradient element to [-clip, clip] before
  it is accumulated into .grad (gradient clipping by hook), and appends the number of elements
  it clipped, a tensor, to a list that the training loop reads and empties after each step;
- retain_grad() keeps the gradient of the logits, a non-leaf, to print its size;
- Module.register_forward_hook records what each quantizer outputs (how often each level is
  used), on the trained model.

The training step runs eagerly by default and compiled with --compile: the Function's forward
and backward and the hooks are traced into the same graph as everything else, and each run of
the compiled step appends that run's counts to the list, as the eager step does. (The step
itself only returns its results; a step that also read the list it appends to, say to stack
the counts, would make that list a graph break: docs/compiler.md, "Python state the function
writes".)
"""

from __future__ import annotations

import argparse

import numpy as np
from example_support import (
    ProgressBar,
    add_mode_arguments,
    describe_mode,
    limit_blas_threads,
    training_mode,
)

import autojit
from autojit import nn
from autojit.autograd import Function

FULL = {"epochs": 30, "samples": 1024}
QUICK = {"epochs": 8, "samples": 512}


class QuantizeStraightThrough(Function):
    """Round clamp(x, -1, 1) to multiples of 1/levels; the gradient passes straight through."""

    @staticmethod
    def forward(ctx, x, levels):
        ctx.save_for_backward(x)
        # floor(v + 0.5) rounds to the nearest integer (halves up).
        return ((x.clamp(-1.0, 1.0) * levels) + 0.5).floor() / levels

    @staticmethod
    def backward(ctx, grad_output):
        (x,) = ctx.saved_tensors
        inside = (x.abs() <= 1.0).to(grad_output.dtype)  # the clamp's own gradient
        return grad_output * inside, None  # no gradient for `levels`, a Python number


class Quantize(nn.Module):
    def __init__(self, levels: int = 2):
        super().__init__()
        self.levels = levels

    def forward(self, x):
        return QuantizeStraightThrough.apply(x, self.levels)

    def extra_repr(self) -> str:
        return f"levels={self.levels}"


def make_moons(count: int, noise: float, seed: int):
    """Two interleaved half circles, labelled 0 and 1, with Gaussian noise."""
    rng = np.random.default_rng(seed)
    angle = rng.uniform(0, np.pi, count)
    label = rng.integers(0, 2, count)
    x = np.where(label == 0, np.cos(angle), 1 - np.cos(angle))
    y = np.where(label == 0, np.sin(angle), 0.5 - np.sin(angle))
    points = np.stack([x, y], axis=1) + noise * rng.standard_normal((count, 2))
    points = (points - points.mean(axis=0)) / points.std(axis=0)
    return autojit.tensor(points, dtype=autojit.float32), autojit.tensor(label)


def show_straight_through() -> None:
    print("== rounding vs the straight-through estimator")
    x = autojit.tensor([-1.4, -0.6, -0.2, 0.1, 0.3, 0.9], requires_grad=True)
    plain = ((x.clamp(-1.0, 1.0) * 2) + 0.5).floor() / 2
    plain.sum().backward()
    print("x                      ", x.detach())
    print("rounded                ", plain.detach())
    print("gradient of plain round", x.grad)
    x.grad = None
    QuantizeStraightThrough.apply(x, 2).sum().backward()
    print("gradient through STE   ", x.grad)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_mode_arguments(parser, compiled_by_default=False)
    parser.add_argument("--epochs", type=int)
    parser.add_argument("--samples", type=int, help="training points (as many for testing)")
    parser.add_argument("--clip", type=float, default=0.02,
                        help="gradient elements are clipped to [-clip, clip] (0.02)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="tiny settings for a smoke test")
    args = parser.parse_args(argv)
    for name, value in (QUICK if args.quick else FULL).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    compiled, _ = training_mode(args, compiled_by_default=False)
    print(f"custom Function and hooks: {describe_mode(compiled)}, {limit_blas_threads()}\n")

    show_straight_through()

    print("\n== training with quantized activations")
    train_points, train_labels = make_moons(args.samples, 0.1, args.seed)
    test_points, test_labels = make_moons(args.samples, 0.1, args.seed + 1)
    autojit.manual_seed(args.seed)
    model = nn.Sequential(nn.Linear(2, 32), Quantize(), nn.Linear(32, 32), Quantize(),
                          nn.Linear(32, 2))
    print(model)
    optimizer = autojit.optim.Adam(model.parameters(), lr=0.02)
    loss_function = nn.CrossEntropyLoss()

    # Gradient clipping by hook: each parameter's gradient passes through the hook before it
    # is accumulated into .grad. The hook returns the clipped gradient; it also appends the
    # number of elements it clipped, as a tensor, to a list the training loop reads.
    clipped_counts = []

    def clip_gradient(grad):
        clipped_counts.append((grad.abs() > args.clip).sum())
        return grad.clamp(-args.clip, args.clip)

    for parameter in model.parameters():
        parameter.register_hook(clip_gradient)

    def train_step(points, labels):
        logits = model(points)
        logits.retain_grad()  # a non-leaf: keep its gradient to look at it
        loss = loss_function(logits, labels)
        loss.backward()
        # Tensor ops only (no Python max over tensors, which would need their values), so
        # that the compiled step captures these too.
        largest = autojit.stack([p.grad.abs().max() for p in model.parameters()]).max()
        logits_gradient = logits.grad.norm()
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach(), largest, logits_gradient

    if compiled:
        train_step = autojit.compile(train_step)
    batch = 64
    batches = [(train_points[i:i + batch], train_labels[i:i + batch])
               for i in range(0, args.samples - batch + 1, batch)]
    total_elements = sum(parameter.numel() for parameter in model.parameters())
    for epoch in range(1, args.epochs + 1):
        bar = ProgressBar(f"epoch {epoch:>2}/{args.epochs}", len(batches))
        clipped_in_epoch = 0
        for done, (points, labels) in enumerate(batches, start=1):
            loss, largest, logits_gradient = train_step(points, labels)
            clipped_in_epoch += sum(int(count.item()) for count in clipped_counts)
            clipped_counts.clear()
            bar.update(done, loss.item(), len(labels))
        bar.finish(loss.item(), f"clipped {clipped_in_epoch / (len(batches) * total_elements):.0%}"
                   " of gradient elements")
    print(f"last step: largest |.grad| {largest.item():.4f} (clip {args.clip}), "
          f"|d loss / d logits| = {logits_gradient.item():.4f} (retain_grad)")
    check = largest.item() <= args.clip + 1e-7

    print("\n== forward hooks on the trained model")
    usage = {}

    def record_levels(module, inputs, output):
        levels = [round(-1 + step / module.levels, 2) for step in range(2 * module.levels + 1)]
        usage[module] = {level: (output == level).float().mean().item() for level in levels}

    quantizers = [module for module in model.modules() if isinstance(module, Quantize)]
    handles = [module.register_forward_hook(record_levels) for module in quantizers]
    with autojit.no_grad():
        accuracy = (model(test_points).argmax(dim=1) == test_labels).float().mean().item()
    for handle in handles:
        handle.remove()
    for index, module in enumerate(quantizers):
        shares = ", ".join(f"{level:+.1f}: {share:.0%}" for level, share in usage[module].items())
        print(f"quantizer {index}: {shares}")

    print(f"\ntest accuracy with quantized activations: {accuracy:.2%}")
    if not check:
        print("FAILED: a gradient element exceeds the clip")
        return 1
    if accuracy < 0.9:
        print("FAILED: test accuracy below 90%")
        return 1
    print("ok: gradients within the clip, test accuracy >= 90%")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
