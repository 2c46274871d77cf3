"""Matrix products in compiled plans (codegen/schedule/matmul_steps.py, codegen/cpu/gemm/blas.py):
transposed operands read where they lie, epilogues folded into one BLAS call (stored in place into
the updated tensor where that is safe, into an earlier product's result where that is all the sum
reads, copied otherwise), and large independent products run side by side, each matching eager.
"""

import numpy as np
import pytest

import autojit
from autojit.codegen.cpu.gemm import blas
from autojit.codegen.schedule.matmul_steps import ConcurrentProducts, GemmStep, MatmulStep

generator = np.random.default_rng(7)


def array(*shape, dtype=np.float32):
    return generator.standard_normal(shape).astype(dtype)


def plan_of(compiled):
    return compiled.executables[0].plan


def steps_of(compiled, kind):
    return [step for step in plan_of(compiled).steps if isinstance(step, kind)]


# ---- blas.gemm ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("shape", [(3, 4, 5), (300, 70, 260), (1, 7, 1), (5, 0, 3)])
def test_gemm_reads_transposed_and_strided_operands_and_accumulates(dtype, shape):
    rows, inner, columns = shape
    if not blas.gemm_supported(dtype):
        pytest.skip("no CBLAS gemm in this process")
    for transpose_a in (False, True):
        for transpose_b in (False, True):
            a = array(inner, rows, dtype=dtype).T if transpose_a else array(rows, inner,
                                                                            dtype=dtype)
            # Every other column: strides BLAS cannot read as they are (copied first).
            b = array(columns, inner, dtype=dtype).T if transpose_b else \
                array(inner, 2 * columns, dtype=dtype)[:, ::2]
            for alpha, beta in ((1.0, 0.0), (-0.25, 1.0), (2.0, -1.0)):
                accumulate = array(rows, columns, dtype=dtype)
                out = accumulate.copy() if beta else np.full((rows, columns), np.nan, dtype)
                blas.gemm(a, b, out, alpha, beta)
                expected = alpha * (a.astype(np.float64) @ b) + beta * accumulate
                np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-4)


# ---- epilogues ---------------------------------------------------------------------------------

@pytest.mark.parametrize("function", [
    lambda a, b, c: c - 0.5 * (a @ b),
    lambda a, b, c: (a @ b) * 3 + c,
    lambda a, b, c: c + a @ b,
    lambda a, b, c: 2 * (a @ b) - c,
    lambda a, b, c: (a.t().t() @ b) - c,
    lambda a, b, c: (a @ b) + (c @ b.t().t()[:, :4].t()[:4].t()[:4, :4] @ b)[:, :4] * 0 + c,
], ids=["c-s*ab", "ab*s+c", "c+ab", "s*ab-c", "ab-c", "two-products"])
def test_epilogue_matches_eager_and_leaves_its_operands_alone(function):
    a, b, c = (autojit.tensor(array(4, 4)) for _ in range(3))
    originals = [t.numpy().copy() for t in (a, b, c)]
    compiled = autojit.compile(function)
    for _ in range(3):  # kept buffers from the last call are reused: results stay right
        np.testing.assert_allclose(compiled(a, b, c).numpy(), function(a, b, c).numpy(),
                                   rtol=1e-5, atol=1e-5)
    for tensor, original in zip((a, b, c), originals):
        np.testing.assert_array_equal(tensor.numpy(), original)


def test_a_scaled_product_subtracted_from_an_argument_is_one_blas_call():
    compiled = autojit.compile(lambda a, b, c: c - 0.5 * (a.t() @ b))
    a, b, c = autojit.tensor(array(6, 3)), autojit.tensor(array(6, 5)), autojit.tensor(
        array(3, 5))
    result = compiled(a, b, c)
    np.testing.assert_allclose(result.numpy(), c.numpy() - 0.5 * (a.numpy().T @ b.numpy()),
                               rtol=1e-5, atol=1e-6)
    (step,) = steps_of(compiled, GemmStep)
    assert (step.epilogue.alpha, step.epilogue.beta) == (-0.5, 1.0)
    # The transpose is read through its strides: no permute step is left in the plan.
    assert "permute" not in plan_of(compiled).describe()
    assert step.in_place is None  # c is an argument, not a tensor the function updates


def sgd_parameters():
    # float64: in float32 the steps' rounding differences grow from step to step with this
    # loss, while the property checked is that the fused update computes eager's step.
    return [autojit.tensor(array(6, 5, dtype=np.float64), requires_grad=True),
            autojit.tensor(array(5, 3, dtype=np.float64), requires_grad=True)]


def sgd_step(parameters, x, clear):
    def step():
        loss = ((x @ parameters[0]).tanh() @ parameters[1]).square().sum()
        loss.backward()
        with autojit.no_grad():
            for parameter in parameters:
                parameter.sub_(0.1 * parameter.grad)
                if clear:
                    parameter.grad = None
        return loss.detach()
    return step


def sgd_against_eager(clear: bool, calls: int = 4):
    """(the compiled SGD step, its parameters, their storage before the first call), after
    `calls` calls checked against eager's: losses, parameters and (kept) gradients."""
    x = autojit.tensor(array(8, 6, dtype=np.float64))
    parameters = sgd_parameters()
    eager_parameters = [autojit.tensor(p.detach().numpy().copy(), requires_grad=True)
                        for p in parameters]
    compiled = autojit.compile(sgd_step(parameters, x, clear))
    eager = sgd_step(eager_parameters, x, clear)
    storage = [p._payload for p in parameters]
    for _ in range(calls):
        np.testing.assert_allclose(compiled().item(), eager().item(), rtol=1e-10)
    for mine, theirs in zip(parameters, eager_parameters):
        np.testing.assert_allclose(mine.detach().numpy(), theirs.detach().numpy(), rtol=1e-10,
                                   atol=1e-12)
        if not clear:
            np.testing.assert_allclose(mine.grad.numpy(), theirs.grad.numpy(), rtol=1e-10,
                                       atol=1e-12)
    return compiled, parameters, storage


@pytest.mark.parametrize("clear", [True, False], ids=["grad-cleared", "grad-kept"])
def test_sgd_update_folded_into_the_weight_gradient_product_equals_eager(clear):
    compiled, parameters, storage = sgd_against_eager(clear)
    gemms = steps_of(compiled, GemmStep)
    if clear:
        # Both weight gradients are used only by their update: each update is one BLAS call
        # writing into the parameter's own storage.
        assert len(gemms) == 2 and all(step.in_place is not None for step in gemms)
        assert all(p._payload is data for p, data in zip(parameters, storage))
    else:
        # The gradients are kept in .grad: each new weight gradient is accumulated by its
        # product into the .grad tensor itself, in place, as eager's backward adds into it.
        assert len(gemms) == 2 and all(step.in_place is not None for step in gemms)
        assert all(step.epilogue.beta == 1.0 for step in gemms)
        assert all(p._payload is data for p, data in zip(parameters, storage))


def test_a_weight_update_runs_right_after_the_last_read_of_the_weight():
    """The second layer's update W1 - 0.1 * (h.T @ g) moves up to just after g @ W1.T, the
    last step reading the old W1 (while h and g are still in cache), ahead of the first
    layer's backward and update; the result stays eager's."""
    compiled, _, _ = sgd_against_eager(True, calls=3)
    steps = plan_of(compiled).steps
    updates = {step.epilogue.accumulate.shape: steps.index(step)
               for step in steps if isinstance(step, GemmStep)}
    second, first = updates[(5, 3)], updates[(6, 5)]
    reader = steps[second - 1]
    assert isinstance(reader, MatmulStep) and not isinstance(reader, GemmStep)
    assert steps[second].epilogue.accumulate in reader.operands
    assert second < first


def test_accumulating_a_product_into_a_kept_grad_equals_eager():
    """grad += x.T @ g on each call (.grad never cleared): the product accumulates into the
    kept gradient in one call."""
    def run(compiled):
        weight = autojit.tensor(np.ones((6, 5), np.float32), requires_grad=True)
        x = autojit.tensor(np.arange(48, dtype=np.float32).reshape(8, 6) / 48)

        def step():
            (x @ weight).square().sum().backward()
            return weight.grad * 1

        function = autojit.compile(step) if compiled else step
        return [function().numpy().copy() for _ in range(3)], weight.grad.numpy()

    (mine, my_grad), (theirs, their_grad) = run(True), run(False)
    for first, second in zip(mine, theirs):
        np.testing.assert_allclose(first, second, rtol=1e-5)
    np.testing.assert_allclose(my_grad, their_grad, rtol=1e-5)


def test_an_update_whose_factors_read_the_updated_tensor_is_not_written_in_place():
    """W - 0.1 * (W.T @ W): BLAS would read W while writing it, so the step copies W first."""
    weight = autojit.tensor(array(5, 5))
    expected = weight.numpy().copy()

    def step():
        with autojit.no_grad():
            weight.copy_(weight - 0.1 * (weight.t() @ weight))
        return weight * 1

    compiled = autojit.compile(step)
    for _ in range(3):
        expected = expected - 0.1 * (expected.T @ expected)
        np.testing.assert_allclose(compiled().numpy(), expected, rtol=1e-4, atol=1e-5)
    assert all(step.in_place is None for step in steps_of(compiled, GemmStep))


# ---- a product added into an earlier one's result ---------------------------------------------

@pytest.mark.parametrize("function, into", [
    (lambda a, b, c, d: (a @ b) + (c @ d), True),
    (lambda a, b, c, d: (a @ b) - 0.5 * (c @ d), True),
    (lambda a, b, c, d: 2 * (c @ d) - (a @ b), False),  # the earlier one is scaled: copied
    (lambda a, b, c, d: ((a @ b) + (c @ d), a @ b), False),  # the earlier one is returned
], ids=["ab+cd", "ab-s*cd", "s*cd-ab", "ab-returned"])
def test_a_sum_of_two_products_stores_the_later_into_the_earlier_result(function, into):
    """(a @ b) + (c @ d): the second product is one gemm adding into the first's array (no
    add kernel, no copy), unless something else reads the first result."""
    tensors = [autojit.tensor(array(5, 5)) for _ in range(4)]
    compiled = autojit.compile(function)
    for _ in range(3):  # kept buffers from the last call are reused: results stay right
        mine, theirs = compiled(*tensors), function(*tensors)
        for got, expected in zip(*((x if isinstance(x, tuple) else (x,)) for x in (mine,
                                                                                   theirs))):
            np.testing.assert_allclose(got.numpy(), expected.numpy(), rtol=1e-5, atol=1e-5)
    gemms = steps_of(compiled, GemmStep)
    assert [step.epilogue.into_accumulate for step in gemms] == ([True] if into else
                                                                  [False] * len(gemms))
    if into:
        assert "kernel" not in plan_of(compiled).describe()


def test_a_product_added_into_an_earlier_result_still_runs_beside_its_neighbour():
    """The gradient-penalty shape: two pairs of products, the second pair's weight-gradient
    product adding into the first pair's."""
    if blas.pool() is None:
        pytest.skip("one core: nothing to run side by side")
    side = 256
    g, w, h = (autojit.tensor(array(side, side)) for _ in range(3))

    def function(g, w, h):
        first = g @ w
        second = h.t() @ g
        return first.relu() @ w, second + h.t() @ first

    compiled = autojit.compile(function)
    for _ in range(3):
        for mine, theirs in zip(compiled(g, w, h), function(g, w, h)):
            np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-4, atol=1e-2)
    pairs = steps_of(compiled, ConcurrentProducts)
    assert len(pairs) == 2
    (into,) = [member for member in pairs[1].members if isinstance(member, GemmStep)]
    assert into.epilogue.into_accumulate


def test_a_fresh_grad_summed_from_two_products_is_a_new_array_each_call():
    """w is used twice, so its gradient is the sum of two products, the later stored into the
    earlier's array. With .grad cleared each call, that array is the new .grad: allocated per
    call, so a .grad kept from the call before keeps its values."""
    x, x2 = autojit.tensor(array(6, 4, dtype=np.float64)), autojit.tensor(array(6, 4,
                                                                              dtype=np.float64))
    def step_of(w):
        def step():
            w.grad = None
            loss = (x @ w).tanh().sum() + ((x2 @ w) ** 2).sum()
            loss.backward()
            with autojit.no_grad():
                w.sub_(0.1 * w.grad)
            return loss.detach()
        return step

    start, results = array(4, 3, dtype=np.float64), {}
    for compiled in (False, True):
        w = autojit.tensor(start.copy(), requires_grad=True)
        step = step_of(w)
        function = autojit.compile(step) if compiled else step
        kept = []
        for _ in range(3):
            function()
            kept.append(w.grad)
        results[compiled] = [grad.numpy().copy() for grad in kept]
        assert len({id(grad) for grad in kept}) == 3
        if compiled:
            gemms = steps_of(function, GemmStep)
            assert any(step.epilogue.into_accumulate for step in gemms)
            for first, second in zip(kept, kept[1:]):
                assert not np.shares_memory(first.numpy(), second.numpy())
            # and, run natively, the summed array becomes the .grad as it is, uncopied
            executable = function.executables[0]
            program = executable.plan.program
            if program:
                (index,) = [number for number, output in enumerate(executable.graph.outputs)
                            if output.kind == "grad"]
                assert index in program.owned_outputs
    for mine, theirs in zip(results[True], results[False]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-10, atol=1e-12)


# ---- products side by side ---------------------------------------------------------------------

def test_large_independent_products_run_side_by_side_and_match_eager():
    if blas.pool() is None:
        pytest.skip("one core: nothing to run side by side")
    side = 256  # 256^3 multiply-adds: the size from which a product would be split anyway
    g, w, h = (autojit.tensor(array(side, side)) for _ in range(3))

    def function(g, w, h):
        first = g @ w.t()
        return first.relu(), h.t() @ g

    compiled = autojit.compile(function)
    for _ in range(2):
        for mine, theirs in zip(compiled(g, w, h), function(g, w, h)):
            np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-4, atol=1e-3)
    (pair,) = steps_of(compiled, ConcurrentProducts)
    assert len(pair.members) == 2
    assert "side by side" in plan_of(compiled).describe()


def test_a_weight_update_product_keeps_its_in_place_epilogue_instead_of_pairing():
    """The hidden layer's input gradient g @ W.T and the update W - lr * (h.T @ g) are
    independent products, but pairing them would cost the update its in-place epilogue (the
    other product reads W meanwhile): they run one after the other, and W is written in
    place after g @ W.T has read it."""
    if blas.pool() is None:
        pytest.skip("one core: nothing to run side by side")
    side = 256
    h, g = autojit.tensor(array(side, side)), autojit.tensor(array(side, side))
    start = array(side, side)
    compiled_weight, eager_weight = autojit.tensor(start.copy()), autojit.tensor(start.copy())

    def step(weight):
        def function(h, g):
            input_gradient = g @ weight.t()
            with autojit.no_grad():
                weight.sub_(0.5 * (h.t() @ g))
            return input_gradient.relu()
        return function

    compiled = autojit.compile(step(compiled_weight))
    eager = step(eager_weight)
    for _ in range(3):
        np.testing.assert_allclose(compiled(h, g).numpy(), eager(h, g).numpy(), rtol=1e-4,
                                   atol=1e-2)
        np.testing.assert_allclose(compiled_weight.numpy(), eager_weight.numpy(), rtol=1e-4,
                                   atol=1e-2)
    assert not steps_of(compiled, ConcurrentProducts)
    (update,) = steps_of(compiled, GemmStep)
    assert update.in_place is not None


def test_a_product_reading_the_previous_one_runs_after_it():
    if blas.pool() is None:
        pytest.skip("one core: nothing to run side by side")
    a, b, c = (autojit.tensor(array(256, 256)) for _ in range(3))
    compiled = autojit.compile(lambda a, b, c: (a @ b) @ c)
    np.testing.assert_allclose(compiled(a, b, c).numpy(),
                               ((a @ b) @ c).numpy(), rtol=1e-3, atol=1e-2)
    assert not steps_of(compiled, ConcurrentProducts)


def test_small_products_stay_one_after_the_other():
    a, b = autojit.tensor(array(16, 16)), autojit.tensor(array(16, 16))
    compiled = autojit.compile(lambda a, b: (a @ b, b @ a))
    compiled(a, b)
    assert not steps_of(compiled, ConcurrentProducts)


# ---- OpenBLAS's thread count -------------------------------------------------------------------

def test_an_eager_product_is_the_same_before_and_after_a_compiled_one():
    """Compiled runs set OpenBLAS to one thread only while they run: OpenBLAS rounds this
    product differently on one thread than on two, and eager must not depend on history."""
    a, b = autojit.tensor(array(256, 784)), autojit.tensor(array(784, 512))
    before = (a @ b).numpy().copy()
    compiled = autojit.compile(lambda x, y: (x @ y).sum())
    compiled(a, b)
    compiled(a, b)
    np.testing.assert_array_equal((a @ b).numpy(), before)


def test_a_compiled_product_runs_blas_on_one_thread_and_gives_the_count_back():
    threads = blas._blas_threads()
    if threads is None:
        pytest.skip("no OpenBLAS thread setting in this process")
    seen = []

    def function(x, y):
        return x @ y

    compiled = autojit.compile(function)
    x, y = autojit.tensor(array(64, 64)), autojit.tensor(array(64, 64))
    count = threads[0]()
    originals = {name: getattr(blas, name) for name in ("_matmul", "_gemm")}

    def spy(name):
        def called(*arguments):
            seen.append(threads[0]())
            return originals[name](*arguments)
        return called

    for name in originals:
        setattr(blas, name, spy(name))
    try:
        for _ in range(3):  # the third runs the recorded program, which calls no Python
            compiled(x, y)
    finally:
        for name, original in originals.items():
            setattr(blas, name, original)
    assert plan_of(compiled).calls_blas
    assert threads[0]() == count
    assert seen and set(seen) == {1}


def test_one_thread_scopes_nest_and_a_count_set_inside_one_applies_after_the_last():
    threads = blas._blas_threads()
    if threads is None:
        pytest.skip("no OpenBLAS thread setting in this process")
    count = threads[0]()
    try:
        with blas.one_thread():
            assert threads[0]() == 1
            with blas.one_thread():
                assert threads[0]() == 1
                blas.threads_changed(2)
            assert threads[0]() == 1  # the outer scope is still open
        assert threads[0]() == 2
        with pytest.raises(RuntimeError), blas.one_thread():
            raise RuntimeError("a failing compiled run still gives the count back")
        assert threads[0]() == 2
    finally:
        blas.threads_changed(count)
    assert threads[0]() == count


# ---- products over an inner extent of 1 ----------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.int64])
def test_a_product_over_one_inner_element_is_a_fused_broadcast_product_bitwise_as_eager(dtype):
    """a[m, 1] @ b[1, n] is rewritten to a * b (+0.0 for floats, where BLAS's sum from zero
    turns -0.0 into +0.0), which fuses into a kernel; results are bitwise eager's."""
    first = autojit.tensor(np.array([[1], [-0.0], [2], [-1]]).astype(dtype))
    second = autojit.tensor(np.array([[0.0, -3, 1]]).astype(dtype))
    batched = autojit.tensor(np.arange(12).reshape(2, 1, 6).astype(dtype) - 5)
    function = lambda a, b, c: (a @ b, (a @ b).t() * 2, a @ c[:, :, :3])  # noqa: E731
    compiled = autojit.compile(function)
    for mine, theirs in zip(compiled(first, second, batched), function(first, second, batched)):
        assert mine.shape == theirs.shape
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
        np.testing.assert_array_equal(np.signbit(mine.numpy()), np.signbit(theirs.numpy()))
    assert "matmul" not in compiled.ir()
