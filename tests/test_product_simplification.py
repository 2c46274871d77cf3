"""Product simplification (ir/passes/products.py): transposed products and products of broadcast
operands. Each rewrite is checked for what it leaves in the graph and, through the reference
interpreter, for values equal to the original graph's up to the rounding of a reordered sum;
each case it must leave alone has a test too, and compiled gradients that go through it are
checked against eager.
"""

from __future__ import annotations

import numpy as np
import pytest

import autojit
from autojit.ir import interpret, make_graph, verify
from autojit.ir.passes import dead_code_elimination
from autojit.ir.passes.products import product_simplification


def rewritten(fn, *inputs):
    graph = make_graph(fn, *inputs)
    text = str(graph)
    result = dead_code_elimination(product_simplification(graph))
    assert str(graph) == text, "the pass changed its argument"
    verify(result)
    arrays = [np.random.default_rng(index).standard_normal(x.shape).astype(x.numpy().dtype)
              for index, x in enumerate(inputs)]
    for want, got in zip(interpret(graph, *arrays), interpret(result, *arrays), strict=True):
        assert want.shape == got.shape and want.dtype == got.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    return result


def ops_of(graph):
    return [node.op.name for node in graph.nodes]


def tensor(*shape, dtype=autojit.float32):
    return autojit.ones(*shape, dtype=dtype)


def test_a_transposed_product_becomes_a_product_of_transposes():
    graph = rewritten(lambda a, b: (a @ b).t() + 1, tensor(5, 3), tensor(3, 4))
    product = next(node for node in graph.nodes if node.op.name == "matmul")
    # b.T @ a.T, each operand a transpose of an input: nothing transposes the product.
    assert [x.producer.op.name for x in product.inputs] == ["permute", "permute"]
    assert not any(node.op.name == "permute" and node.inputs[0] is product.output
                   for node in graph.nodes)


def test_a_transposed_product_of_a_transpose_reads_the_source():
    graph = rewritten(lambda a, b: (a.t() @ b).t() * 2, tensor(3, 5), tensor(3, 4))
    product = next(node for node in graph.nodes if node.op.name == "matmul")
    assert product.inputs[1] is graph.inputs[0].value  # (a.T @ b).T = b.T @ a


def test_a_product_read_elsewhere_too_keeps_its_layout():
    def fn(a, b):
        product = a @ b
        return product.t(), product * 2

    graph = rewritten(fn, tensor(5, 3), tensor(3, 4))
    assert ops_of(graph).count("matmul") == 1
    assert "permute" in ops_of(graph)


@pytest.mark.parametrize("dtype", [autojit.float32, autojit.float64])
def test_a_broadcast_scalar_times_a_matrix_is_a_scaled_column_sum(dtype):
    def fn(s, b):
        return s.reshape(1, 1).expand(6, 4) @ b

    graph = rewritten(fn, tensor(dtype=dtype), tensor(4, 3, dtype=dtype))
    assert "matmul" not in ops_of(graph)
    assert "sum" in ops_of(graph)


@pytest.mark.parametrize("case", ["left rows", "left row", "right columns", "right column",
                                  "transposed"])
def test_each_broadcast_operand_case(case):
    a, b = tensor(6, 4), tensor(4, 5)
    functions = {
        # constant along the inner dimension: a sum times the source
        "left rows": (lambda c, b: c.expand(6, 4) @ b, tensor(6, 1)),
        "right columns": (lambda c, a: a @ c.expand(4, 5), tensor(1, 5)),
        # constant along the outer dimension: one row (column) of products, expanded
        "left row": (lambda c, b: c.expand(6, 4) @ b, tensor(1, 4)),
        "right column": (lambda c, a: a @ c.expand(4, 5), tensor(4, 1)),
        # the adjoint of a sum: a transposed expand
        "transposed": (lambda c, b: c.expand(4, 6).t() @ b, tensor(1, 1)),
    }
    fn, source = functions[case]
    other = a if case.startswith("right") else b
    graph = rewritten(fn, source, other)
    if case in ("left row", "right column"):
        product = next(node for node in graph.nodes if node.op.name == "matmul")
        assert 1 in product.output.shape  # one row or column, then expanded
        assert "expand" in ops_of(graph)
    else:
        assert "matmul" not in ops_of(graph)


def test_integer_products_are_left_alone():
    # An integer sum widens to int64: the product keeps its dtype only as a product.
    graph = rewritten(lambda c, b: c.expand(6, 4) @ b, tensor(6, 1, dtype=autojit.int32),
                      tensor(4, 5, dtype=autojit.int32))
    assert "matmul" in ops_of(graph)


def test_a_plain_product_is_left_alone():
    graph = rewritten(lambda a, b: a @ b, tensor(5, 3), tensor(3, 4))
    assert ops_of(graph) == ["matmul"]


def test_compiled_gradients_through_the_rewrites_equal_eager():
    """`out.sum()` makes an expanded adjoint: the weight gradients of the last layer are
    products of broadcast operands, and the gradient-penalty's transposed ones feed adds."""
    generator = np.random.default_rng(3)
    arrays = [generator.standard_normal(shape).astype(np.float32)
              for shape in ((16, 8), (8, 12), (12, 1))]

    def step(x, weights):
        h = (x @ weights[0]).tanh()
        out = h @ weights[1]
        (grad_x,) = autojit.autograd.grad(out.sum(), x, create_graph=True)
        loss = out.mean() + ((grad_x * grad_x).sum(dim=1).sqrt() - 1).pow(2).mean()
        loss.backward()
        return loss.detach()

    results = []
    for compiled in (False, True):
        weights = [autojit.tensor(a, requires_grad=True) for a in arrays[1:]]
        function = autojit.compile(step) if compiled else step
        for _ in range(2):
            for weight in weights:
                weight.grad = None
            x = autojit.tensor(arrays[0], requires_grad=True)
            loss = function(x, weights)
        results.append([loss.numpy()] + [weight.grad.numpy() for weight in weights])
    # The rewrites happened: fewer products than traced, none transposed afterwards.
    assert function.ir().count("= matmul") < function.ir(optimized=False).count("= matmul")
    lines = [line.split() for line in function.ir().splitlines() if " = " in line]
    products = {words[0].split(":")[0] for words in lines if words[2] == "matmul"}
    assert products and not any(words[2] == "permute" and words[3] in products
                                for words in lines)
    for eager, compiled in zip(*results, strict=True):
        np.testing.assert_allclose(compiled, eager, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("case", ["left row", "right column", "transposed"])
def test_a_broadcast_operand_over_an_empty_inner_dim_is_left_alone(case):
    """With no entries along the inner dim (an empty batch) a source broadcast along both
    dims cannot stand for one row or column of products: the product stays (it is zeros)."""
    functions = {
        "left row": (lambda c, b: c.expand(6, 0) @ b, tensor(1, 1), tensor(0, 5)),
        "right column": (lambda c, a: a @ c.expand(0, 5), tensor(1, 1), tensor(6, 0)),
        "transposed": (lambda c, b: c.expand(0, 6).t() @ b, tensor(1, 1), tensor(0, 5)),
    }
    fn, source, other = functions[case]
    graph = rewritten(fn, source, other)
    assert "matmul" in ops_of(graph)


def test_a_compiled_mlp_step_on_an_empty_batch_equals_eager():
    """`out.sum()`'s adjoint on a batch of 0 rows: the last layer's weight gradient is a
    product of a (16, 0) matrix and a (1, 1) value expanded to (0, 4)."""
    generator = np.random.default_rng(5)
    arrays = [generator.standard_normal(shape).astype(np.float32)
              for shape in ((8, 16), (16,), (16, 4), (4,))]
    def make_step(parameters):
        def step(x):
            out = (x @ parameters[0] + parameters[1]).relu() @ parameters[2] + parameters[3]
            grads = autojit.autograd.grad(out.sum(), parameters)
            with autojit.no_grad():
                for parameter, grad in zip(parameters, grads):
                    parameter.sub_(0.1 * grad + 0.01)
            return out.detach()

        return step

    results = []
    for compiled in (False, True):
        parameters = [autojit.tensor(a, requires_grad=True) for a in arrays]
        step = make_step(parameters)
        function = autojit.compile(step) if compiled else step
        for _ in range(2):
            out = function(autojit.zeros(0, 8))
        assert out.shape == (0, 4)
        results.append([parameter.detach().numpy() for parameter in parameters])
    for eager, compiled in zip(*results, strict=True):
        np.testing.assert_allclose(compiled, eager, rtol=1e-6)
