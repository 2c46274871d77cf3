"""Thread-local execution state read by every op dispatch.

Grad mode, inference mode, autocast and the active tracer live here, one copy per thread, so that
`no_grad` in one thread does not affect another (torch's grad mode is thread-local too).
The autograd and ir packages expose the public context managers; this module only holds the flags.

Reading an attribute of a thread-local costs several times a plain attribute read, so the
eager dispatch reads one summary instead of each flag: `dispatch`, kept current by every write
to a flag it depends on (docs/notes/eager-dispatch.md).
"""

from __future__ import annotations

import threading

# The values of state.dispatch.
PLAIN = 0  # eager, grad mode off, no mode that changes how an op runs
RECORDING = 1  # eager with grad mode on and nothing else: ops record autograd nodes
# a tracer, vmap, forward AD, the profiler, anomaly or inference mode, saved-tensor hooks, a
# torch.func grad transform or a checkpoint's recomputation watch are active
SPECIAL = 2

# The flags `dispatch` summarizes.
_DISPATCH_FLAGS = frozenset(("grad_enabled", "inference", "tracer", "vmap_levels",
                             "forward_levels", "anomaly", "profiler", "saved_tensor_hooks",
                             "grad_levels", "saved_watch"))
_set = threading.local.__setattr__

# Forward AD's tangent of a tensor at the innermost dual level, or None: set by
# autograd/forward_ad.py, the layer above that keeps the tangents, for what below it reads
# them (printing, the refusal of out= forms).
TANGENT_OF = [None]


class _State(threading.local):
    def __init__(self):
        _set(self, "dispatch", RECORDING)
        self.grad_enabled = True
        self.inference = False
        self.tracer = None  # ir.trace.Tracer while a function is being traced
        self.vmap_levels = ()  # the active vmap levels: (id, batch size) (autograd/vmap.py)
        self.vmap_randomness = None  # inside vmap: its randomness= mode
        self.forward_levels = ()  # the active forward-AD levels' ids (autograd/forward_ad.py)
        # forward_ad._set_fwd_grad_enabled: off, no primitive pushes tangents forward
        self.fwd_grad_enabled = True
        self.anomaly = False  # autograd.detect_anomaly: capture forward tracebacks
        self.anomaly_check_nan = True  # ... and check backward results for nan
        self.profiler = None  # autograd.profiler.profile while one is recording
        # autograd.graph.saved_tensors_hooks: the active (pack, unpack) pairs, innermost last
        self.saved_tensor_hooks = ()
        # The non-reentrant checkpoints running their function, innermost last: each is called
        # with every autograd node that saves tensors once it holds them (utils/checkpoint.py)
        self.saved_watch = ()
        self.default_device = None  # set_default_device / `with device(...)`: None is the CPU
        self.replaced_devices = []  # the defaults that `with device(...)` blocks replaced
        # autocast: None while no device has autocast on (or inside an op autocast ran),
        # else the settings ops read (ops/autocast.py)
        self.autocast = None
        # __torch_function__ dispatch: 0 on, 1 subclasses' handlers off, 2 all off
        # (tensor/torch_function.py; read only once a subclass overriding it is in use)
        self.torch_function = 0
        self.function_modes = ()  # the TorchFunctionModes entered, innermost last
        # How many torch.func transforms (grad, vjp, jvp, vmap, ...) are running their
        # function: an autograd.Function without setup_context refuses them, as in torch
        self.func_transforms = 0
        # The levels of the torch.func grad transforms (grad, vjp, jvp) running their function,
        # innermost last: Tensor._make stamps what it makes with the innermost, for the refusal
        # of in-place writes into captured tensors (autograd/transform_levels.py)
        self.grad_levels = ()
        self.plain_autograd = 0  # inside torch.autograd.functional, which is plain autograd

    def __setattr__(self, name, value):
        _set(self, name, value)
        if name == "grad_enabled":
            # The most frequent write (every no_grad block, every backward pass): it decides
            # the summary only where no other flag makes it SPECIAL, and then alone.
            if self.dispatch != SPECIAL:
                _set(self, "dispatch", RECORDING if value else PLAIN)
        elif name in _DISPATCH_FLAGS:
            _set(self, "dispatch", self._summary())

    def _summary(self) -> int:
        get = self.__dict__.get
        if (get("tracer") is not None or get("vmap_levels") or get("forward_levels")
                or get("anomaly") or get("profiler") is not None or get("inference")
                or get("saved_tensor_hooks") or get("grad_levels") or get("saved_watch")):
            return SPECIAL
        return RECORDING if get("grad_enabled", True) else PLAIN


state = _State()
