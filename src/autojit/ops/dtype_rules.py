"""The dtype rules of define_op (registry.py): torch's type promotion of a mix of tensors and
Python scalars (`promoted_dtype`, cached by operand kinds) and the rules built on it.

Each rule returns (compute_dtype, out_dtype); compute_dtype None means "leave the inputs as they
are". registry.py re-exports them, where most families read them.
"""

from __future__ import annotations

from ..tensor import dtypes
from ..tensor.tensor import Tensor


def _operand_groups(inputs):
    dimensioned, zero_dim, scalars = [], [], []
    for x in inputs:
        if isinstance(x, Tensor):
            data = x._payload
            ndim = data.ndim if data is not None else len(x._value.shape)
            (dimensioned if ndim else zero_dim).append(x._dtype)
        elif x is not None:
            scalars.append(x)
    return dimensioned, zero_dim, scalars


_PROMOTE_CACHE: dict = {}
_FLOATING, _BOOL, _COMPLEX = dtypes.FLOATING, dtypes.BOOL, dtypes.COMPLEX


def promoted_dtype(inputs) -> dtypes.DType:
    """torch.result_type of a mix of tensors and Python scalars, cached by operand kinds."""
    first = inputs[0]
    if isinstance(first, Tensor):
        # Fast path for the common case: one tensor, or a tensor with a same-dtype tensor or
        # a scalar that does not lift its category.
        dtype = first._dtype
        count = len(inputs)
        if count == 1:
            return dtype
        if count == 2:
            second = inputs[1]
            if isinstance(second, Tensor):
                if second._dtype is dtype:
                    return dtype
            elif second.__class__ is float:
                if dtype.category >= _FLOATING:
                    return dtype
            elif second.__class__ is int and dtype.category != _BOOL:
                return dtype
    elif len(inputs) == 2 and isinstance(inputs[1], Tensor):
        # A Python number, then a tensor (`2 * t`, `1 - t`): the same rule the other way round.
        dtype = inputs[1]._dtype
        if first.__class__ is float:
            if dtype.category >= _FLOATING:
                return dtype
        elif first.__class__ is int and dtype.category != _BOOL:
            return dtype
    key = (dtypes.get_default_dtype(), *(
        (x._dtype, (x._payload.ndim if x._payload is not None else len(x._value.shape)) > 0)
        if isinstance(x, Tensor) else type(x) for x in inputs))
    found = _PROMOTE_CACHE.get(key)
    if found is None:
        found = dtypes.result_type(*_operand_groups(inputs))
        _PROMOTE_CACHE[key] = found
    return found


def rule_promote(inputs, attrs):
    dtype = promoted_dtype(inputs)
    return dtype, dtype


def rule_float(inputs, attrs):
    dtype = promoted_dtype(inputs)
    if dtype.category < _FLOATING:
        dtype = dtypes.get_default_dtype()
    return dtype, dtype


def rule_compare(inputs, attrs):
    if len(inputs) == 2:  # two tensors of one dtype: the comparison of a training script
        first, second = inputs
        if first.__class__ is Tensor and second.__class__ is Tensor and \
                first._dtype is second._dtype:
            return first._dtype, _BOOL_DTYPE
    return promoted_dtype(inputs), _BOOL_DTYPE


_BOOL_DTYPE = dtypes.bool_


def rule_bool(inputs, attrs):
    return None, dtypes.bool_


def rule_first(inputs, attrs):
    return None, inputs[0]._dtype


def rule_index(inputs, attrs):
    return None, dtypes.int64
