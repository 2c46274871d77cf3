"""Write the runs that docs/examples.md quotes, and check the page against the code.

    python tools/examples_page.py                 # run each quoted example, rewrite its block
    python tools/examples_page.py lstm_forecast   # only the named examples' blocks
    python tools/examples_page.py --check         # exit 1 (and say why) when a block is stale

Every figure of docs/examples.md (accuracies, losses, kernel counts, sizes, run times, speeds
and their ratios) is in a block this script writes, between `<!-- run: NAME -->` and
`<!-- /run -->`: a caption with the command, how long the whole run took, the cores and the
machine's load when it started, then the lines of the example's output that the page
discusses. Each example runs as a user runs it (`python examples/NAME.py`, full settings), in
a fresh process with an empty kernel cache, as a first run. The prose around the blocks gives
no figure of its own.

A full run takes minutes, so `--check` (and tests/test_examples_page.py, which runs the same
checks) does not run them again. It recomputes what needs no training and compares it with
what the blocks recorded: the kernel count and parameter count of the flagship's step, the
data sizes, the gradient-penalty step's kernels and IR lines, the character model's size and
the docs' length (within 10%: the text is the docs, which change), and the settings the prose
quotes (model sizes, the bars the exit status checks). It also checks that every
comparing run recorded a compiled step faster than the eager one, and that the README's and
docs/index.md's sentence about the flagship ("about N% test accuracy in a few seconds") agrees
with the flagship's block. A block that fails a check is stale: run this script again.
"""

from __future__ import annotations

import argparse
import functools
import os
import re
import subprocess
import sys
import tempfile
import textwrap
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PAGE = ROOT / "docs" / "examples.md"
CLAIM_PAGES = [ROOT / "README.md", ROOT / "docs" / "index.md"]
BLOCK = re.compile(r"<!-- run: (\w+) -->\n(.*?)<!-- /run -->\n", re.DOTALL)
CLAIM = re.compile(r"about (\d+)% test accuracy in a few seconds")
FEW_SECONDS = 10.0  # what the README's "in a few seconds" allows the flagship's training


@dataclass
class Run:
    """Which lines of an example's output its block keeps: those starting with a prefix, and
    the first `sample_lines` lines after a line `sample:`."""

    prefixes: tuple
    sample_lines: int = 0


ALWAYS = ("note:", "FAILED")
RUNS = {  # in the page's order
    "digits_mlp": Run(("data:", "test accuracy:", "time per epoch:", "compilation:", "speed:",
                       "ok:")),
    "digits_cnn": Run(("test accuracy:", "time per epoch:", "correct per digit:", "ok:")),
    "char_transformer": Run(("text:", "model:", "step 1500/", "validation loss:", "speed:",
                             "ok:"), sample_lines=4),
    "lstm_forecast": Run(("series:", "epoch 12/12", "test MSE", "fed-back", "speed:", "ok:")),
    "gradient_penalty": Run(("max |u - u*| before", "the compiled step made", "error against",
                             "error decreased", "compiled step:", "speed:", "ok:")),
}


def kept_lines(output: str, run: Run) -> list[str]:
    lines, kept, sample = output.splitlines(), [], 0
    for line in lines:
        if sample:
            kept.append(line)
            sample -= 1
        elif line.startswith(run.prefixes + ALWAYS):
            kept.append(line)
        elif line == "sample:" and run.sample_lines:
            kept.append(line)
            sample = run.sample_lines
    return kept


def load_average() -> str:
    try:
        return f"{os.getloadavg()[0]:.1f}"
    except OSError:  # not on every platform
        return "unknown"


def run_example(name: str) -> str:
    """The block of one full run of examples/NAME.py (the text between the markers)."""
    command = ["python", f"examples/{name}.py"]
    cores, load = os.cpu_count(), load_average()
    with tempfile.TemporaryDirectory(prefix="autojit-examples-page-") as cache:
        env = {key: value for key, value in os.environ.items()
               if key not in ("AUTOJIT_DISABLE", "AUTOJIT_DISK_CACHE")}
        env["AUTOJIT_CACHE_DIR"] = cache
        started = time.perf_counter()
        completed = subprocess.run([sys.executable, *command[1:]], capture_output=True,
                                   text=True, cwd=ROOT, env=env)
        seconds = time.perf_counter() - started
    if completed.returncode != 0:
        raise SystemExit(f"{' '.join(command)} exited with {completed.returncode}:\n"
                         f"{completed.stdout}\n{completed.stderr}")
    lines = kept_lines(completed.stdout, RUNS[name])
    caption = (f"A run of `{' '.join(command)}` (written by `tools/examples_page.py`): "
               f"{seconds:.1f} s in all, with an empty kernel cache, on {cores} cores whose "
               f"load average was {load} at the start. Its summary lines:")
    return (textwrap.fill(caption, width=96, break_on_hyphens=False) + "\n\n```text\n"
            + "\n".join(lines) + "\n```\n")


def blocks(page: str) -> dict[str, str]:
    return {match.group(1): match.group(2) for match in BLOCK.finditer(page)}


def rewrite(page: str, new_blocks: dict[str, str]) -> str:
    def replace(match):
        name = match.group(1)
        body = new_blocks.get(name, match.group(2))
        return f"<!-- run: {name} -->\n{body}<!-- /run -->\n"

    missing = set(new_blocks) - set(blocks(page))
    if missing:
        raise SystemExit(f"docs/examples.md has no block for {sorted(missing)}: add "
                         "`<!-- run: NAME -->` and `<!-- /run -->` lines where it goes")
    return BLOCK.sub(replace, page)


# ---- the checks --------------------------------------------------------------------------


def number(pattern: str, text: str, name: str) -> float:
    match = re.search(pattern, text, re.MULTILINE)
    if match is None:
        raise AssertionError(f"{name}'s block has no line matching {pattern!r}")
    return float(match.group(1).replace(",", ""))


def examples_module(name: str):
    import importlib

    if str(ROOT / "examples") not in sys.path:
        sys.path.insert(0, str(ROOT / "examples"))
    return importlib.import_module(name)


@functools.cache
def flagship_step_kernels() -> int:
    """The fused kernels of digits_mlp.py's training step at its full settings, built as the
    script builds it (random data of the digits' shapes: the count depends on shapes only)."""
    import autojit
    from autojit import nn

    digits = examples_module("digits_mlp")
    args = digits.parse_arguments([])
    model = digits.build_model(args.hidden)
    optimizer = autojit.optim.Adam(model.parameters(), lr=args.lr)
    step = autojit.compile(digits.make_train_step(model, optimizer, nn.CrossEntropyLoss()))
    images, labels = autojit.randn(args.batch_size, 64), autojit.randint(0, 10, (args.batch_size,))
    for _ in range(2):  # the first call makes Adam's state; the second compiles
        step(images, labels)
    return step.fusion_groups().count("kernel")


@functools.cache
def penalty_step_figures() -> tuple[int, int]:
    """(lines of optimized IR, fused kernels) of gradient_penalty.py's timed step."""
    import autojit

    penalty = examples_module("gradient_penalty")
    args = penalty.parse_arguments([])
    model = penalty.build_model(args.hidden)
    step = autojit.compile(penalty.make_train_step(
        model, autojit.optim.Adam(model.parameters(), lr=args.lr)))
    points = autojit.cat([autojit.linspace(0, 1, args.points).reshape(-1, 1),
                          autojit.tensor([[0.0], [1.0]])])
    for _ in range(2):
        step(points)
    return len(step.ir().splitlines()), step.fusion_groups().count("kernel")


def check_digits_mlp(block: str) -> None:
    digits = examples_module("digits_mlp")
    args = digits.parse_arguments([])
    model = digits.build_model(args.hidden)
    parameters = sum(p.numel() for p in model.parameters())
    recorded = number(r"([\d,]+) parameters", block, "digits_mlp")
    assert recorded == parameters, f"digits_mlp: {recorded:.0f} parameters, the model has " \
                                   f"{parameters}"
    train = number(r"data: (\d+) training", block, "digits_mlp")
    steps = number(r"(\d+) steps of", block, "digits_mlp")
    assert steps == train // args.batch_size, "digits_mlp: steps per epoch"
    assert number(r"after (\d+) epochs", block, "digits_mlp") == args.epochs
    kernels = flagship_step_kernels()
    recorded = number(r"(\d+) fused kernels", block, "digits_mlp")
    assert recorded == kernels, f"digits_mlp: the block says {recorded:.0f} fused kernels, " \
                                f"the step has {kernels}"


def check_gradient_penalty(block: str) -> None:
    lines, kernels = penalty_step_figures()
    recorded = (number(r"(\d+) lines of optimized IR", block, "gradient_penalty"),
                number(r"(\d+) fused kernels", block, "gradient_penalty"))
    assert recorded == (lines, kernels), f"gradient_penalty: the block says {recorded[0]:.0f} " \
        f"lines of IR and {recorded[1]:.0f} kernels, the step has {lines} and {kernels}"


def check_char_transformer(block: str) -> None:
    transformer = examples_module("char_transformer")
    args = transformer.parse_arguments([])
    length = len(transformer.load_text())
    recorded = number(r"text: ([\d,]+) characters", block, "char_transformer")
    assert abs(recorded - length) <= 0.1 * length, f"char_transformer: the block says " \
        f"{recorded:,.0f} characters of docs/, they are {length:,} now"
    vocabulary = int(number(r"characters of docs/, (\d+) distinct", block, "char_transformer"))
    model = transformer.CharTransformer(vocabulary, args.d_model, args.layers, args.heads,
                                        args.context)
    parameters = sum(p.numel() for p in model.parameters())
    recorded = number(r"([\d,]+) parameters", block, "char_transformer")
    assert recorded == parameters, f"char_transformer: {recorded:.0f} parameters recorded, " \
                                   f"the model has {parameters}"
    assert number(r"step (\d+)/", block, "char_transformer") == args.steps


def check_lstm_forecast(block: str) -> None:
    import autojit

    lstm = examples_module("lstm_forecast")
    args = lstm.parse_arguments([])
    series = lstm.make_series(args.length, autojit.Generator().manual_seed(args.seed))
    split = int(0.8 * args.length)
    train, _ = lstm.windows(series[:split], args.window)
    test, _ = lstm.windows(series[split - args.window:], args.window)
    recorded = (number(r"series: (\d+) points", block, "lstm_forecast"),
                number(r"(\d+) training windows", block, "lstm_forecast"),
                number(r"(\d+) test windows", block, "lstm_forecast"))
    assert recorded == (args.length, len(train), len(test)), f"lstm_forecast: {recorded}"


def check_digits_cnn(block: str) -> None:
    assert number(r"on (\d+) images", block, "digits_cnn") == 449  # 25% of the 1,797 digits


def constants() -> list[tuple[str, tuple]]:
    """(a pattern of the page's prose, the values of the code it must find there): the
    settings the prose quotes."""
    digits, lstm = examples_module("digits_mlp"), examples_module("lstm_forecast")
    penalty = examples_module("gradient_penalty")
    return [
        (r"an MLP \(64-(\d+)-(\d+)-10", (digits.FULL["hidden"],) * 2),
        (r"for the exit status \(([\d.]+) by default,\s+([\d.]+) with `--quick`\)",
         (digits.FULL["min_accuracy"], digits.QUICK["min_accuracy"])),
        (r"reads windows of (\d+) past values", (lstm.FULL["window"],)),
        (r"A (two)-layer `nn.LSTM`", ({2: "two"}[lstm.FULL["layers"]],)),
        (r"fed back on itself for (\d+) steps", (lstm.parse_arguments([]).horizon,)),
        (r"below ([\d.]+) times the baseline's \(([\d.]+)\s+with `--quick`\)",
         (lstm.FULL["max_ratio"], lstm.QUICK["max_ratio"])),
        (r"exit status is 1 above ([\d.]+), ([\d.]+) with `--quick`",
         (penalty.FULL["max_error"], penalty.QUICK["max_error"])),
    ]


def check_constants(page: str) -> list[str]:
    result = []
    for pattern, values in constants():
        match = re.search(pattern, page)
        if match is None:
            result.append(f"the prose no longer matches {pattern!r}: update constants()")
            continue
        found = tuple(type(value)(text) for value, text in zip(values, match.groups()))
        if found != values:
            result.append(f"the prose says {match.group(0)!r}, the code has {values}")
    return result


CHECKS = {"digits_mlp": check_digits_mlp, "digits_cnn": check_digits_cnn,
          "gradient_penalty": check_gradient_penalty, "lstm_forecast": check_lstm_forecast,
          "char_transformer": check_char_transformer}


def check_claims(flagship_block: str) -> None:
    """The README's and docs/index.md's sentence about the flagship, against its block."""
    accuracy = number(r"^test accuracy: ([\d.]+)%", flagship_block, "digits_mlp")
    per_epoch = number(r"time per epoch: ([\d.]+) s", flagship_block, "digits_mlp")
    first = number(r"first epoch ([\d.]+) s", flagship_block, "digits_mlp")
    epochs = number(r"after (\d+) epochs", flagship_block, "digits_mlp")
    training = first + (epochs - 1) * per_epoch
    for page in CLAIM_PAGES:
        claims = CLAIM.findall(page.read_text())
        assert claims, f"{page.name} no longer says 'about N% test accuracy in a few seconds'"
        for claim in claims:
            assert abs(float(claim) - accuracy) <= 1.5, \
                f"{page.name} says about {claim}%, the flagship's block {accuracy}%"
    assert training <= FEW_SECONDS, f"the flagship's block trained for {training:.1f} s, " \
                                    f"not 'a few seconds'"


def problems(page: str | None = None) -> list[str]:
    """What is stale on the page; empty when every check passes."""
    page = PAGE.read_text() if page is None else page
    found = blocks(page)
    result = [f"no block for {name} (<!-- run: {name} -->)" for name in RUNS if name not in found]
    result += [f"a block for {name}, which the script does not run" for name in found
               if name not in RUNS]
    for name, block in found.items():
        if name not in RUNS:
            continue
        if f"A run of `python examples/{name}.py` (written by" not in block.replace("\n", " "):
            result.append(f"{name}: the block's caption is not the script's")
        try:
            if "speed:" in block:
                assert number(r"compiled/eager ([\d.]+)x", block, name) > 1, \
                    f"{name}: the recorded run's compiled step was not faster than eager"
            CHECKS[name](block)
            if name == "digits_mlp":
                check_claims(block)
        except AssertionError as error:
            result.append(str(error))
    return result + check_constants(page)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("names", nargs="*", metavar="NAME",
                        help=f"examples to run again (all by default): {', '.join(RUNS)}")
    parser.add_argument("--check", action="store_true",
                        help="run nothing; exit 1 when a block is stale")
    args = parser.parse_args(argv)
    unknown = [name for name in args.names if name not in RUNS]
    if unknown:
        parser.error(f"not an example the page quotes: {', '.join(unknown)} "
                     f"(choose from {', '.join(RUNS)})")
    if args.check:
        found = problems()
        for problem in found:
            print(f"docs/examples.md: {problem}", file=sys.stderr)
        if found:
            print("run python tools/examples_page.py to write the stale blocks again",
                  file=sys.stderr)
        return 1 if found else 0
    page = PAGE.read_text()
    for name in args.names or list(RUNS):
        print(f"running examples/{name}.py ...", flush=True)
        page = rewrite(page, {name: run_example(name)})
        PAGE.write_text(page)  # block by block: a failed run keeps the ones before it
    for problem in problems(page):
        print(f"docs/examples.md: {problem}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
