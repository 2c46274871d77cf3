"""Whole training scripts, torch against autojit: torch eager, autojit eager, autojit compiled.

Two scripts, each written once against a module `lib` (torch or autojit) as a torch user
writes one, so that porting is replacing `torch` with `autojit`:

- mlp: a user Dataset over synthetic data (8,192 samples of 64 features, labels from a
  random two-layer teacher), a shuffling DataLoader of batch 64, an MLP with BatchNorm1d and
  Dropout, Adam, StepLR, the running loss read with .item() every step, evaluation under
  no_grad after every epoch, and the best state_dict saved with lib.save and loaded back at
  the end;
- cnn: scikit-learn's 8x8 digits (1,347 training images) through a Dataset whose
  __getitem__ augments each image with tensor ops (a random shift of up to one pixel by
  padding and cropping, a random horizontal flip, Gaussian noise), a small CNN with
  BatchNorm2d and Dropout, and the same loop.

"autojit compiled" is the same script with its training step wrapped in autojit.compile;
"autojit compiled, dynamic=False" passes that to it, so that the smaller last batch of an
epoch gets a static executable of its own instead of making every later step run a
size-generic one. Each run is timed from the first batch to the end of the last epoch (data
loading, steps, evaluation, checkpoints; not the model's construction), and split into the
time spent waiting for the loader's batches, in the steps (with the loss's .item(); the
compiled step's first call, its trace and kernel compiles, is also printed alone) and in the
rest of each epoch (scheduler, evaluation, checkpoint), with the seconds the compiled step's
traces and compiles took (its `compile_seconds`, inside the steps' share); the process's CPU
time is given too, which a shared machine's other work disturbs less than the wall time. The
variants take turns, `--rounds` times, in one process; the tables give the median seconds of
each and the ratios to torch eager. `--layers` instead times, per call, the forward of the
layers that dominate the eager steps (autojit and torch taking turns; the last two rows with
their backward). `--profile` times each step of the CNN script's compiled training step, as
its native program runs them (bench/plan_profile.py), on one batch of 64. Usage:

    python bench/end_to_end.py [--script mlp|cnn|both] [--epochs 15] [--rounds 3]
        [--threads 1] [--workers 0] [--layers | --profile]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

import torch  # noqa: E402

import autojit  # noqa: E402


def synthetic(seed: int = 0, samples: int = 8192, features: int = 64, classes: int = 10):
    """Features and labels from a random teacher network; 20% held out for evaluation."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((samples, features)).astype(np.float32)
    hidden = np.tanh(x @ rng.standard_normal((features, 32)) / np.sqrt(features))
    y = (hidden @ rng.standard_normal((32, classes))).argmax(1).astype(np.int64)
    cut = samples * 4 // 5
    return x[:cut], y[:cut], x[cut:], y[cut:]


def digits(seed: int = 0):
    from sklearn.datasets import load_digits

    found = load_digits()
    images = (found.images / 16.0).astype(np.float32)[:, None]
    labels = found.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(labels))
    test, train = order[:450], order[450:]
    return images[train], labels[train], images[test], labels[test]


# ---- the scripts, written against `lib` ---------------------------------------------------------

def mlp_parts(lib, data):
    nn = lib.nn

    class Samples(lib.utils.data.Dataset):
        def __init__(self, features, labels):
            self.features, self.labels = lib.tensor(features), lib.tensor(labels)

        def __len__(self):
            return len(self.labels)

        def __getitem__(self, index):
            return self.features[index], self.labels[index]

    model = nn.Sequential(
        nn.Linear(64, 128), nn.BatchNorm1d(128), nn.ReLU(), nn.Dropout(0.2),
        nn.Linear(128, 128), nn.BatchNorm1d(128), nn.ReLU(), nn.Dropout(0.2),
        nn.Linear(128, 10))
    return Samples(data[0], data[1]), model, 1e-3


def cnn_parts(lib, data):
    nn, functional = lib.nn, lib.nn.functional

    class Augmented(lib.utils.data.Dataset):
        def __init__(self, images, labels):
            self.images, self.labels = lib.tensor(images), lib.tensor(labels)

        def __len__(self):
            return len(self.labels)

        def __getitem__(self, index):
            image = self.images[index]  # (1, 8, 8)
            top, left = lib.randint(0, 3, (2,)).tolist()  # shift by up to one pixel
            image = functional.pad(image, (1, 1, 1, 1))[:, top:top + 8, left:left + 8]
            if lib.rand(()).item() < 0.5:
                image = image.flip(-1)
            return image + 0.05 * lib.randn_like(image), self.labels[index]

    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Dropout(0.25), nn.Linear(32 * 2 * 2, 10))
    return Augmented(data[0], data[1]), model, 3e-3


def training_step(model, optimizer, loss_function):
    """The scripts' training step, as a torch user writes it."""
    def train_step(x, y):
        optimizer.zero_grad()
        loss = loss_function(model(x), y)
        loss.backward()
        optimizer.step()
        return loss.detach()
    return train_step


def run_script(lib, parts, data, epochs: int, mode: str, workers: int,
               checkpoint: str) -> dict:
    """One training run; returns its seconds, the first step's seconds, loss and accuracy."""
    lib.manual_seed(0)
    dataset, model, lr = parts(lib, data)
    test_x, test_y = lib.tensor(data[2]), lib.tensor(data[3])
    loader = lib.utils.data.DataLoader(dataset, batch_size=64, shuffle=True,
                                       num_workers=workers,
                                       persistent_workers=workers > 0)
    optimizer = lib.optim.Adam(model.parameters(), lr=lr)
    scheduler = lib.optim.lr_scheduler.StepLR(optimizer, step_size=5, gamma=0.5)
    train_step = training_step(model, optimizer, lib.nn.CrossEntropyLoss())

    # mode: "eager"; "compiled" (autojit.compile's defaults); "static" (dynamic=False: a
    # batch of another size gets an executable of its own, not a size-generic one).
    step = train_step if mode == "eager" else \
        autojit.compile(train_step, dynamic=False if mode == "static" else None)
    best, first_step = 0.0, None
    # Where the time goes: the loader's batches, the steps (with .item()), and the rest of
    # each epoch (scheduler, evaluation, checkpoint).
    parts = {"data": 0.0, "steps": 0.0}
    clock = time.perf_counter
    start, start_cpu = clock(), time.process_time()
    for _ in range(epochs):
        model.train()
        running = 0.0
        batches = iter(loader)
        while True:
            began = clock()
            batch = next(batches, None)
            fetched = clock()
            parts["data"] += fetched - began
            if batch is None:
                break
            running += step(*batch).item()
            done = clock()
            parts["steps"] += done - fetched
            if first_step is None:
                first_step = done - fetched
        scheduler.step()
        model.eval()
        with lib.no_grad():
            accuracy = (model(test_x).argmax(1) == test_y).float().mean().item()
        if accuracy > best:
            best = accuracy
            lib.save(model.state_dict(), checkpoint)
    model.load_state_dict(lib.load(checkpoint))
    seconds = clock() - start
    return {"seconds": seconds, "cpu": time.process_time() - start_cpu,
            "first": first_step, "compile": getattr(step, "compile_seconds", 0.0),
            "loss": running / len(loader),
            "accuracy": best, "data": parts["data"], "steps": parts["steps"],
            "rest": seconds - parts["data"] - parts["steps"]}


def compare(name: str, parts, data, epochs: int, rounds: int, workers: int) -> None:
    variants = {"torch eager": (torch, "eager"), "autojit eager": (autojit, "eager"),
                "autojit compiled": (autojit, "compiled"),
                "autojit compiled, dynamic=False": (autojit, "static")}
    results = {variant: [] for variant in variants}
    with tempfile.TemporaryDirectory() as folder:
        for _ in range(rounds):
            for variant, (lib, mode) in variants.items():
                path = os.path.join(folder, f"{len(results[variant])}_{mode}.pt")
                results[variant].append(run_script(lib, parts, data, epochs, mode, workers,
                                                   path))
    reference = {key: statistics.median(r[key] for r in results["torch eager"])
                 for key in ("seconds", "cpu")}
    print(f"{name}: {epochs} epochs, {len(data[1])} training samples, batch 64, "
          f"num_workers={workers}, {rounds} rounds (median)")
    print("| variant | seconds | vs torch eager | CPU s | vs torch eager | data s | steps s | "
          "eval+save s | first step s | compiles s | last loss | best accuracy |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for variant, runs in results.items():
        median = {key: statistics.median(r[key] for r in runs)
                  for key in ("seconds", "cpu", "first", "compile", "data", "steps", "rest")}
        print(f"| {variant} | {median['seconds']:.2f} | "
              f"{median['seconds'] / reference['seconds']:.2f}x | {median['cpu']:.2f} | "
              f"{median['cpu'] / reference['cpu']:.2f}x | {median['data']:.2f} | "
              f"{median['steps']:.2f} | {median['rest']:.2f} | {median['first']:.3f} | "
              f"{median['compile']:.3f} | "
              f"{runs[-1]['loss']:.3f} | {runs[-1]['accuracy']:.1%} |")
    print()


def layer_cases(lib) -> dict:
    """name -> a call of one layer's forward as the scripts run it (per call)."""
    nn = lib.nn
    lib.manual_seed(0)
    rng = np.random.default_rng(0)
    rows = lib.tensor(rng.standard_normal((64, 64)).astype(np.float32))
    hidden = lib.tensor(rng.standard_normal((64, 128)).astype(np.float32))
    logits = lib.tensor(rng.standard_normal((64, 10)).astype(np.float32), requires_grad=True)
    labels = lib.tensor(rng.integers(0, 10, 64))
    images = lib.tensor(rng.standard_normal((450, 16, 8, 8)).astype(np.float32))
    linear, norm, pool = nn.Linear(64, 128), nn.BatchNorm1d(128), nn.MaxPool2d(2)
    convolution = nn.Conv2d(1, 16, 3, padding=1)
    batch = lib.tensor(rng.standard_normal((64, 1, 8, 8)).astype(np.float32))
    second = nn.Conv2d(16, 32, 3, padding=1)
    pooled = lib.tensor(rng.standard_normal((64, 16, 4, 4)).astype(np.float32),
                        requires_grad=True)
    activations = lib.tensor(rng.standard_normal((64, 16, 8, 8)).astype(np.float32),
                             requires_grad=True)
    pooled_grad = lib.tensor(rng.standard_normal((64, 16, 4, 4)).astype(np.float32))

    def backward(function, grad=None):
        def run():
            result = function()
            result.backward(lib.ones_like(result) if grad is None else grad)
        return run

    def evaluating(function):
        def run():
            with lib.no_grad():
                function()
        return run

    return {
        "Linear(64, 128), batch 64": lambda: linear(rows),
        "BatchNorm1d(128), training, batch 64": lambda: norm(hidden),
        "cross_entropy, (64, 10)": lambda: nn.functional.cross_entropy(logits, labels),
        "Conv2d(1, 16, 3), batch 64": lambda: convolution(batch),
        "MaxPool2d(2), (450, 16, 8, 8), no_grad": evaluating(lambda: pool(images)),
        "Conv2d(16, 32, 3) on 4x4, batch 64, with backward": backward(
            lambda: second(pooled)),
        "MaxPool2d(2), (64, 16, 8, 8), with backward": backward(
            lambda: pool(activations), pooled_grad),
    }


def compare_layers(rounds: int) -> None:
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from timing import interleaved_medians

    ours, theirs = layer_cases(autojit), layer_cases(torch)
    print("Layer forwards (per call, grad mode on unless marked; CPU: the calling thread's)")
    print("| layer | autojit us | torch us | ratio | autojit CPU us | torch CPU us | CPU ratio |"
          "\n|---|---:|---:|---:|---:|---:|---:|")
    for name in ours:
        cpu: dict = {}
        medians = interleaved_medians({"autojit": ours[name], "torch": theirs[name]},
                                      rounds=rounds, steps=20, cpu=cpu)
        mine, reference = medians["autojit"] * 1e6, medians["torch"] * 1e6
        mine_cpu, reference_cpu = cpu["autojit"] * 1e6, cpu["torch"] * 1e6
        print(f"| {name} | {mine:,.1f} | {reference:,.1f} | {mine / reference:.2f}x | "
              f"{mine_cpu:,.1f} | {reference_cpu:,.1f} | {mine_cpu / reference_cpu:.2f}x |")
    print()


def profile_cnn_step(calls: int = 50) -> None:
    """The CNN script's compiled step (its model, Adam, cross entropy), step by step."""
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    from plan_profile import print_profile, step_times

    data = digits()
    autojit.manual_seed(0)
    _, model, lr = cnn_parts(autojit, data)
    optimizer = autojit.optim.Adam(model.parameters(), lr=lr)
    step = autojit.compile(training_step(model, optimizer, autojit.nn.CrossEntropyLoss()))
    x = autojit.tensor(data[0][:64].reshape(64, 1, 8, 8))
    y = autojit.tensor(data[1][:64])
    for _ in range(5):
        step(x, y)
    print("The CNN script's compiled step, batch 64, each step of its plan timed alone")
    rows, program = step_times(step, lambda: step(x, y), calls=calls)
    print_profile(rows, program)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--script", choices=("mlp", "cnn", "both"), default="both")
    parser.add_argument("--epochs", type=int, default=15)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--workers", type=int, default=0)
    parser.add_argument("--layers", action="store_true")
    parser.add_argument("--profile", action="store_true")
    arguments = parser.parse_args()
    torch.set_num_threads(arguments.threads)
    autojit.set_num_threads(arguments.threads)
    print(f"autojit {autojit.__version__}, torch {torch.__version__}, {arguments.threads} "
          f"thread(s), {os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}\n")
    if arguments.layers:
        compare_layers(max(arguments.rounds, 5))
        return
    if arguments.profile:
        profile_cnn_step()
        return
    if arguments.script in ("mlp", "both"):
        compare("mlp (synthetic data)", mlp_parts, synthetic(), arguments.epochs,
                arguments.rounds, arguments.workers)
    if arguments.script in ("cnn", "both"):
        compare("cnn (digits, augmented per sample)", cnn_parts, digits(), arguments.epochs,
                arguments.rounds, arguments.workers)


if __name__ == "__main__":
    main()
