"""An LSTM that forecasts a noisy seasonal series: `python examples/lstm_forecast.py`.

The series is synthetic (two seasonal sines, a slow trend and noise, drawn from a seeded
generator), so the example needs no download. It is written the way a torch user writes a
time-series forecaster: sliding windows of past values in a TensorDataset, a shuffling
DataLoader, an nn.LSTM (batch_first) whose last hidden state feeds a Linear head, MSELoss, Adam
with a StepLR schedule and gradient clipping, and the whole training step under autojit.compile.

    python examples/lstm_forecast.py            # about 20 s on 2 cores
    python examples/lstm_forecast.py --quick    # a few seconds, a smoke test
    python examples/lstm_forecast.py --plot forecast.png   # the forecasts (needs matplotlib)

It prints the test error of one-step forecasts against the persistence baseline (tomorrow equals
today), the error of a forecast fed back on itself for --horizon steps, and the steps per second
of the compiled step against the eager one. The exit status is 1 when the test error is not
below --max-ratio times the baseline's.
"""

from __future__ import annotations

import argparse
import math
import time

from example_support import (
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

FULL = {"epochs": 12, "hidden": 48, "layers": 2, "window": 48, "batch_size": 64,
        "length": 3000, "max_ratio": 0.6}
QUICK = {"epochs": 3, "hidden": 16, "layers": 1, "window": 24, "batch_size": 32,
         "length": 800, "max_ratio": 0.9}


def parse_arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_mode_arguments(parser, compiled_by_default=True, compares=True)
    parser.add_argument("--epochs", type=int, help=f"passes over the data ({FULL['epochs']})")
    parser.add_argument("--hidden", type=int, help=f"LSTM hidden size ({FULL['hidden']})")
    parser.add_argument("--layers", type=int, help=f"stacked LSTM layers ({FULL['layers']})")
    parser.add_argument("--window", type=int, help=f"past values per input ({FULL['window']})")
    parser.add_argument("--batch-size", type=int, help=f"windows per step ({FULL['batch_size']})")
    parser.add_argument("--length", type=int, help=f"points in the series ({FULL['length']})")
    parser.add_argument("--horizon", type=int, default=24,
                        help="steps of the fed-back forecast (24)")
    parser.add_argument("--lr", type=float, default=1e-2, help="Adam's learning rate (1e-2)")
    parser.add_argument("--seed", type=int, default=0, help="series, initialization, shuffling")
    parser.add_argument("--quick", action="store_true", help="tiny settings for a smoke test")
    parser.add_argument("--plot", metavar="PATH",
                        help="write the test series, the one-step forecasts and the fed-back "
                             "forecast to an image (needs matplotlib)")
    parser.add_argument("--max-ratio", type=float,
                        help="exit with status 1 unless the test error is below this fraction "
                             "of the persistence baseline's (0.6; 0.9 quick)")
    args = parser.parse_args(argv)
    for name, value in (QUICK if args.quick else FULL).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    return args


# ---- data ----------------------------------------------------------------------------------


def make_series(length: int, generator: autojit.Generator) -> autojit.Tensor:
    """Two seasons (periods 24 and 90), a slow trend and Gaussian noise."""
    t = autojit.arange(length, dtype=autojit.float32)
    seasons = autojit.sin(2 * math.pi * t / 24) + 0.5 * autojit.sin(2 * math.pi * t / 90)
    noise = 0.1 * autojit.randn(length, generator=generator)
    return seasons + 0.0005 * t + noise


def windows(series: autojit.Tensor, window: int):
    """Every run of `window` consecutive values (batch, window, 1) and the value after it."""
    starts = autojit.arange(len(series) - window)
    inputs = series[starts[:, None] + autojit.arange(window)]
    return inputs.unsqueeze(-1), series[window:].unsqueeze(-1)


# ---- the model -----------------------------------------------------------------------------


class Forecaster(nn.Module):
    """An LSTM over the window; a Linear layer maps its last hidden state to the next value."""

    def __init__(self, hidden: int, layers: int):
        super().__init__()
        self.lstm = nn.LSTM(input_size=1, hidden_size=hidden, num_layers=layers,
                            batch_first=True)
        self.head = nn.Linear(hidden, 1)

    def forward(self, x):
        output, (h_n, c_n) = self.lstm(x)
        return self.head(output[:, -1, :])


def forecast(model: nn.Module, history: autojit.Tensor, horizon: int) -> autojit.Tensor:
    """`horizon` values ahead, each prediction appended to the window for the next one."""
    window = history.reshape(1, -1, 1)
    predictions = []
    with autojit.no_grad():
        for _ in range(horizon):
            next_value = model(window)
            predictions.append(next_value.reshape(1))
            window = autojit.cat([window[:, 1:], next_value.reshape(1, 1, 1)], dim=1)
    return autojit.cat(predictions)


def write_plot(path: str, truth, one_step, fed_back, start: int) -> None:
    """The test part of the series with the one-step forecasts, and the fed-back forecast
    from the first test window on."""
    matplotlib = require("matplotlib", "--plot")
    matplotlib.use("Agg")  # a file only: no window, no display needed
    from matplotlib import pyplot

    figure, axes = pyplot.subplots(figsize=(9, 3.5))
    steps = range(start, start + len(truth))
    axes.plot(steps, truth, label="series (normalized)", color="0.6")
    axes.plot(steps, one_step, label="one-step forecast")
    axes.plot(range(start, start + len(fed_back)), fed_back, label="fed-back forecast")
    axes.set_xlabel("time step")
    axes.legend()
    figure.tight_layout()
    figure.savefig(path, dpi=120)
    pyplot.close(figure)


# ---- training ------------------------------------------------------------------------------


def main(argv=None) -> int:
    args = parse_arguments(argv)
    if args.plot:
        require("matplotlib", "--plot")  # fail before training, not after it
    compiled, compare = training_mode(args, compiled_by_default=True, compares=True)
    print(f"lstm forecast: {describe_mode(compiled)}, {limit_blas_threads()}")
    generator = autojit.Generator().manual_seed(args.seed)
    autojit.manual_seed(args.seed)
    series = make_series(args.length, generator)
    split = int(0.8 * args.length)
    mean, std = series[:split].mean(), series[:split].std()
    normalized = (series - mean) / std
    train_inputs, train_targets = windows(normalized[:split], args.window)
    test_inputs, test_targets = windows(normalized[split - args.window:], args.window)
    print(f"series: {args.length} points; {len(train_inputs)} training windows, "
          f"{len(test_inputs)} test windows of {args.window}")

    loader = DataLoader(TensorDataset(train_inputs, train_targets), batch_size=args.batch_size,
                        shuffle=True, drop_last=True, generator=generator)
    model = Forecaster(args.hidden, args.layers)
    criterion = nn.MSELoss()
    optimizer = autojit.optim.Adam(model.parameters(), lr=args.lr)
    scheduler = autojit.optim.lr_scheduler.StepLR(optimizer, step_size=max(args.epochs // 3, 1),
                                                  gamma=0.5)

    def train_step(inputs, targets):
        optimizer.zero_grad()
        loss = criterion(model(inputs), targets)
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), max_norm=1.0)
        optimizer.step()
        return loss.detach()

    step = autojit.compile(train_step) if compiled else train_step
    started = time.perf_counter()
    for epoch in range(1, args.epochs + 1):
        total, batches = 0.0, 0
        for inputs, targets in loader:
            total += step(inputs, targets).item()
            batches += 1
        scheduler.step()
        print(f"epoch {epoch:>2}/{args.epochs} train loss {total / batches:.4f} "
              f"lr {scheduler.get_last_lr()[0]:.1e} {time.perf_counter() - started:.1f}s")

    model.eval()
    with autojit.no_grad():
        one_step = model(test_inputs)
        test_error = criterion(one_step, test_targets).item()
    # Persistence: each window's last value is the forecast of the next.
    baseline = criterion(test_inputs[:, -1, :], test_targets).item()
    print(f"test MSE (normalized): {test_error:.4f}, persistence baseline {baseline:.4f} "
          f"(ratio {test_error / baseline:.3f})")
    ahead = forecast(model, test_inputs[0, :, 0], args.horizon)
    truth = normalized[split:split + args.horizon]
    print(f"fed-back forecast, {args.horizon} steps: MSE "
          f"{(ahead - truth).square().mean().item():.4f}")
    if args.plot:
        write_plot(args.plot, test_targets[:, 0].tolist(), one_step[:, 0].tolist(),
                   ahead.tolist(), split)
        print(f"forecast plot written to {args.plot}")

    if compare and not compile_disabled():
        model.train()
        timed = [batch for batch, _ in zip(loader, range(5), strict=False)]
        rates = compare_speed({"compiled": step, "eager": train_step}, timed,
                              rounds=2 if args.quick else 3)
        print(f"speed: compiled {rates['compiled']:,.1f} steps/s, eager "
              f"{rates['eager']:,.1f} steps/s, compiled/eager "
              f"{rates.ratio:.2f}x ({rates.summary()}); {step.compile_seconds:.1f} s compiling")
        if rates.note():
            print(rates.note())
    else:
        print("speed: compiled vs eager not measured"
              + (" (AUTOJIT_DISABLE=1)" if compare else " (--compile or --eager)"))

    if test_error >= args.max_ratio * baseline:
        print(f"FAILED: test MSE {test_error:.4f} is not below {args.max_ratio} x the "
              f"persistence baseline {baseline:.4f}")
        return 1
    print(f"ok: test MSE {test_error:.4f} is below {args.max_ratio} x the persistence "
          f"baseline {baseline:.4f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
