"""Custom autograd.Function: the reference examples, the node and ctx, saved tensors, outputs
(several, non-tensor, non-differentiable, aliases) and mark_dirty. The gradients backward
returns, double backward, gradcheck, tracing and autograd.Variable are in
test_custom_function_backward.py."""

from __future__ import annotations

import numpy as np
import pytest
from custom_function_cases import Exp, assert_close, leaf

import autojit
from autojit import autograd
from autojit.autograd import Function, FunctionCtx, Variable
from autojit.autograd.function import InplaceFunction

# ---- the reference examples ---------------------------------------------------------------

def test_torch_reference_exp_example():
    x = leaf([0.0, 1.0, 2.0])
    y = Exp.apply(x)
    assert_close(y, np.exp([0.0, 1.0, 2.0]))
    assert y.grad_fn.name() == "ExpBackward"
    assert repr(y).endswith("grad_fn=<ExpBackward>)")
    y.sum().backward()
    assert_close(x.grad, np.exp([0.0, 1.0, 2.0]))


def test_oneflow_reference_apply_and_call():
    input = leaf([1.0, -1.0])
    output = Exp.apply(input)  # output = Exp()(input)
    called = Exp()(input)
    assert_close(called, output.detach().numpy())
    assert called.grad_fn.name() == "ExpBackward" and called.grad_fn is not output.grad_fn
    (output + called).sum().backward()
    assert_close(input.grad, 2 * np.exp([1.0, -1.0]))


def test_exp_differentiated_twice_gives_exp():
    x = leaf([0.5, 1.5], autojit.float64)
    (first,) = autograd.grad(Exp.apply(x).sum(), x, create_graph=True)
    assert first.requires_grad
    (second,) = autograd.grad(first.sum(), x)
    assert_close(first, np.exp([0.5, 1.5]))
    assert_close(second, np.exp([0.5, 1.5]))


def test_old_reference_variable_hook_example():
    # torch-autograd-old-zh.txt, as written there: a hook doubling the gradient of a Variable
    v = Variable(autojit.Tensor([0, 0, 0]), requires_grad=True)
    h = v.register_hook(lambda grad: grad * 2)  # double the gradient
    v.backward(autojit.Tensor([1, 1, 1]))
    assert_close(v.grad.data, [2.0, 2.0, 2.0])
    assert v.grad.dtype is autojit.float32
    h.remove()  # removes the hook


# ---- the node and ctx -----------------------------------------------------------------------

def test_grad_fn_is_the_ctx_and_a_node():
    seen = {}

    class Square(Function):
        @staticmethod
        def forward(ctx, a, scale):
            seen["ctx"] = ctx
            seen["grad_mode"] = autojit.is_grad_enabled()
            ctx.scale = scale  # arbitrary attributes travel to backward
            product = a * a
            seen["inner_grad_fn"] = product.grad_fn
            ctx.save_for_backward(a)
            return product * scale

        @staticmethod
        def backward(ctx, grad):
            a, = ctx.saved_tensors
            return grad * 2 * a * ctx.scale, None

    x = leaf([1.0, 2.0])
    y = Square.apply(x, 3.0)
    node = y.grad_fn
    assert node is seen["ctx"] and isinstance(node, FunctionCtx)
    assert isinstance(node, autograd.graph.Node)
    assert type(node).__name__ == "SquareBackward"
    assert seen["grad_mode"] is False and seen["inner_grad_fn"] is None
    assert node.next_functions[0][0].variable is x and node.next_functions[1] == (None, 0)
    assert node.needs_input_grad == (True, False)
    assert node.num_inputs == 2 and node.num_outputs == 1 and node.requires_grad
    with pytest.warns(DeprecationWarning, match="'saved_variables' is deprecated"):
        assert node.saved_variables[0] is x
    y.sum().backward()
    assert_close(x.grad, [6.0, 12.0])


def test_needs_input_grad_per_argument():
    recorded = []

    class Record(Function):
        @staticmethod
        def forward(ctx, a, b, k):
            recorded.append(ctx.needs_input_grad)
            return a * b * k

        @staticmethod
        def backward(ctx, grad):
            recorded.append(ctx.needs_input_grad)
            return grad, grad, None

    x, plain = leaf([1.0, 2.0]), autojit.ones(2)
    Record.apply(x, plain, 3).sum().backward()
    assert recorded == [(True, False, False), (True, False, False)]
    out = Record.apply(plain, plain, 3)
    assert out.grad_fn is None and not out.requires_grad
    with autojit.no_grad():
        out = Record.apply(x, plain, 3)
    assert out.grad_fn is None and not out.requires_grad


def test_keyword_arguments_are_bound_as_inputs():
    recorded = []

    class Scale(Function):
        @staticmethod
        def forward(ctx, a, k=2.0):
            recorded.append(k)
            return a * k

        @staticmethod
        def backward(ctx, grad):
            return grad * 5, None

    x = leaf([1.0])
    y = Scale.apply(x, k=3.0)
    assert y.grad_fn.needs_input_grad == (True, False)
    y.backward()
    assert recorded == [3.0] and x.grad.tolist() == [5.0]
    assert Scale.apply(x).grad_fn.needs_input_grad == (True,)


def test_setup_context_style():
    class Mul(Function):
        @staticmethod
        def forward(a, b, scale=2.0):
            return a * b * scale

        @staticmethod
        def setup_context(ctx, inputs, output):
            a, b, scale = inputs
            assert isinstance(output, autojit.Tensor)
            ctx.save_for_backward(a, b)
            ctx.scale = scale

        @staticmethod
        def backward(ctx, grad):
            a, b = ctx.saved_tensors
            return grad * b * ctx.scale, grad * a * ctx.scale, None

    a, b = leaf([1.0, 2.0]), leaf([3.0, 4.0])
    out = Mul.apply(a, b)
    assert out.grad_fn.name() == "MulBackward"
    out.sum().backward()
    assert_close(a.grad, [6.0, 8.0])
    assert_close(b.grad, [2.0, 4.0])
    a.grad = None
    Mul.apply(a, b, scale=1.0).sum().backward()
    assert_close(a.grad, [3.0, 4.0])


def test_forward_with_ctx_and_setup_context_is_an_error():
    class Both(Function):
        @staticmethod
        def forward(ctx, a):
            return a + 1

        @staticmethod
        def setup_context(ctx, inputs, output):
            pass

        @staticmethod
        def backward(ctx, grad):
            return grad

    with pytest.raises(TypeError, match="missing a required argument: 'a'"):
        Both.apply(leaf([1.0]))


def test_vjp_alias_and_missing_methods():
    class ByVjp(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def vjp(ctx, grad):
            return grad * 5

    class Both(ByVjp):
        @staticmethod
        def backward(ctx, grad):
            return grad

    class NoBackward(Function):
        @staticmethod
        def forward(ctx, a):
            return a + 1

    assert Function.vjp is Function.backward
    x = leaf([1.0])
    ByVjp.apply(x).backward()
    assert x.grad.tolist() == [5.0]
    with pytest.raises(RuntimeError, match="Implementing both 'backward' and 'vjp'"):
        Both.apply(x).backward()
    with pytest.raises(NotImplementedError, match="You must implement either the backward or "
                       "vjp method"):
        NoBackward.apply(x).backward()
    with pytest.raises(NotImplementedError, match="You must implement the forward function"):
        Function.apply(x)


def test_inplace_function_keeps_its_flag():
    class Twice(InplaceFunction):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    function = Twice(inplace=True)
    assert function.inplace is True
    assert function(leaf([1.0])).grad_fn.name() == "TwiceBackward"


# ---- saved tensors ------------------------------------------------------------------------

class SaveInput(Function):
    @staticmethod
    def forward(ctx, a):
        ctx.save_for_backward(a, None)
        return a * 2

    @staticmethod
    def backward(ctx, grad):
        a, nothing = ctx.saved_tensors
        assert nothing is None
        return grad * 2


def test_saved_input_modified_in_place_raises_the_version_error():
    x = leaf([1.0, 2.0])
    z = x * 1
    out = SaveInput.apply(z)
    with autojit.no_grad():
        z.add_(1)
    with pytest.raises(RuntimeError) as caught:
        out.sum().backward()
    message = str(caught.value)
    assert message.startswith("one of the variables needed for gradient computation has been "
                              "modified by an inplace operation: [autojit.FloatTensor [2]], "
                              "which is output 0 of MulBackward0, is at version 1; expected "
                              "version 0 instead")
    assert "(it was saved by SaveInputBackward)" in message


def test_saved_output_modified_in_place_raises_the_version_error():
    out = Exp.apply(leaf([1.0, 2.0]))
    node = out.grad_fn
    out.add_(1)
    with pytest.raises(RuntimeError, match=r"\[autojit.FloatTensor \[2\]\], which is output 0 of "
                       r"ExpBackward, is at version 1; expected version 0"):
        _ = node.saved_tensors
    with pytest.raises(RuntimeError, match="is at version 1; expected version 0"):
        out.sum().backward()


def test_saved_output_is_rebuilt_with_the_node_as_grad_fn():
    out = Exp.apply(leaf([1.0]))
    saved, = out.grad_fn.saved_tensors
    assert saved is not out and saved.grad_fn is out.grad_fn
    np.testing.assert_array_equal(saved.detach().numpy(), out.detach().numpy())


def test_saved_tensors_freed_after_backward_unless_retained():
    x = leaf([1.0, 2.0])
    y = SaveInput.apply(x).sum()
    y.backward(retain_graph=True)
    y.backward()
    assert_close(x.grad, [4.0, 4.0])
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        y.backward()
    node = y.grad_fn.next_functions[0][0]
    assert node.name() == "SaveInputBackward"
    with pytest.raises(RuntimeError, match="Trying to backward through the graph a second time"):
        _ = node.saved_tensors


def test_backward_twice_without_saved_tensors_is_allowed():
    class Double(Function):
        @staticmethod
        def forward(ctx, a):
            return a * 2

        @staticmethod
        def backward(ctx, grad):
            return grad * 2

    x = leaf([1.0])
    y = Double.apply(x).sum()
    y.backward()
    y.backward()
    assert x.grad.tolist() == [4.0]


def test_save_for_backward_refuses_non_tensors():
    class SaveInt(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.save_for_backward(a, 3)
            return a + 1

    with pytest.raises(TypeError, match="save_for_backward can only save variables, but "
                       "argument 1 is of type int"):
        SaveInt.apply(leaf([1.0]))


# ---- outputs: several, non-tensor, non-differentiable, aliases ----------------------------

def test_several_outputs_and_non_tensor_values():
    received = []

    class SplitScale(Function):
        @staticmethod
        def forward(ctx, a, factor, label):
            ctx.factor = factor
            return a * factor, a + 1, label.upper()

        @staticmethod
        def backward(ctx, grad_scaled, grad_shifted, grad_label):
            received.append(grad_label)
            return grad_scaled * ctx.factor + grad_shifted, None, None

    x = leaf([1.0, 2.0])
    scaled, shifted, label = SplitScale.apply(x, 3.0, "tag")
    assert label == "TAG"
    assert scaled.grad_fn is shifted.grad_fn
    assert (scaled._output_nr, shifted._output_nr) == (0, 1)
    assert scaled.grad_fn.num_outputs == 3
    (scaled.sum() * 2 + shifted.sum()).backward()
    assert_close(x.grad, [7.0, 7.0])
    assert received == [None]  # non-tensor outputs get None, never zeros


def test_unused_outputs_get_zero_gradients_or_none():
    received = []

    class Pair(Function):
        @staticmethod
        def forward(ctx, a, materialize):
            ctx.set_materialize_grads(materialize)
            return a * 1, a * 2

        @staticmethod
        def backward(ctx, first, second):
            received.append((first, second))
            return (second if first is None else first + second) * 1, None

    x = leaf([1.0, 2.0])
    Pair.apply(x, True)[1].sum().backward()
    first, second = received.pop()
    assert first.tolist() == [0.0, 0.0] and first.dtype is autojit.float32
    assert second.tolist() == [1.0, 1.0]
    Pair.apply(x, False)[1].sum().backward()
    first, second = received.pop()
    assert first is None and second.tolist() == [1.0, 1.0]


def test_mark_non_differentiable():
    received = []

    class WithIndex(Function):
        @staticmethod
        def forward(ctx, a):
            index = a.argmax()
            mask = a * 0
            ctx.mark_non_differentiable(mask)
            return a * 3, index, mask

        @staticmethod
        def backward(ctx, grad, grad_index, grad_mask):
            received.extend([grad_index, grad_mask])
            return grad * 3

    x = leaf([1.0, 5.0])
    value, index, mask = WithIndex.apply(x)
    assert value.requires_grad
    assert not index.requires_grad and index.grad_fn is None
    assert not mask.requires_grad and mask.grad_fn is None
    value.sum().backward()
    assert_close(x.grad, [3.0, 3.0])
    grad_index, grad_mask = received
    assert grad_index.dtype is autojit.int64 and grad_index.tolist() == 0
    assert grad_mask.tolist() == [0.0, 0.0]


def test_input_returned_unchanged_is_an_alias_with_the_new_grad_fn():
    class Identity(Function):
        @staticmethod
        def forward(ctx, a):
            return a

        @staticmethod
        def backward(ctx, grad):
            return grad * 3

    x = leaf([1.0, 2.0])
    h = x * 1
    original = h.grad_fn
    y = Identity.apply(h)
    assert y is not h and h.grad_fn is original and y.grad_fn.name() == "IdentityBackward"
    assert np.shares_memory(y.numpy(force=True), h.numpy(force=True))
    assert y._version_counter is h._version_counter
    y.sum().backward()
    assert_close(x.grad, [3.0, 3.0])
    plain = autojit.ones(2)
    assert Identity.apply(plain) is not plain


def test_same_tensor_returned_twice_is_one_tensor_for_the_last_output():
    class Twice(Function):
        @staticmethod
        def forward(ctx, a):
            b = a * 2
            return b, b

        @staticmethod
        def backward(ctx, first, second):
            return (first + 10 * second) * 2

    x = leaf([1.0])
    p, q = Twice.apply(x)
    # as torch: the same tensor, the node's last output, so backward gets (0, 1) here
    assert p is q and (p._output_nr, q._output_nr) == (1, 1)
    (p + q * 0).sum().backward()
    assert x.grad.tolist() == [20.0]


# ---- mark_dirty -----------------------------------------------------------------------------

class DoubleInPlace(Function):
    @staticmethod
    def forward(ctx, a):
        a.mul_(2)
        ctx.mark_dirty(a)
        return a

    @staticmethod
    def backward(ctx, grad):
        return grad * 2


def test_mark_dirty_repoints_grad_fn_and_bumps_the_version():
    x = leaf([1.0, 2.0])
    z = x * 1
    before = z._version
    out = DoubleInPlace.apply(z)
    assert out is z and z.grad_fn.name() == "DoubleInPlaceBackward"
    assert z._version == before + 2  # mul_ and mark_dirty, as in torch
    assert z.grad_fn.next_functions[0][0].name() == "MulBackward0"
    (z * z).sum().backward()
    assert_close(x.grad, [8.0, 16.0])  # d/dx (2x)^2 = 8x
    plain = autojit.ones(2)
    DoubleInPlace.apply(plain)
    assert plain._version == 2 and plain.grad_fn is None


def test_mark_dirty_on_a_leaf_requiring_grad_is_an_error():
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad has been used in "
                       "an in-place operation."):
        DoubleInPlace.apply(leaf([1.0]))


def test_dirty_tensor_must_be_returned():
    class NotReturned(Function):
        @staticmethod
        def forward(ctx, a):
            ctx.mark_dirty(a)
            return a + 1

    with pytest.raises(RuntimeError, match="Some elements marked as dirty during the forward "
                       "method were not returned as output"):
        NotReturned.apply(leaf([1.0]) * 1)
