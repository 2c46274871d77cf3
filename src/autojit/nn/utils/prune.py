"""torch.nn.utils.prune: zero out entries or channels of a module's parameter through a mask
that a forward pre-hook multiplies in before every call.

Pruning `name` renames the parameter to `<name>_orig` (still the trained Parameter), registers
the mask as the buffer `<name>_mask`, and stores `<name>` as a plain tensor attribute, the
product of the two, which the pruning method itself recomputes as the module's forward
pre-hook (module.py calls it, as it calls any pre-hook). So state_dict keys, named_parameters,
named_buffers and `module._forward_pre_hooks` look as torch's, the gradient reaches
`<name>_orig` through the mask (zero where pruned), and `remove` folds the product back into
one Parameter. Pruning the same tensor again gathers the methods in a PruningContainer, which
computes each new mask over what the previous ones left. Masks are computed eagerly from the
current values (topk of magnitudes or of norms, autojit's generator for the random methods);
only the multiplication runs inside a forward, so a compiled step sees it as it sees weight_norm.
"""

from __future__ import annotations

import numbers
from abc import ABC, abstractmethod
from collections.abc import Iterable

from ...ops.linalg.contractions import norm as tensor_norm
from ...ops.sorting import kthvalue, topk
from ...tensor.creation import ones_like, rand, rand_like, zeros_like
from ...tensor.memory_format import contiguous_format
from .convert_parameters import parameters_to_vector

__all__ = ["BasePruningMethod", "PruningContainer", "Identity", "RandomUnstructured",
           "L1Unstructured", "RandomStructured", "LnStructured", "CustomFromMask", "identity",
           "random_unstructured", "l1_unstructured", "random_structured", "ln_structured",
           "global_unstructured", "custom_from_mask", "remove", "is_pruned"]


class BasePruningMethod(ABC):
    """Base class of pruning methods: a subclass defines PRUNING_TYPE ('unstructured',
    'structured' or 'global') and compute_mask; an instance is the forward pre-hook of the
    tensor it prunes."""

    # Set by apply (or by whoever builds a container by hand), as torch's: not in __init__, so
    # subclasses need not call super().__init__().
    _tensor_name: str

    def __call__(self, module, inputs) -> None:
        """The forward pre-hook: module.<name> = <name>_mask * <name>_orig."""
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The mask for `t` (the importance scores), applied on top of `default_mask` (the
        previous pruning's mask, ones at first); same shape as t."""

    def apply_mask(self, module):
        """The pruned tensor: the module's <name>_mask times its <name>_orig."""
        if self._tensor_name is None:
            raise AssertionError(f"Module {module} has to be pruned")
        mask = getattr(module, self._tensor_name + "_mask")
        original = getattr(module, self._tensor_name + "_orig")
        return mask.to(dtype=original.dtype) * original

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune module.<name> with cls(*args, **kwargs), reparametrizing it as
        <name>_orig and <name>_mask on first use; returns the method (a PruningContainer when
        the tensor was pruned before). importance_scores, of the parameter's shape, rank the
        entries instead of the parameter's values."""
        method = _composite_method(cls, module, name, *args, **kwargs)
        original = getattr(module, name)
        if importance_scores is not None:
            if importance_scores.shape != original.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as parameter {name} of "
                    f"{module}, got {importance_scores.shape} vs {original.shape}")
        else:
            importance_scores = original
        first_pruning = not isinstance(method, PruningContainer)
        if first_pruning:
            # Registered before the removal, as torch does, so <name>_orig comes last in
            # named_parameters and state_dict.
            module.register_parameter(name + "_orig", original)
            del module._parameters[name]
            default_mask = ones_like(original)
        else:
            default_mask = getattr(module, name + "_mask").detach().clone(
                memory_format=contiguous_format)
        try:
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
            module.register_buffer(name + "_mask", mask)
            setattr(module, name, method.apply_mask(module))
            module.register_forward_pre_hook(method)
        except Exception:
            if first_pruning:
                original = getattr(module, name + "_orig")
                module.register_parameter(name, original)
                del module._parameters[name + "_orig"]
            raise
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """t times the mask compute_mask gives for it (or for importance_scores)."""
        if importance_scores is not None:
            if importance_scores.shape != t.shape:
                raise AssertionError(
                    f"importance_scores should have the same shape as tensor t, got "
                    f"{importance_scores.shape} vs {t.shape}")
        else:
            importance_scores = t
        default_mask = default_mask if default_mask is not None else ones_like(t)
        return t * self.compute_mask(importance_scores, default_mask=default_mask)

    def remove(self, module) -> None:
        """Make the pruning permanent: <name> becomes the Parameter <name>_orig holding the
        masked values, and <name>_orig and <name>_mask are gone (the zeros stay)."""
        if self._tensor_name is None:
            raise AssertionError(
                f"Module {module} has to be pruned before pruning can be removed")
        weight = self.apply_mask(module)
        if hasattr(module, self._tensor_name):
            delattr(module, self._tensor_name)
        # The same Parameter object comes back, so an optimizer built on the pruned module
        # keeps updating it.
        original = module._parameters[self._tensor_name + "_orig"]
        original.data = weight.data
        del module._parameters[self._tensor_name + "_orig"]
        del module._buffers[self._tensor_name + "_mask"]
        setattr(module, self._tensor_name, original)


def _composite_method(cls, module, name, *args, **kwargs):
    """cls(*args, **kwargs) for module.<name>, combined with the method already pruning that
    tensor (whose hook is taken off the module: apply registers the combination)."""
    old_method = None
    found_keys = []
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            old_method = hook
            found_keys.append(key)
    if len(found_keys) > 1:
        raise AssertionError(f"Avoid adding multiple pruning hooks to the same tensor {name} "
                             f"of module {module}. Use a PruningContainer.")
    for key in found_keys:
        del module._forward_pre_hooks[key]
    method = cls(*args, **kwargs)
    method._tensor_name = name
    if isinstance(old_method, PruningContainer):
        old_method.add_pruning_method(method)
        return old_method
    if old_method is not None:
        container = PruningContainer(old_method)
        container.add_pruning_method(method)
        return container
    return method


class PruningContainer(BasePruningMethod):
    """The pruning methods applied in turn to one tensor (iterative pruning): its mask is the
    latest method's, computed over what the earlier ones left unpruned."""

    def __init__(self, *args) -> None:
        self._pruning_methods: tuple = ()
        if len(args) == 1:
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            # Built from several methods, the container must have its _tensor_name set first
            # (torch's rule: it raises AttributeError otherwise).
            for method in args:
                self.add_pruning_method(method)

    def add_pruning_method(self, method) -> None:
        """Append a method that acts on the same tensor."""
        if not isinstance(method, BasePruningMethod) and method is not None:
            raise TypeError(f"{type(method)} is not a BasePruningMethod subclass")
        if method is not None and self._tensor_name != method._tensor_name:
            raise ValueError(
                "Can only add pruning methods acting on the parameter named "
                f"'{self._tensor_name}' to PruningContainer {self}. "
                f"Found '{method._tensor_name}'")
        self._pruning_methods += (method,)

    def __len__(self) -> int:
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, index):
        return self._pruning_methods[index]

    def compute_mask(self, t, default_mask):
        """default_mask with the latest method's mask written over the part it may prune:
        the unpruned entries ('unstructured'), the channels along its dim with any unpruned
        entry ('structured'), or the whole tensor ('global')."""
        method = self._pruning_methods[-1]
        new_mask = default_mask.to(dtype=t.dtype)
        if method.PRUNING_TYPE == "unstructured":
            selection = default_mask == 1
        elif method.PRUNING_TYPE == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError('Pruning methods of PRUNING_TYPE "structured" need to '
                                     "have the attribute `dim` defined.")
            ndim = t.dim()
            dim = method.dim + ndim if method.dim < 0 else method.dim
            if dim < 0:
                raise IndexError(f"Index is out of bounds for tensor with dimensions {ndim}")
            others = [axis for axis in range(ndim) if axis != dim]
            kept_channels = default_mask.sum(dim=others) != 0
            selection = tuple(kept_channels if axis == dim else slice(None)
                              for axis in range(ndim))
        elif method.PRUNING_TYPE == "global":
            selection = tuple(slice(None) for _ in range(len(t.shape)))
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {method.PRUNING_TYPE}")
        partial_mask = method.compute_mask(t[selection], default_mask=default_mask[selection])
        new_mask[selection] = partial_mask.to(dtype=new_mask.dtype)
        return new_mask


class Identity(BasePruningMethod):
    """Prunes nothing: the reparametrization with a mask of ones."""

    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        """Reparametrize module.<name> without pruning."""
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes `amount` (a count, or a fraction of the entries) of the unpruned entries, drawn
    at random."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        tensor_size = t.nelement()
        nparams_toprune = _count_to_prune(self.amount, tensor_size)
        mask = default_mask.clone(memory_format=contiguous_format)
        if nparams_toprune != 0:
            scores = rand_like(t)
            mask.view(-1)[topk(scores.view(-1), k=nparams_toprune).indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount):
        """Prune `amount` random entries of module.<name>."""
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the `amount` unpruned entries of smallest magnitude."""

    PRUNING_TYPE = "unstructured"

    def __init__(self, amount) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        tensor_size = t.nelement()
        nparams_toprune = _count_to_prune(self.amount, tensor_size)
        mask = default_mask.clone(memory_format=contiguous_format)
        if nparams_toprune != 0:
            smallest = topk(t.abs().view(-1), k=nparams_toprune, largest=False)
            mask.view(-1)[smallest.indices] = 0
        return mask

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        """Prune the `amount` entries of module.<name> (or of importance_scores) of smallest
        magnitude."""
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


def _channel_mask(t, dim: int, channels):
    """Ones on the channels `channels` (indices or a boolean mask) along dim, zeros elsewhere."""
    mask = zeros_like(t)
    mask[tuple(channels if axis == dim % t.dim() else slice(None)
               for axis in range(t.dim()))] = 1
    return mask


class RandomStructured(BasePruningMethod):
    """Prunes `amount` whole channels along `dim`, drawn at random."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        tensor_size = t.shape[self.dim]
        nparams_toprune = _count_to_prune(self.amount, tensor_size)
        if nparams_toprune == 0:
            return default_mask
        scores = rand(tensor_size)
        threshold = kthvalue(scores, k=nparams_toprune).values
        mask = _channel_mask(t, self.dim, scores > threshold)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        """Prune `amount` random channels of module.<name> along dim."""
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the `amount` channels along `dim` of smallest L`n` norm (n as torch.norm's p)."""

    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1) -> None:
        _validate_pruning_amount_init(amount)
        self.amount = amount
        self.n = n
        self.dim = dim

    def compute_mask(self, t, default_mask):
        _validate_structured_pruning(t)
        _validate_pruning_dim(t, self.dim)
        tensor_size = t.shape[self.dim]
        nparams_toprune = _count_to_prune(self.amount, tensor_size)
        nparams_tokeep = tensor_size - nparams_toprune
        norms = _compute_norm(t, self.n, self.dim)
        kept = topk(norms, k=nparams_tokeep, largest=True)
        if nparams_toprune == 0:
            return default_mask
        mask = _channel_mask(t, self.dim, kept.indices)
        mask *= default_mask.to(dtype=mask.dtype)
        return mask

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        """Prune the `amount` channels of module.<name> along dim of smallest Ln norm."""
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


class CustomFromMask(BasePruningMethod):
    """Prunes where a given mask is zero."""

    PRUNING_TYPE = "global"

    def __init__(self, mask) -> None:
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if default_mask.shape != self.mask.shape:
            raise AssertionError(f"default_mask shape {default_mask.shape} must match "
                                 f"self.mask shape {self.mask.shape}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        """Prune module.<name> where mask is zero."""
        return super().apply(module, name, mask=mask)


# ---- the functional forms: each prunes module.<name> in place and returns the module ----------

def identity(module, name):
    """Reparametrize module.<name> as <name>_orig and a mask of ones."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    """Prune `amount` (an int count or a float fraction) random unpruned entries."""
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    """Prune the `amount` unpruned entries of smallest magnitude."""
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    """Prune `amount` random channels along dim."""
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    """Prune the `amount` channels along dim of smallest Ln norm."""
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs) -> None:
    """Prune the (module, name) pairs of `parameters` together: pruning_method(**kwargs), an
    unstructured method, ranks all their entries at once (importance_scores: an optional dict
    (module, name) -> scores), and each tensor gets its share as a CustomFromMask."""
    if not isinstance(parameters, Iterable):
        raise TypeError("global_unstructured(): parameters is not an Iterable")
    importance_scores = importance_scores if importance_scores is not None else {}
    if not isinstance(importance_scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    # A generator would be spent by the first pass.
    parameters = list(parameters)
    scores = parameters_to_vector([importance_scores.get((module, name), getattr(module, name))
                                   for module, name in parameters])
    default_mask = parameters_to_vector([
        getattr(module, name + "_mask", ones_like(getattr(module, name)))
        for module, name in parameters])
    # One container over the flat vector, so the method sees only what earlier pruning left.
    container = PruningContainer()
    container._tensor_name = "temp"
    method = pruning_method(**kwargs)
    method._tensor_name = "temp"
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError('Only "unstructured" PRUNING_TYPE supported for the `pruning_method`. '
                        f"Found method {pruning_method} of type {method.PRUNING_TYPE}")
    container.add_pruning_method(method)
    final_mask = container.compute_mask(scores, default_mask)
    offset = 0
    for module, name in parameters:
        param = getattr(module, name)
        count = param.numel()
        custom_from_mask(module, name, mask=final_mask[offset:offset + count].view_as(param))
        offset += count


def custom_from_mask(module, name, mask):
    """Prune module.<name> where `mask` is zero."""
    CustomFromMask.apply(module, name, mask)
    return module


def remove(module, name):
    """Make the pruning of module.<name> permanent: one Parameter <name> again, without the
    hook, <name>_orig and <name>_mask."""
    for key, hook in module._forward_pre_hooks.items():
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del module._forward_pre_hooks[key]
            return module
    raise ValueError(f"Parameter '{name}' of module {module} has to be pruned before pruning "
                     "can be removed")


def is_pruned(module) -> bool:
    """Whether module or any of its submodules has a pruning hook."""
    return any(isinstance(hook, BasePruningMethod)
               for _, submodule in module.named_modules()
               for hook in submodule._forward_pre_hooks.values())


# ---- amount validation, with torch's messages -------------------------------------------------

def _validate_pruning_amount_init(amount) -> None:
    """An int amount is a count (>= 0), a float one a fraction in [0, 1]."""
    if not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount}. Must be int or float.")
    if ((isinstance(amount, numbers.Integral) and amount < 0)
            or (not isinstance(amount, numbers.Integral)
                and (float(amount) > 1.0 or float(amount) < 0.0))):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or a "
                         "non-negative integer")


def _validate_pruning_amount(amount, tensor_size) -> None:
    """A count of entries to prune is at most the tensor's size."""
    if isinstance(amount, numbers.Integral) and amount > tensor_size:
        raise ValueError(f"amount={amount} should be smaller than the number of parameters to "
                         f"prune={tensor_size}")


def _count_to_prune(amount, tensor_size) -> int:
    """The number of units to prune, checked against the number there are."""
    count = _compute_nparams_toprune(amount, tensor_size)
    _validate_pruning_amount(count, tensor_size)
    return count


def _validate_structured_pruning(t) -> None:
    """Channels need at least two dims."""
    shape = t.shape
    if len(shape) <= 1:
        raise ValueError("Structured pruning can only be applied to multidimensional tensors. "
                         f"Found tensor of shape {shape} with {len(shape)} dims")


def _compute_nparams_toprune(amount, tensor_size):
    """The number of units to prune: the int amount itself, or round(fraction * size)."""
    if isinstance(amount, numbers.Integral):
        return amount
    return round(amount * tensor_size)


def _validate_pruning_dim(t, dim) -> None:
    if dim >= t.dim():
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape}")


def _compute_norm(t, n, dim):
    """The n-norm of each channel along dim (over every other dim)."""
    dims = list(range(t.dim()))
    if dim < 0:
        dim = dims[dim]
    dims.remove(dim)
    return tensor_norm(t, p=n, dim=dims)
