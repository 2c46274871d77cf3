"""A character-level GPT trained on the project's own docs: `python examples/char_transformer.py`.

The text is every Markdown page under docs/ (shipped with the project), read as characters.
The model is a small decoder-only transformer: token and position embeddings, a stack of
pre-norm nn.TransformerEncoderLayer blocks under a causal mask (self-attention sees only
earlier characters), a final LayerNorm and a Linear layer that predicts the next character.
It trains with AdamW, a learning rate that warms up linearly and then follows a cosine down
(LambdaLR), and gradient clipping, all inside one compiled training step; at the end it samples
text from the trained model.

    python examples/char_transformer.py            # under two minutes on 2 cores
    python examples/char_transformer.py --quick    # a few seconds, a smoke test

It prints the validation loss against the unigram baseline (the loss of predicting every
character from its frequency alone) and the tokens per second of the compiled step against the
eager one. The exit status is 1 when the validation loss does not end at least --min-gain nats
below the baseline.
"""

from __future__ import annotations

import argparse
import math
import time
from pathlib import Path

import numpy as np
from example_support import (
    add_mode_arguments,
    compare_speed,
    compile_disabled,
    describe_mode,
    limit_blas_threads,
    training_mode,
)

import autojit
from autojit import nn
from autojit.nn import functional as F

DOCS = Path(__file__).resolve().parent.parent / "docs"
FULL = {"steps": 1500, "d_model": 96, "layers": 2, "heads": 4, "context": 64, "batch_size": 32,
        "lr": 3e-3, "min_gain": 1.2, "sample_length": 300}
QUICK = {"steps": 150, "d_model": 32, "layers": 1, "heads": 2, "context": 32, "batch_size": 16,
         "lr": 1e-2, "min_gain": 0.3, "sample_length": 60}


def parse_arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_mode_arguments(parser, compiled_by_default=True, compares=True)
    parser.add_argument("--steps", type=int, help=f"training steps ({FULL['steps']})")
    parser.add_argument("--d-model", type=int, help=f"embedding width ({FULL['d_model']})")
    parser.add_argument("--layers", type=int, help=f"transformer blocks ({FULL['layers']})")
    parser.add_argument("--heads", type=int, help=f"attention heads ({FULL['heads']})")
    parser.add_argument("--context", type=int, help=f"characters per sequence ({FULL['context']})")
    parser.add_argument("--batch-size", type=int, help=f"sequences per step ({FULL['batch_size']})")
    parser.add_argument("--sample-length", type=int,
                        help=f"characters to sample at the end ({FULL['sample_length']})")
    parser.add_argument("--lr", type=float, help="peak learning rate (3e-3; 1e-2 quick)")
    parser.add_argument("--seed", type=int, default=0, help="initialization, batches, sampling")
    parser.add_argument("--quick", action="store_true", help="tiny settings for a smoke test")
    parser.add_argument("--min-gain", type=float,
                        help="exit with status 1 unless the validation loss ends this many nats "
                             "below the unigram baseline (1.2; 0.3 quick)")
    args = parser.parse_args(argv)
    for name, value in (QUICK if args.quick else FULL).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    return args


# ---- data ----------------------------------------------------------------------------------


def load_text() -> str:
    """The docs' Markdown pages, in a fixed order, joined into one text (about 400 KB)."""
    return "\n".join(path.read_text(encoding="utf-8") for path in sorted(DOCS.rglob("*.md")))


def unigram_loss(train: np.ndarray, validation: np.ndarray, vocabulary: int) -> float:
    """Cross-entropy on the validation ids of the training set's character frequencies (with
    add-one smoothing, so a character unseen in training costs a finite loss)."""
    counts = np.bincount(train, minlength=vocabulary) + 1.0
    log_probabilities = np.log(counts / counts.sum())
    return float(-log_probabilities[validation].mean())


def batch_of(ids: np.ndarray, batch_size: int, context: int, rng: np.random.Generator):
    """Random windows of `context` characters and the same windows shifted by one (targets)."""
    starts = rng.integers(0, len(ids) - context - 1, size=batch_size)
    windows = np.stack([ids[start:start + context + 1] for start in starts])
    return autojit.tensor(windows[:, :-1]), autojit.tensor(windows[:, 1:])


# ---- the model -----------------------------------------------------------------------------


class CharTransformer(nn.Module):
    """Embeddings, causal pre-norm transformer blocks, a final norm and the next-char logits."""

    def __init__(self, vocabulary: int, d_model: int, layers: int, heads: int, context: int):
        super().__init__()
        self.token_embedding = nn.Embedding(vocabulary, d_model)
        self.position_embedding = nn.Embedding(context, d_model)
        block = nn.TransformerEncoderLayer(d_model, heads, dim_feedforward=4 * d_model,
                                           dropout=0.0, activation="gelu", batch_first=True,
                                           norm_first=True)
        self.blocks = nn.TransformerEncoder(block, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocabulary)

    def forward(self, ids):
        length = ids.shape[1]
        positions = autojit.arange(length)
        x = self.token_embedding(ids) + self.position_embedding(positions)
        # is_causal=True with the mask: attention builds the triangle from the sizes, and the
        # mask itself is only the documented form torch's layers expect alongside the flag.
        mask = nn.Transformer.generate_square_subsequent_mask(length)
        x = self.blocks(x, mask=mask, is_causal=True)
        return self.head(self.norm(x))


def warmup_then_cosine(warmup: int, total: int):
    """The LambdaLR factor: linear from 0 to 1 over `warmup` steps, then a cosine to 0.1."""
    def factor(step: int) -> float:
        if step < warmup:
            return (step + 1) / warmup
        progress = min((step - warmup) / max(total - warmup, 1), 1.0)
        return 0.1 + 0.45 * (1.0 + math.cos(math.pi * progress))
    return factor


def sample(model, prompt_ids: list[int], length: int, context: int,
           generator: autojit.Generator, temperature: float = 0.8) -> list[int]:
    """Characters drawn one at a time from the model's next-character distribution."""
    ids = list(prompt_ids)
    with autojit.no_grad():
        for _ in range(length):
            window = autojit.tensor(ids[-context:]).unsqueeze(0)
            logits = model(window)[0, -1] / temperature
            probabilities = F.softmax(logits, dim=-1)
            ids.append(autojit.multinomial(probabilities, 1, generator=generator).item())
    return ids


# ---- training ------------------------------------------------------------------------------


def main(argv=None) -> int:
    args = parse_arguments(argv)
    compiled, compare = training_mode(args, compiled_by_default=True, compares=True)
    print(f"char transformer: {describe_mode(compiled)}, {limit_blas_threads()}")
    text = load_text()
    characters = sorted(set(text))
    index = {character: i for i, character in enumerate(characters)}
    ids = np.fromiter((index[c] for c in text), dtype=np.int64, count=len(text))
    split = int(0.9 * len(ids))
    train_ids, validation_ids = ids[:split], ids[split:]
    vocabulary = len(characters)
    baseline = unigram_loss(train_ids, validation_ids, vocabulary)
    print(f"text: {len(text):,} characters of docs/, {vocabulary} distinct; "
          f"unigram baseline {baseline:.3f} nats")

    autojit.manual_seed(args.seed)
    rng = np.random.default_rng(args.seed)
    model = CharTransformer(vocabulary, args.d_model, args.layers, args.heads, args.context)
    parameter_count = sum(p.numel() for p in model.parameters())
    print(f"model: {args.layers} blocks, d_model {args.d_model}, {args.heads} heads, context "
          f"{args.context}, {parameter_count:,} parameters")
    optimizer = autojit.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    scheduler = autojit.optim.lr_scheduler.LambdaLR(
        optimizer, warmup_then_cosine(max(args.steps // 10, 1), args.steps))

    def train_step(inputs, targets):
        logits = model(inputs)
        loss = F.cross_entropy(logits.reshape(-1, vocabulary), targets.reshape(-1))
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach()

    def evaluate(inputs, targets):
        with autojit.no_grad():
            logits = model(inputs)
            return F.cross_entropy(logits.reshape(-1, vocabulary), targets.reshape(-1))

    step = autojit.compile(train_step) if compiled else train_step
    evaluate_step = autojit.compile(evaluate) if compiled else evaluate
    validation_batches = [batch_of(validation_ids, args.batch_size, args.context, rng)
                          for _ in range(8)]

    def validation_loss() -> float:
        return sum(evaluate_step(*batch).item() for batch in validation_batches) / len(
            validation_batches)

    started = time.perf_counter()
    report_every = max(args.steps // 6, 1)
    for done in range(1, args.steps + 1):
        loss = step(*batch_of(train_ids, args.batch_size, args.context, rng))
        scheduler.step()
        if done % report_every == 0 or done == args.steps:
            print(f"step {done:>4}/{args.steps} train loss {loss.item():.3f} validation loss "
                  f"{validation_loss():.3f} lr {scheduler.get_last_lr()[0]:.2e} "
                  f"{time.perf_counter() - started:.1f}s")
    final = validation_loss()
    print(f"validation loss: {final:.3f} nats, unigram baseline {baseline:.3f} nats "
          f"({baseline - final:.3f} below)")

    # Speed: the compiled step against the eager one on the same batches, taking turns. Both
    # keep training the model, which changes nothing about the work a step does.
    if compare and not compile_disabled():
        batches = [batch_of(train_ids, args.batch_size, args.context, rng) for _ in range(5)]
        rates = compare_speed({"compiled": step, "eager": train_step}, batches,
                              rounds=2 if args.quick else 3)
        tokens = args.batch_size * args.context
        print(f"speed: compiled {rates['compiled'] * tokens:,.0f} tokens/s, eager "
              f"{rates['eager'] * tokens:,.0f} tokens/s, compiled/eager "
              f"{rates.ratio:.2f}x ({rates.summary()}); {step.compile_seconds:.1f} s compiling")
        if rates.note():
            print(rates.note())
    else:
        print("speed: compiled vs eager not measured"
              + (" (AUTOJIT_DISABLE=1)" if compare else " (--compile or --eager)"))

    prompt = "## "
    generator = autojit.Generator().manual_seed(args.seed)
    generated = sample(model, [index[c] for c in prompt], args.sample_length, args.context,
                       generator)
    print("sample:\n" + "".join(characters[i] for i in generated))
    if baseline - final < args.min_gain:
        print(f"FAILED: validation loss {final:.3f} is not {args.min_gain} below the baseline")
        return 1
    print(f"ok: validation loss {final:.3f} is at least {args.min_gain} below the baseline "
          f"{baseline:.3f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
