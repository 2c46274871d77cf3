"""LogisticNormal: a normal vector mapped to the simplex by stick breaking (the logistic
normal distribution of dimension len(loc) + 1)."""

from __future__ import annotations

from .. import constraints
from ..continuous.normal import Normal
from ..transforms import StickBreakingTransform
from .transformed_distribution import TransformedDistribution

__all__ = ["LogisticNormal"]


class LogisticNormal(TransformedDistribution):
    """X = StickBreakingTransform()(Y), Y ~ Normal(loc, scale) over the last dim."""

    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        base_dist = Normal(loc, scale, validate_args=validate_args)
        if not base_dist.batch_shape:
            base_dist = base_dist.expand([1])
        super().__init__(base_dist, StickBreakingTransform(), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = self._get_checked_instance(LogisticNormal, _instance)
        return super().expand(batch_shape, _instance=new)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale
