"""autojit.amp.grad_scaler: GradScaler, torch's dynamic loss scaling for mixed-precision
training, at torch.amp.grad_scaler's path.

`scale(loss)` multiplies the loss by the scale (2**16 at first), so that small float16
gradients do not flush to zero; `step(optimizer)` divides the gradients by it again (`unscale_`),
checks them for inf and NaN, and runs `optimizer.step()` only when they are finite; `update()`
halves the scale after a step with non-finite gradients and doubles it after `growth_interval`
good steps in a row. Every number is a tensor (the scale, the growth tracker, found_inf), as in
torch, so a compiled training step reads no Python number that changes.

step reads found_inf (`.item()`) and skips the step, as torch does. Inside a compiled function
that read is a decision on a graph value (a value check, docs/notes/symbolic-scalars.md): the
trace takes the branch its call took, and a run whose flag says otherwise writes nothing back
and is served by the trace of the other branch. Each branch does exactly what eager does,
versions and optimizer state included. docs/amp.md is the guide.
"""

from __future__ import annotations

import warnings
from collections import abc, defaultdict
from enum import Enum

from ..autograd.grad_mode import no_grad
from ..ops.elementwise import where
from ..ops.masks import isfinite
from ..tensor import dtypes
from ..tensor.creation import full
from ..tensor.tensor import Tensor
from .autocast_mode import cuda_available

__all__ = ["OptState", "GradScaler"]


class _MultiDeviceReplicator:
    """Lazily serves copies of a tensor to requested devices (copies cached per device)."""

    def __init__(self, master_tensor: Tensor) -> None:
        self.master = master_tensor
        self._per_device_tensors: dict = {}

    def get(self, device):
        retval = self._per_device_tensors.get(device, None)
        if retval is None:
            retval = self.master.to(device=device, non_blocking=True, copy=True)
            self._per_device_tensors[device] = retval
        return retval


class OptState(Enum):
    READY = 0
    UNSCALED = 1
    STEPPED = 2


def _refresh_per_optimizer_state() -> dict:
    return {"stage": OptState.READY, "found_inf_per_device": {}}


def _amp_foreach_non_finite_check_and_unscale_(scaled_grads, found_inf: Tensor,
                                               inv_scale: Tensor) -> None:
    """Multiply each gradient by `inv_scale` in place, and set `found_inf` to 1.0 when any of
    them holds an inf or NaN (torch._amp_foreach_non_finite_check_and_unscale_)."""
    found = found_inf
    for grad in scaled_grads:
        found = found.maximum(isfinite(grad).all().logical_not().to(found_inf.dtype))
        grad.mul_(inv_scale)
    found_inf.copy_(found)


def _amp_update_scale_(scale: Tensor, growth_tracker: Tensor, found_inf: Tensor,
                       growth_factor: float, backoff_factor: float,
                       growth_interval: int) -> Tensor:
    """torch._amp_update_scale_: after a step with non-finite gradients the scale is
    multiplied by backoff_factor and the tracker reset; otherwise the tracker counts the step,
    and at growth_interval the scale is multiplied by growth_factor (if that stays finite)
    and the tracker reset. As data, not Python decisions, so that it compiles."""
    found = found_inf > 0
    successful = growth_tracker + 1
    grow = found.logical_not() & (successful == growth_interval)
    # torch computes `float(scale * factor)` with the factor a double.
    wide = scale.to(dtypes.float64)
    grown = (wide * growth_factor).to(scale.dtype)
    backed_off = (wide * backoff_factor).to(scale.dtype)
    new_scale = where(found, backed_off, where(grow & isfinite(grown), grown, scale))
    new_tracker = where(found | grow, growth_tracker.new_zeros(()), successful)
    scale.copy_(new_scale)
    growth_tracker.copy_(new_tracker.to(growth_tracker.dtype))
    return scale


class GradScaler:
    """Gradient scaling for mixed-precision training (torch.amp.GradScaler): `scale(loss)`
    before backward, `step(optimizer)` and `update()` after it; with `enabled=False` each is a
    pass-through. device is "cuda" by default, as torch's; on a machine without a GPU that
    scaler warns and is disabled.

    >>> import autojit
    >>> w = autojit.tensor([1.0, 2.0], requires_grad=True)
    >>> optimizer = autojit.optim.SGD([w], lr=0.1)
    >>> scaler = autojit.amp.GradScaler("cpu", init_scale=1024.0)
    >>> scaler.scale((w * w).sum()).backward()
    >>> print(w.grad)                      # the gradient of the scaled loss
    tensor([2048., 4096.])
    >>> scaler.step(optimizer)             # unscaled, checked, stepped
    >>> scaler.update()
    >>> print(w.detach(), scaler.get_scale())
    tensor([0.8000, 1.6000]) 1024.0
    """

    def __init__(self, device: str = "cuda", init_scale: float = 2.0 ** 16,
                 growth_factor: float = 2.0, backoff_factor: float = 0.5,
                 growth_interval: int = 2000, enabled: bool = True) -> None:
        self._device = device
        self._enabled = enabled
        if self._device == "cuda" and enabled and not cuda_available():
            warnings.warn("autojit.cuda.amp.GradScaler is enabled, but CUDA is not available.  "
                          "Disabling.", stacklevel=2)
            self._enabled = False
        if self._enabled:
            if growth_factor <= 1.0:
                raise AssertionError("The growth factor must be > 1.0.")
            if backoff_factor >= 1.0:
                raise AssertionError("The backoff factor must be < 1.0.")
            self._init_scale = init_scale
            self._scale: Tensor | None = None
            self._growth_factor = growth_factor
            self._backoff_factor = backoff_factor
            self._growth_interval = growth_interval
            self._init_growth_tracker = 0
            self._growth_tracker: Tensor | None = None
            self._per_optimizer_states: dict = defaultdict(_refresh_per_optimizer_state)

    def _check_scale_growth_tracker(self, funcname: str) -> tuple:
        fix = ("This may indicate your script did not use scaler.scale(loss or outputs) "
               "earlier in the iteration.")
        if self._scale is None:
            raise AssertionError(f"Attempted {funcname} but _scale is None.  " + fix)
        if self._growth_tracker is None:
            raise AssertionError(f"Attempted {funcname} but _growth_tracker is None.  " + fix)
        return self._scale, self._growth_tracker

    def _lazy_init_scale_growth_tracker(self, dev) -> None:
        if self._growth_tracker is not None:
            raise AssertionError("_growth_tracker initialized before _scale")
        self._scale = full((), self._init_scale, dtype=dtypes.float32, device=dev)
        self._growth_tracker = full((), self._init_growth_tracker, dtype=dtypes.int32,
                                    device=dev)

    def scale(self, outputs):
        """outputs (a tensor, or an iterable of them) multiplied by the scale; unchanged when
        the scaler is disabled."""
        if not self._enabled:
            return outputs
        if isinstance(outputs, Tensor):
            if self._scale is None:
                self._lazy_init_scale_growth_tracker(outputs.device)
            return outputs * self._scale.to(device=outputs.device, non_blocking=True)
        stash: list = []  # holds a reference that can be overwritten by apply_scale

        def apply_scale(val):
            if isinstance(val, Tensor):
                if not stash:
                    if self._scale is None:
                        self._lazy_init_scale_growth_tracker(val.device)
                    stash.append(_MultiDeviceReplicator(self._scale))
                return val * stash[0].get(val.device)
            if isinstance(val, abc.Iterable):
                iterable = map(apply_scale, val)
                if isinstance(val, (list, tuple)):
                    return type(val)(iterable)
                return iterable
            raise ValueError("outputs must be a Tensor or an iterable of Tensors")

        return apply_scale(outputs)

    def _unscale_grads_(self, optimizer, inv_scale: Tensor, found_inf: Tensor,
                        allow_fp16: bool) -> dict:
        per_device_inv_scale = _MultiDeviceReplicator(inv_scale)
        per_device_found_inf = _MultiDeviceReplicator(found_inf)
        per_device_and_dtype_grads: dict = defaultdict(lambda: defaultdict(list))
        with no_grad():
            for group in optimizer.param_groups:
                for param in group["params"]:
                    if not isinstance(param, Tensor):
                        raise AssertionError(f"expected param to be autojit.Tensor, got "
                                             f"{type(param).__name__}")
                    if param.grad is None:
                        continue
                    if (not allow_fp16) and param.grad.dtype is dtypes.float16:
                        raise ValueError("Attempting to unscale FP16 gradients.")
                    grad = param.grad
                    per_device_and_dtype_grads[grad.device][grad.dtype].append(grad)
            for device, per_dtype_grads in per_device_and_dtype_grads.items():
                for grads in per_dtype_grads.values():
                    _amp_foreach_non_finite_check_and_unscale_(
                        grads, per_device_found_inf.get(device),
                        per_device_inv_scale.get(device))
        return per_device_found_inf._per_device_tensors

    def unscale_(self, optimizer) -> None:
        """Divide the optimizer's gradients by the scale in place (to clip them, say), and
        record whether any is inf or NaN; once per optimizer per step, or it raises."""
        if not self._enabled:
            return
        self._check_scale_growth_tracker("unscale_")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.UNSCALED:
            raise RuntimeError("unscale_() has already been called on this optimizer since the "
                               "last update().")
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("unscale_() is being called after step().")
        inv_scale = self._scale.double().reciprocal().float()
        found_inf = full((), 0.0, dtype=dtypes.float32, device=self._scale.device)
        optimizer_state["found_inf_per_device"] = self._unscale_grads_(
            optimizer, inv_scale, found_inf, False)
        optimizer_state["stage"] = OptState.UNSCALED

    def _maybe_opt_step(self, optimizer, optimizer_state: dict, *args, **kwargs):
        found_infs = list(optimizer_state["found_inf_per_device"].values())
        if not sum(found.item() for found in found_infs):
            return optimizer.step(*args, **kwargs)
        return None

    def step(self, optimizer, *args, **kwargs):
        """Unscale the gradients (unless unscale_ did), then run `optimizer.step(*args,
        **kwargs)` unless one of them is inf or NaN; returns what the step returned."""
        if not self._enabled:
            return optimizer.step(*args, **kwargs)
        if "closure" in kwargs:
            raise RuntimeError("Closure use is not currently supported if GradScaler is "
                               "enabled.")
        self._check_scale_growth_tracker("step")
        optimizer_state = self._per_optimizer_states[id(optimizer)]
        if optimizer_state["stage"] is OptState.STEPPED:
            raise RuntimeError("step() has already been called since the last update().")
        if optimizer_state["stage"] is OptState.READY:
            self.unscale_(optimizer)
        if len(optimizer_state["found_inf_per_device"]) == 0:
            raise AssertionError("No inf checks were recorded for this optimizer.")
        retval = self._maybe_opt_step(optimizer, optimizer_state, *args, **kwargs)
        optimizer_state["stage"] = OptState.STEPPED
        return retval

    def update(self, new_scale=None) -> None:
        """Update the scale: backed off after a skipped step, grown after growth_interval good
        ones; or set to `new_scale` (a float or a one-element tensor)."""
        if not self._enabled:
            return
        _scale, _growth_tracker = self._check_scale_growth_tracker("update")
        if new_scale is not None:
            if isinstance(new_scale, float):
                self._scale.fill_(new_scale)
            else:
                reason = ("new_scale should be a float or a 1-element autojit.cuda.FloatTensor or "
                          "autojit.FloatTensor with requires_grad=False.")
                if new_scale.device.type != self._device:
                    raise AssertionError(reason)
                if new_scale.numel() != 1:
                    raise AssertionError(reason)
                if new_scale.requires_grad is True:
                    raise AssertionError(reason)
                self._scale.copy_(new_scale)
        else:
            found_infs = [found_inf.to(device=_scale.device, non_blocking=True)
                          for optimizer_state in self._per_optimizer_states.values()
                          for found_inf in optimizer_state["found_inf_per_device"].values()]
            if len(found_infs) == 0:
                raise AssertionError("No inf checks were recorded prior to update.")
            found_inf_combined = found_infs[0]
            for found_inf in found_infs[1:]:
                found_inf_combined = found_inf_combined + found_inf
            _amp_update_scale_(_scale, _growth_tracker, found_inf_combined,
                               self._growth_factor, self._backoff_factor,
                               self._growth_interval)
        # Emptied rather than replaced: a compiled step then leaves the scaler's structure as
        # it found it (torch makes a new dict).
        self._per_optimizer_states.clear()

    def _get_scale_async(self):
        return self._scale

    def get_scale(self) -> float:
        """The current scale as a Python float (1.0 when disabled)."""
        if self._enabled:
            scale = self._get_scale_async()
            return self._init_scale if scale is None else scale.item()
        return 1.0

    def get_growth_factor(self) -> float:
        return self._growth_factor

    def set_growth_factor(self, new_factor: float) -> None:
        self._growth_factor = new_factor

    def get_backoff_factor(self) -> float:
        return self._backoff_factor

    def set_backoff_factor(self, new_factor: float) -> None:
        self._backoff_factor = new_factor

    def get_growth_interval(self) -> int:
        return self._growth_interval

    def set_growth_interval(self, new_interval: int) -> None:
        self._growth_interval = new_interval

    def _get_growth_tracker(self) -> int:
        if self._enabled:
            return self._init_growth_tracker if self._growth_tracker is None \
                else self._growth_tracker.item()
        return 0

    def is_enabled(self) -> bool:
        return self._enabled

    def state_dict(self) -> dict:
        """scale, growth_factor, backoff_factor, growth_interval and _growth_tracker as Python
        numbers ({} when disabled)."""
        if self._enabled:
            return {"scale": self.get_scale(), "growth_factor": self._growth_factor,
                    "backoff_factor": self._backoff_factor,
                    "growth_interval": self._growth_interval,
                    "_growth_tracker": self._get_growth_tracker()}
        return {}

    def load_state_dict(self, state_dict: dict) -> None:
        if not self._enabled:
            return
        if len(state_dict) == 0:
            raise RuntimeError("The source state dict is empty, possibly because it was saved "
                               "from a disabled instance of GradScaler.")
        self._init_scale = state_dict["scale"]
        if self._scale is not None:
            self._scale.fill_(state_dict["scale"])
        self._growth_factor = state_dict["growth_factor"]
        self._backoff_factor = state_dict["backoff_factor"]
        self._growth_interval = state_dict["growth_interval"]
        self._init_growth_tracker = state_dict["_growth_tracker"]
        if self._growth_tracker is not None:
            self._growth_tracker.fill_(state_dict["_growth_tracker"])

    def __getstate__(self) -> dict:
        copied = self.__dict__.copy()
        if self._enabled:
            if len(self._per_optimizer_states) != 0:
                raise AssertionError("A GradScaler instance may only be pickled at the "
                                     "beginning of an iteration, or at the end after "
                                     "scaler.update().")
            copied["_init_scale"] = self.get_scale()
            copied["_init_growth_tracker"] = self._get_growth_tracker()
            copied["_scale"] = None
            copied["_growth_tracker"] = None
        return copied

    def __setstate__(self, copied: dict) -> None:
        self.__dict__.update(copied)

    def _check_inf_per_device(self, optimizer) -> dict:
        _scale, _ = self._check_scale_growth_tracker("_check_inf_per_device")
        dummy_inv_scale = full((), 1.0, dtype=dtypes.float32, device=_scale.device)
        found_inf = full((), 0.0, dtype=dtypes.float32, device=_scale.device)
        self._per_optimizer_states[id(optimizer)]["found_inf_per_device"] = \
            self._unscale_grads_(optimizer, dummy_inv_scale, found_inf, True)
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]

    def _found_inf_per_device(self, optimizer) -> dict:
        return self._per_optimizer_states[id(optimizer)]["found_inf_per_device"]
