"""Small forms BoTorch's tests needed, against torch: NumPy functions of a tensor return a tensor
(`np.choose(prefs, pairs)`, `np.sin(x)`, comparisons as uint8), `randint` by keywords, a
distribution subclass whose repr reads attributes its __init__ sets after validating, and
`x.type()` naming torch under the drop-in."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest

import autojit
from autojit import distributions as D

torch = pytest.importorskip("torch")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.parametrize("call", [
    lambda m, x: np.sin(x), lambda m, x: np.add(x, 1), lambda m, x: np.greater(x, 0),
    lambda m, x: np.choose(m.tensor([[1, 0, 1]]), np.array([[0, 0, 1], [1, 2, 2]])),
    lambda m, x: np.sin(m.tensor(0.5)), lambda m, x: np.where(x > 0, x, 0)])
def test_numpy_functions_of_a_tensor_return_torchs_types(call):
    data = np.array([[1.0, -2.0, 0.5]], dtype=np.float32)
    with np.errstate(all="ignore"):
        theirs, ours = call(torch, torch.tensor(data)), call(autojit, autojit.tensor(data))
    assert isinstance(theirs, torch.Tensor) == isinstance(ours, autojit.Tensor)
    if isinstance(ours, autojit.Tensor):
        assert str(ours.dtype).split(".")[1] == str(theirs.dtype).split(".")[1]
        assert tuple(ours.shape) == tuple(theirs.shape)
        ours, theirs = ours.numpy(), theirs.numpy()
    assert np.allclose(np.asarray(ours, dtype=np.float64), np.asarray(theirs, dtype=np.float64))


def test_randint_by_keywords_draws_torchs_numbers():
    for kwargs in ({"high": 5, "size": (4,)}, {"low": 2, "high": 9, "size": (2, 3)}):
        ours = autojit.randint(**kwargs, generator=autojit.Generator().manual_seed(3))
        theirs = torch.randint(**kwargs, generator=torch.Generator().manual_seed(3))
        assert ours.tolist() == theirs.tolist()
    with pytest.raises(TypeError):
        autojit.randint(size=(3,))


def test_validation_message_is_made_only_when_a_check_fails():
    """A subclass whose repr needs an attribute set after super().__init__ validates (BoTorch's
    TruncatedMultivariateNormal) is made; a failing check still names the distribution."""
    for lib, module in ((torch, torch.distributions), (autojit, D)):
        class Truncated(module.MultivariateNormal):
            def __init__(self, loc, covariance_matrix, bounds):
                super().__init__(loc, covariance_matrix, validate_args=True)
                self.bounds = bounds

            def __repr__(self):
                return super().__repr__()[:-1] + f", bounds: {tuple(self.bounds.shape)})"

        made = Truncated(lib.zeros(2), lib.eye(2), lib.ones(2, 2))
        assert repr(made).endswith("bounds: (2, 2))")
        with pytest.raises(ValueError, match="Expected parameter loc"):
            module.MultivariateNormal(lib.tensor([float("nan"), 0.0]), lib.eye(2),
                                      validate_args=True)


def test_type_names_torch_under_the_drop_in():
    script = ("import autojit.drop_in\nautojit.drop_in.install()\nimport torch\n"
              "print(torch.ones(2).type(), torch.ones(2, dtype=torch.int64).type(), "
              "torch.typename(torch.ones(2)))\n")
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "src"))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          env=env, check=True)
    assert done.stdout.strip() == "torch.FloatTensor torch.LongTensor torch.FloatTensor"
    assert autojit.ones(2).type() == "autojit.FloatTensor"  # autojit's own name outside it
