"""Custom operators inside autojit.compile: a custom_op with a fake impl is one graph node that
runs its kernel on the call's values (as torch.compile keeps it opaque), so a kernel that reads
its tensors through NumPy, as torch's custom-op tutorial's does, compiles once instead of
tracing again for every new value; gradients are the registered backward's. Calls that cannot
be one node (no fake impl, a mutated argument, a data-dependent size) are traced through, as
before. Values and gradients against torch's eager run of the same operator."""


import warnings

import numpy as np
import pytest
from torch_compare import torch

import autojit


def _numpy_sin(framework, name):
    """torch's tutorial operator: a kernel through NumPy, a fake impl and a backward."""
    @framework.library.custom_op(name, mutates_args=())
    def numpy_sin(x: framework.Tensor, scale: float, dims: list[int]) -> framework.Tensor:
        values = np.sin(x.detach().cpu().numpy()) * scale
        return framework.from_numpy(np.ascontiguousarray(values)).sum(dim=dims)

    @numpy_sin.register_fake
    def _(x, scale, dims):
        return x.sum(dim=dims)

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0])
        ctx.scale, ctx.dims = inputs[1], inputs[2]

    def backward(ctx, grad):
        (x,) = ctx.saved_tensors
        for dim in sorted(ctx.dims):
            grad = grad.unsqueeze(dim)
        return grad * x.cos() * ctx.scale, None, None

    numpy_sin.register_autograd(backward, setup_context=setup_context)
    return numpy_sin


def test_a_numpy_kernel_compiles_once_as_one_node_with_its_backward():
    op = _numpy_sin(autojit, "ajgraph::numpy_sin")
    reference = _numpy_sin(torch, "ajgraph::numpy_sin")

    @autojit.compile
    def step(x, w):
        loss = op(x @ w, 0.5, [1]).pow(2).sum()
        loss.backward()
        return loss

    w = autojit.randn(5, 3, requires_grad=True)
    for seed in range(3):
        x = np.random.default_rng(seed).standard_normal((4, 5)).astype(np.float32)
        w.grad = None
        loss = step(autojit.tensor(x), w)
        tw = torch.tensor(w.detach().numpy(), requires_grad=True)
        expected = reference(torch.tensor(x) @ tw, 0.5, [1]).pow(2).sum()
        expected.backward()
        np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-6)
        np.testing.assert_allclose(w.grad.numpy(), tw.grad.numpy(), rtol=1e-5, atol=1e-6)
    stats = step.stats()
    assert stats.traces == 1 and stats.split_breaks == 0 and stats.eager_calls == 0
    assert "custom::ajgraph::numpy_sin" in step.ir()


def test_gradients_outside_the_compiled_function():
    op = _numpy_sin(autojit, "ajgraph::numpy_sin_outside")
    forward = autojit.compile(lambda x: op(x * 2, 1.0, [0]))
    for seed in range(2):
        values = np.random.default_rng(seed).standard_normal((3, 2))
        x = autojit.tensor(values, requires_grad=True)
        forward(x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), 2 * np.cos(2 * values), rtol=1e-12)
    assert forward.stats().traces == 1


def test_calls_that_cannot_be_one_node_are_traced_through():
    @autojit.library.custom_op("ajgraph::no_fake", mutates_args=())
    def no_fake(x: autojit.Tensor) -> autojit.Tensor:
        return x * 3

    @autojit.library.custom_op("ajgraph::fill", mutates_args=("out",))
    def fill(x: autojit.Tensor, out: autojit.Tensor) -> None:
        out.copy_(x + 1)

    @fill.register_fake
    def _(x, out):
        return None

    @autojit.library.custom_op("ajgraph::positive", mutates_args=())
    def positive(x: autojit.Tensor) -> autojit.Tensor:
        return x[x > 0]

    @positive.register_fake
    def _(x):
        size = autojit.library.get_ctx().new_dynamic_size()
        return x.new_empty(size)

    @autojit.compile
    def f(x):
        out = autojit.zeros_like(x)
        fill(x, out)
        return no_fake(x) + out, positive(x)

    x = autojit.tensor([-1.0, 2.0, 3.0])
    first, second = f(x)
    assert first.tolist() == [-3.0, 9.0, 13.0] and second.tolist() == [2.0, 3.0]
    assert "custom::" not in f.ir()


def _grouped_mm(framework, name):
    """transformers' grouped matmul fallback (its Mixture-of-Experts layers): the rows of each
    expert multiplied by its weight, the groups read from `offs.tolist()`; its backward is an
    operator of its own that returns two tensors, the input's and the weights' gradients."""
    def forward(x, weight, offs):
        out = framework.zeros(x.shape[0], weight.shape[2], dtype=x.dtype)
        start = 0
        for i, end in enumerate(offs.tolist()):
            if end > start:
                framework.mm(x[start:end], weight[i], out=out[start:end])
            start = end
        return out

    def gradients(x, weight, offs, grad):
        grad_x, grad_weight = framework.zeros_like(x), framework.zeros_like(weight)
        start = 0
        for i, end in enumerate(offs.tolist()):
            if end > start:
                framework.mm(grad[start:end], weight[i].T, out=grad_x[start:end])
                framework.mm(x[start:end].T, grad[start:end], out=grad_weight[i])
            start = end
        return grad_x, grad_weight

    library = framework.library
    library.custom_op(f"{name}", forward, mutates_args=(),
                      schema="(Tensor x, Tensor weight, Tensor offs) -> Tensor")
    library.register_fake(name, lambda x, weight, offs: x.new_empty(x.shape[0], weight.shape[2]))
    library.custom_op(f"{name}_backward", gradients, mutates_args=(),
                      schema="(Tensor x, Tensor weight, Tensor offs, Tensor grad) -> "
                             "(Tensor, Tensor)")
    library.register_fake(f"{name}_backward",
                          lambda x, weight, offs, grad: (framework.empty_like(x),
                                                         framework.empty_like(weight)))
    namespace, _, short = name.partition("::")
    backward_op = getattr(getattr(framework.ops, namespace), f"{short}_backward")

    def setup_context(ctx, inputs, output):
        ctx.save_for_backward(inputs[0], inputs[1])
        ctx.offs = inputs[2]

    def backward(ctx, grad):
        x, weight = ctx.saved_tensors
        grad_x, grad_weight = backward_op(x, weight, ctx.offs, grad)
        return grad_x, grad_weight, None

    library.register_autograd(name, backward, setup_context=setup_context)
    return getattr(getattr(framework.ops, namespace), short)


def test_an_operator_returning_several_tensors_is_one_node():
    """The backward operator's two gradients come from one node: the kernel reads its offsets
    on every call's values, and the step traces once (it broke the graph on every call)."""
    op = _grouped_mm(autojit, "ajgraph::grouped_mm")
    reference = _grouped_mm(torch, "ajgraph::grouped_mm")
    rng = np.random.default_rng(0)
    weight_values = rng.standard_normal((3, 4, 2))
    weight = autojit.tensor(weight_values, requires_grad=True)

    @autojit.compile
    def step(x, offs):
        weight.grad = None
        loss = op(x, weight, offs).pow(2).sum()
        loss.backward()
        return loss

    for offsets in ([2, 5, 6], [0, 4, 6], [3, 3, 6], [1, 2, 6]):
        x_values = rng.standard_normal((6, 4))
        with warnings.catch_warnings():
            warnings.simplefilter("error", autojit.CompileWarning)
            loss = step(autojit.tensor(x_values), autojit.tensor(offsets))
        tw = torch.tensor(weight_values, requires_grad=True)
        expected = reference(torch.tensor(x_values), tw, torch.tensor(offsets)).pow(2).sum()
        expected.backward()
        np.testing.assert_allclose(loss.item(), expected.item(), rtol=1e-12)
        np.testing.assert_allclose(weight.grad.numpy(), tw.grad.numpy(), rtol=1e-12)
    stats = step.stats()
    assert stats.traces == 1 and stats.graph_breaks == 0 and stats.eager_calls == 0
    assert "custom::ajgraph::grouped_mm_backward" in step.ir()


def test_several_results_of_two_dtypes_are_traced_through():
    @autojit.library.custom_op("ajgraph::split_kinds", mutates_args=())
    def split_kinds(x: autojit.Tensor) -> tuple[autojit.Tensor, autojit.Tensor]:
        return x * 2, (x > 0).to(autojit.int64)

    split_kinds.register_fake(lambda x: (autojit.empty_like(x),
                                         autojit.empty_like(x, dtype=autojit.int64)))
    f = autojit.compile(lambda x: split_kinds(x))
    doubled, signs = f(autojit.tensor([-1.0, 2.0]))
    assert doubled.tolist() == [-2.0, 4.0] and signs.tolist() == [0, 1]
    assert "custom::" not in f.ir()


def test_a_kernel_that_disagrees_with_its_fake_impl_is_an_error_naming_the_operator():
    @autojit.library.custom_op("ajgraph::liar", mutates_args=())
    def liar(x: autojit.Tensor) -> autojit.Tensor:
        return autojit.from_numpy(np.zeros(x.shape[0] + 1, np.float32))

    @liar.register_fake
    def _(x):
        return autojit.empty_like(x)

    with pytest.raises(RuntimeError, match=r"ajgraph::liar: its kernel returned a tensor of "
                                           r"shape \[4\] .* fake impl gives shape \[3\]"):
        autojit.compile(lambda x: liar(x) * 2)(autojit.ones(3))


def _library_twice(framework, namespace):
    """An operator defined the older way: a Library's schema and a CPU kernel through NumPy,
    with a fake impl."""
    library = framework.library.Library(namespace, "DEF")
    library.define("twice(Tensor x) -> Tensor")
    library.impl("twice", lambda x: framework.from_numpy(x.detach().numpy() * 2), "CPU")
    framework.library.register_fake(f"{namespace}::twice")(lambda x: framework.empty_like(x))
    return library, getattr(framework.ops, namespace).twice


def test_a_library_cpu_kernel_is_one_node_and_compiles_once():
    _keep, twice = _library_twice(autojit, "ajlibimpl")
    _keep_torch, twice_torch = _library_twice(torch, "ajlibimpl")
    compiled = autojit.compile(lambda x: twice(x).sin())
    for values in ([1.0, 2.0], [3.0, 4.0], [5.0, 6.0]):
        got = compiled(autojit.tensor(values)).numpy()
        expected = twice_torch(torch.tensor(values)).sin().numpy()
        assert np.allclose(got, expected, rtol=1e-6)
    assert compiled.stats().traces == 1


def test_a_library_cpu_kernel_without_autograd_warns_and_passes_no_gradient():
    """torch's fallback for an operator with no autograd kernel: the result requires grad,
    and a backward through it warns and gives its inputs no gradient."""
    _keep, twice = _library_twice(autojit, "ajlibgrad")
    _keep_torch, twice_torch = _library_twice(torch, "ajlibgrad")
    for framework, op in ((torch, twice_torch), (autojit, twice)):
        x = framework.ones(3, requires_grad=True)
        y = op(x)
        assert y.requires_grad
        with pytest.warns(UserWarning, match="an autograd kernel was not registered"):
            (y.sum() + (x * 3).sum()).backward()
        assert x.grad.tolist() == [3.0, 3.0, 3.0]
