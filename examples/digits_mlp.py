"""Handwritten digits with an MLP, trained by a compiled step: `python examples/digits_mlp.py`.

The data set is scikit-learn's 8x8 digits (1797 images, 10 classes), which ships inside the
scikit-learn package, so nothing is downloaded. The features are standardized with the training
set's statistics, the split is fixed by --seed, and the model is a three-layer MLP trained with
Adam on the cross-entropy.

The training step (forward, backward, optimizer update, zero_grad) is one function. By default
it runs through autojit.compile, which traces it once into one graph and runs fused kernels;
afterwards the same step is timed compiled and eager on a copy of the trained model over the
same batches, and the speeds are printed side by side. --compile trains compiled without that
comparison, --eager trains eagerly, and AUTOJIT_DISABLE=1 turns every autojit.compile off.

    python examples/digits_mlp.py                    # about 97% test accuracy in seconds
    python examples/digits_mlp.py --quick            # tiny settings, a smoke test
    python examples/digits_mlp.py --plot curve.png   # the training curve (needs matplotlib)

The exit status is 1 when the test accuracy ends below --min-accuracy (0.95 at full size), so
the script doubles as a check.
"""

from __future__ import annotations

import argparse

import numpy as np
from example_support import (
    ProgressBar,
    add_mode_arguments,
    compare_speed,
    compile_disabled,
    describe_mode,
    limit_blas_threads,
    require,
)

import autojit
from autojit import nn
from autojit.utils.data import DataLoader, TensorDataset

FULL = {"epochs": 15, "batch_size": 64, "hidden": 128, "min_accuracy": 0.95}
QUICK = {"epochs": 3, "batch_size": 64, "hidden": 64, "min_accuracy": 0.85}


def parse_arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_mode_arguments(parser, compare=True)
    parser.add_argument("--epochs", type=int, help=f"passes over the data ({FULL['epochs']})")
    parser.add_argument("--batch-size", type=int, help=f"samples per step ({FULL['batch_size']})")
    parser.add_argument("--hidden", type=int, help=f"width of the hidden layers ({FULL['hidden']})")
    parser.add_argument("--lr", type=float, default=2e-3, help="Adam's learning rate (2e-3)")
    parser.add_argument("--seed", type=int, default=0, help="split, initialization and shuffle")
    parser.add_argument("--quick", action="store_true",
                        help="tiny settings for a smoke test: a few epochs, a smaller model")
    parser.add_argument("--min-accuracy", type=float,
                        help="exit with status 1 below this test accuracy (0.95; 0.85 quick)")
    parser.add_argument("--plot", metavar="PATH",
                        help="write the training curve (loss, test accuracy) as a PNG")
    args = parser.parse_args(argv)
    defaults = QUICK if args.quick else FULL
    for name, value in defaults.items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    return args


def load_digits(seed: int, test_fraction: float = 0.25):
    """Standardized train and test tensors: float32 features (N, 64), int64 labels (N,)."""
    datasets = require("sklearn.datasets", "loading the digits data set")
    digits = datasets.load_digits()
    features = digits.data.astype(np.float32)
    labels = digits.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(labels))
    test_count = int(round(len(labels) * test_fraction))
    test, train = order[:test_count], order[test_count:]
    # Statistics of the training set only, so the test set stays unseen. Border pixels that are
    # always 0 have no spread: dividing by 1 leaves them at 0.
    mean = features[train].mean(axis=0)
    spread = features[train].std(axis=0)
    spread[spread == 0] = 1.0
    features = (features - mean) / spread
    return (autojit.tensor(features[train]), autojit.tensor(labels[train]),
            autojit.tensor(features[test]), autojit.tensor(labels[test]))


def build_model(hidden: int) -> nn.Module:
    return nn.Sequential(
        nn.Linear(64, hidden), nn.ReLU(),
        nn.Linear(hidden, hidden), nn.ReLU(),
        nn.Linear(hidden, 10),
    )


def make_train_step(model: nn.Module, optimizer, loss_function):
    """One optimization step on a batch, written exactly as for eager autograd."""

    def train_step(images, labels):
        loss = loss_function(model(images), labels)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach()

    return train_step


def make_predict(model: nn.Module):
    def predict(images):
        with autojit.no_grad():
            return model(images).argmax(dim=1)

    return predict


def train(args, model, train_step, predict, loader, test_images, test_labels) -> list:
    """Train for args.epochs; returns one record per epoch."""
    history = []
    for epoch in range(1, args.epochs + 1):
        bar = ProgressBar(f"epoch {epoch:>2}/{args.epochs}", len(loader))
        total_loss = 0.0
        for done, (images, labels) in enumerate(loader, start=1):
            loss = train_step(images, labels).item()
            total_loss += loss
            bar.update(done, loss, len(labels))
        accuracy = (predict(test_images) == test_labels).float().mean().item()
        seconds = bar.finish(loss, f"test accuracy {accuracy:.2%}")
        history.append({"epoch": epoch, "loss": total_loss / len(loader),
                        "accuracy": accuracy, "seconds": seconds,
                        "samples_per_second": bar.samples / seconds})
    return history


def compare_compiled_with_eager(model, args, batches: list) -> dict:
    """Steps per second of the compiled and the eager step, on a copy of the trained model.

    Both run the same Python function on the same model and the same batches; the compiled one
    is called once first so that tracing and kernel compilation are not timed.
    """
    twin = build_model(args.hidden)
    twin.load_state_dict(model.state_dict())
    optimizer = autojit.optim.Adam(twin.parameters(), lr=args.lr)
    eager_step = make_train_step(twin, optimizer, nn.CrossEntropyLoss())
    compiled_step = autojit.compile(eager_step)
    compiled_step(*batches[0])
    eager_step(*batches[0])
    return compare_speed({"compiled": compiled_step, "eager": eager_step}, batches)


def write_plot(path: str, history: list) -> None:
    matplotlib = require("matplotlib", "--plot")
    matplotlib.use("Agg")  # a file only: no window, no display needed
    from matplotlib import pyplot
    from matplotlib.ticker import MaxNLocator

    epochs = [record["epoch"] for record in history]
    figure, (loss_axes, accuracy_axes) = pyplot.subplots(1, 2, figsize=(9, 3.5))
    loss_axes.plot(epochs, [record["loss"] for record in history], marker="o")
    loss_axes.set(title="training loss (mean over the epoch)", xlabel="epoch",
                  ylabel="cross-entropy", yscale="log")
    accuracy_axes.plot(epochs, [100 * record["accuracy"] for record in history], marker="o",
                       color="tab:green")
    accuracy_axes.set(title="test accuracy", xlabel="epoch", ylabel="%")
    for axes in (loss_axes, accuracy_axes):
        axes.grid(alpha=0.3)
        axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    figure.suptitle("autojit: MLP on the 8x8 digits")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    pyplot.close(figure)


def main(argv=None) -> int:
    args = parse_arguments(argv)
    if args.plot:
        require("matplotlib", "--plot")  # fail before training, not after it
    compiled = not args.eager
    compare = not (args.eager or args.compile)
    print(f"digits MLP: {describe_mode(compiled)}, {limit_blas_threads()}")

    train_images, train_labels, test_images, test_labels = load_digits(args.seed)
    autojit.manual_seed(args.seed)
    model = build_model(args.hidden)
    optimizer = autojit.optim.Adam(model.parameters(), lr=args.lr)
    train_step = make_train_step(model, optimizer, nn.CrossEntropyLoss())
    predict = make_predict(model)
    if compiled:
        train_step = autojit.compile(train_step)
        predict = autojit.compile(predict)
    # drop_last keeps every batch the same shape: a compiled step traces once, not twice.
    loader = DataLoader(TensorDataset(train_images, train_labels), batch_size=args.batch_size,
                        shuffle=True, drop_last=True, generator=np.random.default_rng(args.seed))
    print(f"data: {len(train_labels)} training and {len(test_labels)} test images, "
          f"{len(loader)} steps of {args.batch_size} per epoch; model: 64-{args.hidden}-"
          f"{args.hidden}-10, {sum(p.numel() for p in model.parameters()):,} parameters")

    history = train(args, model, train_step, predict, loader, test_images, test_labels)

    final = history[-1]
    # The first epoch includes tracing and compiling; the later ones show the steady speed.
    steady = history[1:] or history
    epoch_seconds = sum(record["seconds"] for record in steady) / len(steady)
    print(f"\ntest accuracy: {final['accuracy']:.2%} after {args.epochs} epochs "
          f"(mean training loss of the last epoch {final['loss']:.4f})")
    print(f"time per epoch: {epoch_seconds:.3f} s "
          f"({sum(r['samples_per_second'] for r in steady) / len(steady):,.0f} samples/s), "
          f"first epoch {history[0]['seconds']:.2f} s")
    if compiled and not compile_disabled():
        print(f"compilation: {train_step.compile_seconds:.2f} s for the training step, "
              f"{len(train_step.executables)} executable(s), "
              f"{train_step.fusion_groups().count('kernel')} fused kernels")
    if compare:
        if compile_disabled():
            print("speed: compiled vs eager not measured (AUTOJIT_DISABLE=1)")
        else:
            speed = compare_compiled_with_eager(model, args, list(loader))
            ratio = speed["compiled"] / speed["eager"]
            print(f"speed: compiled step {speed['compiled']:,.0f} steps/s, eager step "
                  f"{speed['eager']:,.0f} steps/s, compiled/eager {ratio:.2f}x "
                  f"(batch {args.batch_size}, same model and batches, best of 3 passes each)")
    if args.plot:
        write_plot(args.plot, history)
        print(f"training curve written to {args.plot}")
    if final["accuracy"] < args.min_accuracy:
        print(f"FAILED: test accuracy {final['accuracy']:.2%} is below {args.min_accuracy:.0%}")
        return 1
    print(f"ok: test accuracy {final['accuracy']:.2%} >= {args.min_accuracy:.0%}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
