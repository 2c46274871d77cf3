"""The native convolution routines side by side: vectorized over positions, vectorized over
channels (codegen/cpu/convolution/channels.py) and one gemm of gathered windows (gemm.py), per
product, and which one autojit takes.

    python bench/conv_routines.py            # the layers of docs/notes/convolution.md
    python bench/conv_routines.py --sweep    # 702 products: how far the choice is from the best
    python bench/conv_routines.py --resnet18 # a ResNet-18's layers at 64x64, on two threads
    python bench/conv_routines.py --models efficientnet_b0,convnext_atto [--threads 1]
        # every convolution of bench/models.py's models, as each step calls it: the chosen
        # routine against torch, per layer and summed per kind over the model's step

Microseconds per eager call on one thread (medians), float32; `*` marks the routine chosen
(gemm: "-" where it does not run here). The layers' table adds torch's time for the same product
(`conv2d`, and `aten.convolution_backward` asked for the one gradient), in the same process;
the models' table each layer's time with the gemm turned off (gemm.MODE).
"""

from __future__ import annotations

import argparse
import collections
import itertools
import statistics
import sys
import timeit
from pathlib import Path

import numpy as np

import autojit
from autojit.codegen.cpu import convolution as native
from autojit.codegen.cpu.convolution import channels, gemm

LAYERS = {  # name: (batch, in channels, out channels, size, stride)
    "16->32 3x3 on 4x4 (the end-to-end CNN's)": (64, 16, 32, 4, 1),
    "the same, batch 450 (its evaluation)": (450, 16, 32, 4, 1),
    "1->16 3x3 on 8x8 (the CNN's first)": (64, 1, 16, 8, 1),
    "64->64 3x3 on 8x8 (ResNet-8's)": (64, 64, 64, 8, 1),
    "32->32 3x3 on 16x16": (64, 32, 32, 16, 1),
    "32->64 3x3 stride 2 on 16x16": (64, 32, 64, 16, 2),
    "16->16 3x3 on 32x32": (64, 16, 16, 32, 1),
}
# A ResNet-18's 3x3 layers on 64x64 pictures, batch 8 (bench/models.py's): large weights on
# few pixels, `--resnet18` (two threads, as the models' steps run).
RESNET18 = {
    "64->64 3x3 on 16x16": (8, 64, 64, 16, 1),
    "128->128 3x3 on 8x8": (8, 128, 128, 8, 1),
    "256->256 3x3 on 4x4": (8, 256, 256, 4, 1),
    "256->512 3x3 stride 2 on 4x4": (8, 256, 512, 4, 2),
    "512->512 3x3 on 2x2": (8, 512, 512, 2, 1),
}


def products(batch: int, cin: int, cout: int, size: int, stride: int, spatial: int = 2,
             seed: int = 0) -> dict:
    """kind -> (operands, attrs) of the three products of a 3-wide, padding-1 convolution."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((batch, cin) + (size,) * spatial).astype(np.float32)
    w = rng.standard_normal((cout, cin) + (3,) * spatial).astype(np.float32)
    out = (size + 2 - 3) // stride + 1
    g = rng.standard_normal((batch, cout) + (out,) * spatial).astype(np.float32)
    attrs = {"stride": (stride,) * spatial, "padding": ((1, 1),) * spatial,
             "dilation": (1,) * spatial, "groups": 1}
    return {"forward": ((x, w), attrs),
            "input": ((g, w), {**attrs, "input_size": x.shape[2:]}),
            "weight": ((x, g), {**attrs, "kernel_size": w.shape[2:]})}


def _geometry(kind: str, operands: tuple, attrs: dict):
    return native.geometry(kind, operands[0].shape, operands[1].shape, native.attrs_key(attrs),
                           operands[0].dtype.str)


def timed(kind: str, operands: tuple, attrs: dict, number: int) -> dict:
    """{"positions": us, "channels": us, "gemm": us or None, "chosen": name} for one
    product."""
    found = {}
    try:
        for mode in ("positions", "channels", "gemm"):
            channels.MODE, gemm.MODE = (None, "gemm") if mode == "gemm" else (mode, None)
            native.geometry.cache_clear()
            if mode == "gemm" and not isinstance(_geometry(kind, operands, attrs),
                                                 gemm.GemmGeometry):
                found[mode] = None
                continue
            native.eager(kind, *operands, attrs)
            found[mode] = statistics.median(timeit.repeat(
                lambda: native.eager(kind, *operands, attrs), number=number, repeat=5)) / \
                number * 1e6
    finally:
        channels.MODE = gemm.MODE = None
        native.geometry.cache_clear()
    geometry = _geometry(kind, operands, attrs)
    found["chosen"] = "gemm" if isinstance(geometry, gemm.GemmGeometry) else \
        "channels" if isinstance(geometry, channels.ChannelGeometry) else "positions"
    return found


def mark(found: dict, mode: str) -> str:
    if found[mode] is None:
        return "-"
    return f"{found[mode]:,.0f}{' *' if found['chosen'] == mode else ''}"


def torch_timed(kind: str, operands: tuple, attrs: dict, number: int) -> float:
    """torch's microseconds for the same product (on as many threads as autojit's)."""
    import torch

    torch.set_num_threads(autojit.get_num_threads())
    spatial = len(attrs["stride"])
    stride, padding = list(attrs["stride"]), [lo for lo, _ in attrs["padding"]]
    dilation = list(attrs["dilation"])
    if kind == "forward":
        x, w = (torch.from_numpy(array) for array in operands)
        convolve = getattr(torch.nn.functional, f"conv{spatial}d")

        def run():
            convolve(x, w, stride=stride, padding=padding, dilation=dilation,
                     groups=attrs["groups"])
    else:
        if kind == "input":
            g, w = (torch.from_numpy(array) for array in operands)
            x = torch.zeros((g.shape[0], w.shape[1] * attrs["groups"], *attrs["input_size"]))
        else:
            x, g = (torch.from_numpy(array) for array in operands)
            w = torch.zeros((g.shape[1], x.shape[1] // attrs["groups"],
                             *attrs["kernel_size"]))
        wanted = [kind == "input", kind == "weight", False]

        def run():
            torch.ops.aten.convolution_backward(g, x, w, None, stride, padding, dilation,
                                                False, [0] * spatial, attrs["groups"],
                                                wanted)
    run()
    return statistics.median(timeit.repeat(run, number=number, repeat=5)) / number * 1e6


def layers(table: dict) -> None:
    print("| layer | product | positions us | channels us | gemm us | torch us |\n"
          "|---|---|---:|---:|---:|---:|")
    for name, shape in table.items():
        for kind, (operands, attrs) in products(*shape).items():
            found = timed(kind, operands, attrs, 20)
            print(f"| {name} | {kind} | {mark(found, 'positions')} | "
                  f"{mark(found, 'channels')} | {mark(found, 'gemm')} | "
                  f"{torch_timed(kind, operands, attrs, 20):,.0f} |")


def sweep() -> None:
    ratios = []
    for cin, cout, size, stride, spatial in itertools.product(
            (8, 16, 64), (16, 32, 64), (3, 4, 6, 8, 12), (1, 2), (1, 2, 3)):
        if spatial == 3 and size > 6:
            continue
        for kind, (operands, attrs) in products(32, cin, cout, size, stride, spatial).items():
            found = timed(kind, operands, attrs, 10)
            best = min(value for value in (found["positions"], found["channels"],
                                           found["gemm"]) if value is not None)
            ratios.append(found[found["chosen"]] / best)
            print(f"{cin}->{cout} {spatial}-d {size} s{stride} {kind}: positions "
                  f"{mark(found, 'positions')}, channels {mark(found, 'channels')}, "
                  f"gemm {mark(found, 'gemm')}, "
                  f"chosen / best {ratios[-1]:.2f}", flush=True)
    print(f"{len(ratios)} products: chosen / best median {statistics.median(ratios):.2f}, "
          f"worst {max(ratios):.2f}, {sum(r > 1.1 for r in ratios)} above 1.1")


def model_layers(names: list) -> collections.Counter:
    """{(input shape, weight shape, stride, padding, dilation, groups): calls per step} of the
    2-d convolutions of bench/models.py's models (their forward run once in torch)."""
    import torch

    sys.path.insert(0, str(Path(__file__).parent))
    import models

    keep = models._define_torchvision_operators(torch)  # noqa: F841 - kept alive
    found = collections.Counter()

    def hook(module, inputs, output):
        found[(tuple(inputs[0].shape), tuple(module.weight.shape), module.stride,
               module.padding, module.dilation, module.groups)] += 1

    for name in names:
        torch.manual_seed(0)
        model, batch, _ = models.build(name, torch)
        for module in model.modules():
            if isinstance(module, torch.nn.Conv2d):
                module.register_forward_hook(hook)
        model(batch(torch.Generator().manual_seed(1))[0])
    return found


def models_table(names: list) -> None:
    """Each layer's three products (the chosen routine, eager calls; microseconds, the median
    of five rounds of five calls) against torch's, and the totals per kind weighted by the
    calls per step."""
    import torch

    torch.set_num_threads(autojit.get_num_threads())
    totals = collections.Counter()
    print("| calls | input -> weight, stride, padding, groups | routine | forward us | input us "
          "| weight us |\n|---:|---|---|---:|---:|---:|")
    print("(each cell: autojit / torch, and autojit without the gemm where it is chosen)")
    for (x_shape, w_shape, stride, padding, dilation, groups), calls in \
            model_layers(names).items():
        rng = np.random.default_rng(0)
        x = rng.standard_normal(x_shape).astype(np.float32)
        w = rng.standard_normal(w_shape).astype(np.float32)
        y = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), stride=stride,
                                       padding=padding, dilation=dilation, groups=groups)
        g = rng.standard_normal(tuple(y.shape)).astype(np.float32)
        attrs = {"stride": stride, "padding": tuple((p, p) for p in padding),
                 "dilation": dilation, "groups": groups}
        operands = {"forward": ((x, w), attrs),
                    "input": ((g, w), {**attrs, "input_size": x_shape[2:]}),
                    "weight": ((x, g), {**attrs, "kernel_size": w_shape[2:]})}
        cells = []
        for kind, (pair, kind_attrs) in operands.items():
            def run(k=kind, p=pair, a=kind_attrs):
                return statistics.median(timeit.repeat(
                    lambda: native.eager(k, *p, a), number=5, repeat=5)) / 5e-6

            ours = run()
            theirs = torch_timed(kind, pair, kind_attrs, 5)
            totals[kind, "autojit"] += ours * calls
            totals[kind, "torch"] += theirs * calls
            cell = f"{ours:,.0f} / {theirs:,.0f}"
            if isinstance(_geometry(kind, pair, kind_attrs), gemm.GemmGeometry):
                try:
                    gemm.MODE = "off"
                    native.geometry.cache_clear()
                    without = run()
                finally:
                    gemm.MODE = None
                    native.geometry.cache_clear()
                totals[kind, "without"] += without * calls
                cell += f" ({without:,.0f})"
            else:
                totals[kind, "without"] += ours * calls
            cells.append(cell)
        routine = type(native.geometry("forward", x_shape, w_shape, native.attrs_key(attrs),
                                       "<f4")).__name__
        print(f"| {calls} | {x_shape} -> {w_shape}, {stride[0]}, {padding[0]}, {groups} | "
              f"{routine} | {' | '.join(cells)} |", flush=True)
    for kind in ("forward", "input", "weight"):
        print(f"{kind}: autojit {totals[kind, 'autojit'] / 1e3:.2f} ms (without the gemm "
              f"{totals[kind, 'without'] / 1e3:.2f}), torch {totals[kind, 'torch'] / 1e3:.2f} ms "
              "a step")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sweep", action="store_true")
    parser.add_argument("--resnet18", action="store_true")
    parser.add_argument("--models", help="bench/models.py's models, comma-separated")
    parser.add_argument("--threads", type=int)
    arguments = parser.parse_args()
    threads = arguments.threads or (2 if arguments.resnet18 or arguments.models else 1)
    autojit.set_num_threads(threads)
    print(f"autojit {autojit.__version__}, {threads} thread(s), float32, wide tiles: "
          f"{native.wide()}\n")
    if arguments.models:
        models_table(arguments.models.split(","))
    elif arguments.sweep:
        sweep()
    else:
        layers(RESNET18 if arguments.resnet18 else LAYERS)


if __name__ == "__main__":
    main()
