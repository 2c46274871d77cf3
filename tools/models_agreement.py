"""Do the library models train to torch's numbers on autojit? A check run by hand, with the
libraries installed (transformers, timm, torchvision: docs/drop-in.md's "The library models'
numbers"), not by the test suite, whose environment does not install them.

Each model of bench/models.py (and `vit_tiny`, torchvision's `mobilenet_v3_small`) is made in
float64 by torch, which saves its weights and a few batches; then torch and autojit (through
the drop-in) each train it three AdamW steps from those weights on those batches, each in a
process of its own, in three forms on autojit: eager, the whole step compiled
(`torch.compile(step)`) and `torch.compile(model)` with the loss, backward and optimizer outside.
Printed per model and form: the largest difference of the three losses, and the largest
difference of a parameter's gradient (at the last step) relative to that gradient's largest
magnitude, as docs/drop-in.md's table of transformers' models gives them; gradients that are
rounding noise around an exact zero (`NOISE`) are left out and counted.

    python tools/models_agreement.py [--models resnet18_timm,vit_tiny] [--steps 3]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "bench"))

FORMS = ("eager", "compiled step", "compiled model")
EXTRA = ("vit_tiny", "mobilenet_v3_small_torchvision")


def _build(name: str, torch):
    """(model, batch maker, loss) of bench/models.py, or of the extra vision models."""
    import models

    if name not in EXTRA:
        return models.build(name, torch)
    if name == "vit_tiny":
        import timm

        model = timm.create_model("vit_tiny_patch16_224", num_classes=10, img_size=64,
                                  drop_rate=0.0)
    else:
        import torchvision

        model = torchvision.models.mobilenet_v3_small(num_classes=10, dropout=0.0)

    def batch(generator):
        return (torch.randn(*models.IMAGES, generator=generator),
                torch.randint(0, 10, (models.IMAGES[0],), generator=generator))

    def loss(model, inputs):
        return torch.nn.functional.cross_entropy(model(inputs[0]), inputs[1])

    return model, batch, loss


def train(name: str, framework: str, form: str, steps: int, folder: str) -> None:
    """Train `name` in this process and save its losses and last gradients to `folder`."""
    if framework == "autojit":
        import autojit.drop_in

        autojit.drop_in.install()
    import models
    import torch

    _keep = models._define_torchvision_operators(torch)  # noqa: F841 - kept alive
    torch.manual_seed(0)
    model, batch, loss_of = _build(name, torch)
    model = model.double()
    weights = os.path.join(folder, "weights.pt")
    batches_file = os.path.join(folder, "batches.npz")
    if framework == "torch":
        torch.save(model.state_dict(), weights)
        generator = torch.Generator().manual_seed(1)
        made = [batch(generator) for _ in range(steps)]
        np.savez(batches_file, **{f"{step}_{index}": value.numpy()
                                  for step, inputs in enumerate(made)
                                  for index, value in enumerate(inputs)})
    else:
        model.load_state_dict(torch.load(weights))
    stored = np.load(batches_file)
    batches = []
    for step in range(steps):
        inputs = []
        for index in range(4):
            key = f"{step}_{index}"
            if key not in stored:
                break
            value = torch.from_numpy(stored[key].copy())
            inputs.append(value.double() if value.is_floating_point() else value)
        batches.append(tuple(inputs))
    step_of = models.training_step(torch, model, loss_of, form)
    losses = [float(step_of(*inputs)) for inputs in batches]
    grads = {f"grad:{key}": parameter.grad.detach().numpy().copy()
             for key, parameter in model.named_parameters() if parameter.grad is not None}
    np.savez(os.path.join(folder, f"{framework}-{form}.npz"), losses=np.array(losses), **grads)


# A gradient whose largest magnitude is below this fraction of the model's largest is rounding
# noise around an exact zero (a BatchNorm's bias whose output feeds another BatchNorm through a
# linear map: the next normalization removes any shift), whose relative difference means
# nothing; it is left out of the comparison, and counted.
NOISE = 1e-9


def compare(reference: dict, other: dict) -> tuple:
    """(largest loss difference, largest relative gradient difference, the parameter, the
    number of gradients left out as rounding noise around zero)."""
    loss = float(np.max(np.abs(reference["losses"] - other["losses"])))
    worst, where, noise = 0.0, None, 0
    grads = [key for key in reference if key.startswith("grad:")]
    largest = max(float(np.max(np.abs(reference[key]))) for key in grads)
    for key in grads:
        if key not in other:
            return loss, float("inf"), key[5:] + " (no gradient)", noise
        scale = float(np.max(np.abs(reference[key])))
        if scale <= NOISE * largest:
            noise += 1
            continue
        difference = float(np.max(np.abs(reference[key] - other[key]))) / scale
        if difference > worst:
            worst, where = difference, key[5:]
    return loss, worst, where, noise


def main(argv=None) -> int:
    import models

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--models", default=",".join(models.MODELS + EXTRA))
    parser.add_argument("--steps", type=int, default=3)
    parser.add_argument("--worker", nargs=3, metavar=("MODEL", "FRAMEWORK", "FORM"))
    parser.add_argument("--folder")
    args = parser.parse_args(argv)
    if args.worker:
        train(*args.worker, args.steps, args.folder)
        return 0
    rows = []
    for name in args.models.split(","):
        with tempfile.TemporaryDirectory() as folder:
            results = {}
            for framework, form in [("torch", "eager")] + [("autojit", f) for f in FORMS]:
                done = subprocess.run([sys.executable, __file__, "--worker", name, framework,
                                       form, "--steps", str(args.steps), "--folder", folder],
                                      capture_output=True, text=True)
                if done.returncode:
                    results[form if framework == "autojit" else "torch"] = \
                        done.stderr.strip().splitlines()[-1][:120]
                    continue
                results[form if framework == "autojit" else "torch"] = dict(
                    np.load(os.path.join(folder, f"{framework}-{form}.npz")))
            reference = results["torch"]
            row = {"model": name}
            for form in FORMS:
                got = results.get(form)
                if isinstance(reference, str) or isinstance(got, str):
                    row[form] = f"failed: {got if isinstance(got, str) else reference}"
                else:
                    loss, grad, where, noise = compare(reference, got)
                    left = f"; {noise} at zero left out" if noise else ""
                    row[form] = f"{loss:.1e}, {grad:.1e} ({where}{left})"
            rows.append(row)
            print(json.dumps(row), flush=True)
    print("\n| model | eager: loss, gradients | step compiled | model compiled |")
    print("| --- | --- | --- | --- |")
    for row in rows:
        print(f"| {row['model']} | " + " | ".join(row[form] for form in FORMS) + " |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
