"""The `__torch_function__` protocol against torch's (tensor/torch_function.py): a plain Tensor
subclass's results, the functions a logging subclass's handler sees, handlers that decline,
nn.Parameter opting out, autograd through subclass results, the switches that turn dispatch
off and torch.overrides' functions; and that nothing is installed until a subclass instance
overriding the protocol exists.
"""

from __future__ import annotations

import warnings

import pytest

import autojit
import autojit.nn
from autojit.drop_in import _C, overrides
from autojit.tensor import torch_function

torch = pytest.importorskip("torch")


def _subclasses(lib):
    """A plain subclass, a logging one (its handler records each function's name and the
    types), one whose handler declines, and a subclass of the logging one."""
    log = []

    class Plain(lib.Tensor):
        pass

    class Logging(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append((func.__name__, tuple(kind.__name__ for kind in types)))
            return super().__torch_function__(func, types, args, kwargs or {})

    class Declining(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    class Derived(Logging):
        pass

    return Plain, Logging, Declining, Derived, log


def _calls(lib, x, t):
    F = lib.nn.functional
    return [x + 1, 1 + x, lib.add(x, t), x.add(t), x * t, t * x, x[0], x.shape, x.sum(),
            F.relu(x), lib.cat([t, x]), F.linear(x, lib.ones(4, 3)), x.T, x.requires_grad,
            x.size(), x.view(3, 2), lib.linalg.norm(x), len(x), x.numel(), x.is_leaf,
            lib.where(x > 0, x, t), lib.special.expit(x), x.exp(), x.unbind(0), x.max(0)]


def _kinds(results, lib, subclass):
    """Each result's kind: the subclass, a plain tensor, or another value's type name (a
    tuple's items too)."""
    def kind(value):
        if isinstance(value, tuple) and not isinstance(value, lib.Size):
            return tuple(kind(item) for item in value)
        if type(value) is subclass:
            return "subclass"
        return "tensor" if type(value) is lib.Tensor else type(value).__name__
    return [kind(value) for value in results]


def test_nothing_is_installed_until_an_instance_of_an_overriding_subclass_exists():
    assert not torch_function.ACTIVE
    add = autojit.add

    class Plain(autojit.Tensor):
        pass

    autojit.nn.Parameter(autojit.ones(2)) + 1  # opts out: switches nothing on
    autojit.ones(2).as_subclass(autojit.nn.Parameter)
    assert not torch_function.ACTIVE and autojit.add is add and "add" not in vars(Plain)
    autojit.ones(2).as_subclass(Plain)
    assert torch_function.ACTIVE and autojit.add is not add


def test_plain_subclass_results_are_the_subclass_as_torchs():
    found = {}
    for lib in (autojit, torch):
        plain = _subclasses(lib)[0]
        x = lib.ones(2, 3).as_subclass(plain)
        found[lib] = _kinds(_calls(lib, x, lib.ones(2, 3)), lib, plain)
    assert found[autojit] == [kind.replace("DType", "dtype") if isinstance(kind, str) else kind
                              for kind in found[torch]]


def test_logging_subclass_sees_torchs_functions_in_torchs_order():
    found = {}
    for lib in (autojit, torch):
        _, logging, _, derived, log = _subclasses(lib)
        x = lib.ones(2, 3).as_subclass(logging)
        _calls(lib, x, lib.ones(2, 3))
        lib.add(x, lib.ones(2, 3).as_subclass(derived))  # the subclass's handler first
        t = lib.ones(2, 3)
        -x, +x, abs(x), 2 ** x, 2 / x, 1 - x, x == t, x != t, x // 2, 2 // x, 2 % x, x @ t.T
        y = x.clone()
        y += 1
        y *= 2
        y.__ipow__(2)  # (no in-place ** on a view torch refuses)
        found[lib] = log
    assert found[autojit] == found[torch]


def test_declining_handlers_raise_torchs_errors():
    cases = [lambda lib, n, m: n.add(1), lambda lib, n, m: lib.nn.functional.relu(n),
             lambda lib, n, m: n[0], lambda lib, n, m: lib.linalg.norm(n),
             lambda lib, n, m: n.T, lambda lib, n, m: lib.cat([lib.ones(2), n]),
             lambda lib, n, m: 1 + n, lambda lib, n, m: n @ lib.ones(2),
             lambda lib, n, m: n.shape, lambda lib, n, m: lib.add(m, n)]
    for case in cases:
        errors = []
        for lib in (autojit, torch):
            plain, _, declining, _, _ = _subclasses(lib)
            n = lib.ones(2).as_subclass(declining)
            m = lib.ones(2).as_subclass(plain)
            with pytest.raises(TypeError) as caught:
                case(lib, n, m)
            errors.append(str(caught.value).replace("autojit", "torch"))
        assert errors[0] == errors[1]


def test_parameter_opts_out_and_its_results_are_plain_tensors():
    for lib in (autojit, torch):
        p = lib.nn.Parameter(lib.ones(2))
        assert [type(value) for value in (p + 1, p.detach(), p[0], lib.sin(p))] == [lib.Tensor] * 4
    assert autojit.nn.Parameter.__torch_function__ is _C._disabled_torch_function_impl


def test_autograd_through_subclass_results_is_torchs():
    found = {}
    for lib in (autojit, torch):
        plain = _subclasses(lib)[0]
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = (x.as_subclass(plain) ** 3).sum()
        grad, = lib.autograd.grad(y, x, create_graph=True)
        second, = lib.autograd.grad(grad.sum(), x)
        w = lib.ones(2, requires_grad=True)
        z = (w * lib.tensor([1.0, 3.0]).as_subclass(plain)).sum()
        z.backward()
        found[lib] = [type(y) is plain, y.grad_fn is not None, grad.tolist(), second.tolist(),
                      type(w.grad) is lib.Tensor, w.grad.tolist(), type(z) is plain]
    assert found[autojit] == found[torch]


def _switches(lib, binary, functions):
    plain, logging, _, _, log = _subclasses(lib)
    m = lib.ones(2).as_subclass(plain)
    t = lib.ones(2)
    row = [functions.has_torch_function((m,)), functions.has_torch_function((t,)),
           functions.has_torch_function((lib.nn.Parameter(t),)), functions.is_tensor_like(m),
           binary._is_torch_function_enabled(), binary._has_torch_function_unary(m)]
    with binary.DisableTorchFunctionSubclass():
        row += [type(m + 1) is lib.Tensor, binary._is_torch_function_enabled(),
                functions.has_torch_function((m,))]
    with binary.DisableTorchFunction():
        row += [type(m + 1) is lib.Tensor, binary._is_torch_function_enabled()]
    row.append(type(m + 1) is plain)

    def f(a, b):
        if functions.has_torch_function((a, b)):
            return functions.handle_torch_function(f, (a, b), a, b)
        return a + b

    result = f(lib.ones(2).as_subclass(logging), t)
    return row + [log, type(result) is logging,
                  lib.Tensor.grad.__get__ in functions.get_default_nowrap_functions()]


def test_disabling_switches_and_overrides_functions_agree_with_torchs():
    assert _switches(autojit, _C, overrides) == _switches(torch, torch._C, torch.overrides)


def _method_handler(lib, binary):
    seen = []

    class Method(lib.Tensor):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            seen.append((type(self).__name__, func.__name__))
            with binary.DisableTorchFunctionSubclass():
                return func(*args, **(kwargs or {}))

    result = lib.ones(2).as_subclass(Method) + 1
    return seen, type(result) is lib.Tensor


def test_a_plain_method_handler_gets_the_instance():
    assert _method_handler(autojit, _C) == _method_handler(torch, torch._C)


def test_a_compiled_function_given_a_subclass_runs_eagerly_with_a_warning():
    _, logging, _, _, log = _subclasses(autojit)
    compiled = autojit.compile(lambda a, b: (a * b).sin() + a)
    x = autojit.tensor([0.5, 1.5]).as_subclass(logging)
    w = autojit.tensor([2.0, 3.0])
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = compiled(x, w)
    expected = (x * w).sin() + x
    assert type(result) is logging and result.tolist() == expected.tolist()
    assert any("Tensor subclass" in str(warning.message) for warning in caught)
    assert [name for name, _ in log][:3] == ["mul", "sin", "add"]


def _printed(lib):
    _, logging, _, _, log = _subclasses(lib)
    x = lib.ones(2).as_subclass(logging)
    printed = [str(x) == repr(x)]
    with pytest.raises(TypeError) as caught:
        f"{x[0]:.2f}"
    with pytest.raises(TypeError) as parameter:
        f"{lib.nn.Parameter(lib.tensor(1.0)):.2f}"
    return printed + [log, str(caught.value), str(parameter.value)]


def test_printing_a_subclass_reaches_repr_and_format_as_torchs():
    assert _printed(autojit) == _printed(torch)


def test_make_subclass_shares_storage_and_switches_the_protocol_on():
    found = {}
    for lib in (autojit, torch):
        plain = _subclasses(lib)[0]
        x = lib.ones(2)
        made = lib.Tensor._make_subclass(plain, x, True)
        x.add_(1)
        found[lib] = [type(made) is plain, made.requires_grad, made.is_leaf, made.tolist(),
                      type(made + 1) is plain]
    assert found[autojit] == found[torch]


def _mode_calls(lib, functions, binary):
    log = []

    class Logging(functions.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append((func.__name__, tuple(kind.__name__ for kind in types)))
            return func(*args, **(kwargs or {}))

    class Doubling(functions.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            result = func(*args, **(kwargs or {}))
            return result * 2 if func.__name__ == "add" else result

    plain = _subclasses(lib)[0]
    x = lib.ones(2, 3, requires_grad=True)
    with Logging():
        enabled = binary._is_torch_function_mode_enabled()
        y = x * 2 + 1
        z = lib.sin(y).sum()
        lib.nn.functional.relu(y)
        y.shape, y[0], lib.linalg.norm(y)
        z.backward()  # the backward pass's own ops are not reported
        subclass = lib.ones(2).as_subclass(plain) + 1
    with Doubling():
        doubled = (lib.ones(2) + 1).tolist()
    with Logging(), binary.DisableTorchFunctionSubclass():
        lib.ones(2) + 1
    with Logging(), binary.DisableTorchFunction():
        lib.ones(2) + 1
    return [enabled, binary._is_torch_function_mode_enabled(), log, x.grad.tolist(),
            type(subclass) is plain, doubled]


def test_torch_function_modes_see_every_call_as_torchs():
    assert _mode_calls(autojit, overrides, _C) == _mode_calls(torch, torch.overrides, torch._C)



def _operator_funcs(top) -> list:
    """Which Tensor attribute each operator hands __torch_function__, for a subclass on the left
    and for a tensor-like (not a Tensor) on the right."""
    import operator

    seen = []

    class Logged(top.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func)
            return super().__torch_function__(func, types, args, kwargs or {})

    class Like:
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func)
            return 0

    def named(func):
        return next((name for name in sorted(dir(top.Tensor))
                     if getattr(top.Tensor, name, None) is func), None)

    found = []
    subclass, plain = top.ones(2).as_subclass(Logged), top.ones(2)
    for op in (operator.add, operator.sub, operator.mul, operator.matmul, operator.truediv,
               operator.mod, operator.eq, operator.ne, operator.lt, operator.ge):
        for left, right in ((subclass, subclass), (plain, Like())):
            seen.clear()
            op(left, right)
            found.append((op.__name__, named(seen[0])))
    for name in ("__radd__", "__rmul__", "__rsub__", "__iadd__", "__imul__", "__itruediv__"):
        seen.clear()
        getattr(top.ones(2), name)(Like())
        found.append((name, named(seen[0])))
    return found


def test_operators_hand_torchs_functions_to_handlers():
    torch = pytest.importorskip("torch")
    try:
        assert _operator_funcs(autojit) == _operator_funcs(torch)
    finally:
        torch_function.deactivate()


_REPLACED = """
import sys
lib = __import__(sys.argv[1])
original = lib.index_select
calls = []


def index_select(input, dim, index):  # a library's own, as torch_geometric installs one
    calls.append(type(input).__name__)
    return original(input, dim, index)


lib.index_select = index_select


class Keyed(lib.Tensor):
    @classmethod
    def __torch_function__(cls, func, types, args=(), kwargs=None):
        return super().__torch_function__(func, types, args, kwargs or {})


keyed = lib.ones(3).as_subclass(Keyed)  # the first subclass instance switches dispatch on
lib.index_select(keyed, 0, lib.tensor([0, 2]))
print(lib.index_select is index_select, calls)
"""


@pytest.mark.parametrize("name", ["torch", "autojit"])
def test_a_library_function_put_in_the_namespace_is_left_alone(name):
    """A function a library puts in place of one of torch's is not wrapped for dispatch when
    the first subclass instance switches dispatch on: it stays the library's, and its calls
    reach it with the subclass, as under torch."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "src"))
    done = subprocess.run([sys.executable, "-c", _REPLACED, name], capture_output=True,
                          text=True, env=env, check=True)
    assert done.stdout.split("\n")[0] == "True ['Keyed']"


def test_a_subclass_prints_under_its_class_name():
    """torch prints an instance of a Tensor subclass from outside torch under its class's
    name, indented to it; Parameter keeps its own form."""
    texts = []
    for lib in (torch, autojit):
        class Keyed(lib.Tensor):
            pass

        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]]).as_subclass(Keyed)
        texts.append((repr(x), str(x[0]), repr(lib.nn.Parameter(lib.ones(2)))))
    assert texts[0] == texts[1]
