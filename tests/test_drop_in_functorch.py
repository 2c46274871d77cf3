"""functorch and torch._functorch under the drop-in, against torch's own: _slice_argnums and
its errors, make_functional / functional_init / combine_state_for_ensemble and
stack_module_state, functorch's FutureWarnings, the autograd.Function helpers
(CtxWithSavedTensors, reductify_leaf), the dispatch-key and torch._C._nn names; and, in a
subprocess under the drop-in, the imports of torch's functorch tests, with the names that are
names only raising NotImplementedError and missing ones failing under torch's names.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import warnings

import numpy as np
import pytest

import autojit
from autojit import func as F
from autojit.drop_in import _C as dropin_C
from autojit.drop_in import functorch as ours_functorch
from autojit.drop_in._functorch import autograd_function as ours_af
from autojit.drop_in._functorch import eager_transforms as ours_et
from autojit.drop_in._functorch import make_functional as ours_mf
from autojit.drop_in._functorch import utils as ours_utils

torch = pytest.importorskip("torch")
from torch._functorch import autograd_function as torch_af  # noqa: E402
from torch._functorch import deprecated as torch_deprecated  # noqa: E402
from torch._functorch import eager_transforms as torch_et  # noqa: E402
from torch._functorch import make_functional as torch_mf  # noqa: E402

SRC = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "src")


def _outcome(call):
    try:
        return ("ok", call())
    except Exception as error:  # noqa: BLE001 - the outcome compared is the error itself
        return (type(error).__name__, str(error))


@pytest.mark.parametrize("argnums", [0, 4, -1, -5, (0, -3), (1, 0), (0, 1, 2, 3, 4), 5, -6,
                                     (), (0, 0), (0, -5), 0.0, [0], (0.0,), ((0, 1), 2)])
def test_slice_argnums_as_torch(argnums):
    args = (0.1, 1.1, 2.1, 3.1, 4.1)
    assert _outcome(lambda: ours_et._slice_argnums(args, argnums)) == \
        _outcome(lambda: torch_et._slice_argnums(args, argnums))
    if isinstance(argnums, int) and -5 <= argnums < 5:
        assert ours_et._slice_argnums(args, argnums, as_tuple=False) == \
            torch_et._slice_argnums(args, argnums, as_tuple=False)


def _pair(module_name: str, *args):
    """The same module class built in both libraries, with the same weights."""
    theirs = getattr(torch.nn, module_name)(*args).double()
    ours = getattr(autojit.nn, module_name)(*args).double()
    ours.load_state_dict({k: autojit.tensor(v.detach().numpy())
                          for k, v in theirs.state_dict().items()})
    return ours, theirs


def test_make_functional_and_ensembles_as_torch():
    ours, theirs = _pair("Linear", 3, 2)
    x = np.random.default_rng(0).uniform(-1, 1, (4, 3))
    ours_fn, ours_params = ours_mf.make_functional(ours, disable_autograd_tracking=True)
    theirs_fn, theirs_params = torch_mf.make_functional(theirs, disable_autograd_tracking=True)
    assert [p.requires_grad for p in ours_params] == [p.requires_grad for p in theirs_params]
    np.testing.assert_allclose(ours_fn(ours_params, autojit.tensor(x)).numpy(),
                               theirs_fn(theirs_params, torch.tensor(x)).detach().numpy())
    # functional_init: an ensemble of 3 models' weights stacked, fn(weights, data) under vmap
    weights, fn, names = ours_mf.functional_init(autojit.nn.Linear, (3,))(3, 2)
    t_weights, t_fn, t_names = torch_mf.functional_init(torch.nn.Linear, (3,))(3, 2)
    assert names == t_names and [w.shape for w in weights] == [tuple(w.shape) for w in t_weights]
    batch = autojit.tensor(x.astype(np.float32)).expand(3, 4, 3)
    assert F.vmap(fn)(weights, (batch,)).shape == (3, 4, 2)
    parts = ours_mf.functional_init_with_buffers(autojit.nn.BatchNorm1d, [2])(3)
    t_parts = torch_mf.functional_init_with_buffers(torch.nn.BatchNorm1d, [2])(3)
    assert parts[3:] == t_parts[3:]
    assert [b.shape for b in parts[1]] == [tuple(b.shape) for b in t_parts[1]]
    for size in ((), (0,), (2, 2)):
        ours = _outcome(lambda size=size: ours_mf.functional_init(autojit.nn.Linear, size)(3, 2))
        theirs = _outcome(lambda size=size: torch_mf.functional_init(torch.nn.Linear, size)(3, 2))
        assert ours[0] == theirs[0]


def test_stack_module_state_errors_as_torch():
    def models(lib, eval_one=False):
        found = [lib.nn.Linear(2, 2) for _ in range(3)]
        if eval_one:
            found[1].eval()
        return found

    for eval_one in (False, True):
        ours = _outcome(lambda flag=eval_one: F.stack_module_state(models(autojit, flag))[1])
        theirs = _outcome(lambda flag=eval_one: torch.func.stack_module_state(
            models(torch, flag))[1])
        assert ours == theirs


def test_functorch_names_warn_as_torch():
    for name in ("vmap", "grad", "jacrev", "jacfwd", "hessian", "grad_and_value",
                 "functionalize"):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            getattr(ours_functorch, name)(autojit.sin)
        assert [(w.category, str(w.message)) for w in caught] == \
            [(FutureWarning, torch_deprecated.get_warning(
                name, "torch.vmap" if name == "vmap" else None, replace_newlines=True))]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.grad(autojit.sin)  # torch.func's are not deprecated


@pytest.mark.parametrize("case", [(None, None, 0, None), (None, None, None, None),
                                  ((2, 3, 4), 0, None, None), ((3, 2, 4), 1, None, (3,)),
                                  ((3, 4), None, 1, None), ((3, 4), None, 1, (4,)),
                                  ((2, 3, 4), 0, 1, None), ((3, 4, 5, 2), 3, 0, (5,))])
def test_reductify_leaf_as_torch(case):
    shape, grad_bdim, input_bdim, target = case
    value = None if shape is None else np.random.default_rng(1).uniform(-1, 1, shape)
    ours = ours_af.reductify_leaf(None if value is None else autojit.tensor(value), grad_bdim,
                                  input_bdim, 2, target)
    theirs = torch_af.reductify_leaf(None if value is None else torch.tensor(value), grad_bdim,
                                     input_bdim, 2, target)
    if theirs is None:
        assert ours is None
    else:
        np.testing.assert_allclose(ours.numpy(), theirs.numpy())


def test_ctx_with_saved_tensors_as_torch():
    def run(lib, helper, attribute=None):
        seen = {}

        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                if attribute:
                    setattr(ctx, attribute, 1)
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, grad):
                wrapped = helper.CtxWithSavedTensors(ctx, (1, 2))
                inner = helper.CtxWithSavedTensors(wrapped, (3,))
                wrapped.note = "kept"
                seen.update(saved=[wrapped.saved_tensors, inner.saved_tensors],
                            note=ctx.note, needs=list(wrapped.needs_input_grad))
                return grad * 3 * ctx.saved_tensors[0] ** 2

        x = lib.tensor([2.0], requires_grad=True)
        outcome = _outcome(lambda: Cube.apply(x).sum().backward())
        return outcome[0], seen

    assert run(autojit, ours_af) == run(torch, torch_af)
    for attribute in ("_pt_inner_ctx", "_pt_new_saved_tensors"):
        ours = run(autojit, ours_af, attribute)[0]
        assert ours == run(torch, torch_af, attribute)[0] == "RuntimeError"


def test_single_level_switch_and_exclude_set():
    assert not ours_utils.get_single_level_autograd_function_allowed()
    with ours_utils.enable_single_level_autograd_function():
        assert ours_utils.get_single_level_autograd_function_allowed()
    assert not ours_utils.get_single_level_autograd_function_allowed()
    key = dropin_C.DispatchKey.FuncTorchBatched
    assert not dropin_C._dispatch_tls_local_exclude_set().has(key)
    with dropin_C._ExcludeDispatchKeyGuard(dropin_C.DispatchKeySet(key)):
        assert dropin_C._dispatch_tls_local_exclude_set().has(key)
    t_key = torch._C.DispatchKey.FuncTorchBatched
    with torch._C._ExcludeDispatchKeyGuard(torch._C.DispatchKeySet(t_key)):
        assert torch._C._dispatch_tls_local_exclude_set().has(t_key)


def test_c_nn_functions_as_torch():
    rng = np.random.default_rng(2)
    x, w, b = rng.uniform(-1, 1, (5, 3)), rng.uniform(-1, 1, (2, 3)), rng.uniform(-1, 1, (2,))
    np.testing.assert_allclose(
        dropin_C._nn.linear(autojit.tensor(x), autojit.tensor(w), autojit.tensor(b)).numpy(),
        torch._C._nn.linear(torch.tensor(x), torch.tensor(w), torch.tensor(b)).numpy())
    for name, extra, keywords in (("gelu", (), {"approximate": "tanh"}),
                                  ("hardtanh", (-0.5, 0.5), {}), ("softplus", (2.0,), {}),
                                  ("leaky_relu", (0.2,), {}), ("log_sigmoid", (), {})):
        ours = getattr(dropin_C._nn, name)(autojit.tensor(x), *extra, **keywords)
        theirs = getattr(torch._C._nn, name)(torch.tensor(x), *extra, **keywords)
        np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-12)


IMPORTS = """
import json
from functorch import (combine_state_for_ensemble, grad, grad_and_value, hessian, jacfwd,
                       jacrev, jvp, make_functional, make_functional_with_buffers, make_fx,
                       vjp, vmap)
from functorch.experimental import functionalize, replace_all_batch_norm_modules_
import torch
from torch._C import _ExcludeDispatchKeyGuard, DispatchKey, DispatchKeySet
from torch._dynamo import allow_in_graph
from torch._functorch.eager_transforms import _slice_argnums
from torch._functorch.make_functional import functional_init, functional_init_with_buffers
from torch._functorch.utils import enable_single_level_autograd_function
from torch._ops import HigherOrderOperator
from torch._subclasses.fake_tensor import FakeTensorMode
from torch.func import functional_call, linearize, stack_module_state

found = {}


class MySum(HigherOrderOperator):
    def __init__(self):
        super().__init__("mysum")


mysum = MySum()
mysum.py_impl(torch._C._functorch.TransformType.Vmap)(lambda interpreter, x, dim: x)
mysum.py_impl(torch._C.DispatchKey.AutogradCPU)(lambda x, dim: x)
for name, call in [("make_fx", lambda: make_fx(torch.sin)(torch.ones(1))),
                   ("HigherOrderOperator", lambda: mysum(torch.ones(2), 0)),
                   ("FakeTensorMode", FakeTensorMode)]:
    try:
        call()
    except NotImplementedError as error:
        found[name] = str(error)
for name in ["torch._functorch.not_a_name", "torch._C._functorch.not_a_name",
             "torch._ops.not_a_name"]:
    module, _, attribute = name.rpartition(".")
    try:
        getattr(eval(module), attribute)
    except AttributeError as error:
        found[name] = str(error)
try:
    import torch._functorch.not_a_module
except ImportError as error:
    found["module"] = error.name
found["ctx"] = torch._functorch.autograd_function.CtxWithSavedTensors.__name__
found["functorch"] = [sorted(name for name in ("linearize", "functional_call")
                             if hasattr(__import__("functorch"), name))]
print(json.dumps(found))
"""


def test_functorch_test_imports_under_the_drop_in(tmp_path):
    path = tmp_path / "imports.py"
    path.write_text(textwrap.dedent(IMPORTS))
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    done = subprocess.run([sys.executable, "-m", "autojit.drop_in", str(path)],
                          capture_output=True, text=True, env=env, timeout=120)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert "make_fx is not supported by autojit" in found["make_fx"]
    assert "HigherOrderOperator 'mysum' cannot be called" in found["HigherOrderOperator"]
    assert "FakeTensorMode is not supported" in found["FakeTensorMode"]
    for name in ("torch._functorch.not_a_name", "torch._C._functorch.not_a_name",
                 "torch._ops.not_a_name"):
        assert found[name].startswith(f"{name} is missing from autojit"), found[name]
    assert found["module"] == "torch._functorch.not_a_module"
    assert found["ctx"] == "CtxWithSavedTensors"
    assert found["functorch"] == [[]]  # functorch never had them: torch.func's only
