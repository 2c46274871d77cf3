"""A small CNN on the 8x8 digits: `python examples/digits_cnn.py [--compile]`.

The images of scikit-learn's digits data set (shipped with the package, loaded offline) are
kept as 1-channel 8x8 pictures, scaled to [0, 1]. Two convolution blocks (Conv2d, ReLU,
MaxPool2d) shrink them to 32 channels of 2x2, and a Linear layer reads the classes off the
flattened result. Conv2d and MaxPool2d are composites of autojit ops (im2col and one matmul, a
max over the window offsets), so the same step runs eagerly, the default, or compiled into one
graph with --compile. AUTOJIT_DISABLE=1 turns the compiler off.

    python examples/digits_cnn.py              # eager (or --eager), about 97% test accuracy
    python examples/digits_cnn.py --compile    # the same step through autojit.compile
    python examples/digits_cnn.py --quick      # tiny settings, a smoke test

The exit status is 1 when the test accuracy ends below --min-accuracy.
"""

from __future__ import annotations

import argparse

import numpy as np
from example_support import (
    ProgressBar,
    add_mode_arguments,
    compile_disabled,
    describe_mode,
    limit_blas_threads,
    require,
    training_mode,
)

import autojit
from autojit import nn
from autojit.utils.data import DataLoader, TensorDataset

FULL = {"epochs": 10, "batch_size": 64, "channels": 16, "min_accuracy": 0.95}
QUICK = {"epochs": 3, "batch_size": 64, "channels": 8, "min_accuracy": 0.75}


def parse_arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_mode_arguments(parser, compiled_by_default=False)
    parser.add_argument("--epochs", type=int, help=f"passes over the data ({FULL['epochs']})")
    parser.add_argument("--batch-size", type=int, help=f"samples per step ({FULL['batch_size']})")
    parser.add_argument("--channels", type=int,
                        help=f"channels of the first convolution ({FULL['channels']}); the "
                             "second has twice as many")
    parser.add_argument("--lr", type=float, default=1e-2, help="Adam's learning rate (1e-2)")
    parser.add_argument("--seed", type=int, default=0, help="split, initialization and shuffle")
    parser.add_argument("--quick", action="store_true", help="tiny settings for a smoke test")
    parser.add_argument("--min-accuracy", type=float,
                        help="exit with status 1 below this test accuracy (0.95; 0.75 quick)")
    args = parser.parse_args(argv)
    for name, value in (QUICK if args.quick else FULL).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    return args


def load_images(seed: int, test_fraction: float = 0.25):
    """Train and test tensors: float32 images (N, 1, 8, 8) in [0, 1], int64 labels (N,)."""
    datasets = require("sklearn.datasets", "loading the digits data set")
    digits = datasets.load_digits()
    images = (digits.images / 16.0).astype(np.float32)[:, None]  # pixel values are 0..16
    labels = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(labels))
    test_count = int(round(len(labels) * test_fraction))
    test, train = order[:test_count], order[test_count:]
    return (autojit.tensor(images[train]), autojit.tensor(labels[train]),
            autojit.tensor(images[test]), autojit.tensor(labels[test]))


def build_model(channels: int) -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, channels, kernel_size=3, padding=1), nn.ReLU(),
        nn.MaxPool2d(2),                                    # 8x8 -> 4x4
        nn.Conv2d(channels, 2 * channels, kernel_size=3, padding=1), nn.ReLU(),
        nn.MaxPool2d(2),                                    # 4x4 -> 2x2
        nn.Flatten(),
        nn.Linear(2 * channels * 2 * 2, 10),
    )


def main(argv=None) -> int:
    args = parse_arguments(argv)
    compiled, _ = training_mode(args, compiled_by_default=False)
    print(f"digits CNN: {describe_mode(compiled)}, {limit_blas_threads()}")
    train_images, train_labels, test_images, test_labels = load_images(args.seed)
    autojit.manual_seed(args.seed)
    model = build_model(args.channels)
    print(model)
    optimizer = autojit.optim.Adam(model.parameters(), lr=args.lr)
    loss_function = nn.CrossEntropyLoss()

    def train_step(images, labels):
        loss = loss_function(model(images), labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach()

    def predict(images):
        with autojit.no_grad():
            return model(images).argmax(dim=1)

    if compiled:
        train_step = autojit.compile(train_step)
        predict = autojit.compile(predict)
    loader = DataLoader(TensorDataset(train_images, train_labels), batch_size=args.batch_size,
                        shuffle=True, drop_last=True, generator=np.random.default_rng(args.seed))

    seconds = []
    for epoch in range(1, args.epochs + 1):
        bar = ProgressBar(f"epoch {epoch:>2}/{args.epochs}", len(loader))
        for done, (images, labels) in enumerate(loader, start=1):
            loss = train_step(images, labels).item()
            bar.update(done, loss, len(labels))
        predictions = predict(test_images)
        accuracy = (predictions == test_labels).float().mean().item()
        seconds.append(bar.finish(loss, f"test accuracy {accuracy:.2%}"))

    steady = seconds[1:] or seconds
    print(f"\ntest accuracy: {accuracy:.2%} on {len(test_labels)} images after {args.epochs} "
          f"epochs")
    print(f"time per epoch: {sum(steady) / len(steady):.3f} s, first epoch {seconds[0]:.2f} s")
    if compiled and not compile_disabled():
        print(f"compilation: {train_step.compile_seconds:.2f} s for the training step, "
              f"{train_step.fusion_groups().count('kernel')} fused kernels")
    per_class = []
    for digit in range(10):
        chosen = test_labels == digit
        hits = ((predictions == test_labels) & chosen).sum().item()
        per_class.append(f"{digit}:{hits}/{chosen.sum().item()}")
    print("correct per digit:", " ".join(per_class))
    if accuracy < args.min_accuracy:
        print(f"FAILED: test accuracy {accuracy:.2%} is below {args.min_accuracy:.0%}")
        return 1
    print(f"ok: test accuracy {accuracy:.2%} >= {args.min_accuracy:.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
