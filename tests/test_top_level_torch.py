"""The top-level settings and modules against torch: set_printoptions (every option and
profile, printed text compared with torch's), the deterministic-algorithms switch and its
fill of uninitialized memory, autojit.version, autojit.vmap, torch's constants, and shared
memory (Tensor.share_memory_, is_shared, Module.share_memory, seen by a forked process).
"""

from __future__ import annotations

import math
import multiprocessing
import sys

import numpy as np
import pytest
from torch_compare import same_as_torch, torch

import autojit

rng = np.random.default_rng(3)
ARRAYS = {
    "matrix": rng.standard_normal((4, 5)).astype(np.float32),
    "small": (rng.standard_normal(30) * 1e-5).astype(np.float32),
    "integral_floats": np.arange(20.0, dtype=np.float32),
    "large_int": np.arange(2000).reshape(40, 50),
    "cube": rng.standard_normal((7, 7, 7)).astype(np.float32),
    "wide_range": np.array([1e10, 1.0, np.nan, np.inf], np.float32),
    "scalar": np.array(3.25, np.float32),
    "bool": np.array([True, False]),
}
OPTIONS = {
    "precision_2": {"precision": 2},
    "precision_8": {"precision": 8},
    "threshold": {"threshold": 5},
    "edgeitems": {"edgeitems": 1, "threshold": 10},
    "edgeitems_0": {"edgeitems": 0, "threshold": 3},
    "linewidth_40": {"linewidth": 40},
    "linewidth_200": {"linewidth": 200},
    "short": {"profile": "short"},
    "full": {"profile": "full"},
    "sci_on": {"sci_mode": True},
    "sci_off": {"sci_mode": False},
    "short_precision": {"profile": "short", "precision": 6},
}


@pytest.fixture
def default_printoptions():
    yield
    for framework in (torch, autojit):
        framework.set_printoptions(profile="default")


@pytest.mark.parametrize("option", sorted(OPTIONS))
def test_printoptions_print_as_torch(option, default_printoptions):
    for name, array in ARRAYS.items():
        for requires_grad in (False, array.dtype.kind == "f"):
            printed = []
            for framework in (torch, autojit):
                framework.set_printoptions(**OPTIONS[option])
                x = framework.tensor(array)
                x.requires_grad_(requires_grad)
                printed.append(repr(x))
                framework.set_printoptions(profile="default")
            assert printed[1] == printed[0], name


def test_printoptions_are_read_back(default_printoptions):
    from autojit.tensor.printing import get_printoptions, printoptions

    autojit.set_printoptions(precision=3, sci_mode=True)
    torch.set_printoptions(precision=3, sci_mode=True)
    assert get_printoptions() == torch._tensor_str.get_printoptions()
    with printoptions(precision=1, sci_mode=True):
        assert repr(autojit.tensor([1.25])) == "tensor([1.2e+00])"
    autojit.set_printoptions(linewidth=60)  # sci_mode: every call sets it (None here)
    torch.set_printoptions(linewidth=60)
    assert get_printoptions() == torch._tensor_str.get_printoptions()
    assert get_printoptions()["sci_mode"] is None


@pytest.fixture
def deterministic_off():
    yield
    for framework in (torch, autojit):
        framework.use_deterministic_algorithms(False)
        framework.utils.deterministic.fill_uninitialized_memory = True


def test_deterministic_switch_as_torch(deterministic_off):
    for framework in (torch, autojit):
        assert not framework.are_deterministic_algorithms_enabled()
        framework.use_deterministic_algorithms(True, warn_only=True)
        assert framework.are_deterministic_algorithms_enabled()
        assert framework.is_deterministic_algorithms_warn_only_enabled()
        assert framework.get_deterministic_debug_mode() == 1
        framework.set_deterministic_debug_mode("error")
        assert framework.get_deterministic_debug_mode() == 2
        assert not framework.is_deterministic_algorithms_warn_only_enabled()
        framework.set_deterministic_debug_mode(0)
        assert not framework.are_deterministic_algorithms_enabled()


def test_deterministic_fills_uninitialized_memory_as_torch(deterministic_off):
    def made(t):
        return (t.empty(3), t.empty(2, dtype=t.int32), t.empty(2, dtype=t.bool),
                t.empty(2, dtype=t.uint8), t.empty_like(t.ones(2, dtype=t.int64)),
                t.ones(2).new_empty(2), t.empty((2, 1), dtype=t.float64))

    for framework in (torch, autojit):
        framework.use_deterministic_algorithms(True)
    same_as_torch(lambda t: made(t), grad=False)
    for framework in (torch, autojit):
        framework.utils.deterministic.fill_uninitialized_memory = False
        assert not framework.utils.deterministic.fill_uninitialized_memory
    assert autojit.empty(2).shape == (2,)


DETERMINISM_ERRORS = {
    "mode_int": lambda t: t.use_deterministic_algorithms(1),
    "warn_only_int": lambda t: t.use_deterministic_algorithms(True, warn_only=1),
    "debug_mode_name": lambda t: t.set_deterministic_debug_mode("foo"),
    "debug_mode_number": lambda t: t.set_deterministic_debug_mode(5),
    "debug_mode_float": lambda t: t.set_deterministic_debug_mode(1.0),
}


@pytest.mark.parametrize("name", sorted(DETERMINISM_ERRORS))
def test_deterministic_errors_as_torch(name, deterministic_off):
    same_as_torch(DETERMINISM_ERRORS[name], grad=False)


def test_alert_not_deterministic(deterministic_off):
    from autojit.tensor.determinism import alert_not_deterministic

    alert_not_deterministic("kernel")  # off: nothing
    autojit.use_deterministic_algorithms(True)
    with pytest.raises(RuntimeError, match="kernel does not have a deterministic"):
        alert_not_deterministic("kernel")
    autojit.use_deterministic_algorithms(True, warn_only=True)
    with pytest.warns(UserWarning, match="kernel does not have a deterministic"):
        alert_not_deterministic("kernel")


def test_version_module():
    import autojit.version

    assert autojit.version.__version__ == autojit.__version__
    assert autojit.version.cuda is None or isinstance(autojit.version.cuda, str)
    if not autojit.cuda.is_available() or autojit.cuda.is_simulator():
        assert autojit.version.cuda is None  # as torch's CPU build says
    assert autojit.version.debug is False and autojit.version.hip is None
    assert isinstance(autojit.version.git_version, str)


def test_vmap_and_constants_at_the_top_level():
    assert autojit.vmap is autojit.func.vmap
    x = autojit.tensor(ARRAYS["matrix"])
    np.testing.assert_allclose(autojit.vmap(lambda row: row.sum())(x).numpy(),
                               ARRAYS["matrix"].sum(1), rtol=1e-6)
    for name in ("e", "pi", "inf"):
        assert getattr(autojit, name) == getattr(torch, name)
    assert math.isnan(autojit.nan) and autojit.newaxis is None is torch.newaxis


def test_share_memory_as_torch():
    for framework in (torch, autojit):
        x = framework.arange(6.0).reshape(2, 3)
        assert not x.is_shared()
        assert x.share_memory_() is x and x.is_shared()
        assert x[1].is_shared()
        model = framework.nn.Linear(3, 2)
        assert model.share_memory() is model
        assert all(p.is_shared() and p.requires_grad for p in model.parameters())
        assert isinstance(model.weight, framework.nn.Parameter)


def test_a_view_moves_with_its_base():
    base = autojit.arange(6.0)
    view = base[2:5]
    view.share_memory_()
    assert base.is_shared() and view.is_shared()
    base[3] = 100.0
    assert view.tolist() == [2.0, 100.0, 4.0]


def _add_one(tensor):
    with autojit.no_grad():
        tensor.add_(1)


@pytest.mark.skipif(sys.platform != "linux", reason="the fork start method")
def test_shared_parameters_are_written_by_a_forked_process():
    model = autojit.nn.Linear(3, 2)
    model.share_memory()
    before = model.bias.detach().clone()
    process = multiprocessing.get_context("fork").Process(target=_add_one, args=(model.bias,))
    process.start()
    process.join()
    assert process.exitcode == 0
    np.testing.assert_allclose((model.bias - before).detach().numpy(), [1.0, 1.0])
