"""torchvision's operators on CUDA tensors (drop_in/torchvision_ops.py) against the same calls on
the CPU: the operators written in autojit ops (roi_align, ps_roi_align, ps_roi_pool,
deform_conv2d) run on the device, with their gradients; the ones written on NumPy (nms,
roi_pool) run on host copies, with a HostFallbackWarning, and give CUDA tensors back.

Runs under Numba's CUDA simulator unless NUMBA_ENABLE_CUDASIM=0 (tests/cuda_simulator.py).
"""

import warnings

import numpy as np
import pytest
from cuda_simulator import MARKS  # before autojit: it enables the simulator

import autojit
from autojit.cuda.eager import HostFallbackWarning
from autojit.drop_in import torchvision_ops

pytestmark = MARKS
torchvision_ops.register()
ops = autojit.ops.torchvision

IMAGES = np.random.default_rng(0).standard_normal((2, 4, 6, 6)).astype(np.float32)
ROIS = np.array([[0, 0.5, 1, 4, 5], [1, 1, 0, 5, 3], [0, -1, 2, 7, 6]], np.float32)
CASES = {
    "roi_align": (1.0, 2, 2, 2, False),
    "ps_roi_align": (0.8, 2, 2, 0),
    "roi_pool": (1.0, 2, 2),
    "ps_roi_pool": (1.0, 2, 2),
}


def _first(value):
    return value[0] if isinstance(value, tuple) else value


@pytest.mark.parametrize("name", list(CASES))
def test_roi_operators_on_cuda_match_the_cpu_with_gradients(name):
    results = {}
    for device in ("cpu", "cuda"):
        images = autojit.tensor(IMAGES, device=device, requires_grad=True)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # the host fallbacks' warnings
            output = _first(getattr(ops, name)(images, autojit.tensor(ROIS, device=device),
                                               *CASES[name]))
            weights = autojit.arange(output.numel(), dtype=autojit.float32,
                                     device=device).reshape(output.shape)
            (output * weights).sum().backward()
        assert output.device.type == images.grad.device.type == device
        results[device] = (output.detach().cpu().numpy(), images.grad.cpu().numpy())
    np.testing.assert_allclose(results["cuda"][0], results["cpu"][0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(results["cuda"][1], results["cpu"][1], rtol=1e-5, atol=1e-4)


def test_nms_on_cuda_runs_on_host_copies_with_a_warning():
    boxes = np.array([[0, 0, 10, 10], [1, 1, 11, 11], [20, 20, 30, 30]], np.float32)
    scores = np.array([0.9, 0.8, 0.7], np.float32)
    with pytest.warns(HostFallbackWarning, match="torchvision::nms on cuda tensors runs on"):
        kept = ops.nms(autojit.tensor(boxes, device="cuda"),
                       autojit.tensor(scores, device="cuda"), 0.5)
    assert kept.device.type == "cuda" and kept.cpu().tolist() == [0, 2]


def test_deform_conv2d_on_cuda_matches_the_cpu():
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(shape).astype(np.float32) for shape in
              ((1, 2, 5, 5), (3, 2, 3, 3), (1, 18, 3, 3), (1, 9, 3, 3), (3,))]
    outputs = {}
    for device in ("cpu", "cuda"):
        values = [autojit.tensor(a, device=device, requires_grad=True) for a in arrays]
        out = ops.deform_conv2d(*values, 1, 1, 0, 0, 1, 1, 1, 1, True)
        out.sum().backward()
        outputs[device] = [out.detach().cpu().numpy()] + [v.grad.cpu().numpy() for v in values]
    for mine, theirs in zip(outputs["cuda"], outputs["cpu"]):
        np.testing.assert_allclose(mine, theirs, rtol=1e-4, atol=1e-4)
