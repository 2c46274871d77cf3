"""What BoTorch's own tests needed of autojit, against torch: `nn.Module` deriving from object
alone (BoTorch's tests compare an input transform's `__mro__` with `(..., Module, ABC,
object)`), with its methods still Module's own.
"""

from __future__ import annotations

import abc

import pytest

import autojit as aj

torch = pytest.importorskip("torch")


def _names(classes) -> list:
    return [cls.__name__ for cls in classes]


def test_module_hierarchy_as_torch():
    def hierarchy(lib):
        class Transform(lib.nn.Module, abc.ABC):
            pass

        return [_names(lib.nn.Module.__mro__), _names(lib.nn.Module.__bases__),
                _names(lib.nn.Linear.__mro__), _names(Transform.__mro__)]

    assert hierarchy(aj) == hierarchy(torch)


@pytest.mark.parametrize("name", ["to", "state_dict", "load_state_dict", "double", "_apply",
                                  "register_full_backward_hook", "compile", "to_empty",
                                  "share_memory", "cpu", "type"])
def test_module_methods_are_modules_own(name):
    def facts(lib):
        method = getattr(lib.nn.Module, name)
        bound = getattr(lib.nn.Linear(2, 3), name)
        return [name in vars(lib.nn.Module), method.__qualname__,
                repr(bound).split(" of ")[0]]

    assert facts(aj) == facts(torch)


def test_module_methods_still_work():
    def run(lib):
        lib.manual_seed(0)
        model = lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.Tanh(), lib.nn.Linear(3, 1))
        state = model.state_dict()
        model.double()
        seen = []
        model[0].register_full_backward_hook(lambda module, gin, gout: seen.append(
            [tuple(g.shape) for g in gout]))
        out = model(lib.ones(4, 2, dtype=lib.float64)).sum()
        out.backward()
        result = model.load_state_dict(state)
        return [list(state), str(model[0].weight.dtype).split(".")[-1], seen,
                round(out.item(), 10), repr(result)]

    assert run(aj) == run(torch)
