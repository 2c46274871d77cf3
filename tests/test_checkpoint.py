"""autojit.utils.checkpoint against torch.utils.checkpoint: values and gradients (bit-equal to
the run without checkpointing, second order included), dropout replayed with
preserve_rng_state, checkpoint_sequential, keyword and non-tensor arguments, torch's warnings
and errors; compiled steps against eager, and the partition of a compiled function that keeps
fewer residuals because the segment is recomputed in its backward graph."""

import warnings

import numpy as np
import pytest
import torch
import torch.utils.checkpoint as torch_checkpoint

import autojit
import autojit.utils.checkpoint as checkpointing
from autojit import nn
from autojit.utils.checkpoint import checkpoint, checkpoint_sequential

GENERATOR = np.random.default_rng(0)
W1 = GENERATOR.standard_normal((6, 5)).astype(np.float32)
W2 = GENERATOR.standard_normal((5, 4)).astype(np.float32)
X = GENERATOR.standard_normal((3, 6)).astype(np.float32)
BATCH = GENERATOR.standard_normal((4, 8)).astype(np.float32)
ROWS = GENERATOR.standard_normal((3, 4)).astype(np.float32)


def parameters(framework):
    return [framework.tensor(W1, requires_grad=True), framework.tensor(W2, requires_grad=True),
            framework.tensor(X, requires_grad=True)]


def segment(first, second):
    """A segment reading two weights from its closure, as a module's forward does."""
    def run(h, scale=1.0):
        return ((h @ first).tanh() * scale) @ second
    return run


def first_order(framework, wrap, use_reentrant=False):
    first, second, x = parameters(framework)
    run = segment(first, second)
    h = x * 2
    out = wrap(run, h, use_reentrant=use_reentrant) if wrap else run(h)
    (out.sin() * out).sum().backward()
    return out.detach().numpy(), [t.grad.numpy() for t in (first, second, x)]


def assert_bit_equal(arrays, expected):
    for array, reference in zip(arrays, expected, strict=True):
        np.testing.assert_array_equal(array, reference)


def assert_close(arrays, expected):
    for array, reference in zip(arrays, expected, strict=True):
        np.testing.assert_allclose(array, reference, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("use_reentrant", [False, True])
def test_gradients_are_those_of_the_plain_run(use_reentrant):
    out, grads = first_order(autojit, checkpoint, use_reentrant)
    plain_out, plain_grads = first_order(autojit, None)
    torch_out, torch_grads = first_order(torch, torch_checkpoint.checkpoint, use_reentrant)
    assert_bit_equal([out, *grads], [plain_out, *plain_grads])
    assert_close([out, *grads], [torch_out, *torch_grads])


def test_forward_keeps_no_intermediate_values():
    first, second, x = parameters(autojit)
    out = checkpoint(segment(first, second), x, use_reentrant=False)
    nodes, stack = [], [out.grad_fn]
    while stack:  # the segment's nodes, down to the leaves
        node = stack.pop()
        nodes.append(node)
        stack.extend(n for n, _ in node.next_functions if n is not None)
    kept = [entry for node in nodes for entry in getattr(node, "_saved", None) or ()
            if isinstance(entry, autojit.autograd.graph.SavedTensor) and
            entry.tensor is None and entry.data is not None]
    assert kept == []  # tanh's output (and every other internal value) waits for recompute
    assert out.grad_fn.name() == "MmBackward0"


def test_gradient_penalty_through_a_checkpointed_segment():
    def penalty(framework, wrap):
        first, second, x = parameters(framework)
        run = segment(first, second)
        out = wrap(run, x, use_reentrant=False) if wrap else run(x)
        (gradient,) = framework.autograd.grad(out.sin().sum(), x, create_graph=True)
        (gradient * gradient).sum().backward()
        return [t.grad.numpy() for t in (first, second, x)]

    grads = penalty(autojit, checkpoint)
    assert_bit_equal(grads, penalty(autojit, None))
    assert_close(grads, penalty(torch, torch_checkpoint.checkpoint))


def test_nested_checkpoints_with_a_gradient_penalty():
    def penalty(framework, wrap):
        first, _, x = parameters(framework)
        square = framework.tensor(W1[:5], requires_grad=True)

        def inner(h):
            return (h @ first).tanh()

        def outer(h):
            return (wrap(inner, h, use_reentrant=False) if wrap else inner(h)).sin() @ square
        out = wrap(outer, x, use_reentrant=False) if wrap else outer(x)
        (gradient,) = framework.autograd.grad(out.sum(), x, create_graph=True)
        (gradient * gradient).sum().backward()
        return [t.grad.numpy() for t in (first, square, x)]

    grads = penalty(autojit, checkpoint)
    assert_bit_equal(grads, penalty(autojit, None))
    assert_close(grads, penalty(torch, torch_checkpoint.checkpoint))


@pytest.mark.parametrize("nesting", ["c(c(f))", "c(g(c(f)))", "c(c(g) . c(f))"])
def test_second_derivatives_through_directly_nested_checkpoints(nesting):
    """A checkpoint whose function is (or ends in) another checkpoint: the outer segment keeps
    the inner one's saved entries with their autograd identity (an input's producer or the
    node's own output), so a second derivative walks the forward's graph as without
    checkpoints (it gave -0.043 for -0.638 before)."""
    def second(framework, wrap):
        def c(fn):
            return (lambda h: wrap(fn, h, use_reentrant=False)) if wrap else fn

        def f(h):
            return h.sin().exp().sin()

        def g(h):
            return h.cos().sin().exp()

        function = {"c(c(f))": c(c(f)), "c(g(c(f)))": c(lambda h: g(c(f)(h))),
                    "c(c(g) . c(f))": c(lambda h: c(g)(c(f)(h)))}[nesting]
        x = framework.tensor(W1[:3], requires_grad=True)
        (first,) = framework.autograd.grad(function(x).sum(), x, create_graph=True)
        (result,) = framework.autograd.grad(first.sum(), x)
        return [first.detach().numpy(), result.numpy()]

    found = second(autojit, checkpoint)
    assert_bit_equal(found, second(autojit, None))
    assert_close(found, second(torch, torch_checkpoint.checkpoint))


def test_dropout_draws_the_same_mask_in_the_recomputation():
    def run(preserve, wrap=True):
        autojit.manual_seed(3)
        first, second, x = parameters(autojit)

        def dropped(h):
            return autojit.nn.functional.dropout((h @ first).tanh(), 0.5, True) @ second
        out = checkpoint(dropped, x, use_reentrant=False, preserve_rng_state=preserve) \
            if wrap else dropped(x)
        autojit.rand(4)  # the generator moves on before backward recomputes
        out.sum().backward()
        return [t.grad.numpy() for t in (first, second, x)], autojit.get_rng_state().numpy()

    grads, state_after = run(True)
    plain, plain_state = run(True, wrap=False)
    assert_bit_equal(grads, plain)
    np.testing.assert_array_equal(state_after, plain_state)  # backward left it where it was
    unpreserved, _ = run(False)
    assert not np.array_equal(unpreserved[0], plain[0])  # a fresh mask: other gradients


def test_keywords_non_tensor_arguments_and_several_outputs():
    def run(framework, wrap):
        first, second, x = parameters(framework)
        fixed = framework.tensor(X[:, :5])  # requires no grad

        def several(h, offset, power, *, scale):
            hidden = (h @ first).tanh() + offset
            return hidden * scale, (hidden ** power) @ second, power
        result = wrap(several, x, fixed, 2, use_reentrant=False, scale=0.5) if wrap else \
            several(x, fixed, 2, scale=0.5)
        first_out, second_out, power = result
        assert power == 2
        (first_out.sum() + second_out.cos().sum()).backward()
        return [first_out.detach().numpy(), second_out.detach().numpy()] + \
            [t.grad.numpy() for t in (first, second, x)]

    values = run(autojit, checkpoint)
    assert_bit_equal(values, run(autojit, None))
    assert_close(values, run(torch, torch_checkpoint.checkpoint))


def test_a_custom_function_with_two_outputs_inside():
    def run(framework, wrap):
        class ExpSin(framework.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                exp, sin = x.exp(), x.sin()
                ctx.save_for_backward(x, exp)
                return exp, sin

            @staticmethod
            def backward(ctx, grad_exp, grad_sin):
                x, exp = ctx.saved_tensors
                return grad_exp * exp + grad_sin * x.cos()

        first, _, x = parameters(framework)
        function = lambda h: ExpSin.apply((h @ first).tanh())  # noqa: E731
        exp, sin = wrap(function, x, use_reentrant=False) if wrap else function(x)
        (exp * sin).sum().backward()
        return [first.grad.numpy(), x.grad.numpy()]

    grads = run(autojit, checkpoint)
    assert_bit_equal(grads, run(autojit, None))
    assert_close(grads, run(torch, torch_checkpoint.checkpoint))


def test_checkpoint_sequential_against_torch():
    torch.manual_seed(0)
    theirs = torch.nn.Sequential(torch.nn.Linear(4, 6), torch.nn.Tanh(), torch.nn.Linear(6, 6),
                                 torch.nn.Tanh(), torch.nn.Linear(6, 2))
    mine = nn.Sequential(nn.Linear(4, 6), nn.Tanh(), nn.Linear(6, 6), nn.Tanh(), nn.Linear(6, 2))
    mine.load_state_dict({name: autojit.tensor(value.detach().numpy())
                          for name, value in theirs.state_dict().items()})

    def run(framework, model, sequential):
        x = framework.tensor(ROWS, requires_grad=True)
        out = sequential(model, 2, x, use_reentrant=False) if sequential else model(x)
        out.square().sum().backward()
        grads = [p.grad.numpy().copy() for p in model.parameters()] + [x.grad.numpy()]
        model.zero_grad()
        return [out.detach().numpy()] + grads

    values = run(autojit, mine, checkpoint_sequential)
    assert_bit_equal(values, run(autojit, mine, None))
    assert_close(values, run(torch, theirs, torch_checkpoint.checkpoint_sequential))


def caught(function, *args, **kwargs):
    """(exception type, message, warning messages) of a call."""
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        try:
            function(*args, **kwargs)
            error = None
        except Exception as exception:
            error = (type(exception), str(exception))
    return error, [str(w.message).replace("torch.utils", "autojit.utils") for w in seen]


@pytest.mark.parametrize("call", [
    lambda lib, m, x: m.checkpoint(lambda h: h * 2, x),
    lambda lib, m, x: m.checkpoint(lambda h, k: h * k, x, use_reentrant=True, k=2),
    lambda lib, m, x: m.checkpoint(lambda h: h * 2, x, use_reentrant=True, debug=True),
    lambda lib, m, x: m.checkpoint(lambda h: h * 2, x, use_reentrant=False,
                                   determinism_check="strict"),
    lambda lib, m, x: m.checkpoint(lambda h: h * 2, x.detach(), use_reentrant=True),
    lambda lib, m, x: m.checkpoint_sequential([lambda h: h * 2] * 2, 1, x),
    lambda lib, m, x: m.checkpoint_sequential([lambda h: h * 2] * 2, 1, x,
                                              use_reentrant=False, extra=1),
])
def test_warnings_and_errors_are_torchs(call):
    mine = caught(call, autojit, checkpointing, autojit.ones(2, requires_grad=True))
    theirs = caught(call, torch, torch_checkpoint, torch.ones(2, requires_grad=True))
    assert mine == theirs


def test_output_of_a_reentrant_checkpoint_without_grad_inputs_requires_none():
    with pytest.warns(UserWarning, match="None of the inputs have requires_grad=True"):
        out = checkpoint(lambda h: h * 2, autojit.ones(2), use_reentrant=True)
    assert not out.requires_grad


@pytest.mark.parametrize("second", [
    lambda h: h * 2,          # saves nothing: fewer saved tensors than the forward
    lambda h: h[:1].exp(),    # saves a tensor of another shape
])
def test_a_recomputation_that_differs_raises_torchs_error(second):
    def error(framework, module):
        calls = []

        def changing(h):
            calls.append(None)
            return h.exp() if len(calls) == 1 else second(h)
        out = module.checkpoint(changing, framework.ones(2, requires_grad=True),
                                use_reentrant=False)
        with pytest.raises(module.CheckpointError) as caught:
            out.sum().backward()
        # torch's message ends with a tip about its debug mode, which autojit does not have.
        return str(caught.value).split("\nTip:")[0].replace("torch", "autojit")

    assert error(autojit, checkpointing) == error(torch, torch_checkpoint)


# ---- compiled ---------------------------------------------------------------------------------

def training_step(checkpointed, dropout):
    autojit.manual_seed(0)
    layers = [nn.Sequential(nn.Linear(8, 8), nn.Tanh(), nn.Dropout(dropout)) for _ in range(3)]
    model = nn.Sequential(*layers)
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.1)

    def step(x):
        h = x
        for layer in layers:
            h = checkpoint(layer, h, use_reentrant=False) if checkpointed else layer(h)
        loss = (h * h).mean()
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
        return loss.detach()
    return model, step


@pytest.mark.parametrize("dropout", [0.0, 0.3])
def test_compiled_training_step_matches_eager(dropout):
    x = autojit.tensor(BATCH)
    results = []
    for compiled in (False, True):
        model, step = training_step(True, dropout)
        run = autojit.compile(step) if compiled else step
        autojit.manual_seed(1)
        losses = [run(x).item() for _ in range(3)]
        results.append((losses, [p.detach().numpy() for p in model.parameters()]))
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-6)
    assert_close(results[1][1], results[0][1])
    # Three matmuls forward, three recomputed (none merged with the forward's), three weight
    # gradients and two input gradients (the step's input requires none).
    graph = run.executables[0].graph
    assert sum(node.op.name == "matmul" for node in graph.nodes) == 11
    assert graph.recompute_ids


def residuals(checkpointed):
    """For a compiled function differentiated outside: the ops of the values its forward graph
    saves for the backward, its backward graph, and the gradients."""
    autojit.manual_seed(0)
    model = nn.Sequential(*[m for _ in range(4) for m in (nn.Linear(8, 8), nn.Tanh())])

    def forward(x):  # the first two layers are a checkpointed segment
        return checkpoint_sequential(model, 2, x, use_reentrant=False) if checkpointed \
            else model(x)
    compiled = autojit.compile(forward)
    x = autojit.tensor(BATCH, requires_grad=True)
    compiled(x).sum().backward()
    executable = compiled.executables[0]
    saved = sorted(entry.value.producer.op.name for entry in executable.graph.outputs
                   if entry.kind == "saved")
    return saved, executable.backward.graph, [p.grad.numpy() for p in model.parameters()]


def test_compiled_backward_recomputes_the_segment_instead_of_saving_it():
    saved, backward, grads = residuals(True)
    plain_saved, plain_backward, plain_grads = residuals(False)
    # Without checkpointing the forward saves the result and, for each layer whose tanh the
    # backward recomputes, its matmul. With the first two layers checkpointed, their matmuls
    # are recomputed by the backward graph from the input (two more matmuls there), and the
    # segment's output, which the third layer's gradient reads, is saved as it is.
    assert plain_saved == ["matmul", "matmul", "matmul", "tanh"]
    assert saved == ["matmul", "tanh", "tanh"]

    def matmuls(graph):
        return sum(node.op.name == "matmul" for node in graph.nodes)
    assert matmuls(backward) == matmuls(plain_backward) + 2
    assert_close(grads, plain_grads)


def _reentrant_refusals(lib, checkpoint):
    """What autograd.grad, backward(inputs=) and a plain backward give through a checkpoint, in
    `lib`: torch's reentrant checkpoint refuses the first two (test_checkpoint_valid_reset_on_
    error); after a refusal, a plain backward works."""
    a = lib.ones(2, 2, requires_grad=True)
    seen = []
    for reentrant in (True, False):
        for form in ("grad", "inputs", "backward"):
            out = checkpoint(lib.exp, a, use_reentrant=reentrant).sum()
            try:
                if form == "grad":
                    lib.autograd.grad(out, (a,))
                else:
                    out.backward(inputs=[a] if form == "inputs" else None)
                seen.append((reentrant, form, "ok"))
            except RuntimeError as error:
                seen.append((reentrant, form, str(error)))
    return seen


def test_a_reentrant_checkpoint_refuses_autograd_grad_as_torchs():
    ours = _reentrant_refusals(autojit, checkpoint)
    assert ours == _reentrant_refusals(torch, torch_checkpoint.checkpoint)
    assert "incompatible with .grad()" in ours[0][2]


def _recomputations(lib, checkpoint):
    """How often the checkpointed function runs: a recomputation serves one backward pass; a
    read of a saved value outside backward runs it again each time (torch's test_access_saved_
    tensor_twice_without_recomputation_works), and so does each backward of a retained graph."""
    count = [0]

    def body(a):
        count[0] += 1
        return lib.exp(a * a)

    a = lib.ones(5, requires_grad=True)
    out = checkpoint(body, a, use_reentrant=False)
    counts = [count[0]]
    out.grad_fn._saved_result  # noqa: B018
    out.grad_fn._saved_result  # noqa: B018
    counts.append(count[0])
    out.sum().backward(retain_graph=True)
    counts.append(count[0])
    out.sum().backward()
    counts.append(count[0])
    return counts, a.grad.tolist()


def test_a_recomputation_serves_one_backward_pass_as_torchs():
    ours, ours_grad = _recomputations(autojit, checkpoint)
    theirs, theirs_grad = _recomputations(torch, torch_checkpoint.checkpoint)
    assert ours == theirs == [1, 3, 4, 5]
    np.testing.assert_allclose(ours_grad, theirs_grad, rtol=1e-6)
