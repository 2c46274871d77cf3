"""In-place writes through views, aliases and arguments: compiled equals eager equals torch.

Every program here is written once against a module `lib` (autojit or torch) and run three
ways: eagerly with torch, eagerly with autojit, and compiled with autojit (twice, so that the
second call runs the cached executable). Results, every argument after the call (values and
`_version`), and the tensors the program reaches from outside are compared.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import autojit
from autojit.compiler.api import CompileWarning

torch = pytest.importorskip("torch")

X = np.arange(12.0).reshape(3, 4)


def view_column_mul(lib, x):
    z = x.clone()
    z[:, 0].mul_(3)
    return z


def flat_view_item_add(lib, x):
    z = x.clone()
    z.view(-1)[3] += 1
    return z


def narrow_copy(lib, x, new):
    x.narrow(1, 0, 2).copy_(new)
    return x * 1


def transposed_row_sub(lib, w):
    w.t()[2].sub_(1)
    return w + 0


def arguments_mutated(lib, x, b):
    b.add_(x)
    x.mul_(2)
    return x.sum()


def view_of_view_then_base_read(lib, x):
    z = x * 1
    row = z[1]
    row[1:3].fill_(-1)  # a view of a view
    z.add_(1)  # the base written after: the view sees it
    return z, row * 1


def sibling_views(lib, x):
    z = x + 0
    first, second = z[:, :2], z[:, 1:]
    first.mul_(10)
    return second.sum(1), z


def detached_alias_written(lib, x):
    z = x * 2
    alias = z.detach()
    alias.add_(1)  # detach() shares storage: z sees it
    return z


def argument_view_written(lib, x):
    x[0].zero_()
    x[:, 1].add_(5)
    return x.sum()


def permuted_reshape_written(lib, x):
    z = x.reshape(2, 6).clone()
    z.permute(1, 0)[3].mul_(-1)
    return z


def expanded_then_cloned(lib, x):
    z = x[0].expand(3, 4).clone()
    z[1].fill_(7)
    return z


def transposed_values_reshaped(lib, x):
    # Eager's clone and elementwise ops keep their operand's layout: these are stored
    # transposed, so their reshape is a copy, and a write into it misses them.
    z = x.t().clone()
    z.reshape(-1)[0].mul_(-1.5)
    w = x.t() * 2
    w.reshape(-1)[1].add_(100)
    w.mul_(3)  # written in place, still stored transposed
    w.reshape(-1)[2].add_(100)
    v = (x @ x.t()).t() + 1
    v.flatten()[0].fill_(0)
    u = x.clone()  # row-major: its reshape is a view
    u.reshape(-1)[0].fill_(9)
    return z, w, v, u


PROGRAMS = [
    (transposed_values_reshaped, (X,)),
    (view_column_mul, (X,)),
    (flat_view_item_add, (X,)),
    (narrow_copy, (X, np.ones((3, 2)))),
    (transposed_row_sub, (X,)),
    (arguments_mutated, (X, np.ones((3, 4)))),
    (view_of_view_then_base_read, (X,)),
    (sibling_views, (X,)),
    (detached_alias_written, (X,)),
    (argument_view_written, (X,)),
    (permuted_reshape_written, (X,)),
    (expanded_then_cloned, (X,)),
]


def _flat(result):
    if isinstance(result, (tuple, list)):
        return [item for part in result for item in _flat(part)]
    return [result]


def _run(lib, program, arrays, compiled=None):
    tensors = [lib.tensor(array.copy()) for array in arrays]
    call = compiled if compiled is not None else (lambda *a: program(lib, *a))
    result = call(*tensors)
    return ([np.array(t.detach().numpy()) for t in _flat(result)],
            [np.array(t.detach().numpy()) for t in tensors],
            [t._version for t in tensors])


@pytest.mark.parametrize("program, arrays", PROGRAMS, ids=[p.__name__ for p, _ in PROGRAMS])
def test_compiled_equals_eager_equals_torch(program, arrays):
    reference = _run(torch, program, arrays)
    eager = _run(autojit, program, arrays)
    compiled = autojit.compile(lambda *a: program(autojit, *a))
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)  # no graph break
        runs = [_run(autojit, program, arrays, compiled) for _ in range(2)]
    assert len(compiled.executables) == 1
    for got in [eager, *runs]:
        for mine, theirs in zip(got[0] + got[1], reference[0] + reference[1], strict=True):
            np.testing.assert_allclose(mine, theirs)
    for run in runs:
        assert run[2] == eager[2]  # the arguments' versions move as eagerly
        assert all(bool(mine) == bool(theirs) for mine, theirs in zip(run[2], reference[2]))


def test_writes_through_views_of_captured_tensors_and_grads():
    def make():
        weight = autojit.nn.Parameter(autojit.tensor(X.copy()))

        def step(x):
            with autojit.no_grad():
                weight[0].zero_()
            (weight * x).sum().backward()
            weight.grad[0].zero_()
            weight.grad.t()[1].mul_(3)
            return weight.grad + 0

        return weight, step

    weight, step = make()
    expected = [step(autojit.ones(3, 4)).numpy() for _ in range(3)]
    expected_weight, expected_grad = weight.detach().numpy(), weight.grad.numpy()
    weight, step = make()
    compiled = autojit.compile(step)
    got = [compiled(autojit.ones(3, 4)).numpy() for _ in range(3)]
    for mine, theirs in zip(got, expected, strict=True):
        np.testing.assert_allclose(mine, theirs)
    np.testing.assert_allclose(weight.detach().numpy(), expected_weight)
    np.testing.assert_allclose(weight.grad.numpy(), expected_grad)


def test_returned_arguments_and_views_are_the_objects_eager_returns():
    def program(x):
        x.mul_(2)
        return x, x[0], x.t(), x.detach()

    compiled = autojit.compile(program)
    for _ in range(2):
        x = autojit.ones(2, 3)
        same, row, transposed, alias = compiled(x)
        assert same is x
        assert row._base is x and transposed._base is x
        assert np.shares_memory(alias.numpy(), x.numpy())
        row.add_(5)  # a write through the returned view reaches the argument, as in eager
        np.testing.assert_array_equal(x.numpy(), [[7, 7, 7], [2, 2, 2]])
        assert x._version == row._version == 2


def test_returned_local_and_its_view_share_memory():
    def program(x):
        z = x * 2
        return z, z[0], z

    compiled = autojit.compile(program)
    for _ in range(2):
        z, first, again = compiled(autojit.ones(2, 2))
        assert again is z and first._base is z
        first.add_(1)
        np.testing.assert_array_equal(z.numpy(), [[3, 3], [2, 2]])


def test_write_into_an_expanded_view_raises_eagers_error():
    def program(x):
        x.expand(3, 4).add_(1)
        return x

    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        program(autojit.ones(1, 4))
    with pytest.raises(RuntimeError, match="more than one element of the written-to tensor"):
        autojit.compile(program)(autojit.ones(1, 4))


def test_in_place_write_to_an_inference_tensor_raises_compiled():
    with autojit.inference_mode():
        made = autojit.ones(3)

    def program(x):
        x.add_(1)
        return x

    with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
        program(made)
    compiled = autojit.compile(program)
    compiled(autojit.ones(3))  # a normal tensor compiles
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
        compiled(made)  # the guard sees the inference tensor, and the trace raises


def test_arguments_sharing_memory_with_a_written_argument_run_eagerly():
    def program(a, b):
        a.add_(1)
        return b * 2

    compiled = autojit.compile(program)
    y, z = autojit.zeros(3), autojit.zeros(3)
    np.testing.assert_array_equal(compiled(y, z).numpy(), [0, 0, 0])
    x = autojit.zeros(3)
    with pytest.warns(CompileWarning, match="shares memory with another input"):
        result = compiled(x, x)
    np.testing.assert_array_equal(result.numpy(), [2, 2, 2])  # eager reads b after a.add_
    np.testing.assert_array_equal(x.numpy(), [1, 1, 1])
    base = autojit.zeros(2, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", CompileWarning)
        result = compiled(base[0], base.view(6)[:3])
    np.testing.assert_array_equal(result.numpy(), [2, 2, 2])


def test_written_argument_of_another_layout_retraces():
    def program(x):
        x.reshape(-1)[0] = 5.0  # a view when x is contiguous, a copy when it is not
        return x.sum()

    compiled = autojit.compile(program)
    for make in (lambda: autojit.zeros(2, 3), lambda: autojit.zeros(3, 2).t()):
        x, y = make(), make()
        assert float(compiled(x)) == float(program(y))
        np.testing.assert_array_equal(x.numpy(), y.numpy())


def test_a_view_write_of_a_value_requiring_grad_into_an_outside_tensor_runs_eagerly():
    buffer = autojit.zeros(3, 4)

    def program(w):
        buffer[0].copy_(w * 2)
        return buffer.sum()

    w = autojit.ones(4, requires_grad=True)
    with pytest.warns(CompileWarning, match="requires grad into a tensor from outside"):
        total = autojit.compile(program)(w)
    total.backward()
    np.testing.assert_array_equal(w.grad.numpy(), [2, 2, 2, 2])
    assert buffer.grad_fn is not None  # eager's history, as torch gives it


def view_made_before_its_base_is_written(lib, x):
    column = x[:, 0].narrow(0, 0, 2)  # made before the write of its base
    x.mul_(-1.5)
    column.mul_(-1.5)  # reads the base's new values
    z = x.clone()
    row = z[1]
    z.add_(1)
    row.sub_(2)
    return z


def result_equal_to_an_argument_before_its_write(lib, x, b):
    same = b * 1  # the passes make this the argument's own value
    twins = (x * 2, x * 2)  # and these one value
    b.mul_(-1.5)
    return same, twins


@pytest.mark.parametrize("program, arrays", [
    (view_made_before_its_base_is_written, (X,)),
    (result_equal_to_an_argument_before_its_write, (X, np.ones((3, 4)))),
], ids=["view_made_before_base_write", "result_equal_to_argument"])
def test_writes_after_views_and_results_made_before_them(program, arrays):
    test_compiled_equals_eager_equals_torch(program, arrays)


def test_results_the_passes_made_one_value_are_tensors_of_their_own():
    weight = autojit.ones(2)

    def program(x):
        return x * 1, weight * 1, x * 2, x * 2, (x * 1).t()

    compiled = autojit.compile(program)
    for _ in range(2):
        x = autojit.ones(2, 2)
        results = compiled(x)
        for index, result in enumerate(results):
            result.add_(10)  # eager's results are tensors of their own
            others = [x, weight] + [other for other in results if other is not result]
            assert not any(np.shares_memory(result.numpy(), other.numpy())
                           for other in others), index
        np.testing.assert_array_equal(x.numpy(), np.ones((2, 2)))
        np.testing.assert_array_equal(weight.numpy(), np.ones(2))


def test_views_of_random_draws_compile_as_eager():
    """A random draw is a graph input with no host array behind it (drawn anew each run, row
    major): slicing and transposing it inside a compiled function, as dropout's mask and
    fractional pooling's samples are, gives eager's values."""
    def program(x):
        noise = autojit.rand(3, 4, 2)
        x[:, 0].mul_(2)
        return x * noise[:, :, 0], noise[:, :, 1].t() + 1, autojit.randn(4, 3).t()[1:]

    compiled = autojit.compile(program)
    with warnings.catch_warnings():
        warnings.simplefilter("error", CompileWarning)
        for seed in (1, 2):
            autojit.manual_seed(seed)
            mine = compiled(autojit.tensor(X))
            autojit.manual_seed(seed)
            expected = program(autojit.tensor(X))
            for got, want in zip(mine, expected):
                np.testing.assert_array_equal(got.numpy(), want.numpy())
    assert len(compiled.executables) == 1


def laid_out_results(lib, x):
    # Eager's results keep the layout eager's ops give them: transposed, a strided window
    # of a larger value, a broadcast; a write through their reshape misses them (a copy).
    return (x.t() * 2, (x * 2)[:, 1:3], x.t().clone(), (x + 1).t(), (x * 3)[0].expand(2, 4),
            x * 4)


def test_returned_values_are_laid_out_as_eager_lays_them_out():
    compiled = autojit.compile(lambda x: laid_out_results(autojit, x))
    eager = laid_out_results(autojit, autojit.tensor(X))
    for _ in range(2):
        expected = laid_out_results(torch, torch.tensor(X))
        results = compiled(autojit.tensor(X))
        for mine, mine_eager, theirs in zip(results, eager, expected, strict=True):
            assert mine.stride() == mine_eager.stride() == theirs.stride()
            assert mine.is_contiguous() == theirs.is_contiguous()
            np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
        for mine, theirs in zip(results[:4] + results[5:], expected[:4] + expected[5:]):
            mine.reshape(-1)[0].fill_(-7)
            theirs.reshape(-1)[0].fill_(-7)
            np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    assert len(compiled.executables) == 1


def test_a_result_the_program_already_lays_out_as_eager_is_not_copied():
    # (a @ b + 1).t() is transposed in eager and in the program alike: the program's view
    # is the result, with no copy, and each call's result has memory of its own.
    def program(lib, a, b):
        return (a @ b + 1).t(), (a @ b + 2).t().sin()

    compiled = autojit.compile(lambda a, b: program(autojit, a, b))
    a, b = X, X.T.copy() / 3
    expected = program(torch, torch.tensor(a), torch.tensor(b))
    results = [compiled(autojit.tensor(a), autojit.tensor(b)) for _ in range(3)]
    for mine, theirs in zip(results[-1], expected, strict=True):
        assert mine.stride() == theirs.stride()
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-6)
    # The transposed view of the kernel's row-major buffer, not a copy into a new one.
    assert results[-1][0]._payload.base.shape == tuple(reversed(results[-1][0].shape))
    first, second = results[0][0], results[1][0]
    assert not np.shares_memory(first._payload, second._payload)
    first.reshape(-1)[0].fill_(-7)  # a copy, as torch's: the result keeps its values
    np.testing.assert_allclose(first.numpy(), expected[0].numpy(), rtol=1e-6)


def test_an_argument_with_another_layout_is_traced_again():
    # Whether the clone's reshape is a view (a row-major argument) or a copy (a transposed
    # one) was decided by the traced argument's layout: a call with the other layout must
    # not run that decision.
    def program(lib, a):
        z = a.clone()
        z.reshape(-1)[0].mul_(10)
        return z

    compiled = autojit.compile(lambda a: program(autojit, a))
    def argument(lib, values, layout):
        return lib.tensor(values) if layout == "rows" else lib.tensor(values.T.copy()).t()

    for values in (X + 1, X * 2 - 3):
        for layout in ("rows", "columns", "rows"):
            expected = program(torch, argument(torch, values, layout)).numpy()
            np.testing.assert_array_equal(
                program(autojit, argument(autojit, values, layout)).numpy(), expected)
            np.testing.assert_array_equal(compiled(argument(autojit, values, layout)).numpy(),
                                          expected)
    assert len(compiled.executables) == 2
    reasons = [str(executable.guards.failure((autojit.tensor(X.T.copy()).t(),)))
               for executable in compiled.executables]
    assert any("argument 0 changed its memory layout" in reason for reason in reasons)


def _layouts(base):
    return {"transposed": lambda lib: lib.tensor(base.T.copy()).t(),
            "contiguous": lambda lib: lib.tensor(base.copy())}


def reshape_written_through(lib, a):
    a.reshape(-1).mul_(2)  # a view of a row-major a, a copy of a transposed one
    return a.sum()


def like_written_through(lib, a):
    z = lib.zeros_like(a).add_(a)  # laid out as a (preserve_format)
    z.reshape(-1)[0].mul_(-1.5)
    return z


@pytest.mark.parametrize("program", [reshape_written_through, like_written_through],
                         ids=lambda p: p.__name__)
def test_a_view_decision_follows_the_layout_of_each_calls_argument(program):
    # Whether eager's reshape aliases depends on the argument's strides: a trace made for a
    # transposed argument must not serve a row-major one (its layout is guarded), and a
    # tensor made like the argument is laid out as eager lays it out.
    compiled = autojit.compile(lambda a: program(autojit, a))
    makers = _layouts(np.arange(1.0, 5.0).reshape(2, 2))
    for layout in ("transposed", "contiguous", "transposed", "contiguous"):
        mine, theirs = makers[layout](autojit), makers[layout](torch)
        got, expected = compiled(mine), program(torch, theirs)
        np.testing.assert_array_equal(got.numpy(), expected.numpy())
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    assert len(compiled.executables) <= 2


def test_as_strided_of_an_argument_view_reads_its_base_storage():
    # torch's as_strided of a view addresses its base's storage, past the view's own
    # elements (OpInfo as_strided.partial_views): the traced view reads the base's storage,
    # guarded by the base and the view's place in it; gradients reach the view's elements.
    def function(lib, v):
        return v.as_strided((2, 2), (1, 2), 10) * 2 + v.as_strided((2,), (3,), 3).sum()

    compiled = autojit.compile(lambda v: function(autojit, v), fullgraph=True)
    data = np.arange(20.0)
    base, their_base = autojit.tensor(data), torch.tensor(data)
    for start in (5, 5, 3):
        view, their_view = base[start:start + 10], their_base[start:start + 10]
        mine = compiled(view)
        np.testing.assert_array_equal(mine.numpy(), function(torch, their_view).numpy())
        base.mul_(2)
        their_base.mul_(2)
    assert compiled.stats().traces == 2 and compiled.stats().eager_calls == 0
    leaf, their_leaf = base[5:15].requires_grad_(), their_base[5:15].requires_grad_()
    autojit.compile(lambda v: function(autojit, v).sum())(leaf).backward()
    function(torch, their_leaf).sum().backward()
    np.testing.assert_array_equal(leaf.grad.numpy(), their_leaf.grad.numpy())
