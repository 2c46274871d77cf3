"""autojit.autograd: backward, grad, grad modes and gradcheck, with torch.autograd's names.

nodes.py holds the graph's nodes and edges, graph.py the op nodes and their recording (and
torch.autograd.graph's names), saved_tensors.py the values kept for backward, engine.py the
differentiation pass, api.py the public entry points, grad_mode.py the modes, gradcheck.py the
finite-difference checks.
"""

# sparse_autograd installs the nodes of sparse tensors' gradients (ops/sparse/coo.py's slot),
# multi_output the node several outputs share (ops/registry.py's SHARE_NODE)
from . import (  # noqa: F401
    forward_ad,
    functional,
    graph,
    multi_output,
    profiler,
    sparse_autograd,
)
from .anomaly import (
    detect_anomaly,
    is_anomaly_check_nan_enabled,
    is_anomaly_enabled,
    set_anomaly_enabled,
    set_detect_anomaly,
)
from .api import backward, grad
from .c_functions import force_original_view_tracking as _force_original_view_tracking  # noqa: F401
from .c_functions import is_view_replay_enabled
from .c_functions import (  # noqa: F401 - torch's private names
    unsafe_preserve_version_counter as _unsafe_preserve_version_counter,
)
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
from .saved_access import SavedTensorHandle as SavedTensor
from .variable import Variable


def kineto_available() -> bool:
    """Whether the Kineto profiler library is present: autojit's profiler is its own (False)."""
    return False


def _calculate_shape(output, grad, is_grads_batched: bool):
    """The shapes backward compares for a grad_output: the output's, and the gradient's without
    its batch dimension when the gradients are batched (torch's helper of the same name); for
    a nested output, both nested tensors' sizes (`_nested_tensor_size()`, a tensor of one row
    per component), and for a GradientEdge the shape of the gradient its node takes."""
    from ..tensor.size import Size
    from .nodes import GradientEdge, edge_metadata

    if isinstance(output, GradientEdge):
        if is_grads_batched:
            raise RuntimeError("Batched grads are not supported with GradientEdge")
        meta = edge_metadata(output)
        return (Size(meta[0]) if meta is not None else None), grad.shape
    if output.is_nested:
        if is_grads_batched:
            raise RuntimeError("Batched grads are not supported with Nested Tensor.")
        return output._nested_tensor_size(), grad._nested_tensor_size()
    grad_shape = grad.shape[1:] if is_grads_batched else grad.shape
    return output.shape, grad_shape

__all__ = [
    "backward", "grad", "no_grad", "enable_grad", "set_grad_enabled", "is_grad_enabled",
    "inference_mode", "is_inference_mode_enabled", "gradcheck", "gradgradcheck",
    "GradcheckError",
    "detect_anomaly", "set_detect_anomaly", "is_anomaly_enabled",
    "is_anomaly_check_nan_enabled", "set_anomaly_enabled",
    "set_multithreading_enabled", "is_multithreading_enabled",
    "profiler", "forward_ad", "functional", "graph",
    "Function", "FunctionCtx", "once_differentiable", "Variable", "kineto_available",
    "SavedTensor", "is_view_replay_enabled",
]


def _profiler_enabled() -> bool:
    """Whether an autograd profiler is recording on this thread."""
    from ..tensor.state import state

    return state.profiler is not None
