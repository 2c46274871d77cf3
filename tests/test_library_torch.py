"""autojit.library (torch.library) against torch's: operators defined from schemas and given
kernels with Library, custom_op with its inferred schema, fake impls on meta tensors,
register_autograd's backward and the error without one, register_kernel, mutated arguments'
versions, autocast kernels with the dispatch-key guard, and torch's errors."""

# No `from __future__ import annotations`: custom_op reads the annotations of functions defined
# here, which name a local (`top`), as a library's own code would name torch.
import itertools
from typing import List, Optional  # noqa: UP035 - the annotations libraries write

import pytest

import autojit

torch = pytest.importorskip("torch")
_NAMES = itertools.count()


def _show(function):
    try:
        result = function()
    except Exception as error:  # noqa: BLE001 - the outcome compared
        text = str(error).split("\n")[0][:160]
        return type(error).__name__, text.replace("torch.", "").replace("autojit.", "")
    if hasattr(result, "tolist") and hasattr(result, "device"):
        return ("meta", tuple(result.shape)) if result.device.type == "meta" else result.tolist()
    return "callable" if callable(result) else repr(result)


def _outcomes(top, ns: str) -> list:
    seen = []
    ops = lambda: getattr(top.ops, ns)  # noqa: E731
    lib = top.library.Library(ns, "DEF")
    seen.append(_show(lambda: lib.define("foo(Tensor x, float s=2.0) -> Tensor")))
    seen.append(_show(lambda: top.library.Library(ns, "DEF")))
    seen.append(_show(lambda: str(ops().foo.default)))
    seen.append(_show(lambda: ops().foo(top.ones(2))))
    lib.impl("foo", lambda x, s=2.0: x * s, "CPU")
    seen += [_show(lambda: ops().foo(top.ones(2))), _show(lambda: ops().foo(top.ones(2), s=3.0))]
    x = top.ones(2, requires_grad=True)
    y = ops().foo(x)
    seen.append(y.requires_grad)
    seen += [_show(lambda: ops().bar), _show(lambda: top.library.register_fake(f"{ns}::nope",
                                                                               lambda x: x))]
    seen.append(_show(lambda: ops().foo(top.ones(2, device="meta"))))

    @top.library.register_fake(f"{ns}::foo")
    def _(x, s=2.0):
        return top.empty_like(x)

    seen.append(_show(lambda: ops().foo(top.ones(2, device="meta"))))

    @top.library.custom_op(f"{ns}::bar", mutates_args=())
    def bar(x: top.Tensor, n: int) -> top.Tensor:
        return x * n

    seen.append(str(ops().bar.default._schema).replace(ns, "NS"))
    seen += [_show(lambda: bar(top.ones(2), 3)), _show(lambda: bar(top.ones(2), n=3)),
             _show(lambda: ops().bar(top.ones(2), 3))]
    z = bar(x, 2)
    seen += [z.requires_grad, _show(lambda: z.sum().backward())]
    bar.register_autograd(lambda ctx, g: (g * ctx.n, None),
                          setup_context=lambda ctx, inputs, output: setattr(ctx, "n", inputs[1]))
    x.grad = None
    bar(x, 2).sum().backward()
    seen.append(x.grad.tolist())

    @top.library.custom_op(f"{ns}::twice", mutates_args={"out"})
    def twice(x: top.Tensor, out: top.Tensor) -> None:
        out.copy_(x * 2)

    seen.append(str(ops().twice.default._schema).replace(ns, "NS"))
    out = top.zeros(2)
    twice(top.ones(2), out)
    seen.append((out.tolist(), out._version))

    @bar.register_kernel("cpu")
    def _(x, n):
        return x * n * 10

    seen.append(_show(lambda: bar(top.ones(2), 3)))

    @top.library.custom_op(f"{ns}::same", mutates_args=())
    def same(x: top.Tensor) -> top.Tensor:
        return x

    seen.append(_show(lambda: same(top.ones(2)))[0])

    def listed(x: top.Tensor, *, k: int = 2) -> list[top.Tensor]:
        return [x]

    def many(x: top.Tensor, y: Optional[top.Tensor], sizes: List[int], f: float = 1.0,  # noqa: UP006, UP045
             b: bool = False, s: str = "a", d: Optional[top.dtype] = None,  # noqa: UP045
             o: Optional[int] = None) -> tuple[top.Tensor, top.Tensor]:  # noqa: UP045
        return x, x

    seen += [top.library.infer_schema(listed, mutates_args=()),
             top.library.infer_schema(many, mutates_args=()),
             _show(lambda: top.library.infer_schema(lambda x: x, mutates_args=())),
             _show(lambda: bar(top.ones(2, device="meta"), 2))[0],
             _show(lambda: top.library.register_autograd(f"{ns}::nope2", lambda ctx, g: g))[0]]
    return seen


def test_custom_operators_behave_as_torchs():
    ns = f"autojit_test_{next(_NAMES)}"
    assert _outcomes(autojit, ns) == _outcomes(torch, ns)


def test_autocast_kernel_runs_inside_autocast_and_not_under_the_guard():
    ns = f"autojit_test_{next(_NAMES)}"
    calls = []
    lib = autojit.library.Library(ns, "DEF")
    lib.define("scale(Tensor x) -> Tensor")
    lib.impl("scale", lambda x: calls.append("cpu") or x * 2, "CPU")
    keys = autojit.library.DispatchKeySet(autojit.library.DispatchKey.AutocastCPU)

    def autocast_kernel(x):
        calls.append("autocast")
        with autojit.library._ExcludeDispatchKeyGuard(keys):
            return getattr(autojit.ops, ns).scale(x.to(autojit.float64))

    autojit.library.Library(ns, "IMPL").impl("scale", autocast_kernel, "AutocastCPU")
    assert getattr(autojit.ops, ns).scale(autojit.ones(2)).dtype == autojit.float32
    with autojit.autocast("cpu", dtype=autojit.bfloat16):
        assert getattr(autojit.ops, ns).scale(autojit.ones(2)).dtype == autojit.float64
    assert calls == ["cpu", "autocast", "cpu"]


def test_a_custom_op_compiles_through_its_kernel():
    ns = f"autojit_test_{next(_NAMES)}"

    @autojit.library.custom_op(f"{ns}::cube", mutates_args=())
    def cube(x: autojit.Tensor) -> autojit.Tensor:
        return x * x * x

    cube.register_autograd(lambda ctx, g: g * 3 * ctx.saved_tensors[0] ** 2,
                           setup_context=lambda ctx, inputs, output: ctx.save_for_backward(
                               inputs[0]))

    @autojit.compile
    def step(x):
        return cube(x).sum()

    x = autojit.tensor([1.0, 2.0], requires_grad=True)
    for _ in range(2):
        x.grad = None
        step(x).backward()
        assert x.grad.tolist() == [3.0, 12.0]
