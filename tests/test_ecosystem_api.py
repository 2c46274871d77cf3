"""The call forms and behaviours of torch that libraries built on torch rely on, against torch
itself: operators that defer to another operand's reflected method, torch's deprecated call
forms (`add_(alpha, other)`, `addcmul(input, value, t1, t2)`, ...), a `.grad` made with
create_graph that zero_grad can reset in place, and the private helpers libraries call
(`nn.utils.stateless._reparametrize_module`, `torch._standard_gamma`).

The libraries' own suites run under the drop-in in tests/test_ecosystem.py; these are the
behaviours behind their failures, checked one by one.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from torch_compare import same_as_torch

import autojit
from autojit.tensor import once

torch = pytest.importorskip("torch")

_rng = np.random.default_rng(5)
VECTOR = _rng.uniform(0.5, 1.5, (3,))
MATRIX = _rng.uniform(0.5, 1.5, (3, 3))
BATCH = _rng.uniform(0.5, 1.5, (2, 3, 3))


# ---- operators defer to the other operand -----------------------------------------------------

class Nested(tuple):
    """A tuple of tensors with elementwise arithmetic, as zuko's NestedTensor."""

    def __mul__(self, other):
        return Nested(x * other for x in self)

    __rmul__ = __mul__

    def __radd__(self, other):
        return Nested(other + x for x in self)

    def __rsub__(self, other):
        return Nested(other - x for x in self)

    def __rmatmul__(self, other):
        return Nested(other @ x for x in self)

    def __eq__(self, other):
        return "nested eq"

    __hash__ = tuple.__hash__


@pytest.mark.parametrize("operator", [
    lambda x, n: x * n, lambda x, n: x + n, lambda x, n: x - n, lambda x, n: x @ n,
    lambda x, n: x == n,
])
def test_operators_defer_to_the_reflected_method(operator):
    def run(lib):
        x = lib.tensor(MATRIX)
        result = operator(x, Nested((lib.tensor(MATRIX), lib.tensor(MATRIX))))
        return result if isinstance(result, str) else [item.tolist() for item in result]

    mine, theirs = run(autojit), run(torch)
    if isinstance(theirs, str):
        assert mine == theirs
    else:  # a product's last bit depends on the BLAS kernel each library picks
        np.testing.assert_allclose(mine, theirs, rtol=1e-14)


@pytest.mark.parametrize("operator", [
    lambda x: x + "a", lambda x: x * object(), lambda x: x @ "a", lambda x: x < "a",
    lambda x: x ** "a", lambda x: "a" - x, lambda x: x & "a", lambda x: x + None,
    lambda x: x + [1.0, 2.0], lambda x: x == object(),
])
def test_operators_refuse_unknown_operands_as_torch(operator):
    same_as_torch(lambda lib, x: operator(x), VECTOR, grad=False)


def test_inplace_operator_defers():
    for lib in (torch, autojit):
        x = lib.ones(2)
        x += Nested((lib.ones(2),))
        assert isinstance(x, Nested)


# ---- torch's deprecated call forms ------------------------------------------------------------

DEPRECATED = {
    "x.add(2, y)": lambda L, x, y, m, b: x.add(2, y),
    "add(x, 2, y)": lambda L, x, y, m, b: L.add(x, 2, y),
    "x.add_(2, y)": lambda L, x, y, m, b: x.clone().add_(2, y),
    "x.sub(2, y)": lambda L, x, y, m, b: x.sub(2, y),
    "sub(x, 2, y)": lambda L, x, y, m, b: L.sub(x, 2, y),
    "x.sub_(2, y)": lambda L, x, y, m, b: x.clone().sub_(2, y),
    "x.addcmul(2, y, y)": lambda L, x, y, m, b: x.addcmul(2, y, x),
    "addcmul(x, 2, y, y)": lambda L, x, y, m, b: L.addcmul(x, 2, y, x),
    "x.addcmul_(2, y, y)": lambda L, x, y, m, b: x.clone().addcmul_(0.5, y, x),
    "x.addcdiv(2, y, y)": lambda L, x, y, m, b: x.addcdiv(2, y, x),
    "addcdiv(x, 2, y, y)": lambda L, x, y, m, b: L.addcdiv(x, 2, y, x),
    "x.addcdiv_(2, y, y)": lambda L, x, y, m, b: x.clone().addcdiv_(-3, y, x),
    "addmm(2, m, 3, m, m)": lambda L, x, y, m, b: L.addmm(2, m, 3, m, m),
    "addmm(2, m, m, m)": lambda L, x, y, m, b: L.addmm(2, m, m, m),
    "m.addmm(2, 3, m, m)": lambda L, x, y, m, b: m.addmm(2, 3, m, m),
    "m.addmm(2, m, m)": lambda L, x, y, m, b: m.addmm(2, m, m),
    "m.addmm_(2, 3, m, m)": lambda L, x, y, m, b: m.clone().addmm_(2, 3, m, m),
    "addmv(2, x, 3, m, y)": lambda L, x, y, m, b: L.addmv(2, x, 3, m, y),
    "x.addmv(2, m, y)": lambda L, x, y, m, b: x.addmv(2, m, y),
    "addr(2, m, 3, x, y)": lambda L, x, y, m, b: L.addr(2, m, 3, x, y),
    "m.addr_(2, 3, x, y)": lambda L, x, y, m, b: m.clone().addr_(2, 3, x, y),
    "addbmm(2, m, 3, b, b)": lambda L, x, y, m, b: L.addbmm(2, m, 3, b, b),
    "m.addbmm(2, b, b)": lambda L, x, y, m, b: m.addbmm(2, b, b),
    "baddbmm(2, b, 3, b, b)": lambda L, x, y, m, b: L.baddbmm(2, b, 3, b, b),
    "b.baddbmm_(2, 3, b, b)": lambda L, x, y, m, b: b.clone().baddbmm_(2, 3, b, b),
    "add(x, 2, y, out=)": lambda L, x, y, m, b: L.add(x.detach(), 2, y.detach(),
                                                       out=L.empty(3, dtype=L.float64)),
}


@pytest.mark.parametrize("name", DEPRECATED)
def test_deprecated_forms(name):
    """Values and gradients as torch's, for every deprecated form its parser accepts."""
    function = DEPRECATED[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        same_as_torch(lambda L, x, y, m, b: function(L, x, y, m, b),
                      VECTOR, VECTOR[::-1].copy(), MATRIX, BATCH)


@pytest.mark.parametrize("call, message", [
    (lambda: autojit.ones(2).add_(2, autojit.ones(2)),
     "This overload of add_ is deprecated:\n\tadd_(Number alpha, Tensor other)\nConsider using "
     "one of the following signatures instead:\n\tadd_(Tensor other, *, Number alpha = 1)"),
    (lambda: autojit.addcmul(autojit.ones(2), 2, autojit.ones(2), autojit.ones(2)),
     "This overload of addcmul is deprecated:\n\taddcmul(Tensor input, Number value, Tensor "
     "tensor1, Tensor tensor2, *, Tensor out = None)\nConsider using one of the following "
     "signatures instead:\n\taddcmul(Tensor input, Tensor tensor1, Tensor tensor2, *, Number "
     "value = 1, Tensor out = None)"),
    (lambda: autojit.addmm(2, autojit.ones(2, 2), autojit.ones(2, 2), autojit.ones(2, 2)),
     "This overload of addmm is deprecated:\n\taddmm(Number beta, Tensor input, Tensor mat1, "
     "Tensor mat2, *, Tensor out = None)\nConsider using one of the following signatures "
     "instead:\n\taddmm(Tensor input, Tensor mat1, Tensor mat2, *, Number beta = 1, Number "
     "alpha = 1, Tensor out = None)\n\taddmm(Tensor input, Tensor mat1, Tensor mat2, "
     "torch.dtype out_dtype, *, Number beta = 1, Number alpha = 1, Tensor out = None)"),
])
def test_deprecated_form_warns_once_with_torchs_text(call, message, monkeypatch):
    """torch's UserWarning (its text, taken from torch 2.13), at the first deprecated call of
    the process only."""
    monkeypatch.setattr(once, "given", set())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        call()
        call()
    assert [str(w.message) for w in caught] == [message]
    assert caught[0].category is UserWarning and caught[0].filename == __file__


def test_current_forms_are_not_deprecated(monkeypatch):
    monkeypatch.setattr(once, "given", set())
    x = autojit.ones(2)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert x.add(x, alpha=2).tolist() == [3.0, 3.0]
        assert x.add(2).tolist() == [3.0, 3.0]
        assert autojit.addcmul(x, x, x, value=2).tolist() == [3.0, 3.0]
    with pytest.raises(TypeError):
        x.add(x, 2)  # torch refuses a number after a tensor: not a deprecated form either


# ---- create_graph gradients, private helpers ----------------------------------------------------

def test_create_graph_grad_is_a_copy_that_zero_grad_resets():
    """The gradient a sum gives is an expanded view of ones; .grad holds a copy, as torch's
    AccumulateGrad makes, so zero_grad(set_to_none=False) detaches and zeroes it in place."""
    for lib in (torch, autojit):
        x = lib.ones(3, requires_grad=True)
        x.sum().backward(create_graph=True)
        assert x.grad._base is None
        optimizer = lib.optim.SGD([x], lr=0.1)
        optimizer.zero_grad(set_to_none=False)
        assert x.grad.tolist() == [0.0, 0.0, 0.0] and x.grad.grad_fn is None


def test_reparametrize_module_as_torch():
    def run(lib):
        lib.manual_seed(0)
        module = lib.nn.Linear(3, 2)
        weight = lib.ones(2, 3, requires_grad=True)
        replacements = {"weight": weight}
        with lib.nn.utils.stateless._reparametrize_module(module, replacements):
            out = module(lib.ones(1, 3))
            assert module.weight is weight
        assert module.weight is not weight
        out.sum().backward()
        return out.detach().numpy() - module.bias.detach().numpy(), weight.grad.numpy()

    for mine, theirs in zip(run(autojit), run(torch)):
        np.testing.assert_allclose(mine, theirs, rtol=1e-6)


def test_reparametrize_module_ties_and_strict():
    class Tied(autojit.nn.Module):
        def __init__(self):
            super().__init__()
            self.a = autojit.nn.Linear(2, 2, bias=False)
            self.b = autojit.nn.Linear(2, 2, bias=False)
            self.b.weight = self.a.weight

        def forward(self, x):
            return self.b(self.a(x))

    module = Tied()
    stateless = autojit.nn.utils.stateless
    with stateless._reparametrize_module(module, {"a.weight": autojit.eye(2) * 2},
                                         tie_weights=True):
        assert module(autojit.ones(1, 2)).tolist() == [[4.0, 4.0]]
    with pytest.raises(ValueError, match="which are tied"):
        with stateless._reparametrize_module(
                module, {"a.weight": autojit.eye(2), "b.weight": autojit.ones(2, 2)},
                tie_weights=True):
            pass
    with pytest.raises(RuntimeError, match="Missing key"):
        with stateless._reparametrize_module(module, {}, strict=True):
            pass


def test_standard_gamma_and_its_gradient():
    concentration = np.array([0.5, 1.0, 3.0])
    autojit.manual_seed(0)
    alpha = autojit.tensor(concentration, requires_grad=True)
    sample = autojit._standard_gamma(alpha)
    (grad,) = autojit.autograd.grad(sample.sum(), alpha)
    expected = torch._standard_gamma_grad(torch.tensor(concentration),
                                          torch.tensor(sample.detach().numpy()))
    np.testing.assert_allclose(grad.numpy(), expected.numpy(), rtol=1e-6)
    assert (sample.detach().numpy() > 0).all()


def test_safe_globals_let_a_weights_only_load_rebuild_a_declared_class(tmp_path):
    """A checkpoint with an object of the program's class (torch.save writes it), read with
    weights_only=True: refused, then rebuilt inside safe_globals and after add_safe_globals,
    as torch.load does."""
    import argparse
    import pickle

    path = tmp_path / "checkpoint.pt"
    torch.save({"weights": torch.ones(2), "args": argparse.Namespace(lr=0.5)}, path)
    serialization = autojit.serialization
    with pytest.raises(pickle.UnpicklingError, match="argparse.Namespace"):
        autojit.load(path)
    with serialization.safe_globals([argparse.Namespace]):
        loaded = autojit.load(path)
    assert loaded["args"] == argparse.Namespace(lr=0.5)
    assert loaded["weights"].tolist() == [1.0, 1.0]
    assert serialization.get_safe_globals() == []
    serialization.add_safe_globals([argparse.Namespace])
    try:
        assert serialization.get_safe_globals() == [argparse.Namespace]
        assert autojit.load(path)["args"].lr == 0.5
    finally:
        serialization.clear_safe_globals()
    assert serialization.DEFAULT_PROTOCOL == torch.serialization.DEFAULT_PROTOCOL


# ---- behaviours libraries rely on ---------------------------------------------------------------

def test_repeat_makes_new_memory():
    for lib in (torch, autojit):
        base = lib.ones(1, 3)
        repeated = base.repeat(2, 1)
        repeated[0, 0] = 5.0  # a broadcast view could not be written
        same = base.repeat(1, 1)
        same[0, 1] = 7.0
        assert repeated.tolist() == [[5.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
        assert base.tolist() == [[1.0, 1.0, 1.0]]


VIEWS = {
    "permute": lambda L, x: x.permute(0, 1), "torch.permute": lambda L, x: L.permute(x, (0, 1)),
    "squeeze": lambda L, x: x.squeeze(), "squeeze(0)": lambda L, x: L.squeeze(x, 0),
    "expand": lambda L, x: x.expand(2, 3), "expand_as": lambda L, x: x.expand_as(x),
    "broadcast_to": lambda L, x: L.broadcast_to(x, (2, 3)),
    "transpose": lambda L, x: x.transpose(1, 1), "swapaxes": lambda L, x: L.swapaxes(x, 0, 0),
    "t": lambda L, x: x[0].t(), "movedim": lambda L, x: L.movedim(x, 0, 0),
    "narrow": lambda L, x: x.narrow(0, 0, 2),
}


@pytest.mark.parametrize("name", VIEWS)
def test_view_ops_give_a_new_tensor_where_nothing_changes(name):
    for lib in (torch, autojit):
        x = lib.ones(2, 3, requires_grad=True)
        view = VIEWS[name](lib, x)
        assert view is not x and view is not x[0]
        (view * 2).sum().backward()
        assert x.grad.sum().item() == 2 * view.numel()


def test_size_slices_and_sums_are_sizes():
    for lib in (torch, autojit):
        shape = lib.ones(2, 3, 4).shape
        for made in (shape[1:], shape + (5,), (1,) + shape, shape * 2, 2 * shape, shape[:0]):
            assert type(made) is lib.Size
        assert shape[1:] == (3, 4) and shape[0] == 2 and shape[-1] == 4
        with pytest.raises(TypeError):
            shape + [1]


def test_as_subclass_cdata_real_and_detach_of_a_view():
    class Marked(autojit.Tensor):
        pass

    x = autojit.ones(2, requires_grad=True)
    marked = x.as_subclass(Marked)
    assert type(marked) is Marked and marked._base is x and marked.requires_grad
    (marked * 2).sum().backward()
    assert x.grad.tolist() == [2.0, 2.0]
    with pytest.raises(TypeError, match="does not inherit from Tensor"):
        x.as_subclass(int)
    assert isinstance(x._cdata, int) and x._cdata == x._cdata != marked._cdata
    assert autojit.nn.Parameter(autojit.ones(1))._cdata
    assert x.real is x
    for lib in (torch, autojit):
        with pytest.raises(RuntimeError, match="imag is not implemented"):
            _ = lib.ones(2).imag
        with pytest.raises(RuntimeError, match="Can't detach views in-place. Use detach"):
            lib.ones(3)[:2].detach_()


def test_tensor_of_a_deque_or_range():
    import collections

    for data in (collections.deque([1.0, 2.0]), collections.deque([[1, 2], [3, 4]]), range(3),
                 [range(2), range(2)]):
        mine, theirs = autojit.tensor(data), torch.tensor(data)
        assert mine.tolist() == theirs.tolist() and str(mine.dtype)[8:] == str(theirs.dtype)[6:]


def test_normalize_into_out():
    same_as_torch(lambda L, x: L.nn.functional.normalize(x, out=L.empty(3, 3, dtype=x.dtype)),
                  MATRIX, grad=False)



# ---- indexing with an empty list and with a range ------------------------------------------

INDEXING = {
    "x[[]]": lambda L, x: x[[]],
    "x[:, []]": lambda L, x: x[:, []],
    "x[[], []]": lambda L, x: x[[], []],
    "v[[]]": lambda L, x: L.arange(3)[[]],
    "x[range(n), y]": lambda L, x: x[range(2), L.tensor([0, 2])],
    "x[range(n)]": lambda L, x: x[range(2)],
    "x[:, range]": lambda L, x: x[:, range(1, 3)],
    "x[range(0)]": lambda L, x: x[range(0)],
}


@pytest.mark.parametrize("name", INDEXING)
def test_indexing_with_empty_lists_and_ranges(name):
    same_as_torch(lambda L, x: INDEXING[name](L, x), MATRIX[:2])


def test_writing_through_empty_lists_and_ranges():
    for lib in (torch, autojit):
        x = lib.zeros(2, 3)
        x[[]] = 1.0
        x[range(2), [0, 2]] = 5.0
        assert x.tolist() == [[5.0, 0.0, 0.0], [0.0, 0.0, 5.0]]
