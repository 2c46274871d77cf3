"""Thread-local execution state read by every op dispatch.

Grad mode, inference mode, autocast and the active tracer live here, one copy per thread, so that
`no_grad` in one thread does not affect another (torch's grad mode is thread-local too).
The autograd and ir packages expose the public context managers; this module only holds the flags.
"""

from __future__ import annotations

import threading


class _State(threading.local):
    def __init__(self):
        self.grad_enabled = True
        self.inference = False
        self.tracer = None  # ir.trace.Tracer while a function is being traced
        self.vmap_levels = ()  # the active vmap levels: (id, batch size) (autograd/vmap.py)
        self.vmap_randomness = None  # inside vmap: its randomness= mode
        self.forward_levels = ()  # the active forward-AD levels' ids (autograd/forward_ad.py)
        self.anomaly = False  # autograd.detect_anomaly: capture forward tracebacks
        self.anomaly_check_nan = True  # ... and check backward results for nan
        self.profiler = None  # autograd.profiler.profile while one is recording
        # autograd.graph.saved_tensors_hooks: the active (pack, unpack) pairs, innermost last
        self.saved_tensor_hooks = ()
        self.default_device = None  # set_default_device / `with device(...)`: None is the CPU
        self.replaced_devices = []  # the defaults that `with device(...)` blocks replaced
        # autocast: None while no device has autocast on (or inside an op autocast ran),
        # else the settings ops read (ops/autocast.py)
        self.autocast = None


state = _State()
