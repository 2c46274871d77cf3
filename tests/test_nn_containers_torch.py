"""Containers and reshaping layers against torch: Sequential's slicing and editing (append,
extend, insert, pop, +, +=, *, *=) with the state_dict keys after each edit, ModuleList,
ModuleDict, ParameterList and ParameterDict methods, Identity, Flatten/Unflatten and
ChannelShuffle (values, gradients, errors, repr, a compiled step)."""

from __future__ import annotations

import numpy as np
import pytest

import autojit

torch = pytest.importorskip("torch")


def _layers(lib, count=3):
    return [lib.nn.Linear(2, 2) if index % 2 == 0 else lib.nn.ReLU() for index in range(count)]


def _keys(module) -> list:
    return [(key, tuple(value.shape)) for key, value in module.state_dict().items()]


EDITS = {
    "slice": lambda lib, seq: seq[1:],
    "step-slice": lambda lib, seq: seq[::2],
    "append": lambda lib, seq: seq.append(lib.nn.Linear(2, 3)),
    "extend": lambda lib, seq: seq.extend(_layers(lib, 2)),
    "insert": lambda lib, seq: seq.insert(1, lib.nn.Linear(2, 2)),
    "insert-negative": lambda lib, seq: seq.insert(-1, lib.nn.Linear(2, 2)),
    "pop": lambda lib, seq: (seq.pop(0), seq)[1],
    "delete-slice": lambda lib, seq: (seq.__delitem__(slice(0, 2)), seq)[1],
    "add": lambda lib, seq: seq + lib.nn.Sequential(lib.nn.Linear(2, 1)),
    "iadd": lambda lib, seq: seq.__iadd__(lib.nn.Sequential(lib.nn.Linear(2, 1))),
    "mul": lambda lib, seq: seq * 2,
    "rmul": lambda lib, seq: 2 * seq,
    "imul": lambda lib, seq: seq.__imul__(3),
}


@pytest.mark.parametrize("edit", list(EDITS))
def test_sequential_edits_match_torch(edit):
    results = []
    for lib in (torch, autojit):
        sequence = lib.nn.Sequential(*_layers(lib))
        edited = EDITS[edit](lib, sequence)
        edited = sequence if edited is None else edited
        assert type(edited).__name__ == "Sequential"
        results.append((_keys(edited), [type(m).__name__ for m in edited], repr(edited)))
    assert results[0] == results[1]


@pytest.mark.parametrize("bad", [0, -1, 1.5])
def test_sequential_multiplication_errors_as_torch(bad):
    failures = []
    for lib in (torch, autojit):
        for operation in (lambda s: s * bad, lambda s: s.__imul__(bad)):
            with pytest.raises((TypeError, ValueError)) as caught:
                operation(lib.nn.Sequential(lib.nn.ReLU()))
            failures.append((type(caught.value), str(caught.value).split(" for ")[0]))
    assert failures[:2] == failures[2:]


def test_module_list_and_dict_methods_match_torch():
    results = []
    for lib in (torch, autojit):
        modules = lib.nn.ModuleList(_layers(lib, 2))
        modules.insert(0, lib.nn.Linear(2, 4))
        modules.extend([lib.nn.Tanh()])
        modules += [lib.nn.Linear(1, 1)]
        popped = modules.pop(1)
        del modules[0]
        modules.append(lib.nn.Linear(3, 3))
        table = lib.nn.ModuleDict({"b": lib.nn.Linear(2, 2), "a": lib.nn.ReLU()})
        table.update([("c", lib.nn.Linear(1, 2))])
        table["d"] = lib.nn.Linear(2, 1)
        removed = table.pop("a")
        results.append((_keys(modules), type(popped).__name__, repr(modules), _keys(table),
                        list(table.keys()), type(removed).__name__, "c" in table, len(table),
                        [type(m).__name__ for m in table.values()]))
        table.clear()
        results.append(len(table))
    assert results[:2] == results[2:]


def test_parameter_containers_match_torch():
    results = []
    for lib in (torch, autojit):
        plist = lib.nn.ParameterList([lib.nn.Parameter(lib.ones(2)), lib.zeros(3)])
        plist.append(lib.nn.Parameter(lib.ones(1)))
        plist.extend([lib.nn.Parameter(lib.ones(4))])
        plist[0] = lib.nn.Parameter(lib.zeros(5))
        pdict = lib.nn.ParameterDict({"w": lib.nn.Parameter(lib.ones(2))})
        pdict.update({"b": lib.zeros(1)})
        default = pdict.setdefault("s", lib.nn.Parameter(lib.ones(3)))
        copied = pdict.copy()
        popped = pdict.pop("w")
        fresh = lib.nn.ParameterDict().fromkeys(["x", "y"], lib.nn.Parameter(lib.ones(1)))
        results.append((_keys(plist), [p.requires_grad for p in plist], _keys(pdict),
                        _keys(copied), tuple(popped.shape), tuple(default.shape),
                        sorted(fresh.keys()), list(pdict), [k for k, _ in pdict.items()]))
    assert results[0] == results[1]


def test_identity_ignores_extra_arguments():
    x = autojit.ones(2)
    assert autojit.nn.Identity(54, unused="argument")(x) is x
    assert repr(autojit.nn.Identity(3)) == repr(torch.nn.Identity(3))


def test_flatten_unflatten_match_torch():
    array = np.arange(24.0).reshape(2, 3, 4)
    for make in (lambda lib: lib.nn.Flatten(), lambda lib: lib.nn.Flatten(0, 1),
                 lambda lib: lib.nn.Unflatten(2, (2, 2)),
                 lambda lib: lib.nn.Unflatten(-1, (2, -1))):
        got, expected = make(autojit), make(torch)
        assert repr(got) == repr(expected)
        np.testing.assert_array_equal(got(autojit.tensor(array)).numpy(),
                                      expected(torch.tensor(array)).numpy())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_channel_shuffle_matches_torch(dtype):
    array = np.random.default_rng(0).standard_normal((2, 6, 3, 2))
    scale = np.random.default_rng(1).standard_normal((2, 6, 3, 2))
    outputs = []
    for lib in (autojit, torch):
        x = lib.tensor(array, dtype=getattr(lib, dtype), requires_grad=True)
        layer = lib.nn.ChannelShuffle(3)
        y = layer(x)
        (y * lib.tensor(scale, dtype=getattr(lib, dtype))).sum().backward()
        outputs.append((y.detach().numpy(), x.grad.numpy(), repr(layer)))
    np.testing.assert_array_equal(outputs[0][0], outputs[1][0])
    np.testing.assert_array_equal(outputs[0][1], outputs[1][1])
    assert outputs[0][2] == outputs[1][2] == "ChannelShuffle(groups=3)"


@pytest.mark.parametrize("shape, groups", [((2, 3, 4), 2), ((2, 4, 2), 0), ((2, 4), 2)])
def test_channel_shuffle_errors_as_torch(shape, groups):
    with pytest.raises(RuntimeError) as expected:
        torch.nn.ChannelShuffle(groups)(torch.ones(shape))
    with pytest.raises(RuntimeError) as got:
        autojit.nn.ChannelShuffle(groups)(autojit.ones(*shape))
    assert str(got.value) == str(expected.value)


def test_edited_sequential_trains_compiled_as_eager():
    def run(compiled):
        autojit.manual_seed(0)
        model = autojit.nn.Sequential(autojit.nn.Linear(4, 6), autojit.nn.ReLU())
        model.append(autojit.nn.Identity())
        model += autojit.nn.Sequential(autojit.nn.Unflatten(1, (2, 3)),
                                       autojit.nn.ChannelShuffle(2), autojit.nn.Flatten())
        model.insert(4, autojit.nn.Identity())
        head = model[:]
        optimizer = autojit.optim.SGD(head.parameters(), lr=0.1)
        x = autojit.tensor(np.random.default_rng(0).standard_normal((5, 4)),
                           dtype=autojit.float32)

        def step(x):
            loss = head(x).square().mean()
            loss.backward()
            optimizer.step()
            optimizer.zero_grad()
            return loss.detach()

        function = autojit.compile(step, fullgraph=True) if compiled else step
        return [function(x).item() for _ in range(3)]

    np.testing.assert_allclose(run(True), run(False), rtol=1e-6)
