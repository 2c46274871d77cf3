"""Tensors inside a compiled function's list, tuple and dict arguments, and tensors captured
through a copy the trace made (a detached `grad_outputs`).

Both used to be captured constants: a tensor inside a container argument was guarded by
identity (a new batch each call traced again, until the recompile limit sent the function back
to eager), and one reached only through a detached alias, as `autograd.grad`'s grad_outputs
and `backward(gradient)` are, was not guarded at all, so later calls silently reused the first
call's values. Now container tensors are graph inputs read on every call
(compiler/nested_arguments.py), and an alias's owner is guarded (compiler/tracing.py).
Each program runs with torch, autojit eagerly and compiled (tests/guard_staleness.py).
"""

from __future__ import annotations

import dataclasses
import sys
import warnings
from collections import OrderedDict, namedtuple
from pathlib import Path

import numpy as np
import pytest

import autojit

sys.path.insert(0, str(Path(__file__).parent))

from guard_staleness import W, X, check, tensor  # noqa: E402

Batch = namedtuple("Batch", "inputs targets")


def _stats(function):
    return function.stats()


# ---- tensors used only by a backward: grad_outputs, backward(gradient), vjp cotangents --------

@pytest.mark.parametrize("wrap_cotangent", ["list", "tuple", "dict"])
def test_grad_outputs_inside_a_container_is_read_on_every_call(wrap_cotangent):
    def program(lib, wrap):
        weight = tensor(lib, W, requires_grad=True)

        def pull_back(cotangents):
            value = cotangents["v"] if wrap_cotangent == "dict" else cotangents[0]
            return lib.autograd.grad((weight * 3).tanh(), weight, grad_outputs=value)[0]

        f = wrap(pull_back)
        for scale in (0.0, 1.0, -2.0):
            v = tensor(lib, X * scale + 1)
            container = {"list": [v], "tuple": (v,), "dict": {"v": v}}[wrap_cotangent]
            yield f(container)

    compiled = check(program, [1])
    assert _stats(compiled[0]).traces == 1


def test_backward_with_a_gradient_from_a_tuple():
    def program(lib, wrap):
        weight = tensor(lib, W, requires_grad=True)

        def accumulate(gradients):
            (weight * weight).backward(gradients[0])
            result = weight.grad.clone()
            weight.grad = None
            return result

        f = wrap(accumulate)
        for scale in (1.0, 2.0, -0.5):
            yield f((tensor(lib, X * scale),))

    check(program, [1])


def test_a_global_rebound_and_read_only_as_grad_outputs():
    def program(lib, wrap):
        weight = tensor(lib, W, requires_grad=True)
        cotangent = {"v": tensor(lib, X)}  # stands for a module global rebound between calls

        def pull_back():
            return lib.autograd.grad(weight * 3, weight, grad_outputs=cotangent["v"])[0]

        f = wrap(pull_back)
        for scale in (1.0, 2.0, 3.0):
            cotangent["v"] = tensor(lib, X * scale)
            yield f()

    check(program)


COTANGENT = None


def test_a_module_global_rebound_and_detached():
    global COTANGENT

    def pull_back(x):
        return x * COTANGENT.detach()

    f = autojit.compile(pull_back)
    x = autojit.ones(2)
    for value in (1.0, 3.0, -2.0):
        COTANGENT = autojit.full((2,), value)
        assert f(x).tolist() == [value, value]


def test_a_vjp_function_called_with_tangents_in_a_tuple():
    from autojit.func import grad, vjp

    def vhp(primals, tangents):
        _, pull = vjp(grad(lambda x: x.sin().sum()), *primals)
        return pull(*tangents)[0]

    f = autojit.compile(vhp)
    x = autojit.tensor([0.5, 1.0, 2.0])
    for scale in (0.0, 1.0, 2.0):
        v = autojit.full((3,), scale)
        np.testing.assert_allclose(f((x,), (v,)).numpy(), vhp((x,), (v,)).numpy(), rtol=1e-6)
    assert f.stats().traces == 1


# ---- batches and parameter dicts stay compiled ------------------------------------------------

@pytest.mark.parametrize("form", ["list", "tuple", "namedtuple", "dict"])
def test_a_new_batch_in_a_container_every_step_keeps_one_executable(form):
    def program(lib, wrap):
        lib.manual_seed(0)
        model = lib.nn.Linear(3, 2)
        with lib.no_grad():
            model.weight.copy_(lib.tensor(W))
            model.bias.fill_(0.5)
        optimizer = lib.optim.SGD(model.parameters(), lr=0.1)

        def step(batch):
            if form == "dict":
                inputs, targets = batch["x"], batch["y"]
            else:
                inputs, targets = batch[0], batch[1]
            optimizer.zero_grad()
            loss = ((model(inputs) - targets) ** 2).mean()
            loss.backward()
            optimizer.step()
            return loss.detach()

        f = wrap(step)
        for index in range(6):
            inputs, targets = tensor(lib, X * (index + 1)), tensor(lib, X[:, :2] - index)
            batch = {"list": [inputs, targets], "tuple": (inputs, targets),
                     "namedtuple": Batch(inputs, targets),
                     "dict": {"x": inputs, "y": targets}}[form]
            yield f(batch)
        yield model.weight.detach()

    compiled = check(program, [1])
    stats = _stats(compiled[0])
    # The first call makes the optimizer's state, so it runs eagerly and the second
    # compiles (docs/notes/guards.md); no batch after that traces again.
    assert (stats.traces, stats.state_calls, stats.eager_calls, stats.compiled_calls,
            stats.recompiles) == (1, 1, 0, 5, 0), stats


def test_a_last_batch_of_another_size_traces_once_more_at_most():
    model = autojit.nn.Linear(4, 1)
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.05)
    data = autojit.utils.data.TensorDataset(autojit.randn(50, 4), autojit.randn(50, 1))
    loader = autojit.utils.data.DataLoader(data, batch_size=8)

    @autojit.compile
    def step(batch):
        x, y = batch
        optimizer.zero_grad()
        loss = autojit.nn.functional.mse_loss(model(x), y)
        loss.backward()
        optimizer.step()
        return loss

    for _ in range(3):
        for batch in loader:
            step(batch)
    stats = step.stats()
    # The first call (eager: the optimizer has no state yet), the second (compiled), and
    # the last batch of 2 (the batch dim becomes dynamic): two traces, then none.
    assert (stats.state_calls, stats.eager_calls) == (1, 0) and stats.traces <= 2 and \
        stats.recompiles <= 1, stats


def test_a_rebuilt_parameter_dict_for_per_sample_gradients():
    from autojit.func import functional_call, grad, vmap

    model = autojit.nn.Linear(3, 2)

    def loss(params, x, y):
        return ((functional_call(model, params, (x,)) - y) ** 2).sum()

    per_sample = autojit.compile(vmap(grad(loss), in_dims=(None, 0, 0)))
    x, y = autojit.randn(5, 3), autojit.randn(5, 2)
    for _ in range(3):
        params = {name: p.detach() for name, p in model.named_parameters()}
        got = per_sample(params, x, y)
        expected = vmap(grad(loss), in_dims=(None, 0, 0))(params, x, y)
        for name in got:
            np.testing.assert_allclose(got[name].numpy(), expected[name].numpy(), rtol=1e-5,
                                       atol=1e-6)
        with autojit.no_grad():
            for p in model.parameters():
                p.sub_(0.1)
    assert per_sample.stats().traces == 1


# ---- writes through containers ------------------------------------------------------------------

def test_a_tensor_in_a_dict_written_in_place_and_a_list_grad():
    def program(lib, wrap):
        def accumulate(state, x):
            state["total"].add_(x)
            loss = (state["weights"][0] * x).sum()
            loss.backward()
            return state["total"] * 1

        f = wrap(accumulate)
        state = {"total": lib.zeros(2, 3), "weights": [tensor(lib, W, requires_grad=True)]}
        for scale in (1.0, 2.0, 3.0):
            yield f(state, tensor(lib, X * scale))
            yield state["total"]
            yield state["weights"][0].grad

    # The second call finds a .grad the first made: traced again, as for a tensor argument.
    (compiled,) = check(program, [2])
    assert compiled.recompile_reasons == ["args[0]['weights'][0].grad is no longer None"]


def test_a_function_that_appends_to_its_list_argument():
    f = autojit.compile(lambda x, history: (history.append(1.0), x * len(history))[1])
    history = [autojit.tensor(X)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        results = [f(autojit.tensor(X), history).numpy()[0, 0] for _ in range(3)]
    assert len(history) == 4 and results == [0.5 * 2, 0.5 * 3, 0.5 * 4]
    assert history[0]._payload is not None  # the real tensor is back in its place


def test_a_function_that_stores_into_its_list_argument_runs_eagerly():
    def double_first(batch):
        batch[0] = batch[0] * 2
        return batch[0].sum()

    f = autojit.compile(double_first)
    batch = [autojit.ones(3)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert f(batch).item() == 6.0
    assert batch[0].tolist() == [2.0, 2.0, 2.0] and batch[0]._payload is not None


def test_a_structure_change_traces_again():
    def program(lib, wrap):
        f = wrap(lambda terms: sum(terms[1:], terms[0]))
        yield f([tensor(lib, X), tensor(lib, X)])
        yield f([tensor(lib, X), tensor(lib, X * 2), tensor(lib, X * 3)])
        yield f((tensor(lib, X), tensor(lib, X * 5)))
        yield f([tensor(lib, X * 4), tensor(lib, X)])

    check(program, [3])


# ---- results differentiated outside, through tensors with history of their own ----------------

@pytest.mark.parametrize("form", ["tuple", "captured"])
def test_an_input_with_history_is_differentiated_once(form):
    def program(lib, wrap):
        weight = tensor(lib, W, requires_grad=True)
        x = tensor(lib, X)
        held = {}

        def add_state(x, state):
            return x * weight + (state[0] if form == "tuple" else held["h"])

        f = wrap(add_state)
        for scale in (5.0, -1.0):
            weight.grad = None
            h = x * weight * scale  # history of its own, made before the call
            held["h"] = h
            f(x, (h,)).sum().backward()
            yield weight.grad

    check(program)


def test_a_result_fed_back_inside_a_tuple():
    def program(lib, wrap):
        weight = tensor(lib, W, requires_grad=True)
        x = tensor(lib, X)

        def cell(x, state):
            h, c = state
            return x * weight + h + c

        f = wrap(cell)
        y = f(x, (lib.zeros(2, 3), lib.zeros(2, 3)))
        for _ in range(3):
            y = f(x, (y, lib.zeros(2, 3)))
        y.sum().backward()
        yield y
        yield weight.grad

    check(program)


def test_a_one_key_dict_argument_with_another_key():
    f = autojit.compile(lambda inputs: inputs["v"] * 2)
    assert f({"v": autojit.ones(2)}).tolist() == [2.0, 2.0]
    with pytest.raises(KeyError):
        f({"w": autojit.ones(2)})  # as eager: the key is guarded, not only the length


# ---- arguments the function also reaches through its state ------------------------------------

@pytest.mark.parametrize("form", ["positional", "list", "dict"])
def test_parameters_passed_in_and_held_by_the_optimizer_are_updated(form):
    def program(lib, wrap):
        weight = tensor(lib, W, requires_grad=True)
        optimizer = lib.optim.Adam([weight], lr=0.1)

        def step(params, optimizer, x):
            p = {"positional": lambda: params, "list": lambda: params[0],
                 "dict": lambda: params["w"]}[form]()
            loss = (p * x).sum()
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            return loss.detach()

        f = wrap(step)
        params = {"positional": weight, "list": [weight], "dict": {"w": weight}}[form]
        for scale in (1.0, 2.0, -1.0, 0.5):
            yield f(params, optimizer, tensor(lib, X * scale))
            yield weight.detach()

    check(program)


def test_a_tensor_requiring_grad_passed_twice():
    def program(lib, wrap):
        weight = tensor(lib, W, requires_grad=True)

        def twice(a, b):
            (a * b).sum().backward()
            gradient = weight.grad.clone()
            weight.grad = None
            return gradient

        f = wrap(twice)
        for _ in range(2):
            yield f(weight, weight)

    check(program)


# ---- tensors in the attributes of plain objects: a cache passed to each call ----------------

class _Layer:
    def __init__(self, lib):
        self.keys = lib.zeros(2, 4, 3)
        self.count = lib.zeros((), dtype=lib.int64)
        self.scale = lib.ones(3)


class _Cache:
    def __init__(self, lib, layers=2):
        self.layers = [_Layer(lib) for _ in range(layers)]


def _decode(lib, weight, assign_scale=False):
    def step(x, cache, position):
        out = x
        for layer in cache.layers:
            layer.keys.index_copy_(1, position, out @ weight)
            layer.count.add_(1)
            if assign_scale:
                layer.scale = layer.scale * 1.5  # a new tensor put in the object
            else:
                layer.scale.mul_(1.5)
            out = layer.keys.sum(1, keepdim=True) * layer.scale + out
        return out, cache.layers[0].keys
    return step


@pytest.mark.parametrize("assign_scale", [False, True])
def test_a_new_cache_object_each_generation_keeps_one_executable(assign_scale):
    """A generation loop's cache (its layers' keys written in place at a position) is a new
    object with new tensors for each generation: read where the call finds them, as torch.compile
    makes them graph inputs, not one trace per cache."""
    def program(lib, wrap):
        weight = tensor(lib, W.T @ W)
        f = wrap(_decode(lib, weight, assign_scale))
        for generation in range(3):
            cache = _Cache(lib)
            for position in range(3):
                x = tensor(lib, X[:, None, :] * (generation + 1) - position)
                out, keys = f(x, cache, lib.tensor([position]))
                yield out
                yield keys is cache.layers[0].keys  # the cache's own tensor, not a copy
                yield cache.layers[1].keys, cache.layers[1].scale
                yield cache.layers[1].count.item()
                yield type(cache.layers[1].scale) is type(weight)  # no stand-in left there

    compiled = check(program, [1])
    assert _stats(compiled[0]).traces == 1


def test_a_cache_of_another_shape_traces_again_and_says_where():
    step = autojit.compile(_decode(autojit, autojit.tensor(W.T @ W)))
    x = autojit.tensor(X[:, None, :])
    step(x, _Cache(autojit), autojit.tensor([0]))
    cache = _Cache(autojit)
    cache.layers[1].keys = autojit.zeros(2, 5, 3)
    step(x, cache, autojit.tensor([0]))
    assert step.stats().traces == 2
    assert "args[1].layers[1].keys" in step._last_failure


def test_an_object_reached_twice_and_a_parameter_it_holds_stay_captured():
    """A tensor that requires grad in an object stays the object's own (its .grad and an
    optimizer see that tensor); an object held twice (a cycle) is guarded by identity, as
    before: each new one traces again, and every result is eager's."""
    def program(lib, wrap):
        class Holder:
            def __init__(self, scale):
                self.weight = tensor(lib, W * scale, requires_grad=True)
                self.offset = tensor(lib, X * scale)
                self.me = self

        def loss(holder, x):
            value = ((x * holder.weight + holder.me.offset) ** 2).sum()
            value.backward()
            return value.detach()

        f = wrap(loss)
        for scale in (1.0, 2.0):
            holder = Holder(scale)
            for step in range(2):
                yield f(holder, tensor(lib, X + step))
                yield holder.weight.grad

    compiled = check(program)
    assert _stats(compiled[0]).traces == 4  # per holder: before and after its first .grad


def test_modules_and_optimizers_are_not_looked_into():
    from autojit.compiler.nested_arguments import flatten

    model = autojit.nn.BatchNorm1d(3)
    optimizer = autojit.optim.SGD(model.parameters(), lr=0.1)
    args = (model, optimizer, autojit.ones(2, 3))
    assert flatten(args) is args
    holder = type("Holder", (), {})()
    holder.state = autojit.ones(3)
    flat = flatten((holder,))
    assert len(flat) == 2 and flat[1] is holder.state


# ---- objects returned as they are: each call's own, not the first call's ---------------------

@pytest.mark.parametrize("form", ["dict", "list", "object"])
def test_a_returned_argument_is_this_calls_argument(form):
    """`return batch` (or a cache object a decoding step hands back): the traced call's
    object was returned on every later call, so the next step read the first call's cache."""
    def program(lib, wrap):
        def step(holder):
            if form == "object":
                return holder.value * 2, holder
            value = holder["v"] if form == "dict" else holder[0]
            return value * 2, holder

        f = wrap(step)
        holder_class = type("Holder", (), {})
        for scale in (1.0, 2.0, 3.0):
            value = tensor(lib, X * scale)
            if form == "object":
                holder = holder_class()
                holder.value = value
            else:
                holder = {"v": value} if form == "dict" else [value]
            doubled, returned = f(holder)
            yield doubled
            yield returned is holder

    compiled = check(program, [1])
    assert _stats(compiled[0]).traces == 1


RETURNED = None


def test_a_returned_global_rebound_between_calls_is_the_current_one():
    global RETURNED
    shared = autojit.ones(2)
    RETURNED = [shared]
    f = autojit.compile(lambda: (RETURNED[0] * 2, RETURNED))
    f()
    RETURNED = [shared]  # another list holding the same tensor
    doubled, returned = f()
    assert returned is RETURNED and doubled.tolist() == [2.0, 2.0]

    class State:
        pass

    state = State()
    state.items = [shared]
    g = autojit.compile(lambda: state.items)
    g()
    state.items = list(state.items)
    assert g() is state.items


def test_a_long_list_in_an_argument_object_is_not_walked_on_every_call():
    from autojit.compiler import nested_arguments

    class State:
        pass

    state = State()
    state.history = [autojit.ones(1)] + [0.5] * 100_000  # past the budget: not looked into
    state.table = autojit.ones(3)
    flat = nested_arguments.flatten((state,))
    assert len(flat) == 2 and flat[1] is state.table  # the history's tensor stays captured
    state.history = state.history[:10]
    flat = nested_arguments.flatten((state,))
    assert len(flat) == 3 and flat[1] is state.history[0] and flat[2] is state.table


class _ModelOutput(OrderedDict):
    """transformers' ModelOutput in short: a dataclass and an OrderedDict whose items and
    attributes mirror each other."""

    def __post_init__(self):
        for field in dataclasses.fields(self):
            if getattr(self, field.name) is not None:
                self[field.name] = getattr(self, field.name)

    def __setitem__(self, key, value):
        super().__setitem__(key, value)
        super().__setattr__(key, value)

    def __setattr__(self, name, value):
        if name in self.keys() and value is not None:
            super().__setitem__(name, value)
        super().__setattr__(name, value)

    def __getitem__(self, key):
        if isinstance(key, str):
            return dict(self.items())[key]
        return tuple(self[name] for name in self.keys())[key]


@dataclasses.dataclass
class _EncoderOutput(_ModelOutput):
    last_hidden_state: object = None
    attentions: object = None


def test_an_encoder_output_object_each_call_keeps_one_executable():
    """An encoder-decoder's generation hands the decoder step the encoder's output, a
    ModelOutput (a dataclass dict), new for each generation: its tensors are read where the
    call finds them, as torch.compile does, not guarded by identity (T5's static-cache
    generation traced again on each)."""
    def program(lib, wrap):
        weight = tensor(lib, W.T @ W)

        def step(x, encoder_outputs):
            memory = encoder_outputs.last_hidden_state
            return (x @ weight + memory).tanh().sum(0), encoder_outputs["last_hidden_state"] * 2

        f = wrap(step)
        for call in range(3):
            encoder_outputs = _EncoderOutput(last_hidden_state=tensor(lib, X * (call + 1)))
            yield f(tensor(lib, X - call), encoder_outputs)
            yield encoder_outputs.last_hidden_state is encoder_outputs["last_hidden_state"]
            yield type(encoder_outputs.last_hidden_state) is type(weight)

    compiled = check(program, [1])
    assert _stats(compiled[0]).traces == 1
