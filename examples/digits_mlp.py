"""Handwritten digits with an MLP, trained by a compiled step: `python examples/digits_mlp.py`.

The data set is scikit-learn's 8x8 digits (1797 images, 10 classes), which ships inside the
scikit-learn package, so nothing is downloaded. The features are standardized with the training
set's statistics, the split is fixed by --seed, and the model is a three-layer MLP trained with
Adam on the cross-entropy, its learning rate halved every few epochs by a StepLR schedule.

The training step (forward, backward, optimizer update, zero_grad) is one function. By default
it runs through autojit.compile, which traces it into one graph and runs fused kernels;
afterwards the same step is timed compiled and eager on a copy of the trained model over the
same batches, and the speeds are printed side by side. --compile trains compiled without that
comparison, --eager trains eagerly, and AUTOJIT_DISABLE=1 turns every autojit.compile off.

With --checkpoint PATH, the end of every epoch writes the model's, the optimizer's and the
scheduler's state_dicts, the epoch, the shuffling generator's state and the history so far
to PATH (autojit.save, torch.save's format); --resume starts from that file and trains the
epochs left, to the same result as a run that was never interrupted.

    python examples/digits_mlp.py                    # about 97% test accuracy in seconds
    python examples/digits_mlp.py --quick            # tiny settings, a smoke test
    python examples/digits_mlp.py --plot curve.png   # the training curve (needs matplotlib)
    python examples/digits_mlp.py --checkpoint run.pt            # saved after every epoch
    python examples/digits_mlp.py --checkpoint run.pt --resume   # continue an interrupted run

The exit status is 1 when the test accuracy ends below --min-accuracy (0.95 at full size), so
the script doubles as a check.
"""

from __future__ import annotations

import argparse
import os

import numpy as np
from example_support import (
    ProgressBar,
    add_mode_arguments,
    compare_speed,
    compile_disabled,
    describe_mode,
    limit_blas_threads,
    require,
    training_mode,
)

import autojit
from autojit import nn
from autojit.utils.data import DataLoader, TensorDataset

FULL = {"epochs": 15, "batch_size": 64, "hidden": 128, "lr_step": 5, "min_accuracy": 0.95}
QUICK = {"epochs": 3, "batch_size": 64, "hidden": 64, "lr_step": 2, "min_accuracy": 0.85}


def parse_arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_mode_arguments(parser, compiled_by_default=True, compares=True)
    parser.add_argument("--epochs", type=int, help=f"passes over the data ({FULL['epochs']})")
    parser.add_argument("--batch-size", type=int, help=f"samples per step ({FULL['batch_size']})")
    parser.add_argument("--hidden", type=int, help=f"width of the hidden layers ({FULL['hidden']})")
    parser.add_argument("--lr", type=float, default=2e-3, help="Adam's learning rate (2e-3)")
    parser.add_argument("--lr-step", type=int,
                        help="epochs between halvings of the learning rate (5; 2 quick)")
    parser.add_argument("--seed", type=int, default=0, help="split, initialization and shuffle")
    parser.add_argument("--quick", action="store_true",
                        help="tiny settings for a smoke test: a few epochs, a smaller model")
    parser.add_argument("--min-accuracy", type=float,
                        help="exit with status 1 below this test accuracy (0.95; 0.85 quick)")
    parser.add_argument("--plot", metavar="PATH",
                        help="write the training curve (loss, test accuracy) as a PNG")
    parser.add_argument("--checkpoint", metavar="PATH",
                        help="save the training state to PATH after every epoch")
    parser.add_argument("--resume", action="store_true",
                        help="continue the run saved in --checkpoint PATH")
    args = parser.parse_args(argv)
    if args.resume and not args.checkpoint:
        parser.error("--resume needs --checkpoint PATH, the file to resume from")
    if args.resume and not os.path.exists(args.checkpoint):
        parser.error(f"--resume: no checkpoint at {args.checkpoint}")
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


def save_checkpoint(path: str, epoch: int, model, optimizer, scheduler, shuffle, history):
    """Everything a later run needs to continue after `epoch`, written as torch.save writes
    it; a temporary file renamed into place, so that a run stopped while saving leaves the
    previous checkpoint whole."""
    state = {"epoch": epoch, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
             "scheduler": scheduler.state_dict(), "shuffle": shuffle.get_state(),
             "history": history}
    autojit.save(state, path + ".tmp")
    os.replace(path + ".tmp", path)


def load_checkpoint(path: str, model, optimizer, scheduler, shuffle) -> tuple[int, list]:
    """Restore what save_checkpoint wrote; returns the last epoch done and the history."""
    state = autojit.load(path)  # weights_only: tensors and plain containers only
    model.load_state_dict(state["model"])
    optimizer.load_state_dict(state["optimizer"])
    scheduler.load_state_dict(state["scheduler"])
    shuffle.set_state(state["shuffle"])
    return state["epoch"], state["history"]


def train(args, model, train_step, predict, loader, test_images, test_labels, *, scheduler,
          history: list, checkpoint=None) -> list:
    """Train from the epoch after the last one in `history` to args.epochs; returns `history`
    with one record per epoch. `checkpoint(epoch, history)` runs after each epoch."""
    for epoch in range(len(history) + 1, args.epochs + 1):
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
        scheduler.step()
        if checkpoint is not None:
            checkpoint(epoch, history)
    return history


def compare_compiled_with_eager(model, args, batches: list):
    """Steps per second of the compiled and the eager step, on a copy of the trained model.

    Both run the same Python function on the same model and the same batches, taking turns;
    compare_speed calls each twice before timing, so that tracing and kernel compilation (on
    the first call, and on the second, after Adam made its state) are not timed, then times
    them in turns over five rounds of at least 50 ms each: the printed figure is the median,
    with the rounds' range beside it.
    """
    twin = build_model(args.hidden)
    twin.load_state_dict(model.state_dict())
    optimizer = autojit.optim.Adam(twin.parameters(), lr=args.lr)
    eager_step = make_train_step(twin, optimizer, nn.CrossEntropyLoss())
    compiled_step = autojit.compile(eager_step)
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
    compiled, compare = training_mode(args, compiled_by_default=True, compares=True)
    print(f"digits MLP: {describe_mode(compiled)}, {limit_blas_threads()}")

    train_images, train_labels, test_images, test_labels = load_digits(args.seed)
    autojit.manual_seed(args.seed)
    model = build_model(args.hidden)
    optimizer = autojit.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = autojit.optim.lr_scheduler.StepLR(optimizer, step_size=args.lr_step, gamma=0.5)
    train_step = make_train_step(model, optimizer, nn.CrossEntropyLoss())
    predict = make_predict(model)
    if compiled:
        train_step = autojit.compile(train_step)
        predict = autojit.compile(predict)
    # drop_last keeps every batch the same shape: a compiled step traces once, not twice. The
    # loader shuffles with a generator of its own, whose state a checkpoint keeps.
    shuffle = autojit.Generator().manual_seed(args.seed)
    loader = DataLoader(TensorDataset(train_images, train_labels), batch_size=args.batch_size,
                        shuffle=True, drop_last=True, generator=shuffle)
    print(f"data: {len(train_labels)} training and {len(test_labels)} test images, "
          f"{len(loader)} steps of {args.batch_size} per epoch; model: 64-{args.hidden}-"
          f"{args.hidden}-10, {sum(p.numel() for p in model.parameters()):,} parameters")

    history = []
    if args.resume:
        done, history = load_checkpoint(args.checkpoint, model, optimizer, scheduler, shuffle)
        print(f"resumed from {args.checkpoint}: {done} epoch(s) done, test accuracy "
              f"{history[-1]['accuracy']:.2%}, learning rate {scheduler.get_last_lr()[0]:.2e}")

    def checkpoint(epoch, history):
        save_checkpoint(args.checkpoint, epoch, model, optimizer, scheduler, shuffle, history)

    started = len(history)
    history = train(args, model, train_step, predict, loader, test_images, test_labels,
                    scheduler=scheduler, history=history,
                    checkpoint=checkpoint if args.checkpoint else None)
    if args.checkpoint:
        print(f"checkpoint: {args.checkpoint} (epoch {len(history)})")

    final = history[-1]
    # The first epoch of a run includes tracing and compiling; the later ones show the steady
    # speed.
    trained = history[started:]
    steady = trained[1:] or trained or history
    epoch_seconds = sum(record["seconds"] for record in steady) / len(steady)
    print(f"\ntest accuracy: {final['accuracy']:.2%} after {len(history)} epochs "
          f"(mean training loss of the last epoch {final['loss']:.4f})")
    if trained:
        print(f"time per epoch: {epoch_seconds:.3f} s "
              f"({sum(r['samples_per_second'] for r in steady) / len(steady):,.0f} samples/s), "
              f"first epoch {trained[0]['seconds']:.2f} s")
    if compiled and not compile_disabled() and trained:
        print(f"compilation: {train_step.compile_seconds:.2f} s for the training step, "
              f"{len(train_step.executables)} executable(s), "
              f"{train_step.fusion_groups().count('kernel')} fused kernels")
    if compare:
        if compile_disabled():
            print("speed: compiled vs eager not measured (AUTOJIT_DISABLE=1)")
        else:
            speed = compare_compiled_with_eager(model, args, list(loader))
            print(f"speed: compiled step {speed['compiled']:,.0f} steps/s, eager step "
                  f"{speed['eager']:,.0f} steps/s, compiled/eager {speed.ratio:.2f}x "
                  f"(batch {args.batch_size}, same model and batches, {speed.summary()})")
            if speed.note():
                print(speed.note())
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
