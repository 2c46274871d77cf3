"""What autojit.compile made of a training step: `python examples/inspect_compiled.py`

A compiled function keeps what it built, and this example prints each piece for a small MLP
trained with SGD and momentum:

1. the traced graph, before and after the optimization passes (`step.ir(optimized=False)`,
   `step.ir()`): forward, backward and the optimizer update in one graph, and the lines the
   passes changed (common subexpressions merged, reshapes and double transposes removed);
2. the fusion groups (`step.fusion_groups()`): which nodes run together as one native kernel,
   and which run alone (matmuls, through BLAS);
3. the guards (`step.guards()`): the conditions under which the executable is reused;
4. the LLVM IR of one kernel (`step.kernel_source()` holds all of them): the loop body
   computes the whole fused chain per element, without intermediate arrays;
5. for a function whose result is differentiated outside it (`loss = f(x); loss.backward()`),
   the compiled forward and backward graphs (`f.forward_ir()`, `f.backward_ir()`, each node
   marked with the kernel that runs it) and what the forward hands to the backward;
6. a picture of the training step's graph (`step.graph_dot()`): each kernel a dashed box
   named after the ops it fuses, forward nodes blue, backward nodes orange. The DOT text is
   written to train_step.dot in the --out folder (by default a new temporary folder, whose
   path the script prints), and rendered to train_step.svg beside it when the graphviz
   package and Graphviz's `dot` are installed (`pip install "autojit[graph]"`).

    python examples/inspect_compiled.py            # everything, in full
    python examples/inspect_compiled.py --quick    # each listing cut to its first lines
    python examples/inspect_compiled.py --out pictures   # the graph in ./pictures/

It trains with the compiled step only (--compile, the default; --eager is refused: an eager
step has nothing compiled to show).

Nothing is compiled under AUTOJIT_DISABLE=1, so there is nothing to show: the script says so.
"""

from __future__ import annotations

import argparse
import difflib
import os
import tempfile

import autojit
from autojit import nn


def heading(title: str) -> None:
    print(f"\n==== {title}")


def show(text: str, max_lines: int) -> None:
    lines = text.rstrip("\n").splitlines()
    if max_lines and len(lines) > max_lines:
        lines = lines[:max_lines] + [f"... ({len(lines) - max_lines} more lines)"]
    print("\n".join(lines))


def node_count(ir_text: str) -> int:
    return sum(1 for line in ir_text.splitlines() if " = " in line)


def smallest_loop_kernel(llvm_ir: str) -> str:
    """The shortest LLVM module with a loop, of the ones kernel_source() concatenates."""
    modules = ["; ModuleID" + part for part in llvm_ir.split("; ModuleID") if part.strip()]
    with_loop = [module for module in modules if "loop:" in module]
    return min(with_loop or modules, key=len)


def picture_folder(out: str | None) -> str:
    """--out, created when missing, or a new temporary folder: nothing is written into the
    working directory unless asked for."""
    if out is None:
        return tempfile.mkdtemp(prefix="autojit-inspect-")
    os.makedirs(out, exist_ok=True)
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="cut each listing short")
    parser.add_argument("--max-lines", type=int,
                        help="lines shown of each listing (0: all; 25 with --quick)")
    parser.add_argument("--out", metavar="DIR",
                        help="the folder for train_step.dot and train_step.svg (created if "
                             "missing; default: a new temporary folder)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--compile", action="store_true",
                      help="inspect the compiled step (the default)")
    mode.add_argument("--eager", action="store_true",
                      help="refused: an eager step has nothing compiled to inspect")
    args = parser.parse_args(argv)
    if args.eager:
        parser.error("--eager: an eager step has nothing compiled to inspect; "
                     "see examples/autograd_basics.py for eager autograd")
    max_lines = args.max_lines if args.max_lines is not None else (25 if args.quick else 0)
    if autojit.config.disabled():
        print("AUTOJIT_DISABLE=1: autojit.compile runs functions eagerly, so nothing is "
              "compiled and there is nothing to inspect")
        return 0

    autojit.manual_seed(0)
    model = nn.Sequential(nn.Linear(4, 8), nn.Tanh(), nn.Linear(8, 2))
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)

    @autojit.compile
    def train_step(x, y):
        loss = nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach()

    x, y = autojit.randn(16, 4), autojit.randn(16, 2)
    losses = [train_step(x, y).item() for _ in range(3)]
    print(f"train_step ran 3 times (loss {losses[0]:.4f} -> {losses[-1]:.4f}) with "
          f"{len(train_step.executables)} executable, traced and compiled in "
          f"{train_step.compile_seconds:.2f} s")

    traced, optimized = train_step.ir(optimized=False), train_step.ir()
    heading(f"1. the traced graph: forward, adjoint and SGD update ({node_count(traced)} nodes)")
    show(traced, max_lines)
    heading(f"1. after the optimization passes ({node_count(optimized)} nodes); "
            "the lines that changed:")
    diff = difflib.unified_diff(traced.splitlines(), optimized.splitlines(), "traced",
                                "optimized", n=0, lineterm="")
    show("\n".join(line for line in diff if not line.startswith("@@")), max_lines)

    groups = train_step.fusion_groups()
    heading(f"2. fusion groups ({groups.count('kernel')} kernels, "
            f"{groups.count('node')} single nodes, in execution order)")
    show(groups, max_lines)

    guards = train_step.guards()
    heading(f"3. guards ({len(guards.splitlines())} conditions, checked before each call)")
    show(guards, max_lines)

    kernels = train_step.kernel_source()
    heading(f"4. LLVM IR of one kernel: the smallest loop of the "
            f"{kernels.count('; ModuleID')} kernel modules")
    show(smallest_loop_kernel(kernels), max_lines)

    # A function that returns a loss still attached to autograd: the backward runs later,
    # outside, so it is compiled separately, and the forward keeps what it needs ("saved").
    compiled_loss = autojit.compile(lambda inputs: model(inputs).square().mean())
    loss = compiled_loss(x)
    loss.backward()
    heading(f"5. a result differentiated outside: loss.grad_fn = {loss.grad_fn.name()}")
    print("forward graph (returns the loss and the saved values):")
    show(compiled_loss.forward_ir(), max_lines)
    print("backward graph (saved values and the loss's cotangent in, parameter gradients out):")
    show(compiled_loss.backward_ir(), max_lines)
    gradient_norm = sum(parameter.grad.square().sum() for parameter in model.parameters())
    print(f"after loss.backward(): the parameters' gradients have norm "
          f"{gradient_norm.sqrt().item():.4f}")

    dot = train_step.graph_dot()
    heading(f"6. a picture of the training step: {dot.count('cluster_p0_k')} kernel boxes")
    folder = picture_folder(args.out)
    graph = os.path.join(folder, "train_step.dot")
    with open(graph, "w") as file:
        file.write(dot)
    print(f"wrote {graph} (Graphviz DOT)")
    try:
        picture = train_step.render_graph(os.path.join(folder, "train_step"), format="svg")
    except Exception as error:  # noqa: BLE001 - no graphviz package, or no dot program
        print(f"not rendered ({type(error).__name__}); `dot -Tsvg {graph}` draws it")
    else:
        print(f"rendered {picture}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
