"""What kornia's own tests needed of autojit, against torch: devices of torch's other types
(`torch.device("mps")`, asked for and compared, never holding a tensor), the autocast settings
of those types, `torch._assert_async`, `torch.SymInt` and `torch.SymFloat` for isinstance
checks, and `torch._C._are_functorch_transforms_active`.
"""

from __future__ import annotations

import warnings

import pytest

import autojit as aj
from autojit.drop_in import _C as autojit_C

torch = pytest.importorskip("torch")

OTHER_TYPES = ["mps", "xpu", "hpu", "ipu", "xla", "mtia", "maia", "privateuseone"]


def _outcome(call):
    """What a call gives: its value, or its error's type and message (torch's name for the
    library replaced by autojit's)."""
    try:
        return "value", call()
    except Exception as error:  # noqa: BLE001 - compared, not handled
        return type(error).__name__, str(error).replace("torch.", "autojit.")


@pytest.mark.parametrize("text", ["mps", "mps:0", "xpu:1", "xla", "hpu", "lazy", "vulkan",
                                  "meta", "nonsense", "cuda:2"])
def test_device_types_as_torch(text):
    def describe(lib):
        made = lib.device(text)
        return repr(made), str(made), made.type, made.index, made == lib.device(text), \
            made == lib.device("cpu")

    assert _outcome(lambda: describe(aj)) == _outcome(lambda: describe(torch))


@pytest.mark.parametrize("text", ["mps", "xla"])
def test_no_tensor_on_other_device_types(text):
    assert _outcome(lambda: aj.zeros(2).to(text)) == _outcome(lambda: torch.zeros(2).to(text))
    for lib in (torch, aj):  # torch: NotImplementedError (a RuntimeError) for some
        with pytest.raises(RuntimeError):
            lib.zeros(2, device=text)
        with pytest.raises(RuntimeError):
            lib.ones(2).to(lib.device(text))


@pytest.mark.parametrize("device_type", OTHER_TYPES + ["meta", "lazy"])
def test_autocast_settings_of_other_device_types(device_type):
    def settings(lib):
        return str(lib.is_autocast_enabled(device_type)), lib.amp.is_autocast_available(
            device_type)

    mine, theirs = _outcome(lambda: settings(aj)), _outcome(lambda: settings(torch))
    if theirs[0] == "value":
        assert mine == theirs
        assert str(aj.get_autocast_dtype(device_type)).split(".")[-1] == \
            str(torch.get_autocast_dtype(device_type)).split(".")[-1]
    else:  # meta and lazy have no autocast: both refuse
        assert mine[0] == theirs[0] == "RuntimeError"


@pytest.mark.parametrize("device_type", ["mps", "xpu", "hpu", "privateuseone"])
def test_entering_autocast_of_other_device_types(device_type):
    def run(lib, dtype=None):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.autocast(device_type, dtype=dtype):
                inside = lib.is_autocast_enabled(device_type), lib.is_autocast_enabled("cpu")
                product = lib.ones(2, 2) @ lib.ones(2, 2)  # a CPU tensor: not cast
        return [str(w.message).replace("torch.", "autojit.") for w in caught], inside, \
            str(product.dtype).split(".")[-1], lib.is_autocast_enabled(device_type)

    assert _outcome(lambda: run(aj)) == _outcome(lambda: run(torch))
    assert _outcome(lambda: run(aj, aj.float32)) == _outcome(lambda: run(torch, torch.float32))


ASSERT_CASES = [
    ("true", lambda L: (L.tensor(True),)),
    ("false", lambda L: (L.tensor(False),)),
    ("zero", lambda L: (L.tensor(0.0),)),
    ("nan", lambda L: (L.tensor(float("nan")),)),
    ("two", lambda L: (L.tensor([1, 1]),)),
    ("empty", lambda L: (L.tensor([]),)),
    ("message", lambda L: (L.tensor(False), "boom")),
    ("message_ok", lambda L: (L.tensor(2), "boom")),
    ("message_two", lambda L: (L.tensor([True, False]), "boom")),
    ("bool", lambda L: (True,)),
]


@pytest.mark.parametrize("make", [case for _, case in ASSERT_CASES],
                         ids=[name for name, _ in ASSERT_CASES])
def test_assert_async_as_torch(make):
    assert _outcome(lambda: aj._assert_async(*make(aj))) == \
        _outcome(lambda: torch._assert_async(*make(torch)))


def test_assert_async_compiled():
    compiled = aj.compile(lambda x: (aj._assert_async((x > 0).all(), "negative"), x * 2)[1])
    assert compiled(aj.ones(3)).tolist() == [2.0, 2.0, 2.0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the failing call's graph break
        with pytest.raises(RuntimeError, match="negative"):
            compiled(-aj.ones(3))


def test_symbolic_scalar_types_as_torch():
    for lib in (aj, torch):
        assert isinstance(lib.SymInt, type) and isinstance(lib.SymFloat, type)
        assert not isinstance(3, lib.SymInt) and not isinstance(3.0, lib.SymFloat)
        assert isinstance(3, (int, lib.SymInt))


def test_functorch_transforms_active_as_torch():
    def seen(lib, active):
        found = []

        def f(x):
            found.append(active())
            return (x * x).sum()

        found.append(active())
        lib.func.vjp(f, lib.ones(2))  # (torch.func.grad's first call takes seconds)
        lib.func.vmap(f)(lib.ones(3, 2))
        return found

    assert seen(aj, autojit_C._are_functorch_transforms_active) == \
        seen(torch, torch._C._are_functorch_transforms_active) == [False, True, True]


NUMBER_CALLS = [
    ("mul", (5, 3), {}), ("multiply", (2.5, 2), {}), ("mul", (True, 3), {}),
    ("mul", (1j, 2), {}), ("add", (5, 3), {}), ("add", (5, 3), {"alpha": 2}),
    ("add", (2**40, 3), {}), ("sub", (5, 3.5), {"alpha": 2}), ("subtract", (5, 3), {}),
    ("sub", (True, 1), {}), ("div", (5, 3), {}), ("true_divide", (5, 0), {}),
    ("divide", (5, 3), {"rounding_mode": "floor"}), ("div", (-5.0, 3), {"rounding_mode": "trunc"}),
    ("floor_divide", (-5, 2), {}),
    ("maximum", (5, 3), {}), ("remainder", (5, 3), {}), ("pow", (5, 3), {}), ("eq", (5, 3), {}),
]


@pytest.mark.parametrize(("name", "args", "kwargs"), NUMBER_CALLS,
                         ids=[f"{name}-{args}-{kwargs}" for name, args, kwargs in NUMBER_CALLS])
def test_binary_functions_of_two_numbers_as_torch(name, args, kwargs):
    def call(lib):
        result = getattr(lib, name)(*args, **kwargs)
        return result.tolist(), str(result.dtype).split(".")[-1], result.dim()

    mine, theirs = _outcome(lambda: call(aj)), _outcome(lambda: call(torch))
    assert mine[0] == theirs[0]
    if theirs[0] in ("value", "RuntimeError"):
        assert mine == theirs


def test_is_legacy_batchedtensor_as_torch():
    from autojit.drop_in import _C_functorch

    def seen(lib, check):
        inside = lib.func.vmap(lambda x: lib.tensor(check(x)))(lib.ones(3, 2))
        return check(lib.ones(2)), inside.tolist(), _outcome(lambda: check(3))[0]

    assert seen(aj, _C_functorch.is_legacy_batchedtensor) == \
        seen(torch, torch._C._functorch.is_legacy_batchedtensor) == \
        (False, [False, False, False], "TypeError")


CHECK_CASES = [
    ("_check", (True,)), ("_check", (False,)), ("_check", (False, lambda: "boom")),
    ("_check", (False, lambda: 42)), ("_check", (False, "not callable")), ("_check", (1,)),
    ("_check", ("tensor",)), ("_check_index", (False, lambda: "m")),
    ("_check_value", (False, lambda: "m")), ("_check_type", (False, lambda: "m")),
    ("_check_not_implemented", (False, lambda: "m")), ("_check_value", (True, lambda: "m")),
    ("_check_tensor_all", ("all_false",)), ("_check_tensor_all", ("all_true",)),
    ("_check_tensor_all", ("ints",)), ("_check_tensor_all", (True,)),
    ("_check_tensor_all", ("all_false", lambda: "all")),
]


@pytest.mark.parametrize(("name", "args"), CHECK_CASES,
                         ids=[f"{name}-{index}" for index, (name, _) in enumerate(CHECK_CASES)])
def test_checks_as_torch(name, args):
    def call(lib):
        made = {"tensor": lib.tensor(True), "all_false": lib.tensor([True, False]),
                "all_true": lib.tensor([True, True]), "ints": lib.tensor([1, 1])}
        return getattr(lib, name)(*(made.get(a, a) if isinstance(a, str) and a in made else a
                                    for a in args))

    assert _outcome(lambda: call(aj)) == _outcome(lambda: call(torch))


def test_check_with_and_check_is_size_as_torch():
    for lib in (aj, torch):
        with pytest.raises(AssertionError, match="subclass of Exception but not Warning"):
            lib._check_with(Warning, False, None)
        with pytest.raises(KeyError, match="k"):
            lib._check_with(KeyError, False, lambda: "k")
        with pytest.warns(FutureWarning, match="_check_is_size will be removed"):
            lib._check_is_size(3)
        with pytest.warns(FutureWarning), pytest.raises(RuntimeError, match="Expected cond"):
            lib._check_is_size(5, max=3)


INDEX_KEYS = [
    lambda: ((0, 1), (0, 1), slice(1, 2), slice(1, 3)),
    lambda: ((0, 1), 0),
    lambda: (slice(None), (1, 0)),
    lambda: (0, (0, 1)),
    lambda: ((1, 0),),
    lambda: ((),),
    lambda: (0, ()),
    lambda: (((0, 1), (1, 0)), 0),
]


@pytest.mark.parametrize("make_key", INDEX_KEYS, ids=[str(make()) for make in INDEX_KEYS])
def test_tuples_inside_an_index_are_sequences_as_torch(make_key):
    def run(lib):
        x = lib.arange(48.0).reshape(2, 2, 3, 4).requires_grad_()
        got = x[make_key()]
        got.sum().backward()
        y = lib.zeros(2, 2, 3, 4)
        y[make_key()] = 1.0
        return got.tolist(), x.grad.tolist(), y.tolist()

    assert run(aj) == run(torch)
