"""autojit.func against torch.func: values, structure, composition, compiled, and errors."""

from __future__ import annotations

import numpy as np
import pytest

import autojit
from autojit import func as F

torch = pytest.importorskip("torch")
TF = torch.func

RNG = np.random.default_rng(0)
X = RNG.uniform(-1, 1, (4,))
Y = RNG.uniform(-1, 1, (4,))
BATCH = RNG.uniform(-1, 1, (3, 4))
W = RNG.uniform(-1, 1, (4, 2))


def to_numpy(value):
    if isinstance(value, (tuple, list)):
        return type(value)(to_numpy(v) for v in value)
    if isinstance(value, dict):
        return {k: to_numpy(v) for k, v in value.items()}
    if isinstance(value, torch.Tensor):
        return value.detach().numpy()
    if isinstance(value, autojit.Tensor):
        return np.asarray(value.detach())
    return value


def assert_same(actual, expected, atol=1e-10):
    actual, expected = to_numpy(actual), to_numpy(expected)
    if isinstance(expected, (tuple, list)):
        assert isinstance(actual, type(expected)) and len(actual) == len(expected)
        for a, e in zip(actual, expected):
            assert_same(a, e, atol)
    elif isinstance(expected, dict):
        assert actual.keys() == expected.keys()
        for key in expected:
            assert_same(actual[key], expected[key], atol)
    elif isinstance(expected, np.ndarray):
        assert actual.shape == expected.shape and actual.dtype == expected.dtype
        np.testing.assert_allclose(actual, expected, atol=atol, rtol=1e-7)
    else:
        assert actual == expected


def run_both(transform, function_of, *arrays):
    """transform(function_of(module)) applied to the arrays as autojit and as torch tensors."""
    ours = transform(F, function_of(autojit))(*[autojit.tensor(a) for a in arrays])
    theirs = transform(TF, function_of(torch))(*[torch.tensor(a) for a in arrays])
    assert_same(ours, theirs)
    return ours


def scalar_function(lib):
    return lambda x: (x.sin() * x.exp()).sum()


def two_argument_function(lib):
    return lambda x, y: (x * y).tanh() + x.sin()


@pytest.mark.parametrize("transform", [
    lambda T, f: T.grad(f),
    lambda T, f: T.grad_and_value(f),
    lambda T, f: T.hessian(f),
    lambda T, f: T.jacrev(T.grad(f)),
    lambda T, f: T.jacfwd(T.jacrev(f)),
    lambda T, f: T.grad(lambda x: T.grad(f)(x).sum()),
    lambda T, f: (lambda x: T.jvp(T.grad(f), (x,), (x.cos(),))),
    lambda T, f: (lambda x: T.jvp(lambda y: T.jvp(f, (y,), (y,))[1], (x,), (x * 2,))),
    lambda T, f: (lambda x: T.vjp(f, x)[1](x.sum() * 0 + 1.5)),
    lambda T, f: (lambda x: T.linearize(T.grad(f), x)[1](x)),
], ids=["grad", "grad_and_value", "hessian", "jacrev_grad", "jacfwd_jacrev", "grad_grad",
        "jvp_grad", "jvp_jvp", "vjp", "linearize"])
def test_scalar_transforms(transform):
    run_both(transform, scalar_function, X)


@pytest.mark.parametrize("transform", [
    lambda T, f: T.jacrev(f),
    lambda T, f: T.jacrev(f, argnums=(0, 1)),
    lambda T, f: T.jacfwd(f, argnums=1),
    lambda T, f: T.jacfwd(f, argnums=(0, 1)),
    lambda T, f: T.vmap(f),
    lambda T, f: T.vmap(f, in_dims=(0, None)),
    lambda T, f: (lambda x, y: T.jvp(f, (x, y), (y, x))),
    lambda T, f: (lambda x, y: T.vjp(f, x, y)[1](x)),
], ids=["jacrev", "jacrev_argnums", "jacfwd", "jacfwd_argnums", "vmap", "vmap_in_dims",
        "jvp", "vjp"])
def test_vector_transforms(transform):
    run_both(transform, two_argument_function, X, Y)


def test_pytrees_and_aux():
    def f(lib):
        def function(inputs):
            total = (inputs["a"] * inputs["b"][0]).sum() + inputs["b"][1].sum()
            return total, {"aux": inputs["a"] * 2}
        return function

    ours = F.grad(f(autojit), has_aux=True)(
        {"a": autojit.tensor(X), "b": (autojit.tensor(Y), autojit.tensor(X))})
    theirs = TF.grad(f(torch), has_aux=True)(
        {"a": torch.tensor(X), "b": (torch.tensor(Y), torch.tensor(X))})
    assert_same(ours, theirs)
    ours = F.jacrev(lambda d: {"out": d["a"] * d["a"]})({"a": autojit.tensor(X)})
    theirs = TF.jacrev(lambda d: {"out": d["a"] * d["a"]})({"a": torch.tensor(X)})
    assert_same(ours, theirs)


def test_vmap_dims_and_nesting():
    assert_same(F.vmap(lambda row: row.sum(), in_dims=1)(autojit.tensor(BATCH)),
                TF.vmap(lambda row: row.sum(), in_dims=1)(torch.tensor(BATCH)))
    assert_same(F.vmap(lambda r: (r, r * 2), out_dims=(1, 0))(autojit.tensor(BATCH)),
                TF.vmap(lambda r: (r, r * 2), out_dims=(1, 0))(torch.tensor(BATCH)))
    nested_ours = F.vmap(F.vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(None, 0))
    nested_theirs = TF.vmap(TF.vmap(lambda a, b: a * b, in_dims=(0, None)), in_dims=(None, 0))
    assert_same(nested_ours(autojit.tensor(X), autojit.tensor(Y)),
                nested_theirs(torch.tensor(X), torch.tensor(Y)))
    assert_same(F.vmap(lambda r: r @ autojit.tensor(W), chunk_size=2)(autojit.tensor(BATCH)),
                torch.tensor(BATCH) @ torch.tensor(W))


def test_per_sample_gradients_compiled():
    weights = autojit.tensor(W)

    def loss(w, sample, target):
        return ((sample @ w).tanh() - target).pow(2).sum()

    targets = RNG.uniform(-1, 1, (3, 2))
    per_sample = F.vmap(F.grad(loss), in_dims=(None, 0, 0))
    eager = per_sample(weights, autojit.tensor(BATCH), autojit.tensor(targets))
    compiled = autojit.compile(per_sample)(weights, autojit.tensor(BATCH),
                                           autojit.tensor(targets))
    expected = TF.vmap(TF.grad(lambda w, s, t: ((s @ w).tanh() - t).pow(2).sum()),
                       in_dims=(None, 0, 0))(torch.tensor(W), torch.tensor(BATCH),
                                             torch.tensor(targets))
    assert_same(eager, expected)
    assert_same(compiled, expected)


def test_compiled_hessian_and_jacobians():
    f = scalar_function(autojit)
    x = autojit.tensor(X)
    expected = TF.hessian(scalar_function(torch))(torch.tensor(X))
    assert_same(autojit.compile(F.hessian(f))(x), expected)
    g = two_argument_function(autojit)
    compiled = autojit.compile(F.jacrev(F.jacfwd(lambda v: g(v, v).sum().reshape(1))))
    theirs = TF.jacrev(TF.jacfwd(lambda v: two_argument_function(torch)(v, v).sum().reshape(1)))
    assert_same(compiled(x), theirs(torch.tensor(X)))


def test_maml_through_grad_twice():
    """An inner SGD step taken with func.grad, differentiated with respect to the initial
    weights (second-order MAML)."""
    def run(lib, transforms, weights):
        def loss(w, x, y):
            return ((x @ w).tanh() - y).pow(2).mean()

        x, y = lib.tensor(BATCH), lib.tensor(RNG_TARGETS)
        adapted = weights - 0.1 * transforms.grad(loss)(weights, x, y)
        return loss(adapted, x, y)

    ours_w = autojit.tensor(W, requires_grad=True)
    theirs_w = torch.tensor(W, requires_grad=True)
    run(autojit, F, ours_w).backward()
    run(torch, TF, theirs_w).backward()
    assert_same(ours_w.grad, theirs_w.grad)
    outer = F.grad(lambda w: run(autojit, F, w))(autojit.tensor(W))
    assert_same(outer, theirs_w.grad)


RNG_TARGETS = RNG.uniform(-1, 1, (3, 2))


def test_results_are_plain_unless_outside_history():
    x = autojit.tensor(X)
    assert not F.grad(scalar_function(autojit))(x).requires_grad
    assert F.grad(scalar_function(autojit))(x.clone().requires_grad_()).requires_grad
    w = autojit.tensor(Y, requires_grad=True)
    penalty_grad = F.grad(lambda v: (v * w).sin().sum())(x)
    assert penalty_grad.requires_grad
    (penalty_grad ** 2).sum().backward()
    tw = torch.tensor(Y, requires_grad=True)
    (TF.grad(lambda v: (v * tw).sin().sum())(torch.tensor(X)) ** 2).sum().backward()
    assert_same(w.grad, tw.grad)


def test_functional_call_and_stack_module_state():
    autojit.manual_seed(0)
    models = [autojit.nn.Linear(4, 2) for _ in range(3)]
    torch_models = [torch.nn.Linear(4, 2) for _ in range(3)]
    for ours, theirs in zip(models, torch_models):
        theirs.load_state_dict({k: torch.tensor(np.asarray(v.detach()))
                                for k, v in ours.state_dict().items()})
    params, buffers = F.stack_module_state(models)
    torch_params, torch_buffers = TF.stack_module_state(torch_models)
    assert params["weight"].shape == (3, 2, 4) and params["weight"].requires_grad
    assert params["weight"].is_leaf

    def ensemble(lib, transforms, template):
        return lambda p, b, x: transforms.functional_call(template, (p, b), (x,))

    ours = F.vmap(ensemble(autojit, F, models[0]), in_dims=(0, 0, None))(
        params, buffers, autojit.tensor(BATCH, dtype=autojit.float32))
    theirs = TF.vmap(ensemble(torch, TF, torch_models[0]), in_dims=(0, 0, None))(
        torch_params, torch_buffers, torch.tensor(BATCH, dtype=torch.float32))
    assert_same(ours, theirs, atol=1e-6)
    with pytest.raises(RuntimeError, match="Expected at least one model"):
        F.stack_module_state([])


def test_functional_call_ties_weights():
    class Tied(autojit.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = autojit.nn.Linear(2, 2, bias=False)
            self.b = autojit.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    module = Tied()
    replacement = autojit.eye(2) * 2
    out = F.functional_call(module, {"a.weight": replacement}, (autojit.ones(1, 2),))
    assert out.tolist() == [[4.0, 4.0]]
    untied = F.functional_call(module, {"a.weight": replacement}, (autojit.ones(1, 2),),
                               tie_weights=False)
    assert untied.tolist() != out.tolist()


@pytest.mark.parametrize("call, error, message", [
    (lambda T, lib: T.grad(lambda x: x)(lib.ones(3)), RuntimeError,
     "Expected f\\(\\*args\\) to return a scalar Tensor, got tensor with 1 dims"),
    (lambda T, lib: T.grad(lambda x: x.sum(), argnums=2)(lib.ones(3)), RuntimeError,
     "Got argnum=2, but only 1 positional inputs"),
    (lambda T, lib: T.vmap(lambda a, b: a + b)(lib.ones(2), lib.ones(3)), ValueError,
     "Expected all tensors to have the same size in the mapped dimension, got sizes \\[2, 3\\]"),
    (lambda T, lib: T.vmap(lambda a: a, in_dims=1)(lib.ones(2)), ValueError,
     "Got in_dim=1 for some input, but that input is a Tensor of dimensionality 1"),
    (lambda T, lib: T.vmap(lambda a: lib.rand(2))(lib.ones(2)), RuntimeError,
     "vmap: called random operation while in randomness error mode"),
    (lambda T, lib: T.vmap(lambda a: 1)(lib.ones(2)), ValueError,
     "must only return Tensors, got type <class 'int'>"),
    (lambda T, lib: T.jvp(lambda x: x, lib.ones(3), lib.ones(3)), RuntimeError,
     "Expected primals to be a tuple"),
    (lambda T, lib: T.jvp(lambda x: x, (lib.ones(3),), (lib.ones(4),)), RuntimeError,
     "Tensor is of size \\[3\\] while the given forward gradient is of size \\[4\\]"),
])
def test_errors_match_torch(call, error, message):
    with pytest.raises(error, match=message):
        call(TF, torch)
    with pytest.raises(error, match=message):
        call(F, autojit)


def test_vmap_randomness_modes():
    same = F.vmap(lambda a: a + autojit.rand(()), randomness="same")(autojit.zeros(3))
    assert len(set(same.tolist())) == 1
    different = F.vmap(lambda a: a + autojit.rand(()), randomness="different")(autojit.zeros(3))
    assert len(set(different.tolist())) == 3


def test_a_function_without_setup_context_refuses_the_transforms_as_torchs():
    def outcome(lib, transform):
        class Doubled(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, grad):
                return grad * 2

        x = lib.ones(2, 3)
        calls = {"grad": lambda: lib.func.grad(lambda t: Doubled.apply(t).sum())(x),
                 "vmap": lambda: lib.func.vmap(Doubled.apply)(x),
                 "jacrev": lambda: lib.func.jacrev(Doubled.apply)(x[0]),
                 "jvp": lambda: lib.func.jvp(Doubled.apply, (x,), (x,)),
                 "functional": lambda: lib.autograd.functional.jacobian(Doubled.apply, x[0])}
        try:
            return calls[transform]().tolist()
        except RuntimeError as error:
            return str(error)

    for transform in ("grad", "vmap", "jacrev", "jvp", "functional"):
        assert outcome(autojit, transform) == outcome(torch, transform), transform
