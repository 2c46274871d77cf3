"""In-place ops and version counters; grad modes (no_grad, enable_grad, set_grad_enabled,
inference_mode) including their thread-locality."""

import threading

import numpy as np
import pytest

import autojit as aj
from autojit import autograd


def leaf(values):
    return aj.tensor(values, dtype=aj.float64, requires_grad=True)


# ---- in-place ops and version counters -----------------------------------------------------

@pytest.mark.parametrize("method, args, expected", [
    ("add_", (2.0,), [3.0, 4.0]), ("sub_", (1.0,), [0.0, 1.0]), ("mul_", (3.0,), [3.0, 6.0]),
    ("div_", (2.0,), [0.5, 1.0]), ("zero_", (), [0.0, 0.0]), ("fill_", (7.0,), [7.0, 7.0]),
    ("clamp_", (1.5, 1.8), [1.5, 1.8]),
])
def test_inplace_ops_write_and_bump_version(method, args, expected):
    x = aj.tensor([1.0, 2.0])
    version = x._version
    result = getattr(x, method)(*args)
    assert result is x
    np.testing.assert_allclose(x.numpy(), expected)
    assert x._version == version + 1


def test_copy_and_setitem_bump_version():
    x = aj.zeros(3)
    x.copy_(aj.tensor([1.0, 2.0, 3.0]))
    assert x._version == 1
    x[0] = 5.0
    assert x._version == 2
    np.testing.assert_allclose(x.numpy(), [5, 2, 3])


def test_copy_without_a_graph_writes_the_values_as_they_are():
    """copy_ under no_grad of an array of the target's shape and dtype is the write alone: the
    sign of a zero kept (as torch keeps it), the version bumped, a view's base written."""
    base = aj.zeros(2, 3)
    row = base[1]
    with aj.no_grad():
        row.copy_(aj.tensor([-0.0, 2.0, -3.0]))
        assert row._version == base._version == 1
        np.testing.assert_array_equal(np.signbit(base.numpy()[1]), [True, False, True])
        with pytest.raises(RuntimeError, match="more than one element"):
            aj.zeros(3).expand(2, 3).copy_(aj.ones(2, 3))


def test_version_counter_shared_with_views_and_detached():
    x = aj.tensor([1.0, 2.0, 3.0, 4.0])
    view = x.reshape(2, 2)
    detached = x.detach()
    x.add_(1)
    assert view._version == detached._version == x._version == 1
    np.testing.assert_allclose(view.numpy(), [[2, 3], [4, 5]])
    detached.mul_(2)
    assert x._version == 2
    np.testing.assert_allclose(x.numpy(), [4, 6, 8, 10])


def test_data_has_its_own_version_counter():
    x = aj.tensor([1.0, 2.0])
    x.data.add_(1)
    assert x._version == 0
    np.testing.assert_allclose(x.numpy(), [2, 3])


def test_modified_saved_tensor_raises_with_versions_and_op():
    x = leaf([1.0, 2.0])
    a = x * 1
    y = a * a
    a.add_(1)
    with pytest.raises(RuntimeError) as error:
        y.sum().backward()
    message = str(error.value)
    assert "one of the variables needed for gradient computation has been modified by an " \
           "inplace operation" in message
    assert "is at version 1; expected version 0 instead" in message
    assert "MulBackward0" in message


def test_inplace_not_saved_is_fine():
    x = leaf([1.0, 2.0])
    a = x * 1
    y = a + 2  # add saves nothing
    a.add_(1)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [1, 1])


def test_inplace_leaf_requires_grad_raises_except_under_no_grad():
    x = leaf([1.0, 2.0])
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad is being used in "
                                           "an in-place operation."):
        x.add_(1)
    with aj.no_grad():
        x.add_(1)
    np.testing.assert_allclose(x.detach().numpy(), [2, 3])


def test_inplace_on_view_of_leaf_raises():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    with pytest.raises(RuntimeError, match="a view of a leaf Variable that requires grad"):
        x.reshape(2, 2).mul_(2)


def test_inplace_op_is_differentiated():
    x = leaf([1.0, 2.0])
    a = x * 1
    a.mul_(x)  # a = x^2, computed in place
    assert a.grad_fn.name() == "MulBackward0"
    a.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2, 4])


def test_inplace_with_itself_as_saved_operand_raises():
    # a.mul_(a) saves a as the other operand, then overwrites it: torch raises here too.
    x = leaf([1.0, 2.0])
    a = x * 1
    a.mul_(a)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        a.sum().backward()


def test_inplace_exp_then_more_ops():
    x = leaf([0.5, 1.0])
    a = x * 2
    a.exp_()
    (a * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 6 * np.exp([1.0, 2.0]))


def test_fill_cuts_the_gradient():
    x = leaf([1.0, 2.0])
    a = x * 3
    a.fill_(4.0)
    assert a.requires_grad
    (a * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [4, 4])


def test_copy_routes_gradient_to_source():
    x = leaf([1.0, 2.0])
    target = aj.zeros(2, dtype=aj.float64)
    target.copy_(x * 5)
    target.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [5, 5])


def test_augmented_assignment_is_in_place():
    x = aj.tensor([1.0, 2.0])
    alias = x
    x += 1
    x *= 2
    assert alias is x and x._version == 2
    np.testing.assert_allclose(x.numpy(), [4, 6])


def test_inplace_type_error_for_int_target():
    x = aj.tensor([1, 2])
    with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired "
                                           "output type Long"):
        x.add_(0.5)


# ---- grad modes --------------------------------------------------------------------------------

def test_no_grad_context_and_decorator():
    x = leaf([1.0])
    with aj.no_grad():
        assert not (x * 2).requires_grad
        assert not aj.is_grad_enabled()
    assert (x * 2).requires_grad

    @aj.no_grad()
    def doubler(value):
        return value * 2

    assert not doubler(x).requires_grad


def test_enable_grad_inside_no_grad():
    x = leaf([1.0])
    with aj.no_grad():
        with aj.enable_grad():
            y = x * 2
    assert y.requires_grad

    @aj.enable_grad()
    def doubler(value):
        return value * 2

    with aj.no_grad():
        assert doubler(x).requires_grad


def test_set_grad_enabled_as_function_context_and_decorator():
    x = leaf([1.0])
    with aj.set_grad_enabled(False):
        assert not (x * 2).requires_grad
    assert aj.is_grad_enabled()
    aj.set_grad_enabled(False)
    try:
        assert not (x * 2).requires_grad
    finally:
        aj.set_grad_enabled(True)
    assert (x * 2).requires_grad

    @aj.set_grad_enabled(False)
    def doubler(value):
        return value * 2

    assert aj.is_grad_enabled()
    assert not doubler(x).requires_grad


def test_inference_mode():
    x = leaf([1.0])
    with aj.inference_mode():
        y = x * 2
        assert not y.requires_grad and y.is_inference()
        assert autograd.is_inference_mode_enabled()
    assert not autograd.is_inference_mode_enabled()
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor outside "
                                           "InferenceMode is not allowed"):
        y.add_(1)

    @aj.inference_mode()
    def run(value):
        return value * 2

    assert run(x).is_inference()


def test_grad_mode_is_thread_local():
    seen = {}
    entered = threading.Event()
    release = threading.Event()

    def worker():
        with aj.no_grad():
            entered.set()
            release.wait(5)
            seen["worker"] = aj.is_grad_enabled()

    thread = threading.Thread(target=worker)
    thread.start()
    entered.wait(5)
    seen["main"] = aj.is_grad_enabled()
    x = leaf([1.0])
    seen["main_records"] = (x * 2).requires_grad
    release.set()
    thread.join()
    assert seen == {"worker": False, "main": True, "main_records": True}


def test_view_taken_before_inplace_on_base_sees_the_new_history():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    base = x * 1
    view = base.reshape(2, 2)
    base.mul_(3)
    np.testing.assert_allclose(view.detach().numpy(), [[3, 6], [9, 12]])
    view.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [3, 3, 3, 3])


def test_chained_views_refresh_through_their_sources():
    x = leaf([1.0, 2.0, 3.0, 4.0])
    base = x * 1
    view = base.reshape(2, 2).permute(1, 0)
    base.mul_(x)
    (view * view).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 4 * np.array([1.0, 2.0, 3.0, 4.0]) ** 3)


def test_inference_mode_false_and_generator_decoration_are_torchs():
    torch = pytest.importorskip("torch")
    results = []
    for library in (aj, torch):
        with library.inference_mode():
            with library.inference_mode(False):  # inference off, grad mode on, as torch's guard
                x = library.ones(3, requires_grad=True)
                y = x * 2
                inside = (y.requires_grad, library.is_inference_mode_enabled(),
                          library.is_grad_enabled(), y.is_inference())

        @library.no_grad()
        def doubled(x):  # each step of the generator runs without grad
            yield x * 2
            yield x * 3

        @library.enable_grad()
        def kept(x):
            yield x * 2

        stepped = [v.requires_grad for v in doubled(library.ones(2, requires_grad=True))]
        with library.no_grad():
            enabled = [v.requires_grad for v in kept(library.ones(2, requires_grad=True))]
        results.append((inside, stepped, enabled, library.is_grad_enabled()))
    assert results[0] == results[1]


def test_retain_grad_follows_an_in_place_write_as_torchs():
    torch = pytest.importorskip("torch")
    results = []
    for library in (aj, torch):
        x = library.tensor([1.0, 2.0, 3.0], requires_grad=True)
        y = x * 1
        y.retain_grad()
        y.mul_(3)  # .grad is the gradient of the new value
        (y * y).sum().backward()
        whole = y.grad.tolist()
        x = library.tensor([1.0, 2.0, 3.0], requires_grad=True)
        view = (x * 1)[:2]
        view.retain_grad()
        view.mul_(3)
        (view * view).sum().backward()
        results.append((whole, view.grad.tolist()))
    assert results[0] == results[1]


def test_refusals_torch_makes_for_inference_tensors_and_post_accumulate_hooks():
    torch = pytest.importorskip("torch")
    for library in (aj, torch):
        with library.inference_mode():
            constant = library.ones(3) * 2
        weight = library.ones(3, requires_grad=True)
        with pytest.raises(RuntimeError, match="Inference tensors cannot be saved for backward"):
            (constant * weight).sum().backward()
        (constant + weight).sum().backward()  # nothing saved: allowed
        weight.register_post_accumulate_grad_hook(lambda p: p.grad.mul_(3))
        with pytest.raises(RuntimeError, match="post accumulate grad hooks should return None"):
            (weight * 2).sum().backward()
        other = library.ones(2, requires_grad=True)
        other.register_post_accumulate_grad_hook(lambda p: 3)
        with pytest.raises(TypeError, match="expected Variable, but hook returned 'int'"):
            (other * 2).sum().backward()
