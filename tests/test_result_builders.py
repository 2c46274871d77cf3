"""A compiled function's result made by the closures of compiler/result_builders.py: the same
structure, values and objects as eager's result, on every call, for each kind of leaf the
builders take; a template they do not take (the same output twice) is rebuilt by the walk."""

import collections

import numpy as np

import autojit

generator = np.random.default_rng(11)
Pair = collections.namedtuple("Pair", ["loss", "scaled"])


def parameters():
    return [autojit.tensor(generator.standard_normal(8).astype(np.float32), requires_grad=True)
            for _ in range(2)]


def recipe_of(compiled):
    (executable,) = compiled.executables
    return executable._recipe


def calls_both_ways(function, *args, calls=3):
    """The compiled function's results and eager's, over `calls` calls each."""
    compiled = autojit.compile(function)
    return [compiled(*args) for _ in range(calls)], [function(*args) for _ in range(calls)], \
        compiled


def test_grads_returned_in_a_tuple_are_the_tensors_grads():
    w, b = parameters()
    x = autojit.tensor(generator.standard_normal(8).astype(np.float32))

    def step(x):
        w.grad = None
        b.grad = None
        (w * x + b).tanh().sum().backward()
        return w.grad, b.grad

    compiled = autojit.compile(step)
    for _ in range(3):
        result = compiled(x)
        assert isinstance(result, tuple) and len(result) == 2
        assert result[0] is w.grad and result[1] is b.grad
        expected_w = (1 - np.tanh(w.detach().numpy() * x.numpy() + b.detach().numpy()) ** 2) \
            * x.numpy()
        np.testing.assert_allclose(result[0].numpy(), expected_w, rtol=1e-5, atol=1e-6)
    assert recipe_of(compiled).result is not None


def test_arguments_constants_lists_and_dicts_keep_their_objects():
    x = autojit.tensor(generator.standard_normal(8).astype(np.float32))

    def function(x):
        y = x.sin() * 2
        return [y, x, {"count": 3, "cos": x.cos(), "none": None}, "done"]

    compiled_results, eager_results, compiled = calls_both_ways(function, x)
    for result, expected in zip(compiled_results, eager_results):
        assert isinstance(result, list) and len(result) == 4
        assert result[1] is x
        assert result[2].keys() == expected[2].keys()
        assert result[2]["count"] == 3 and result[2]["none"] is None and result[3] == "done"
        np.testing.assert_allclose(result[0].numpy(), expected[0].numpy(), rtol=1e-6)
        np.testing.assert_allclose(result[2]["cos"].numpy(), expected[2]["cos"].numpy(),
                                   rtol=1e-6)
    # Each call's new tensors are new objects.
    assert compiled_results[0][0] is not compiled_results[1][0]
    assert recipe_of(compiled).result is not None


def test_named_tuples_and_nesting_and_a_result_that_requires_grad():
    w, _ = parameters()
    x = autojit.tensor(generator.standard_normal(8).astype(np.float32))

    def function(x):
        loss = (w * x).sum()
        return Pair(loss, (loss * 2, [x.exp()]))

    compiled = autojit.compile(function)
    for _ in range(3):
        result = compiled(x)
        expected = function(x)
        assert type(result) is Pair
        np.testing.assert_allclose(result.loss.detach().numpy(),
                                   expected.loss.detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(result.scaled[0].detach().numpy(),
                                   expected.scaled[0].detach().numpy(), rtol=1e-6)
        np.testing.assert_allclose(result.scaled[1][0].numpy(), expected.scaled[1][0].numpy(),
                                   rtol=1e-6)
        assert result.loss.requires_grad and result.loss.grad_fn is not None
        w.grad = None
        result.scaled[0].backward()
        np.testing.assert_allclose(w.grad.numpy(), 2 * x.numpy(), rtol=1e-6)
    assert recipe_of(compiled).result is not None


def test_a_three_tuple_keeps_its_order():
    x = autojit.tensor(generator.standard_normal(8).astype(np.float32))

    def function(x):
        return x + 1, x + 2, x + 3

    compiled = autojit.compile(function)
    for _ in range(2):
        result = compiled(x)
        for offset, value in zip((1, 2, 3), result):
            np.testing.assert_allclose(value.numpy(), x.numpy() + offset, rtol=1e-6)


def test_the_same_output_twice_is_one_tensor_twice_through_the_walk():
    x = autojit.tensor(generator.standard_normal(8).astype(np.float32))

    def function(x):
        y = x * 3
        return y, y

    compiled = autojit.compile(function)
    for _ in range(2):
        first, second = compiled(x)
        assert first is second
        np.testing.assert_allclose(first.numpy(), x.numpy() * 3, rtol=1e-6)
    assert recipe_of(compiled).result is None


def test_a_size_stays_a_size():
    # x.shape and broadcast_shapes return an autojit.Size, which a compiled function returns
    # as eager does, alone or inside a tuple, not as a plain tuple.
    x = autojit.tensor(generator.standard_normal((2, 3)).astype(np.float32))

    def shapes(x):
        return x.shape, autojit.broadcast_shapes((2, 1), (3,)), x.sum()

    compiled_results, eager_results, _ = calls_both_ways(shapes, x)
    for compiled, eager in zip(compiled_results, eager_results, strict=True):
        assert [type(r) for r in compiled] == [type(r) for r in eager]
        assert compiled[:2] == eager[:2]
    only = autojit.compile(lambda x: x.shape)
    assert [type(only(x)) for _ in range(2)] == [autojit.Size, autojit.Size]
