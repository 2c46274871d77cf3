"""torch.distributed.checkpoint.default_planner's planners (not built; see the package)."""

from .storage import DefaultLoadPlanner, DefaultSavePlanner

__all__ = ["DefaultLoadPlanner", "DefaultSavePlanner"]
