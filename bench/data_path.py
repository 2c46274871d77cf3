"""The eager data path against torch: indexing, small layout ops, collation and DataLoader.

Every row runs the same operation with autojit and with torch in one process, the two taking
turns (`timing.interleaved_medians`), and prints the median wall time of each, their ratio,
and the ratio of the calling thread's CPU time, which a shared machine's other work disturbs
less (not given where worker processes do the work).
Four groups:
- indexing of a (1000, 64) float32 tensor and a (1000,) int64 one (ints, slices, None,
  Ellipsis and their combinations), and the small ops a training script runs between its
  steps (view, reshape, unsqueeze, squeeze, cat and stack of small tensors, item, tolist,
  comparisons), each on tensors of at most 64 elements, timed per call;
- the per-sample ops of bench/end_to_end.py's augmenting Dataset (a random shift by padding
  and cropping, a random flip, Gaussian noise; the flip and the noise also of a strided
  (1, 8, 8) crop of the padded (1, 10, 10) image, as the script runs them), one by one and
  together, per call;
- `default_collate` of 64 (sample, label) pairs, per batch;
- one DataLoader epoch (batch 64, shuffled) over 1,000 samples, per sample: a TensorDataset,
  a user Dataset returning tensors, one returning NumPy arrays, a random_split Subset, and
  the user Dataset again with two worker processes (persistent, so that an epoch does not
  count their start).
Usage:

    python bench/data_path.py [--rounds 7] [--only SUBSTRING] [--small-ops]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "src"))
sys.path.insert(0, HERE)

import torch  # noqa: E402
import torch.utils.data as torch_data  # noqa: E402
from timing import interleaved_medians  # noqa: E402

import autojit  # noqa: E402
import autojit.utils.data as autojit_data  # noqa: E402

ROWS, FEATURES, BATCH = 1000, 64, 64


class Pairs:
    """A user's map-style Dataset: the index-th row of `x` and label of `y`."""

    def __init__(self, x, y):
        self.x, self.y = x, y

    def __len__(self):
        return len(self.x)

    def __getitem__(self, index):
        return self.x[index], self.y[index]


class AutojitPairs(Pairs, autojit_data.Dataset):
    pass


class TorchPairs(Pairs, torch_data.Dataset):
    pass


def tensors(module):
    rng = np.random.default_rng(0)
    x = rng.standard_normal((ROWS, FEATURES)).astype(np.float32)
    y = rng.integers(0, 10, ROWS)
    small = rng.standard_normal(64).astype(np.float32)
    return {"x": module.from_numpy(x), "y": module.from_numpy(y),
            "small": module.from_numpy(small), "other": module.from_numpy(small[::-1].copy()),
            "matrix": module.from_numpy(small.reshape(8, 8)),
            "column": module.from_numpy(small[:8].reshape(8, 1)),
            "scalar": module.from_numpy(small[:1].reshape(())),
            "pieces": [module.from_numpy(small[i:i + 16]) for i in range(0, 64, 16)]}


def op_cases(module):
    """name -> a call of one small op (per call)."""
    t = tensors(module)
    x, y, small, other = t["x"], t["y"], t["small"], t["other"]
    matrix, column, scalar, pieces = t["matrix"], t["column"], t["scalar"], t["pieces"]
    return {
        "x[i]": lambda: x[517],
        "x[-i]": lambda: x[-3],
        "y[i] (0-d int64)": lambda: y[517],
        "x[i, j]": lambda: x[517, 9],
        "x[i:j]": lambda: x[100:164],
        "x[:, j]": lambda: x[:, 9],
        "x[None]": lambda: x[None],
        "x[..., j]": lambda: x[..., 9],
        "x[i, None, ::2]": lambda: x[517, None, ::2],
        "x[i:j, 1:-1]": lambda: x[100:164, 1:-1],
        "view(-1)": lambda: matrix.view(-1),
        "reshape(4, 16)": lambda: small.reshape(4, 16),
        "unsqueeze(0)": lambda: small.unsqueeze(0),
        "squeeze(1)": lambda: column.squeeze(1),
        "squeeze()": lambda: column.squeeze(),
        "flatten()": lambda: matrix.flatten(),
        "cat of 4 (16,)": lambda: module.cat(pieces),
        "stack of 4 (16,)": lambda: module.stack(pieces),
        "item()": lambda: scalar.item(),
        "tolist() of (64,)": lambda: small.tolist(),
        "x > 0": lambda: small > 0,
        "x == y": lambda: small == other,
        "x < y": lambda: small < other,
    }


def augmentation_cases(module):
    """name -> one of the per-sample ops of bench/end_to_end.py's augmenting Dataset, and
    the whole __getitem__ (per call)."""
    functional = module.nn.functional
    image = module.from_numpy(np.random.default_rng(0).random((1, 8, 8), dtype=np.float32))
    padded = functional.pad(image, (1, 1, 1, 1))
    crop = padded[:, 1:9, 0:8]  # the script flips and adds noise to such a strided crop

    def augment():
        top, left = module.randint(0, 3, (2,)).tolist()
        shifted = functional.pad(image, (1, 1, 1, 1))[:, top:top + 8, left:left + 8]
        if module.rand(()).item() < 0.5:
            shifted = shifted.flip(-1)
        return shifted + 0.05 * module.randn_like(shifted)

    return {
        "randint(0, 3, (2,)).tolist()": lambda: module.randint(0, 3, (2,)).tolist(),
        "pad(image, (1, 1, 1, 1))": lambda: functional.pad(image, (1, 1, 1, 1)),
        "crop padded[:, 1:9, 0:8]": lambda: padded[:, 1:9, 0:8],
        "rand(()).item()": lambda: module.rand(()).item(),
        "flip(-1)": lambda: image.flip(-1),
        "flip(-1) of the crop": lambda: crop.flip(-1),
        "randn_like(image)": lambda: module.randn_like(image),
        "randn_like(crop)": lambda: module.randn_like(crop),
        "image + 0.05 * noise": lambda: image + 0.05 * padded[:, 1:9, 1:9],
        "the whole augmentation": augment,
    }


def collate_cases(module, data):
    t = tensors(module)
    x, y = t["x"], t["y"]
    with_tensor = [(x[i], y[i]) for i in range(BATCH)]
    with_int = [(x[i], int(y[i])) for i in range(BATCH)]
    with_array = [(x[i].numpy(), int(y[i])) for i in range(BATCH)]
    return {
        "collate 64 (row, 0-d label)": lambda: data.default_collate(with_tensor),
        "collate 64 (row, int label)": lambda: data.default_collate(with_int),
        "collate 64 (ndarray row, int)": lambda: data.default_collate(with_array),
    }


def loader_cases(module, data, pairs, workers: bool):
    t = tensors(module)
    x, y = t["x"], t["y"]
    seed = module.Generator().manual_seed(0) if module is torch else np.random.default_rng(0)

    def loader(dataset, **extra):
        return data.DataLoader(dataset, batch_size=BATCH, shuffle=True, generator=seed, **extra)

    def epoch(batches):
        def run():
            for _ in batches:
                pass
        return run

    if workers:
        return {"user Dataset, 2 workers": epoch(loader(
            pairs(x, y), num_workers=2, persistent_workers=True))}
    subset, _ = data.random_split(data.TensorDataset(x, y), [800, 200], generator=seed)
    return {
        "TensorDataset": epoch(loader(data.TensorDataset(x, y))),
        "user Dataset (tensors)": epoch(loader(pairs(x, y))),
        "user Dataset (ndarrays)": epoch(loader(pairs(x.numpy(), y.numpy()))),
        "random_split Subset": epoch(loader(subset)),
    }


def compare(title: str, unit: str, scale: float, ours: dict, theirs: dict, rounds: int,
            steps: int, only: str | None, cpu: bool = True) -> None:
    """One table: wall time of each library and their ratio, and with `cpu` the ratio of the
    calling thread's CPU time (on a shared machine, what the call computed rather than
    waited for a core; not for work done in worker processes)."""
    print(f"{title}\n| operation | autojit {unit} | torch {unit} | ratio | CPU time ratio |\n"
          "|---|---:|---:|---:|---:|")
    for name in ours:
        if only and only not in name:
            continue
        thread = {}
        medians = interleaved_medians({"autojit": ours[name], "torch": theirs[name]},
                                      rounds=rounds, steps=steps, cpu=thread)
        mine, reference = medians["autojit"] * scale, medians["torch"] * scale
        ratio = f"{thread['autojit'] / thread['torch']:.2f}x" if cpu else "-"
        print(f"| {name} | {mine:,.2f} | {reference:,.2f} | {mine / reference:.2f}x | {ratio} |")
    print()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=7)
    parser.add_argument("--only", default=None, help="run the rows whose name holds this")
    parser.add_argument("--small-ops", action="store_true", help="only the small ops' table")
    arguments = parser.parse_args()
    torch.set_num_threads(1)
    autojit.set_num_threads(1)
    print(f"autojit {autojit.__version__}, torch {torch.__version__}, "
          f"{os.cpu_count()} cores, {time.strftime('%Y-%m-%d')}\n")
    compare("Small ops (per call)", "us", 1e6, op_cases(autojit), op_cases(torch),
            arguments.rounds, 2000, arguments.only)
    if arguments.small_ops:
        return
    compare("Augmentation of a (1, 8, 8) image (per call)", "us", 1e6,
            augmentation_cases(autojit), augmentation_cases(torch), arguments.rounds, 500,
            arguments.only)
    compare("Collation (per batch)", "us", 1e6, collate_cases(autojit, autojit_data),
            collate_cases(torch, torch_data), arguments.rounds, 50, arguments.only)
    for workers in (False, True):
        compare(f"DataLoader epoch of {ROWS} samples, batch {BATCH}, shuffled (per sample)"
                + (", workers" if workers else ""), "us", 1e6 / ROWS,
                loader_cases(autojit, autojit_data, AutojitPairs, workers),
                loader_cases(torch, torch_data, TorchPairs, workers), arguments.rounds,
                1 if workers else 3, arguments.only, cpu=not workers)


if __name__ == "__main__":
    main()
