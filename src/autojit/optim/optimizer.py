"""Optimizer: the base of autojit.optim: parameter groups, per-parameter state, state dicts.

An optimizer sits after `backward()` in a training step: `step()` reads each parameter's
`.grad` and updates the parameter in place. Subclasses (sgd.py, adam.py, ...) write that update
in autojit ops under `no_grad()`, so that a step traced by `autojit.compile` records it as graph
operations whose in-place writes the executable writes back (docs/compiler.md, "What is
captured").

What makes an update compile into one reusable executable:

- state tensors (momentum buffers, moment estimates, the step count) are ordinary concrete
  tensors, created the first time a parameter is updated; a compiled step's first call,
  which would make them, runs eagerly (`_makes_state_on_call`), and the second call's trace
  captures them like any other tensor the function reaches;
- the groups' floats (lr, betas, eps, ...) are read on every call of a compiled step
  (`_runtime_scalar_attributes`), so a scheduler's change traces nothing again;
- the step count is a tensor, and bias corrections are computed from it in autojit ops, so
  nothing the trace reads changes from one step to the next;
- `_state_generation` is a Python number on the optimizer that the compile guards read: it
  changes when the state is replaced (`load_state_dict`) or when a step runs different
  operations than the steps after it (SGD's first momentum step with dampening), so that a
  compiled step traces again exactly then.
"""

from __future__ import annotations

import copy
import warnings
from collections import defaultdict
from itertools import chain

from ..autograd import enable_grad, set_grad_enabled
from ..ops.complex_numbers import view_as_complex, view_as_real
from ..tensor import dtypes
from ..tensor.state import state
from ..tensor.tensor import Tensor


class _RequiredParameter:
    """The default of an optimizer option every parameter group must give (SGD's lr in torch)."""

    def __repr__(self) -> str:
        return "<required parameter>"


required = _RequiredParameter()


def _typename(value) -> str:
    if isinstance(value, Tensor):
        return f"autojit.{type(value).__name__}"
    return type(value).__module__ + "." + type(value).__qualname__ \
        if type(value).__module__ != "builtins" else type(value).__qualname__


def scalar_dtype():
    """torch's dtype for an optimizer's scalar state other than the step count (NAdam's
    mu_product, ASGD's eta and mu): float64 when that is the default dtype, else float32,
    whatever the parameters' dtype."""
    return dtypes.float64 if dtypes.get_default_dtype() is dtypes.float64 else dtypes.float32


def check_lr(lr) -> None:
    """The learning-rate checks every optimizer makes (a Tensor lr is allowed, one element)."""
    if isinstance(lr, Tensor) and lr.numel() != 1:
        raise ValueError("Tensor lr must be 1-element")
    if not 0.0 <= lr:
        raise ValueError(f"Invalid learning rate: {float(lr) if isinstance(lr, Tensor) else lr}")


def check_nonnegative(value, name: str) -> None:
    if not 0.0 <= value:
        raise ValueError(f"Invalid {name} value: {value}")


def check_betas(betas) -> None:
    """torch's check of Adam-like `betas`: each in [0, 1)."""
    for index in (0, 1):
        if not 0.0 <= betas[index] < 1.0:
            raise ValueError(f"Invalid beta parameter at index {index}: {betas[index]}")


def check_fused(fused, foreach, differentiable) -> None:
    """torch's refusals of `fused=True` with the other implementation options. `foreach`,
    `fused` and `capturable` choose among torch's kernels; autojit has one implementation (its
    ops, which a compiled step fuses anyway), so they are accepted, kept in the groups for
    torch's state-dict keys, and change nothing."""
    if fused:
        if differentiable:
            raise RuntimeError("`fused` does not support `differentiable`")
        if foreach:
            raise RuntimeError("`fused` and `foreach` cannot be `True` together.")


class Optimizer:
    """Base class of optimizers: `Optimizer(params, defaults)`.

    `params` is an iterable of Tensors, or of dicts each holding a `"params"` entry and options
    that override `defaults` for that group. `state` maps each parameter to its dict of state
    (tensors such as `momentum_buffer` or `exp_avg`).

    >>> import autojit
    >>> w = autojit.zeros(2, requires_grad=True)
    >>> optimizer = autojit.optim.SGD([w], lr=0.5)
    >>> (w - autojit.tensor([1.0, 2.0])).square().sum().backward()
    >>> optimizer.step()
    >>> w
    tensor([1., 2.], requires_grad=True)
    """

    # The floats of the groups (lr, betas, eps, momentum, ...) are what schedulers change
    # between steps: a compiled step reads them on every call from its first trace, instead
    # of holding them as constants and tracing again at the first change (compiler/api.py).
    _runtime_scalar_attributes = ("param_groups",)

    def __init__(self, params, defaults: dict):
        self.defaults = defaults
        self._state_generation = 0
        if isinstance(params, Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            f"Tensors or dicts, but got {_typename(params)}")
        self.state: defaultdict = defaultdict(dict)
        self.param_groups: list[dict] = []
        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    # ---- pickling and copying, as torch's: only the defaults, state and groups travel --------

    def __getstate__(self) -> dict:
        return {"defaults": self.defaults, "state": self.state,
                "param_groups": self.param_groups}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.__dict__.setdefault("_state_generation", 0)
        self.defaults.setdefault("differentiable", False)

    @staticmethod
    def _group_tensors_by_device_and_dtype(tensorlistlist, with_indices: bool = False) -> dict:
        """torch's helper of the multi-tensor (foreach) implementations: {(device, dtype) of
        the first list's tensors: ([each list's tensors at those positions], the positions, or []
        without with_indices)}."""
        groups: dict = {}
        for index, tensor in enumerate(tensorlistlist[0]):
            lists, indices = groups.setdefault((tensor.device, tensor.dtype),
                                               ([[] for _ in tensorlistlist], []))
            for grouped, tensors in zip(lists, tensorlistlist, strict=True):
                if tensors:  # an empty list stays empty
                    grouped.append(tensors[index])
            if with_indices:
                indices.append(index)
        return groups

    # ---- groups -------------------------------------------------------------------------------

    def add_param_group(self, param_group: dict) -> None:
        """Add a group of parameters, with its own options (the rest come from `defaults`)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")
        params = param_group["params"]
        if isinstance(params, Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)

        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):  # (name, tensor), as named_parameters() yields
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if names:
            if len(names) != len(tensors):
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")
            param_group["param_names"] = names

        for param in tensors:
            if not isinstance(param, Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                f"{_typename(param)}")
            if not (param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)

        if len({id(p) for p in tensors}) != len(tensors):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; in "
                          "future, this will cause an error", UserWarning, stacklevel=3)

        existing: set = set()
        for group in self.param_groups:
            existing.update(id(p) for p in group["params"])
            if ("param_names" in param_group) != ("param_names" in group):
                which = "with names" if "param_names" in param_group else "without names"
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {which} to the optimizer")
        if any(id(p) in existing for p in tensors):
            raise ValueError("some parameters appear in more than one parameter group")
        self.param_groups.append(param_group)

    # ---- gradients and steps ------------------------------------------------------------------

    def _makes_state_on_call(self) -> bool:
        """Whether a step would make the state it keeps (before the first step: no parameter
        has any). A compiled training step's first call then runs eagerly: traced, it would
        change the structure of the state the guards read and serve that call only
        (compiler/tracing.py, MakesState)."""
        return not self.state

    def zero_grad(self, set_to_none: bool = True) -> None:
        """Reset the .grad of every parameter: to None (default), or to zeros in place."""
        tracer = state.tracer
        for group in self.param_groups:
            for param in group["params"]:
                if set_to_none:
                    # Assigned without reading it first: while tracing, what .grad held
                    # before then does not decide the trace (it is not guarded).
                    if tracer is not None or param._grad is not None:
                        param.grad = None
                    continue
                if tracer is not None:  # zeroed in place: which tensor it is is guarded
                    tracer.note_grad_access(param)
                grad = param._grad
                if grad is None:
                    continue
                if grad.grad_fn is not None:
                    grad.detach_()
                else:
                    grad.requires_grad_(False)
                grad.zero_()

    def step(self, closure=None):
        """Update every parameter that has a .grad; `closure` re-evaluates the loss first.

        The update runs under no_grad, unless the optimizer was built with
        `differentiable=True`: then it records autograd history, as torch's does.
        """
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        tracer = state.tracer
        with set_grad_enabled(bool(self.defaults.get("differentiable", False))):
            for group in self.param_groups:
                for param in group["params"]:
                    if tracer is not None:
                        # A compiled step reads this very .grad: its guards check which
                        # tensor it is (a new one each call is a new trace, never a stale
                        # one read again).
                        tracer.note_grad_access(param)
                    grad = param._grad
                    if grad is None:
                        continue
                    # A parameter gets an entry in `state` once its update keeps something
                    # there, as torch's (SGD without momentum keeps nothing: no entry).
                    kept = self.state.get(param)
                    entry = {} if kept is None else kept
                    if param._dtype.is_complex:
                        self._update_complex(param, grad, entry, group)
                    else:
                        self._update(param, grad, entry, group)
                    if kept is None and entry:
                        self.state[param] = entry
        return loss

    def _update(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        """One parameter's update, in place; run under no_grad by `step`."""
        raise NotImplementedError(f"{type(self).__name__} does not implement step()")

    def _update_complex(self, param: Tensor, grad: Tensor, state: dict, group: dict) -> None:
        """A complex parameter's update, as torch's: the update of the real pairs of its parts
        (view_as_real, written through), with its complex state seen the same way; state the
        update makes for the pairs is kept as complex views of them, as torch keeps it."""
        shape = (*param.shape, 2)
        pairs = {key: view_as_real(value) if isinstance(value, Tensor) and value.is_complex()
                 else value for key, value in state.items()}
        given = dict(pairs)
        self._update(view_as_real(param), view_as_real(grad.resolve_conj()), pairs, group)
        for key, value in pairs.items():
            if given.get(key) is value:
                continue  # the state it was given, updated in place
            if isinstance(value, Tensor) and not value.is_complex() and \
                    tuple(value.shape) == shape and value.dtype is param.dtype.to_real():
                value = view_as_complex(value.contiguous())
            state[key] = value

    # ---- state dicts --------------------------------------------------------------------------

    def state_dict(self) -> dict:
        """{'state': {index: {name: value}}, 'param_groups': [{..., 'params': [index, ...]}]}.

        Parameters are numbered in the order of the groups; the state's tensors are the live
        ones (copy the dict to keep a snapshot, as with torch).
        """
        mapping: dict = {}
        start = 0

        def pack(group: dict) -> dict:
            nonlocal start
            packed = {key: value for key, value in group.items() if key != "params"}
            for index, param in enumerate(group["params"], start):
                mapping.setdefault(id(param), index)
            packed["params"] = [mapping[id(param)] for param in group["params"]]
            start += len(packed["params"])
            return packed

        param_groups = [pack(group) for group in self.param_groups]
        packed_state = {(mapping[id(key)] if isinstance(key, Tensor) else key): dict(value)
                        for key, value in self.state.items()}
        return {"state": packed_state, "param_groups": param_groups}

    def load_state_dict(self, state_dict: dict) -> None:
        """Load a `state_dict()` of an optimizer over parameters of the same group sizes.

        State tensors are copied, cast to their parameter's dtype (the step count keeps its
        own), and the group options replace the current ones.
        """
        state_dict = state_dict.copy()
        groups = self.param_groups
        saved_groups = copy.deepcopy(state_dict["param_groups"])
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(group["params"]) != len(saved["params"])
               for group, saved in zip(groups, saved_groups, strict=True)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")
        id_map = dict(zip(chain.from_iterable(saved["params"] for saved in saved_groups),
                          chain.from_iterable(group["params"] for group in groups),
                          strict=True))
        state: defaultdict = defaultdict(dict)
        for key, value in state_dict["state"].items():
            if key in id_map:
                param = id_map[key]
                state[param] = _cast(param, value)
            else:
                state[key] = value
        for group, saved in zip(groups, saved_groups, strict=True):
            saved["params"] = group["params"]
            if "param_names" in group and "param_names" not in saved:
                saved["param_names"] = group["param_names"]
        # Through __setstate__, as torch's: a subclass's override fixes up the loaded state.
        self.__setstate__({"state": state, "param_groups": saved_groups})
        # New state tensors: a compiled step captured the old ones and must trace again.
        self._state_generation += 1

    def __repr__(self) -> str:
        text = type(self).__name__ + " ("
        for index, group in enumerate(self.param_groups):
            text += f"\nParameter Group {index}\n"
            for key in sorted(group):
                if key != "params":
                    text += f"    {key}: {group[key]}\n"
        return text + ")"


def _cast(param: Tensor, value, key=None):
    """A loaded state value as the optimizer keeps it: tensors on the parameter's device (the
    step count too: optimizers keep it there, see adam.step_count), cast to its floating dtype;
    a tensor already so is kept itself, as torch keeps it, so the optimizer's steps update the
    loaded dict's tensors in place. The step count keeps its own dtype, but becomes float64 for
    a float64 parameter (torch's is float32): autojit computes the bias corrections from it in
    its dtype."""
    if isinstance(value, Tensor):
        copied = value.to(param.device)
        if not (param.is_floating_point() and value.is_floating_point()):
            return copied
        if key != "step":
            copied = copied.to(param.dtype)
        elif param.dtype is dtypes.float64:
            copied = copied.to(dtypes.float64)
        return copied
    if isinstance(value, dict):
        return {name: _cast(param, item, name) for name, item in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(_cast(param, item) for item in value)
    return value
