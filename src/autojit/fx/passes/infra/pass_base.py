"""autojit.fx.passes.infra.pass_base: torch.fx's PassBase, a pass over a GraphModule as a
callable object (requires -> call -> ensures), and PassResult, what a pass returns: the module
and whether it changed it.
"""

from __future__ import annotations

import abc
from collections import namedtuple

__all__ = ["PassBase", "PassResult"]


class PassResult(namedtuple("PassResult", ["graph_module", "modified"])):
    """The result of a pass: `graph_module` and whether it was `modified`."""

    __slots__ = ()

    def __new__(cls, graph_module, modified):
        return super().__new__(cls, graph_module, modified)


class PassBase(abc.ABC):
    """A pass: implement `call(graph_module) -> PassResult`; `requires` and `ensures` check
    the module before and after."""

    def __call__(self, graph_module) -> PassResult | None:
        self.requires(graph_module)
        result = self.call(graph_module)
        self.ensures(graph_module)
        return result

    @abc.abstractmethod
    def call(self, graph_module) -> PassResult | None:
        """Run the pass on `graph_module`."""

    def requires(self, graph_module) -> None:  # noqa: B027 - optional hook, as torch's
        """Check what the pass needs of the module before it runs; nothing by default."""

    def ensures(self, graph_module) -> None:  # noqa: B027 - optional hook, as torch's
        """Check what the pass promises after it ran; nothing by default."""
