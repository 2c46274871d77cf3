"""The models people train, from the libraries they get them from, as training steps: autojit
(through the drop-in) eager, its whole step compiled and `torch.compile(model)` with the loss,
backward and optimizer outside, against torch eager and torch.compile on the same machine.

Models (small configurations, float32): transformers' GPT-2, BERT, Llama, T5 and ViT; timm's
resnet18, convnext_atto, efficientnet_b0 and mobilenetv3_small; torchvision's resnet18; and, named
alone (`--models gpt2_small`, seconds a step), GPT-2 small itself: 124M parameters, 12 layers of
width 768, a batch of 4 x 256 tokens. A step
is the forward, a cross-entropy loss, backward and an AdamW update; each model starts from the
same weights in every framework (a state dict saved by torch's run, loaded by autojit's).

Each (framework, model) runs in a process of its own: the first two calls are timed cold
(`first`: a fresh process; autojit's kernel cache is the user's), then `--steps` calls, of
which the median is reported (wall clock, and the process's CPU time: on a shared machine,
`--threads 1` and the CPU column are the steadier comparison), and the process's peak resident
memory. torch.compile's forms run with `--torch-compile` (slow to compile on CPU); `--forms`
picks autojit's. Run it with the libraries installed:

    python bench/models.py [--models gpt2,resnet18_timm] [--steps 10] [--torch-compile]
                           [--forms eager] [--threads 1] [--against OTHER/src] [--cold]

`--cold` gives each autojit process an empty kernel cache of its own: its first two calls are
then a new user's (the first runs eagerly and compiles the native routines it needs, the second
traces and compiles the step's kernels).

torchvision's wheels are CUDA builds whose `_C` extension cannot load beside a CPU torch: its
two operators are defined as Python stubs first (transformers imports torchvision too), as the
models do not call them; under the drop-in, whose own versions of torchvision's operators
(drop_in/torchvision_ops.py) need none, the stubs stand for those two, as the same code runs
for both frameworks (and for an older tree given with --against). Figures:
docs/performance.md ("The library models").
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time

MODELS = ("gpt2", "bert", "llama", "t5", "vit", "resnet18_timm", "convnext_atto",
          "efficientnet_b0", "mobilenetv3_small_100", "resnet18_torchvision")
TOKENS = (4, 64)  # batch, sequence length of the text models
LARGE = {"gpt2_small": (4, 256)}  # models run only when named, with their batch of tokens
IMAGES = (8, 3, 64, 64)  # batch of images of the vision models


def _define_torchvision_operators(torch) -> None:
    library = torch.library.Library("torchvision", "DEF")
    library.define("nms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    library.define("qnms(Tensor dets, Tensor scores, float iou_threshold) -> Tensor")
    return library


def build(name: str, torch):
    """(model, batch maker, loss of the model's output) for `name`."""
    if name == "gpt2_small":
        import transformers as hf

        vocabulary = hf.GPT2Config().vocab_size
        model = hf.GPT2LMHeadModel(hf.GPT2Config(attn_pdrop=0.0, resid_pdrop=0.0,
                                                 embd_pdrop=0.0))

        def batch(generator):
            return (torch.randint(0, vocabulary, LARGE[name], generator=generator),)

        def loss(model, inputs):
            return model(input_ids=inputs[0], labels=inputs[0]).loss

        return model, batch, loss
    if name in ("gpt2", "bert", "llama", "t5", "vit"):
        import transformers as hf

        small = dict(hidden_size=128, num_hidden_layers=2, num_attention_heads=4,
                     intermediate_size=256, vocab_size=1000)
        no_dropout = dict(hidden_dropout_prob=0.0, attention_probs_dropout_prob=0.0)
        if name == "gpt2":
            model = hf.GPT2LMHeadModel(hf.GPT2Config(
                n_layer=2, n_embd=128, n_head=4, vocab_size=1000, n_positions=128,
                attn_pdrop=0.0, resid_pdrop=0.0, embd_pdrop=0.0))
        elif name == "bert":
            model = hf.BertForMaskedLM(hf.BertConfig(**small, **no_dropout))
        elif name == "llama":
            model = hf.LlamaForCausalLM(hf.LlamaConfig(**small, num_key_value_heads=2))
        elif name == "t5":
            model = hf.T5ForConditionalGeneration(hf.T5Config(
                vocab_size=1000, d_model=128, d_kv=32, d_ff=256, num_layers=2, num_heads=4,
                dropout_rate=0.0, decoder_start_token_id=0))
        else:
            config = {key: value for key, value in small.items() if key != "vocab_size"}
            model = hf.ViTForImageClassification(hf.ViTConfig(
                **config, **no_dropout, image_size=64, patch_size=8, num_labels=10))
        if name == "vit":
            def batch(generator):
                return (torch.randn(*IMAGES, generator=generator),
                        torch.randint(0, 10, (IMAGES[0],), generator=generator))

            def loss(model, inputs):
                return model(pixel_values=inputs[0], labels=inputs[1]).loss
        else:
            def batch(generator):
                return (torch.randint(0, 1000, TOKENS, generator=generator),)

            def loss(model, inputs):
                return model(input_ids=inputs[0], labels=inputs[0]).loss
        return model, batch, loss
    if name == "resnet18_torchvision":
        import torchvision

        model = torchvision.models.resnet18(num_classes=10)
    else:
        import timm

        model = timm.create_model(name.replace("_timm", ""), num_classes=10, drop_rate=0.0)

    def batch(generator):
        return (torch.randn(*IMAGES, generator=generator),
                torch.randint(0, 10, (IMAGES[0],), generator=generator))

    def loss(model, inputs):
        return torch.nn.functional.cross_entropy(model(inputs[0]), inputs[1])

    return model, batch, loss


def training_step(torch, model, loss_of, form: str):
    """The model's training step (forward, loss, backward, AdamW) in `form`: "eager",
    "compiled step" (`torch.compile(step)`) or "compiled model" (`torch.compile(model)`, the
    rest outside); the model is put in training mode."""
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-3)
    runner = torch.compile(model) if form == "compiled model" else model

    def step(*inputs):
        optimizer.zero_grad()
        loss = loss_of(runner, inputs)
        loss.backward()
        optimizer.step()
        return loss.detach()

    return torch.compile(step) if form == "compiled step" else step


def run(name: str, framework: str, form: str, steps: int, weights: str,
        threads: int | None = None) -> dict:
    """One (model, framework, form) in this process: the first two calls' seconds, the median
    of `steps` more (wall clock, and the process's CPU time), the peak resident memory, and the
    last loss; on `threads` threads where given."""
    if framework == "autojit":
        import autojit.drop_in

        autojit.drop_in.install()
    import torch

    if threads:
        torch.set_num_threads(threads)
    # (transformers imports torchvision too, where installed)
    _keep = _define_torchvision_operators(torch)  # noqa: F841 - the library stays alive
    torch.manual_seed(0)
    model, batch, loss_of = build(name, torch)
    if framework == "torch":
        torch.save(model.state_dict(), weights)
    else:
        model.load_state_dict(torch.load(weights))
    step = training_step(torch, model, loss_of, form)
    generator = torch.Generator().manual_seed(1)
    batches = [batch(generator) for _ in range(4)]
    first = []
    for index in range(2):
        start = time.perf_counter()
        float(step(*batches[index]))
        first.append(time.perf_counter() - start)
    times, cpu = [], []
    for index in range(steps):
        start, start_cpu = time.perf_counter(), time.process_time()
        loss = float(step(*batches[index % len(batches)]))
        times.append(time.perf_counter() - start)
        cpu.append(time.process_time() - start_cpu)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # MiB (kilobytes)
    return {"first": first, "median": statistics.median(times), "peak_mib": peak,
            "loss": loss, "cpu": statistics.median(cpu)}


FORMS = {"torch": ("eager", "compiled model"), "autojit": ("eager", "compiled step",
                                                           "compiled model")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--torch-compile", action="store_true",
                        help="also time torch.compile(model) (minutes of compiling on CPU)")
    parser.add_argument("--forms", help="only these forms (comma-separated: eager, compiled "
                        "step, compiled model), torch eager always")
    parser.add_argument("--threads", type=int,
                        help="torch.set_num_threads in each process (both libraries)")
    parser.add_argument("--against", metavar="SRC",
                        help="also time autojit's forms from another source tree (its src/ "
                        "folder, first on PYTHONPATH), each right after this tree's")
    parser.add_argument("--cold", action="store_true",
                        help="each autojit process with an empty kernel cache of its own (its "
                        "first calls compile every kernel), not the user's")
    parser.add_argument("--one", nargs=3, metavar=("MODEL", "FRAMEWORK", "FORM"),
                        help=argparse.SUPPRESS)
    parser.add_argument("--weights", help=argparse.SUPPRESS)
    options = parser.parse_args()
    if options.one:
        print(json.dumps(run(*options.one, options.steps, options.weights, options.threads)))
        return
    rows = []
    for name in options.models.split(","):
        weights = os.path.join(tempfile.mkdtemp(), f"{name}.pt")
        found = {}
        for framework, forms in FORMS.items():
            for form in forms:
                if framework == "torch" and form != "eager" and not options.torch_compile:
                    continue
                if options.forms and (framework, form) != ("torch", "eager") and \
                        form not in options.forms.split(","):
                    continue
                threads = ["--threads", str(options.threads)] if options.threads else []
                trees = {framework: None}
                if framework == "autojit" and options.against:
                    trees["autojit (against)"] = options.against
                for label, tree in trees.items():
                    environment = dict(os.environ)
                    if options.cold and framework == "autojit":
                        environment["AUTOJIT_CACHE_DIR"] = tempfile.mkdtemp()
                    if tree is not None:
                        environment["PYTHONPATH"] = os.pathsep.join(
                            [tree, *filter(None, [environment.get("PYTHONPATH")])])
                    done = subprocess.run(
                        [sys.executable, __file__, "--one", name, framework, form, "--steps",
                         str(options.steps), "--weights", weights, *threads],
                        capture_output=True, text=True, timeout=3600, env=environment)
                    if done.returncode != 0:
                        found[(label, form)] = {"error": done.stderr.strip().splitlines()[-1]}
                    else:
                        found[(label, form)] = json.loads(done.stdout.strip().splitlines()[-1])
        base = found[("torch", "eager")]
        for (framework, form), figures in found.items():
            if "error" in figures:
                rows.append(f"| {name} | {framework} {form} | {figures['error'][:60]} | | | | |")
                continue
            ratio = figures["median"] / base["median"] if "median" in base else float("nan")
            cpu = figures["cpu"] / base["cpu"] if "cpu" in base else float("nan")
            rows.append(f"| {name} | {framework} {form} | {figures['median'] * 1e3:.1f} ms | "
                        f"{ratio:.2f}x | {cpu:.2f}x | {figures['first'][0]:.2f} s, "
                        f"{figures['first'][1]:.2f} s | {figures['peak_mib']:.0f} MiB |")
        print("\n".join(rows[-len(found):]), flush=True)
    print("\n| model | form | median step | / torch eager | CPU / torch's | first two calls | "
          "peak RSS |")
    print("|---|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
