"""The `__torch_dispatch__` protocol of wrapper subclasses against torch's
(tensor/torch_dispatch.py, ops/torch_dispatch.py): the aten operators, and their arguments, a
subclass made with `Tensor._make_wrapper_subclass` is handed for each public call (indexing,
conversions, arithmetic, joining, sorting, views, in-place writes), what it answers from its
declared metadata without an operator, and its results; pickling, deepcopy and saving keep
the subclass and its attributes; and torch.tensor's reading of tensors inside lists.
"""

from __future__ import annotations

import copy
import io
import pickle

import pytest

import autojit
from autojit.tensor import torch_function

torch = pytest.importorskip("torch")


def _wrapper_class(lib, disabled):
    """A wrapper subclass holding a plain tensor in `held` (torch_geometric's pattern), whose
    handler logs each operator with its arguments and runs it on the inner tensors; int64
    2-D results are wrapped again."""
    log = []

    class Wrapped(lib.Tensor):
        @staticmethod
        def __new__(cls, data):
            out = lib.Tensor._make_wrapper_subclass(
                cls, data.size(), strides=data.stride(), dtype=data.dtype, device=data.device,
                requires_grad=False)
            out.held = data
            return out

        __torch_function__ = disabled

        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            def unwrap(value):
                if isinstance(value, Wrapped):
                    return value.held
                if isinstance(value, (list, tuple)):
                    return type(value)(unwrap(item) for item in value)
                return value

            log.append((str(func), tuple(type(arg).__name__ if isinstance(arg, lib.Tensor)
                                         else _plain(arg) for arg in args),
                        sorted((key, type(value).__name__ if isinstance(value, lib.Tensor)
                                else str(value).split(".")[-1])
                               for key, value in (kwargs or {}).items())))
            out = func(*unwrap(args), **{key: unwrap(value)
                                          for key, value in (kwargs or {}).items()})
            if isinstance(out, lib.Tensor) and out.dtype == lib.int64 and out.dim() == 2:
                return Wrapped(out)
            return out

    return Wrapped, log


def _plain(value):
    if isinstance(value, (list, tuple)):
        return [type(item).__name__ if hasattr(item, "dtype") else item for item in value]
    return value


def _result(value):
    if isinstance(value, (list, tuple)):
        return [_result(item) for item in value]
    if hasattr(value, "held"):
        return (type(value).__name__, value.held.tolist())
    if hasattr(value, "tolist"):
        return ("tensor", value.tolist())
    return value


_CASES = {
    "select": lambda lib, x, i: x[0],
    "slice": lambda lib, x, i: x[:, 1:3],
    "slice_step": lambda lib, x, i: x[:, ::2],
    "advanced": lambda lib, x, i: x[:, i],
    "ellipsis": lambda lib, x, i: x[..., 1],
    "none": lambda lib, x, i: x[None],
    "mask": lambda lib, x, i: x[x > 0],
    "long_is_self": lambda lib, x, i: x.long() is x,
    "to_int32": lambda lib, x, i: x.to(lib.int32),
    "float": lambda lib, x, i: x.float(),
    "to_copy_flag": lambda lib, x, i: x.to(lib.int64, False, True),
    "to_same": lambda lib, x, i: x.to("cpu", lib.int64) is x,
    "add_number": lambda lib, x, i: x + 1,
    "add": lambda lib, x, i: x + x,
    "radd": lambda lib, x, i: 1 + x,
    "sub": lambda lib, x, i: x - 1,
    "rsub": lambda lib, x, i: 1 - x,
    "eq": lambda lib, x, i: x == 1,
    "cat": lambda lib, x, i: lib.cat([x, x], 1).held,
    "clone": lambda lib, x, i: x.clone(),
    "flip": lambda lib, x, i: x.flip(0),
    "sort": lambda lib, x, i: x.sort(),
    "sort_descending": lambda lib, x, i: x.sort(dim=1, descending=True),
    "sort_stable": lambda lib, x, i: lib.sort(x, stable=True),
    "index_select": lambda lib, x, i: x.index_select(1, i),
    "unbind": lambda lib, x, i: x.unbind(),
    "max": lambda lib, x, i: x.max(),
    "sum": lambda lib, x, i: x.sum(),
    "narrow": lambda lib, x, i: x.narrow(1, 0, 2),
    "view": lambda lib, x, i: x.view(-1),
    "t": lambda lib, x, i: x.t(),
    "contiguous": lambda lib, x, i: x.contiguous() is x,
    "iterate": lambda lib, x, i: list(x),
    "detach": lambda lib, x, i: x.detach(),
    "data": lambda lib, x, i: x.data,
    "item": lambda lib, x, i: x[0, 1].item(),
    "metadata": lambda lib, x, i: (tuple(x.size()), x.stride(), str(x.dtype).split(".")[-1],
                                   str(x.device), x.dim(), x.numel(), tuple(x.shape),
                                   x.is_contiguous(), len(x), x.requires_grad),
    "mm": lambda lib, x, i: lib.mm(x.float(), lib.ones(4, 2)),
    "squeeze": lambda lib, x, i: x[:1].squeeze(),
    "squeeze_dim": lambda lib, x, i: x[:1].squeeze(0),
    "squeeze_dims": lambda lib, x, i: x[:1].squeeze((0, 1)),
}


def _run(lib, disabled):
    found = {}
    for name, case in _CASES.items():
        Wrapped, log = _wrapper_class(lib, disabled)
        x = Wrapped(lib.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]))
        result = case(lib, x, lib.tensor([0, 2]))
        found[name] = (log, _result(result))
    Wrapped, log = _wrapper_class(lib, disabled)
    x = Wrapped(lib.tensor([[0, 1, 1, 2], [1, 0, 2, 1]]))
    x[0, 0] = 5
    x[:, 1] = lib.tensor([7, 8])
    found["setitem"] = (log, x.held.tolist())
    Wrapped, log = _wrapper_class(lib, disabled)
    out = lib.empty(4, 2, dtype=lib.int64)
    y = Wrapped(lib.tensor([[0, 1], [1, 0]]))
    found["cat_out"] = (log, lib.cat([y, y], out=out) is out, out.tolist())
    return found


def test_operators_and_results_are_torchs():
    from autojit.tensor.torch_function import disabled_torch_function_impl

    try:
        mine = _run(autojit, disabled_torch_function_impl)
    finally:
        torch_function.deactivate()
    theirs = _run(torch, torch._C._disabled_torch_function_impl)
    assert mine.keys() == theirs.keys()
    for name in theirs:
        assert mine[name] == theirs[name], name


def _kept(lib, disabled, save, load):
    Wrapped, _ = _wrapper_class(lib, disabled)
    x = Wrapped(lib.tensor([[0, 1], [1, 0]]))
    x.note = {"sorted": True}
    copies = [pickle.loads(pickle.dumps(x)), copy.deepcopy(x)]
    buffer = io.BytesIO()
    save(x, buffer)
    buffer.seek(0)
    copies.append(load(buffer, weights_only=False))
    return [(type(made).__name__, made.held.tolist(), made.note, made.held is not x.held)
            for made in copies]


def test_pickle_deepcopy_and_save_keep_the_subclass():
    from autojit.tensor.torch_function import disabled_torch_function_impl

    # (the class is local, which pickle cannot find by name: registered here for the test)
    try:
        mine = _with_global_class(autojit, disabled_torch_function_impl,
                                  autojit.save, autojit.load)
    finally:
        torch_function.deactivate()
    theirs = _with_global_class(torch, torch._C._disabled_torch_function_impl, torch.save,
                                torch.load)
    assert mine == theirs == [("Wrapped", [[0, 1], [1, 0]], {"sorted": True}, True)] * 3


def _with_global_class(lib, disabled, save, load):
    import sys

    module = sys.modules[__name__]
    original = _wrapper_class

    def made(lib_, disabled_):
        Wrapped, log = original(lib_, disabled_)
        Wrapped.__qualname__ = "Wrapped"
        module.Wrapped = Wrapped
        return Wrapped, log

    try:
        module._wrapper_class = made
        return _kept(lib, disabled, save, load)
    finally:
        module._wrapper_class = original
        vars(module).pop("Wrapped", None)


def test_str_uses_a_subclass_repr():
    class Named(autojit.Tensor):
        def __repr__(self):
            return "Named!"

    class NamedTorch(torch.Tensor):
        def __repr__(self):
            return "Named!"

    try:
        assert str(autojit.ones(2).as_subclass(Named)) == "Named!"
    finally:
        torch_function.deactivate()
    assert str(torch.ones(2).as_subclass(NamedTorch)) == "Named!"


@pytest.mark.parametrize("make", [
    lambda lib: lib.tensor([lib.tensor([0, 1]), lib.tensor([1, 0])]),
    lambda lib: lib.tensor([lib.tensor([0.5, 1.0]), lib.tensor([1.0, 0.0])]),
    lambda lib: lib.tensor([[lib.tensor([1, 2])]]),
    lambda lib: lib.tensor([lib.tensor([1]), lib.tensor([2])]),
    lambda lib: lib.tensor([lib.tensor([[1]]), lib.tensor([[2.5]])]),
    lambda lib: lib.tensor([lib.tensor(1), lib.tensor(2.5)]),
])
def test_tensors_inside_lists_read_as_torch_reads_them(make):
    def outcome(lib):
        try:
            made = make(lib)
        except (TypeError, ValueError) as error:
            return type(error).__name__, str(error)
        return tuple(made.shape), str(made.dtype).split(".")[-1], made.tolist()

    assert outcome(autojit) == outcome(torch)


def test_refused_where_it_would_be_silently_wrong():
    """Requiring grad (autojit's autograd would not see the handler's operators) raises, and a
    compiled function given an instance runs eagerly with a warning."""
    from autojit.tensor.torch_function import disabled_torch_function_impl

    try:
        Wrapped, log = _wrapper_class(autojit, disabled_torch_function_impl)
        with pytest.raises(NotImplementedError, match="cannot require grad"):
            autojit.Tensor._make_wrapper_subclass(Wrapped, (2,), requires_grad=True)
        x = Wrapped(autojit.tensor([[0, 1], [1, 0]]))
        with pytest.raises(NotImplementedError, match="cannot require grad"):
            x.requires_grad_()
        compiled = autojit.compile(lambda index, values: values[index[0]] * 2)
        values = autojit.tensor([1.0, 2.0])
        with pytest.warns(autojit.CompileWarning, match="__torch_dispatch__"):
            assert compiled(x, values).tolist() == [2.0, 4.0]
        assert ("aten.select.int", ("Wrapped", 0, 0), []) in log
    finally:
        torch_function.deactivate()


def test_files_of_wrapper_subclasses_cross_between_torch_and_autojit():
    """A wrapper subclass's instance saved by one framework loads in the other (torch's
    _rebuild_wrapper_subclass and _rebuild_from_type_v2), with its attributes."""
    import sys

    from autojit.tensor.torch_function import disabled_torch_function_impl

    module = sys.modules[__name__]

    def make(lib, disabled):
        Wrapped, _ = _wrapper_class(lib, disabled)
        Wrapped.__qualname__ = "Wrapped"
        module.Wrapped = Wrapped
        x = Wrapped(lib.tensor([[0, 1, 2], [2, 1, 0]]))
        x.note = (1, "a")
        return x

    def read(made):
        return type(made).__name__, made.held.tolist(), made.note, tuple(made.shape)

    try:
        buffer = io.BytesIO()
        autojit.save(make(autojit, disabled_torch_function_impl), buffer)
        make(torch, torch._C._disabled_torch_function_impl)
        buffer.seek(0)
        theirs = read(torch.load(buffer, weights_only=False))
        buffer = io.BytesIO()
        torch.save(make(torch, torch._C._disabled_torch_function_impl), buffer)
        make(autojit, disabled_torch_function_impl)
        buffer.seek(0)
        mine = read(autojit.load(buffer, weights_only=False))
    finally:
        torch_function.deactivate()
        vars(module).pop("Wrapped", None)
    assert mine == theirs == ("Wrapped", [[0, 1, 2], [2, 1, 0]], (1, "a"), (2, 3))


def test_a_dispatching_subclass_holding_its_own_data_is_warned_of():
    class Holding(autojit.Tensor):
        @classmethod
        def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
            raise AssertionError("not called")

    try:
        with pytest.warns(UserWarning, match="calls for wrapper subclasses only"):
            x = autojit.ones(2).as_subclass(Holding)
        assert (x + 1).tolist() == [2.0, 2.0]
    finally:
        torch_function.deactivate()


_CAPTURED = """
import sys
if sys.argv[1] == "autojit":
    import autojit.drop_in
    autojit.drop_in.install()
import torch

seen = []


class Keys(torch.Tensor):  # a wrapper subclass, as torch_geometric's HashTensor
    @staticmethod
    def __new__(cls, data):
        out = torch.Tensor._make_wrapper_subclass(cls, data.size(), dtype=data.dtype)
        out.held = data
        return out

    __torch_function__ = torch._C._disabled_torch_function_impl

    @classmethod
    def __torch_dispatch__(cls, func, types, args=(), kwargs=None):
        seen.append(str(func))
        return func(*(a.held if isinstance(a, Keys) else a for a in args), **(kwargs or {}))


old_index_select = torch.index_select  # kept at import, before any instance exists


def index_select(input, dim, index):
    return old_index_select(input, dim, index)


torch.index_select = index_select
out = torch.index_select(Keys(torch.arange(5.0)), 0, torch.tensor([4, 1]))
print(out.tolist(), seen)
"""


@pytest.mark.parametrize("name", ["torch", "autojit"])
def test_a_function_kept_before_the_first_instance_dispatches(name):
    """Under the drop-in, a module that defines a wrapper subclass and then keeps one of
    torch's functions (torch_geometric's `_old_index_select = torch.index_select`) keeps the
    dispatching function: the class statement switches dispatch on, so that the kept
    function hands the subclass's instances to `__torch_dispatch__`, as torch's builtins do."""
    import os
    import subprocess
    import sys

    env = dict(os.environ, PYTHONPATH=os.path.join(os.path.dirname(os.path.dirname(
        os.path.abspath(__file__))), "src"))
    done = subprocess.run([sys.executable, "-c", _CAPTURED, name], capture_output=True,
                          text=True, env=env, check=True)
    assert done.stdout.split("\n")[0] == "[4.0, 1.0] ['aten.index_select.default']"
