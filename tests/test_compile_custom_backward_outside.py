"""Compiled forwards whose backward runs outside (`torch.compile(model)`, then `.backward()`),
over what transformers' mixture-of-experts layers do: a custom autograd.Function whose forward
returns a tensor a factory made and an `out=` product filled, and a torch.library custom op
whose registered backward fills `zeros_like` temporaries with `out=` products over groups read
with `tolist()`; and results holding a device. Gradients against eager and torch."""

import warnings

import numpy as np
import pytest

import autojit as aj

torch = pytest.importorskip("torch")


def _function(lib, fill):
    class Product(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x, w):
            ctx.save_for_backward(x, w)
            with lib.no_grad():
                out = lib.zeros(x.shape[0], w.shape[1])
                if fill == "out":
                    lib.mm(x, w, out=out)
                else:
                    out.copy_(x @ w)
            return out

        @staticmethod
        def backward(ctx, grad):
            x, w = ctx.saved_tensors
            return grad @ w.T, x.T @ grad

    return Product


@pytest.mark.parametrize("fill", ["out", "copy"])
def test_a_function_returning_a_filled_factory_tensor(fill):
    rng = np.random.default_rng(0)
    x0, w0 = rng.standard_normal((5, 3)), rng.standard_normal((3, 4))
    found = {}
    for name, lib, compiled in (("torch", torch, False), ("eager", aj, False),
                                ("compiled", aj, True)):
        x = lib.tensor(x0, dtype=lib.float32, requires_grad=True)
        w = lib.tensor(w0, dtype=lib.float32, requires_grad=True)
        product = _function(lib, fill)

        def step(x, w, product=product):
            return (product.apply(x, w) ** 2).sum()

        (aj.compile(step) if compiled else step)(x, w).backward()
        found[name] = (x.grad.numpy(), w.grad.numpy())
    for name in ("eager", "compiled"):
        for ours, theirs in zip(found[name], found["torch"]):
            np.testing.assert_allclose(ours, theirs, rtol=1e-5, atol=1e-5)


def _grouped_op(lib, namespace):
    def forward(input, weight, offs):
        output = lib.zeros(input.size(0), weight.size(2))
        start = 0
        for i, end in enumerate(offs.tolist()):
            if start == end:
                continue
            lib.mm(input[start:end], weight[i], out=output[start:end])
            start = end
        return output

    def backward_kernel(input, weight, offs, grad):
        grad_input, grad_weight = lib.zeros_like(input), lib.zeros_like(weight)
        start = 0
        for i, end in enumerate(offs.tolist()):
            if start == end:
                continue
            lib.mm(grad[start:end], weight[i].T, out=grad_input[start:end])
            lib.mm(input[start:end].T, grad[start:end], out=grad_weight[i])
            start = end
        return grad_input, grad_weight

    def setup(ctx, inputs, output):
        ctx.save_for_backward(inputs[0], inputs[1])
        ctx.offs = inputs[2]

    def backward(ctx, grad):
        input, weight = ctx.saved_tensors
        return (*getattr(lib.ops, namespace).grouped_bwd(input, weight, ctx.offs, grad), None)

    lib.library.custom_op(f"{namespace}::grouped", forward, mutates_args=(),
                          schema="(Tensor input, Tensor weight, Tensor offs) -> Tensor")
    lib.library.register_fake(f"{namespace}::grouped", lambda i, w, o: lib.empty(
        i.size(0), w.size(2)))
    lib.library.register_autograd(f"{namespace}::grouped", backward, setup_context=setup)
    lib.library.custom_op(f"{namespace}::grouped_bwd", backward_kernel, mutates_args=(),
                          schema="(Tensor input, Tensor weight, Tensor offs, Tensor grad) -> "
                                 "(Tensor, Tensor)")
    return getattr(lib.ops, namespace).grouped


def test_a_custom_op_whose_backward_fills_temporaries():
    rng = np.random.default_rng(1)
    router0, weight0 = rng.standard_normal((8, 4)), rng.standard_normal((4, 8, 8))
    inputs = [rng.standard_normal((10, 8)) for _ in range(3)]
    found = {}
    for name, lib, compiled in (("torch", torch, False), ("eager", aj, False),
                                ("compiled", aj, True)):
        grouped = _grouped_op(lib, f"families_{name}")
        router = lib.tensor(router0, dtype=lib.float32, requires_grad=True)
        weight = lib.tensor(weight0, dtype=lib.float32, requires_grad=True)

        def forward(x, router=router, weight=weight, grouped=grouped, lib=lib):
            scores = x @ router
            top = scores.argmax(-1)
            order = top.argsort()
            offs = lib.bincount(top, minlength=4).cumsum(0).to(lib.int32)
            return (grouped((x @ router)[order] @ lib.ones(4, 8), weight, offs) ** 2).mean()

        run = aj.compile(forward) if compiled else forward
        grads = []
        for x0 in inputs:
            router.grad = weight.grad = None
            run(lib.tensor(x0, dtype=lib.float32)).backward()
            grads.append((router.grad.numpy().copy(), weight.grad.numpy().copy()))
        found[name] = grads
    for name in ("eager", "compiled"):
        for ours, theirs in zip(found[name], found["torch"]):
            for a, b in zip(ours, theirs):
                np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-4)


def test_results_holding_a_device_and_a_dtype_are_made_again():
    class Cache:
        def __init__(self, value):
            self.value, self.device, self.dtype = value, value.device, value.dtype

    compiled = aj.compile(lambda x: Cache(x * 2))
    with warnings.catch_warnings():
        warnings.simplefilter("error", aj.CompileWarning)  # no fallback to eager
        for _ in range(3):
            got = compiled(aj.ones(2))
    assert compiled.stats().compiled_calls == 3
    assert got.value.tolist() == [2.0, 2.0] and got.device == aj.device("cpu")
    assert got.dtype is aj.float32
