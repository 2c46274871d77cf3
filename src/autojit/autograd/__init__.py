"""autojit.autograd: backward, grad, grad modes and gradcheck, with torch.autograd's names.

graph.py holds the nodes, engine.py the differentiation pass, api.py the public entry points,
grad_mode.py the modes, gradcheck.py the finite-difference checks.
"""

from . import forward_ad, functional, graph, profiler
from .anomaly import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
    set_detect_anomaly,
)
from .api import backward, grad
from .function import Function, FunctionCtx, once_differentiable
from .grad_mode import (
    enable_grad,
    inference_mode,
    is_grad_enabled,
    is_inference_mode_enabled,
    is_multithreading_enabled,
    no_grad,
    set_grad_enabled,
    set_multithreading_enabled,
)
from .gradcheck import GradcheckError, gradcheck, gradgradcheck
from .variable import Variable

__all__ = [
    "backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
    "inference_mode", "is_inference_mode_enabled", "gradcheck", "gradgradcheck",
    "GradcheckError",
    "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled", "set_anomaly_enabled",
    "set_multithreading_enabled", "is_multithreading_enabled",
    "profiler", "forward_ad", "functional", "graph",
    "Function", "FunctionCtx", "once_differentiable", "Variable",
]
