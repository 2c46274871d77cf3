"""A tour of autojit's eager autograd: run `python examples/autograd_basics.py`.

Each section prints what it computed and checks it against a closed form, so the script doubles
as a smoke test of the eager core (tests/test_examples.py runs it). Everything here goes through
the same path as any user program: Tensor ops bind primitives from ops/, autograd/ records the
graph and differentiates it, and create_graph=True makes the gradient itself differentiable.

It runs eagerly only: --eager is accepted, and --compile is refused with a pointer to the
examples that compile (inspect_compiled.py shows what the compiler makes of a step).
"""

from __future__ import annotations

import argparse

import autojit
from autojit import autograd


def close(actual, expected, tolerance=1e-9) -> bool:
    """Elementwise comparison of a tensor (or list) with a list of floats."""
    values = actual.tolist() if isinstance(actual, autojit.Tensor) else actual
    if not isinstance(values, list):
        values, expected = [values], [expected]
    pairs = zip(values, expected, strict=True)
    return all(abs(a - e) <= tolerance * max(1.0, abs(e)) for a, e in pairs)


def check(label: str, condition: bool) -> None:
    if not condition:
        raise SystemExit(f"check failed: {label}")


def section(title: str) -> None:
    print(f"\n== {title}")


def leaves_and_backward() -> None:
    section("requires_grad, backward and .grad accumulation")
    x = autojit.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = (x * x).sum()  # y = sum(x^2), dy/dx = 2x
    print("y =", y)
    y.backward()
    print("x.grad after one backward:", x.grad)
    check("dy/dx = 2x", close(x.grad, [2.0, 4.0, 6.0]))

    # .grad accumulates across backward calls, as in torch; zero it between steps.
    (x * x).sum().backward()
    print("x.grad after a second backward:", x.grad)
    check("accumulated", close(x.grad, [4.0, 8.0, 12.0]))
    x.grad = None


def higher_derivatives() -> None:
    section("autograd.grad with create_graph: derivatives of x**4 at x = 2")
    x = autojit.tensor(2.0, dtype=autojit.float64, requires_grad=True)
    y = x**4
    (first,) = autograd.grad(y, x, create_graph=True)  # 4x^3
    (second,) = autograd.grad(first, x, create_graph=True)  # 12x^2
    (third,) = autograd.grad(second, x)  # 24x
    print(f"d/dx   x^4 = {first.item():g}  (4x^3  = {4 * 2.0**3:g})")
    print(f"d2/dx2 x^4 = {second.item():g}  (12x^2 = {12 * 2.0**2:g})")
    print(f"d3/dx3 x^4 = {third.item():g}  (24x   = {24 * 2.0:g})")
    check("first derivative", close(first, 32.0))
    check("second derivative", close(second, 48.0))
    check("third derivative", close(third, 48.0))


def penalty(w, x):
    """The gradient penalty sum((d f / d x)^2) for f = sum(tanh(w * x)), as a graph in w."""
    f = (w * x).tanh().sum()
    (grad_x,) = autograd.grad(f, x, create_graph=True)
    return (grad_x * grad_x).sum()


def gradient_penalty() -> None:
    section("gradient penalty: the gradient of a gradient norm")
    w = autojit.tensor([0.5, -1.0, 2.0], dtype=autojit.float64, requires_grad=True)
    x = autojit.tensor([1.0, 0.3, -0.2], dtype=autojit.float64, requires_grad=True)
    value = penalty(w, x)
    value.backward(inputs=[w])  # differentiate through the gradient, into w only
    print("penalty =", f"{value.item():.6f}")
    print("d penalty / d w =", w.grad)

    # Central finite differences of the penalty in w, computed without any graph.
    step = 1e-6
    estimate = []
    for index in range(3):
        shifted = []
        for sign in (1.0, -1.0):
            values = w.detach().tolist()
            values[index] += sign * step
            shifted.append(penalty(autojit.tensor(values, dtype=autojit.float64), x).item())
        estimate.append((shifted[0] - shifted[1]) / (2 * step))
    print("finite differences =", [round(v, 6) for v in estimate])
    check("penalty gradient", close(w.grad, estimate, tolerance=1e-6))
    check("x.grad untouched with inputs=[w]", x.grad is None)


def hessian_vector_product() -> None:
    section("Hessian-vector product by double backward")
    # f(x) = sum(x^3) + sum(x)^2, so H = diag(6x) + 2 and Hv = 6 x v + 2 sum(v).
    x = autojit.tensor([1.0, 2.0, 3.0], dtype=autojit.float64, requires_grad=True)
    v = autojit.tensor([1.0, 0.0, -1.0], dtype=autojit.float64)
    f = (x**3).sum() + x.sum() ** 2
    (g,) = autograd.grad(f, x, create_graph=True)
    (hv,) = autograd.grad(g, x, grad_outputs=v)
    pairs = zip(x.tolist(), v.tolist(), strict=True)
    expected = [6 * xi * vi + 2 * sum(v.tolist()) for xi, vi in pairs]
    print("Hv =", hv, " closed form:", expected)
    check("Hessian-vector product", close(hv, expected))


def grad_modes() -> None:
    section("no_grad")
    x = autojit.tensor([1.0, 2.0], requires_grad=True)
    with autojit.no_grad():
        y = x * 2
    print("under no_grad: y.requires_grad =", y.requires_grad, ", y.grad_fn =", y.grad_fn)
    check("no_grad records nothing", not y.requires_grad and y.grad_fn is None)
    z = x * 2
    print("outside: z.grad_fn =", z.grad_fn.name())


def version_counter_error() -> None:
    section("in-place writes and the version counter")
    x = autojit.tensor([0.5, 1.5], requires_grad=True)
    y = x.exp()  # ExpBackward0 saves its output y to compute the gradient y * grad
    loss = y.sum()
    print("y._version before:", y._version)
    y.mul_(2)  # overwrites the saved value
    print("y._version after y.mul_(2):", y._version)
    try:
        (loss + y.sum()).backward()
    except RuntimeError as error:
        print("RuntimeError:", str(error).split(". Hint")[0])
    else:
        check("backward through a modified saved tensor raises", False)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--eager", action="store_true", help="run eagerly (the only mode)")
    mode.add_argument("--compile", action="store_true", help="refused: this tour is eager")
    parser.add_argument("--quick", action="store_true",
                        help="accepted as every example does; the tour runs in seconds anyway")
    if parser.parse_args(argv).compile:
        parser.error("--compile: this tour of eager autograd has no compiled step; "
                     "examples/inspect_compiled.py shows what autojit.compile makes of one")
    leaves_and_backward()
    higher_derivatives()
    gradient_penalty()
    hessian_vector_product()
    grad_modes()
    version_counter_error()
    print("\nall checks passed")


if __name__ == "__main__":
    main()
