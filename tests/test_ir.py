"""The IR: graph text, verifier, reference interpreter against eager mode, and make_graph
(including traced backward and double backward, side-effect outputs and graph breaks)."""

from __future__ import annotations

import numpy as np
import pytest

import autojit
from autojit.ir import Graph, GraphBreak, VerificationError, interpret, make_graph, verify
from autojit.ops.elementwise import MUL
from autojit.ops.reduction import SUM

# ---- printer ------------------------------------------------------------------------------


def _scale_and_sum(x, w):
    return ((x * w) * 2.0).sum(dim=1)


def test_printer_exact_text():
    x, w = autojit.ones(4, 3), autojit.ones(3)
    graph = make_graph(_scale_and_sum, x, w)
    assert str(graph) == (
        "graph(%0:f32[4,3] x, %1:f32[3] w) {\n"
        "  %2:f32[4,3] = mul %0 %1\n"
        "  %3:f32[4,3] = mul %2 2.0\n"
        "  %4:f32[4] = sum %3 dim=(1,) keepdim=False\n"
        "  return %4 out\n"
        "}")


def test_printer_marks_captured_inputs_and_names_outputs():
    bias = autojit.tensor([1.0, 2.0, 3.0])

    def f(x):
        return x + bias, (x * x).amax(dim=(0, 1), keepdim=True)

    text = str(make_graph(f, autojit.ones(2, 3)))
    assert text.splitlines()[0] == "graph(%0:f32[2,3] x, captured %1:f32[3] bias) {"
    assert "  %4:f32[1,1] = amax %3 dim=(0,1) keepdim=True" in text
    assert "  return %2 out0, %4 out1" in text


def test_builder_api_and_dtype_attrs():
    graph = Graph()
    x = graph.add_input((2,), autojit.int32, "arg", "x")
    doubled = graph.add_node(MUL, [x, 2], {}, (2,), autojit.int32)
    graph.set_outputs([(doubled, "y")])
    verify(graph)
    assert str(graph).splitlines()[1] == "  %1:i32[2] = mul %0 2"
    result = make_graph(lambda a: a.to(autojit.float64), autojit.ones(2))
    assert "= cast %0 dtype=f64" in str(result)



def test_same_text_agrees_with_the_printed_text():
    """printer.same_text (the pass pipeline's fixed-point test) says two graphs print the same
    exactly when their texts are equal: literals by their text (2 and 2.0 differ), attributes
    by name, order and value, types, names and input kinds."""
    from autojit.ir.printer import format_graph, same_text

    def build(literal=2, attrs=None, dtype=autojit.int32, name="y", kind="arg"):
        graph = Graph()
        x = graph.add_input((2,), dtype, kind, "x", autojit.zeros(2, dtype=dtype))
        doubled = graph.add_node(MUL, [x, literal], {}, (2,), dtype)
        summed = graph.add_node(SUM, [doubled], attrs or {"dim": (0,), "keepdim": False}, (),
                                dtype)
        graph.set_outputs([(summed, name)])
        return graph

    base = build()
    variants = [build(), build(literal=2.0), build(literal=True), build(literal=3),
                build(attrs={"keepdim": False, "dim": (0,)}),
                build(attrs={"dim": [0], "keepdim": False}), build(dtype=autojit.int64),
                build(name="z"), build(kind="captured")]
    for variant in variants:
        assert same_text(base, variant) == (format_graph(base) == format_graph(variant))
    assert same_text(base, variants[0]) and not same_text(base, variants[1])


# ---- verifier -----------------------------------------------------------------------------

def _three_node_graph():
    def f(x):
        y = x.exp()
        z = y * x
        return z.sum(dim=0) + 1.0

    return make_graph(f, autojit.ones(4, 3))


def test_verifier_accepts_traced_graphs():
    assert verify(_three_node_graph()) is not None


def test_verifier_catches_use_before_definition():
    graph = _three_node_graph()
    graph.nodes[0], graph.nodes[1] = graph.nodes[1], graph.nodes[0]
    with pytest.raises(VerificationError) as caught:
        verify(graph)
    message = str(caught.value)
    assert "node 0 (mul): input %1 is used before it is defined" in message
    lines = message.splitlines()
    arrow = [line for line in lines if line.startswith("-->")]
    assert arrow == ["-->   %2:f32[4,3] = mul %1 %0"]
    # two lines of context on each side of the offending line (the header is line 0)
    assert lines[1] == "    graph(%0:f32[4,3] x) {"
    assert lines[3] == "      %1:f32[4,3] = exp %0"
    assert lines[4] == "      %3:f32[3] = sum %2 dim=(0,) keepdim=False"
    assert caught.value.line == 1


def test_verifier_catches_shape_mismatch_with_context():
    graph = _three_node_graph()
    graph.nodes[2].outputs[0].shape = (4,)
    with pytest.raises(VerificationError) as caught:
        verify(graph)
    message = str(caught.value)
    assert "node 2 (sum): recorded shape [4] but the shape rule gives [3]" in message
    lines = message.splitlines()
    assert lines[0].startswith("verify: ")
    assert lines[1:] == [
        "      %1:f32[4,3] = exp %0",
        "      %2:f32[4,3] = mul %1 %0",
        "-->   %3:f32[4] = sum %2 dim=(0,) keepdim=False",
        "      %4:f32[3] = add %3 1.0",
        "      return %4 out",
    ]


def test_verifier_catches_dtype_mismatch_and_bad_operands():
    graph = _three_node_graph()
    graph.nodes[0].outputs[0].dtype = autojit.float64
    with pytest.raises(VerificationError, match="recorded dtype f64 but the dtype rule gives f32"):
        verify(graph)
    graph = _three_node_graph()
    graph.nodes[1].inputs.append(graph.inputs[0].value)
    with pytest.raises(VerificationError, match="expected 2 operands, got 3"):
        verify(graph)
    graph = _three_node_graph()
    graph.nodes[1].attrs["bogus"] = 1
    with pytest.raises(VerificationError, match="rule fails"):
        verify(graph)


def test_verifier_catches_double_definition_and_undefined_output():
    graph = _three_node_graph()
    graph.nodes[1].outputs[0] = graph.nodes[0].outputs[0]
    with pytest.raises(VerificationError):
        verify(graph)
    graph = _three_node_graph()
    other = Graph().add_input((1,), autojit.float32)
    graph.add_output(other, "stray")
    with pytest.raises(VerificationError, match="output stray is not a defined value"):
        verify(graph)


# ---- interpreter against eager ----------------------------------------------------------

def _check_against_eager(fn, *inputs, atol=1e-6):
    graph = verify(make_graph(fn, *inputs))
    results = interpret(graph, *inputs)
    eager = fn(*inputs)
    eager = eager if isinstance(eager, tuple) else (eager,)
    assert len(results) == len(eager)
    for got, expected in zip(results, eager, strict=True):
        expected = expected.detach().numpy()
        assert got.dtype == expected.dtype
        assert got.shape == expected.shape
        np.testing.assert_allclose(got, expected, atol=atol)
    return graph


def _random(*shape, dtype=autojit.float32):
    return autojit.randn(*shape).to(dtype)


def test_interpret_elementwise():
    _check_against_eager(lambda x, y: ((x * y).exp() - y / (x.abs() + 1.0)).tanh(),
                         _random(3, 4), _random(3, 4))


def test_interpret_frees_each_value_after_its_last_reader():
    # A chain of 12 ops on an 8 MB tensor: as eager, at most a few of its values are alive at
    # once (the input, the operand, the result), not all twelve.
    import tracemalloc

    def chain(x):
        for step in range(12):
            x = x * 1.5 + step
        return x

    x = autojit.ones(1024, 1024, dtype=autojit.float64)
    graph = make_graph(chain, x)
    tracemalloc.start()
    try:
        result, = interpret(graph, x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 5 * x.numpy().nbytes
    np.testing.assert_array_equal(result, chain(x).numpy())


def test_interpret_reductions():
    def f(x):
        return x.sum(dim=1), x.amax(dim=0), x.mean(), x.argmax(dim=1), (x > 0).any(dim=0)

    _check_against_eager(f, _random(5, 6), atol=1e-5)


def test_interpret_layout_ops():
    def f(x, y):
        t = x.permute(1, 0).reshape(2, 6)
        s = t[:, 1:5:2]
        return autojit.cat([s, s * 2.0], dim=1), y.expand(3, 4), x.transpose(0, 1)

    _check_against_eager(f, _random(6, 2), _random(1, 4))


def test_interpret_broadcasting():
    _check_against_eager(lambda a, b, c: a + b * c, _random(4, 1), _random(3), _random(2, 1, 1))


def test_interpret_mixed_dtypes():
    def f(i, x, flag):
        return i * x, i + 3, i * 2.5, autojit.where(flag, x, i), (i > 1) & flag, i.sum()

    integers = autojit.tensor([[1, 2, 3], [4, 5, 6]], dtype=autojit.int32)
    flags = autojit.tensor([True, False, True])
    graph = _check_against_eager(f, integers, _random(2, 3, dtype=autojit.float64), flags)
    assert graph.nodes[-1].outputs[0].dtype is autojit.int64


def test_interpret_reads_captured_data_and_checks_arguments():
    weight = autojit.tensor([1.0, 2.0])
    graph = make_graph(lambda x: x * weight, autojit.ones(2))
    np.testing.assert_allclose(interpret(graph, np.ones(2, np.float32))[0], [1.0, 2.0])
    replaced = {"weight": np.array([5.0, 7.0], np.float32)}
    np.testing.assert_allclose(interpret(graph, autojit.ones(2), captured=replaced)[0], [5, 7])
    with pytest.raises(ValueError, match="input x expects shape \\[2\\], got \\[3\\]"):
        interpret(graph, np.ones(3, np.float32))
    with pytest.raises(TypeError, match="input x expects dtype float32, got float64"):
        interpret(graph, np.ones(2))
    with pytest.raises(TypeError, match="takes 1 arguments"):
        interpret(graph)


# ---- make_graph with autograd inside ------------------------------------------------------

def test_make_graph_backward_has_forward_and_adjoint_nodes():
    weight = autojit.randn(3, requires_grad=True)

    def step(x):
        loss = ((x * weight).sum(dim=1) ** 2).sum()
        loss.backward()
        return loss

    x = autojit.randn(4, 3, requires_grad=True)
    graph = verify(make_graph(step, x))
    names = [output.name for output in graph.outputs]
    assert names == ["out", "x.grad", "weight.grad"]
    assert [output.kind for output in graph.outputs] == ["result", "grad", "grad"]
    forward_ops = [node.op.name for node in graph.nodes[:4]]
    assert forward_ops == ["mul", "sum", "pow", "sum"]
    assert len(graph.nodes) > 8  # the adjoint was appended to the same graph
    assert weight.grad is None and weight._version == 0  # no side effect on the real tensor

    loss, x_grad, weight_grad = interpret(graph, x)
    eager_loss = step(x)
    np.testing.assert_allclose(loss, eager_loss.item(), rtol=1e-5)
    np.testing.assert_allclose(x_grad, x.grad.numpy(), rtol=1e-5)
    np.testing.assert_allclose(weight_grad, weight.grad.numpy(), rtol=1e-5)


def test_make_graph_double_backward_matches_eager():
    def hessian_vector(x, v):
        y = (x ** 3).sum() + (x.sin() * x).sum()
        (gradient,) = autojit.autograd.grad(y, x, create_graph=True)
        (second,) = autojit.autograd.grad((gradient * v).sum(), x)
        return gradient, second

    x = autojit.randn(5, dtype=autojit.float64, requires_grad=True)
    v = autojit.randn(5, dtype=autojit.float64)
    graph = verify(make_graph(hessian_vector, x, v))
    gradient, second = interpret(graph, x, v)
    eager_gradient, eager_second = hessian_vector(x, v)
    np.testing.assert_allclose(gradient, eager_gradient.detach().numpy(), rtol=1e-10)
    np.testing.assert_allclose(second, eager_second.numpy(), rtol=1e-10)
    expected = 6 * x.detach().numpy() + 2 * np.cos(x.detach().numpy()) \
        - x.detach().numpy() * np.sin(x.detach().numpy())
    np.testing.assert_allclose(second, expected * v.numpy(), rtol=1e-10)


def test_inplace_update_of_captured_tensor_is_an_output():
    weight = autojit.tensor([1.0, 2.0, 3.0], requires_grad=True)
    weight.grad = autojit.ones(3)
    before_grad = weight.grad

    def sgd_step(x):
        loss = (x * weight).sum()
        loss.backward()
        with autojit.no_grad():
            weight.sub_(0.5 * weight.grad)
            scaled = weight * 2.0  # reads the updated value
        return loss, scaled

    x = autojit.tensor([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]])
    graph = verify(make_graph(sgd_step, x))
    assert [output.name for output in graph.outputs] == ["out0", "out1", "weight.grad.update",
                                                         "weight.update"]
    assert graph.output_named("weight.update").target.tensor is weight
    # the real tensor is untouched: data, .grad and version counter
    np.testing.assert_array_equal(weight.detach().numpy(), [1.0, 2.0, 3.0])
    assert weight.grad is before_grad and weight._version == 0
    loss, scaled, grad, update = interpret(graph, x)
    np.testing.assert_allclose(grad, [4.0, 4.0, 4.0])  # 1 (existing grad) + 3 (column sums)
    np.testing.assert_allclose(update, [-1.0, 0.0, 1.0])
    np.testing.assert_allclose(scaled, [-2.0, 0.0, 2.0])
    np.testing.assert_allclose(loss, 18.0)


def test_inplace_on_symbolic_tensor_is_functional():
    def f(x):
        y = x * 2.0
        y.add_(1.0)
        y.mul_(x)
        return y

    x = autojit.tensor([1.0, 2.0])
    graph = _check_against_eager(f, x)
    assert [node.op.name for node in graph.nodes] == ["mul", "add", "mul"]


# ---- graph breaks and misuse --------------------------------------------------------------

def test_graph_break_on_item_names_the_user_line():
    def f(x):
        total = x.sum()
        return x * total.item() if total.item() > 0 else x

    with pytest.raises(GraphBreak) as caught:
        make_graph(f, autojit.ones(3))
    message = str(caught.value)
    assert "Tensor.item()" in message
    assert __file__ in message
    assert "return x * total.item() if total.item() > 0 else x" in message
    assert caught.value.lineno == f.__code__.co_firstlineno + 2


def test_item_in_a_tensor_op_is_a_graph_value():
    def f(x):
        return x * x.sum().item()

    graph = make_graph(f, autojit.ones(3))
    assert "sum" in [node.op.name for node in graph.nodes]
    (out,) = interpret(graph, np.array([1.0, 2.0, 3.0], dtype=np.float32))
    assert np.asarray(out).tolist() == [6.0, 12.0, 18.0]
    from autojit.tensor.state import state
    assert state.tracer is None


def test_graph_break_on_bool():
    def f(x):
        if x.sum() > 0:
            return x
        return -x

    with pytest.raises(GraphBreak, match=r"bool\(Tensor\).*if x.sum\(\) > 0:"):
        make_graph(f, autojit.ones(3))


def test_symbolic_tensor_cannot_outlive_its_trace():
    leaked = []
    make_graph(lambda x: leaked.append(x * 2.0), autojit.ones(2))
    with pytest.raises(RuntimeError, match="another trace"):
        make_graph(lambda y: y + leaked[0], autojit.ones(2))
    with pytest.raises(TypeError, match="must return a Tensor"):
        make_graph(lambda y: 3, autojit.ones(2))


def test_non_tensor_arguments_are_baked_in():
    graph = make_graph(lambda x, scale: x * scale, autojit.ones(2), 3.0)
    assert [entry.name for entry in graph.inputs] == ["x"]
    assert "mul %0 3.0" in str(graph)
    np.testing.assert_allclose(interpret(graph, autojit.ones(2))[0], [3.0, 3.0])
