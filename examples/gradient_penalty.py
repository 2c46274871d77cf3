"""Double backward: a physics-informed network solves u'' = f. `python examples/gradient_penalty.py`

The network u(x) (1 -> 32 -> 32 -> 1, tanh) is trained so that on [0, 1]

    u''(x) = f(x) = -4 pi^2 sin(2 pi x),   u(0) = 0,   u'(1) = 2 pi + 1,

whose solution is u*(x) = sin(2 pi x) + x. The loss holds the derivatives of the network with
respect to its input: du/dx and d2u/dx2 come from autograd.grad(..., create_graph=True), so they
are graphs themselves, and loss.backward() differentiates through them into the weights (third
derivatives of tanh). The same double-backward pattern makes WGAN-GP's gradient penalty.

The training step runs through autojit.compile: the forward pass, both input derivatives, the
backward into the weights and Adam's update are one traced graph. At the end the error against
u* is printed, and the step is timed compiled and eager on a copy of the network. --compile
trains compiled without that comparison, --eager trains eagerly, and AUTOJIT_DISABLE=1 turns
the compiler off.

    python examples/gradient_penalty.py [--compile | --eager] [--steps N] [--quick]
"""

from __future__ import annotations

import argparse
import math

from example_support import (
    ProgressBar,
    add_mode_arguments,
    compare_speed,
    compile_disabled,
    describe_mode,
    limit_blas_threads,
    training_mode,
)

import autojit
from autojit import autograd, nn

FULL = {"steps": 1500, "points": 64, "hidden": 32, "max_error": 0.02}
QUICK = {"steps": 1000, "points": 32, "hidden": 32, "max_error": 0.25}
TWO_PI = 2 * math.pi


def parse_arguments(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_mode_arguments(parser, compiled_by_default=True, compares=True)
    parser.add_argument("--steps", type=int, help=f"optimizer steps ({FULL['steps']})")
    parser.add_argument("--points", type=int,
                        help=f"collocation points in [0, 1] per step ({FULL['points']})")
    parser.add_argument("--hidden", type=int, help=f"width of the hidden layers ({FULL['hidden']})")
    parser.add_argument("--lr", type=float, default=5e-3, help="Adam's learning rate (5e-3)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="tiny settings for a smoke test")
    parser.add_argument("--max-error", type=float,
                        help="exit with status 1 when the final max |u - u*| is above this "
                             f"({FULL['max_error']}; {QUICK['max_error']} quick)")
    args = parser.parse_args(argv)
    for name, value in (QUICK if args.quick else FULL).items():
        if getattr(args, name) is None:
            setattr(args, name, value)
    return args


def solution(x):
    return (TWO_PI * x).sin() + x


def source(x):
    return -(TWO_PI**2) * (TWO_PI * x).sin()


def build_model(hidden: int) -> nn.Module:
    return nn.Sequential(nn.Linear(1, hidden), nn.Tanh(), nn.Linear(hidden, hidden), nn.Tanh(),
                         nn.Linear(hidden, 1))


def make_train_step(model: nn.Module, optimizer):
    slope_at_right = TWO_PI + 1.0

    def train_step(points):
        """One Adam step; `points` holds the collocation points, then x = 0 and x = 1."""
        x = points.detach().requires_grad_(True)
        u = model(x)
        # Each row of u depends on its own x only, so the gradient of the sum is the pointwise
        # derivative; create_graph=True keeps it differentiable for the next grad and for
        # loss.backward().
        (du,) = autograd.grad(u.sum(), x, create_graph=True)
        (d2u,) = autograd.grad(du.sum(), x, create_graph=True)
        # Scaled by the size of f so that the residual and the boundary terms weigh alike.
        residual = ((d2u[:-2] - source(points[:-2])) / TWO_PI**2).square().mean()
        boundary = u[-2].square().sum() + ((du[-1] - slope_at_right) / TWO_PI).square().sum()
        loss = residual + boundary
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach()

    return train_step


def max_error(model: nn.Module, grid) -> float:
    with autojit.no_grad():
        return (model(grid) - solution(grid)).abs().max().item()


def main(argv=None) -> int:
    args = parse_arguments(argv)
    compiled, compare = training_mode(args, compiled_by_default=True, compares=True)
    print(f"physics-informed network for u'' = f: {describe_mode(compiled)}, "
          f"{limit_blas_threads()}")
    autojit.manual_seed(args.seed)
    model = build_model(args.hidden)
    optimizer = autojit.optim.Adam(model.parameters(), lr=args.lr)
    # A constant rate leaves Adam oscillating about the solution (the final error then depends
    # on the last steps' rounding): the rate falls linearly over the last 20% of the steps, to
    # 5% of its value, so that they settle.
    tail = 0.2 * args.steps
    scheduler = autojit.optim.lr_scheduler.LambdaLR(
        optimizer, lambda step: min(1.0, max(0.05, (args.steps - step) / tail)))
    train_step = make_train_step(model, optimizer)
    if compiled:
        train_step = autojit.compile(train_step)

    grid = autojit.linspace(0, 1, 201).reshape(-1, 1)
    uniform = autojit.linspace(0, 1, args.points).reshape(-1, 1)
    spacing = 1.0 / (args.points - 1)
    ends = autojit.tensor([[0.0], [1.0]])
    start_error = max_error(model, grid)
    print(f"max |u - u*| before training: {start_error:.4f}")
    report_every = max(args.steps // 8, 1)
    bar = None
    for step in range(1, args.steps + 1):
        if bar is None:
            bar = ProgressBar(f"steps {step:>4}-{min(step + report_every - 1, args.steps)}",
                              min(report_every, args.steps - step + 1))
            done = 0
        # New collocation points each step: the uniform grid shifted by a random fraction of
        # its spacing (same shape every step, so a compiled step traces once).
        x = (uniform + spacing * (autojit.rand(args.points, 1) - 0.5)).clamp(0, 1)
        loss = train_step(autojit.cat([x, ends])).item()
        scheduler.step()
        done += 1
        bar.update(done, loss, args.points)
        if done == bar.total:
            bar.finish(loss, f"max |u - u*| {max_error(model, grid):.5f}")
            bar = None
    final_error = max_error(model, grid)
    if compiled and not compile_disabled():
        print(f"the compiled step made {len(train_step.executables)} executable(s) in "
              f"{args.steps} steps")

    with autojit.no_grad():
        relative = ((model(grid) - solution(grid)).square().sum().sqrt()
                    / solution(grid).square().sum().sqrt()).item()
    print(f"\nerror against u*(x) = sin(2 pi x) + x on 201 points: max {final_error:.5f}, "
          f"relative L2 {relative:.2e}")
    print(f"error decreased from {start_error:.4f} to {final_error:.5f} "
          f"({start_error / final_error:.0f}x) in {args.steps} steps")

    if not compare:
        print("speed: compiled vs eager not measured (--compile or --eager)")
    elif compile_disabled():
        print("speed: compiled vs eager not measured (AUTOJIT_DISABLE=1)")
    else:
        # A copy of the network and a fresh Adam, so that timing does not train the model
        # whose error was printed; both steps run the same Python function on the same points.
        twin = build_model(args.hidden)
        twin.load_state_dict(model.state_dict())
        eager_step = make_train_step(twin, autojit.optim.Adam(twin.parameters(), lr=args.lr))
        compiled_step = autojit.compile(eager_step)
        batches = [(autojit.cat([uniform, ends]),)] * 20
        speed = compare_speed({"compiled": compiled_step, "eager": eager_step}, batches)
        print(f"compiled step: {compiled_step.compile_seconds:.2f} s to trace and compile, "
              f"{len(compiled_step.ir().splitlines())} lines of optimized IR (forward, two "
              f"input derivatives, backward into the weights, Adam), "
              f"{compiled_step.fusion_groups().count('kernel')} fused kernels")
        print(f"speed: compiled step {speed['compiled']:,.0f} steps/s, eager step "
              f"{speed['eager']:,.0f} steps/s, compiled/eager "
              f"{speed.ratio:.2f}x ({speed.summary()}, of passes of 20 steps)")
        if speed.note():
            print(speed.note())
    if final_error > args.max_error:
        print(f"FAILED: max |u - u*| = {final_error:.5f} is above {args.max_error}")
        return 1
    print(f"ok: max |u - u*| = {final_error:.5f} <= {args.max_error}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
