"""DataLoader throughput with worker processes: samples per second for num_workers 0, 1, 2, 4.

The dataset's `__getitem__` costs 1 ms and returns a 3x32x32 float32 image and an int label,
collated into batches of 32; one epoch is 512 samples. Two kinds of cost:
- "wait": time.sleep(0.001), like reading a file or a network response (the process idles);
- "compute": 1 ms of the process's CPU time in Python arithmetic, like decoding or augmenting,
  which more workers speed up only as far as there are free cores (the main process needs
  some too, to receive and collate the batches).
Each figure is the best of `--repeats` epochs, after one warm-up epoch that also starts the
(persistent) workers, so process start-up is not counted; the last column is the speed-up
over num_workers=0. Usage:

    python bench/dataloader_workers.py [--repeats 3] [--workers 0 1 2 4]
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src"))

from autojit.utils.data import DataLoader, Dataset  # noqa: E402

SAMPLES, BATCH = 512, 32


class Images(Dataset):
    def __init__(self, kind: str):
        self.kind = kind
        self.image = np.random.default_rng(0).standard_normal((3, 32, 32)).astype(np.float32)

    def __len__(self):
        return SAMPLES

    def __getitem__(self, index):
        if self.kind == "wait":
            time.sleep(0.001)
        else:
            deadline = time.process_time() + 0.001  # 1 ms of this process's own CPU time
            total = 0
            while time.process_time() < deadline:
                total += 1
        return self.image + index, index % 10


def epoch_seconds(loader: DataLoader) -> float:
    start = time.perf_counter()
    for _images, _labels in loader:
        pass
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--workers", type=int, nargs="+", default=[0, 1, 2, 4])
    arguments = parser.parse_args()
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(f"{SAMPLES} samples of 1 ms each, batch {BATCH}, {cores} cores")
    print("| cost | num_workers | samples/s | speed-up |")
    print("|---|---:|---:|---:|")
    for kind in ("wait", "compute"):
        baseline = None
        for workers in arguments.workers:
            extra = {"persistent_workers": True} if workers else {}
            loader = DataLoader(Images(kind), batch_size=BATCH, num_workers=workers, **extra)
            epoch_seconds(loader)  # warm-up: starts the workers
            best = min(epoch_seconds(loader) for _ in range(arguments.repeats))
            rate = SAMPLES / best
            baseline = baseline or rate
            print(f"| {kind} | {workers} | {rate:,.0f} | {rate / baseline:.2f}x |")
            del loader


if __name__ == "__main__":
    import warnings

    warnings.simplefilter("ignore")  # more workers than cores is the point of one row
    main()
